// ASan's defaults for the server tests: keep no allocation stacks
// (malloc_context_size=0).
//
// Why: a server forks to run third-party importers (core::run_isolated) while
// its other threads run on. GCC 12's ASan runtime does not take its
// stack-depot lock around fork, so a child forked while another thread was
// storing a new allocation stack spins on that lock for good (seen once in
// CI: a PostgreSQL motion job "running" for 90 s; gdb showed the child in
// StackDepotBase::Put → StaticSpinMutex::LockSlow). Without allocation
// stacks nothing is stored there, and the lock is never taken. ASan still
// reports every error with the stack of the bad access; only the "allocated
// by" / "freed by" stacks are missing (rerun a failing test with
// ASAN_OPTIONS=malloc_context_size=30 to get them). Other builds ignore this.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() {
  return "malloc_context_size=0";
}

// charkit: the program users run. It holds no command: it picks the program
// that does and replaces itself with it (execv, the same arguments):
//
//   charkit bem …, charkit --version   -> charkit-bem (the `bem` group alone)
//   anything else                      -> charkit-all (every group)
//
// charkit-bem links only what the `bem` commands use, so `charkit bem
// validate` does not pay for loading Assimp, protobuf, libcurl, libpq and
// OpenSSL at start-up (about 20 ms of 37 on the reference machine:
// bench/RESULTS.md). This file uses the C library alone and is linked
// statically where no sanitizer is on, so the hop costs about 1 ms.
// docs/cli.md §Programs has the layout: the two programs sit beside this
// one in a build tree, in PREFIX/libexec/charkit when installed.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef CHARKIT_LIBEXEC_REL
#define CHARKIT_LIBEXEC_REL "../libexec/charkit"
#endif

namespace {

// The program for these arguments: the first one that is not an option
// names the command group (the top-level options are flags).
const char* program_for(int argc, char** argv) {
  bool version = false;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "--") == 0) break;
    if (a[0] == '-') {
      if (strcmp(a, "--version") == 0) version = true;
      if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return "charkit-all";
      continue;
    }
    return strcmp(a, "bem") == 0 ? "charkit-bem" : "charkit-all";
  }
  return version ? "charkit-bem" : "charkit-all";
}

// dir + "/" + rest + "/" + name into out; false when it does not fit.
bool join(char* out, size_t size, const char* dir, const char* rest, const char* name) {
  const int n = rest[0] != '\0' ? snprintf(out, size, "%s/%s/%s", dir, rest, name)
                                : snprintf(out, size, "%s/%s", dir, name);
  return n > 0 && static_cast<size_t>(n) < size;
}

bool has_arg(int argc, char** argv, const char* a) {
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; ++i)
    if (strcmp(argv[i], a) == 0) return true;
  return false;
}

// A JSON string of printable ASCII: quotes and backslashes escaped.
void put_json_string(const char* s) {
  putchar('"');
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(s); *p != 0; ++p) {
    if (*p == '"' || *p == '\\') putchar('\\');
    putchar(*p);
  }
  putchar('"');
}

// The output convention (docs/cli.md) without the C++ library: one stderr
// line, and with --json one JSON document on stdout.
int missing(int argc, char** argv, const char* name, const char* tried, int err) {
  char text[3 * PATH_MAX + 256];
  snprintf(text, sizeof text,
           "cannot run %s, the program that holds this command (tried %s): %s; reinstall "
           "charkit, or build the charkit target, which builds it",
           name, tried, strerror(err));
  // Paths may hold any bytes: what leaves is printable ASCII (valid UTF-8).
  for (char* p = text; *p != '\0'; ++p)
    if (static_cast<unsigned char>(*p) < 0x20 || static_cast<unsigned char>(*p) >= 0x7f) *p = '?';
  fprintf(stderr, "error CLI_PROGRAM_MISSING: %s\n", text);  // errors show even with -q
  if (has_arg(argc, argv, "--json")) {
    printf(
        "{\n  \"ok\": false,\n  \"errors\": [\n    {\n      \"file\": null,\n"
        "      \"location\": null,\n      \"severity\": \"error\",\n"
        "      \"code\": \"CLI_PROGRAM_MISSING\",\n      \"message\": ");
    put_json_string(text);
    printf("\n    }\n  ],\n  \"warnings\": []\n}\n");
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* name = program_for(argc, argv);
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return missing(argc, argv, name, "/proc/self/exe", errno);
  self[n] = '\0';
  char* slash = strrchr(self, '/');
  if (slash == nullptr) return missing(argc, argv, name, self, ENOENT);
  *slash = '\0';  // self is now the directory of this program
  // Beside this program (a build tree), then the installed libexec folder.
  char beside[PATH_MAX], installed[PATH_MAX];
  const bool beside_ok = join(beside, sizeof beside, self, "", name);
  const bool installed_ok = join(installed, sizeof installed, self, CHARKIT_LIBEXEC_REL, name);
  if (beside_ok && access(beside, X_OK) == 0) execv(beside, argv);
  int err = errno;
  if (installed_ok) {
    execv(installed, argv);
    err = errno;
  }
  char tried[2 * PATH_MAX + 8];
  snprintf(tried, sizeof tried, "%s and %s", beside_ok ? beside : "(too long)",
           installed_ok ? installed : "(too long)");
  return missing(argc, argv, name, tried, err);
}

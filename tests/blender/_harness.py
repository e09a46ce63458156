"""What the add-on's Blender test scripts share: the source tree's python/
and python/blender on sys.path (the add-on and the charkit package as they
are, not installed), the script's own arguments (after Blender's "--"),
and timed log lines and checks. A script imports it after setting
sys.dont_write_bytecode (no __pycache__ in the source tree) and putting
its own folder on sys.path (Blender does not)."""

import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
for _p in (os.path.join(ROOT, "python", "blender"), os.path.join(ROOT, "python")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

ARGS = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
T0 = time.perf_counter()


def arg(name, default):
    """The value after `name` among the script's arguments, else default."""
    return ARGS[ARGS.index(name) + 1] if name in ARGS and ARGS.index(name) + 1 < len(ARGS) else default


def log(msg):
    print(f"[{time.perf_counter() - T0:7.2f}s] {msg}", flush=True)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)

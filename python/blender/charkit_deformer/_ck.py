"""Loads the `charkit` Python package the add-on runs on.

The packaged add-on (scripts/package-blender-addon) carries the package as
charkit_deformer/charkit/ with the C library in charkit/_lib/; a development
checkout has no such folder and uses a top-level `import charkit` (the
package on sys.path, the library from CHARKIT_LIBRARY or the system).

The import is lazy so that the add-on registers, and its panel can say what is
wrong, even when the library cannot be loaded.
"""

import ctypes
import importlib
import importlib.util
import os

_module = None
_error = None


class LibraryError(Exception):
    """The charkit package or its C library could not be loaded."""


def _preload_bundled_deps(package_dir):
    """A zip made with `package-blender-addon --bundle-deps` carries the library's own
    shared dependencies in charkit/_lib/deps/. Loading them first (RTLD_GLOBAL, retried
    until each one's own dependencies are in) lets libcharkit_c find them by soname on
    a system that lacks them."""
    deps = os.path.join(package_dir, "_lib", "deps")
    if not os.path.isdir(deps):
        return
    pending = sorted(os.path.join(deps, f) for f in os.listdir(deps) if ".so" in f)
    while pending:
        failed = []
        for path in pending:
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                failed.append(path)
        if len(failed) == len(pending):
            return  # the library's own load reports what is missing
        pending = failed


def _import():
    bundled = __package__ + ".charkit" if __package__ else None
    if bundled:
        spec = importlib.util.find_spec(bundled)
        if spec is not None:
            if spec.submodule_search_locations:
                _preload_bundled_deps(list(spec.submodule_search_locations)[0])
            return importlib.import_module(bundled)
    return importlib.import_module("charkit")


def get():
    """The charkit module; raises LibraryError when it cannot be loaded."""
    global _module, _error
    if _module is None:
        try:
            _module = _import()
            _error = None
        except Exception as e:  # ImportError, or OSError from the library lookup
            _error = f"{type(e).__name__}: {e}"
            raise LibraryError(f"charkit could not be loaded: {_error}") from e
    return _module


def error():
    """None when the package loads, else why not (one line)."""
    if _module is not None:
        return None
    if _error is not None:  # tried already; not again on every redraw
        return _error
    try:
        get()
    except Exception:
        return _error
    return None


def is_charkit_error(exc):
    ck = _module
    return ck is not None and isinstance(exc, ck.CharkitError)


def is_cancelled(exc):
    ck = _module
    return ck is not None and isinstance(exc, ck.Cancelled)

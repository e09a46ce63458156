"""Loading libcharkit_c and the ctypes declarations of its C API (charkit/capi/c_api.h).

Lookup order: the CHARKIT_LIBRARY environment variable (a path; when set it
is the only candidate), ``_lib/libcharkit_c.so`` inside this package (as the
Blender add-on bundles it), then the system's library path
(``ctypes.util.find_library("charkit_c")`` and the bare file name). When
nothing loads, importing charkit raises OSError naming every path tried
(LibraryNotFoundError, an OSError subclass, when no candidate file exists).

Everything here is private; the public API is in the package's modules.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from ctypes import (POINTER, byref, c_char_p, c_double, c_float, c_int, c_int32, c_uint32,
                    c_uint64, c_void_p)

import numpy as np

from ._errors import Cancelled, CharkitError

__all__ = ["lib", "library_path", "check", "LibraryNotFoundError", "PROGRESS"]

#: The C API version these declarations follow (CHARKIT_C_API_VERSION).
HEADER_API_VERSION = 1


class LibraryNotFoundError(OSError):
    """No libcharkit_c candidate file exists (as opposed to one that fails to load)."""

    charkit_library_not_found = True


def _file_names():
    if sys.platform == "win32":
        return ["charkit_c.dll", "libcharkit_c.dll"]
    if sys.platform == "darwin":
        return ["libcharkit_c.dylib", "libcharkit_c.so"]
    return ["libcharkit_c.so"]


def _load():
    """Returns (CDLL, path) or raises OSError / LibraryNotFoundError."""
    tried = []          # (candidate, why it failed)
    existing_failed = False
    env = os.environ.get("CHARKIT_LIBRARY")
    if env:
        files = [env]
        system = []
    else:
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib")
        files = [os.path.join(here, n) for n in _file_names()]
        system = []
        found = ctypes.util.find_library("charkit_c")
        if found:
            system.append(found)
        system.extend(_file_names())
    for path in files:
        if not os.path.exists(path):
            tried.append((path, "no such file"))
            continue
        try:
            return ctypes.CDLL(os.path.abspath(path)), os.path.abspath(path)
        except OSError as e:
            existing_failed = True
            tried.append((path, str(e)))
    for name in system:
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            tried.append((name, str(e)))
    detail = "; ".join("%s (%s)" % t for t in tried)
    hint = ("Set CHARKIT_LIBRARY to the path of libcharkit_c.so, or put it in "
            "charkit/_lib/. An AddressSanitizer build also needs "
            "LD_PRELOAD=$(gcc -print-file-name=libasan.so).")
    msg = "charkit: cannot load libcharkit_c: tried %s. %s" % (detail, hint)
    if existing_failed:
        raise OSError(msg)
    raise LibraryNotFoundError(msg)


lib, library_path = _load()


# ---- Opaque handle types ---------------------------------------------------

class _Spec(ctypes.Structure):
    pass


class _Rig(ctypes.Structure):
    pass


class _Dataset(ctypes.Structure):
    pass


class _Model(ctypes.Structure):
    pass


class _BemPackage(ctypes.Structure):
    pass


SpecP = POINTER(_Spec)
RigP = POINTER(_Rig)
DatasetP = POINTER(_Dataset)
ModelP = POINTER(_Model)
BemPackageP = POINTER(_BemPackage)
FloatP = POINTER(c_float)
DoubleP = POINTER(c_double)
U32P = POINTER(c_uint32)
I32P = POINTER(c_int32)
U64P = POINTER(c_uint64)
StrOut = POINTER(c_void_p)      # char** the caller frees with charkit_free
StrArray = POINTER(c_char_p)    # const char* const*
status_t = c_int

#: charkit_progress_fn: int (*)(void* user, uint64_t done, uint64_t total, double loss)
PROGRESS = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint64, c_uint64, c_double)

# name: (restype, [argtypes])
_PROTOTYPES = {
    # Library
    "charkit_c_api_version": (c_int, []),
    "charkit_version": (c_char_p, []),
    "charkit_last_error_code": (c_char_p, []),
    "charkit_last_error_message": (c_char_p, []),
    "charkit_last_error_location": (c_char_p, []),
    "charkit_free": (None, [c_void_p]),
    # Input spec
    "charkit_spec_from_json": (status_t, [c_char_p, POINTER(SpecP)]),
    "charkit_spec_free": (None, [SpecP]),
    "charkit_spec_to_json": (status_t, [SpecP, StrOut]),
    "charkit_spec_bone_count": (c_uint64, [SpecP]),
    "charkit_spec_curve_count": (c_uint64, [SpecP]),
    "charkit_spec_feature_count": (c_uint64, [SpecP, c_int]),
    "charkit_sample_poses": (status_t, [SpecP, c_uint64, c_uint64, DoubleP, DoubleP, DoubleP]),
    "charkit_pose_features": (status_t, [SpecP, c_int, DoubleP, DoubleP, DoubleP, c_uint64,
                                         FloatP]),
    # Rig
    "charkit_rig_create": (status_t, [c_char_p, c_uint64, StrArray, I32P, FloatP, FloatP,
                                      c_uint64, FloatP, U32P, FloatP, c_uint64, U32P,
                                      POINTER(RigP)]),
    "charkit_rig_load": (status_t, [c_char_p, c_char_p, POINTER(RigP)]),
    "charkit_rig_free": (None, [RigP]),
    "charkit_rig_add_morph": (status_t, [RigP, c_char_p, FloatP]),
    "charkit_rig_info_json": (status_t, [RigP, StrOut]),
    "charkit_rig_positions": (status_t, [RigP, FloatP, c_uint64]),
    "charkit_rig_skin": (status_t, [RigP, SpecP, DoubleP, FloatP, FloatP]),
    # Datasets
    "charkit_dataset_create": (status_t, [SpecP, c_int, c_char_p, c_uint64, c_uint64, FloatP,
                                          FloatP, POINTER(DatasetP)]),
    "charkit_dataset_from_positions": (status_t, [RigP, SpecP, c_int, c_uint64, DoubleP, DoubleP,
                                                  FloatP, POINTER(c_double),
                                                  POINTER(DatasetP)]),
    "charkit_dataset_load": (status_t, [c_char_p, POINTER(DatasetP)]),
    "charkit_dataset_save": (status_t, [DatasetP, c_char_p]),
    "charkit_dataset_free": (None, [DatasetP]),
    "charkit_dataset_shape": (status_t, [DatasetP, U64P, U64P, U64P, POINTER(c_int)]),
    "charkit_dataset_features": (status_t, [DatasetP, FloatP, c_uint64]),
    "charkit_dataset_deltas": (status_t, [DatasetP, FloatP, c_uint64]),
    "charkit_dataset_spec": (status_t, [DatasetP, POINTER(SpecP)]),
    # Pose models
    "charkit_model_train": (status_t, [DatasetP, c_char_p, c_uint64, StrArray, FloatP, PROGRESS,
                                       c_void_p, POINTER(ModelP)]),
    "charkit_model_load": (status_t, [c_char_p, POINTER(ModelP)]),
    "charkit_model_save": (status_t, [ModelP, c_char_p]),
    "charkit_model_free": (None, [ModelP]),
    "charkit_model_info_json": (status_t, [ModelP, StrOut]),
    "charkit_model_offsets": (status_t, [ModelP, FloatP, c_uint64, FloatP]),
    "charkit_model_weights": (status_t, [ModelP, FloatP, c_uint64, FloatP]),
    "charkit_model_morphs": (status_t, [ModelP, FloatP, c_uint64]),
    "charkit_model_error_json": (status_t, [ModelP, DatasetP, StrOut]),
    # Engine bridge
    "charkit_export_nmn": (status_t, [RigP, DatasetP, c_char_p, c_char_p, PROGRESS, c_void_p,
                                      POINTER(ModelP)]),
    "charkit_model_export_nmn": (status_t, [ModelP, DatasetP, c_char_p, DoubleP]),
    "charkit_model_nmn_refusal": (status_t, [ModelP, StrOut]),
    "charkit_import_network": (status_t, [c_char_p, RigP, SpecP, c_int, StrOut,
                                          POINTER(ModelP)]),
    "charkit_network_run": (status_t, [c_char_p, FloatP, c_uint64, c_uint64, FloatP, c_uint64,
                                       U64P]),
    "charkit_pose_library_json": (status_t, [SpecP, c_char_p, c_uint64, StrArray, DoubleP, DoubleP,
                                             StrArray, StrOut]),
    # BEM and motion
    "charkit_bem_validate": (status_t, [c_char_p, StrOut]),
    "charkit_motion_convert": (status_t, [c_char_p, StrOut]),
    # BEM packages for editors
    "charkit_bem_open": (status_t, [c_char_p, POINTER(BemPackageP)]),
    "charkit_bem_package_free": (None, [BemPackageP]),
    "charkit_bem_package_json": (status_t, [BemPackageP, StrOut]),
    "charkit_bem_mesh_floats": (status_t, [BemPackageP, c_uint32, c_char_p, FloatP, c_uint64,
                                           U64P]),
    "charkit_bem_mesh_indices": (status_t, [BemPackageP, c_uint32, c_uint32, U32P, c_uint64,
                                            U64P]),
    "charkit_bem_image_rgba": (status_t, [BemPackageP, c_uint32, POINTER(ctypes.c_uint8),
                                          c_uint64, U32P, U32P]),
    "charkit_bem_selection_json": (status_t, [BemPackageP, c_char_p, c_char_p, StrOut]),
    "charkit_bem_pack_arrays": (status_t, [c_char_p, c_char_p, POINTER(c_void_p),
                                           POINTER(c_uint64), c_uint64, c_char_p, c_char_p,
                                           StrOut]),
}


class _Missing:
    """Stands in for a function the loaded library does not export."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise OSError("%s does not export %s (an older or incomplete libcharkit_c?)"
                      % (library_path, self.name))


class _Functions:
    pass


fn = _Functions()
missing = []
for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    try:
        _f = getattr(lib, _name)
    except AttributeError:
        missing.append(_name)
        setattr(fn, _name[len("charkit_"):], _Missing(_name))
        continue
    _f.restype = _restype
    _f.argtypes = _argtypes
    setattr(fn, _name[len("charkit_"):], _f)


# ---- Helpers ---------------------------------------------------------------

def _text(b) -> str:
    return b.decode("utf-8", "replace") if b else ""


def last_error():
    """(code, message, location) of this thread's last charkit error."""
    return (_text(fn.last_error_code()), _text(fn.last_error_message()),
            _text(fn.last_error_location()))


def check(status: int) -> None:
    """Raises CharkitError (Cancelled for status 4) when status is not CHARKIT_OK."""
    if status == 0:
        return
    code, message, location = last_error()
    cls = Cancelled if status == 4 else CharkitError
    raise cls(status, code, message, location)


def take_string(p: c_void_p) -> str:
    """Decodes a library-allocated UTF-8 string and releases it with charkit_free."""
    if not p.value:
        return ""
    try:
        return ctypes.string_at(p.value).decode("utf-8")
    finally:
        fn.free(p)


def call_string(f, *args) -> str:
    """Calls f(*args, char** out), checks the status and returns the string."""
    out = c_void_p()
    check(f(*args, byref(out)))
    return take_string(out)


def path_arg(path) -> bytes:
    """A path as the C API wants it (bytes, NUL-terminated by ctypes)."""
    p = os.fsencode(os.fspath(path))
    if b"\0" in p:
        raise ValueError("path contains a NUL character: %r" % (path,))
    return p


def str_arg(s, what="string") -> bytes:
    if not isinstance(s, str):
        raise TypeError("%s must be a str, not %s" % (what, type(s).__name__))
    b = s.encode("utf-8")
    if b"\0" in b:
        raise ValueError("%s contains a NUL character" % what)
    return b


def fptr(a):
    """float* of a C-contiguous float32 array (None -> NULL)."""
    return None if a is None else a.ctypes.data_as(FloatP)


def dptr(a):
    """double* of a C-contiguous float64 array (None -> NULL)."""
    return None if a is None else a.ctypes.data_as(DoubleP)


def f64(a, name, shape=None):
    """np.ascontiguousarray(a, float64): poses (rotations, Euler angles,
    curve values) cross the C API in double precision, as charkit keeps them."""
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if shape is not None:
        check_shape(arr, name, shape)
    return arr


def curves_arg(curves, n, c):
    """Curve values of n poses as (n, c) float64, or None when the spec has no
    curves (NULL for the C API); None given means every curve at 0."""
    if c == 0:
        return None
    if curves is None:
        return np.zeros((n, c), np.float64)
    return f64(curves, "curves", (n, c))


def u32ptr(a):
    return None if a is None else a.ctypes.data_as(U32P)


def i32ptr(a):
    return None if a is None else a.ctypes.data_as(I32P)


def string_array(names):
    """const char* const* from a list of str (the array keeps its bytes alive)."""
    enc = [str_arg(n, "name") for n in names]
    arr = (c_char_p * max(len(enc), 1))(*enc)
    return arr


class Progress:
    """Adapts a Python progress(done, total, loss) callable to charkit_progress_fn.

    The callable returning False (or any falsy value but None) cancels. An
    exception inside it is caught (it must not cross into C), the call is
    cancelled, and ``reraise()`` raises it once the C call has returned.
    """

    def __init__(self, callback):
        if callback is not None and not callable(callback):
            raise TypeError("progress must be callable or None")
        self.callback = callback
        self.error = None
        self.c_fn = PROGRESS(self._call) if callback is not None else PROGRESS()

    def _call(self, user, done, total, loss):
        if self.error is not None:
            return 1
        try:
            r = self.callback(int(done), int(total), float(loss))
        except BaseException as e:  # noqa: BLE001 - must not cross into C
            self.error = e
            return 1
        return 1 if (r is not None and not r) else 0

    def reraise(self):
        if self.error is not None:
            e, self.error = self.error, None
            raise e


def f32(a, name, shape=None):
    """np.ascontiguousarray(a, float32), optionally checked against shape
    (a tuple of ints, None for any size along that axis)."""
    arr = np.ascontiguousarray(a, dtype=np.float32)
    if shape is not None:
        check_shape(arr, name, shape)
    return arr


def check_shape(arr, name, shape):
    ok = arr.ndim == len(shape) and all(w is None or w == g for w, g in zip(shape, arr.shape))
    if not ok:
        want = "(" + ", ".join("N" if w is None else str(w) for w in shape) + \
            ("," if len(shape) == 1 else "") + ")"
        raise ValueError("%s must have shape %s, not %s" % (name, want, tuple(arr.shape)))


def index_array(a, name, shape, dtype):
    """Integer array as uint32/int32, C-contiguous, range-checked before the cast."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu":
        if arr.size == 0:
            arr = arr.astype(np.int64)
        elif arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError("%s must hold integers, not %s" % (name, arr.dtype))
    check_shape(arr, name, shape)
    info = np.iinfo(dtype)
    if arr.size and (arr.min() < info.min or arr.max() > info.max):
        raise ValueError("%s has values outside %s's range" % (name, np.dtype(dtype).name))
    return np.ascontiguousarray(arr, dtype=dtype)


LAYOUTS = {"axis-angle": 0, "engine": 1}
LAYOUT_NAMES = {0: "axis-angle", 1: "engine"}


def layout_arg(layout) -> int:
    key = str(layout).replace("_", "-") if isinstance(layout, str) else layout
    if key not in LAYOUTS:
        raise ValueError("layout must be 'axis-angle' or 'engine', not %r" % (layout,))
    return LAYOUTS[key]


def layout_name(value) -> str:
    if isinstance(value, str):
        return value.replace("_", "-")
    return LAYOUT_NAMES.get(int(value), str(value))


def uint64_arg(v, name) -> int:
    import operator
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError("%s must be an int, not %s" % (name, type(v).__name__)) from None
    if i < 0 or i >= 1 << 64:
        raise ValueError("%s must be in [0, 2**64)" % name)
    return i


def json_default(o):
    """json.dumps hook: numpy scalars and arrays as plain Python values."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (tuple, set, frozenset)):
        return list(o)
    raise TypeError("%s is not JSON serialisable" % type(o).__name__)


class Handle:
    """Owns one C handle; releases it with the matching *_free in close() or __del__."""

    _free = None        # the *_free function, set by each subclass
    _kind = "handle"

    def __init__(self, ptr):
        if not ptr:
            raise CharkitError(5, "INTERNAL", "the library returned a NULL %s" % self._kind)
        self._ptr = ptr
        self._free_fn = type(self)._free   # kept so __del__ works late in shutdown

    @property
    def _h(self):
        p = self.__dict__.get("_ptr")
        if p is None:
            raise ValueError("this %s is closed" % self._kind)
        return p

    @property
    def closed(self) -> bool:
        return self.__dict__.get("_ptr") is None

    def close(self) -> None:
        """Releases the C object now; later use raises ValueError."""
        p = self.__dict__.get("_ptr")
        if p is not None:
            self._ptr = None
            free = self.__dict__.get("_free_fn")
            if free is not None:
                free(p)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to do at collection time
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

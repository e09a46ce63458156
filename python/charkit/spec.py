"""Input specs (the bones and curves that drive a deformer), pose sampling and features.

An InputSpec lists bones (name; per axis x, y, z: enabled, min_deg, max_deg)
and curves (name, min, max). ``sample_poses`` draws the rest pose plus seeded
random poses exactly as ``charkit deformer sample --poses N --seed S`` does;
``pose_features`` turns rest-relative rotations (x, y, z, w) and curve values
into feature rows: layout "axis-angle" (3 per bone) or "engine" (6 per bone,
the Unreal .nmn input), then one per curve (docs/deformer/datasets.md).
"""

from __future__ import annotations

import json
from ctypes import byref

import numpy as np

from . import _native as N

__all__ = ["InputSpec", "sample_poses", "pose_features", "pose_library_json"]

_DEFAULT_RANGE = 45.0


def _bone_entry(b):
    if isinstance(b, str):
        axis = {"enabled": True, "min_deg": -_DEFAULT_RANGE, "max_deg": _DEFAULT_RANGE}
        return {"name": b, "axes": [dict(axis), dict(axis), dict(axis)]}
    if isinstance(b, dict):
        d = dict(b)
        if "axes" not in d:
            axis = {"enabled": True, "min_deg": -_DEFAULT_RANGE, "max_deg": _DEFAULT_RANGE}
            d["axes"] = [dict(axis), dict(axis), dict(axis)]
        return d
    raise TypeError("a bone must be a str or a dict, not %s" % type(b).__name__)


def _curve_entry(c):
    if isinstance(c, str):
        return {"name": c, "min": 0.0, "max": 1.0}
    if isinstance(c, dict):
        d = dict(c)
        d.setdefault("min", 0.0)
        d.setdefault("max", 1.0)
        return d
    raise TypeError("a curve must be a str or a dict, not %s" % type(c).__name__)


class InputSpec(N.Handle):
    """The bones and curves that drive a deformer.

    ``InputSpec(bones, curves=())``: each bone a name (all three axes enabled,
    +-45 degrees) or a dict ``{"name", "axes": [{"enabled", "min_deg",
    "max_deg"}] * 3}``; each curve a name (range [0, 1]) or a dict ``{"name",
    "min", "max"}``. The library checks the spec (unique non-empty names,
    finite ranges, min <= max, bounds within +-360 degrees) and raises
    CharkitError when it is not valid.
    """

    _free = staticmethod(N.fn.spec_free)
    _kind = "InputSpec"

    def __init__(self, bones, curves=()):
        if isinstance(bones, (str, dict)):
            raise TypeError("bones must be a list of names or dicts")
        doc = {"bones": [_bone_entry(b) for b in bones],
               "curves": [_curve_entry(c) for c in curves]}
        super().__init__(self._parse(json.dumps(doc, default=N.json_default)))

    @staticmethod
    def _parse(text):
        out = N.SpecP()
        N.check(N.fn.spec_from_json(N.str_arg(text, "spec JSON"), byref(out)))
        return out

    @classmethod
    def _wrap(cls, ptr) -> "InputSpec":
        self = cls.__new__(cls)
        N.Handle.__init__(self, ptr)
        return self

    @classmethod
    def from_json(cls, text) -> "InputSpec":
        """A spec from its JSON text (the form ``deformer sample --write-spec`` writes)."""
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8")
        return cls._wrap(cls._parse(text))

    def to_json(self) -> str:
        """The spec as JSON text (the library's canonical form)."""
        return N.call_string(N.fn.spec_to_json, self._h)

    def to_dict(self) -> dict:
        return json.loads(self.to_json())

    @property
    def bone_names(self) -> list:
        return [b["name"] for b in self.to_dict().get("bones", [])]

    @property
    def curve_names(self) -> list:
        return [c["name"] for c in self.to_dict().get("curves", [])]

    @property
    def bone_count(self) -> int:
        return int(N.fn.spec_bone_count(self._h))

    @property
    def curve_count(self) -> int:
        return int(N.fn.spec_curve_count(self._h))

    def feature_count(self, layout="axis-angle") -> int:
        """Features per pose: 3 (axis-angle) or 6 (engine) per bone, plus one per curve."""
        return int(N.fn.spec_feature_count(self._h, N.layout_arg(layout)))

    def __eq__(self, other):
        if not isinstance(other, InputSpec):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None

    def __repr__(self):
        if self.closed:
            return "<charkit.InputSpec (closed)>"
        return "<charkit.InputSpec bones=%r curves=%r>" % (self.bone_names, self.curve_names)


def _need_spec(spec):
    if not isinstance(spec, InputSpec):
        raise TypeError("spec must be a charkit.InputSpec, not %s" % type(spec).__name__)
    return spec


def sample_poses(spec, count, seed=777):
    """The rest pose, then ``count`` seeded random poses, exactly as
    ``charkit deformer sample --poses count --seed seed`` draws them.

    Returns float64 arrays (poses cross the C API in double precision, as
    charkit keeps them) ``(rotations, euler_deg, curves)`` of shapes
    (count+1, B, 4) (quaternions x y z w relative to rest), (count+1, B, 3)
    (degrees, XYZ) and (count+1, C).
    """
    _need_spec(spec)
    count = N.uint64_arg(count, "count")
    seed = N.uint64_arg(seed, "seed")
    b, c = spec.bone_count, spec.curve_count
    rotations = np.empty((count + 1, b, 4), np.float64)
    euler = np.empty((count + 1, b, 3), np.float64)
    curves = np.empty((count + 1, c), np.float64)
    N.check(N.fn.sample_poses(spec._h, count, seed, N.dptr(rotations), N.dptr(euler),
                              N.dptr(curves)))
    return rotations, euler, curves


def pose_features(spec, rotations, curves=None, layout="axis-angle", rest_local=None):
    """Feature rows of poses.

    rotations: (N, B, 4) rest-relative quaternions (x, y, z, w), or (B, 4) for
    one pose (then the result is (F,)). curves: (N, C) (or (C,)); None means
    all curves at 0. rest_local: (B, 4) the bones' rest local rotations, for
    the engine layout (None = identity). Returns float32 (N, F).
    """
    _need_spec(spec)
    lay = N.layout_arg(layout)
    b, c = spec.bone_count, spec.curve_count
    rot = N.f64(rotations, "rotations")
    single = rot.ndim == 2
    if single:
        rot = rot.reshape((1,) + rot.shape)
    N.check_shape(rot, "rotations", (None, b, 4))
    n = rot.shape[0]
    cur = None
    if curves is not None:
        cur = N.f64(curves, "curves")
        if single and cur.ndim == 1:
            cur = cur.reshape(1, -1)
        N.check_shape(cur, "curves", (n, c))
    elif c:
        cur = np.zeros((n, c), np.float64)
    if c == 0:
        cur = None
    rest = None if rest_local is None else N.f64(rest_local, "rest_local", (b, 4))
    f = spec.feature_count(layout)
    out = np.empty((n, f), np.float32)
    N.check(N.fn.pose_features(spec._h, lay, N.dptr(rot), N.dptr(cur), N.dptr(rest), n,
                               N.fptr(out)))
    return out[0] if single else out


def pose_library_json(spec, mesh, names, rotations, curves=None, shape_keys=None) -> str:
    """The pose-library JSON (docs/deformer/bake.md section 2, ``{"format":
    "charkit.pose_library", ...}``) of named poses: names (N str), rotations
    (N, B, 4) rest-relative, curves (N, C) or None (all 0), shape_keys None or
    N names written as each pose's "shape_key". ``mesh`` names the mesh."""
    _need_spec(spec)
    names = list(names)
    b, c = spec.bone_count, spec.curve_count
    n = len(names)
    rot = N.f64(rotations, "rotations", (n, b, 4))
    cur = N.curves_arg(curves, n, c)
    keys = None
    if shape_keys is not None:
        shape_keys = list(shape_keys)
        if len(shape_keys) != n:
            raise ValueError("shape_keys must have one name per pose (%d), not %d"
                             % (n, len(shape_keys)))
        keys = N.string_array(shape_keys)
    return N.call_string(N.fn.pose_library_json, spec._h, N.str_arg(mesh or "", "mesh"), n,
                         N.string_array(names), N.dptr(rot), N.dptr(cur), keys)

"""Training datasets: feature rows and the bind-space deltas a model should learn.

A dataset holds N samples (sample 0 the rest pose): features (N, F) in the
"axis-angle" or "engine" layout, and deltas (N, V, 3), each vertex's
bind-space offset from the rest mesh. On disk it is NAME.npz + NAME.json,
the files ``charkit deformer sample`` writes (docs/deformer/datasets.md).
"""

from __future__ import annotations

from ctypes import byref, c_double, c_int, c_uint64

import numpy as np

from . import _native as N
from .rig import Rig
from .spec import InputSpec, _need_spec

__all__ = ["Dataset"]


class Dataset(N.Handle):
    """Feature rows and bind-space deltas.

    ``Dataset(spec, features, deltas, layout="axis-angle", mesh_name="")``:
    features (N, F), deltas (N, V, 3) or (N, 3V).
    ``Dataset.from_positions(rig, spec, rotations, positions, ...)`` builds
    one from posed world-space target positions; ``Dataset.load`` reads the
    CLI's files. ``lbs_error`` is (mean, max) of plain LBS against the
    targets for a dataset made by from_positions, None otherwise.
    """

    _free = staticmethod(N.fn.dataset_free)
    _kind = "Dataset"

    def __init__(self, spec, features, deltas, layout="axis-angle", mesh_name=""):
        _need_spec(spec)
        lay = N.layout_arg(layout)
        feats = N.f32(features, "features", (None, spec.feature_count(layout)))
        n = feats.shape[0]
        d = N.f32(deltas, "deltas")
        if d.ndim == 2:
            if d.shape[0] != n or d.shape[1] % 3:
                raise ValueError("deltas must have shape (%d, V, 3) or (%d, 3V), not %s"
                                 % (n, n, tuple(d.shape)))
            d = d.reshape(n, d.shape[1] // 3, 3)
        N.check_shape(d, "deltas", (n, None, 3))
        out = N.DatasetP()
        N.check(N.fn.dataset_create(spec._h, lay, N.str_arg(mesh_name or "", "mesh_name"), n,
                                    d.shape[1], N.fptr(feats), N.fptr(d), byref(out)))
        super().__init__(out)
        self.lbs_error = None

    @classmethod
    def _wrap(cls, ptr, lbs_error=None) -> "Dataset":
        self = cls.__new__(cls)
        N.Handle.__init__(self, ptr)
        self.lbs_error = lbs_error
        return self

    @classmethod
    def from_positions(cls, rig, spec, rotations, positions, curves=None,
                       layout="axis-angle") -> "Dataset":
        """A dataset from posed targets, as ``deformer sample --targets pc2`` builds it.

        rotations (N, B, 4) rest-relative per pose; positions (N, V, 3) the
        mesh's world-space target positions per pose; curves (N, C) or None
        (all 0). The stored delta is inverse-LBS(target) - rest; the result's
        ``lbs_error`` is (mean, max) distance of plain LBS from the targets.
        """
        if not isinstance(rig, Rig):
            raise TypeError("rig must be a charkit.Rig, not %s" % type(rig).__name__)
        _need_spec(spec)
        lay = N.layout_arg(layout)
        b, c = spec.bone_count, spec.curve_count
        rot = N.f64(rotations, "rotations", (None, b, 4))
        n = rot.shape[0]
        pos = N.f32(positions, "positions", (n, rig.vertex_count, 3))
        cur = N.curves_arg(curves, n, c)
        err = (c_double * 2)(0.0, 0.0)
        out = N.DatasetP()
        N.check(N.fn.dataset_from_positions(rig._h, spec._h, lay, n, N.dptr(rot), N.dptr(cur),
                                            N.fptr(pos), err, byref(out)))
        return cls._wrap(out, (float(err[0]), float(err[1])))

    @classmethod
    def load(cls, npz_path) -> "Dataset":
        """Reads NAME.npz + NAME.json (the files ``charkit deformer sample`` writes)."""
        out = N.DatasetP()
        N.check(N.fn.dataset_load(N.path_arg(npz_path), byref(out)))
        return cls._wrap(out)

    def save(self, npz_path) -> None:
        """Writes NAME.npz + NAME.json."""
        N.check(N.fn.dataset_save(self._h, N.path_arg(npz_path)))

    def _shape(self):
        s, f, v, lay = c_uint64(), c_uint64(), c_uint64(), c_int()
        N.check(N.fn.dataset_shape(self._h, byref(s), byref(f), byref(v), byref(lay)))
        return int(s.value), int(f.value), int(v.value), int(lay.value)

    @property
    def sample_count(self) -> int:
        return self._shape()[0]

    @property
    def feature_count(self) -> int:
        return self._shape()[1]

    @property
    def vertex_count(self) -> int:
        return self._shape()[2]

    @property
    def layout(self) -> str:
        return N.layout_name(self._shape()[3])

    @property
    def spec(self) -> InputSpec:
        out = N.SpecP()
        N.check(N.fn.dataset_spec(self._h, byref(out)))
        return InputSpec._wrap(out)

    def features(self):
        """(N, F) float32."""
        s, f, _, _ = self._shape()
        out = np.empty((s, f), np.float32)
        N.check(N.fn.dataset_features(self._h, N.fptr(out), out.size))
        return out

    def deltas(self):
        """(N, V, 3) float32 bind-space offsets from the rest mesh."""
        s, _, v, _ = self._shape()
        out = np.empty((s, v, 3), np.float32)
        N.check(N.fn.dataset_deltas(self._h, N.fptr(out), out.size))
        return out

    def __repr__(self):
        if self.closed:
            return "<charkit.Dataset (closed)>"
        s, f, v, lay = self._shape()
        return "<charkit.Dataset samples=%d features=%d vertices=%d layout=%s>" % (
            s, f, v, N.layout_name(lay))

"""Rigs: a skeleton and a skinned mesh, from arrays or from a glTF/GLB/VRM file.

A Rig is what poses are applied to: ``Rig.skin`` is plain linear blend
skinning of the bind-pose positions (plus optional bind-space offsets) for one
pose, in the rig's world space; ``Dataset.from_positions`` and ``export_nmn``
use it to turn posed targets into bind-space deltas.
"""

from __future__ import annotations

import json
from ctypes import byref

import numpy as np

from . import _native as N
from .spec import _need_spec

__all__ = ["Rig"]


class Rig(N.Handle):
    """A skeleton and one skinned mesh.

    ``Rig(joint_names, parents, rest_trs, positions, joints, weights,
    inverse_bind=None, triangles=None, mesh_name="")``:

    - joints parents-first (``parents[j] < j``, -1 for a root);
    - rest_trs (J, 10): local translation xyz, rotation xyzw, scale xyz;
    - inverse_bind (J, 4, 4) ordinary row-major matrices (numpy/mathutils
      order; transposed here to the C API's column-major), None = each
      joint's inverse rest world matrix;
    - positions (V, 3) bind pose, joints (V, 4) joint indices, weights (V, 4)
      summing to 1 (or all 0), triangles (T, 3) optional.

    ``Rig.load(path, mesh=None)`` reads a glTF, GLB or VRM file as ``charkit
    deformer sample`` does.
    """

    _free = staticmethod(N.fn.rig_free)
    _kind = "Rig"

    def __init__(self, joint_names, parents, rest_trs, positions, joints, weights,
                 inverse_bind=None, triangles=None, mesh_name=""):
        names = list(joint_names)
        if any(not isinstance(n, str) for n in names):
            raise TypeError("joint_names must be a list of str")
        nj = len(names)
        par = N.index_array(parents, "parents", (nj,), np.int32)
        trs = N.f32(rest_trs, "rest_trs", (nj, 10))
        pos = N.f32(positions, "positions", (None, 3))
        nv = pos.shape[0]
        jnt = N.index_array(joints, "joints", (nv, 4), np.uint32)
        wts = N.f32(weights, "weights", (nv, 4))
        ib = None
        if inverse_bind is not None:
            m = N.f32(inverse_bind, "inverse_bind", (nj, 4, 4))
            ib = np.ascontiguousarray(np.transpose(m, (0, 2, 1)))   # -> column-major
        tri = None
        nt = 0
        if triangles is not None:
            tri = N.index_array(triangles, "triangles", (None, 3), np.uint32)
            nt = tri.shape[0]
        name_arr = N.string_array(names)
        out = N.RigP()
        N.check(N.fn.rig_create(N.str_arg(mesh_name or "", "mesh_name"), nj, name_arr,
                                N.i32ptr(par), N.fptr(trs), N.fptr(ib), nv, N.fptr(pos),
                                N.u32ptr(jnt), N.fptr(wts), nt, N.u32ptr(tri), byref(out)))
        super().__init__(out)

    @classmethod
    def load(cls, path, mesh=None) -> "Rig":
        """A rig from a glTF, GLB or VRM file: the mesh named ``mesh`` (None: the
        first skinned mesh)."""
        out = N.RigP()
        m = None if mesh is None else N.str_arg(mesh, "mesh")
        N.check(N.fn.rig_load(N.path_arg(path), m, byref(out)))
        self = cls.__new__(cls)
        N.Handle.__init__(self, out)
        return self

    def add_morph(self, name, deltas) -> None:
        """Adds a morph target (V, 3) of bind-space deltas; one of that name is replaced."""
        d = N.f32(deltas, "deltas", (self.vertex_count, 3))
        N.check(N.fn.rig_add_morph(self._h, N.str_arg(name, "name"), N.fptr(d)))

    def info(self) -> dict:
        """{"mesh", "vertices", "joints": [names], "parents": [...], "morphs": [names]}"""
        return json.loads(N.call_string(N.fn.rig_info_json, self._h))

    @property
    def vertex_count(self) -> int:
        return int(self.info()["vertices"])

    @property
    def joint_names(self) -> list:
        return list(self.info()["joints"])

    @property
    def morph_names(self) -> list:
        return list(self.info().get("morphs", []))

    @property
    def mesh_name(self) -> str:
        return self.info().get("mesh", "")

    def positions(self):
        """The bind-pose positions, (V, 3) float32."""
        out = np.empty((self.vertex_count, 3), np.float32)
        N.check(N.fn.rig_positions(self._h, N.fptr(out), out.size))
        return out

    def skin(self, spec, rotations, offsets=None):
        """Plain linear blend skinning of the bind-pose positions (+ offsets, (V, 3)
        bind-space) for one pose: rotations (B, 4) rest-relative for the spec's
        bones, other joints at rest. Returns (V, 3) world positions."""
        _need_spec(spec)
        rot = N.f64(rotations, "rotations", (spec.bone_count, 4))
        nv = self.vertex_count
        off = None if offsets is None else N.f32(offsets, "offsets", (nv, 3))
        out = np.empty((nv, 3), np.float32)
        N.check(N.fn.rig_skin(self._h, spec._h, N.dptr(rot), N.fptr(off), N.fptr(out)))
        return out

    def __repr__(self):
        if self.closed:
            return "<charkit.Rig (closed)>"
        i = self.info()
        return "<charkit.Rig mesh=%r vertices=%d joints=%d morphs=%d>" % (
            i.get("mesh", ""), i.get("vertices", 0), len(i.get("joints", [])),
            len(i.get("morphs", [])))


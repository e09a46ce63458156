"""BEM packages for editors: open a package whole, read its meshes in bulk,
ask what a settings string selects, and pack meshes back into it.

``BemPackage.open(path)`` builds every mesh any option can select, with every
draw, as ``charkit bem export --raw-axes`` builds a selection: the package's
own axes (Unity's), UVs and image rows, sliders as morph targets. ``pack``
writes meshes given as numpy arrays into a template package through
charkit's packer (``charkit bem pack``), validated before anything is
written. docs/python.md ("BEM packages") and docs/blender.md describe them.
"""

from __future__ import annotations

import ctypes
import json
from ctypes import byref, c_uint32, c_uint64, c_void_p

import numpy as np

from . import _native as N

__all__ = ["BemPackage", "pack"]


class BemPackage:
    """A valid BEM package opened whole (``charkit_bem_open``).

    ``facts`` is the package's JSON facts (``charkit_bem_package_json``):
    ``meshes`` (per exported mesh: ``name`` ``mesh_N``, ``mesh``,
    ``vertices``, ``components``, ``attributes``, ``primitives`` one per draw,
    ``targets``, ``bones``), ``skeleton``, ``images``, ``package`` (the
    ``bem inspect --json`` facts: option groups, parameters, drivers,
    textures...), ``manifest`` and ``version``.
    """

    def __init__(self, handle, path):
        self._h = handle
        self.path = path
        self.facts = json.loads(N.call_string(N.fn.bem_package_json, self._h))

    @classmethod
    def open(cls, path) -> "BemPackage":
        h = N.BemPackageP()
        N.check(N.fn.bem_open(N.path_arg(path), byref(h)))
        return cls(h, str(path))

    def close(self) -> None:
        if self._h:
            N.fn.bem_package_free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def floats(self, mesh: int, attribute: str) -> np.ndarray:
        """Attribute ``attribute`` of exported mesh ``mesh`` (an index into
        ``facts["meshes"]``) as float32 (vertices, components); ``TARGET_k``
        is morph target k's displacements (vertices, 3)."""
        count = c_uint64()
        name = N.str_arg(attribute, "attribute")
        N.check(N.fn.bem_mesh_floats(self._h, mesh, name, None, 0, byref(count)))
        out = np.empty(count.value, np.float32)
        N.check(N.fn.bem_mesh_floats(self._h, mesh, name, N.fptr(out), out.size, byref(count)))
        n = self.facts["meshes"][mesh]["vertices"]
        return out.reshape(n, -1) if n else out.reshape(0, 0)

    def indices(self, mesh: int, primitive: int) -> np.ndarray:
        """Triangle indices (uint32) of primitive ``primitive`` (a draw)."""
        count = c_uint64()
        N.check(N.fn.bem_mesh_indices(self._h, mesh, primitive, None, 0, byref(count)))
        out = np.empty(count.value, np.uint32)
        N.check(N.fn.bem_mesh_indices(self._h, mesh, primitive, N.u32ptr(out), out.size,
                                      byref(count)))
        return out

    def image_rgba(self, image: int) -> np.ndarray:
        """Image ``image`` (``facts["images"]``) as uint8 (height, width, 4),
        row 0 the bottom row (the package's order, and Blender's)."""
        w, h = c_uint32(), c_uint32()
        N.check(N.fn.bem_image_rgba(self._h, image, None, 0, byref(w), byref(h)))
        out = np.empty((h.value, w.value, 4), np.uint8)
        N.check(N.fn.bem_image_rgba(self._h, image,
                                    out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
                                    out.size, byref(w), byref(h)))
        return out

    def selection(self, options: str = "", parameters: str = "") -> dict:
        """What the settings strings select (``charkit bem select``):
        ``draws`` as [mesh, draw] pairs, ``components``, ``groups``,
        ``parameters`` and ``warnings``."""
        return json.loads(N.call_string(N.fn.bem_selection_json, self._h,
                                        N.str_arg(options, "options"),
                                        N.str_arg(parameters, "parameters")))


# ---- packing --------------------------------------------------------------


def _describe(meshes, images):
    """The scene description charkit_bem_pack_arrays reads (docs/c_api.md)
    and the contiguous arrays its indices name, in order."""
    arrays = []

    def add(values, dtype, width=None) -> int:
        arr = np.ascontiguousarray(values, dtype)
        if width is not None and arr.size % width:
            raise ValueError("an array of %d values is not a multiple of %d" % (arr.size, width))
        arrays.append(arr)
        return len(arrays) - 1

    desc_meshes = []
    for m in meshes:
        attrs = []
        for name, values in m["attributes"].items():
            if name == "JOINTS_0":
                attrs.append({"name": name, "data": add(values, np.uint16)})
                continue
            arr = np.asarray(values, np.float32)
            a = {"name": name, "data": add(arr, np.float32)}
            if name.startswith("_"):
                a["components"] = 1 if arr.ndim == 1 else int(arr.shape[1])
            attrs.append(a)
        prims = []
        for p in m["primitives"]:
            idx = add(np.asarray(p["indices"]).ravel(), np.uint32)
            prims.append({"indices": idx, "count": int(arrays[idx].size),
                          "material": str(p["material"])})
        dm = {"name": m["name"], "attributes": attrs, "primitives": prims}
        if "node" in m:
            dm["node"] = str(m["node"])
        if m.get("targets"):
            dm["targets"] = [{"name": t["name"], "weight": float(t.get("weight", 0.0)),
                              "positions": add(t["positions"], np.float32)}
                             for t in m["targets"]]
        if m.get("joints"):
            dm["joints"] = [str(j) for j in m["joints"]]
        desc_meshes.append(dm)
    desc_images = []
    for img in images:
        px = np.asarray(img["pixels"])
        if px.dtype != np.uint8 or px.ndim != 3 or px.shape[2] != 4:
            raise ValueError("image '%s': pixels must be uint8 (height, width, 4), not %s %s"
                             % (img["name"], px.dtype, px.shape))
        desc_images.append({"name": img["name"], "width": int(px.shape[1]),
                            "height": int(px.shape[0]), "pixels": add(px, np.uint8)})
    desc = {"meshes": desc_meshes}
    if desc_images:
        desc["images"] = desc_images
    return desc, arrays


def pack(template, meshes, output=None, images=(), raw_axes=True, to=None, spec=None,
         texture_formats=None) -> dict:
    """Packs ``meshes`` into the template package ``template`` through
    charkit's packer and validator (``charkit_bem_pack_arrays``: the scene is
    built from the arrays in C++); writes ``output`` only when the result is
    valid (None: validate only).

    Each mesh is a dict: ``name`` (``mesh_N`` replaces the template's mesh
    N), optional ``node`` (the object's name), ``attributes`` {glTF name:
    (vertices, k) array} (POSITION, NORMAL, TANGENT, TEXCOORD_n, COLOR_0,
    WEIGHTS_0, JOINTS_0 indexing ``joints`` (bone names), ``_NAME``),
    ``primitives`` [{"indices", "material"}], optional ``targets`` [{"name",
    "positions", "weight"}]. ``images``: [{"name", "pixels"}], ``pixels``
    uint8 (height, width, 4), row 0 the bottom row (a name is a texture's
    original_name); charkit encodes them.

    ``raw_axes`` (default True): the arrays are in the package's own axes, as
    BemPackage gives them. ``to``: "bem" or "zip" (default: by ``output``'s
    extension). ``spec``: the spec file's object (docs/bem/pack.md).
    ``texture_formats``: {KEY: FORMAT}. Returns the report: ``ok``, ``error``
    ({"code", "message", "location"}) when not, ``meshes``, ``textures``,
    ``warnings``, ``issues``, ``version``, ``bytes``.
    """
    desc, arrays = _describe(meshes, images)
    options = {"rawAxes": bool(raw_axes)}
    if to is None and output is not None and str(output).lower().endswith(".zip"):
        to = "zip"
    if to is not None:
        options["to"] = to
    if spec is not None:
        options["spec"] = spec
    if texture_formats:
        options["textureFormats"] = dict(texture_formats)
    n = len(arrays)
    pointers = (c_void_p * max(n, 1))(*[a.ctypes.data for a in arrays])
    sizes = (c_uint64 * max(n, 1))(*[a.nbytes for a in arrays])
    out = c_void_p()
    N.check(N.fn.bem_pack_arrays(N.path_arg(template), N.str_arg(json.dumps(desc), "scene"),
                                 pointers, sizes, n,
                                 N.str_arg(json.dumps(options), "options"),
                                 None if output is None else N.path_arg(output), byref(out)))
    return json.loads(N.take_string(out))

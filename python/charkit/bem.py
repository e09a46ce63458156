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
import struct
import zlib
from ctypes import byref, c_uint32, c_uint64, c_void_p

import numpy as np

from . import _native as N

__all__ = ["BemPackage", "pack", "glb_from_meshes", "png_rgba"]


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

_COMPONENT_TYPE = {np.dtype(np.float32): 5126, np.dtype(np.uint32): 5125,
                   np.dtype(np.uint16): 5123}
_TYPE = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4"}


def glb_from_meshes(meshes, images=()) -> bytes:
    """A GLB holding ``meshes`` as ``charkit bem pack`` reads them.

    Each mesh is a dict: ``name`` (``mesh_N`` replaces the template's mesh
    N), ``attributes`` {glTF name: (vertices, k) array}, with ``JOINTS_0``
    indexing ``joints`` (bone names), ``primitives`` [{"indices", "material"}],
    optional ``targets`` [{"name", "positions", "weight"}]. ``images``:
    [{"name", "png"}] (a name is a texture's original_name).
    """
    bin_ = bytearray()
    views, accessors = [], []

    def add(data: np.ndarray, target=None, minmax=False) -> int:
        data = np.ascontiguousarray(data)
        while len(bin_) % 4:
            bin_.append(0)
        views.append({"buffer": 0, "byteOffset": len(bin_), "byteLength": data.nbytes})
        if target:
            views[-1]["target"] = target
        bin_.extend(data.tobytes())
        k = 1 if data.ndim == 1 else data.shape[1]
        acc = {"bufferView": len(views) - 1, "componentType": _COMPONENT_TYPE[data.dtype],
               "count": int(data.shape[0]), "type": _TYPE[k]}
        if minmax and data.shape[0]:
            acc["min"] = [float(x) for x in data.min(axis=0)]
            acc["max"] = [float(x) for x in data.max(axis=0)]
        accessors.append(acc)
        return len(accessors) - 1

    materials, material_index = [], {}
    nodes, skins, gltf_meshes, joint_node = [], [], [], {}
    for m in meshes:
        attrs = {}
        for name, values in m["attributes"].items():
            arr = np.asarray(values)
            if name == "JOINTS_0":
                arr = arr.astype(np.uint16)
            else:
                arr = arr.astype(np.float32)
            attrs[name] = add(arr, 34962, minmax=(name == "POSITION"))
        targets = [{"POSITION": add(np.asarray(t["positions"], np.float32), 34962, True)}
                   for t in m.get("targets", ())]
        prims = []
        for p in m["primitives"]:
            mat = p["material"]
            if mat not in material_index:
                material_index[mat] = len(materials)
                materials.append({"name": mat})
            prim = {"attributes": attrs, "mode": 4, "material": material_index[mat],
                    "indices": add(np.asarray(p["indices"], np.uint32), 34963)}
            if targets:
                prim["targets"] = targets
            prims.append(prim)
        gm = {"name": m["name"], "primitives": prims}
        if targets:
            gm["weights"] = [float(t.get("weight", 0.0)) for t in m["targets"]]
            gm["extras"] = {"targetNames": [t["name"] for t in m["targets"]]}
        gltf_meshes.append(gm)
        node = {"name": m.get("node", m["name"]), "mesh": len(gltf_meshes) - 1}
        if "JOINTS_0" in attrs:
            joints = []
            for bone in m.get("joints", ()):
                if bone not in joint_node:
                    joint_node[bone] = len(nodes)
                    nodes.append({"name": bone})
                joints.append(joint_node[bone])
            node["skin"] = len(skins)
            skins.append({"joints": joints})
        nodes.append(node)
    gltf_images, textures = [], []
    for img in images:
        gltf_images.append({"name": img["name"], "mimeType": "image/png",
                            "bufferView": len(views)})
        while len(bin_) % 4:
            bin_.append(0)
        views.append({"buffer": 0, "byteOffset": len(bin_), "byteLength": len(img["png"])})
        bin_.extend(img["png"])
    while len(bin_) % 4:
        bin_.append(0)
    doc = {"asset": {"version": "2.0", "generator": "charkit Python"},
           "scene": 0, "scenes": [{"nodes": list(range(len(nodes)))}],
           "nodes": nodes, "meshes": gltf_meshes, "materials": materials,
           "buffers": [{"byteLength": len(bin_)}], "bufferViews": views,
           "accessors": accessors}
    if skins:
        doc["skins"] = skins
    if gltf_images:
        doc["images"] = gltf_images
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    text += b" " * ((4 - len(text) % 4) % 4)
    total = 12 + 8 + len(text) + 8 + len(bin_)
    return (struct.pack("<III", 0x46546C67, 2, total) + struct.pack("<II", len(text), 0x4E4F534A)
            + text + struct.pack("<II", len(bin_), 0x004E4942) + bytes(bin_))


def png_rgba(pixels: np.ndarray) -> bytes:
    """An 8-bit RGBA PNG of (height, width, 4) uint8 pixels, row 0 written
    first (stdlib zlib; no image library needed)."""
    px = np.ascontiguousarray(pixels, np.uint8)
    h, w = px.shape[:2]
    raw = b"".join(b"\0" + px[y].tobytes() for y in range(h))

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def pack(template, meshes, output=None, images=(), raw_axes=True, to=None, spec=None,
         texture_formats=None) -> dict:
    """Packs ``meshes`` (see glb_from_meshes) into the template package
    ``template`` through charkit's packer and validator; writes ``output``
    only when the result is valid (None: validate only).

    ``raw_axes`` (default True): the arrays are in the package's own axes, as
    BemPackage gives them. ``to``: "bem" or "zip" (default: by ``output``'s
    extension). ``spec``: the spec file's object (docs/bem/pack.md).
    ``texture_formats``: {KEY: FORMAT}. Returns the report: ``ok``, ``error``
    ({"code", "message", "location"}) when not, ``meshes``, ``textures``,
    ``warnings``, ``issues``, ``version``, ``bytes``.
    """
    glb = glb_from_meshes(meshes, images)
    options = {"rawAxes": bool(raw_axes)}
    if to is None and output is not None and str(output).lower().endswith(".zip"):
        to = "zip"
    if to is not None:
        options["to"] = to
    if spec is not None:
        options["spec"] = spec
    if texture_formats:
        options["textureFormats"] = dict(texture_formats)
    buf = (ctypes.c_uint8 * len(glb)).from_buffer_copy(glb)
    out = c_void_p()
    N.check(N.fn.bem_pack_glb(N.path_arg(template), buf, len(glb),
                              N.str_arg(json.dumps(options), "options"),
                              None if output is None else N.path_arg(output), byref(out)))
    return json.loads(N.take_string(out))

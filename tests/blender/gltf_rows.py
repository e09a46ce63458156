# GLB reading for the checks in tests/blender/pack_check.sh (python3, no
# packages): the JSON chunk, accessors as rows of tuples, and a mesh's
# vertices as `bem pack` counts them.
import json
import struct

COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}
CODES = {5120: "b", 5121: "B", 5122: "h", 5123: "H", 5125: "I", 5126: "f"}


def glb(path):
    """(document, accessor(i) -> rows) of a GLB file; raw component values."""
    data = open(path, "rb").read()
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    assert magic == b"glTF" and version == 2 and length == len(data), f"{path}: bad GLB header"
    clen, _ = struct.unpack_from("<II", data, 12)
    doc = json.loads(data[20:20 + clen])
    blen, _ = struct.unpack_from("<II", data, 20 + clen)
    binary = data[28 + clen:28 + clen + blen]

    def accessor(i):
        a = doc["accessors"][i]
        v = doc["bufferViews"][a["bufferView"]]
        code, n = CODES[a["componentType"]], COMPONENTS[a["type"]]
        stride = v.get("byteStride", struct.calcsize("<" + code) * n)
        off = v.get("byteOffset", 0) + a.get("byteOffset", 0)
        return [struct.unpack_from("<%d%s" % (n, code), binary, off + k * stride) for k in range(a["count"])]
    return doc, accessor


def close(a, b, tol=1e-5):
    return len(a) == len(b) and all(abs(x - y) <= tol for p, q in zip(a, b) for x, y in zip(p, q))


def _rows(doc, accessor, mesh, pick):
    """Rows per vertex as `bem pack` counts the mesh's vertices: primitives
    sharing one attributes object share their vertices, others are appended."""
    seen, rows = [], []
    for p in mesh["primitives"]:
        if p["attributes"] in seen:
            continue
        seen.append(p["attributes"])
        index = pick(p)
        if index is None:
            return None
        rows += accessor(index)
    return rows


def mesh_positions(doc, accessor, mesh):
    return _rows(doc, accessor, mesh, lambda p: p["attributes"]["POSITION"])


def target_deltas(doc, accessor, mesh, t):
    return _rows(doc, accessor, mesh, lambda p: p["targets"][t]["POSITION"])


def attribute(doc, accessor, mesh, name):
    """The attribute's rows, or None when a primitive lacks it."""
    return _rows(doc, accessor, mesh, lambda p: p["attributes"].get(name))

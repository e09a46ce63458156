# Makes a scene in Blender's Python, as a creator would, and exports it with
# Blender's own glTF exporter for `charkit bem pack` (tests/blender/pack_check.sh).
#
#   blender -b --factory-startup --python-exit-code 1 -P make_pack_scene.py -- \
#       IN.glb OUT.glb [--no-shape-keys] [--no-subdivide]
#     Imports IN.glb (a `charkit bem export`) with Blender's glTF importer and
#     edits it: every mesh scaled by 1.02 at object level and the transform
#     applied, one vertex of each mesh moved in the mesh data, one face of the
#     first mesh poked (a vertex added in its middle: the vertex count
#     changes), and on the first mesh the shape keys "Basis", "belly" and
#     "shoulders" (each moving some vertices; "shoulders" at value 0.5, so the
#     slider's default is 500). Mesh data names (`mesh_N`), object names and
#     material names stay as imported.
#
#   blender ... -P make_pack_scene.py -- --sliders NAMES IN.glb OUT.glb
#       --edit-key KEY --drop-key KEY --dropped-output OUT2.glb
#     The template's own sliders: imports IN.glb (a `charkit bem export` of a
#     package with sliders, whose frames are morph targets) and fails unless
#     the first mesh's shape keys are exactly "Basis" + NAMES (comma
#     separated, the package's parameter ids). Then edits as a creator would:
#     the object scaled by 1.02 and the transform applied, two vertices of
#     the basis moved in Edit Mode (Blender moves the keys relative to it
#     along), the displacement of shape key KEY changed on three vertices.
#     No topology change. Exports OUT.glb, then deletes shape key --drop-key
#     and exports OUT2.glb (which `bem pack` must refuse: BEM_PACK_MORPHS).
#
#   blender ... -P make_pack_scene.py -- --new OUT.glb --material NAME --bone NAME
#       [--texcoord2] [--no-shape-keys]
#     Builds a mesh from nothing: a 3 x 3 grid, triangulated, UVs, mesh data
#     named `mesh_0` (the template's mesh 0), one material NAME, every vertex
#     weighted 1 to bone NAME of a new armature (the template's layouts all
#     store a skin), the two shape keys above; with --texcoord2 also the
#     4-component `_TEXCOORD2` attribute the game's 16/12/12 layout stores.
#
# Either way the scene is exported as GLB with tangents (the packed
# normal/tangent word needs TANGENT), shape keys, skins and attributes whose
# names start with an underscore. Prints one line
#   CHARKIT_PACK_SCENE {"meshes": [{"name", "object", "vertices", "polygons",
#                       "materials", "shape_keys"}], "output": ...}
# with what Blender held just before the export. Exit 1 on any failure.
import json
import struct
import sys

import bmesh
import bpy
import mathutils
import numpy

# Debian 12's Blender 3.4 glTF importer still uses `numpy.bool`, which
# NumPy 1.24 (also Debian 12) removed; give it the alias back.
if not hasattr(numpy, "bool"):
    numpy.bool = bool

args = sys.argv[sys.argv.index("--") + 1:]


def option(name, default=None):
    if name in args:
        i = args.index(name)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return default


def flag(name):
    if name in args:
        args.remove(name)
        return True
    return False


new_scene = flag("--new")
shape_keys = not flag("--no-shape-keys")
subdivide = not flag("--no-subdivide")
texcoord2 = flag("--texcoord2")
material_name = option("--material")
bone_name = option("--bone")
slider_names = option("--sliders")
edit_key = option("--edit-key")
drop_key = option("--drop-key")
dropped_output = option("--dropped-output")


# --- glTF application-specific attributes -----------------------------------
#
# Blender 3.4's glTF importer reads POSITION, NORMAL, TEXCOORD_n, COLOR_n,
# JOINTS_n and WEIGHTS_n only: an attribute like `_TEXCOORD2` (the outline
# data of the game's 16/12/12 layout, which `bem export` writes so that
# `bem pack` can put it back) is dropped on import, and `bem pack` then
# refuses the mesh (BEM_PACK_ATTRIBUTE: the layout stores it). A creator has
# to bring it back as a mesh attribute; here it is read from the GLB itself.
# The exporter writes a mesh attribute NAME as `_NAME` (upper case) when
# export_attributes is on, except the render colour attribute, which always
# becomes COLOR_0 (and a lone colour attribute is the render one; Blender
# does not allow "none"): so a placeholder colour attribute is added first
# and colours are not exported (no template layout here stores Color).

def read_glb(path):
    data = open(path, "rb").read()
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    if magic != b"glTF" or version != 2:
        raise SystemExit(f"{path}: not a GLB 2.0 file")
    clen, _ = struct.unpack_from("<II", data, 12)
    doc = json.loads(data[20:20 + clen])
    blen, _ = struct.unpack_from("<II", data, 20 + clen)
    binary = data[28 + clen:28 + clen + blen]
    return doc, binary


COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}
COMPONENT_TYPE = {5120: ("b", 127.0), 5121: ("B", 255.0), 5122: ("h", 32767.0),
                  5123: ("H", 65535.0), 5125: ("I", None), 5126: ("f", None)}


def read_accessor(doc, binary, index):
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    code, scale = COMPONENT_TYPE[acc["componentType"]]
    n = COMPONENTS[acc["type"]]
    size = struct.calcsize("<" + code)
    stride = view.get("byteStride", size * n)
    base = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    rows = []
    for i in range(acc["count"]):
        row = struct.unpack_from("<%d%s" % (n, code), binary, base + i * stride)
        if acc.get("normalized") and scale:
            row = tuple(max(v / scale, -1.0) for v in row)
        rows.append(row)
    return rows


def restore_underscore_attributes(path):
    """Gives each imported mesh back the `_NAME` attributes of IN.glb as
    per-vertex (POINT) attributes NAME, in the importer's vertex order: per
    primitive, the vertices its indices use, in ascending index order, the
    primitives one after the other (merge_vertices off, the default)."""
    doc, binary = read_glb(path)
    restored = {}
    for gmesh in doc.get("meshes", []):
        me = bpy.data.meshes.get(gmesh.get("name", ""))
        if me is None:
            continue
        names = sorted({a for p in gmesh["primitives"] for a in p["attributes"] if a.startswith("_")})
        for name in names:
            values = []
            for prim in gmesh["primitives"]:
                if "indices" in prim:
                    used = sorted({i[0] for i in read_accessor(doc, binary, prim["indices"])})
                else:
                    used = range(doc["accessors"][prim["attributes"]["POSITION"]]["count"])
                if name in prim["attributes"]:
                    rows = read_accessor(doc, binary, prim["attributes"][name])
                    values.extend(rows[i] for i in used)
                else:
                    values.extend((0.0,) * 4 for _ in used)
            if len(values) != len(me.vertices):
                raise SystemExit(f"{me.name}: {name} has {len(values)} values for {len(me.vertices)} vertices")
            add_point_attribute(me, name[1:], [tuple(v) + (0.0,) * (4 - len(v)) for v in values])
            restored.setdefault(me.name, []).append(name)
    return restored


def add_point_attribute(me, name, rows):
    if len(me.color_attributes) == 0:
        me.color_attributes.new("Col", "BYTE_COLOR", "POINT")
    render = me.color_attributes.render_color_index
    attr = me.attributes.new(name, "FLOAT_COLOR", "POINT")
    me.color_attributes.render_color_index = render  # keep the placeholder as COLOR_0
    attr.data.foreach_set("color", [c for row in rows for c in row])


# --- edits ------------------------------------------------------------------

def add_shape_keys(ob):
    """Basis, "belly" (the lower half pushed forward, -Y in Blender) and
    "shoulders" (the upper half raised and widened), at values 0 and 0.5."""
    me = ob.data
    zs = [v.co.z for v in me.vertices]
    mid = (min(zs) + max(zs)) / 2
    ob.shape_key_add(name="Basis", from_mix=False)
    belly = ob.shape_key_add(name="belly", from_mix=False)
    shoulders = ob.shape_key_add(name="shoulders", from_mix=False)
    for i, v in enumerate(me.vertices):
        if v.co.z <= mid:
            belly.data[i].co.y -= 0.05
        if v.co.z >= mid:
            shoulders.data[i].co.z += 0.03
            shoulders.data[i].co.x *= 1.1
    belly.value = 0.0
    shoulders.value = 0.5


def apply_transforms(ob):
    """Object > Apply > All Transforms on one object."""
    bpy.ops.object.select_all(action="DESELECT")
    ob.select_set(True)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.transform_apply(location=True, rotation=True, scale=True)


def edit_imported(path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    result = bpy.ops.import_scene.gltf(filepath=path)
    if "FINISHED" not in result:
        raise SystemExit(f"import failed: {result}")
    restored = restore_underscore_attributes(path)
    meshes = sorted((ob for ob in bpy.data.objects if ob.type == "MESH"), key=lambda o: o.data.name)
    if not meshes:
        raise SystemExit("no mesh imported")
    for n, ob in enumerate(meshes):
        ob.scale = (1.02, 1.02, 1.02)
        apply_transforms(ob)
        ob.data.vertices[0].co.z += 0.01
        if n == 0 and subdivide:
            bm = bmesh.new()
            bm.from_mesh(ob.data)
            bm.faces.ensure_lookup_table()
            before = len(bm.verts)
            bmesh.ops.poke(bm, faces=[bm.faces[0]])
            if len(bm.verts) != before + 1:
                raise SystemExit(f"{ob.name}: poke added {len(bm.verts) - before} vertices")
            bm.to_mesh(ob.data)
            bm.free()
            ob.data.update()
        if n == 0 and shape_keys:
            add_shape_keys(ob)
    return meshes, restored


def edit_sliders(path):
    """The slider round: shape keys checked against the package's sliders,
    basis and one key edited (see the header)."""
    names = slider_names.split(",")
    if not edit_key or not drop_key or not dropped_output or edit_key not in names or drop_key not in names:
        raise SystemExit("--sliders needs --edit-key and --drop-key (two of its names) and --dropped-output")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    result = bpy.ops.import_scene.gltf(filepath=path)
    if "FINISHED" not in result:
        raise SystemExit(f"import failed: {result}")
    restored = restore_underscore_attributes(path)
    meshes = sorted((ob for ob in bpy.data.objects if ob.type == "MESH"), key=lambda o: o.data.name)
    if not meshes:
        raise SystemExit("no mesh imported")
    ob = meshes[0]
    me = ob.data
    keys = [k.name for k in me.shape_keys.key_blocks] if me.shape_keys else []
    if keys != ["Basis"] + names:
        raise SystemExit(f"{me.name}: imported shape keys {keys}, expected {['Basis'] + names}")
    count = len(me.vertices)
    ob.scale = (1.02, 1.02, 1.02)
    apply_transforms(ob)
    # The basis in Edit Mode, as a creator moves vertices: on leaving it
    # Blender writes the basis and moves every key relative to it along.
    ob.active_shape_key_index = 0
    bpy.ops.object.mode_set(mode="EDIT")
    bm = bmesh.from_edit_mesh(me)
    bm.verts.ensure_lookup_table()
    for i in (0, 1):
        bm.verts[i].co.z += 0.02
        bm.verts[i].co.x -= 0.01
    bmesh.update_edit_mesh(me)
    bpy.ops.object.mode_set(mode="OBJECT")
    basis = me.shape_keys.key_blocks["Basis"]
    # One key's displacement changed on three vertices (the key's own data,
    # as sculpting it or Edit Mode with that key active does).
    key = me.shape_keys.key_blocks[edit_key]
    for i in range(min(3, count)):
        key.data[i].co.y -= 0.04
        key.data[i].co.x += 0.01
    if len(me.vertices) != count:
        raise SystemExit(f"{me.name}: vertex count changed {count} -> {len(me.vertices)}")
    moved = sum(1 for v, b in zip(me.vertices, basis.data) if (v.co - b.co).length > 1e-6)
    if moved:
        raise SystemExit(f"{me.name}: {moved} mesh vertices differ from the basis after Edit Mode")
    return meshes, restored


def make_new():
    if not material_name or not bone_name:
        raise SystemExit("--new needs --material and --bone")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene

    arm_data = bpy.data.armatures.new("palette")
    arm = bpy.data.objects.new("palette", arm_data)
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm_data.edit_bones.new(bone_name)
    bone.head = (0.0, 0.0, 0.0)
    bone.tail = (0.0, 0.0, 0.5)
    bpy.ops.object.mode_set(mode="OBJECT")

    me = bpy.data.meshes.new("mesh_0")
    bm = bmesh.new()
    bm.loops.layers.uv.new("UVMap")
    bmesh.ops.create_grid(bm, x_segments=3, y_segments=3, size=0.5, calc_uvs=True)
    # Stand it up (a front-facing panel, z up) and triangulate it.
    bmesh.ops.rotate(bm, verts=bm.verts, cent=(0, 0, 0),
                     matrix=mathutils.Matrix.Rotation(1.5707963, 3, "X"))
    bmesh.ops.translate(bm, verts=bm.verts, vec=(0.0, 0.0, 0.5))
    bmesh.ops.triangulate(bm, faces=bm.faces)
    bm.to_mesh(me)
    bm.free()
    mat = bpy.data.materials.new(material_name)
    mat.use_nodes = True
    me.materials.append(mat)
    if texcoord2:
        add_point_attribute(me, "TEXCOORD2", [(0.0, 0.0, 0.0, 1.0)] * len(me.vertices))

    ob = bpy.data.objects.new("mesh_0", me)
    scene.collection.objects.link(ob)
    ob.parent = arm
    group = ob.vertex_groups.new(name=bone_name)
    group.add(list(range(len(me.vertices))), 1.0, "REPLACE")
    ob.modifiers.new("Armature", "ARMATURE").object = arm
    if shape_keys:
        add_shape_keys(ob)
    return [ob], {}


def describe(meshes, out):
    summary = {"output": out, "restored_attributes": restored, "meshes": []}
    for ob in meshes:
        if any(abs(ob.matrix_world[i][j] - (i == j)) > 1e-6 for i in range(4) for j in range(4)):
            raise SystemExit(f"{ob.name}: transform not applied: {ob.matrix_world}")
        me = ob.data
        summary["meshes"].append({
            "name": me.name,
            "object": ob.name,
            "vertices": len(me.vertices),
            "polygons": len(me.polygons),
            "materials": [m.name for m in me.materials if m is not None],
            "shape_keys": [k.name for k in me.shape_keys.key_blocks] if me.shape_keys else [],
        })
    return summary


def export(out):
    result = bpy.ops.export_scene.gltf(
        filepath=out, export_format="GLB", export_tangents=True, export_normals=True,
        export_texcoords=True, export_morph=True, export_morph_normal=True,
        export_skins=True, export_apply=False, export_attributes=True,
        export_colors=False, export_extras=False, export_animations=False,
        export_yup=True)
    if "FINISHED" not in result:
        raise SystemExit(f"export failed: {result}")


if new_scene:
    meshes, restored = make_new()
elif slider_names:
    if len(args) != 2:
        raise SystemExit("usage: make_pack_scene.py -- --sliders NAMES IN.glb OUT.glb [options]")
    meshes, restored = edit_sliders(args.pop(0))
else:
    if len(args) != 2:
        raise SystemExit("usage: make_pack_scene.py -- IN.glb OUT.glb [options]")
    meshes, restored = edit_imported(args.pop(0))
if len(args) != 1:
    raise SystemExit(f"expected OUT.glb, got {args}")
out = args[0]

summary = describe(meshes, out)
export(out)
if slider_names:
    ob = meshes[0]
    ob.shape_key_remove(ob.data.shape_keys.key_blocks[drop_key])
    summary["dropped"] = describe(meshes, dropped_output)
    export(dropped_output)
print("CHARKIT_PACK_SCENE " + json.dumps(summary))

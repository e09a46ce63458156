# Imports a GLB with Blender's own glTF importer and checks what came in.
#   blender -b --factory-startup --python-exit-code 1 -P import_glb.py -- FILE.glb
# Prints one JSON line: meshes (name, vertices, polygons, materials, UV and
# colour layers), armatures, images. Fails (exit 1) when the import raises,
# reports an error, or brings in no mesh.
import json
import sys

import bpy
import numpy

# Debian 12's Blender 3.4 glTF importer still uses `numpy.bool`, which
# NumPy 1.24 (also Debian 12) removed; give it the alias back.
if not hasattr(numpy, "bool"):
    numpy.bool = bool

path = sys.argv[sys.argv.index("--") + 1]
bpy.ops.wm.read_factory_settings(use_empty=True)
result = bpy.ops.import_scene.gltf(filepath=path)
if "FINISHED" not in result:
    raise SystemExit(f"import failed: {result}")

meshes = []
for ob in bpy.data.objects:
    if ob.type != "MESH":
        continue
    me = ob.data
    meshes.append({
        "name": ob.name,
        "vertices": len(me.vertices),
        "polygons": len(me.polygons),
        "materials": [m.name for m in me.materials if m is not None],
        "uv_layers": len(me.uv_layers),
        "vertex_groups": len(ob.vertex_groups),
    })
if not meshes:
    raise SystemExit("no mesh imported")
summary = {
    "file": path,
    "meshes": meshes,
    "armatures": sum(1 for ob in bpy.data.objects if ob.type == "ARMATURE"),
    "images": [img.name for img in bpy.data.images if img.size[0] > 0],
}
print("CHARKIT_BLENDER " + json.dumps(summary))

"""Times the Blender pose-deformer add-on's steps on a large mesh.

Run by bench/blender_deformer_large.sh:
  blender --background --factory-startup --python bench/blender_deformer_large.py -- \
      --rings R --around A --poses N --iterations I
with CHARKIT_LIBRARY pointing at a release libcharkit_c.so. The scene is the
add-on test's (tests/blender/deformer_addon_test.py: a chain of three deform
bones, a skinned tube with a driven corrective shape key), built with
R x A vertices; the steps are the panel's operators run as a script would:
Load Bones, Generate Training Data (N random poses), Train Linear, Train
Neural (I iterations), Create Preview Proxy, one preview refresh after a
pose change, Bake Shape Keys. Prints one line per step with its wall time.
"""

import importlib.util
import os
import sys
import time

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ARGS = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []


def arg(name, default):
    return type(default)(ARGS[ARGS.index(name) + 1]) if name in ARGS else default


spec = importlib.util.spec_from_file_location(
    "deformer_addon_test", os.path.join(ROOT, "tests", "blender", "deformer_addon_test.py"))
scene_kit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scene_kit)

import bpy  # noqa: E402
from mathutils import Quaternion  # noqa: E402


def timed(what, fn):
    t = time.perf_counter()
    result = fn()
    print(f"BENCH {what}: {time.perf_counter() - t:.2f} s", flush=True)
    return result


def main():
    scene_kit.RINGS, scene_kit.AROUND = arg("--rings", 250), arg("--around", 200)
    poses, iterations = arg("--poses", 40), arg("--iterations", 1000)
    import charkit_deformer
    from charkit_deformer import state
    charkit_deformer.register()
    arm, mesh = timed("build the scene", scene_kit.build_scene)
    s = bpy.context.scene.charkit
    s.armature, s.mesh = arm, mesh
    print(f"BENCH mesh: {len(mesh.data.vertices)} vertices, {len(mesh.data.polygons)} faces; "
          f"{poses} poses; {iterations} iterations", flush=True)
    timed("Load Bones", bpy.ops.charkit.load_bones)
    for b in s.bones:
        b.use = b.name in ("b1", "b2")
    s.random_count, s.random_seed = poses, 5
    s.pose_library_path = ""
    timed("Generate Training Data", bpy.ops.charkit.generate_training_data)
    s.model_type = 'LINEAR'
    timed("Train (Linear)", bpy.ops.charkit.train)
    s.model_type = 'NEURAL'
    s.iterations = iterations
    timed("Train (Neural)", bpy.ops.charkit.train)
    timed("Create Preview Proxy", bpy.ops.charkit.create_preview)
    arm.pose.bones["b1"].rotation_quaternion = Quaternion((1, 0, 0), 0.5)
    timed("preview refresh after a pose change", bpy.context.view_layer.update)
    timed("Bake Shape Keys", bpy.ops.charkit.bake_shape_keys)
    se = state.get(bpy.context.scene)
    print(f"BENCH model: {se.model.kind}, {se.model.vertex_count} vertices", flush=True)
    charkit_deformer.unregister()


if __name__ == "__main__":
    main()

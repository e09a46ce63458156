"""Headless end-to-end test of the Blender add-on charkit_deformer.

Run by tests/blender/deformer_addon_check.sh:
  blender --background --factory-startup --python-exit-code 1 \
      --python tests/blender/deformer_addon_test.py -- --out OUT_DIR
with CHARKIT_LIBRARY pointing at libcharkit_c.so. Builds an armature (a chain
of three deform bones, two twist bones and a non-deform control bone) and a
skinned cylinder with a corrective shape key driven by a bone's rotation (a
simple driver expression), a shape key used as a curve input and three shape
keys used as morph targets; registers the add-on and runs its operators in
order, checking each result against charkit's own computation. Prints
"CHARKIT_DEFORMER_TEST OK" last; any failure exits 1.
"""

import json
import math
import os
import sys
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import ROOT, T0, arg, check, log  # noqa: E402

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from mathutils import Euler, Matrix, Quaternion, Vector  # noqa: E402

OUT = arg("--out", os.path.join(ROOT, "build", "blender-deformer-test"))


def close(a, b, tol, what):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    check(a.shape == b.shape, f"{what}: shapes {a.shape} vs {b.shape}")
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    check(err <= tol, f"{what}: max difference {err:.3g} > {tol:g}")
    return err


# ---------------------------------------------------------------------------
# The scene

BONES = [  # name, head, tail, parent, deform
    ("b0", (0, 0, 0), (0, 1, 0), None, True),
    ("b1", (0, 1, 0), (0, 2, 0), "b0", True),
    ("b2", (0, 2, 0), (0, 3, 0), "b1", True),
    ("t1", (0, 1, 0), (0, 1.3, 0.1), "b1", True),
    ("t2", (0, 2, 0), (0, 2.3, 0.1), "b2", True),
    ("ctrl", (0, 0, 0.5), (0, 0.5, 0.5), "b0", False),
]
RINGS, AROUND, RADIUS, LENGTH = 25, 12, 0.25, 3.0


def build_scene():
    for ob in list(bpy.data.objects):
        bpy.data.objects.remove(ob, do_unlink=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    scene.frame_set(1)

    arm_data = bpy.data.armatures.new("RigData")
    arm = bpy.data.objects.new("Rig", arm_data)
    scene.collection.objects.link(arm)
    arm.location = (0.5, -0.2, 0.3)
    arm.rotation_euler = (0.0, 0.0, 0.3)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode='EDIT')
    for name, head, tail, parent, deform in BONES:
        eb = arm_data.edit_bones.new(name)
        eb.head, eb.tail = head, tail
        eb.use_deform = deform
        if parent:
            eb.parent = arm_data.edit_bones[parent]
            eb.use_connect = name in ("b1", "b2")
    bpy.ops.object.mode_set(mode='OBJECT')

    # The cylinder along the chain, built in armature space and stored in a mesh
    # object whose transform differs from the armature's (X = arm^-1 @ mesh): the
    # add-on must convert between the two spaces.
    X = Matrix.Translation((0.1, 0.05, -0.2)) @ Euler((0.4, 0.0, -0.2)).to_matrix().to_4x4() @ Matrix.Scale(1.25, 4)
    Xi = X.inverted()
    verts, faces, arm_pos = [], [], []
    for r in range(RINGS):
        y = LENGTH * r / (RINGS - 1)
        for a in range(AROUND):
            t = 2 * math.pi * a / AROUND
            p = Vector((RADIUS * math.cos(t), y, RADIUS * math.sin(t)))
            arm_pos.append(p)
            verts.append(tuple(Xi @ p))
    for r in range(RINGS - 1):
        for a in range(AROUND):
            i0, i1 = r * AROUND + a, r * AROUND + (a + 1) % AROUND
            faces.append((i0, i1, i1 + AROUND, i0 + AROUND))
    me = bpy.data.meshes.new("TubeMesh")
    me.from_pydata(verts, [], faces)
    me.update()
    mesh = bpy.data.objects.new("Tube", me)
    scene.collection.objects.link(mesh)
    mesh.matrix_world = arm.matrix_world @ X

    groups = {n: mesh.vertex_groups.new(name=n) for n in ("b0", "b1", "b2", "t1", "t2", "ctrl")}
    for i, p in enumerate(arm_pos):
        y = p.y
        w = {n: max(0.0, 1.0 - abs(y - c) / 1.2) for n, c in (("b0", 0.5), ("b1", 1.5), ("b2", 2.5))}
        if 1.0 <= y <= 2.0:
            w["t1"] = 0.06
        if y >= 1.4:
            w["t2"] = 0.04
        for n, v in w.items():
            if v > 0:
                groups[n].add([i], v, 'REPLACE')
        if y < 0.6:
            groups["ctrl"].add([i], 0.5, 'REPLACE')  # not a deform bone: ignored
    mod = mesh.modifiers.new("Armature", 'ARMATURE')
    mod.object = arm

    # Shape keys: Basis, a corrective bulge at the b0/b1 joint driven by b1's X
    # rotation, "flex" (a curve input) and three morph targets.
    mesh.shape_key_add(name="Basis", from_mix=False)
    base = np.array([tuple(v.co) for v in me.vertices], np.float64)
    arm_np = np.array([tuple(p) for p in arm_pos], np.float64)

    def add_key(name, arm_deltas):
        kb = mesh.shape_key_add(name=name, from_mix=False)
        d_obj = arm_deltas @ np.array(Xi.to_3x3()).T
        kb.data.foreach_set("co", (base + d_obj).astype(np.float32).ravel())
        return kb

    radial = arm_np.copy()
    radial[:, 1] = 0.0
    radial /= np.linalg.norm(radial, axis=1, keepdims=True)
    bump = np.clip(1.0 - np.abs(arm_np[:, 1] - 1.0) / 0.4, 0.0, 1.0)[:, None]
    corrective = add_key("corrective", 0.12 * bump * radial)
    drv = corrective.driver_add("value").driver
    drv.type = 'SCRIPTED'
    var = drv.variables.new()
    var.name = "rx"
    var.type = 'TRANSFORMS'
    var.targets[0].id = arm
    var.targets[0].bone_target = "b1"
    var.targets[0].transform_type = 'ROT_X'
    var.targets[0].transform_space = 'LOCAL_SPACE'
    drv.expression = "abs(rx) * 1.2"
    check(drv.is_simple_expression, "the driver expression should need no Python")
    flex = np.zeros_like(arm_np)
    flex[:, 2] = 0.05 * np.clip(arm_np[:, 1] - 2.0, 0.0, 1.0)
    add_key("flex", flex)
    for k in range(3):
        d = np.zeros_like(arm_np)
        d[:, k] = 0.03 * np.sin(arm_np[:, 1] * (k + 1))
        add_key(f"m{k}", d)
    bpy.context.view_layer.update()
    return arm, mesh


# ---------------------------------------------------------------------------
# A small ONNX MLP, serialised by hand (protobuf wire format)

def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num, wire, payload):
    key = _varint((num << 3) | wire)
    if wire == 0:
        return key + _varint(payload)
    if wire == 2:
        return key + _varint(len(payload)) + payload
    raise ValueError(wire)


def _str(num, s):
    return _field(num, 2, s.encode())


def _tensor(name, a):
    a = np.ascontiguousarray(a, np.float32)
    msg = b"".join(_field(1, 0, d) for d in a.shape)  # dims
    msg += _field(2, 0, 1)                            # data_type FLOAT
    msg += _str(8, name)                              # name
    msg += _field(9, 2, a.astype("<f4").tobytes())    # raw_data
    return msg


def _value_info(name, dims):
    shape = b""
    for d in dims:
        dim = _str(2, d) if isinstance(d, str) else _field(1, 0, d)
        shape += _field(1, 2, dim)
    tensor_type = _field(1, 0, 1) + _field(2, 2, shape)  # elem_type FLOAT, shape
    return _str(1, name) + _field(2, 2, _field(1, 2, tensor_type))


def _node(op, inputs, outputs, name, attrs=()):
    msg = b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs)
    msg += _str(3, name) + _str(4, op)
    for aname, ival in attrs:  # INT attributes
        msg += _field(5, 2, _str(1, aname) + _field(3, 0, ival) + _field(20, 0, 2))
    return msg


def write_onnx_mlp(path, w1, b1, w2, b2):
    """x [N, in] -> Gemm(W1, b1, transB) -> Elu -> Gemm(W2, b2, transB) -> y [N, out]."""
    nodes = [_node("Gemm", ["x", "W1", "B1"], ["h"], "fc1", [("transB", 1)]),
             _node("Elu", ["h"], ["e"], "act1"),
             _node("Gemm", ["e", "W2", "B2"], ["y"], "fc2", [("transB", 1)])]
    graph = b"".join(_field(1, 2, n) for n in nodes) + _str(2, "mlp")
    for name, a in (("W1", w1), ("B1", b1), ("W2", w2), ("B2", b2)):
        graph += _field(5, 2, _tensor(name, a))
    graph += _field(11, 2, _value_info("x", ["N", w1.shape[1]]))
    graph += _field(12, 2, _value_info("y", ["N", w2.shape[0]]))
    model = _field(1, 0, 7) + _str(2, "charkit-test") + _field(7, 2, graph)
    model += _field(8, 2, _str(1, "") + _field(2, 0, 13))
    with open(path, "wb") as f:
        f.write(model)


def mlp_numpy(x, w1, b1, w2, b2):
    h = x.astype(np.float64) @ w1.T.astype(np.float64) + b1
    h = np.where(h > 0, h, np.expm1(np.minimum(h, 0)))
    return h @ w2.T.astype(np.float64) + b2


# ---------------------------------------------------------------------------
# Scene state (what a cancelled or failed run must leave as it was)

def scene_state(arm, mesh):
    sc = bpy.context.scene
    st = {"frame": sc.frame_current, "pose_position": arm.data.pose_position}
    for pb in arm.pose.bones:
        st[pb.name] = (pb.rotation_mode, tuple(pb.rotation_quaternion), tuple(pb.rotation_euler),
                       tuple(pb.rotation_axis_angle), tuple(pb.location), tuple(pb.scale))
    for kb in mesh.data.shape_keys.key_blocks:
        st["key:" + kb.name] = (kb.value, kb.slider_min, kb.slider_max)
    return st


def same_state(a, b, what):
    check(a.keys() == b.keys(), f"{what}: state keys differ")
    for k in a:
        va, vb = a[k], b[k]
        if isinstance(va, tuple):
            for x, y in zip(va, vb):
                if isinstance(x, tuple):
                    check(np.allclose(x, y, atol=1e-6), f"{what}: {k} {va} != {vb}")
                elif isinstance(x, float):
                    check(abs(x - y) <= 1e-6, f"{what}: {k} {va} != {vb}")
                else:
                    check(x == y, f"{what}: {k} {va} != {vb}")
        else:
            check(va == vb, f"{what}: {k} {va} != {vb}")


def evaluated_arm_positions(obj, arm):
    dg = bpy.context.evaluated_depsgraph_get()
    ob_eval = obj.evaluated_get(dg)
    me = ob_eval.to_mesh()
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    ob_eval.to_mesh_clear()
    m = np.array(arm.matrix_world.inverted() @ obj.matrix_world)
    return co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]


def base_coords(obj):
    co = np.empty(len(obj.data.vertices) * 3, np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def arm_to_obj_linear(arm, mesh):
    return np.array((mesh.matrix_world.inverted() @ arm.matrix_world).to_3x3())


# ---------------------------------------------------------------------------

def main():
    os.makedirs(OUT, exist_ok=True)
    import charkit_deformer
    from charkit_deformer import _ck, jobs, state

    charkit_deformer.register()
    ck = _ck.get()
    log(f"charkit {ck.version()} (C API {ck.c_api_version()}) from {getattr(ck, '__file__', '?')}")
    check(hasattr(bpy.types.Scene, "charkit"), "scene.charkit is registered")
    for op in ("load_bones", "generate_random_poses", "generate_training_data", "train", "create_preview",
               "refresh_preview", "bake_shape_keys", "export_model", "import_model", "import_network",
               "export_nmn"):
        check(hasattr(bpy.ops.charkit, op), f"operator charkit.{op}")
    check(hasattr(bpy.types, "CHARKIT_PT_main"), "the panel is registered")

    arm, mesh = build_scene()
    scene = bpy.context.scene
    s = scene.charkit
    s.armature, s.mesh = arm, mesh
    V = len(mesh.data.vertices)
    L = arm_to_obj_linear(arm, mesh)

    # --- Inputs
    bpy.ops.charkit.load_bones()
    check(sorted(b.name for b in s.bones) == sorted(n for n, *_ in BONES), "bones listed")
    names = [b.name for b in s.bones]
    check(names.index("b0") < names.index("b1") < names.index("b2"), "bones parents first")
    # Proposed: the bones whose subtree's weights blend with the rest of the tube
    # (b1, b2); not the root b0 (weight 1 everywhere: rigid), nor the twist bones
    # t1, t2 (under 7 % of a vertex), nor the non-deform ctrl
    used = sorted(b.name for b in s.bones if b.use)
    check(used == ["b1", "b2"], f"Load Bones proposes the bones that bend the mesh: {used}")
    # per-axis ranges: their own for each axis, in the spec
    s.bones["b1"].per_axis = True
    s.bones["b1"].axis_min, s.bones["b1"].axis_max = (-10, -20, -30), (10, 20, 30)
    axes = jobs.bridge.spec_dict([s.bones["b1"]], [])[0][0]["axes"]
    check([(a["min_deg"], a["max_deg"]) for a in axes] == [(-10, 10), (-20, 20), (-30, 30)],
          f"per-axis ranges: {axes}")
    s.bones["b1"].per_axis = False
    check([c.name for c in s.curves] == ["corrective", "flex", "m0", "m1", "m2"], "curve list")
    check([m.name for m in s.morphs] == ["corrective", "flex", "m0", "m1", "m2"], "morph list")
    for b in s.bones:
        b.use = b.name in ("b1", "b2")
    s.bones["b1"].axis_y = False
    s.bones["b1"].min_deg, s.bones["b1"].max_deg = -50.0, 50.0
    s.bones["b2"].min_deg, s.bones["b2"].max_deg = -35.0, 35.0
    s.curves["flex"].use = True
    s.random_count, s.random_seed, s.timeline_start = 40, 5, 1
    spec = ck.InputSpec(*jobs.bridge.spec_dict([s.bones["b1"], s.bones["b2"]], [s.curves["flex"]]))
    rot_ref, _euler, curves_ref = ck.sample_poses(spec, 40, 5)
    log("inputs set: bones b1 (x, z), b2; curve flex")

    # --- Generate Random Poses: keyed on the timeline
    bpy.ops.charkit.generate_random_poses()
    check(scene.frame_current == 1, "ends at the start frame")
    for f in (1, 2, 17, 41):
        scene.frame_set(f)
        got = [arm.pose.bones[n].rotation_quaternion for n in ("b1", "b2")]
        got = np.array([[q.x, q.y, q.z, q.w] for q in got])
        close(got, rot_ref[f - 1], 1e-5, f"keyed pose at frame {f}")
    scene.frame_set(1)
    poses_action = arm.animation_data.action
    check(poses_action is not None and poses_action.name == arm.name + "_charkit_poses"
          and poses_action.use_fake_user, "the poses are keyed in an action of their own")
    log("generate_random_poses: rest + 40 poses keyed")

    # --- A cancelled run restores the scene
    scene.frame_set(7)
    arm.pose.bones["b1"].rotation_mode = 'XYZ'
    arm.pose.bones["b1"].rotation_euler = (0.1, 0.2, 0.3)
    arm.pose.bones["b0"].location = (0.0, 0.1, 0.0)
    arm.pose.bones["ctrl"].rotation_quaternion = Quaternion((0, 0, 1), 0.4)
    mesh.data.shape_keys.key_blocks["flex"].value = 0.3
    mesh.data.shape_keys.key_blocks["m1"].value = 0.2
    bpy.context.view_layer.update()
    before = scene_state(arm, mesh)
    gen = jobs.generate_training_data(bpy.context)
    steps = [next(gen) for _ in range(6)]
    check(steps[-1][0] < steps[-1][1], "cancelled part-way")
    check(jobs.busy(), "a job is running")
    gen.close()
    check(not jobs.busy(), "no job after cancel")
    same_state(before, scene_state(arm, mesh), "after cancel")
    log("cancelled generate_training_data: scene restored")

    # --- An error (a modifier that changes the vertex count) restores the scene
    sub = mesh.modifiers.new("Subdivision", 'SUBSURF')
    sub.levels = 1
    try:
        bpy.ops.charkit.generate_training_data()
    except RuntimeError as e:
        check("vertex count" in str(e), f"error names the vertex count: {e}")
    else:
        raise AssertionError("a topology-changing modifier must fail")
    same_state(before, scene_state(arm, mesh), "after error")
    mesh.modifiers.remove(sub)
    log("failed generate_training_data: reported and scene restored")

    # back to the keyed animation at the start frame
    arm.pose.bones["b1"].rotation_mode = 'QUATERNION'
    arm.pose.bones["b0"].location = (0.0, 0.0, 0.0)
    arm.pose.bones["ctrl"].rotation_quaternion = (1, 0, 0, 0)
    mesh.data.shape_keys.key_blocks["m1"].value = 0.0
    mesh.data.shape_keys.key_blocks["flex"].value = 0.0
    scene.frame_set(1)

    # --- Generate Training Data (random)
    t = time.perf_counter()
    check(bpy.ops.charkit.generate_training_data() == {'FINISHED'}, "generate_training_data")
    se = state.get(scene)
    log(f"generate_training_data: {len(se.rotations)} poses in {time.perf_counter() - t:.2f}s, "
        f"LBS error {se.lbs_error}")
    check(scene.frame_current == 1, "training data ends at the start frame")
    check(arm.pose.bones["b1"].rotation_mode == 'QUATERNION', "baked inputs in quaternion mode")
    close(se.rotations, rot_ref, 1e-7, "training rotations = sample_poses")
    close(se.curves, curves_ref, 1e-7, "training curves = sample_poses")
    check(se.positions.shape == (41, V, 3), "positions shape")
    # the rig reproduces Blender: LBS of bind + the stored delta is the evaluated mesh
    neural_deltas = se.neural_dataset.deltas()
    check(float(np.abs(neural_deltas[0]).max()) < 1e-4, "rest delta is zero")
    for i in (3, 17, 40):
        skinned = se.data_rig.rig.skin(spec, se.rotations[i], offsets=neural_deltas[i])
        close(skinned, se.positions[i], 2e-4, f"LBS(bind + delta) = evaluated mesh, pose {i}")
    check(float(np.abs(neural_deltas).max()) > 1e-3, "the corrective shows up in the deltas")
    lin_deltas = se.linear_dataset.deltas()
    close(lin_deltas, se.positions - se.positions[0], 1e-6, "linear deltas = positions - rest")
    # the training targets are Blender's own evaluation: pose 17 is keyed at frame 18
    scene.frame_set(18)
    flex_key = mesh.data.shape_keys.key_blocks["flex"]
    flex_key.value = float(se.curves[17, 0])
    bpy.context.view_layer.update()
    close(evaluated_arm_positions(mesh, arm), se.positions[17], 1e-5, "pose 17 = Blender's evaluation")
    flex_key.value = 0.0
    scene.frame_set(1)

    # --- Linear (Rest): the whole deformation from the rest pose, no skinning
    s.model_type = 'LINEAR_REST'
    check(bpy.ops.charkit.train() == {'FINISHED'}, "train linear")
    check(se.model.kind == "linear" and se.stats and "holdout" in se.stats and "train" in se.stats,
          "linear stats present")
    check(jobs.model_targets(se.model) == "rest-deformation", "rest deformation recorded")
    rows = jobs.stats_lines(se)
    check(any(r[0].strip() == "b1" for r in rows), f"per-bone held-out rows: {rows}")
    # measured against plain skinning, not against the whole deformation
    plain = [r for r in rows if r[0] == "Plain skinning"]
    check(len(plain) == 1 and plain[0][1].startswith(f"{se.lbs_error[0]:.3g} /"), f"rows: {rows}")
    check(not any(r[0].startswith("No corr") for r in rows), f"no 'no correction' row: {rows}")
    log("train linear: " + jobs.stats_summary(se.stats))

    bpy.ops.charkit.create_preview()
    proxy = bpy.data.objects["Tube_charkit_preview"]
    check(not any(m.type == 'ARMATURE' for m in proxy.modifiers), "linear proxy has no armature modifier")
    rest_obj = base_coords(proxy).copy()
    close(rest_obj, base_coords_from_bind(se, arm, mesh), 1e-5, "linear proxy at rest = rest mesh")
    pb = arm.pose.bones["b1"]
    pb.rotation_quaternion = Quaternion((1, 0, 0), 0.6)
    bpy.context.view_layer.update()  # depsgraph_update_post refreshes the proxy
    moved = base_coords(proxy)
    check(float(np.abs(moved - rest_obj).max()) > 1e-2, "linear proxy follows the pose")
    rot = np.array([[*Quaternion((1, 0, 0), 0.6)[1:], Quaternion((1, 0, 0), 0.6)[0]],
                    [0, 0, 0, 1]], np.float32)
    feats = ck.pose_features(se.model.spec, rot[None], np.zeros((1, 1), np.float32))
    want = rest_obj + se.model.offsets(feats)[0] @ L.T
    close(moved, want, 1e-4, "linear proxy = rest + prediction")
    scene.frame_set(5)  # frame_change_post refreshes too
    close(base_coords(proxy), rest_obj + se.model.offsets(
        ck.pose_features(se.model.spec, se.rotations[4:5], np.zeros((1, 1), np.float32)))[0] @ L.T, 1e-4,
        "linear proxy after a frame change")
    scene.frame_set(1)
    log("linear preview follows the pose")

    # A path relative to the .blend file, in a file never saved: refused, nothing written
    s.pose_library_path = "//linear_poses.json"
    try:
        bpy.ops.charkit.bake_shape_keys()
    except RuntimeError as e:
        check("not saved" in str(e) and "//linear_poses.json" in str(e), f"unsaved '//' refused: {e}")
    else:
        raise AssertionError("a '//' path in an unsaved file must be refused")
    check("Tube_charkit_baked" not in bpy.data.objects, "nothing baked after the refusal")
    s.pose_library_path = os.path.join(OUT, "linear_poses.json")
    check(bpy.ops.charkit.bake_shape_keys() == {'FINISHED'}, "bake linear")
    # Preview and bake copy the mesh: no shape-key block is left without its mesh
    # (reopening the saved file would warn of an invalid 'from' pointer)
    for key in bpy.data.shape_keys:
        check(key.user is not None and getattr(key.user, "shape_keys", None) == key,
              f"shape-key block {key.name} belongs to its mesh")
    baked = bpy.data.objects["Tube_charkit_baked"]
    check(not any(m.type == 'ARMATURE' for m in baked.modifiers), "linear bake drops the armature modifier")
    check(len(baked.data.shape_keys.key_blocks) == 1 + 41, "one key per pose")
    offs = se.model.offsets(ck.pose_features(se.model.spec, se.rotations, se.curves))
    kb = baked.data.shape_keys.key_blocks
    basis = base_coords_key(kb[0])
    for i in (0, 7, 40):
        close(base_coords_key(kb[i + 1]) - basis, offs[i] @ L.T, 1e-5, f"linear baked key {i}")
    log("bake linear: 41 keys")

    # Export .nmn of a Linear model: not a network, so the export says so, retrains
    # one in the engine layout and reports how the two compare; the preview stays
    linear_model = se.model
    check("linear model" in jobs.nmn_as_is(linear_model), "a Linear model is not written as it is")
    s.nmn_path = os.path.join(OUT, "nmn_linear", "MLD_Linear.nmn")
    iterations, s.nmn_morphs, s.iterations = s.iterations, 8, 200
    msg = jobs.run_to_end(jobs.export_nmn(bpy.context))
    check("retrained" in msg and "it is a linear model" in msg and "mean error" in msg,
          f"the retraining export says why and what it measured: {msg}")
    check(os.path.isfile(s.nmn_path) and se.model is linear_model, "written; the Linear model kept")
    check(se.exported_model is not None and se.exported_model.layout == "engine", "retrained network")
    s.iterations = iterations
    log("export .nmn of a Linear model: " + msg)

    # --- Linear: the bind-space correction on top of skinning, zero at rest
    s.model_type = 'LINEAR'
    check(bpy.ops.charkit.train() == {'FINISHED'}, "train corrective linear")
    check(jobs.model_targets(se.model) == "bind-correction", "bind correction recorded")
    rest_rot = np.array([[[0, 0, 0, 1], [0, 0, 0, 1]]], np.float64)
    at_rest = se.model.offsets(ck.pose_features(se.model.spec, rest_rot, np.zeros((1, 1), np.float32)))
    check(float(np.abs(at_rest).max()) == 0.0, "no correction at the rest pose")
    held = se.stats["holdout"]["mean"]
    ref = jobs._stat(se.stats, "uncorrected_holdout", "uncorrectedHoldout")["mean"]
    rows = jobs.stats_lines(se)
    check(any(r[0] == "No corr. (held-out)" for r in rows), f"rows: {rows}")
    check((held > ref) == any(r[0] == "Warning" for r in rows), f"warning row iff worse: {rows}")
    log(f"train corrective linear: held-out {held:.4g}, plain skinning {ref:.4g}")
    bpy.ops.charkit.create_preview()
    proxy = bpy.data.objects["Tube_charkit_preview"]
    check(any(m.type == 'ARMATURE' and m.object == arm for m in proxy.modifiers),
          "corrective linear proxy keeps an armature modifier")
    pose_i = 11
    scene.frame_set(1 + pose_i)
    cur = np.array([[mesh.data.shape_keys.key_blocks["flex"].value]], np.float32)
    offs = se.model.offsets(ck.pose_features(se.model.spec, se.rotations[pose_i:pose_i + 1], cur))[0]
    check(float(np.abs(offs).max()) > 1e-4, "the correction is not nothing at this pose")
    skinned = se.model_rig.rig.skin(spec, se.rotations[pose_i], offsets=offs)
    close(evaluated_arm_positions(proxy, arm), skinned, 1e-4, "corrective proxy = LBS(bind + offsets)")
    scene.frame_set(1)
    log("corrective linear preview rides on the skinned pose")

    # --- Neural model
    s.model_type = 'NEURAL'
    s.hidden, s.iterations, s.batch_size, s.learning_rate = "32,32", 400, 32, 3e-3
    check(s.validation == 0.0, "early stopping is off by default")
    s.validation = 0.1
    t = time.perf_counter()
    check(bpy.ops.charkit.train() == {'FINISHED'}, "train neural")
    check(se.model.kind == "neural" and se.stats and "holdout" in se.stats, "neural stats present")
    log(f"train neural ({time.perf_counter() - t:.2f}s): " + jobs.stats_summary(se.stats))
    check(se.trained_from_neural, "trained in this session")
    # Early stopping (on by default): the steps it chose, of at most Iterations, checked
    # every 50 on poses set aside from training, then trained again on all of them
    hyper = se.model.hyper
    check(hyper.get("validation") == s.validation and hyper.get("max_iterations") == 400
          and 0 < hyper["iterations"] <= hyper["stopped_after"] <= 400
          and hyper["iterations"] % 50 == 0 and hyper.get("validation_samples") == 4,
          f"early stopping recorded: {hyper}")
    check(se.stats["train"]["samples"] == 37, f"every training pose trained on: {se.stats['train']}")
    steps = [r for r in jobs.stats_lines(se) if r[0] == "Steps"]
    check(steps and steps[0][1].startswith(f"{hyper['iterations']} of 400"), f"Steps row: {steps}")
    s.validation = 0.0

    bpy.ops.charkit.create_preview()
    proxy = bpy.data.objects["Tube_charkit_preview"]
    check(any(m.type == 'ARMATURE' and m.object == arm for m in proxy.modifiers),
          "neural proxy keeps an armature modifier")
    base0 = base_coords(proxy).copy()
    pose_i = 23
    scene.frame_set(1 + pose_i)
    base1 = base_coords(proxy).copy()
    check(float(np.abs(base1 - base0).max()) > 1e-4, "neural proxy's offsets follow the pose")
    # the proxy reads the curve input from the shape key's current value (not keyed: 0)
    cur = np.array([mesh.data.shape_keys.key_blocks["flex"].value], np.float32)
    # Neural models take the engine layout's features (6 per bone, from the rest rotations)
    check(se.model.layout == "engine", "a trained Neural model is in the engine layout")
    rest_local = se.model_rig.rest_local(["b1", "b2"])
    feats = ck.pose_features(se.model.spec, se.rotations[pose_i:pose_i + 1], cur[None],
                             layout="engine", rest_local=rest_local)
    offs_now = se.model.offsets(feats)[0]
    close(base1 - base_coords_from_bind(se, arm, mesh), offs_now @ L.T, 1e-5,
          "neural proxy base = bind + offsets")
    # Blender's armature modifier on the proxy skins exactly as charkit's rig does.
    skinned = se.model_rig.rig.skin(spec, se.rotations[pose_i], offsets=offs_now)
    close(evaluated_arm_positions(proxy, arm), skinned, 1e-4, "proxy skinning = charkit LBS")
    scene.frame_set(1)
    log("neural preview follows the pose on the skinned mesh")

    s.pose_library_path = os.path.join(OUT, "neural_poses.json")
    check(bpy.ops.charkit.bake_shape_keys() == {'FINISHED'}, "bake neural")
    baked = bpy.data.objects["Tube_charkit_baked"]
    check(any(m.type == 'ARMATURE' for m in baked.modifiers), "neural bake keeps the armature modifier")
    kb = baked.data.shape_keys.key_blocks
    check(len(kb) == 1 + 41, "one key per pose")
    check([k.name for k in kb][1:4] == ["ck_rest", "ck_pose_1", "ck_pose_2"], "key names")
    offs = se.model.offsets(ck.pose_features(se.model.spec, se.rotations, se.curves,
                                             layout="engine", rest_local=rest_local))
    basis = base_coords_key(kb[0])
    worst = 0.0
    for i in range(41):
        worst = max(worst, close(base_coords_key(kb[i + 1]) - basis, offs[i] @ L.T, 1e-5,
                                 f"neural baked key {i}"))
    lib = json.load(open(s.pose_library_path))
    check(lib["format"] == "charkit.pose_library" and len(lib["poses"]) == 41, "pose library")
    check(lib["poses"][5]["shape_key"] == "ck_pose_5" and lib["bones"] == ["b1", "b2"], "pose library names")
    log(f"bake neural: 41 keys, worst |key - basis - offsets| {worst:.2g}; pose library written")
    gen = jobs.bake_shape_keys(bpy.context)
    for _ in range(5):
        next(gen)
    gen.close()
    check("Tube_charkit_baked_part" not in bpy.data.objects and "Tube_charkit_baked_part" not in bpy.data.meshes,
          "a cancelled bake leaves nothing behind")
    check(len(bpy.data.objects["Tube_charkit_baked"].data.shape_keys.key_blocks) == 42,
          "a cancelled bake keeps the earlier one")
    log("bake cancelled part-way: the earlier bake stays")

    # --- Own format round trip
    s.model_path = os.path.join(OUT, "pose_model.json")
    check(bpy.ops.charkit.export_model() == {'FINISHED'}, "export model")
    check(os.path.isfile(os.path.join(OUT, "pose_model.npz")), "pose_model.npz written")
    trained = se.model
    feats_all = ck.pose_features(trained.spec, se.rotations, se.curves, layout="engine",
                                 rest_local=rest_local)
    check(bpy.ops.charkit.import_model() == {'FINISHED'}, "import model")
    check(se.origin == "file" and se.model is not trained, "imported model is current")
    close(se.model.offsets(feats_all), trained.offsets(feats_all), 1e-6, "imported model offsets")
    # mapped onto other bones: a warning, not an error
    s.bones["b1"].use, s.bones["b0"].use = False, True
    _msg, warnings = jobs.import_model(bpy.context)
    check(any("mapped to 'b0'" in w for w in warnings), f"mapping warning: {warnings}")
    check(se.model_bone_names == ["b0", "b2"], "mapped bones")
    s.bones["b1"].use, s.bones["b0"].use = True, False
    log("export/import model: offsets equal; renamed inputs only warn")

    # --- Training cancelled part-way: the worker thread stops, the model stays
    iterations = s.iterations
    s.iterations = 10_000_000
    current = se.model
    t = time.perf_counter()
    gen = jobs.train(bpy.context)
    for _ in range(3):
        next(gen)
    gen.close()
    check(se.model is current and not jobs.busy(), "a cancelled training keeps the model")
    check(time.perf_counter() - t < 60, "cancelled training stopped")
    s.iterations = iterations
    log(f"train cancelled part-way after {time.perf_counter() - t:.2f}s")

    # --- Export .nmn: the previewed network itself (train again: the import replaced it)
    s.nmn_morphs, s.iterations = 8, 300
    check(bpy.ops.charkit.train() == {'FINISHED'}, "train neural again")
    previewed = se.model
    check(previewed.layout == "engine" and jobs.nmn_as_is(previewed) == "",
          f"a trained Neural model is written as it is: {jobs.nmn_as_is(previewed)!r}")
    check(len(previewed.morph_names) == 1 + 8, f"basis of 8 + the mean: {len(previewed.morph_names)}")
    s.nmn_path = os.path.join(OUT, "nmn", "MLD_Tube.nmn")
    t = time.perf_counter()
    msg = jobs.run_to_end(jobs.export_nmn(bpy.context))
    check("as it is" in msg, f"export message: {msg}")
    for ext in (".nmn", ".bmd_ue.json", ".morphs.npz"):
        check(os.path.isfile(os.path.join(OUT, "nmn", "MLD_Tube" + ext)), f"{ext} written")
    check(se.exported_model is previewed, "the export is the previewed model")
    log(f"export_nmn in {time.perf_counter() - t:.2f}s: {msg}")
    # Poses it was trained on and poses it never saw (up to 0.8 rad about random axes)
    rng = np.random.default_rng(11)
    axis = rng.normal(size=(30, 2, 3))
    axis /= np.linalg.norm(axis, axis=2, keepdims=True)
    angle = rng.uniform(0, 0.8, (30, 2, 1))
    unseen = np.concatenate([axis * np.sin(angle / 2), np.cos(angle / 2)], axis=2)
    rotations = np.concatenate([se.rotations, unseen]).astype(np.float64)
    curves = np.concatenate([se.curves, rng.uniform(0, 1, (30, se.curves.shape[1]))])
    want = previewed.offsets(se.features(ck, rotations, curves))

    # Re-imported with the default settings, the file gives the preview back
    s.network_path = s.nmn_path
    s.clamp_imported = True  # the default
    check(bpy.ops.charkit.import_network() == {'FINISHED'}, "import nmn")
    check(se.origin == "network" and se.model.layout == "engine", "network imported")
    check(se.model.clamp == "none", f"learned-basis outputs are not clamped: {se.model.clamp}")
    rest_local = se.model_rig.rest_local(["b1", "b2"])
    ef = ck.pose_features(se.model.spec, rotations, curves, layout="engine", rest_local=rest_local)
    close(se.features(ck, rotations, curves), ef, 0, "engine features")
    close(se.model.morphs(), previewed.morphs(), 1e-6, "imported .nmn morph targets")
    got = se.model.offsets(ef)
    scale = float(np.abs(want).max())
    check(scale > 1e-3, "the correction is not nothing")
    worst = float(np.abs(got - want).max())
    check(worst <= 1e-5 * scale, f"re-imported offsets = preview: {worst:.3g} of {scale:.3g}")
    bpy.ops.charkit.create_preview()
    check(bpy.ops.charkit.bake_shape_keys() == {'FINISHED'}, "bake imported network")
    log(f"import .nmn: offsets equal the preview's within {worst / scale:.2g} relative "
        f"on {len(rotations)} poses ({len(unseen)} unseen)")

    # --- ONNX: 2 bones x 6 + 1 curve = 13 inputs, 3 outputs weighing m0..m2
    for m in s.morphs:
        m.use = m.name in ("m0", "m1", "m2")
    rng = np.random.default_rng(3)
    w1 = rng.normal(0, 0.6, (6, 13)).astype(np.float32)
    b1 = rng.normal(0, 0.2, 6).astype(np.float32)
    w2 = rng.normal(0, 0.8, (3, 6)).astype(np.float32)
    b2 = np.array([0.3, 0.5, 0.2], np.float32)
    onnx_path = os.path.join(OUT, "mlp.onnx")
    write_onnx_mlp(onnx_path, w1, b1, w2, b2)
    s.network_path = onnx_path
    s.clamp_imported = True
    check(bpy.ops.charkit.import_network() == {'FINISHED'}, "import onnx")
    ef = se.features(ck, se.rotations, se.curves)
    check(ef.shape == (41, 13), f"engine features {ef.shape}")
    want = np.clip(mlp_numpy(ef, w1, b1, w2, b2), 0.0, 1.0)
    got = se.model.weights(ef)
    check(got.shape == (41, 3), f"onnx weights shape {got.shape}")
    close(got, want, 1e-5, "onnx weights = clip(MLP(features))")
    check(0 < float((want == 0).mean() + (want == 1).mean()) < 1, "the clamp was exercised")
    morph = np.stack([jobs.bridge.shape_key_deltas(mesh, [n], jobs.bridge.obj_to_arm(arm, mesh))[0]
                      for n in ("m0", "m1", "m2")])
    close(se.model.offsets(ef), np.einsum("nm,mvk->nvk", want, morph), 1e-5, "onnx offsets")
    bpy.ops.charkit.create_preview()
    scene.frame_set(9)
    check(bpy.ops.charkit.refresh_preview() == {'FINISHED'}, "refresh")
    scene.frame_set(1)
    log("import .onnx: weights = clip(MLP), offsets = weights x morph targets")

    # --- Neural with morph targets as the basis
    check(bpy.ops.charkit.train() == {'FINISHED'}, "train with morph targets")
    check(jobs.model_basis(se.info) == "morph-targets" and list(se.model.morph_names) == ["m0", "m1", "m2"],
          f"morph-target basis: {se.info.get('hyper')} {se.model.morph_names}")
    # saved and loaded, it maps onto the used morph targets (their count must match)
    s.model_path = os.path.join(OUT, "morph_model.json")
    check(bpy.ops.charkit.export_model() == {'FINISHED'}, "export morph-target model")
    s.morphs["m2"].use = False
    try:
        bpy.ops.charkit.import_model()
    except RuntimeError as e:
        check("morph targets" in str(e), f"morph-target count error: {e}")
    else:
        raise AssertionError("a morph-target count mismatch must fail")
    s.morphs["m2"].use = True
    check(bpy.ops.charkit.import_model() == {'FINISHED'}, "import morph-target model")
    log("train neural on morph targets: " + jobs.stats_summary(se.stats))
    for m in s.morphs:
        m.use = False

    # --- Action sampling: the keyed training poses come back
    s.pose_source = 'ACTION'
    s.action = arm.animation_data.action
    s.action_start, s.action_end, s.action_frames = 1, 41, 41
    s.bake_to_timeline = False
    before = scene_state(arm, mesh)
    check(bpy.ops.charkit.generate_training_data() == {'FINISHED'}, "action sampling")
    same_state(before, scene_state(arm, mesh), "after action sampling")
    check(len(se.rotations) == 42 and se.pose_names[1] == "frame_1", "rest + 41 frames")
    close(se.rotations[1:], rot_ref, 1e-5, "action frames = keyed poses")
    log("action sampling: frames reproduce the keyed poses")

    # --- Bake Poses To Timeline leaves the armature's own action as it was
    walk = bpy.data.actions.new("Walk")
    jobs.bridge.assign_action(arm, walk)
    arm.pose.bones["ctrl"].keyframe_insert("location", frame=3)
    walk_curves = [(fc.data_path, fc.array_index, len(fc.keyframe_points)) for fc in walk.fcurves]
    s.pose_source = 'RANDOM'
    check(bpy.ops.charkit.generate_random_poses() == {'FINISHED'}, "random poses beside an action")
    check(arm.animation_data.action == walk, "the armature keeps its action")
    check([(fc.data_path, fc.array_index, len(fc.keyframe_points)) for fc in walk.fcurves] == walk_curves,
          "its action is unchanged")
    poses_action = bpy.data.actions[arm.name + "_charkit_poses"]
    used = sum(1 for b in s.bones if b.use)
    check(len(poses_action.fcurves) == 4 * used
          and all(len(fc.keyframe_points) == s.random_count + 1 for fc in poses_action.fcurves),
          "the poses are in their own action, written anew")
    log("bake to timeline: the armature's own action is left alone")

    # --- Undo: preview and bake undone leave no orphaned data; the model stays in memory
    s.model_type = 'NEURAL'
    check(bpy.ops.charkit.train() == {'FINISHED'}, "train before undo")
    model = se.model
    for name in ("Tube_charkit_preview", "Tube_charkit_baked"):
        jobs.bridge.remove_object(name)
    meshes_before = sorted(m.name for m in bpy.data.meshes)
    orphans_before = sorted(m.name for m in bpy.data.meshes if m.users == 0)  # the startup Cube's
    keys_before = len(bpy.data.shape_keys)
    bpy.ops.ed.undo_push(message="before preview")
    # (undo=True: each call pushes its undo step, as from the UI)
    check(bpy.ops.charkit.create_preview('EXEC_DEFAULT', True) == {'FINISHED'}, "preview before undo")
    check(bpy.ops.charkit.bake_shape_keys('EXEC_DEFAULT', True) == {'FINISHED'}, "bake before undo")
    check("Tube_charkit_preview" in bpy.data.objects and "Tube_charkit_baked" in bpy.data.objects,
          "preview and bake made")
    for _ in range(2):
        check(bpy.ops.ed.undo() == {'FINISHED'}, "undo")
    scene = bpy.context.scene
    s = scene.charkit
    arm, mesh = bpy.data.objects["Rig"], bpy.data.objects["Tube"]
    check("Tube_charkit_preview" not in bpy.data.objects and "Tube_charkit_baked" not in bpy.data.objects,
          "undo removed the proxy and the bake")
    check(sorted(m.name for m in bpy.data.meshes) == meshes_before, "no mesh data left by undo")
    check(len(bpy.data.shape_keys) == keys_before, "no shape-key block left by undo")
    orphans = sorted(m.name for m in bpy.data.meshes if m.users == 0)
    check(orphans == orphans_before, f"no orphaned mesh after undo: {orphans} (before: {orphans_before})")
    for key in bpy.data.shape_keys:
        check(key.user is not None and key.users > 0, f"no orphaned shape keys after undo: {key.name}")
    se = state.get(scene)
    check(se.model is model, "the trained model survives undo")
    check(jobs.refresh_preview(scene, quiet=True) is False, "refresh without a proxy is quiet")
    check(bpy.ops.charkit.create_preview() == {'FINISHED'}, "preview again after undo")
    log("undo of preview and bake: no orphaned data; the model stays")

    # --- Several meshes in one setup: one model each, trained, previewed and baked together
    sleeve = mesh.copy()
    sleeve.data = mesh.data.copy()
    sleeve.name = "Sleeve"
    scene.collection.objects.link(sleeve)
    kb = sleeve.data.shape_keys.key_blocks
    co = base_coords_key(kb["corrective"])
    basis = base_coords_key(kb[0])
    kb["corrective"].data.foreach_set("co", (basis + 2.5 * (co - basis)).ravel())  # a bigger bulge
    it = s.more_meshes.add()
    it.object = sleeve
    s.pose_source, s.bake_to_timeline = 'RANDOM', False
    check(bpy.ops.charkit.generate_training_data() == {'FINISHED'}, "training data of two meshes")
    check(bpy.ops.charkit.train() == {'FINISHED'}, "train two meshes")
    se, se2 = state.get(scene, "Tube"), state.get(scene, "Sleeve")
    check(se2 is not se and se2.model is not None and se.model is not None, "one model per mesh")
    check(se2.model_objects == ("Rig", "Sleeve") and se.model_objects == ("Rig", "Tube"),
          "each model bound to its mesh")
    d1, d2 = se.neural_dataset.deltas(), se2.neural_dataset.deltas()
    check(float(np.abs(d2).max()) > 2.0 * float(np.abs(d1).max()), "the sleeve's own (bigger) targets")
    check(bpy.ops.charkit.create_preview() == {'FINISHED'}, "preview both")
    pose_i = 9
    scene.frame_set(1)
    arm.animation_data.action = bpy.data.actions[arm.name + "_charkit_poses"]
    scene.frame_set(1 + pose_i)
    cur = np.array([mesh.data.shape_keys.key_blocks["flex"].value], np.float32)
    for sess, ob in ((se, mesh), (se2, sleeve)):
        proxy = bpy.data.objects[ob.name + "_charkit_preview"]
        offs = sess.model.offsets(sess.features(ck, se.rotations[pose_i:pose_i + 1], cur[None]))[0]
        want = sess.model_rig.rig.skin(spec, se.rotations[pose_i], offsets=offs)
        close(evaluated_arm_positions(proxy, arm), want, 1e-4, f"{ob.name} proxy = its own model")
    scene.frame_set(1)
    check(bpy.ops.charkit.bake_shape_keys() == {'FINISHED'}, "bake both")
    check("Sleeve_charkit_baked" in bpy.data.objects and "Tube_charkit_baked" in bpy.data.objects,
          "both baked")
    s.model_path = os.path.join(OUT, "two", "pose_model.json")
    check(bpy.ops.charkit.export_model() == {'FINISHED'}, "export both")
    for n in ("pose_model.json", "pose_model.Sleeve.json", "pose_model.Sleeve.npz"):
        check(os.path.isfile(os.path.join(OUT, "two", n)), f"{n} written")
    sleeve_model = se2.model
    check(bpy.ops.charkit.import_model() == {'FINISHED'}, "import both")
    feats = se2.features(ck, se.rotations, se.curves)
    close(se2.model.offsets(feats), sleeve_model.offsets(feats), 1e-6, "the sleeve's file is its model")
    from charkit_deformer import ui
    shown = [(n, x.model is not None) for n, x in ui._sessions(bpy.context)]
    check(shown == [("Tube", True), ("Sleeve", True)], f"the panel shows both models: {shown}")
    log("two meshes: one model each, previewed, baked, exported and imported together")

    # --- The models are saved with the .blend file and come back when it is opened
    sleeve_feats = (np.random.default_rng(4).standard_normal((2, se2.model.feature_count)) * 0.3
                    ).astype(np.float32)
    sleeve_want = np.asarray(se2.model.offsets(sleeve_feats))
    model = se.model
    check(model is not None, "a model to save")
    feats = (np.random.default_rng(3).standard_normal((2, model.feature_count)) * 0.3).astype(np.float32)
    want = np.asarray(model.offsets(feats))
    kind, objects, bones = model.kind, se.model_objects, list(se.model_bone_names)
    saved = os.path.join(OUT, "saved_scene.blend")
    bpy.ops.wm.save_as_mainfile(filepath=saved)
    check("charkit_model" in bpy.context.scene, "the model is stored in the scene")
    bpy.ops.wm.open_mainfile(filepath=saved)
    scene = bpy.context.scene
    se = state.peek(scene)
    check(se is not None and se.model is not None, "the model is back after reopening")
    check(se.model.kind == kind and se.model_objects == objects and list(se.model_bone_names) == bones,
          "same kind, objects and input bones")
    close(np.asarray(se.model.offsets(feats)), want, 0.0, "the reopened model gives the same offsets")
    check(jobs.refresh_preview(scene, force=True, quiet=True) in (True, False), "preview refresh runs")
    se2 = state.peek(scene, "Sleeve")
    check(se2 is not None and se2.model is not None, "the second mesh's model is back too")
    close(np.asarray(se2.model.offsets(sleeve_feats)), sleeve_want, 0.0, "the reopened sleeve model")
    for key in bpy.data.shape_keys:
        check(key.users > 0 and key.user is not None, f"no orphaned shape-key block after reopening: {key.name}")
    log("the model is saved with the .blend and restored when it is opened")

    charkit_deformer.unregister()
    check(not any(getattr(h, "__module__", "") == "charkit_deformer"
                  for h in bpy.app.handlers.depsgraph_update_post + bpy.app.handlers.frame_change_post),
          "handlers removed")
    log("unregistered")


def base_coords_key(kb):
    co = np.empty(len(kb.data) * 3, np.float32)
    kb.data.foreach_get("co", co)
    return co.reshape(-1, 3)


def base_coords_from_bind(se, arm, mesh):
    m = np.array(arm.matrix_world.inverted() @ mesh.matrix_world)
    inv = np.linalg.inv(m)
    return se.model_rig.bind.astype(np.float64) @ inv[:3, :3].T + inv[:3, 3]


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        traceback.print_exc()
        print("CHARKIT_DEFORMER_TEST FAILED", flush=True)
        sys.stdout.flush()
        sys.exit(1)
    print(f"CHARKIT_DEFORMER_TEST OK ({time.perf_counter() - T0:.1f}s)", flush=True)

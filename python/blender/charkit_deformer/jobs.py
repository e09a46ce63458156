"""The add-on's work, as plain functions and generators.

Long operations (generate training data, train, export .nmn, bake) are
generators that yield (done, total) after each step and return a message
for the user. The modal operators drive them one step per timer tick and
close() them on ESC; execute() drives them to the end. Each one restores the
scene's pose, frame and shape-key values in a `finally`, so an error or a
cancellation leaves the scene as it was.
"""

import functools
import math
import os
import threading

import numpy as np

import bpy

from . import _ck, bridge, state
from .bridge import JobError

_running = 0


def busy():
    """True while a job runs: the preview handlers then stay quiet."""
    return _running > 0


def _job(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        global _running
        _running += 1
        try:
            return (yield from fn(*args, **kwargs))
        finally:
            _running -= 1
    return wrapper


def run_to_end(gen):
    """Drives a job generator to its end; returns its message."""
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def _threaded(fn):
    """Runs fn(progress) in a worker thread (ctypes releases the GIL during the C call)
    and yields (done, total) until it ends; returns its result. Closing the generator
    makes the progress callback return False, so the C call stops with Cancelled."""
    box = {"done": 0, "total": 1, "result": None, "error": None}
    stop = threading.Event()

    def progress(done, total, _loss=0.0):
        box["done"], box["total"] = int(done), max(int(total), 1)
        return not stop.is_set()

    def work():
        try:
            box["result"] = fn(progress)
        except BaseException as e:  # handed to the main thread
            box["error"] = e

    t = threading.Thread(target=work, name="charkit-job", daemon=True)
    t.start()
    try:
        while t.is_alive():
            t.join(0.05)
            yield box["done"], box["total"]
    finally:
        if t.is_alive():
            stop.set()
            t.join()
    if box["error"] is not None:
        raise box["error"]
    return box["result"]


def _settings(context):
    return context.scene.charkit


def _abspath(path, what):
    if not path:
        raise JobError(f"{what}: no file path given")
    if path.startswith("//") and not bpy.data.filepath:
        raise JobError(f"{what}: '{path}' is relative to the .blend file, which is not saved "
                       "yet: save the file first, or give an absolute path")
    return os.path.abspath(bpy.path.abspath(path))


def _make_dirs(path):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)


# ---------------------------------------------------------------------------
# Several meshes: one model each, trained, previewed and baked together

def mesh_path(path, mesh, meshes):
    """The file of one mesh's model: the path itself for the setup's first mesh, and
    for each other one the mesh's name before the extension (pose_model.json ->
    pose_model.Face.json), so that one path serves the whole setup."""
    if mesh == meshes[0]:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}.{bpy.path.clean_name(mesh.name)}{ext}"


def _combine(results):
    """One report of per-mesh results [(mesh, message or (message, warnings))]: the
    message alone for one mesh, each prefixed with its mesh's name for several."""
    msgs, warnings = [], []
    many = len(results) > 1
    for mesh, r in results:
        msg, warns = (r if isinstance(r, tuple) else (r, []))
        tag = f"'{mesh.name}': " if many else ""
        if msg:
            msgs.append(tag + msg)
        warnings.extend(tag + w for w in warns if w)
    text = "; ".join(msgs)
    return (text, warnings) if warnings else text


def _each_mesh(one):
    """A plain job run once per setup mesh, its reports combined."""
    @functools.wraps(one)
    def run(context, *args, **kwargs):
        s = _settings(context)
        return _combine([(m, one(context, m, *args, **kwargs)) for m in bridge.setup_meshes(s)])
    return run


def _each_mesh_job(one):
    """A job generator run once per setup mesh, in turn, its reports combined."""
    @_job
    @functools.wraps(one)
    def run(context, *args, **kwargs):
        s = _settings(context)
        meshes = bridge.setup_meshes(s)
        results = []
        for i, m in enumerate(meshes):
            r = yield from one(context, m, first=i == 0)
            results.append((m, r))
        return _combine(results)
    return run


# ---------------------------------------------------------------------------
# Inputs

def load_bones(context):
    """Fills Inputs > Bones with the armature's bones (keeping the settings of bones
    already listed) and syncs the shape-key lists."""
    s = _settings(context)
    arm = s.armature
    if arm is None:
        raise JobError("Pick an armature in Setup")
    fields = ("use", "axis_x", "axis_y", "axis_z", "min_deg", "max_deg", "per_axis", "axis_min",
              "axis_max")
    old = {b.name: tuple(tuple(v) if f.startswith("axis_m") else v
                         for f, v in ((f, getattr(b, f)) for f in fields)) for b in s.bones}
    bones = bridge.joint_order(arm)
    try:
        meshes = bridge.setup_meshes(s)
    except JobError:
        meshes = []
    proposed = set().union(*(propose_bones(arm, m, bones) for m in meshes)) if meshes else None
    s.bones.clear()
    for bone in bones:
        item = s.bones.add()
        item.name = bone.name
        if bone.name in old:
            for f, v in zip(fields, old[bone.name]):
                setattr(item, f, v)
        else:
            item.use = bone.use_deform if proposed is None else bone.name in proposed
    s.bones_index = min(s.bones_index, max(len(s.bones) - 1, 0))
    n_keys = load_shape_keys(context)
    msg = f"{len(s.bones)} bones, {n_keys} shape keys"
    if proposed is not None:
        new = [b.name for b in bones if b.name not in old]
        ticked = [n for n in new if n in proposed]
        msg += (f"; {len(ticked)} of {len(new)} new bones ticked: those whose weights blend the "
                f"mesh ({', '.join(ticked[:6])}{', ...' if len(ticked) > 6 else ''})")
    return msg


#: A bone is proposed when at least this share of the mesh's vertices (and at
#: least _BLEND_MIN_VERTICES) lie in its blend zone.
_BLEND_MIN_SHARE = 0.005
_BLEND_MIN_VERTICES = 4
#: A vertex is in a bone's blend zone when the bone and its descendants hold
#: more than this and less than 1 minus this of its weight.
_BLEND_LOW = 0.1


def propose_bones(arm, mesh, bones):
    """The deform bones whose rotation bends the mesh: turning a bone moves its
    own and its descendants' vertices rigidly, so skinning errs only where those
    vertices blend with the rest of the mesh. A bone is proposed when enough
    vertices have a summed weight of the bone and its descendants strictly
    between 0.1 and 0.9 (its blend zone). The root (weight 1 everywhere),
    bones without weights on this mesh and bones whose weights never blend
    are left unticked."""
    deform = [b for b in bones if b.use_deform]
    index = {b.name: i for i, b in enumerate(deform)}
    joints, weights = bridge.skin_weights(mesh, index)
    v = len(joints)
    if v == 0:
        return set()
    need = max(_BLEND_MIN_VERTICES, int(np.ceil(_BLEND_MIN_SHARE * v)))
    out = set()
    for b in deform:
        subtree = [index[d.name] for d in [b, *b.children_recursive] if d.name in index]
        w = np.where(np.isin(joints, subtree), weights, 0.0).sum(axis=1)
        if int(np.count_nonzero((w > _BLEND_LOW) & (w < 1.0 - _BLEND_LOW))) >= need:
            out.add(b.name)
    return out


def load_shape_keys(context):
    s = _settings(context)
    mesh = s.mesh
    names = []
    if mesh is not None:
        blocks = bridge.shape_key_blocks(mesh)
        if blocks is not None:
            names = [kb.name for kb in blocks][1:]  # the reference key is no input
    for coll, fields in ((s.curves, ("use", "min", "max")), (s.morphs, ("use",))):
        old = {it.name: tuple(getattr(it, f) for f in fields) for it in coll}
        coll.clear()
        for n in names:
            it = coll.add()
            it.name = n
            if n in old:
                for f, v in zip(fields, old[n]):
                    setattr(it, f, v)
    s.curves_index = min(s.curves_index, max(len(s.curves) - 1, 0))
    s.morphs_index = min(s.morphs_index, max(len(s.morphs) - 1, 0))
    return len(names)


def _spec(ck, bones, curves):
    b, c = bridge.spec_dict(bones, curves)
    return ck.InputSpec(b, c)


# ---------------------------------------------------------------------------
# Training poses

POSES_ACTION_SUFFIX = "_charkit_poses"


def key_poses(scene, arm, bone_names, rotations, start):
    """Keys rotations[i] (x y z w) on the bones' rotation_quaternion at frame start + i in
    an action of its own, '<armature>_charkit_poses' (written anew each time, kept with a
    fake user). The armature's own action is never written to: the poses' action is
    assigned only to an armature that has no action (or has it already), which then shows
    the poses on the timeline, its input bones in QUATERNION mode, at the start frame.
    Returns a phrase for the report."""
    name = arm.name + POSES_ACTION_SUFFIX
    act = bpy.data.actions.get(name) or bpy.data.actions.new(name)
    act.use_fake_user = True
    for fc in list(act.fcurves):
        act.fcurves.remove(fc)
    count = len(rotations)
    frames = np.arange(start, start + count, dtype=np.float32)
    rot = np.asarray(rotations, np.float64).reshape(count, len(bone_names), 4)
    for b, n in enumerate(bone_names):
        path = f'pose.bones["{bpy.utils.escape_identifier(n)}"].rotation_quaternion'
        # Blender's quaternions are (w, x, y, z); charkit's (x, y, z, w).
        for k, c in enumerate((3, 0, 1, 2)):
            fc = act.fcurves.new(path, index=k, action_group=n)
            fc.keyframe_points.add(count)
            co = np.empty(2 * count, np.float32)
            co[0::2] = frames
            co[1::2] = rot[:, b, c]
            fc.keyframe_points.foreach_set("co", co)
            fc.update()
    last = start + count - 1
    ad = arm.animation_data
    current = ad.action if ad is not None else None
    if current is not None and current != act:
        return (f"keyed in action '{act.name}', frames {start}-{last} (the armature keeps its "
                f"action '{current.name}'; assign the new one to see the poses)")
    bridge.assign_action(arm, act)
    for n in bone_names:
        arm.pose.bones[n].rotation_mode = 'QUATERNION'
    scene.frame_set(start)
    return f"keyed in action '{act.name}' at frames {start}-{last}"


def generate_random_poses(context):
    """The rest pose then N seeded random poses keyed on the timeline (no mesh evaluation)."""
    ck = _ck.get()
    s = _settings(context)
    arm, mesh = bridge.require_objects(s)
    bones, curves, _ = bridge.check_inputs(s, arm, mesh)
    spec = _spec(ck, bones, curves)
    rotations, _euler, _curves = ck.sample_poses(spec, s.random_count, s.random_seed)
    keyed = key_poses(context.scene, arm, [b.name for b in bones], rotations, s.timeline_start)
    return f"The rest pose and {s.random_count} random poses on {len(bones)} bones: {keyed}"


def _unique(names):
    seen, out = set(), []
    for n in names:
        m, k = n, 2
        while m in seen:
            m, k = f"{n}_{k}", k + 1
        seen.add(m)
        out.append(m)
    return out


def _generate_one(context, mesh, first=True):
    ck = _ck.get()
    scene = context.scene
    s = scene.charkit
    arm, mesh = bridge.require_objects(s, mesh)
    bones, curves, _ = bridge.check_inputs(s, arm, mesh)
    bone_names = [b.name for b in bones]
    curve_names = [c.name for c in curves]
    spec = _spec(ck, bones, curves)
    snapshot = bridge.SceneState(scene, arm, mesh)
    try:
        if s.pose_source == 'RANDOM':
            rotations, _euler, curve_values = ck.sample_poses(spec, s.random_count, s.random_seed)
            names = ["rest"] + [f"pose_{i}" for i in range(1, len(rotations))]
            frames = []
        else:
            if s.action is None:
                raise JobError("Action sampling: pick an action")
            frames = bridge.action_frames(s.action_start, s.action_end, s.action_frames)
            bridge.assign_action(arm, s.action)
            rotations = np.zeros((len(frames) + 1, len(bones), 4), np.float64)
            rotations[0, :, 3] = 1.0
            total = 2 * len(frames) + 1
            for k, f in enumerate(frames):
                whole = math.floor(f)
                scene.frame_set(int(whole), subframe=float(f - whole))
                rotations[k + 1] = bridge.current_rotations(arm, bone_names)
                yield k + 1, total
            curve_values = np.zeros((len(frames) + 1, len(curves)), np.float64)
            names = _unique(["rest"] + [bridge.frame_name(f) for f in frames])
        # (float64 or float32, as charkit gives them: kept as they are)
        rotations = np.ascontiguousarray(rotations)
        curve_values = np.ascontiguousarray(curve_values).reshape(len(rotations), len(curves))
        n = len(rotations)
        offset = len(frames)
        total = offset + n + 1
        to_arm = bridge.obj_to_arm(arm, mesh)
        bridge.prepare_pose_run(arm, mesh, bone_names, curves)
        positions = np.empty((n, len(mesh.data.vertices), 3), np.float32)
        for i in range(n):
            bridge.set_input_pose(arm, mesh, bone_names, rotations[i], curve_names, curve_values[i])
            positions[i] = bridge.evaluate_positions(context, mesh, to_arm)
            yield offset + i + 1, total
        rig_data = bridge.RigData(ck, arm, mesh, positions[0])
        cv = curve_values if curves else None
        # Neural models train in the engine's input layout, so the network
        # previewed and baked is the one Export .nmn writes.
        neural = ck.Dataset.from_positions(rig_data.rig, spec, rotations, positions, cv,
                                           layout="engine")
        features = ck.pose_features(spec, rotations, cv)
        # Linear: the same bind-space correction on axis-angle features (zero at
        # rest), and the whole deformation from the rest pose (Linear (Rest))
        corrective = ck.Dataset(spec, features, neural.deltas(), mesh_name=mesh.name)
        linear = ck.Dataset(spec, features, positions - positions[0], mesh_name=mesh.name)
        yield total, total
    finally:
        snapshot.restore()
    keyed = ""
    own_action = s.pose_source == 'ACTION' and arm.animation_data is not None \
        and arm.animation_data.action == s.action
    if not first:
        pass  # the same poses: keyed once, with the first mesh
    elif s.bake_to_timeline and own_action:
        keyed = "; not keyed on the timeline (the poses come from the armature's own action)"
    elif s.bake_to_timeline:
        keyed = "; " + key_poses(scene, arm, bone_names, rotations, s.timeline_start)
    se = state.get(scene, mesh.name)
    se.data_objects = (arm.name, mesh.name)
    se.data_bone_names, se.data_curve_names = bone_names, curve_names
    se.spec = spec
    se.pose_names = names
    se.rotations, se.curves, se.positions = rotations, curve_values, positions
    se.data_rig = rig_data
    se.linear_dataset, se.neural_dataset = linear, neural
    se.corrective_dataset = corrective
    se.lbs_error = getattr(neural, "lbs_error", None)
    msg = f"Training data: {n} poses (rest + {n - 1}), {positions.shape[1]} vertices"
    if se.lbs_error:
        msg += f"; plain LBS error mean {se.lbs_error[0]:.4g}, max {se.lbs_error[1]:.4g}"
    return msg + keyed


generate_training_data = _each_mesh_job(_generate_one)


# ---------------------------------------------------------------------------
# Training

_CLAMP = {'NONE': "none", 'UNIT': "unit", 'TRAINING_RANGE': "training-range"}


def _check_data(se, s, mesh):
    if se.linear_dataset is None:
        raise JobError("No training data: Generate Training Data first")
    arm, mesh = bridge.require_objects(s, mesh)
    if se.data_objects != (arm.name, mesh.name):
        raise JobError("The training data is of other objects: Generate Training Data again")
    if len(mesh.data.vertices) != se.positions.shape[1]:
        raise JobError("The mesh's vertex count changed: Generate Training Data again")
    return arm, mesh


def _train_one(context, mesh, first=True):
    ck = _ck.get()
    scene = context.scene
    s = scene.charkit
    se = state.get(scene, mesh.name)
    arm, mesh = _check_data(se, s, mesh)
    if s.model_type in ('LINEAR', 'LINEAR_REST'):
        rest = s.model_type == 'LINEAR_REST'
        dataset = se.linear_dataset if rest else se.corrective_dataset
        options = {"ridge_lambda": float(s.ridge_lambda),
                   "targets": "rest-deformation" if rest else "bind-correction"}
        model = yield from _threaded(
            lambda progress: ck.PoseModel.train(dataset, kind="linear", progress=progress, **options))
    else:
        dataset = se.neural_dataset
        options = {"hidden": bridge.parse_hidden(s.hidden), "learning_rate": float(s.learning_rate),
                   "weight_decay": float(s.weight_decay),
                   "iterations": int(s.iterations), "batch_size": int(s.batch_size),
                   "seed": int(s.train_seed), "standardize": bool(s.standardize),
                   "validation": float(s.validation), "patience": int(s.patience)}
        morphs = bridge.used_morphs(s)
        names, deltas = None, None
        if morphs:
            _, _, morphs = bridge.check_inputs(s, arm, mesh, need_bones=False)
            names = [m.name for m in morphs]
            deltas = bridge.shape_key_deltas(mesh, names, bridge.obj_to_arm(arm, mesh))
            options["basis"] = "morph-targets"
            options["clamp"] = _CLAMP[s.clamp]
        else:
            # Learned-basis coefficients are not weights in [0, 1] and an .nmn
            # records no clamp: unclamped, as the exported file runs.
            options["basis_size"] = int(s.nmn_morphs)
            options["clamp"] = "none"
        model = yield from _threaded(
            lambda progress: ck.PoseModel.train(dataset, kind="neural", progress=progress,
                                            morph_names=names, morph_deltas=deltas, **options))
    se.set_model(model, "trained", "", se.data_objects, se.data_bone_names, se.data_curve_names,
                 se.data_rig)
    se.plain_skinning = se.lbs_error
    _refresh_one(scene, mesh, force=True, quiet=True)
    rest = model_targets(model) == "rest-deformation"
    msg = f"Trained a {model.kind} model: " + stats_summary(se.stats, se.plain_skinning if rest else None)
    worse = worse_than_no_correction(se)
    return (msg, [worse]) if worse else msg


train = _each_mesh_job(_train_one)


def _stat(stats, *keys):
    """stats[key] under its snake_case or camelCase name (pose_model.json uses the
    former, the C API's model info the latter)."""
    for k in keys:
        if k in stats:
            return stats[k]
    return None


_ERROR_ROWS = ((("train",), "Train"), (("holdout",), "Held-out"),
               (("uncorrected_train", "uncorrectedTrain"), "No correction"),
               (("uncorrected_holdout", "uncorrectedHoldout"), "No corr. (held-out)"))


def stats_summary(stats, plain_skinning=None):
    """One line of errors. plain_skinning: (mean, max) over the training poses,
    said in place of the uncorrected held-out error (a rest deformation's)."""
    if not stats:
        return "no statistics"
    parts = []
    rows = [(_ERROR_ROWS[0][0], "train"), (_ERROR_ROWS[1][0], "held-out")]
    if not plain_skinning:
        rows.append((_ERROR_ROWS[3][0], "uncorrected held-out"))
    for keys, label in rows:
        st = _stat(stats, *keys)
        if isinstance(st, dict) and st.get("samples"):
            parts.append(f"{label} mean {st.get('mean', 0):.4g} max {st.get('max', 0):.4g}")
    if plain_skinning:
        parts.append(f"plain skinning mean {plain_skinning[0]:.4g} max {plain_skinning[1]:.4g}")
    return ", ".join(parts) if parts else "no held-out samples"


def no_correction(se):
    """(label, {"mean", "max"}) of what the model is measured against: plain
    skinning. A bind-space correction's "uncorrected held-out" error is that
    (the correction's own size); a rest deformation's is the whole deformation,
    so plain skinning's error over the training poses stands in for it."""
    stats = se.stats or {}
    if se.model is not None and model_targets(se.model) == "rest-deformation":
        if se.plain_skinning:
            return "Plain skinning", {"mean": se.plain_skinning[0], "max": se.plain_skinning[1]}
        return None, None
    st = _stat(stats, "uncorrected_holdout", "uncorrectedHoldout")
    if isinstance(st, dict) and st.get("samples"):
        return "No corr. (held-out)", st
    return None, None


def worse_than_no_correction(se):
    """A warning when the model's held-out error is above no correction's."""
    held = _stat(se.stats or {}, "holdout")
    _label, ref = no_correction(se)
    if not (isinstance(held, dict) and held.get("samples") and ref):
        return ""
    if held.get("mean", 0) <= ref.get("mean", 0):
        return ""
    if model_targets(se.model) == "rest-deformation":
        hint = "try Linear rather than Linear (Rest), narrower ranges or fewer bones"
    elif se.model.kind == "linear":
        hint = "try more poses, narrower ranges or fewer bones"
    else:
        hint = "try more poses, narrower ranges, fewer bones, fewer iterations or a smaller network"
    return (f"Held-out error {held['mean']:.3g} is above plain skinning's {ref['mean']:.3g}: on poses "
            f"it did not see, the model does worse than no correction ({hint})")


def early_stopping(model):
    """What early stopping chose, in words ("" for a model trained without it)."""
    hyper = model.hyper if model is not None else None
    if not isinstance(hyper, dict) or "stopped_after" not in hyper:
        return ""
    return (f"{hyper.get('iterations')} of {hyper.get('max_iterations')} "
            f"(early stop after {hyper.get('stopped_after')})")


def stats_lines(se):
    """(label, text) rows for the panel: errors, the per-bone held-out breakdown
    (under the Blender bones that feed each input), time and loss."""
    stats = se.stats or {}
    rows = []
    if stats:
        rows.append(("Error", "mean / max"))
    rest = se.model is not None and model_targets(se.model) == "rest-deformation"
    for keys, label in _ERROR_ROWS[:2] if rest else _ERROR_ROWS:
        st = _stat(stats, *keys)
        if isinstance(st, dict):
            rows.append((label, f"{st.get('mean', 0):.3g} / {st.get('max', 0):.3g}"))
    if rest:
        label, ref = no_correction(se)
        if ref:
            rows.append((label, f"{ref['mean']:.3g} / {ref['max']:.3g}"))
    if worse_than_no_correction(se):
        rows.append(("Warning", "held-out worse than no correction"))
    per_bone = _stat(stats, "holdout_per_bone", "holdoutPerBone")
    names = se.model_bone_names
    if isinstance(per_bone, dict):
        spec_names = se.model.spec.bone_names if se.model is not None else list(per_bone)
        per_bone = [per_bone.get(n, 0.0) for n in spec_names]
    if per_bone:
        rows.append(("Held-out by bone", ""))
        for n, v in zip(names, per_bone):
            rows.append(("  " + n, f"{float(v):.3g}"))
    counts = [(_stat(stats, *k) or {}).get("samples") for k, _ in _ERROR_ROWS[:2]]
    if all(isinstance(c, int) for c in counts):
        rows.append(("Poses", f"{counts[0]} train, {counts[1]} held out"))
    steps = early_stopping(se.model)
    if steps:
        rows.append(("Steps", steps))
    seconds = _stat(stats, "seconds")
    if seconds is not None:
        rows.append(("Time", f"{float(seconds):.3g} s"))
    loss = _stat(stats, "final_loss", "finalLoss")
    if loss is not None:
        rows.append(("Final loss", f"{float(loss):.4g}"))
    return rows


# ---------------------------------------------------------------------------
# Model files and engine networks

def _require_model(se):
    if se.model is None:
        raise JobError("No pose model: Train, Import Pose Model or Import Network first")
    return se.model


@_each_mesh
def export_model(context, mesh):
    s = _settings(context)
    se = state.get(context.scene, mesh.name)
    model = _require_model(se)
    path = _abspath(s.model_path, "Pose Model File")
    if not path.lower().endswith(".json"):
        path += ".json"
    path = mesh_path(path, mesh, bridge.setup_meshes(s))
    _make_dirs(path)
    model.save(path)
    return f"Saved {os.path.basename(path)} and {os.path.basename(path[:-5])}.npz"


def map_inputs(s, bone_names, curve_names, morph_names=None):
    """The mapping, as in the Blender pose-deformer description, of a file's inputs onto
    the current lists: bones <- the first N used bones, curves <- the first N used curve
    inputs, morph targets <- the used morph targets (same count). Returns (bones, curves,
    warnings)."""
    warnings = []
    ub, uc = bridge.used_bones(s), bridge.used_curves(s)
    if len(ub) < len(bone_names):
        raise JobError(f"The model has {len(bone_names)} input bones; Inputs has {len(ub)} in use")
    if len(uc) < len(curve_names):
        raise JobError(f"The model has {len(curve_names)} curve inputs; Inputs has {len(uc)} in use")
    bones, curves = ub[:len(bone_names)], uc[:len(curve_names)]
    for kind, items, names in (("bone", bones, bone_names), ("curve", curves, curve_names)):
        for i, (it, n) in enumerate(zip(items, names)):
            if it.name != n:
                warnings.append(f"{kind} input {i} '{n}' of the file is mapped to '{it.name}'")
    if morph_names is not None:
        um = bridge.used_morphs(s)
        if len(um) != len(morph_names):
            raise JobError(f"The model weighs {len(morph_names)} morph targets; "
                           f"Inputs has {len(um)} in use (the counts must be equal)")
        for i, (it, n) in enumerate(zip(um, morph_names)):
            if it.name != n:
                warnings.append(f"morph target {i} '{n}' of the file is mapped to '{it.name}'")
    return bones, curves, warnings


def model_basis(info):
    """"learned" | "morph-targets" of a neural model's info (kept in its "hyper")."""
    return info.get("basis") or (info.get("hyper") or {}).get("basis")


@_each_mesh
def import_model(context, mesh):
    """Loads a charkit model (NAME.json + NAME.npz; NAME.<mesh>.json for the setup's
    other meshes). Returns (message, warnings)."""
    ck = _ck.get()
    scene = context.scene
    s = scene.charkit
    se = state.get(scene, mesh.name)
    arm, mesh = bridge.require_objects(s, mesh)
    path = mesh_path(_abspath(s.model_path, "Pose Model File"), mesh, bridge.setup_meshes(s))
    if not os.path.isfile(path):
        raise JobError(f"No pose model file for '{mesh.name}' at {path}")
    model = ck.PoseModel.load(path)
    info = model.info()
    morph_names = None
    if model.kind == "neural" and model_basis(info) == "morph-targets":
        morph_names = list(model.morph_names)
    bones, curves, warnings = map_inputs(s, model.spec.bone_names, model.spec.curve_names, morph_names)
    if model.vertex_count != len(mesh.data.vertices):
        raise JobError(f"The model is for {model.vertex_count} vertices; '{mesh.name}' has "
                       f"{len(mesh.data.vertices)}")
    for b in bones:
        if b.name not in arm.data.bones:
            raise JobError(f"Input bone '{b.name}' is not a bone of '{arm.name}'")
    bone_names, curve_names = [b.name for b in bones], [c.name for c in curves]
    bind = bridge.evaluate_rest(context, s, arm, mesh, bone_names, curves)
    rig_data = bridge.RigData(ck, arm, mesh, bind)
    se.set_model(model, "file", path, (arm.name, mesh.name), bone_names, curve_names, rig_data)
    _refresh_one(scene, mesh, force=True, quiet=True)
    return f"Loaded a {model.kind} model from {os.path.basename(path)}", warnings


class LocalModeNetwork(JobError):
    """A local-mode .nmn with curves (6 inputs per curve, a pose model gives 1): not
    imported, reported as a warning. Local mode without curves imports; its group
    model, if any, does not run (the import's IMPORT_GROUP_NOT_RUN warning)."""


@_each_mesh
def import_network(context, mesh):
    """An engine network (.nmn global mode or .onnx) as the current model; its outputs weigh
    the used morph targets (or the NAME.morphs.npz beside a .nmn). The setup's other
    meshes read NAME.<mesh>.nmn (as Export .nmn writes them). Returns (message, warnings)."""
    ck = _ck.get()
    scene = context.scene
    s = scene.charkit
    se = state.get(scene, mesh.name)
    arm, mesh = bridge.require_objects(s, mesh)
    bones, curves, morphs = bridge.check_inputs(s, arm, mesh)
    path = mesh_path(_abspath(s.network_path, "Network"), mesh, bridge.setup_meshes(s))
    if not os.path.isfile(path):
        raise JobError(f"No network file for '{mesh.name}' at {path}")
    spec = _spec(ck, bones, curves)
    bone_names, curve_names = [b.name for b in bones], [c.name for c in curves]
    bind = bridge.evaluate_rest(context, s, arm, mesh, bone_names, curves)
    rig_data = bridge.RigData(ck, arm, mesh, bind)
    if morphs:
        names = [m.name for m in morphs]
        deltas = bridge.shape_key_deltas(mesh, names, bridge.obj_to_arm(arm, mesh))
        for n, d in zip(names, deltas):
            rig_data.rig.add_morph(n, d)
    # auto: morph-target weights to [0, 1]; learned-basis coefficients
    # (charkit's own .nmn, by its sidecar) never.
    clamp = "auto" if s.clamp_imported else "none"
    try:
        model, warnings = ck.import_network(path, rig_data.rig, spec, clamp)
    except Exception as e:
        if _ck.is_charkit_error(e) and getattr(e, "code", "") == "IMPORT_LOCAL_MODE":
            raise LocalModeNetwork(f"{os.path.basename(path)} is a local-mode network with curves, "
                                   "which a pose model cannot feed, so it was not imported ({})"
                                   .format(e)) from None
        raise
    se.set_model(model, "network", path, (arm.name, mesh.name), bone_names, curve_names, rig_data)
    _refresh_one(scene, mesh, force=True, quiet=True)
    return (f"Imported {os.path.basename(path)}: {model.feature_count} inputs, "
            f"{len(model.morph_names)} morph targets"), list(warnings)


def nmn_as_is(model):
    """Why a model cannot be written to an .nmn as it is ("" when it can), as the
    library decides it: the file holds a network in the engine layout driving a
    learned basis, unclamped."""
    if model is None:
        return "there is no model"
    return model.nmn_refusal()


def _export_nmn_one(context, mesh, first=True):
    ck = _ck.get()
    scene = context.scene
    s = scene.charkit
    se = state.get(scene, mesh.name)
    model = _require_model(se)
    path = _abspath(s.nmn_path, "NMN File")
    if not path.lower().endswith(".nmn"):
        path += ".nmn"
    path = mesh_path(path, mesh, bridge.setup_meshes(s))
    stem = path[:-4]
    files = (f"{os.path.basename(path)}, {os.path.basename(stem)}.bmd_ue.json and "
             f"{os.path.basename(stem)}.morphs.npz")
    why = nmn_as_is(model)
    if not why:
        # The previewed network itself, checked on the training poses when they are at hand.
        data = se.neural_dataset
        if data is None or data.layout != "engine" or data.feature_count != model.feature_count \
                or se.data_objects != se.model_objects:
            data = None
        _make_dirs(path)
        diff = model.export_nmn(path, dataset=data)
        se.exported_model = model
        return f"Wrote {files}: the previewed network as it is (re-read difference {diff:.2g})"
    if se.neural_dataset is None or se.data_rig is None:
        raise JobError(f"This model cannot be written as it is ({why}) and retraining needs the "
                       "training data: Generate Training Data first")
    if se.data_objects != se.model_objects:
        raise JobError("The training data is of other objects than the model: Generate Training "
                       "Data again")
    _make_dirs(path)
    rig, dataset = se.data_rig.rig, se.neural_dataset
    options = {"hidden": bridge.parse_hidden(s.hidden), "morphs": int(s.nmn_morphs),
               "iterations": int(s.iterations), "batch_size": int(s.batch_size),
               "learning_rate": float(s.learning_rate), "seed": int(s.train_seed)}
    exported = yield from _threaded(
        lambda progress: ck.export_nmn(rig, dataset, path, progress=progress, **options))
    se.exported_model = exported
    # What the retrained network does against what was previewed, on the same poses.
    own = {"linear": se.corrective_dataset, "neural": se.neural_dataset}[model.kind]
    if model_targets(model) == "rest-deformation":
        own = se.linear_dataset
    before = model.error(own)["mean"] if own is not None and model.layout == own.layout else None
    after = exported.error(dataset)["mean"]
    measured = (f"previewed model's mean error {before:.3g}, exported network's {after:.3g}"
                if before is not None else f"exported network's mean error {after:.3g}")
    return (f"Wrote {files}, retrained in the engine layout because this model cannot be written "
            f"as it is ({why}); on the {dataset.sample_count} training poses: {measured}")


export_nmn = _each_mesh_job(_export_nmn_one)


# ---------------------------------------------------------------------------
# Preview and bake

def _model_objects(s, se, mesh):
    model = _require_model(se)
    arm, mesh = bridge.require_objects(s, mesh)
    if se.model_objects != (arm.name, mesh.name):
        raise JobError("The model was set up for other objects: import or train it again")
    if model.vertex_count != len(mesh.data.vertices):
        raise JobError(f"The model is for {model.vertex_count} vertices; '{mesh.name}' has "
                       f"{len(mesh.data.vertices)}")
    return model, arm, mesh


def model_targets(model):
    """What the model's offsets are: "bind-correction" (added to the bind mesh
    before skinning) or "rest-deformation" (added to the rest mesh, no skinning).
    Recorded in the model's hyper; a linear model without it is from an earlier
    add-on, whose linear models were rest deformations."""
    targets = model.targets
    if targets in ("bind-correction", "rest-deformation"):
        return targets
    return "rest-deformation" if model.kind == "linear" else "bind-correction"


def _uses_armature(model):
    """Corrections ride on the skinned pose; rest deformations replace it."""
    return model_targets(model) == "bind-correction"


def preview_name(mesh):
    return mesh.name + bridge.PREVIEW_SUFFIX


@_each_mesh
def create_preview(context, mesh):
    scene = context.scene
    s = scene.charkit
    se = state.get(scene, mesh.name)
    model, arm, mesh = _model_objects(s, se, mesh)
    to_arm = bridge.obj_to_arm(arm, mesh)
    coords = bridge.transform_points(np.linalg.inv(to_arm), se.model_rig.bind)
    ob = bridge.make_mesh_copy(context, mesh, preview_name(mesh), coords, se.model_rig,
                               arm if _uses_armature(model) else None)
    ob["charkit_preview"] = model_targets(model)
    se.preview_key = None
    _refresh_one(scene, mesh, force=True)
    return f"Preview proxy '{ob.name}' ({'on the skinned pose' if _uses_armature(model) else 'on the rest pose'})"


def refresh_preview(scene, force=False, quiet=False):
    """Writes base + its model's offsets for the current pose into each setup mesh's
    proxy. Returns True when it changed a proxy. quiet: no error when there is nothing
    to refresh."""
    s = scene.charkit
    try:
        meshes = bridge.setup_meshes(s)
    except JobError:
        if quiet:
            return False
        raise
    changed = False
    for mesh in meshes:
        changed = _refresh_one(scene, mesh, force, quiet) or changed
    return changed


def _refresh_one(scene, mesh, force=False, quiet=False):
    s = scene.charkit
    se = state.peek(scene, mesh.name)
    try:
        if se is None or se.model is None:
            raise JobError(f"No pose model for '{mesh.name}': Train, Import Pose Model or Import "
                           "Network first")
        model, arm, mesh = _model_objects(s, se, mesh)
        ob = bpy.data.objects.get(preview_name(mesh))
        if ob is None or ob.type != 'MESH':
            raise JobError("No preview proxy: Create Preview Proxy first")
    except JobError:
        if quiet:
            return False
        raise
    ck = _ck.get()
    if ob.get("charkit_preview") != model_targets(model) or len(ob.data.vertices) != model.vertex_count:
        if quiet:
            return False
        raise JobError("The preview proxy is of another model kind: Create Preview Proxy again")
    rot = bridge.current_rotations(arm, se.model_bone_names)
    cur = bridge.current_curves(mesh, se.model_curve_names)
    to_arm = bridge.obj_to_arm(arm, mesh)
    key = (rot.tobytes(), cur.tobytes(), to_arm.tobytes(), id(model))
    if not force and key == se.preview_key:
        return False
    features = se.features(ck, rot[None], cur[None])
    offsets = np.asarray(model.offsets(features), np.float32).reshape(-1, 3)
    coords = bridge.transform_points(np.linalg.inv(to_arm), se.model_rig.bind + offsets)
    ob.data.vertices.foreach_set("co", coords.ravel())
    ob.data.update()
    se.preview_key = key
    return True


def bake_poses(ck, s, se):
    """The poses to bake: the training poses when they are the model's inputs, else the
    rest pose and Training's random poses on the model's input bones."""
    if (se.rotations is not None and se.data_bone_names == se.model_bone_names
            and se.data_curve_names == se.model_curve_names):
        return list(se.pose_names), se.rotations, se.curves
    by_name = {b.name: b for b in s.bones}
    cby_name = {c.name: c for c in s.curves}
    spec = _spec(ck, [by_name[n] for n in se.model_bone_names], [cby_name[n] for n in se.model_curve_names])
    rotations, _e, curves = ck.sample_poses(spec, s.random_count, s.random_seed)
    names = ["rest"] + [f"pose_{i}" for i in range(1, len(rotations))]
    return names, rotations, np.asarray(curves).reshape(len(rotations), -1)


def _bake_one(context, mesh, first=True):
    ck = _ck.get()
    scene = context.scene
    s = scene.charkit
    se = state.get(scene, mesh.name)
    model, arm, mesh = _model_objects(s, se, mesh)
    lib_path = _abspath(s.pose_library_path, "Pose Library") if s.pose_library_path else None
    if lib_path:
        lib_path = mesh_path(lib_path, mesh, bridge.setup_meshes(s))
    names, rotations, curves = bake_poses(ck, s, se)
    n = len(names)
    total = n + 2
    features = se.features(ck, rotations, curves)
    offsets = np.asarray(model.offsets(features), np.float32).reshape(n, -1, 3)
    yield 1, total
    to_arm = bridge.obj_to_arm(arm, mesh)
    from_arm = np.linalg.inv(to_arm)
    base = bridge.transform_points(from_arm, se.model_rig.bind)
    use_arm = _uses_armature(model)
    name = mesh.name + bridge.BAKED_SUFFIX
    # Built under a temporary name: a cancelled or failed bake leaves an earlier one alone.
    ob = bridge.make_mesh_copy(context, mesh, name + "_part", base, se.model_rig,
                               arm if use_arm else None)
    done = False
    try:
        basis = ob.shape_key_add(name="Basis", from_mix=False)
        keys = ["ck_" + p for p in names]
        for i, key in enumerate(keys):
            kb = ob.shape_key_add(name=key, from_mix=False)
            kb.relative_key = basis
            kb.value = 0.0
            co = base + bridge.transform_vectors(from_arm, offsets[i])
            kb.data.foreach_set("co", np.ascontiguousarray(co, np.float32).ravel())
            yield 2 + i, total
        ob.data.update()
        ob["charkit_baked"] = "neural" if use_arm else "linear"
        bridge.remove_object(name)
        ob.name = name
        ob.data.name = name
        done = True
    finally:
        if not done:  # cancelled or failed: no half-baked object stays behind
            data = ob.data
            bpy.data.objects.remove(ob, do_unlink=True)
            if data.users == 0:
                bpy.data.meshes.remove(data)
    msg = f"Baked {n} shape keys into '{name}'"
    if lib_path:
        spec = ck.InputSpec(list(se.model_bone_names), list(se.model_curve_names))
        text = ck.pose_library_json(spec, mesh.name, names, rotations,
                                    curves if se.model_curve_names else None, shape_keys=keys)
        _make_dirs(lib_path)
        with open(lib_path, "w", encoding="utf-8") as f:
            f.write(text)
        msg += f"; pose library {os.path.basename(lib_path)}"
    yield total, total
    return msg


bake_shape_keys = _each_mesh_job(_bake_one)

"""The Blender side of the add-on: reading and setting poses, evaluating the
mesh, building charkit's rig from an armature, saving and restoring the scene,
and writing the preview and baked meshes. Everything numeric beyond moving
arrays in and out of Blender runs in charkit's C++ core (charkit package).

Spaces: charkit's rig lives in the armature's object space ("armature
space"): bone.matrix_local, the bind positions and every delta are expressed
there. Blender meshes store coordinates in the mesh object's space; points go
between the two with obj_to_arm = A^-1 M (A, M the armature's and the mesh's
world matrices) and deltas with its linear part.
"""

import numpy as np

import bpy
from mathutils import Quaternion


class JobError(Exception):
    """A problem with the scene or the settings, reported to the user as is."""


# ---------------------------------------------------------------------------
# Settings

def used_bones(s):
    return [b for b in s.bones if b.use]


def used_curves(s):
    return [c for c in s.curves if c.use]


def used_morphs(s):
    return [m for m in s.morphs if m.use]


def require_objects(s, mesh=None):
    """The setup's armature and a mesh of it (its first mesh when none is given)."""
    arm = s.armature
    mesh = s.mesh if mesh is None else mesh
    if arm is None or arm.type != 'ARMATURE':
        raise JobError("Pick an armature in Setup")
    if mesh is None or mesh.type != 'MESH':
        raise JobError("Pick a mesh in Setup")
    if len(mesh.data.vertices) == 0:
        raise JobError(f"Mesh '{mesh.name}' has no vertices")
    return arm, mesh


def setup_meshes(s):
    """The meshes one setup corrects, one model each: Mesh, then More Meshes (empty
    slots and repeats left out). Raises JobError when there is none or a slot holds
    something other than a mesh."""
    first = s.mesh
    if first is None or first.type != 'MESH':
        raise JobError("Pick a mesh in Setup")
    out = [first]
    for it in s.more_meshes:
        ob = it.object
        if ob is None or ob in out:
            continue
        if ob.type != 'MESH':
            raise JobError(f"More Meshes: '{ob.name}' is not a mesh")
        out.append(ob)
    return out


def shape_key_blocks(mesh_obj):
    key = mesh_obj.data.shape_keys
    return key.key_blocks if key is not None else None


def check_inputs(s, arm, mesh, need_bones=True):
    """The used bones, curves and morph targets, each checked against the scene."""
    bones = used_bones(s)
    if need_bones and not bones:
        raise JobError("No input bones: Load Bones From Armature and tick at least one")
    for b in bones:
        if b.name not in arm.data.bones:
            raise JobError(f"Input bone '{b.name}' is not a bone of '{arm.name}' (Load Bones again)")
        if not (b.axis_x or b.axis_y or b.axis_z):
            raise JobError(f"Input bone '{b.name}' has no axis enabled")
        for axis, on, lo, hi in zip("XYZ", (b.axis_x, b.axis_y, b.axis_z), *axis_ranges(b)):
            if on and lo > hi:
                raise JobError(f"Input bone '{b.name}': Min is above Max"
                               + (f" about {axis}" if b.per_axis else ""))
    blocks = shape_key_blocks(mesh)
    curves, morphs = used_curves(s), used_morphs(s)
    for c in curves:
        if blocks is None or c.name not in blocks:
            raise JobError(f"Curve input '{c.name}' is not a shape key of '{mesh.name}'")
        if c.min > c.max:
            raise JobError(f"Curve input '{c.name}': Min is above Max")
        if c.min < -10.0 or c.max > 10.0:
            raise JobError(f"Curve input '{c.name}': Blender's shape key values stay within [-10, 10]")
    for m in morphs:
        if blocks is None or m.name not in blocks:
            raise JobError(f"Morph target '{m.name}' is not a shape key of '{mesh.name}'")
        if blocks[0].name == m.name:
            raise JobError(f"Morph target '{m.name}' is the reference (Basis) key")
    return bones, curves, morphs


def axis_ranges(bone_item):
    """(mins, maxs) per axis X, Y, Z of an input bone, in degrees."""
    if bone_item.per_axis:
        return tuple(bone_item.axis_min), tuple(bone_item.axis_max)
    return (bone_item.min_deg,) * 3, (bone_item.max_deg,) * 3


def spec_dict(bones, curves):
    """charkit.InputSpec arguments from the used bone and curve items."""
    b = [{"name": x.name,
          "axes": [{"enabled": bool(en), "min_deg": float(lo), "max_deg": float(hi)}
                   for en, lo, hi in zip((x.axis_x, x.axis_y, x.axis_z), *axis_ranges(x))]}
         for x in bones]
    c = [{"name": x.name, "min": float(x.min), "max": float(x.max)} for x in curves]
    return b, c


def parse_hidden(text):
    try:
        widths = [int(t) for t in text.replace(" ", "").split(",") if t]
    except ValueError:
        raise JobError(f"Hidden Layers: '{text}' is not a list of integers such as 128,128") from None
    if not widths or any(w <= 0 for w in widths):
        raise JobError(f"Hidden Layers: '{text}' needs at least one positive width")
    return widths


# ---------------------------------------------------------------------------
# Spaces

def matrix_np(m):
    return np.array([list(row) for row in m], dtype=np.float64)


def obj_to_arm(arm, mesh):
    """4x4: mesh object space -> armature space."""
    return matrix_np(arm.matrix_world.inverted() @ mesh.matrix_world)


def transform_points(m, p):
    return (np.asarray(p, np.float64) @ m[:3, :3].T + m[:3, 3]).astype(np.float32)


def transform_vectors(m, d):
    return (np.asarray(d, np.float64) @ m[:3, :3].T).astype(np.float32)


# ---------------------------------------------------------------------------
# Poses

def quat_xyzw(q):
    return (q.x, q.y, q.z, q.w)


def pose_bone_quaternion(pb):
    """The pose bone's rotation (relative to rest, in its rest frame) whatever its mode."""
    mode = pb.rotation_mode
    if mode == 'QUATERNION':
        q = Quaternion(pb.rotation_quaternion)
        if q.magnitude < 1e-12:
            return Quaternion()
        q.normalize()
        return q
    if mode == 'AXIS_ANGLE':
        a = pb.rotation_axis_angle
        axis = (a[1], a[2], a[3])
        if axis[0] == 0 and axis[1] == 0 and axis[2] == 0:
            return Quaternion()
        return Quaternion(axis, a[0])
    return pb.rotation_euler.to_quaternion()


def current_rotations(arm, names):
    out = np.zeros((len(names), 4), np.float64)
    for i, n in enumerate(names):
        pb = arm.pose.bones.get(n)
        out[i] = quat_xyzw(pose_bone_quaternion(pb)) if pb is not None else (0, 0, 0, 1)
    return out


def current_curves(mesh, names):
    blocks = shape_key_blocks(mesh)
    out = np.zeros(len(names), np.float64)
    for i, n in enumerate(names):
        if blocks is not None and n in blocks:
            out[i] = blocks[n].value
    return out


def set_input_pose(arm, mesh, bone_names, rot_row, curve_names, curve_row):
    """Sets the input bones' rotation_quaternion (rows x y z w) and the curve keys' values."""
    for n, r in zip(bone_names, rot_row):
        arm.pose.bones[n].rotation_quaternion = (float(r[3]), float(r[0]), float(r[1]), float(r[2]))
    if curve_names:
        blocks = shape_key_blocks(mesh)
        for n, v in zip(curve_names, curve_row):
            blocks[n].value = float(v)


class SceneState:
    """What a run may change: the frame, the armature's action and pose position, every
    pose bone's rotation mode and transform, and every shape key's value and slider range.
    restore() puts all of it back."""

    def __init__(self, scene, arm, mesh):
        self.scene, self.arm, self.mesh = scene, arm, mesh
        self.frame = scene.frame_current
        self.subframe = scene.frame_subframe
        self.pose_position = arm.data.pose_position
        ad = arm.animation_data
        self.had_anim = ad is not None
        self.action = ad.action if ad is not None else None
        self.slot = getattr(ad, "action_slot", None) if ad is not None else None
        self.bones = {}
        for pb in arm.pose.bones:
            self.bones[pb.name] = (pb.rotation_mode, tuple(pb.rotation_quaternion),
                                   tuple(pb.rotation_euler), tuple(pb.rotation_axis_angle),
                                   tuple(pb.location), tuple(pb.scale))
        self.keys = {}
        blocks = shape_key_blocks(mesh)
        if blocks is not None:
            for kb in blocks:
                self.keys[kb.name] = (kb.value, kb.slider_min, kb.slider_max)

    def restore_action(self):
        ad = self.arm.animation_data
        if not self.had_anim:
            if ad is not None and ad.action is not None:
                ad.action = None
            return
        if ad is not None and ad.action != self.action:
            ad.action = self.action
            if self.slot is not None and hasattr(ad, "action_slot"):
                try:
                    ad.action_slot = self.slot
                except Exception:
                    pass

    def restore(self):
        self.restore_action()
        if (self.scene.frame_current, self.scene.frame_subframe) != (self.frame, self.subframe):
            self.scene.frame_set(self.frame, subframe=self.subframe)
        self.arm.data.pose_position = self.pose_position
        for name, (mode, q, e, aa, loc, scale) in self.bones.items():
            pb = self.arm.pose.bones.get(name)
            if pb is None:
                continue
            pb.rotation_mode = mode  # first: changing the mode converts the values
            pb.rotation_quaternion = q
            pb.rotation_euler = e
            pb.rotation_axis_angle = aa
            pb.location = loc
            pb.scale = scale
        blocks = shape_key_blocks(self.mesh)
        if blocks is not None:
            for name, (value, smin, smax) in self.keys.items():
                kb = blocks.get(name)
                if kb is None:
                    continue
                kb.slider_min = smin
                kb.slider_max = smax
                kb.value = value
        bpy.context.view_layer.update()


def prepare_pose_run(arm, mesh, bone_names, curves):
    """Puts the scene into the state training assumes: the armature in Pose Position,
    every bone at rest (charkit's rig has the joints that are not inputs at rest), the
    input bones in QUATERNION mode and the curve keys' sliders wide enough."""
    arm.data.pose_position = 'POSE'
    for pb in arm.pose.bones:
        pb.location = (0.0, 0.0, 0.0)
        pb.scale = (1.0, 1.0, 1.0)
        if pb.rotation_mode == 'QUATERNION':
            pb.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        elif pb.rotation_mode == 'AXIS_ANGLE':
            pb.rotation_axis_angle = (0.0, 0.0, 1.0, 0.0)
        else:
            pb.rotation_euler = (0.0, 0.0, 0.0)
    for n in bone_names:
        pb = arm.pose.bones[n]
        pb.rotation_mode = 'QUATERNION'
        pb.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    blocks = shape_key_blocks(mesh)
    for c in curves:
        kb = blocks[c.name]
        kb.slider_min = min(kb.slider_min, c.min, 0.0)
        kb.slider_max = max(kb.slider_max, c.max, 0.0)
        kb.value = 0.0


def evaluate_positions(context, mesh, to_arm):
    """The evaluated mesh (shape keys, drivers and every modifier) in armature space, (V, 3)."""
    context.view_layer.update()
    dg = context.evaluated_depsgraph_get()
    ob_eval = mesh.evaluated_get(dg)
    me = ob_eval.to_mesh()
    try:
        n = len(me.vertices)
        expected = len(mesh.data.vertices)
        if n != expected:
            raise JobError(f"The modifiers of '{mesh.name}' change its vertex count ({expected} -> {n}); "
                           "disable those that change the topology (Subdivision, Decimate, ...)")
        co = np.empty(n * 3, np.float32)
        me.vertices.foreach_get("co", co)
    finally:
        ob_eval.to_mesh_clear()
    return transform_points(to_arm, co.reshape(-1, 3))


def evaluate_rest(context, s, arm, mesh, bone_names, curves):
    """Bind positions: the mesh evaluated with every bone at rest and the curves at 0,
    in armature space. The scene is restored afterwards."""
    state = SceneState(context.scene, arm, mesh)
    try:
        prepare_pose_run(arm, mesh, bone_names, curves)
        return evaluate_positions(context, mesh, obj_to_arm(arm, mesh))
    finally:
        state.restore()


# ---------------------------------------------------------------------------
# Action sampling

def action_frames(start, end, count):
    if end < start:
        raise JobError(f"Action sampling: End ({end}) is before Start ({start})")
    if count == 1:
        return [float(start)]
    return [float(x) for x in np.linspace(start, end, count)]


def frame_name(f):
    text = f"{f:.3f}".rstrip("0").rstrip(".")
    return "frame_" + text


def assign_action(arm, action):
    ad = arm.animation_data or arm.animation_data_create()
    ad.action = action
    # Blender 4.4+ (slotted actions): make sure a slot is assigned.
    if getattr(ad, "action_slot", 1) is None:
        slots = getattr(ad, "action_suitable_slots", None)
        if slots:
            ad.action_slot = slots[0]


# ---------------------------------------------------------------------------
# The rig

def joint_order(arm):
    """All bones, parents first (a stable sort by depth)."""
    bones = list(arm.data.bones)

    def depth(b):
        d = 0
        while b.parent is not None:
            b, d = b.parent, d + 1
        return d

    order = sorted(range(len(bones)), key=lambda i: (depth(bones[i]), i))
    return [bones[i] for i in order]


def rest_local_matrix(bone):
    if bone.parent is None:
        return bone.matrix_local.copy()
    return bone.parent.matrix_local.inverted() @ bone.matrix_local


def skin_weights(mesh, joint_index):
    """For each vertex the 4 largest weights of vertex groups named after deform bones,
    renormalised; (V, 4) joint indices and (V, 4) weights (all 0 where none)."""
    groups = {vg.index: joint_index[vg.name] for vg in mesh.vertex_groups if vg.name in joint_index}
    verts = mesh.data.vertices
    joints = np.zeros((len(verts), 4), np.uint32)
    weights = np.zeros((len(verts), 4), np.float32)
    if not groups:
        return joints, weights
    for v in verts:
        infl = []
        for g in v.groups:
            j = groups.get(g.group)
            if j is not None and g.weight > 0.0:
                infl.append((g.weight, j))
        if not infl:
            continue
        infl.sort(key=lambda t: (-t[0], t[1]))
        top = infl[:4]
        total = sum(w for w, _ in top)
        for k, (w, j) in enumerate(top):
            joints[v.index, k] = j
            weights[v.index, k] = w / total
    return joints, weights


def mesh_triangles(mesh):
    me = mesh.data
    try:
        if hasattr(me, "calc_loop_triangles"):
            me.calc_loop_triangles()
        tris = np.empty(len(me.loop_triangles) * 3, np.uint32)
        me.loop_triangles.foreach_get("vertices", tris)
        return tris.reshape(-1, 3) if len(tris) else None
    except Exception:
        return None


class RigData:
    """What the add-on keeps about the rig: charkit's Rig plus the arrays the
    preview and the bake need."""

    def __init__(self, ck, arm, mesh, bind_arm):
        bones = joint_order(arm)
        self.joint_names = [b.name for b in bones]
        index = {n: i for i, n in enumerate(self.joint_names)}
        parents = np.array([index[b.parent.name] if b.parent is not None else -1 for b in bones], np.int32)
        rest_trs = np.zeros((len(bones), 10), np.float32)
        inverse_bind = np.zeros((len(bones), 4, 4), np.float32)
        for i, b in enumerate(bones):
            loc, rot, scale = rest_local_matrix(b).decompose()
            rest_trs[i, 0:3] = tuple(loc)
            rest_trs[i, 3:7] = quat_xyzw(rot)
            rest_trs[i, 7:10] = tuple(scale)
            inverse_bind[i] = matrix_np(b.matrix_local.inverted())
        deform = {b.name: index[b.name] for b in bones if b.use_deform}
        self.joints, self.weights = skin_weights(mesh, deform)
        self.bind = np.ascontiguousarray(bind_arm, np.float32)
        self.rest_trs = rest_trs
        self.rig = ck.Rig(self.joint_names, parents, rest_trs, self.bind, self.joints, self.weights,
                          inverse_bind=inverse_bind, triangles=mesh_triangles(mesh), mesh_name=mesh.name)

    def rest_local(self, names):
        index = {n: i for i, n in enumerate(self.joint_names)}
        # the rig's own (float32) rest rotations, so that features match charkit's
        return np.ascontiguousarray(self.rest_trs[[index[n] for n in names], 3:7], np.float64)


def shape_key_deltas(mesh, names, to_arm):
    """(M, V, 3): each shape key minus its relative key, as armature-space deltas."""
    blocks = shape_key_blocks(mesh)
    n = len(mesh.data.vertices)
    out = np.zeros((len(names), n, 3), np.float32)
    for i, name in enumerate(names):
        kb = blocks[name]
        a = np.empty(n * 3, np.float32)
        b = np.empty(n * 3, np.float32)
        kb.data.foreach_get("co", a)
        kb.relative_key.data.foreach_get("co", b)
        out[i] = transform_vectors(to_arm, (a - b).reshape(-1, 3))
    return out


# ---------------------------------------------------------------------------
# Preview proxy and baked copy

PREVIEW_SUFFIX = "_charkit_preview"
BAKED_SUFFIX = "_charkit_baked"


def remove_object(name):
    ob = bpy.data.objects.get(name)
    if ob is None:
        return
    data = ob.data
    bpy.data.objects.remove(ob, do_unlink=True)
    if data is not None and data.users == 0:
        bpy.data.meshes.remove(data)


def make_mesh_copy(context, source, name, coords_obj, rig_data, armature):
    """A new object `name` (replacing one of that name) with a copy of the source mesh
    (topology, UVs, materials) without shape keys or modifiers, coordinates coords_obj
    (mesh object space), vertex groups holding the rig's four weights per vertex and,
    when `armature` is given, one Armature modifier: Blender then skins it exactly as
    charkit's linear blend skinning does."""
    remove_object(name)
    me = source.data.copy()
    me.name = name
    ob = bpy.data.objects.new(name, me)
    if me.shape_keys is not None:
        key_name = me.shape_keys.name
        ob.shape_key_clear()
        # Blender 3.4 keeps a copied mesh's shape-key block after shape_key_clear, with
        # no user but a stale owner: reopening the saved file then warns of an invalid
        # 'from' pointer. Remove it.
        stale = bpy.data.shape_keys.get(key_name)
        if stale is not None and me.shape_keys is None and stale.user == me:
            bpy.data.batch_remove(ids=(stale,))
    me.vertices.foreach_set("co", np.ascontiguousarray(coords_obj, np.float32).ravel())
    me.update()
    cols = list(source.users_collection) or [context.scene.collection]
    cols[0].objects.link(ob)
    if source.parent is not None:
        # Follow the source's parent; an 'ARMATURE' parent would deform the copy a second
        # time (or deform a linear preview at all), so it becomes a plain object parent.
        ob.parent = source.parent
        ob.parent_type = 'OBJECT' if source.parent_type == 'ARMATURE' else source.parent_type
        if source.parent_type == 'BONE':
            ob.parent_bone = source.parent_bone
        ob.matrix_parent_inverse = source.matrix_parent_inverse.copy()
        ob.matrix_basis = source.matrix_basis.copy()
    else:
        ob.matrix_world = source.matrix_world.copy()
    ob.vertex_groups.clear()
    if armature is not None:
        groups = {}
        v_idx = np.arange(len(rig_data.weights))
        for k in range(4):
            w = rig_data.weights[:, k]
            j = rig_data.joints[:, k]
            for vi in v_idx[w > 0.0]:
                ji = int(j[vi])
                vg = groups.get(ji)
                if vg is None:
                    vg = groups[ji] = ob.vertex_groups.new(name=rig_data.joint_names[ji])
                vg.add([int(vi)], float(w[vi]), 'REPLACE')
        mod = ob.modifiers.new("Armature", 'ARMATURE')
        mod.object = armature
        mod.use_vertex_groups = True
        mod.use_bone_envelopes = False
        mod.use_deform_preserve_volume = False
    return ob

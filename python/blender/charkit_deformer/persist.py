"""The current model kept with the .blend file. When the file is saved, each
scene's model goes into the scene (its pose_model.json text and .npz bytes, and
which objects, bones and shape keys feed it); when a file is opened, the
model of the open scene comes back, bound to those objects again. Training
data is not kept: it is rebuilt from the scene in seconds."""

import base64
import os
import tempfile

import bpy

from . import _ck, bridge, state

PROP = "charkit_model"


def store(scene):
    """Writes the scene's model into scene[PROP], or removes PROP when it has none."""
    se = state.peek(scene)
    if se is None or se.model is None or se.model_objects is None:
        if PROP in scene:
            del scene[PROP]
        return
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "pose_model.json")
        se.model.save(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path[:-5] + ".npz", "rb") as f:
            npz = base64.b64encode(f.read()).decode("ascii")
    scene[PROP] = {
        "json": text, "npz": npz, "origin": se.origin or "", "source": se.source or "",
        "armature": se.model_objects[0], "mesh": se.model_objects[1],
        "bones": list(se.model_bone_names), "curves": list(se.model_curve_names),
    }


def restore(context, scene):
    """The model scene[PROP] holds, set as the scene's current model. Returns a
    message for the report, or None when the scene holds none."""
    data = scene.get(PROP)
    if data is None:
        return None
    ck = _ck.get()
    arm = bpy.data.objects.get(str(data["armature"]))
    mesh = bpy.data.objects.get(str(data["mesh"]))
    if arm is None or mesh is None:
        return (f"charkit: the saved model's objects ('{data['armature']}', '{data['mesh']}') "
                "are gone; the model was not restored")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "pose_model.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(str(data["json"]))
        with open(path[:-5] + ".npz", "wb") as f:
            f.write(base64.b64decode(str(data["npz"])))
        model = ck.PoseModel.load(path)
    if model.vertex_count != len(mesh.data.vertices):
        return (f"charkit: the saved model is for {model.vertex_count} vertices and '{mesh.name}' "
                f"has {len(mesh.data.vertices)}; the model was not restored")
    bone_names = [str(n) for n in data["bones"]]
    curve_names = [str(n) for n in data["curves"]]
    s = scene.charkit
    by_name = {c.name: c for c in s.curves}
    missing = [n for n in curve_names if n not in by_name] + \
        [n for n in bone_names if n not in arm.pose.bones]
    if missing:
        return f"charkit: the saved model's inputs {missing} are gone; the model was not restored"
    bind = bridge.evaluate_rest(context, s, arm, mesh, bone_names, [by_name[n] for n in curve_names])
    rig_data = bridge.RigData(ck, arm, mesh, bind)
    se = state.get(scene)
    se.set_model(model, str(data["origin"]) or "file", str(data["source"]), (arm.name, mesh.name),
                 bone_names, curve_names, rig_data)
    return f"charkit: restored the {model.kind} model of '{mesh.name}' saved with the file"

"""The current models kept with the .blend file. When the file is saved, each
scene's models (one per mesh of its setup) go into the scene (their
pose_model.json text and .npz bytes, and which objects, bones and shape keys
feed them); when a file is opened, the models of the open scene come back,
bound to those objects again. Training data is not kept: it is rebuilt from
the scene in seconds."""

import base64
import os
import tempfile

import bpy

from . import _ck, bridge, state

PROP = "charkit_model"


def _entry(se):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "pose_model.json")
        se.model.save(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path[:-5] + ".npz", "rb") as f:
            npz = base64.b64encode(f.read()).decode("ascii")
    return {
        "json": text, "npz": npz, "origin": se.origin or "", "source": se.source or "",
        "armature": se.model_objects[0], "mesh": se.model_objects[1],
        "bones": list(se.model_bone_names), "curves": list(se.model_curve_names),
    }


def _setup_mesh_names(scene):
    s = scene.charkit
    names = [s.mesh.name] if s.mesh is not None else []
    names += [it.object.name for it in s.more_meshes
              if it.object is not None and it.object.name not in names]
    return names


def store(scene):
    """Writes the models of the scene's setup meshes into scene[PROP] ({"models":
    [entry, ...]}), or removes PROP when there is none."""
    entries = []
    for name in _setup_mesh_names(scene):
        se = state.peek(scene, name)
        if se is not None and se.model is not None and se.model_objects is not None:
            entries.append(_entry(se))
    if not entries:
        if PROP in scene:
            del scene[PROP]
        return
    scene[PROP] = {"models": entries}


def restore(context, scene):
    """The models scene[PROP] holds, each set as its mesh's current model. Returns a
    message for the report, or None when the scene holds none."""
    data = scene.get(PROP)
    if data is None:
        return None
    # A file of an earlier add-on holds one model as the property itself.
    entries = list(data["models"]) if "models" in data else [data]
    return "; ".join(_restore_one(context, scene, e) for e in entries)


def _restore_one(context, scene, data):
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
    se = state.get(scene, mesh.name)
    se.set_model(model, str(data["origin"]) or "file", str(data["source"]), (arm.name, mesh.name),
                 bone_names, curve_names, rig_data)
    return f"charkit: restored the {model.kind} model of '{mesh.name}' saved with the file"

"""charkit Pose Deformer: a Blender add-on that learns pose-driven corrective
deformation with charkit's C++ core — training data from the scene, Linear and
Neural models, a live preview proxy, baked shape keys with a pose library, and
engine networks (.nmn, .onnx) in and out. docs/blender.md describes it."""

bl_info = {
    "name": "charkit Pose Deformer",
    "author": "charkit",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "3D View > Sidebar (N) > Pose Deformer",
    "description": "Pose-driven corrective deformation: training data, models, preview, "
                   "baked shape keys and engine networks, computed by charkit's C++ core",
    "doc_url": "",
    "category": "Animation",
}

if "bpy" in locals():  # F8 / script reload
    import importlib
    for _m in (_ck, bridge, state, persist, jobs, props, ops, ui, bem_scene, bem_ops, bem_ui):  # noqa: F821
        importlib.reload(_m)

import bpy
from bpy.app.handlers import persistent

from . import _ck, bridge, state, persist, jobs, props, ops, ui
from . import bem_scene, bem_ops, bem_ui  # the BEM panel

_in_refresh = False


def _auto_refresh(scene):
    global _in_refresh
    if _in_refresh or jobs.busy():
        return
    s = getattr(scene, "charkit", None)
    if s is None or not s.auto_refresh or not state.any_model(scene):
        return
    _in_refresh = True
    try:
        jobs.refresh_preview(scene, quiet=True)
    except Exception as e:  # never break Blender's update loop
        print(f"charkit_deformer: preview refresh failed: {e}")
    finally:
        _in_refresh = False


@persistent
def _on_depsgraph_update(scene, *_args):
    _auto_refresh(scene)


@persistent
def _on_frame_change(scene, *_args):
    _auto_refresh(scene)


@persistent
def _on_load(*_args):
    state.clear_all()  # the models belong to the file that was open
    scene = bpy.context.scene
    if scene is None:
        return
    try:
        msg = persist.restore(bpy.context, scene)
    except Exception as e:  # never break loading a file
        msg = f"charkit: the model saved with the file could not be restored: {e}"
    if msg:
        print(msg)


@persistent
def _on_save(*_args):
    for scene in bpy.data.scenes:
        try:
            persist.store(scene)
        except Exception as e:  # never break saving a file
            print(f"charkit: the model of scene '{scene.name}' was not saved with the file: {e}")


_HANDLERS = ((bpy.app.handlers.depsgraph_update_post, _on_depsgraph_update),
             (bpy.app.handlers.frame_change_post, _on_frame_change),
             (bpy.app.handlers.load_post, _on_load),
             (bpy.app.handlers.save_pre, _on_save))


def register():
    props.register()
    ops.register()
    ui.register()
    bem_ops.register()
    bem_ui.register()
    _remove_handlers()
    for lst, fn in _HANDLERS:
        lst.append(fn)


def _remove_handlers():
    # By module and name, so that handlers of an earlier load of this module (script
    # reload) go too.
    for lst, fn in _HANDLERS:
        for h in list(lst):
            if getattr(h, "__module__", None) == fn.__module__ and getattr(h, "__name__", None) == fn.__name__:
                lst.remove(h)


def unregister():
    _remove_handlers()
    bem_ui.unregister()
    bem_ops.unregister()
    ui.unregister()
    ops.unregister()
    props.unregister()
    state.clear_all()

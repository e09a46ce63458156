"""Operators (charkit.*). Long ones are modal with a progress bar and ESC to
cancel when invoked from the UI, and run to the end with EXEC_DEFAULT (scripts,
background mode)."""

import time
import traceback

import bpy

from . import _ck, jobs
from .bridge import JobError


def _report_failure(op, e):
    if isinstance(e, jobs.LocalModeNetwork):
        op.report({'WARNING'}, str(e))
    elif _ck.is_cancelled(e):
        op.report({'WARNING'}, "Cancelled; the scene was restored")
    elif isinstance(e, (JobError, _ck.LibraryError)) or _ck.is_charkit_error(e):
        op.report({'ERROR'}, str(e))
    else:
        traceback.print_exc()
        op.report({'ERROR'}, f"{type(e).__name__}: {e}")
    return {'CANCELLED'}


class _Simple:
    """An operator whose work is one call of `work(context)` returning a message or
    (message, warnings)."""
    bl_options = {'REGISTER', 'UNDO'}

    def work(self, context):
        raise NotImplementedError

    def execute(self, context):
        try:
            result = self.work(context)
        except Exception as e:
            return _report_failure(self, e)
        warnings = []
        if isinstance(result, tuple):
            result, warnings = result
        for w in warnings:
            self.report({'WARNING'}, w)
        if result:
            self.report({'INFO'}, result)
        return {'FINISHED'}


_PASS = {'MIDDLEMOUSE', 'WHEELUPMOUSE', 'WHEELDOWNMOUSE', 'MOUSEMOVE', 'INBETWEEN_MOUSEMOVE',
         'TRACKPADPAN', 'TRACKPADZOOM', 'NDOF_MOTION'}


class _Job:
    """A modal operator driving a job generator (see jobs.py)."""
    bl_options = {'REGISTER'}
    _gen = None
    _timer = None

    def job(self, context):
        raise NotImplementedError

    def _finish(self, result):
        warnings = []
        if isinstance(result, tuple):
            result, warnings = result
        for w in warnings:
            self.report({'WARNING'}, w)
        if result:
            self.report({'INFO'}, result)
        return {'FINISHED'}

    def execute(self, context):
        try:
            result = jobs.run_to_end(self.job(context))
        except Exception as e:
            return _report_failure(self, e)
        return self._finish(result)

    def invoke(self, context, event):
        if bpy.app.background or context.window is None:
            return self.execute(context)
        self._gen = self.job(context)
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.01, window=context.window)
        wm.progress_begin(0, 1000)
        wm.modal_handler_add(self)
        context.workspace.status_text_set(f"{self.bl_label}: ESC to cancel")
        return {'RUNNING_MODAL'}

    def _end(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        context.workspace.status_text_set(None)
        for area in context.screen.areas if context.screen else ():
            area.tag_redraw()

    def modal(self, context, event):
        if event.type == 'ESC':
            self._gen.close()  # the job's finally restores the scene
            self._end(context)
            self.report({'WARNING'}, f"{self.bl_label}: cancelled; the scene was restored")
            return {'CANCELLED'}
        if event.type != 'TIMER':
            return {'PASS_THROUGH'} if event.type in _PASS else {'RUNNING_MODAL'}
        start = time.perf_counter()
        try:
            while True:
                done, total = next(self._gen)
                context.window_manager.progress_update(int(1000 * done / max(total, 1)))
                if time.perf_counter() - start > 0.05:
                    break
        except StopIteration as stop:
            self._end(context)
            return self._finish(stop.value)
        except Exception as e:
            self._end(context)
            return _report_failure(self, e)
        return {'RUNNING_MODAL'}

    def cancel(self, context):  # Blender ends the operator (window closed, file loaded)
        if self._gen is not None:
            self._gen.close()
        self._end(context)


class CHARKIT_OT_load_bones(_Simple, bpy.types.Operator):
    """List the armature's bones as inputs (keeping the settings of bones already listed) and the mesh's shape keys"""
    bl_idname = "charkit.load_bones"
    bl_label = "Load Bones From Armature"

    def work(self, context):
        return jobs.load_bones(context)


class CHARKIT_OT_load_shape_keys(_Simple, bpy.types.Operator):
    """List the mesh's shape keys as curve inputs and morph targets"""
    bl_idname = "charkit.load_shape_keys"
    bl_label = "Load Shape Keys"

    def work(self, context):
        return f"{jobs.load_shape_keys(context)} shape keys"


class CHARKIT_OT_generate_random_poses(_Simple, bpy.types.Operator):
    """Keyframe the rest pose and N seeded random poses of the input bones in an action of their own, <armature>_charkit_poses (no mesh evaluation)"""
    bl_idname = "charkit.generate_random_poses"
    bl_label = "Generate Random Poses"

    def work(self, context):
        return jobs.generate_random_poses(context)


class CHARKIT_OT_generate_training_data(_Job, bpy.types.Operator):
    """Pose the armature (random poses or an action's frames), evaluate the mesh for each pose and build the training data"""
    bl_idname = "charkit.generate_training_data"
    bl_label = "Generate Training Data"
    bl_options = {'REGISTER', 'UNDO'}

    def job(self, context):
        return jobs.generate_training_data(context)


class CHARKIT_OT_train(_Job, bpy.types.Operator):
    """Train the Linear or Neural model on the training data (charkit's C++ core)"""
    bl_idname = "charkit.train"
    bl_label = "Train"

    def job(self, context):
        return jobs.train(context)


class CHARKIT_OT_create_preview(_Simple, bpy.types.Operator):
    """Create (or replace) the preview proxy that shows the model's deformation for the current pose"""
    bl_idname = "charkit.create_preview"
    bl_label = "Create Preview Proxy"

    def work(self, context):
        return jobs.create_preview(context)


class CHARKIT_OT_refresh_preview(_Simple, bpy.types.Operator):
    """Update the preview proxy for the current pose"""
    bl_idname = "charkit.refresh_preview"
    bl_label = "Refresh Preview"

    def work(self, context):
        jobs.refresh_preview(context.scene, force=True)
        return ""


class CHARKIT_OT_bake_shape_keys(_Job, bpy.types.Operator):
    """Bake one relative shape key per training pose into a copy of the mesh and write the pose library JSON"""
    bl_idname = "charkit.bake_shape_keys"
    bl_label = "Bake Shape Keys"
    bl_options = {'REGISTER', 'UNDO'}

    def job(self, context):
        return jobs.bake_shape_keys(context)


class CHARKIT_OT_export_model(_Simple, bpy.types.Operator):
    """Save the model in charkit's format (NAME.json + NAME.npz)"""
    bl_idname = "charkit.export_model"
    bl_label = "Export Pose Model"
    bl_options = {'REGISTER'}

    def work(self, context):
        return jobs.export_model(context)


class CHARKIT_OT_import_model(_Simple, bpy.types.Operator):
    """Load a charkit model; its inputs map onto the first used bones, curves and morph targets in list order"""
    bl_idname = "charkit.import_model"
    bl_label = "Import Pose Model"

    def work(self, context):
        return jobs.import_model(context)


class CHARKIT_OT_import_network(_Simple, bpy.types.Operator):
    """Import an engine network (.nmn in global mode, or .onnx) driving the used morph targets"""
    bl_idname = "charkit.import_network"
    bl_label = "Import Network"

    def work(self, context):
        return jobs.import_network(context)


class CHARKIT_OT_export_nmn(_Job, bpy.types.Operator):
    """Write NAME.nmn, NAME.bmd_ue.json and NAME.morphs.npz for Unreal's ML Deformer: the previewed Neural network as it is, or, for a model that cannot be written as it is, a network retrained in the engine layout (the difference is reported)"""
    bl_idname = "charkit.export_nmn"
    bl_label = "Export .nmn"

    def job(self, context):
        return jobs.export_nmn(context)


class CHARKIT_OT_bones_use(_Simple, bpy.types.Operator):
    """Tick or untick every input bone"""
    bl_idname = "charkit.bones_use"
    bl_label = "Use All Bones"
    use: bpy.props.BoolProperty(default=True)

    def work(self, context):
        for b in context.scene.charkit.bones:
            b.use = self.use
        return ""


class CHARKIT_OT_mesh_add(_Simple, bpy.types.Operator):
    """Add a mesh to the setup (the selected meshes other than Mesh, or an empty slot)"""
    bl_idname = "charkit.mesh_add"
    bl_label = "Add Mesh"

    def work(self, context):
        s = context.scene.charkit
        have = {s.mesh} | {it.object for it in s.more_meshes}
        picked = [ob for ob in getattr(context, "selected_objects", None) or ()
                  if ob.type == 'MESH' and ob not in have]
        for ob in picked or [None]:
            it = s.more_meshes.add()
            it.object = ob
        s.more_meshes_index = len(s.more_meshes) - 1
        return (f"Added {', '.join(ob.name for ob in picked)} to the setup" if picked
                else "Added an empty slot: pick a mesh in it")


class CHARKIT_OT_mesh_remove(_Simple, bpy.types.Operator):
    """Remove the active mesh from More Meshes (its model stays in memory until the file closes)"""
    bl_idname = "charkit.mesh_remove"
    bl_label = "Remove Mesh"

    def work(self, context):
        s = context.scene.charkit
        if not 0 <= s.more_meshes_index < len(s.more_meshes):
            raise JobError("No mesh selected in More Meshes")
        s.more_meshes.remove(s.more_meshes_index)
        s.more_meshes_index = max(0, min(s.more_meshes_index, len(s.more_meshes) - 1))
        return ""


classes = (CHARKIT_OT_load_bones, CHARKIT_OT_load_shape_keys, CHARKIT_OT_generate_random_poses,
           CHARKIT_OT_generate_training_data, CHARKIT_OT_train, CHARKIT_OT_create_preview,
           CHARKIT_OT_refresh_preview, CHARKIT_OT_bake_shape_keys, CHARKIT_OT_export_model,
           CHARKIT_OT_import_model, CHARKIT_OT_import_network, CHARKIT_OT_export_nmn,
           CHARKIT_OT_bones_use, CHARKIT_OT_mesh_add, CHARKIT_OT_mesh_remove)


register, unregister = bpy.utils.register_classes_factory(classes)

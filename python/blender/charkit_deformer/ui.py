"""The 3D view's N sidebar: tab "Pose Deformer"."""

import bpy

from . import _ck, jobs, state


class CHARKIT_UL_bones(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        row = layout.row(align=True)
        row.prop(item, "use", text="")
        split = row.split(factor=0.6, align=True)
        split.active = item.use
        split.label(text=item.name)
        axes = split.row(align=True)
        axes.prop(item, "axis_x", toggle=True)
        axes.prop(item, "axis_y", toggle=True)
        axes.prop(item, "axis_z", toggle=True)


class CHARKIT_UL_curves(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        row = layout.row(align=True)
        row.prop(item, "use", text="")
        split = row.split(factor=0.6, align=True)
        split.active = item.use
        split.label(text=item.name)
        split.label(text=f"{item.min:g} .. {item.max:g}")


class CHARKIT_UL_morphs(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        row = layout.row(align=True)
        row.prop(item, "use", text="")
        row.label(text=item.name)


class CHARKIT_UL_meshes(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        layout.prop(item, "object", text="", icon='MESH_DATA')


def _sessions(context):
    """(mesh name, session or None) of each mesh of the setup."""
    s = context.scene.charkit
    names = [s.mesh.name] if s.mesh is not None else []
    names += [it.object.name for it in s.more_meshes
              if it.object is not None and it.object.name not in names]
    return [(n, state.peek(context.scene, n)) for n in names]


class _Panel:
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Pose Deformer"


class CHARKIT_PT_main(_Panel, bpy.types.Panel):
    bl_idname = "CHARKIT_PT_main"
    bl_label = "Pose Deformer"

    def draw(self, context):
        layout = self.layout
        err = _ck.error()
        if err:
            box = layout.box()
            box.alert = True
            box.label(text="charkit library not loaded", icon='ERROR')
            for line in _wrap(err, 60):
                box.label(text=line)
            return
        sessions = _sessions(context)
        many = len(sessions) > 1
        if jobs.busy():
            layout.label(text="Working... (ESC cancels)", icon='TIME')
            return
        for name, se in sessions or [("", None)]:
            tag = f"{name}: " if many else ""
            if se is not None and se.model is not None:
                layout.label(text=f"{tag}Model: {se.model.kind} ({se.origin})", icon='CHECKMARK')
                if se.origin == "network":
                    # Which clamp the import chose (learned-basis coefficients: none).
                    layout.label(text=f"Weights clamped: {se.model.clamp}")
            else:
                layout.label(text=f"{tag}No pose model yet", icon='INFO')


class _Sub(_Panel):
    bl_parent_id = "CHARKIT_PT_main"


class CHARKIT_PT_setup(_Sub, bpy.types.Panel):
    bl_label = "Setup"

    def draw(self, context):
        s = context.scene.charkit
        col = self.layout.column()
        col.prop(s, "armature")
        col.prop(s, "mesh")
        col.label(text="More Meshes (one model each)")
        row = col.row()
        row.template_list("CHARKIT_UL_meshes", "", s, "more_meshes", s, "more_meshes_index", rows=2)
        sub = row.column(align=True)
        sub.operator("charkit.mesh_add", text="", icon='ADD')
        sub.operator("charkit.mesh_remove", text="", icon='REMOVE')
        col.row().prop(s, "model_type", expand=True)


class CHARKIT_PT_inputs(_Sub, bpy.types.Panel):
    bl_label = "Inputs"

    def draw(self, context):
        s = context.scene.charkit
        layout = self.layout
        row = layout.row(align=True)
        row.operator("charkit.load_bones", icon='ARMATURE_DATA')
        row.operator("charkit.load_shape_keys", text="", icon='FILE_REFRESH')
        layout.label(text=f"Bones ({sum(1 for b in s.bones if b.use)} used)")
        row = layout.row()
        row.template_list("CHARKIT_UL_bones", "", s, "bones", s, "bones_index", rows=4)
        col = row.column(align=True)
        col.operator("charkit.bones_use", text="", icon='CHECKBOX_HLT').use = True
        col.operator("charkit.bones_use", text="", icon='CHECKBOX_DEHLT').use = False
        if 0 <= s.bones_index < len(s.bones):
            b = s.bones[s.bones_index]
            col = layout.column(align=True)
            row = col.row(align=True)
            row.label(text=f"{b.name}: training range (degrees)")
            row.prop(b, "per_axis", toggle=True)
            if b.per_axis:
                for i, (axis, on) in enumerate(zip("XYZ", ("axis_x", "axis_y", "axis_z"))):
                    row = col.row(align=True)
                    row.active = getattr(b, on)
                    row.label(text=axis)
                    row.prop(b, "axis_min", index=i, text="Min")
                    row.prop(b, "axis_max", index=i, text="Max")
            else:
                row = col.row(align=True)
                row.prop(b, "min_deg")
                row.prop(b, "max_deg")
        layout.label(text="Curve Inputs (shape key values)")
        layout.template_list("CHARKIT_UL_curves", "", s, "curves", s, "curves_index", rows=2)
        if 0 <= s.curves_index < len(s.curves):
            c = s.curves[s.curves_index]
            col = layout.column(align=True)
            col.label(text=f"{c.name}: training range")
            row = col.row(align=True)
            row.prop(c, "min")
            row.prop(c, "max")
        layout.label(text="Morph Targets")
        layout.template_list("CHARKIT_UL_morphs", "", s, "morphs", s, "morphs_index", rows=2)


class CHARKIT_PT_training(_Sub, bpy.types.Panel):
    bl_label = "Training"

    def draw(self, context):
        s = context.scene.charkit
        layout = self.layout
        col = layout.column()
        col.row().prop(s, "pose_source", expand=True)
        if s.pose_source == 'RANDOM':
            row = col.row(align=True)
            row.prop(s, "random_count")
            row.prop(s, "random_seed")
        else:
            col.prop(s, "action")
            row = col.row(align=True)
            row.prop(s, "action_start")
            row.prop(s, "action_end")
            col.prop(s, "action_frames")
        row = col.row(align=True)
        row.prop(s, "bake_to_timeline")
        sub = row.row()
        sub.active = s.bake_to_timeline
        sub.prop(s, "timeline_start")
        col.operator("charkit.generate_random_poses", icon='POSE_HLT')
        col.operator("charkit.generate_training_data", icon='RENDER_ANIMATION')
        se = state.peek(context.scene)
        if se is not None and se.rotations is not None:
            text = f"Data: {len(se.rotations)} poses, {se.positions.shape[1]} vertices"
            col.label(text=text, icon='CHECKMARK')
            if se.lbs_error:
                col.label(text=f"Plain LBS error: mean {se.lbs_error[0]:.4g}, max {se.lbs_error[1]:.4g}")


class CHARKIT_PT_model(_Sub, bpy.types.Panel):
    bl_label = "Pose Model"

    def draw(self, context):
        s = context.scene.charkit
        layout = self.layout
        col = layout.column()
        if s.model_type in ('LINEAR', 'LINEAR_REST'):
            col.prop(s, "ridge_lambda")
        else:
            col.prop(s, "hidden")
            col.prop(s, "learning_rate")
            col.prop(s, "weight_decay")
            col.prop(s, "iterations")
            col.prop(s, "validation")
            sub = col.row()
            sub.active = s.validation > 0
            sub.prop(s, "patience")
            col.prop(s, "batch_size")
            col.prop(s, "standardize")
            col.prop(s, "train_seed")
            n = sum(1 for m in s.morphs if m.use)
            if n:
                col.prop(s, "clamp")
                col.label(text=f"Basis: {n} morph targets")
            else:
                col.prop(s, "nmn_morphs")
                col.label(text="Basis: learned (outputs not clamped)")
        col.operator("charkit.train", icon='PLAY')
        sessions = _sessions(context)
        for name, se in sessions:
            if se is None or se.model is None or not se.stats:
                continue
            box = layout.box()
            box.label(text=f"Stats: {name}" if len(sessions) > 1 else "Stats", icon='INFO')
            col = box.column(align=True)
            for label, text in jobs.stats_lines(se):
                split = col.split(factor=0.4, align=True)
                split.label(text=label)
                split.label(text=text)


class CHARKIT_PT_preview_io(_Sub, bpy.types.Panel):
    bl_label = "Preview & IO"

    def draw(self, context):
        s = context.scene.charkit
        layout = self.layout
        col = layout.column()
        row = col.row(align=True)
        row.operator("charkit.create_preview", icon='HIDE_OFF')
        row.operator("charkit.refresh_preview", text="", icon='FILE_REFRESH')
        col.prop(s, "auto_refresh")
        col.separator()
        col.prop(s, "pose_library_path")
        col.operator("charkit.bake_shape_keys", icon='SHAPEKEY_DATA')
        col.separator()
        col.prop(s, "model_path")
        row = col.row(align=True)
        row.operator("charkit.export_model", icon='EXPORT')
        row.operator("charkit.import_model", icon='IMPORT')


class CHARKIT_PT_engine(_Sub, bpy.types.Panel):
    bl_label = "Engine Bridge"

    def draw(self, context):
        s = context.scene.charkit
        col = self.layout.column()
        col.prop(s, "network_path")
        col.prop(s, "clamp_imported")
        col.operator("charkit.import_network", icon='IMPORT')
        col.separator()
        col.prop(s, "nmn_path")
        sessions = _sessions(context)
        row = col.row()
        row.enabled = any(se is not None and se.model is not None for _n, se in sessions)
        row.operator("charkit.export_nmn", icon='EXPORT')
        for name, se in sessions:
            if se is not None and se.model is not None:
                why = jobs.nmn_as_is(se.model)
                tag = f"{name}: " if len(sessions) > 1 else ""
                col.label(text=tag + ("Writes the previewed network as it is" if not why
                                      else "Retrains in the engine layout: " + why), icon='INFO')


def _wrap(text, width):
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return lines


classes = (CHARKIT_UL_bones, CHARKIT_UL_curves, CHARKIT_UL_morphs, CHARKIT_UL_meshes, CHARKIT_PT_main, CHARKIT_PT_setup,
           CHARKIT_PT_inputs, CHARKIT_PT_training, CHARKIT_PT_model, CHARKIT_PT_preview_io,
           CHARKIT_PT_engine)


register, unregister = bpy.utils.register_classes_factory(classes)

"""The BEM panel (3D View > Sidebar > BEM): the imported package, its
options (buttons that show and hide what each choice selects), its sliders
with their tick ranges, its drivers, and the validation report grouped by
code with a button per issue that selects the object concerned; while an
import, validation or pack runs, its progress."""

import json
import textwrap

import bpy

from . import _ck, bem_scene


class CHARKIT_PT_bem(bpy.types.Panel):
    bl_idname = "CHARKIT_PT_bem"
    bl_label = "BEM Package"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "BEM"

    def draw(self, context):
        layout = self.layout
        err = _ck.error()
        if err:
            layout.label(text="charkit is not loaded", icon="ERROR")
            layout.label(text=err[:120])
            return
        wm = context.window_manager
        if wm.charkit_bem_busy:  # an import, validation or pack running in steps
            box = layout.box()
            box.label(text=wm.charkit_bem_busy, icon="TIME")
            if hasattr(box, "progress"):  # 4.0+
                box.progress(factor=wm.charkit_bem_progress / 100.0,
                             text="%d%%" % wm.charkit_bem_progress)
            else:
                row = box.row()
                row.enabled = False
                row.prop(wm, "charkit_bem_progress", slider=True)
            box.label(text="Esc cancels: nothing is changed")
            return
        row = layout.row(align=True)
        row.operator("charkit.bem_import", text="Import", icon="IMPORT")
        root = bem_scene.find_root(context)
        if root is None:
            layout.label(text="Import a package, or select one of its objects")
            return
        row.operator("charkit.bem_validate", text="Validate", icon="CHECKMARK").root = root.name
        row.operator("charkit.bem_pack", text="Pack", icon="EXPORT").root = root.name
        box = layout.box()
        box.label(text=root.name, icon="PACKAGE")
        box.label(text="BEM %s from %s" % (root.get("bem_version", "?"),
                                           bpy.path.basename(root.get("bem_source", ""))))
        text = bpy.data.texts.get(root.get("bem_manifest_text", ""))
        try:
            manifest = json.loads(text.as_string()) if text else {}
        except ValueError:
            manifest = {}
        chosen = dict(p.split(":", 1) for p in root.get("bem_options", "").split("&") if ":" in p)
        for g in manifest.get("option_groups", []):
            col = layout.column(align=True)
            col.label(text="%s (%s)" % (g.get("name", g["id"]), g["id"]))
            row = col.row(align=True)
            for c in g.get("choices", []):
                current = chosen.get(g["id"], g.get("default")) == c["id"]
                op = row.operator("charkit.bem_set_option", text=c.get("name", c["id"]),
                                  depress=current)
                op.root, op.group, op.choice = root.name, g["id"], c["id"]
        appearances = manifest.get("appearances", [])
        if appearances:  # BEM 1.0: one appearance id is the whole setting (§5)
            col = layout.column(align=True)
            col.label(text="Appearance")
            row = col.row(align=True)
            current = root.get("bem_options", "") or manifest.get("default_appearance_id", "")
            for a in appearances:
                op = row.operator("charkit.bem_set_option", text=a.get("name", a["id"]),
                                  depress=current == a["id"])
                op.root, op.group, op.choice = root.name, "", a["id"]
        params = manifest.get("parameters", [])
        if params:
            ticks = dict(p.split(":", 1) for p in root.get("bem_parameters", "").split("&")
                         if ":" in p)
            col = layout.column(align=True)
            col.label(text="Sliders", icon="SHAPEKEY_DATA")
            for p in params:
                tick = ticks.get(p["id"], str(p.get("default", 0)))
                col.label(text="%s: %s  (%d..%d, step %d)" % (p.get("name", p["id"]), tick,
                                                             p["min"], p["max"], p.get("step", 1)))
                row = col.row(align=True)
                try:
                    now = int(tick)
                except ValueError:
                    now = int(p.get("default", p["min"]))
                step = max(1, int(p.get("step", 1)))
                lo, hi = int(p["min"]), int(p["max"])
                for label, value in (("min", lo), ("-%d" % step, max(lo, now - step)),
                                     ("default", p.get("default", lo)),
                                     ("+%d" % step, min(hi, now + step)), ("max", hi)):
                    op = row.operator("charkit.bem_set_option", text=label)
                    op.root, op.parameter, op.tick = root.name, p["id"], int(value)
        drivers = manifest.get("drivers", [])
        if drivers:
            col = layout.column(align=True)
            col.label(text="Drivers", icon="DRIVER")
            for d in drivers:
                binds = ", ".join("%s %s" % (b.get("type", ""), b.get("target", b.get("property", "")))
                                  for b in d.get("bindings", []))
                col.label(text="%s (%s): %s" % (d.get("id", ""), d.get("waveform", ""), binds))
        issues = context.window_manager.charkit_bem_issues
        if len(issues):
            box = layout.box()
            ok = context.window_manager.charkit_bem_report_ok
            box.label(text="Valid" if ok else "Not valid", icon="CHECKMARK" if ok else "ERROR")
            by_code = {}
            for k, it in enumerate(issues):
                by_code.setdefault(it.code, []).append((k, it))
            for code in sorted(by_code):
                items = by_code[code]
                section = items[0][1].section
                box.label(text="%s %s (%d)" % (code, section, len(items)))
                for k, it in items[:20]:
                    col = box.column(align=True)
                    icon = "ERROR" if it.severity == "error" else "INFO"
                    # Labels do not wrap: the message in lines of the panel's width.
                    width = max(30, int(context.region.width / 7.5)) if context.region else 60
                    for n, line in enumerate(textwrap.wrap(it.message, width)[:6]):
                        col.label(text=line, icon=icon if n == 0 else "BLANK1")
                    if it.obj:
                        col.operator("charkit.bem_select_issue", text="Select %s" % it.obj,
                                     icon="RESTRICT_SELECT_OFF").index = k


def _menu_import(self, context):
    self.layout.operator("charkit.bem_import", text="BEM package (.bem, .zip)")


def _menu_export(self, context):
    self.layout.operator("charkit.bem_pack", text="BEM package (.bem, .zip)")


def register():
    bpy.utils.register_class(CHARKIT_PT_bem)
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)


def unregister():
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)
    bpy.utils.unregister_class(CHARKIT_PT_bem)

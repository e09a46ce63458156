"""Operators of the BEM panel: import a package, choose its options and
slider ticks, validate the scene and pack it back into a package. Every
operator runs from scripts with EXEC_DEFAULT (file paths as properties);
the work is charkit's (charkit.bem), the scene work bem_scene.py's.
Import, validate and pack run in steps: from the UI a few at a time, with
their progress shown and Esc to cancel (_Stepped). docs/blender.md, "BEM
packages", describes them.
"""

import os
import time

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty,
                       IntProperty, StringProperty)
from bpy.types import Operator, PropertyGroup

from . import _ck, bem_scene

_packages = {}  # source path -> charkit.bem.BemPackage (reopened when the file changes)


def open_package(path):
    ck = _ck.get()
    key = os.path.abspath(path)
    stamp = os.stat(key).st_mtime_ns
    held = _packages.get(key)
    if held is None or held[0] != stamp:
        _packages[key] = (stamp, ck.bem.BemPackage.open(key))
    return _packages[key][1]


def clear_packages():
    for _stamp, pkg in _packages.values():
        pkg.close()
    _packages.clear()


def _error_text(e):
    code = getattr(e, "code", "")
    loc = getattr(e, "location", "")
    msg = getattr(e, "message", "") or str(e)
    return "%s%s%s" % (code + ": " if code else "", msg, " (at %s)" % loc if loc else "")


def _root(context, name):
    root = bem_scene.find_root(context, name)
    if root is None:
        raise LookupError("no BEM package in the scene%s: import one first (charkit.bem_import)"
                          % (" named '%s'" % name if name else ""))
    return root


class BemIssue(PropertyGroup):
    code: StringProperty()
    severity: StringProperty()
    section: StringProperty()
    location: StringProperty()
    message: StringProperty()
    obj: StringProperty(description="The object the issue concerns (may be empty)")


def _object_of(location, objects, gltf=False):
    """The object a location concerns: a glTF pointer /meshes/k (the k-th
    packed mesh, gltf=True) or a manifest pointer /meshes/N (package mesh N)."""
    if not location.startswith("/meshes/"):
        return ""
    head = location.split("/")[2]
    if not head.isdigit():
        return ""
    k = int(head)
    if gltf:
        return objects[k].name if k < len(objects) else ""
    return next((o.name for o in objects if int(o["bem_mesh"]) == k), "")


def _store_report(context, report, objects, root):
    wm = context.window_manager
    wm.charkit_bem_issues.clear()
    err = report.get("error")
    if err:
        it = wm.charkit_bem_issues.add()
        it.code, it.severity = err.get("code", ""), "error"
        it.location, it.message = err.get("location", ""), err.get("message", "")
        # The packer's errors about the scene carry pointers into the packed
        # meshes (/meshes/k: the k-th object), about the template manifest
        # pointers (docs/bem/pack.md).
        it.obj = _object_of(it.location, objects,
                            gltf=it.code not in ("BEM_PACK_TEMPLATE", "BEM_PACK_DRAW_MISSING"))
    for w in report.get("warnings", []):
        it = wm.charkit_bem_issues.add()
        it.code, it.severity = w.get("code", ""), "warning"
        it.location, it.message = w.get("pointer", ""), w.get("message", "")
        it.obj = _object_of(it.location, objects, gltf=w.get("code") != "BEM_PACK_DRAW_KEPT")
    issues = report.get("issues", {})
    for m in issues.get("messages", []) if isinstance(issues, dict) else []:
        it = wm.charkit_bem_issues.add()
        it.code = m.get("code", "")
        it.severity = str(m.get("severityName", ""))
        it.section = m.get("section", "")
        it.location = m.get("pointer", "") or (
            "byte %d" % m["offset"] if "offset" in m else "")
        it.message = m.get("message", "")
        it.obj = _object_of(it.location, objects)
    wm.charkit_bem_report_ok = bool(report.get("ok"))


def _set_progress(context, what, fraction):
    """The progress the panel and the status bar show (what "" when idle)."""
    wm = context.window_manager
    wm.charkit_bem_busy = what
    wm.charkit_bem_progress = 100.0 * fraction
    if context.workspace is not None:
        context.workspace.status_text_set(
            "charkit: %s, %d%%  (Esc: cancel)" % (what, 100 * fraction) if what else None)
    screen = context.screen
    for area in screen.areas if screen is not None else ():
        if area.type == "VIEW_3D":
            area.tag_redraw()


class _Stepped:
    """Long work in steps: `_steps(context)` returns a generator that yields
    (done, total, what) and returns a value, `_done(context, value)` ends
    the operator with it. From a script (EXEC_DEFAULT, or no window) the
    steps run to their end at once. From the UI (invoke) they run a few per
    timer tick: the progress shows on the cursor, in the status bar and in
    the panel, and Esc cancels. A cancel closes the generator, which removes
    what it made (import) or has made nothing (validate, pack: the package
    is written only by the last step)."""

    interactive: BoolProperty(options={"HIDDEN", "SKIP_SAVE"},
                              description="Run in steps with progress, Esc cancels (the UI's way)")
    browsed: BoolProperty(options={"HIDDEN", "SKIP_SAVE"})

    def _browse(self, context):
        """invoke of a file operator: the file browser (always, as Blender's
        importers do, the last path only its default) unless `interactive`
        says the file is chosen (_hand_over); execute then hands over."""
        if self.interactive:
            return self.execute(context)
        self.browsed = True
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def _hand_over(self, context):
        """Called by execute after the file browser: a modal run started
        there gets no timer events until the browser's window is gone, so
        the stepped run starts from a timer as a fresh invoke with the
        chosen file; this call itself changes nothing."""
        win = context.window
        idname = type(self).bl_idname  # "charkit.bem_import" (the instance's is the C name)
        idname = idname.split(".") if "." in idname else [
            idname.split("_OT_")[0].lower(), idname.split("_OT_")[1]]
        kwargs = {k: getattr(self, k) for k in self.__annotations__
                  if k not in ("interactive", "browsed", "filter_glob")}

        def start():
            if win is None or win not in bpy.context.window_manager.windows[:]:
                return None
            area = next((a for a in win.screen.areas if a.type == "VIEW_3D"), None)
            with bpy.context.temp_override(window=win, area=area):
                getattr(getattr(bpy.ops, idname[0]), idname[1])("INVOKE_DEFAULT", interactive=True,
                                                                **kwargs)
            return None

        bpy.app.timers.register(start, first_interval=0.0)
        return {"CANCELLED"}

    def _fail(self, e):
        if isinstance(e, bem_scene.GatherError):
            self.report({"ERROR"}, "charkit: object %s" % e)
        else:
            self.report({"ERROR"}, "charkit: %s" % _error_text(e))  # names the file itself
        return {"CANCELLED"}

    def _run(self, context):
        try:
            steps = self._steps(context)
        except Exception as e:
            return self._fail(e)
        wm = context.window_manager
        if not self.interactive or context.window is None:
            wm.progress_begin(0, 1000)
            try:
                value = bem_scene.run_steps(
                    steps, lambda done, total, what: wm.progress_update(1000 * done // max(total, 1)))
            except Exception as e:
                return self._fail(e)
            finally:
                wm.progress_end()
            return self._done(context, value)
        self._gen = steps
        wm.progress_begin(0, 1000)
        _set_progress(context, self.bl_label, 0.0)
        self._timer = wm.event_timer_add(0.02, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def _stop(self, context):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        _set_progress(context, "", 0.0)

    def modal(self, context, event):
        if event.type == "ESC":
            try:
                self._gen.close()  # the generator's cleanup runs here
            finally:
                self._stop(context)
            self.report({"WARNING"}, "charkit: %s cancelled: nothing changed" % self.bl_label)
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"RUNNING_MODAL"}  # the scene stays as the steps expect it
        t0 = time.perf_counter()
        try:
            while time.perf_counter() - t0 < 0.05:
                done, total, what = next(self._gen)
                fraction = done / max(total, 1)
                context.window_manager.progress_update(int(1000 * fraction))
                _set_progress(context, "%s: %s" % (self.bl_label, what), fraction)
        except StopIteration as stop:
            self._stop(context)
            return self._done(context, stop.value)
        except Exception as e:
            self._stop(context)
            return self._fail(e)
        return {"RUNNING_MODAL"}


def _pack_steps(context, root_name, template, output, to, spec_path, texture_formats):
    """Gathers the scene and packs it (output None: validate only), in steps:
    one per object gathered, the packing (and writing) last. Returns the
    report and the objects packed."""
    ck = _ck.get()
    root = _root(context, root_name)
    template = template or root.get("bem_source", "")
    if not template or not os.path.exists(template):
        raise FileNotFoundError("the template package '%s' is not there: give template=" % template)
    spec = None
    if spec_path:
        import json
        with open(bpy.path.abspath(spec_path), "rb") as f:
            spec = json.loads(f.read().decode("utf-8"))
    formats = {}
    for item in [s.strip() for s in texture_formats.split(",") if s.strip()]:
        key, eq, fmt = item.partition("=")
        if not eq or not key or not fmt:
            raise ValueError("texture_formats takes KEY=FORMAT[,KEY=FORMAT...], not '%s'" % item)
        formats[key.strip()] = fmt.strip()
    meshes, images, objects = yield from bem_scene.gather_steps(root)
    report = ck.bem.pack(template, meshes, output=output, images=images,
                         to=to or None, spec=spec, texture_formats=formats)
    _store_report(context, report, objects, root)
    return report, objects


class CHARKIT_OT_bem_import(_Stepped, Operator):
    """Import a BEM package (.bem or .zip): every mesh and draw, options,
    sliders, textures, skins and drivers"""
    bl_idname = "charkit.bem_import"
    bl_label = "Import BEM Package"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.bem;*.zip", options={"HIDDEN"})

    def invoke(self, context, event):
        return self._browse(context)

    def execute(self, context):
        if self.browsed:
            return self._hand_over(context)
        return self._run(context)

    def _steps(self, context):
        pkg = open_package(bpy.path.abspath(self.filepath))
        return bem_scene.import_steps(context, pkg)

    def _done(self, context, root):
        n = len(bem_scene.root_objects(root))
        self.report({"INFO"}, "charkit: %s: %d meshes in '%s'"
                    % (os.path.basename(bpy.path.abspath(self.filepath)), n, root.name))
        return {"FINISHED"}


class CHARKIT_OT_bem_set_option(Operator):
    """Choose an option of the package: shows the meshes and draws it selects"""
    bl_idname = "charkit.bem_set_option"
    bl_label = "Set BEM Option"
    bl_options = {"REGISTER", "UNDO"}

    root: StringProperty(description="The package's collection (default: the active one)")
    group: StringProperty(description="Option group id (empty: a BEM 1.0 appearance)")
    choice: StringProperty(description="Choice id, or the 1.0 appearance id")
    parameter: StringProperty(description="A slider id instead of a group")
    tick: IntProperty()

    def execute(self, context):
        try:
            root = _root(context, self.root)
            key = "bem_parameters" if self.parameter else "bem_options"
            name = self.parameter or self.group
            value = str(self.tick) if self.parameter else self.choice
            old = root.get(key, "")
            if not name:  # BEM 1.0: the settings string is an appearance id (§5)
                root[key] = value
            else:
                pairs = [p for p in old.split("&") if p]
                pairs = [p for p in pairs if p.split(":", 1)[0] != name] + ["%s:%s" % (name, value)]
                root[key] = "&".join(pairs)
            try:
                sel = bem_scene.apply_selection(root, open_package(root["bem_source"]))
            except Exception:
                root[key] = old
                raise
        except Exception as e:
            self.report({"ERROR"}, "charkit: %s" % _error_text(e))
            return {"CANCELLED"}
        for w in sel.get("warnings", []):
            self.report({"WARNING"}, "charkit: %s: %s" % (w["code"], w["message"]))
        return {"FINISHED"}


class CHARKIT_OT_bem_validate(_Stepped, Operator):
    """Pack the scene in memory and validate the result: the report, by code"""
    bl_idname = "charkit.bem_validate"
    bl_label = "Validate BEM Package"

    root: StringProperty(description="The package's collection (default: the active one)")
    template: StringProperty(subtype="FILE_PATH", description="Default: the imported package")
    spec: StringProperty(subtype="FILE_PATH", description="Spec file (JSON), optional")
    texture_formats: StringProperty(description="KEY=FORMAT,... for edited textures")

    def invoke(self, context, event):
        self.interactive = True
        return self.execute(context)

    def execute(self, context):
        return self._run(context)

    def _steps(self, context):
        return _pack_steps(context, self.root, bpy.path.abspath(self.template), None, "",
                           self.spec, self.texture_formats)

    def _done(self, context, value):
        report, _objects = value
        issues = context.window_manager.charkit_bem_issues
        errors = sum(1 for i in issues if i.severity == "error")
        level = {"INFO"} if report.get("ok") else {"ERROR"}
        self.report(level, "charkit: %s, %d issues (%d errors)"
                    % ("valid" if report.get("ok") else "not valid", len(issues), errors))
        return {"FINISHED"}


class CHARKIT_OT_bem_pack(_Stepped, Operator):
    """Pack the scene into a BEM package through charkit's packer, validated
    before it is written"""
    bl_idname = "charkit.bem_pack"
    bl_label = "Pack BEM Package"

    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.bem;*.zip", options={"HIDDEN"})
    root: StringProperty(description="The package's collection (default: the active one)")
    template: StringProperty(subtype="FILE_PATH", description="Default: the imported package")
    spec: StringProperty(subtype="FILE_PATH", description="Spec file (JSON), optional")
    texture_formats: StringProperty(description="KEY=FORMAT,... for edited textures")
    container: EnumProperty(items=[("AUTO", "By extension", ""), ("bem", "Binary", ""),
                                   ("zip", "ZIP", "")], default="AUTO")

    def invoke(self, context, event):
        return self._browse(context)

    def execute(self, context):
        out = bpy.path.abspath(self.filepath)
        if not out:
            self.report({"ERROR"}, "charkit: give filepath= (the package to write)")
            return {"CANCELLED"}
        to = "" if self.container == "AUTO" else self.container
        if not to and not out.lower().endswith((".bem", ".zip")):
            self.report({"ERROR"}, "charkit: the output must end in .bem or .zip (or set container)")
            return {"CANCELLED"}
        if self.browsed:
            return self._hand_over(context)
        return self._run(context)

    def _steps(self, context):
        to = "" if self.container == "AUTO" else self.container
        return _pack_steps(context, self.root, bpy.path.abspath(self.template),
                           bpy.path.abspath(self.filepath), to, self.spec, self.texture_formats)

    def _done(self, context, value):
        report, _objects = value
        out = bpy.path.abspath(self.filepath)
        if not report.get("ok"):
            err = report.get("error", {})
            issues = context.window_manager.charkit_bem_issues
            obj = next((i.obj for i in issues if i.obj), "")
            self.report({"ERROR"}, "charkit: nothing written: %s: %s%s"
                        % (err.get("code", ""), err.get("message", ""),
                           " (object %s)" % obj if obj else ""))
            return {"CANCELLED"}
        self.report({"INFO"}, "charkit: %s: BEM %s, %d bytes" % (out, report.get("version"),
                                                               report.get("bytes", 0)))
        return {"FINISHED"}


class CHARKIT_OT_bem_select_issue(Operator):
    """Select the object this issue concerns"""
    bl_idname = "charkit.bem_select_issue"
    bl_label = "Select Object of Issue"
    bl_options = {"REGISTER", "UNDO"}

    index: IntProperty()

    def execute(self, context):
        issues = context.window_manager.charkit_bem_issues
        if not 0 <= self.index < len(issues) or not issues[self.index].obj:
            self.report({"WARNING"}, "charkit: this issue concerns no object")
            return {"CANCELLED"}
        obj = bpy.data.objects.get(issues[self.index].obj)
        if obj is None:
            self.report({"WARNING"}, "charkit: object %s is gone" % issues[self.index].obj)
            return {"CANCELLED"}
        for o in context.view_layer.objects:
            o.select_set(False)
        if obj.name in context.view_layer.objects:
            obj.select_set(True)
        context.view_layer.objects.active = obj
        return {"FINISHED"}


CLASSES = (BemIssue, CHARKIT_OT_bem_import, CHARKIT_OT_bem_set_option, CHARKIT_OT_bem_validate,
           CHARKIT_OT_bem_pack, CHARKIT_OT_bem_select_issue)


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)
    bpy.types.WindowManager.charkit_bem_issues = CollectionProperty(type=BemIssue)
    bpy.types.WindowManager.charkit_bem_report_ok = BoolProperty(default=False)
    bpy.types.WindowManager.charkit_bem_busy = StringProperty(
        description="The BEM work running now (empty when none)")
    bpy.types.WindowManager.charkit_bem_progress = FloatProperty(
        name="Progress", min=0.0, max=100.0, subtype="PERCENTAGE")


def unregister():
    del bpy.types.WindowManager.charkit_bem_progress
    del bpy.types.WindowManager.charkit_bem_busy
    del bpy.types.WindowManager.charkit_bem_report_ok
    del bpy.types.WindowManager.charkit_bem_issues
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
    clear_packages()

"""The BEM panel's operators as the UI runs them: in a Blender window (under
Xvfb), invoked, stepped by a modal timer with their progress shown, and
cancelled with Esc.

Run by tests/blender/deformer_addon_check.sh LIB OUT bem_ui_test.py
CHARKIT_BEM_UI_TEST window, which starts Blender with a window under
xvfb-run and `--enable-event-simulate` (Esc is sent with
Window.event_simulate). A timer walks through the phases, one each half second:
- an import invoked from the UI runs modally and makes the package;
- an import cancelled with Esc leaves the file as it was, progress cleared;
- Validate invoked from the UI runs modally and reports the scene valid;
- a pack invoked from the UI writes a package valid by charkit's reader;
  a pack cancelled with Esc writes nothing.
Import and pack are invoked with `interactive=True`, as the add-on itself
invokes them once the file browser has given the file (the browser itself
is not driven). (bem_addon_test.py checks every step's cancel headless;
this test checks that the UI path reaches the same code.) Prints "CHARKIT_BEM_UI_TEST OK"
and quits; a failure prints "CHARKIT_BEM_UI_TEST FAILED" and exits 1.
"""

import os
import sys
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import ROOT, T0, arg, check, log  # noqa: E402

import bpy  # noqa: E402

OUT = arg("--out", os.path.join(ROOT, "build", "blender-bem-ui"))
EXAMPLES = os.path.join(ROOT, "tests", "data", "examples")
MARKER = "CHARKIT_BEM_UI_TEST"


def roots():
    return sorted(c.name for c in bpy.data.collections if "bem_source" in c)


def census():
    return (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.collections),
            len(bpy.data.images), len(bpy.data.materials), len(bpy.data.texts))


def in_view3d(op, **kw):
    """Calls op as a click in the 3D View does (INVOKE_DEFAULT)."""
    win = bpy.context.window_manager.windows[0]
    area = next(a for a in win.screen.areas if a.type == "VIEW_3D")
    region = next(r for r in area.regions if r.type == "WINDOW")
    with bpy.context.temp_override(window=win, area=area, region=region):
        return op("INVOKE_DEFAULT", **kw)


def esc():
    win = bpy.context.window_manager.windows[0]
    win.event_simulate(type="ESC", value="PRESS")
    win.event_simulate(type="ESC", value="RELEASE")


STATE = {"phase": 0}


def phases():
    wm = bpy.context.window_manager
    from charkit_deformer import _ck
    ck = _ck.get()
    p = STATE["phase"]
    if p == 0:
        r = in_view3d(bpy.ops.charkit.bem_import, interactive=True,
                      filepath=os.path.join(EXAMPLES, "example-1.5-drivers.bem"))
        check(r == {"RUNNING_MODAL"}, f"import from the UI runs modally: {r}")
    elif p == 1:
        check(len(roots()) == 1 and wm.charkit_bem_busy == "", f"imported: {roots()}")
        log("import from the UI: modal, finished")
        STATE["census"] = census()
        r = in_view3d(bpy.ops.charkit.bem_import, interactive=True,
                      filepath=os.path.join(EXAMPLES, "example-1.0.bem"))
        check(r == {"RUNNING_MODAL"}, f"second import: {r}")
        check(wm.charkit_bem_busy != "", "the progress is shown while it runs")
        esc()
    elif p == 2:
        check(census() == STATE["census"] and len(roots()) == 1,
              f"Esc cancelled the import: {census()} vs {STATE['census']}, {roots()}")
        check(wm.charkit_bem_busy == "", "progress cleared after the cancel")
        log("import cancelled with Esc: nothing changed")
        r = in_view3d(bpy.ops.charkit.bem_validate, root=roots()[0])
        check(r == {"RUNNING_MODAL"}, f"validate from the UI runs modally: {r}")
    elif p == 3:
        check(wm.charkit_bem_report_ok and wm.charkit_bem_busy == "", "validated: valid")
        log("validate from the UI: valid")
        r = in_view3d(bpy.ops.charkit.bem_pack, interactive=True,
                      filepath=os.path.join(OUT, "ui-packed.bem"), root=roots()[0])
        check(r == {"RUNNING_MODAL"}, f"pack from the UI runs modally: {r}")
    elif p == 4:
        out = os.path.join(OUT, "ui-packed.bem")
        check(os.path.exists(out) and ck.bem_validate(out)["valid"], "packed from the UI: valid")
        log("pack from the UI: written, valid")
        r = in_view3d(bpy.ops.charkit.bem_pack, interactive=True,
                      filepath=os.path.join(OUT, "ui-cancelled.bem"), root=roots()[0])
        check(r == {"RUNNING_MODAL"}, f"second pack: {r}")
        esc()
    elif p == 5:
        check(not os.path.exists(os.path.join(OUT, "ui-cancelled.bem")),
              "a pack cancelled with Esc writes nothing")
        check(wm.charkit_bem_busy == "", "progress cleared")
        log("pack cancelled with Esc: nothing written")
        return None
    STATE["phase"] += 1
    return 0.5


def tick():
    try:
        if phases() is None:
            print(f"{MARKER} OK ({time.perf_counter() - T0:.1f}s)", flush=True)
            bpy.ops.wm.quit_blender()
            return None
        return 0.5
    except Exception:
        traceback.print_exc()
        print(f"{MARKER} FAILED", flush=True)
        os._exit(1)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in ("ui-packed.bem", "ui-cancelled.bem"):
        if os.path.exists(os.path.join(OUT, f)):
            os.remove(os.path.join(OUT, f))
    import charkit_deformer
    charkit_deformer.register()
    bpy.app.timers.register(tick, first_interval=1.0)


try:
    main()
except Exception:
    traceback.print_exc()
    print(f"{MARKER} FAILED", flush=True)
    os._exit(1)

"""Screenshots of the add-on's BEM panel for docs/blender.md.

Run by scripts/blender-screenshots, in a real Blender window (Xvfb, not
--background, which draws no UI):
  blender --factory-startup --enable-event-simulate --python-exit-code 1 \
      --python tests/blender/screenshots_bem.py -- --out DIR [--examples DIR]
with CHARKIT_LIBRARY pointing at libcharkit_c.so. Imports
example-1.5-drivers.bem, opens the 3D View's sidebar on the BEM tab and
writes, cropped to what matters:
  bem-panel.png       the viewport with the package and the BEM panel
                      (options, sliders, drivers) after the import;
  bem-validate.png    the panel after Validate, on a package whose material
                      was renamed to one the package lacks: the report
                      grouped by code, a button selecting the object;
  bem-pack.png        Pack's file browser with its settings (template, spec,
                      texture formats, container).
The sidebar's tab and width cannot be set from Python in Blender 3.4, so the
script drags the sidebar's edge and presses Ctrl+Tab over it (simulated
events) until the BEM panel draws. Pictures are cropped with numpy and
written as 8-bit RGB PNGs (no Pillow needed). Prints
"CHARKIT_BEM_SCREENSHOTS OK" last; any failure exits 1.
"""

import os
import shutil
import struct
import sys
import tempfile
import time
import traceback
import zlib

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
for p in (os.path.join(ROOT, "python", "blender"), os.path.join(ROOT, "python")):
    if p not in sys.path:
        sys.path.insert(0, p)

import bpy  # noqa: E402
import mathutils  # noqa: E402
import numpy as np  # noqa: E402

ARGS = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
OUT = os.path.abspath(ARGS[ARGS.index("--out") + 1] if "--out" in ARGS
                      else os.path.join(ROOT, "docs", "blender"))
EXAMPLES = (ARGS[ARGS.index("--examples") + 1] if "--examples" in ARGS
            else os.path.join(ROOT, "tests", "data", "examples"))
# The package is imported from, and Pack's browser opens in, a scratch folder
# whose name shows in the pictures (not the checkout's path); the raw window
# shots go there too. Removed at the end.
WORK = os.path.join(tempfile.gettempdir(), "charkit-bem-screenshots")
PACKAGE = os.path.join(WORK, "example-1.5-drivers.bem")
WIDTH = 520  # the sidebar's width in the pictures (pixels)
T0 = time.perf_counter()
drawn = {"bem": 0}


def log(msg):
    print(f"[{time.perf_counter() - T0:7.2f}s] {msg}", flush=True)


def fail(msg):
    raise AssertionError(msg)


def write_png(path, rgb):
    """rgb: uint8 (h, w, 3), rows top first. Filter 'Sub' on every row
    (UI pictures are mostly flat runs), zlib level 9."""
    h, w, _ = rgb.shape
    sub = rgb.astype(np.int16)
    sub[:, 1:] -= rgb[:, :-1]
    rows = np.concatenate([np.ones((h, 1), np.uint8),
                           (sub & 0xFF).astype(np.uint8).reshape(h, w * 3)], axis=1)

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)))
        f.write(chunk(b"IEND", b""))


def window_pixels(win, name):
    """Screenshot of the whole window as uint8 RGB, rows bottom first (the
    window's own y axis, as Area.y and Region.y count)."""
    path = os.path.join(WORK, name + "-window.png")
    with bpy.context.temp_override(window=win):
        r = bpy.ops.screen.screenshot(filepath=path)
    if r != {"FINISHED"} or not os.path.exists(path):
        fail(f"screen.screenshot: {r}")
    img = bpy.data.images.load(path)
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    return (np.clip(px.reshape(h, w, 4)[:, :, :3], 0, 1) * 255 + 0.5).astype(np.uint8)


def save_crop(win, name, x, y, w, h, trim=0):
    """Crops window coordinates (x, y bottom left) out of a fresh screenshot.
    trim: the rows below the last one with text (a pixel brighter than the
    dark theme's backgrounds) are cut, but for `trim` of them, judged on all
    but the rightmost 40 columns (the sidebar's tabs)."""
    px = window_pixels(win, name)
    x, y = max(0, x), max(0, y)
    crop = px[y:y + h, x:x + w][::-1]
    if trim:
        body = crop[:, :max(1, crop.shape[1] - 40)]
        busy = np.nonzero(body.max(axis=(1, 2)) > 110)[0]
        if len(busy):
            crop = crop[:min(crop.shape[0], busy[-1] + 1 + trim)]
    path = os.path.join(OUT, name + ".png")
    write_png(path, np.ascontiguousarray(crop))
    log(f"{name}.png: {crop.shape[1]}x{crop.shape[0]}, {os.path.getsize(path)} bytes")


def view3d(win):
    areas = [a for a in win.screen.areas if a.type == "VIEW_3D"]
    if not areas:
        fail("no 3D View in the window")
    area = max(areas, key=lambda a: a.width * a.height)
    region = {r.type: r for r in area.regions}
    return area, region["WINDOW"], region["UI"]


def bem_root():
    roots = [c for c in bpy.data.collections if c.get("bem_source")]
    if len(roots) != 1:
        fail(f"one imported package expected, found {[c.name for c in roots]}")
    return roots[0]


def record_draw(self, context):
    drawn["bem"] += 1


def setup():
    """Runs before the window's first draw: an empty scene, the add-on, the
    package imported, the sidebar shown."""
    prefs = bpy.context.preferences
    prefs.view.show_splash = False
    prefs.view.filebrowser_display_type = "WINDOW"  # Pack's browser in a window of its own
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
    import charkit_deformer
    charkit_deformer.register()
    from charkit_deformer import _ck
    if _ck.error():
        fail(f"charkit is not loaded: {_ck.error()}")
    panel = getattr(bpy.types, "CHARKIT_PT_bem", None)
    if panel is None:
        fail("the add-on has no CHARKIT_PT_bem panel")
    panel.append(record_draw)  # tells when the BEM tab is the one drawn
    r = bpy.ops.charkit.bem_import("EXEC_DEFAULT", filepath=PACKAGE)
    if r != {"FINISHED"}:
        fail(f"bem_import: {r}")
    log(f"imported {PACKAGE}: collection {bem_root().name}")


class Steps:
    """The window-side work, one step per timer call, each waiting for the
    window to have drawn what the previous one changed."""

    def __init__(self):
        self.steps = self.run()

    def __call__(self):
        try:
            return next(self.steps)
        except StopIteration:
            shutil.rmtree(WORK, ignore_errors=True)
            log("CHARKIT_BEM_SCREENSHOTS OK")
            bpy.ops.wm.quit_blender()
        except Exception:
            traceback.print_exc()
            sys.stdout.flush()
            os._exit(1)
        return None

    def run(self):
        wm = bpy.context.window_manager
        win = wm.windows[0]
        area, main, ui = view3d(win)
        space = area.spaces.active
        space.show_region_ui = True
        space.shading.type = "SOLID"
        space.shading.color_type = "TEXTURE"
        space.overlay.show_floor = True
        yield 1.0

        # A wider sidebar (Blender 3.4 has no API for a region's width):
        # drag its left edge, one event per timer call. The edge's action
        # zone lies inside the region when the sidebar overlaps the viewport.
        # Done before Ctrl+Tab, after which the drag was seen to do nothing.
        for off in (6, 8, 10, 6, 8, 10, 4, 12):
            area, main, ui = view3d(win)
            if ui.width >= WIDTH - 20:
                break
            x, y = ui.x + off, ui.y + ui.height - 100  # beside the panel, not below it
            win.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
            yield 0.3
            win.event_simulate(type="LEFTMOUSE", value="PRESS", x=x, y=y)
            yield 0.3
            dx = WIDTH - ui.width
            for f in (0.1, 0.3, 0.6, 1.0):
                win.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x - int(f * dx), y=y)
                yield 0.1
            win.event_simulate(type="LEFTMOUSE", value="RELEASE", x=x - dx, y=y)
            yield 0.5
            log(f"drag at +{off}: sidebar {view3d(win)[2].width} px wide")
        log(f"sidebar {view3d(win)[2].width} px wide")
        # The BEM tab: Ctrl+Tab over the sidebar cycles its tabs.
        for attempt in range(12):
            area, main, ui = view3d(win)
            drawn["bem"] = 0
            ui.tag_redraw()
            yield 0.4
            if drawn["bem"]:
                log(f"BEM tab shown after {attempt} Ctrl+Tab")
                break
            # Over the tab strip at the sidebar's right edge, near its top:
            # the sidebar's empty part passes events to the viewport.
            x, y = ui.x + ui.width - 10, ui.y + ui.height - 40
            win.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
            win.event_simulate(type="TAB", value="PRESS", x=x, y=y, ctrl=True)
            win.event_simulate(type="TAB", value="RELEASE", x=x, y=y, ctrl=True)
            yield 0.4
        else:
            window_pixels(win, "no-bem-tab")
            fail("the BEM tab never drew (Blender started without --enable-event-simulate?); "
                 f"the window as it was: {WORK}/no-bem-tab-window.png")
        area, main, ui = view3d(win)
        root = bem_root()
        objs = [o for o in root.all_objects if o.type == "MESH" and o.visible_get()]
        for o in bpy.context.view_layer.objects:
            o.select_set(o in objs)
        if objs:
            bpy.context.view_layer.objects.active = objs[0]
        with bpy.context.temp_override(window=win, area=area, region=main):
            bpy.ops.view3d.view_selected()
        r3d = space.region_3d
        r3d.view_distance *= 2.5  # the package small, beside the panel
        # ... and in the picture's upper part: the view's centre moved down.
        up = r3d.view_rotation @ mathutils.Vector((0.0, 1.0, 0.0))
        r3d.view_location = r3d.view_location - up * (0.12 * r3d.view_distance)
        yield 0.5

        # Deselect: the picture shows the package, not selection outlines.
        for o in bpy.context.view_layer.objects:
            o.select_set(False)
        area.tag_redraw()
        yield 1.0

        # (a) The viewport and the BEM panel after the import.
        area, main, ui = view3d(win)
        # The right part of the viewport's upper part: the package, the panel.
        w, h = min(area.width, WIDTH + 440), min(area.height, 560)
        save_crop(win, "bem-panel", area.x + area.width - w, area.y + area.height - h, w, h)
        yield 0.2

        # (b) Validate, with one material renamed to one the package lacks.
        mats = [s.material for o in root.all_objects if o.type == "MESH"
                for s in o.material_slots if s.material and "bem_material" in s.material]
        if not mats:
            fail("no imported material carries bem_material")
        mats[0]["bem_material"] = "M_renamed"
        try:  # an operator that reports an error raises
            with bpy.context.temp_override(window=win, area=area, region=ui):
                bpy.ops.charkit.bem_validate("EXEC_DEFAULT", root=root.name)
        except RuntimeError as e:
            log(f"validate: {e}")
        issues = wm.charkit_bem_issues
        log(f"validate: {len(issues)} issues, codes {sorted({i.code for i in issues})}")
        if not len(issues):
            fail("validation reported nothing on a renamed material")
        space.overlay.show_overlays = False  # no grid lines below the panel: cut
        area.tag_redraw()
        yield 1.0
        area, main, ui = view3d(win)
        save_crop(win, "bem-validate", ui.x, ui.y, ui.width, ui.height, trim=16)
        yield 0.2

        # (c) Pack: the file browser with the operator's settings.
        target = os.path.join(WORK, "example-1.5-drivers-edited.bem")
        with bpy.context.temp_override(window=win, area=area, region=main):
            r = bpy.ops.charkit.bem_pack("INVOKE_DEFAULT", filepath=target, root=root.name)
        log(f"bem_pack invoke: {r}")
        yield 1.5
        browsers = [(w, a) for w in wm.windows for a in w.screen.areas
                    if a.type == "FILE_BROWSER"]
        if not browsers:
            fail("Pack opened no file browser")
        fwin, fb = browsers[0]
        params = fb.spaces.active.params
        if params is not None and hasattr(params, "show_details_datetime"):
            params.show_details_datetime = False  # the same picture on every run
        for a in fwin.screen.areas:
            a.tag_redraw()
        yield 1.5
        # Its regions are laid out at the second draw (the first picture
        # was seen cut at the right and bottom): look them up again.
        fwin, fb = [(w, a) for w in wm.windows for a in w.screen.areas
                    if a.type == "FILE_BROWSER"][0]
        # Without the browser's left column (volumes, bookmarks).
        left = sum(r.width for r in fb.regions if r.type == "TOOLS")
        save_crop(fwin, "bem-pack", fb.x + left, fb.y, fb.width - left, fb.height)
        yield 0.2


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    os.makedirs(OUT, exist_ok=True)
    shutil.copy(os.path.join(EXAMPLES, os.path.basename(PACKAGE)), PACKAGE)
    setup()
    bpy.app.timers.register(Steps(), first_interval=1.0)


try:
    main()
except Exception:
    traceback.print_exc()
    sys.stdout.flush()
    os._exit(1)

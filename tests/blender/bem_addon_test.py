"""Headless test of the add-on's BEM panel (charkit_deformer/bem_*.py).

Run by tests/blender/bem_addon_check.sh:
  blender --background --factory-startup --python-exit-code 1 \
      --python tests/blender/bem_addon_test.py -- --examples DIR --out OUT_DIR
with CHARKIT_LIBRARY pointing at libcharkit_c.so. In one Blender process,
for every example package: charkit.bem_import, then charkit.bem_pack with no
edit, and the packed package compared with the original through charkit's
reader (every vertex attribute and index bit for bit, images pixel for
pixel, no texture re-encoded); the imported scene checked against the
package (vertex counts, `_TEXCOORD2` as float2 attributes, shape keys and
their slider ranges, option collections, images). Then edits: a mesh
object scaled and a new shape key (a new slider) packed, validated and read
back; refusals (a material slot emptied, an unknown template) leave the
scene as it was; the validation report selects the object concerned;
every option choice shows only its draws; every import cancelled after
each of its steps leaves the scene as it was. Every package written is
read by tests/tools/bem_check.py, the independent checker.
Prints "CHARKIT_BEM_TEST OK" last; any failure exits 1.
"""

import json
import os
import sys
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import ROOT, T0, arg, check, log  # noqa: E402

import bpy  # noqa: E402
import numpy as np  # noqa: E402

OUT = arg("--out", os.path.join(ROOT, "build", "blender-bem-test"))
EXAMPLES = arg("--examples", os.path.join(ROOT, "tests", "data", "examples"))


def reset():
    """An empty file, the add-on kept registered."""
    for store in (bpy.data.objects, bpy.data.meshes, bpy.data.armatures, bpy.data.materials,
                  bpy.data.images, bpy.data.texts, bpy.data.collections, bpy.data.node_groups):
        for block in list(store):
            store.remove(block)


def refused(op, **kw):
    """Runs an operator that must refuse: in the background an operator that
    reports an error raises RuntimeError carrying the message."""
    try:
        r = op("EXEC_DEFAULT", **kw)
    except RuntimeError as e:
        return str(e)
    raise AssertionError(f"not refused: {r}")


def scene_census():
    return (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.collections),
            len(bpy.data.images), len(bpy.data.materials))


def compare_packages(ck, a_path, b_path, what):
    with ck.bem.BemPackage.open(a_path) as a, ck.bem.BemPackage.open(b_path) as b:
        am, bm = a.facts["meshes"], b.facts["meshes"]
        check(len(am) == len(bm), f"{what}: {len(am)} vs {len(bm)} meshes")
        for i, (ma, mb) in enumerate(zip(am, bm)):
            check(ma["vertices"] == mb["vertices"], f"{what} mesh {i}: vertex count")
            names = [x["name"] for x in ma["attributes"]]
            check(names == [x["name"] for x in mb["attributes"]], f"{what} mesh {i}: attributes")
            for name in names:
                x, y = a.floats(i, name), b.floats(i, name)
                if name == "JOINTS_0":  # compare bone names, not palette positions
                    ja, jb = a.facts["skeleton"]["joints"], b.facts["skeleton"]["joints"]
                    w = a.floats(i, "WEIGHTS_0") > 0
                    x = np.array(ja)[x.astype(int)][w]
                    y = np.array(jb)[y.astype(int)][w]
                    check((x == y).all(), f"{what} mesh {i}: bones differ")
                    continue
                check(x.shape == y.shape and np.array_equal(x, y),
                      f"{what} mesh {i} {name}: max difference "
                      f"{float(np.max(np.abs(x - y))) if x.shape == y.shape else 'shape'}")
            for p in range(len(ma["primitives"])):
                check(np.array_equal(a.indices(i, p), b.indices(i, p)), f"{what} mesh {i} draw {p}")
            check([t["name"] for t in ma["targets"]] == [t["name"] for t in mb["targets"]],
                  f"{what} mesh {i}: morph targets")
            for t in range(len(ma["targets"])):
                d = np.abs(a.floats(i, "TARGET_%d" % t) - b.floats(i, "TARGET_%d" % t))
                check(float(d.max(initial=0)) <= 1e-6, f"{what} mesh {i} target {t}: {d.max()}")
        for k in range(len(a.facts["images"])):
            check(np.array_equal(a.image_rgba(k), b.image_rgba(k)), f"{what}: image {k}")


def check_draws_shown(pkg, root, setting, what):
    """The objects shown are the meshes `setting` selects, and each shows
    (after its modifiers) the triangles of its selected draws only."""
    sel = pkg.selection(setting)
    draws = {}
    for m, d in sel["draws"]:
        draws.setdefault(m, set()).add(d)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    depsgraph.update()
    for i, info in enumerate(pkg.facts["meshes"]):
        objs = [o for o in root.all_objects if o.type == "MESH" and o["bem_mesh"] == info["mesh"]]
        check(len(objs) == 1, f"{what}: one object of mesh {info['mesh']}")
        o = objs[0]
        chosen = draws.get(info["mesh"], set())
        check(o.hide_viewport == (not chosen), f"{what}: {o.name} shown")
        if not chosen:
            continue
        want = sum(len(pkg.indices(i, p)) // 3 for p, prim in enumerate(info["primitives"])
                   if prim["draw"] in chosen)
        got = len(o.evaluated_get(depsgraph).data.polygons)
        check(got == want, f"{what}: {o.name} shows {got} triangles, its draws {sorted(chosen)} "
                           f"have {want}")
        check(len(o.data.polygons) == sum(len(pkg.indices(i, p)) // 3
                                          for p in range(len(info["primitives"]))),
              f"{what}: {o.name} keeps every face")


def round_trip(ck, path):
    name = os.path.basename(path)
    reset()
    r = bpy.ops.charkit.bem_import("EXEC_DEFAULT", filepath=path)
    check(r == {"FINISHED"}, f"{name}: import {r}")
    roots = [c for c in bpy.data.collections if "bem_source" in c]
    check(len(roots) == 1, f"{name}: one package collection")
    root = roots[0]
    with ck.bem.BemPackage.open(path) as pkg:
        facts = pkg.facts
        objs = [o for o in root.all_objects if o.type == "MESH"]
        check(len({o.name for o in objs}) == len(facts["meshes"]), f"{name}: one object per mesh")
        for o in objs:
            info = next(m for m in facts["meshes"] if m["mesh"] == o["bem_mesh"])
            check(len(o.data.vertices) == info["vertices"], f"{name}: {o.name} vertex count")
            check(len(o.material_slots) == len(info["primitives"]), f"{name}: one slot per draw")
            for a in info["attributes"]:
                if a["name"].startswith("_") and a["components"] == 4:
                    for half in (".xy", ".zw"):
                        at = o.data.attributes.get(a["name"] + half)
                        check(at is not None and at.data_type == "FLOAT2",
                              f"{name}: {a['name']}{half} is a float2 attribute")
                    check(a["name"] not in {c.name for c in getattr(o.data, "color_attributes", [])},
                          f"{name}: {a['name']} is not a colour")
            if info["targets"]:
                keys = o.data.shape_keys
                check(keys is not None and len(keys.key_blocks) == len(info["targets"]) + 1,
                      f"{name}: shape keys")
                sliders = json.loads(keys["bem_sliders"])
                for t in info["targets"]:
                    s = sliders[t["name"]]
                    p = next(p for p in facts["manifest"]["parameters"] if p["id"] == s["parameter"])
                    check((s["min"], s["max"], s["step"], s["default"]) ==
                          (p["min"], p["max"], p.get("step", 1), p["default"]),
                          f"{name}: slider range of {t['name']}")
        imgs = [i for i in bpy.data.images if "bem_pixels" in i]
        check(len(imgs) == len(facts["images"]), f"{name}: images")
        groups = facts["manifest"].get("option_groups", [])
        opt_colls = [c for c in bpy.data.collections if "bem_group" in c]
        appearances = facts["manifest"].get("appearances", [])
        check(len(opt_colls) == sum(len(g["choices"]) for g in groups) + len(appearances),
              f"{name}: option collections")
        for a in appearances:  # BEM 1.0: the setting is the appearance id
            r = bpy.ops.charkit.bem_set_option("EXEC_DEFAULT", root=root.name, choice=a["id"])
            check(r == {"FINISHED"} and root["bem_options"] == a["id"], f"{name}: appearance")
            shown = {m for m, _d in pkg.selection(a["id"])["draws"]}
            for o in objs:
                check(o.hide_viewport == (o["bem_mesh"] not in shown), f"{name}: {o.name} shown")
        # Every choice: the meshes it shows, and on each only its draws' faces
        # (the draw filter), counted from the package's own indices.
        settings = [("%s:%s" % (g["id"], c["id"]), dict(group=g["id"], choice=c["id"]))
                    for g in groups for c in g["choices"]]
        settings += [(a["id"], dict(choice=a["id"])) for a in appearances]
        for setting, kw in settings:
            r = bpy.ops.charkit.bem_set_option("EXEC_DEFAULT", root=root.name, **kw)
            check(r == {"FINISHED"}, f"{name}: set {setting}")
            # The choices add up: the root holds every group's choice so far.
            check_draws_shown(pkg, root, root["bem_options"], f"{name} {root['bem_options']}")
    out = os.path.join(OUT, "packed-" + name)
    r = bpy.ops.charkit.bem_pack("EXEC_DEFAULT", filepath=out)
    check(r == {"FINISHED"}, f"{name}: pack {r}")
    check(ck.bem_validate(out)["valid"], f"{name}: packed package valid")
    compare_packages(ck, path, out, name)
    issues = bpy.context.window_manager.charkit_bem_issues
    check(not any(i.code == "BEM_PACK_TEXTURE" for i in issues), f"{name}: no texture re-encoded")
    log(f"{name}: import -> pack equal ({len(facts['meshes'])} meshes)")
    return root


def edits(ck):
    path = os.path.join(EXAMPLES, "example-1.5.bem")
    root = round_trip(ck, path)
    obj = sorted((o for o in root.all_objects if o.type == "MESH"), key=lambda o: o["bem_mesh"])[0]
    n = len(obj.data.vertices)
    before = np.empty(n * 3, np.float32)
    obj.data.vertices.foreach_get("co", before)

    # Options: the selector shows what each choice selects.
    groups = json.loads(bpy.data.texts[root["bem_manifest_text"]].as_string())["option_groups"]
    g = groups[0]
    for c in g["choices"]:
        r = bpy.ops.charkit.bem_set_option("EXEC_DEFAULT", root=root.name, group=g["id"],
                                           choice=c["id"])
        check(r == {"FINISHED"}, "set option")
        with ck.bem.BemPackage.open(path) as pkg:
            shown = {m for m, _d in pkg.selection("%s:%s" % (g["id"], c["id"]))["draws"]}
        for o in root.all_objects:
            if o.type == "MESH":
                check(o.hide_viewport == (o["bem_mesh"] not in shown), f"{o.name} shown by {c['id']}")
    bpy.ops.charkit.bem_set_option("EXEC_DEFAULT", root=root.name, group=g["id"],
                                   choice=g["default"])

    # A refusal leaves the scene as it was: an emptied material slot.
    census = scene_census()
    mat = obj.material_slots[0].material
    obj.material_slots[0].material = None
    msg = refused(bpy.ops.charkit.bem_pack, filepath=os.path.join(OUT, "never.bem"))
    check(obj.name in msg and "material slot 0" in msg, f"the error names the object: {msg}")
    check(not os.path.exists(os.path.join(OUT, "never.bem")), "nothing written")
    check(scene_census() == census, "nothing lost on an error")
    obj.material_slots[0].material = mat
    msg = refused(bpy.ops.charkit.bem_pack, filepath=os.path.join(OUT, "never.bem"),
                  template=os.path.join(OUT, "missing.bem"))
    check("missing.bem" in msg and scene_census() == census, f"missing template refused: {msg}")

    # Validate: a material renamed to one the package lacks is reported at
    # the object, and selecting the issue selects it.
    original_material = mat["bem_material"]
    mat["bem_material"] = "M_not_in_package"
    refused(bpy.ops.charkit.bem_validate, root=root.name)  # reports "not valid" as an error
    issues = bpy.context.window_manager.charkit_bem_issues
    bad = [k for k, i in enumerate(issues) if i.code == "BEM_PACK_MATERIAL"]
    check(bad and issues[bad[0]].obj == obj.name, f"issue names {obj.name}: {[tuple(i.items()) for i in issues]}")
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    bpy.ops.charkit.bem_select_issue("EXEC_DEFAULT", index=bad[0])
    check(bpy.context.view_layer.objects.active == obj and obj.select_get(), "issue selects")
    mat["bem_material"] = original_material
    r = bpy.ops.charkit.bem_validate("EXEC_DEFAULT", root=root.name)
    check(bpy.context.window_manager.charkit_bem_report_ok, "valid again")

    # Edits: scale the object, add a shape key (a new slider).
    obj.scale = (1.5, 1.5, 1.5)
    bpy.context.view_layer.update()
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    key = obj.shape_key_add(name="Belly", from_mix=False)
    co = np.empty(n * 3, np.float32)
    key.data.foreach_get("co", co)
    co[2] += 0.25  # vertex 0 up (Blender's Z)
    key.data.foreach_set("co", co)
    out = os.path.join(OUT, "edited.bem")
    r = bpy.ops.charkit.bem_pack("EXEC_DEFAULT", filepath=out)
    check(r == {"FINISHED"}, f"edited pack {r}")
    check(ck.bem_validate(out)["valid"], "edited package valid")
    with ck.bem.BemPackage.open(path) as a, ck.bem.BemPackage.open(out) as b:
        i = next(k for k, m in enumerate(a.facts["meshes"]) if m["mesh"] == obj["bem_mesh"])
        pa, pb = a.floats(i, "POSITION"), b.floats(i, "POSITION")
        err = float(np.max(np.abs(pb - 1.5 * pa)))
        check(err <= 1e-6, f"scaled positions: {err}")
        params = [p["id"] for p in b.facts["manifest"]["parameters"]]
        check("Belly" in params, f"new slider: {params}")
        t = [x["name"] for x in b.facts["meshes"][i]["targets"]].index("Belly")
        d = b.floats(i, "TARGET_%d" % t)
        # Blender +Z is the package's +Y; scaled by the object's 1.5.
        check(abs(d[0, 1] - 0.375) <= 1e-6 and float(np.abs(d[1:]).max(initial=0)) == 0,
              f"shape key delta {d[:2]}")
    log("edits: option selector, refusals, validation report, scale + new slider")


def sliders(ck):
    """A slider tick set from the panel weighs its frame as §10 blends it
    (one frame at tick T above the neutral n: weight (t - n) / (T - n)), and
    the evaluated mesh moves by that share of the frame's delta."""
    path = os.path.join(EXAMPLES, "example-1.5-drivers.bem")
    reset()
    r = bpy.ops.charkit.bem_import("EXEC_DEFAULT", filepath=path)
    check(r == {"FINISHED"}, f"import {r}")
    root = next(c for c in bpy.data.collections if "bem_source" in c)
    with ck.bem.BemPackage.open(path) as pkg:
        params = {p["id"]: p for p in pkg.facts["manifest"]["parameters"]}
        tested = 0
        for i, info in enumerate(pkg.facts["meshes"]):
            obj = next(o for o in root.all_objects if o.type == "MESH" and o["bem_mesh"] == info["mesh"])
            for t_index, target in enumerate(info["targets"]):
                pid, _, at = target["name"].partition("@")
                p = params[pid]
                frames = [x for x in info["targets"] if x["name"].partition("@")[0] == pid]
                if len(frames) != 1:
                    continue
                frame_tick = int(at) if at else p["max"]
                base = to_blender_axes(pkg.floats(i, "POSITION"))
                delta = to_blender_axes(pkg.floats(i, "TARGET_%d" % t_index))
                for tick in sorted({p["min"], p["default"], (p["min"] + p["max"]) // 3, p["max"]}):
                    r = bpy.ops.charkit.bem_set_option("EXEC_DEFAULT", root=root.name,
                                                       parameter=pid, tick=tick)
                    check(r == {"FINISHED"}, f"set {pid} to {tick}")
                    want = min(max((tick - p["neutral"]) / (frame_tick - p["neutral"]), 0.0), 1.0)
                    key = obj.data.shape_keys.key_blocks[target["name"]]
                    check(abs(key.value - want) <= 1e-6, f"{pid}={tick}: key {key.value} != {want}")
                    dg = bpy.context.evaluated_depsgraph_get()
                    dg.update()
                    ev = obj.evaluated_get(dg).data
                    co = np.empty(len(ev.vertices) * 3, np.float32)
                    ev.vertices.foreach_get("co", co)
                    err = float(np.max(np.abs(co.reshape(-1, 3) - (base + want * delta))))
                    check(err <= 1e-5, f"{pid}={tick}: evaluated mesh off by {err}")
                    tested += 1
        check(tested >= 3, f"slider ticks tested: {tested}")
    log(f"sliders: {tested} ticks weigh their frame and move the mesh as §10 blends it")

    # A slider the options make unavailable sits at its neutral: the options
    # example's waist (on the body, which stays shown) needs outfit full.
    path = os.path.join(EXAMPLES, "example-1.5-options.bem")
    reset()
    bpy.ops.charkit.bem_import("EXEC_DEFAULT", filepath=path)
    root = next(c for c in bpy.data.collections if "bem_source" in c)
    with ck.bem.BemPackage.open(path) as pkg:
        body = next(o for o in root.all_objects if o.type == "MESH" and o["bem_mesh"] == 0)
        waist = [k for k in body.data.shape_keys.key_blocks if k.name.partition("@")[0] == "waist"]
        check(waist, "the body has the waist slider's keys")
        bpy.ops.charkit.bem_set_option("EXEC_DEFAULT", root=root.name, parameter="waist", tick=100)
        for outfit, available in (("full", True), ("light", False)):
            bpy.ops.charkit.bem_set_option("EXEC_DEFAULT", root=root.name, group="outfit", choice=outfit)
            sel = {p["id"]: p for p in pkg.selection(root["bem_options"], root["bem_parameters"])["parameters"]}
            check(sel["waist"]["available"] == available, f"outfit {outfit}: waist available {sel['waist']}")
            total = sum(k.value for k in waist)
            check((total > 0) == available, f"outfit {outfit}: waist keys weigh {total}")
            check(not body.hide_viewport, f"outfit {outfit}: the body is shown")
    log("sliders: an unavailable slider sits at its neutral on a shown mesh")


def skin_slots(ck):
    """An unedited skin packs back bit for bit, zero-weight slots included:
    a package whose body vertices weigh their second slot only (the first
    weighs nothing) is imported and packed with JOINTS_0 and WEIGHTS_0 as
    they were, not moved to the first slot; a vertex whose weights are
    edited in Blender packs what its vertex groups say."""
    template = os.path.join(EXAMPLES, "example-1.5-options.bem")
    made = os.path.join(OUT, "skin-slots.bem")
    with ck.bem.BemPackage.open(template) as pkg:
        info = pkg.facts["meshes"][0]
        attrs = {a["name"]: pkg.floats(0, a["name"]) for a in info["attributes"]}
        n = info["vertices"]
        joints = np.zeros((n, 4), np.uint16)
        weights = np.zeros((n, 4), np.float32)
        joints[:, 1] = 1  # Spine in the second slot, which weighs everything
        weights[:, 1] = 1.0  # slot 0 weighs nothing
        attrs["JOINTS_0"], attrs["WEIGHTS_0"] = joints, weights
        r = ck.bem.pack(template, [{
            "name": info["name"], "attributes": attrs,
            "primitives": [{"indices": pkg.indices(0, p), "material": prim["material"]}
                           for p, prim in enumerate(info["primitives"])],
            "targets": [{"name": t["name"], "positions": pkg.floats(0, "TARGET_%d" % k),
                         "weight": t["weight"]} for k, t in enumerate(info["targets"])],
            "joints": list(pkg.facts["skeleton"]["joints"])}], output=made)
        check(r.get("ok"), f"skin-slots package: {r.get('error')}")
    with ck.bem.BemPackage.open(made) as a:
        j0, w0 = a.floats(0, "JOINTS_0"), a.floats(0, "WEIGHTS_0")
    check(float(w0[:, 0].max()) == 0 and float(w0[:, 1].min()) == 1 and j0[:, 1].all(),
          f"the package weighs its second slot only: {j0[:2]} {w0[:2]}")
    reset()
    bpy.ops.charkit.bem_import("EXEC_DEFAULT", filepath=made)
    root = next(c for c in bpy.data.collections if "bem_source" in c)
    out = os.path.join(OUT, "packed-skin-slots.bem")
    check(bpy.ops.charkit.bem_pack("EXEC_DEFAULT", filepath=out) == {"FINISHED"}, "pack skin slots")
    with ck.bem.BemPackage.open(out) as b:
        check(np.array_equal(b.floats(0, "JOINTS_0"), j0) and np.array_equal(b.floats(0, "WEIGHTS_0"), w0),
              f"skin slots packed back: {b.floats(0, 'JOINTS_0')[:2]} vs {j0[:2]}")
    body = next(o for o in root.all_objects if o.type == "MESH" and o["bem_mesh"] == 0)
    pelvis = body.vertex_groups.get("Bip001_Pelvis") or body.vertex_groups.new(name="Bip001_Pelvis")
    pelvis.add([0], 0.5, "REPLACE")  # vertex 0 now weighs the pelvis too
    check(bpy.ops.charkit.bem_pack("EXEC_DEFAULT", filepath=out) == {"FINISHED"}, "pack edited skin")
    with ck.bem.BemPackage.open(out) as b:
        j1, w1 = b.floats(0, "JOINTS_0"), b.floats(0, "WEIGHTS_0")
        check(np.array_equal(j1[1:], j0[1:]) and np.array_equal(w1[1:], w0[1:]),
              "the other vertices keep their slots")
        names = list(b.facts["skeleton"]["joints"])
        got = sorted((names[int(j)], round(float(w), 2)) for j, w in zip(j1[0], w1[0]) if w > 0)
        # Spine 1 and Pelvis 0.5, normalized by the packer to 2/3 and 1/3.
        check([g for g, _ in got] == ["Bip001_Pelvis", "Bip001_Spine"] and
              abs(dict(got)["Bip001_Pelvis"] - 1 / 3) <= 0.01,
              f"edited vertex 0 packs its vertex groups: {got}")
    log("skin slots: zero-weight slots packed back bit for bit; an edited vertex follows its groups")


def to_blender_axes(v):
    """Package (x, y, z) -> Blender (-x, -z, y), written out here rather
    than taken from the add-on."""
    v = np.asarray(v, np.float64).reshape(-1, 3)
    return np.stack([-v[:, 0], -v[:, 2], v[:, 1]], axis=1)


def progress_and_cancel(ck):
    """The stepped import and pack behind the UI's progress and Esc: the
    steps count up to their total, and closing them after any step (what a
    cancel does) leaves the scene and the disk as they were."""
    from charkit_deformer import bem_ops, bem_scene
    for path in sorted(os.path.join(EXAMPLES, f) for f in os.listdir(EXAMPLES)
                       if f.startswith("example-") and f.endswith(".bem")):
        name = os.path.basename(path)
        reset()
        census = scene_census() + (len(bpy.data.node_groups), len(bpy.data.texts),
                                   len(bpy.data.armatures), len(bpy.context.scene.collection.children))
        with ck.bem.BemPackage.open(path) as pkg:
            seen = []
            root = bem_scene.run_steps(bem_scene.import_steps(bpy.context, pkg),
                                       lambda d, t, w: seen.append((d, t)))
            total = seen[-1][1]
            check([d for d, _t in seen] == list(range(1, total + 1)) and
                  all(t == total for _d, t in seen), f"{name}: import progress {seen}")
            check(total >= len(pkg.facts["meshes"]) + len(pkg.facts["images"]),
                  f"{name}: a step per mesh and image")
            reset()
            for k in range(total):
                steps = bem_scene.import_steps(bpy.context, pkg)
                for _ in range(k + 1):
                    next(steps)
                steps.close()
                now = scene_census() + (len(bpy.data.node_groups), len(bpy.data.texts),
                                        len(bpy.data.armatures),
                                        len(bpy.context.scene.collection.children))
                check(now == census, f"{name}: cancelled after step {k + 1}: {now} != {census}")
        # From the UI's invoke without a window (a script's INVOKE_DEFAULT),
        # the steps run at once.
        r = bpy.ops.charkit.bem_import("INVOKE_DEFAULT", filepath=path)
        check(r == {"FINISHED"}, f"{name}: invoke {r}")
        root = next(c for c in bpy.data.collections if "bem_source" in c)
        out = os.path.join(OUT, "cancelled-" + name)
        steps = bem_ops._pack_steps(bpy.context, root.name, "", out, "", "", "")
        next(steps)
        steps.close()
        check(not os.path.exists(out), f"{name}: a cancelled pack writes nothing")
    log("progress and cancel: every step of every import undone, no cancelled pack written")


def independent_check():
    """Every package Blender wrote, read by the independent checker written
    from the BEM specification (tests/tools/bem_check.py), not by charkit."""
    import shutil
    import subprocess
    written = sorted(os.path.join(OUT, f) for f in os.listdir(OUT)
                     if f.endswith((".bem", ".zip")) and f.startswith(("packed-", "edited")))
    check(len(written) >= 7, f"packages written: {written}")
    # Debian's python3 has python3-zstandard (bootstrap): the payloads are decoded too.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
    r = subprocess.run([python, os.path.join(ROOT, "tests", "tools", "bem_check.py")] + written,
                       capture_output=True, text=True)
    check(r.returncode == 0, f"bem_check.py: {r.stdout}{r.stderr}")
    log(f"bem_check.py (independent reader): {len(written)} packages written by Blender pass")


def main():
    os.makedirs(OUT, exist_ok=True)
    import charkit_deformer
    charkit_deformer.register()
    from charkit_deformer import _ck
    ck = _ck.get()
    paths = sorted(os.path.join(EXAMPLES, f) for f in os.listdir(EXAMPLES)
                   if f.startswith("example-") and f.endswith((".bem", ".zip")))
    check(len(paths) >= 6, f"examples: {paths}")
    for path in paths:
        round_trip(ck, path)
    edits(ck)
    sliders(ck)
    skin_slots(ck)
    progress_and_cancel(ck)
    independent_check()
    charkit_deformer.unregister()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        print("CHARKIT_BEM_TEST FAILED", flush=True)
        sys.exit(1)
    print(f"CHARKIT_BEM_TEST OK ({time.perf_counter() - T0:.1f}s)", flush=True)

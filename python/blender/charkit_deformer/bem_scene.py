"""BEM packages in a Blender scene: building the scene from a package opened
with charkit (charkit.bem.BemPackage), and gathering it back as the arrays
charkit's packer takes (charkit.bem.pack). No operator and no UI here:
bem_ops.py and bem_ui.py use these functions.

Axes: the package stores Unity's left-handed, Y-up axes; Blender's are
right-handed and Z-up. A vertex (x, y, z) of the package is (-x, -z, y) in
Blender (what Blender's glTF importer gives for a `bem export`), triangle
winding reversed (the mapping mirrors) and tangent handedness negated. Each
step is a negation or a swap, so the way back gives the package's floats
bit for bit; UVs and image rows are the package's as they are (Unity's and
Blender's both start at the bottom).

What the scene keeps of a package (so that packing needs nothing else):
- a root collection "BEM <name>" with the source path, the version and the
  option/parameter settings as custom properties, and the manifest as a text
  block (its name in the collection's `bem_manifest_text`);
- one mesh object per package mesh (`bem_mesh` = its index), in a
  collection per component it replaces, linked into a collection per option
  choice that shows it; one material slot per draw (`bem_draws` lists the
  draw indices, the material's `bem_material` its material_name);
- every vertex attribute: positions, normals (custom normals for display
  and the exact `NORMAL` attribute), `TANGENT` + `TANGENT_W`, UV maps
  `TEXCOORD_n`, `COLOR_0`, and each other attribute under its package name
  (`_TEXCOORD2`: float2 attributes `_TEXCOORD2.xy` and `_TEXCOORD2.zw` for
  four components);
- skins: an armature of the palette bones, vertex groups per bone, and
  the package's slots as attributes `bem_joint_s`/`bem_weight_s` (bone
  names in the mesh's `bem_skin_bones`), so that an unedited vertex packs
  back with its slots as they were;
- sliders: shape keys named as `bem export` names morph targets (`id` or
  `id@tick`), the parameter's range, step, neutral and default in the key's
  `bem_sliders` custom property;
- draws an option hides on a shown mesh: the face attribute
  `bem_draw_hidden` and a geometry nodes modifier "BEM draws" that removes
  those faces from display and renders (the mesh keeps them for packing);
- textures: images decoded from their format (`bem_texture`, `bem_format`,
  `bem_pixels` = SHA-256 of the pixels as imported, so that pack keeps the
  package's bytes for an image that was not edited).
"""

import hashlib
import json

import bpy
import numpy as np

ROOT_PREFIX = "BEM "


# ---- axes -------------------------------------------------------------------

def to_blender(v):
    """(n, 3) package vectors -> Blender's axes: (-x, -z, y)."""
    v = np.asarray(v, np.float32).reshape(-1, 3)
    return np.stack([-v[:, 0], -v[:, 2], v[:, 1]], axis=1)


def from_blender(v):
    """Inverse of to_blender: (X, Y, Z) -> (-X, Z, -Y)."""
    v = np.asarray(v, np.float32).reshape(-1, 3)
    return np.stack([-v[:, 0], v[:, 2], -v[:, 1]], axis=1)


def _blender4():
    return bpy.app.version >= (4, 0, 0)


# ---- building ---------------------------------------------------------------

def _attribute(mesh, name, kind, values):
    attr = mesh.attributes.get(name)
    if attr is not None:
        mesh.attributes.remove(attr)
    attr = mesh.attributes.new(name, kind, "POINT")
    key = {"FLOAT": "value", "FLOAT2": "vector", "FLOAT_VECTOR": "vector",
           "FLOAT_COLOR": "color"}[kind]
    attr.data.foreach_set(key, np.ascontiguousarray(values, np.float32).ravel())
    return attr


def _read_attribute(mesh, name, width):
    attr = mesh.attributes.get(name)
    if attr is None or attr.domain != "POINT":
        return None
    key = {"FLOAT": "value", "FLOAT2": "vector", "FLOAT_VECTOR": "vector",
           "FLOAT_COLOR": "color"}.get(attr.data_type)
    if key is None:
        return None
    out = np.empty(len(mesh.vertices) * width, np.float32)
    attr.data.foreach_get(key, out)
    return out.reshape(-1, width)


def _build_mesh(pkg, i, info, materials):
    n = info["vertices"]
    mesh = bpy.data.meshes.new(info["name"])
    mesh.vertices.add(n)
    mesh.vertices.foreach_set("co", to_blender(pkg.floats(i, "POSITION")).ravel())
    tris, mat_index = [], []
    for p, prim in enumerate(info["primitives"]):
        idx = pkg.indices(i, p).reshape(-1, 3)
        tris.append(idx[:, [0, 2, 1]])  # the mirror reverses the winding
        mat_index.append(np.full(len(idx), p, np.int32))
    tris = np.concatenate(tris) if tris else np.zeros((0, 3), np.uint32)
    mat_index = np.concatenate(mat_index) if mat_index else np.zeros(0, np.int32)
    k = len(tris)
    mesh.loops.add(3 * k)
    mesh.loops.foreach_set("vertex_index", tris.astype(np.int32).ravel())
    mesh.polygons.add(k)
    mesh.polygons.foreach_set("loop_start", np.arange(0, 3 * k, 3, dtype=np.int32))
    if not _blender4():  # loop_total is derived from loop_start in 4.x
        mesh.polygons.foreach_set("loop_total", np.full(k, 3, np.int32))
    mesh.polygons.foreach_set("material_index", mat_index)
    mesh.update(calc_edges=True)
    for prim in info["primitives"]:
        mesh.materials.append(materials[prim["material"]])
    attrs = {a["name"]: a["components"] for a in info["attributes"]}
    loop_vertex = tris.astype(np.int64).ravel()
    for name, comps in attrs.items():
        if name in ("POSITION", "JOINTS_0", "WEIGHTS_0"):
            continue
        values = pkg.floats(i, name)
        if name == "NORMAL":
            normals = to_blender(values)
            _attribute(mesh, "NORMAL", "FLOAT_VECTOR", normals)
            if hasattr(mesh, "use_auto_smooth"):  # 3.x-4.0; custom normals need no switch in 4.1+
                mesh.use_auto_smooth = True
            lengths = np.linalg.norm(normals, axis=1, keepdims=True)
            shown = np.where(lengths > 0, normals / np.maximum(lengths, 1e-30), 0)
            mesh.normals_split_custom_set_from_vertices(shown.tolist())
        elif name == "TANGENT":
            _attribute(mesh, "TANGENT", "FLOAT_VECTOR", to_blender(values[:, :3]))
            _attribute(mesh, "TANGENT_W", "FLOAT", -values[:, 3])
        elif name.startswith("TEXCOORD_"):
            uv = mesh.uv_layers.new(name=name)
            uv.data.foreach_set("uv", values[loop_vertex].ravel())
        elif name == "COLOR_0":
            _attribute(mesh, name, "FLOAT_COLOR", values)
        elif comps == 1:
            _attribute(mesh, name, "FLOAT", values[:, 0])
        elif comps == 2:
            _attribute(mesh, name, "FLOAT2", values)
        elif comps == 3:
            _attribute(mesh, name, "FLOAT_VECTOR", values)
        else:  # four floats: two float2 attributes (Blender has no float4 but colours)
            _attribute(mesh, name + ".xy", "FLOAT2", values[:, :2])
            _attribute(mesh, name + ".zw", "FLOAT2", values[:, 2:4])
    mesh["bem_mesh"] = info["mesh"]
    mesh["bem_draws"] = [p["draw"] for p in info["primitives"]]
    mesh["bem_attributes"] = json.dumps(info["attributes"])
    return mesh


def _skin(obj, pkg, i, info, armature, joints):
    if armature is None or not any(a["name"] == "JOINTS_0" for a in info["attributes"]):
        return
    j = pkg.floats(i, "JOINTS_0").astype(np.int64)
    w = np.ascontiguousarray(pkg.floats(i, "WEIGHTS_0"), np.float32)
    groups = {}
    # Slot by slot, so that each vertex gets its groups in slot order (pack
    # reads them back in that order); within a slot one add per (bone,
    # weight): packed weights are quantized, so a few hundred adds, not one
    # per vertex.
    for s in range(j.shape[1]):
        verts = np.nonzero(w[:, s] > 0)[0]
        if not len(verts):
            continue
        key = (j[verts, s] << 32) | w[verts, s].view(np.uint32).astype(np.int64)
        uniq, inverse = np.unique(key, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
        for u, k in enumerate(uniq):
            name = joints[int(k >> 32)]
            weight = float(np.array([k & 0xFFFFFFFF], np.uint32).view(np.float32)[0])
            g = groups.get(name)
            if g is None:
                g = groups[name] = obj.vertex_groups.get(name) or obj.vertex_groups.new(name=name)
            g.add(verts[order[bounds[u]:bounds[u + 1]]].tolist(), weight, "REPLACE")
    # Every slot as the package has it, zero-weight slots' bones included,
    # so that an unedited skin packs back bit for bit (_stored_skin); the
    # vertex groups are what Blender edits and what packing follows when a
    # vertex's weights changed.
    mesh = obj.data
    mesh["bem_skin_bones"] = json.dumps(list(joints))
    for s in range(j.shape[1]):
        attr = mesh.attributes.get("bem_joint_%d" % s) or mesh.attributes.new(
            "bem_joint_%d" % s, "INT", "POINT")
        attr.data.foreach_set("value", j[:, s].astype(np.int32))
        _attribute(mesh, "bem_weight_%d" % s, "FLOAT", w[:, s])
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = armature
    obj.parent = armature


def _shape_keys(obj, pkg, i, info, facts):
    targets = info["targets"]
    if not targets:
        return
    basis = obj.shape_key_add(name="Basis", from_mix=False)
    base = np.empty(len(obj.data.vertices) * 3, np.float32)
    basis.data.foreach_get("co", base)
    params = {p["id"]: p for p in facts["manifest"].get("parameters", [])}
    sliders = {}
    for t, target in enumerate(targets):
        key = obj.shape_key_add(name=target["name"], from_mix=False)
        delta = to_blender(pkg.floats(i, "TARGET_%d" % t)).ravel()
        key.data.foreach_set("co", base + delta)
        key.value = float(target["weight"])
        pid, _, tick = target["name"].partition("@")
        p = params.get(pid)
        if p is not None:
            sliders[target["name"]] = {
                "parameter": pid, "tick": int(tick) if tick else int(p["max"]),
                "min": int(p["min"]), "max": int(p["max"]), "step": int(p.get("step", 1)),
                "neutral": int(p["neutral"]), "default": int(p["default"])}
    obj.data.shape_keys["bem_sliders"] = json.dumps(sliders)


def _image(pkg, i, info, texture):
    rgba = pkg.image_rgba(i)
    h, w = rgba.shape[:2]
    img = bpy.data.images.new(info["name"], w, h, alpha=True)
    img.pixels.foreach_set((rgba.astype(np.float32) / 255.0).ravel())
    if texture is not None and not texture.get("srgb", False):
        img.colorspace_settings.name = "Non-Color"
    img.pack()
    img["bem_texture"] = -1 if info["texture"] is None else int(info["texture"])
    img["bem_name"] = info["name"]
    if texture is not None:
        img["bem_format"] = int(texture.get("format", 0))
    img["bem_pixels"] = hashlib.sha256(rgba.tobytes()).hexdigest()
    return img


def _material(name, images):
    mat = bpy.data.materials.new(name)
    mat["bem_material"] = name
    mat.use_nodes = True
    tree = mat.node_tree
    bsdf = tree.nodes.get("Principled BSDF")
    for k, img in enumerate(images):
        node = tree.nodes.new("ShaderNodeTexImage")
        node.image = img
        node.location = (-400, 300 - 280 * k)
        if k == 0 and bsdf is not None and img.colorspace_settings.name != "Non-Color":
            tree.links.new(node.outputs["Color"], bsdf.inputs["Base Color"])
    return mat


DRAW_FILTER = "charkit BEM draws"  # the node group
HIDDEN_ATTRIBUTE = "bem_draw_hidden"  # per face: its draw is not selected


def _draw_filter_group():
    """The geometry node group that removes the faces whose
    HIDDEN_ATTRIBUTE is set (made once per file); (group, made now)."""
    ng = bpy.data.node_groups.get(DRAW_FILTER)
    if ng is not None and ng.bl_idname == "GeometryNodeTree":
        return ng, False
    ng = bpy.data.node_groups.new(DRAW_FILTER, "GeometryNodeTree")
    if hasattr(ng, "interface"):  # 4.x
        ng.interface.new_socket(name="Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
        ng.interface.new_socket(name="Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    else:
        ng.inputs.new("NodeSocketGeometry", "Geometry")
        ng.outputs.new("NodeSocketGeometry", "Geometry")
    nodes, links = ng.nodes, ng.links
    gin, gout = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    named = nodes.new("GeometryNodeInputNamedAttribute")
    named.data_type = "BOOLEAN"
    named.inputs["Name"].default_value = HIDDEN_ATTRIBUTE
    delete = nodes.new("GeometryNodeDeleteGeometry")
    delete.domain = "FACE"
    gin.location, named.location, delete.location, gout.location = (
        (-400, 0), (-400, -150), (-150, 0), (100, 0))
    links.new(gin.outputs[0], delete.inputs["Geometry"])
    links.new(next(o for o in named.outputs if o.type == "BOOLEAN"), delete.inputs["Selection"])
    links.new(delete.outputs["Geometry"], gout.inputs[0])
    return ng, True


def _draw_filter(obj):
    """Lets an option hide some draws of a shown mesh: a face attribute says
    which faces' draws are not selected, and a geometry nodes modifier
    removes them from what the viewport and renders show. The mesh itself
    keeps every face (packing reads it); returns the node group when it was
    made now."""
    mesh = obj.data
    if mesh.attributes.get(HIDDEN_ATTRIBUTE) is None:
        mesh.attributes.new(HIDDEN_ATTRIBUTE, "BOOLEAN", "FACE")
    ng, made = _draw_filter_group()
    mod = obj.modifiers.get("BEM draws") or obj.modifiers.new("BEM draws", "NODES")
    mod.node_group = ng
    return ng if made else None


def _link(obj, coll):
    if coll.objects.get(obj.name) is None:
        coll.objects.link(obj)


def run_steps(steps, progress=None):
    """Runs a generator of steps (import_steps, gather_steps) to its end and
    returns its value; progress(done, total, what) is called at each step."""
    while True:
        try:
            step = next(steps)
        except StopIteration as stop:
            return stop.value
        if progress is not None:
            progress(*step)


def import_steps(context, pkg, name=None):
    """Builds the scene of an opened package (charkit.bem.BemPackage) in new
    collections under the scene's collection, in steps: yields (done, total,
    what) after each image, mesh and option choice and returns the root
    collection (run_steps runs it through). Nothing existing is changed; on
    an error, or when it is closed before its end (a cancel), what was made
    is removed."""
    facts = pkg.facts
    manifest = facts["manifest"]
    label = name or manifest.get("name") or manifest.get("package_id") or "package"
    made = []  # (collection of bpy.data, datablock) to remove on error or cancel
    n_choices = sum(len(g.get("choices", [])) for g in facts["package"].get("optionGroups", []))
    total = len(facts["images"]) + len(facts["meshes"]) + n_choices + len(
        manifest.get("appearances", []))
    done = 0
    try:
        root = bpy.data.collections.new(ROOT_PREFIX + label)
        made.append((bpy.data.collections, root))
        root["bem_source"] = pkg.path
        root["bem_version"] = facts["version"]
        root["bem_options"] = ""
        root["bem_parameters"] = ""
        text = bpy.data.texts.new(ROOT_PREFIX + label + ".manifest.json")
        made.append((bpy.data.texts, text))
        text.write(json.dumps(manifest, indent=1, ensure_ascii=False))
        root["bem_manifest_text"] = text.name
        root["bem_drivers"] = json.dumps(manifest.get("drivers", []))

        textures = manifest.get("textures", [])
        images_by_texture = {}
        for k, info in enumerate(facts["images"]):
            t = info["texture"]
            img = _image(pkg, k, info, textures[t] if t is not None and t < len(textures) else None)
            made.append((bpy.data.images, img))
            if t is not None:
                images_by_texture[t] = img
            done += 1
            yield done, total, "image %s" % info["name"]

        # One material per material_name, with the images its draws bind.
        material_images = {}
        for m in manifest.get("meshes", []):
            for d in m.get("draws", []):
                imgs = material_images.setdefault(d.get("material_name", ""), [])
                for t in d.get("textures", []):
                    if isinstance(t, int) and t in images_by_texture and images_by_texture[t] not in imgs:
                        imgs.append(images_by_texture[t])
        materials = {}
        for info in facts["meshes"]:
            for prim in info["primitives"]:
                mname = prim["material"]
                if mname not in materials:
                    materials[mname] = _material(mname, material_images.get(mname, []))
                    made.append((bpy.data.materials, materials[mname]))

        armature = None
        joints = facts["skeleton"]["joints"]
        if joints:
            arm = bpy.data.armatures.new(ROOT_PREFIX + label + " skeleton")
            made.append((bpy.data.armatures, arm))
            armature = bpy.data.objects.new(arm.name, arm)
            made.append((bpy.data.objects, armature))
            root.objects.link(armature)
            context.scene.collection.children.link(root)
            prev = context.view_layer.objects.active
            context.view_layer.objects.active = armature
            bpy.ops.object.mode_set(mode="EDIT")
            for k, jn in enumerate(joints):
                b = arm.edit_bones.new(jn)
                b.head = (0.0, 0.0, 0.0)
                b.tail = (0.0, 0.02 * (k + 1), 0.0)  # the palette has names only: no rest pose
            bpy.ops.object.mode_set(mode="OBJECT")
            context.view_layer.objects.active = prev
        else:
            context.scene.collection.children.link(root)

        component_names = {}
        for c in manifest.get("target", {}).get("components", []):
            component_names[c.get("id")] = c.get("mesh_name", "component %s" % c.get("id"))
        component_coll = {}
        objects = []
        for i, info in enumerate(facts["meshes"]):
            mesh = _build_mesh(pkg, i, info, materials)
            made.append((bpy.data.meshes, mesh))
            comps = info["components"]
            oname = comps[0]["meshName"] if len(comps) == 1 else info["name"]
            obj = bpy.data.objects.new(oname, mesh)
            made.append((bpy.data.objects, obj))
            obj["bem_mesh"] = info["mesh"]
            obj["bem_gltf_name"] = info["name"]
            for c in comps:
                coll = component_coll.get(c["component"])
                if coll is None:
                    coll = bpy.data.collections.new("%scomponent %d %s"
                                                    % (ROOT_PREFIX, c["component"], c["meshName"]))
                    made.append((bpy.data.collections, coll))
                    coll["bem_component"] = c["component"]
                    root.children.link(coll)
                    component_coll[c["component"]] = coll
                _link(obj, coll)
            if not comps:
                _link(obj, root)
            _skin(obj, pkg, i, info, armature, joints)
            _shape_keys(obj, pkg, i, info, facts)
            objects.append(obj)
            done += 1
            yield done, total, "mesh %s" % obj.name

        # A collection per option choice holding the meshes that choice shows
        # (the other groups at their defaults), from charkit's own selection.
        choices = []  # (group, choice, settings string)
        for g in facts["package"].get("optionGroups", []):
            for choice in g.get("choices", []):
                cid = choice.get("id") if isinstance(choice, dict) else choice
                choices.append((g["id"], cid, "%s:%s" % (g["id"], cid)))
        for a in manifest.get("appearances", []):  # BEM 1.0 (§5)
            choices.append(("appearance", a["id"], a["id"]))
        for gid, cid, setting in choices:
            sel = pkg.selection(setting)
            shown = {m for m, _d in sel["draws"]}
            coll = bpy.data.collections.new("%soption %s = %s" % (ROOT_PREFIX, gid, cid))
            made.append((bpy.data.collections, coll))
            coll["bem_group"] = gid
            coll["bem_choice"] = cid
            root.children.link(coll)
            for obj in objects:
                if obj["bem_mesh"] in shown:
                    _link(obj, coll)
            done += 1
            yield done, total, "option %s = %s" % (gid, cid)
        for obj in objects:
            if len(obj.data.materials) > 1:
                ng = _draw_filter(obj)
                if ng is not None:
                    made.append((bpy.data.node_groups, ng))
        apply_selection(root, pkg)
        return root
    except BaseException:
        for store, block in reversed(made):
            try:
                store.remove(block)
            except Exception:
                pass
        raise


def root_objects(root):
    """The package's mesh objects under `root`, by package mesh index."""
    seen = {}
    for obj in root.all_objects:
        if obj.type == "MESH" and "bem_mesh" in obj:
            seen.setdefault(obj.name, obj)
    return sorted(seen.values(), key=lambda o: (int(o["bem_mesh"]), o.name))


def apply_selection(root, pkg):
    """Shows the objects and draws the root's option/parameter strings select
    (charkit's own selection) and hides the rest; sets the slider keys to
    the selected ticks. Returns the selection."""
    sel = pkg.selection(root.get("bem_options", ""), root.get("bem_parameters", ""))
    draws = {}
    for m, d in sel["draws"]:
        draws.setdefault(m, set()).add(d)
    # A slider the options make unavailable evaluates at its neutral (§10).
    ticks = {p["id"]: p["tick"] if p.get("available", True) else None for p in sel["parameters"]}
    for obj in root_objects(root):
        selected = draws.get(int(obj["bem_mesh"]), set())
        obj.hide_viewport = not selected
        obj.hide_render = not selected
        mesh = obj.data
        slot_draws = list(mesh.get("bem_draws", []))
        hidden = np.array([slot_draws[s] not in selected if s < len(slot_draws) else False
                           for s in range(max(len(slot_draws), 1))], bool)
        mi = np.zeros(len(mesh.polygons), np.int32)
        mesh.polygons.foreach_get("material_index", mi)
        face_hidden = hidden[np.clip(mi, 0, len(hidden) - 1)]
        mesh.polygons.foreach_set("hide", face_hidden)  # Edit Mode
        attr = mesh.attributes.get(HIDDEN_ATTRIBUTE)  # the draw filter's input
        if attr is not None and attr.domain == "FACE" and attr.data_type == "BOOLEAN":
            attr.data.foreach_set("value", face_hidden)
            mesh.update()
        keys = mesh.shape_keys
        if keys is not None and "bem_sliders" in keys:
            set_slider_weights(keys, ticks)
    return sel


def set_slider_weights(keys, ticks):
    """BEM §10 at the given ticks (None: the slider is unavailable and sits
    at its neutral): a tick on a frame weighs that frame 1; a
    tick between frames a < t < b weighs them (b-t)/(b-a) and (t-a)/(b-a);
    the neutral frame has no shape key."""
    sliders = json.loads(keys["bem_sliders"])
    by_param = {}
    for kname, s in sliders.items():
        by_param.setdefault(s["parameter"], []).append((s["tick"], kname, s))
    for pid, frames in by_param.items():
        s0 = frames[0][2]
        t = ticks.get(pid, s0["default"])
        if t is None:  # unavailable: at its neutral
            t = s0["neutral"]
        points = sorted([(tick, kname) for tick, kname, _ in frames] + [(s0["neutral"], None)])
        weights = {kname: 0.0 for _, kname, _ in frames}
        for (a, ka), (b, kb) in zip(points, points[1:]):
            if a <= t <= b and b > a:
                if ka is not None:
                    weights[ka] = (b - t) / (b - a)
                if kb is not None:
                    weights[kb] = (t - a) / (b - a)
                break
        for kname, w in weights.items():
            kb = keys.key_blocks.get(kname)
            if kb is not None:
                kb.value = w


# ---- gathering --------------------------------------------------------------

class GatherError(Exception):
    """The scene cannot be packed; `obj` names the object concerned."""

    def __init__(self, obj, message):
        super().__init__("%s: %s" % (obj, message))
        self.obj = obj


def _pixels_rgba(img):
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    return np.clip(np.rint(px * 255.0), 0, 255).astype(np.uint8).reshape(h, w, 4)


def _stored_skin(mesh, n):
    """The skin slots stored at import (_skin): per vertex the bone names and
    weights of every slot, zero-weight ones included; None when absent."""
    bones = json.loads(mesh.get("bem_skin_bones", "null") or "null")
    if not bones:
        return None
    joints, weights = [], []
    for s in range(4):
        j = _read_int_attribute(mesh, "bem_joint_%d" % s, n)
        w = _read_attribute(mesh, "bem_weight_%d" % s, 1)
        if j is None or w is None:
            break
        if len(j) and (j.min() < 0 or j.max() >= len(bones)):
            return None
        joints.append(j)
        weights.append(w[:, 0])
    if not joints:
        return None
    names = np.array(bones, object)[np.stack(joints, axis=1)].tolist()
    return names, np.stack(weights, axis=1).astype(np.float64).tolist()


def _read_int_attribute(mesh, name, n):
    attr = mesh.attributes.get(name)
    if attr is None or attr.domain != "POINT" or attr.data_type != "INT":
        return None
    out = np.empty(n, np.int32)
    attr.data.foreach_get("value", out)
    return out


def gather_steps(root):
    """The package meshes under `root` as charkit.bem.pack takes them, and
    the edited images ({"name", "pixels"}: (h, w, 4) uint8, charkit encodes
    them), in steps: yields (done, total, what) after each object and
    returns (meshes, images, objects) where objects[k] is the object of
    meshes[k]. It reads the scene and changes nothing, so closing it early
    (a cancel) needs no cleanup."""
    meshes, objects = [], []
    packed = root_objects(root)
    for obj in packed:
        mesh = obj.data
        n = len(mesh.vertices)
        if n == 0:
            raise GatherError(obj.name, "the mesh has no vertices")
        co = np.empty(n * 3, np.float32)
        mesh.vertices.foreach_get("co", co)
        co = co.reshape(n, 3)
        mw = np.array(obj.matrix_world, np.float64)
        if obj.parent is not None and obj.parent.type == "ARMATURE":
            mw = np.array(obj.parent.matrix_world.inverted() @ obj.matrix_world, np.float64)
        identity = np.allclose(mw, np.eye(4), atol=0, rtol=0)
        lin = mw[:3, :3]

        def place(p):
            return p if identity else (p.astype(np.float64) @ lin.T + mw[:3, 3]).astype(np.float32)

        def turn(v):
            if identity:
                return v
            inv_t = np.linalg.inv(lin).T
            r = v.astype(np.float64) @ inv_t.T
            ln = np.linalg.norm(r, axis=1, keepdims=True)
            return (r / np.where(ln > 0, ln, 1)).astype(np.float32)

        attrs = {"POSITION": from_blender(place(co))}
        declared = {a["name"]: a["components"] for a in json.loads(mesh.get("bem_attributes", "[]"))}
        normal = _read_attribute(mesh, "NORMAL", 3)
        if normal is None and "NORMAL" in declared:
            normal = np.empty(n * 3, np.float32)
            mesh.vertices.foreach_get("normal", normal)
            normal = normal.reshape(n, 3)
        if normal is not None:
            attrs["NORMAL"] = from_blender(turn(normal))
        tangent = _read_attribute(mesh, "TANGENT", 3)
        tangent_w = _read_attribute(mesh, "TANGENT_W", 1)
        if tangent is not None and tangent_w is not None:
            t = from_blender(turn(tangent) if not identity else tangent)
            attrs["TANGENT"] = np.concatenate([t, -tangent_w], axis=1)
        # UV maps: per corner in Blender, per vertex in the package.
        nl = len(mesh.loops)
        loop_vertex = np.empty(nl, np.int32)
        mesh.loops.foreach_get("vertex_index", loop_vertex)
        for uv in mesh.uv_layers:
            if not uv.name.startswith("TEXCOORD_"):
                continue
            per_loop = np.empty(nl * 2, np.float32)
            uv.data.foreach_get("uv", per_loop)
            per_loop = per_loop.reshape(nl, 2)
            values = np.zeros((n, 2), np.float32)
            values[loop_vertex] = per_loop
            attrs[uv.name] = values
        for name, comps in declared.items():
            if name in attrs or name in ("JOINTS_0", "WEIGHTS_0", "POSITION", "NORMAL", "TANGENT"):
                continue
            if name.startswith("TEXCOORD_"):
                continue
            if name == "COLOR_0":
                v = _read_attribute(mesh, name, 4)
            elif comps == 4:
                xy, zw = _read_attribute(mesh, name + ".xy", 2), _read_attribute(mesh, name + ".zw", 2)
                v = None if xy is None or zw is None else np.concatenate([xy, zw], axis=1)
            else:
                v = _read_attribute(mesh, name, comps)
            if v is not None:
                attrs[name] = v
        # Skin: up to four vertex groups per vertex, in their order.
        joints_out = []
        if obj.vertex_groups and "JOINTS_0" in declared:
            gnames = [g.name for g in obj.vertex_groups]
            jidx = np.zeros((n, 4), np.uint16)
            wts = np.zeros((n, 4), np.float32)
            used = {}
            stored = _stored_skin(mesh, n)
            for v in mesh.vertices:
                infl = [(gnames[g.group], g.weight) for g in v.groups if g.weight > 0]
                if stored is not None:
                    names, weights = stored[0][v.index], stored[1][v.index]
                    if [(nm, w) for nm, w in zip(names, weights) if w > 0] == infl:
                        # The vertex's weights as imported: its slots as the
                        # package had them, zero-weight slots' bones included.
                        infl = list(zip(names, weights))
                if len(infl) > 4:
                    infl = sorted(infl, key=lambda x: -x[1])[:4]
                for s, (name, wt) in enumerate(infl):
                    if name not in used:
                        used[name] = len(joints_out)
                        joints_out.append(name)
                    jidx[v.index, s] = used[name]
                    wts[v.index, s] = wt
            attrs["JOINTS_0"] = jidx
            attrs["WEIGHTS_0"] = wts
        # Triangles per material slot (one slot per draw), winding restored.
        if hasattr(mesh, "calc_loop_triangles"):  # computed on demand in 4.x
            mesh.calc_loop_triangles()
        nt = len(mesh.loop_triangles)
        tv = np.empty(nt * 3, np.int32)
        mesh.loop_triangles.foreach_get("vertices", tv)
        tm = np.empty(nt, np.int32)
        mesh.loop_triangles.foreach_get("material_index", tm)
        tv = tv.reshape(nt, 3)[:, [0, 2, 1]]
        prims = []
        for s, slot in enumerate(obj.material_slots):
            mat = slot.material
            if mat is None:
                raise GatherError(obj.name, "material slot %d has no material" % s)
            idx = tv[tm == s].astype(np.uint32).ravel()
            if len(idx):
                prims.append({"indices": idx, "material": mat.get("bem_material", mat.name)})
        if not prims:
            raise GatherError(obj.name, "the mesh has no faces")
        targets = []
        keys = mesh.shape_keys
        if keys is not None and len(keys.key_blocks) > 1:
            ref = keys.reference_key
            base = np.empty(n * 3, np.float32)
            ref.data.foreach_get("co", base)
            base = base.reshape(n, 3)
            for kb in keys.key_blocks:
                if kb == ref:
                    continue
                co_k = np.empty(n * 3, np.float32)
                kb.data.foreach_get("co", co_k)
                delta = place(co_k.reshape(n, 3)) - place(base)
                targets.append({"name": kb.name, "positions": from_blender(delta),
                                "weight": float(kb.value)})
        meshes.append({"name": "mesh_%d" % int(obj["bem_mesh"]), "node": obj.name,
                       "attributes": attrs, "primitives": prims, "targets": targets,
                       "joints": joints_out})
        objects.append(obj)
        yield len(objects), len(packed) + 1, "object %s" % obj.name
    images = []
    for img in bpy.data.images:
        if "bem_pixels" not in img or "bem_name" not in img:
            continue
        rgba = _pixels_rgba(img)
        if hashlib.sha256(rgba.tobytes()).hexdigest() != img["bem_pixels"]:
            images.append({"name": img["bem_name"], "pixels": rgba})
    return meshes, images, objects


def find_root(context, name=""):
    """The BEM root collection named `name`, else the one holding the active
    object, else the only one in the file."""
    roots = [c for c in bpy.data.collections if "bem_source" in c]
    if name:
        return next((c for c in roots if c.name == name), None)
    obj = context.active_object
    if obj is not None:
        for c in roots:
            if obj.name in c.all_objects:
                return c
    return roots[0] if len(roots) == 1 else None

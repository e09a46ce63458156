"""charkit.bem (BemPackage, pack) against the charkit CLI: the meshes a
package opens with equal `bem export --raw-axes` read from the GLB file by
numpy, the selection equals `bem select`, and arrays packed back give a
valid package whose meshes are the original's bit for bit."""

import itertools
import json
import struct

import numpy as np
import pytest

from _helpers import DATA, charkit, cli

EXAMPLES = sorted((DATA / "examples").glob("example-*.*[mp]"))


def read_glb(path):
    """(json, {accessor index: array}) of a GLB, decoded by numpy here."""
    blob = path.read_bytes()
    magic, _version, _total = struct.unpack_from("<III", blob, 0)
    assert magic == 0x46546C67
    jlen, _ = struct.unpack_from("<II", blob, 12)
    doc = json.loads(blob[20:20 + jlen])
    blen, _ = struct.unpack_from("<II", blob, 20 + jlen)
    binary = blob[28 + jlen:28 + jlen + blen]
    dtypes = {5126: np.float32, 5125: np.uint32, 5123: np.uint16, 5121: np.uint8}
    widths = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}

    def accessor(i):
        a = doc["accessors"][i]
        v = doc["bufferViews"][a["bufferView"]]
        dt = np.dtype(dtypes[a["componentType"]])
        k = widths[a["type"]]
        stride = v.get("byteStride", dt.itemsize * k)
        start = v.get("byteOffset", 0) + a.get("byteOffset", 0)
        rows = [np.frombuffer(binary, dt, k, start + r * stride) for r in range(a["count"])]
        return np.array(rows).reshape(a["count"], k)
    return doc, accessor


def test_examples_exist():
    names = {p.name for p in EXAMPLES}
    assert {"example-1.0.bem", "example-1.1-game-layout.bem", "example-1.5.zip"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_open_matches_cli_export(path, tmp_path):
    glb = tmp_path / "x.glb"
    cli("bem", "export", path, "-o", glb, "--raw-axes")
    doc, accessor = read_glb(glb)
    with charkit.BemPackage.open(path) as pkg:
        facts = pkg.facts
        assert facts["version"].startswith("1.")
        by_name = {m["name"]: (i, m) for i, m in enumerate(facts["meshes"])}
        for gm in doc["meshes"]:
            i, info = by_name[gm["name"]]  # every exported mesh is among the opened ones
            prim0 = gm["primitives"][0]
            for name, acc in prim0["attributes"].items():
                want = accessor(acc).astype(np.float32)
                got = pkg.floats(i, name)
                assert got.shape == want.shape, name
                assert np.array_equal(got, want), "%s %s" % (gm["name"], name)
            draws = [p["draw"] for p in info["primitives"]]
            assert draws == sorted(draws)
            # Each exported primitive is one of the opened mesh's draws, same indices.
            opened = [pkg.indices(i, p).tolist() for p in range(len(info["primitives"]))]
            for p in gm["primitives"]:
                assert accessor(p["indices"]).ravel().tolist() in opened
        # The whole package: every draw of every mesh the manifest has.
        manifest = facts["manifest"]
        total = sum(len(m["primitives"]) for m in facts["meshes"])
        assert total == sum(len(m.get("draws", [])) for m in manifest["meshes"])


def test_selection_matches_cli_select():
    path = DATA / "examples" / "example-1.5.bem"
    with charkit.BemPackage.open(path) as pkg:
        groups = pkg.facts["manifest"]["option_groups"]
        g = groups[0]
        for choice in g["choices"]:
            opt = "%s:%s" % (g["id"], choice["id"])
            sel = pkg.selection(opt)
            want = json.loads(cli("bem", "select", path, "--options", opt, "--json").stdout)
            assert [grp["choice"] for grp in sel["groups"] if grp["id"] == g["id"]] == [choice["id"]]
            assert want["effective"][g["id"]] == choice["id"]
            assert sel["draws"] == want["draws"]
            assert [(c["component"], c["operation"]) for c in sel["components"]] == \
                [(c["target"], c["operation"]) for c in want["components"]]
        with pytest.raises(charkit.CharkitError) as e:
            pkg.selection("a:b&&c:d")
        assert e.value.code == "BEM_SETTINGS_SYNTAX"


def _holds(cond, chosen):
    """A §6 condition under the chosen {group: choice}, evaluated here."""
    if isinstance(cond, bool):
        return cond
    (op, arg), = cond.items()
    if op == "eq":
        return chosen.get(arg[0]) == arg[1]
    if op == "all":
        return all(_holds(c, chosen) for c in arg)
    if op == "any":
        return any(_holds(c, chosen) for c in arg)
    if op == "not":
        return not _holds(arg, chosen)
    raise ValueError(op)


def test_options_example_selects_per_draw():
    # Every combination of the options example: the draws the package
    # selects (and the CLI plans) are those worked out here from the
    # manifest: the replacing candidate of each component, then that mesh's
    # draws whose `when` holds; a slider is available where its
    # available_when holds, and the CLI evaluates an unavailable one at its
    # neutral tick.
    path = DATA / "examples" / "example-1.5-options.bem"
    with charkit.BemPackage.open(path) as pkg:
        manifest = pkg.facts["manifest"]
        groups = manifest["option_groups"]
        params = {p["id"]: p for p in manifest["parameters"]}
        saved = "&".join("%s:%d" % (p["id"], p["max"]) for p in manifest["parameters"])
        body_draws = set()
        for combo in itertools.product(*[[(g["id"], c["id"]) for c in g["choices"]]
                                         for g in groups]):
            chosen = dict(combo)
            opt = "&".join("%s:%s" % kv for kv in combo)
            want = []
            for rule in manifest["component_rules"]:
                holding = [c for c in rule["candidates"] if _holds(c["when"], chosen)]
                assert len(holding) == 1, (opt, rule["target"])
                if holding[0]["operation"] == "replace":
                    mesh = holding[0]["mesh"]
                    want += [[mesh, d] for d, draw in enumerate(manifest["meshes"][mesh]["draws"])
                             if _holds(draw["when"], chosen)]
            sel = pkg.selection(opt, saved)
            assert sorted(list(d) for d in sel["draws"]) == sorted(want), opt
            plan = json.loads(cli("bem", "select", path, "--options", opt, "--parameters", saved,
                                  "--json").stdout)
            assert sorted(list(d) for d in plan["draws"]) == sorted(want), opt
            for p in sel["parameters"]:
                available = _holds(params[p["id"]].get("available_when", True), chosen)
                assert p["available"] == available, (opt, p)
                assert plan["parameters"][p["id"]] == \
                    (params[p["id"]]["max"] if available else params[p["id"]]["neutral"]), opt
            body_draws.add(tuple(d for m, d in want if m == 0))
    # The example shows its body mesh with its first draw alone and with both.
    assert body_draws == {(0,), (0, 1)}


def _meshes(pkg):
    out = []
    for i, info in enumerate(pkg.facts["meshes"]):
        attrs = {a["name"]: pkg.floats(i, a["name"]) for a in info["attributes"]}
        joints = pkg.facts["skeleton"]["joints"]
        if "JOINTS_0" in attrs:
            used = sorted({int(j) for j in attrs["JOINTS_0"].ravel()})
            remap = {j: k for k, j in enumerate(used)}
            attrs["JOINTS_0"] = np.vectorize(remap.get)(attrs["JOINTS_0"].astype(int))
            mesh_joints = [joints[j] for j in used]
        else:
            mesh_joints = []
        out.append({"name": info["name"], "attributes": attrs, "joints": mesh_joints,
                    "primitives": [{"indices": pkg.indices(i, p), "material": prim["material"]}
                                   for p, prim in enumerate(info["primitives"])],
                    "targets": [{"name": t["name"], "positions": pkg.floats(i, "TARGET_%d" % k),
                                 "weight": t["weight"]}
                                for k, t in enumerate(info["targets"])]})
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_pack_round_trip(path, tmp_path):
    out = tmp_path / ("packed" + path.suffix)
    with charkit.BemPackage.open(path) as pkg:
        meshes = _meshes(pkg)
        report = charkit.bem.pack(path, meshes, output=out)
        assert report["ok"], report
        assert report["textures"] == []  # no image given: the package's bytes kept
        assert charkit.bem_validate(out)["valid"]
        with charkit.BemPackage.open(out) as again:
            assert len(again.facts["meshes"]) == len(meshes)
            for i, m in enumerate(meshes):
                for name, values in m["attributes"].items():
                    if name == "JOINTS_0":
                        continue  # palette order may differ; compared by bone name below
                    assert np.array_equal(again.floats(i, name), values), name
                for p, prim in enumerate(m["primitives"]):
                    assert np.array_equal(again.indices(i, p), prim["indices"])
                if m["joints"]:
                    names = again.facts["skeleton"]["joints"]
                    got = again.floats(i, "JOINTS_0").astype(int)
                    w = m["attributes"]["WEIGHTS_0"]
                    mine = np.array(m["joints"])[m["attributes"]["JOINTS_0"].astype(int)]
                    theirs = np.array(names)[got]
                    assert (mine[w > 0] == theirs[w > 0]).all()
            for k, _img in enumerate(pkg.facts["images"]):
                assert np.array_equal(again.image_rgba(k), pkg.image_rgba(k))


def test_pack_refusals_write_nothing(tmp_path):
    path = DATA / "examples" / "example-1.5.bem"
    out = tmp_path / "never.bem"
    with charkit.BemPackage.open(path) as pkg:
        meshes = _meshes(pkg)
    meshes[0]["primitives"][0]["material"] = "M_no_such_material"
    report = charkit.bem.pack(path, meshes, output=out)
    assert not report["ok"]
    assert report["error"]["code"] == "BEM_PACK_MATERIAL"
    assert report["error"]["location"].startswith("/meshes/0/primitives/0")
    assert not out.exists()
    with pytest.raises(charkit.CharkitError) as e:
        charkit.bem.pack(path, meshes, output=out, texture_formats={"color": "BC9"})
    assert e.value.code == "CAPI_ARGUMENT"
    with pytest.raises(charkit.CharkitError) as e:
        charkit.BemPackage.open(DATA / "examples" / "README.md")
    assert e.value.code in ("CAPI_BEM_INVALID",)


def test_edited_pixels_are_encoded(tmp_path):
    # RGBA8 pixels handed to the packer (charkit encodes them): packed into
    # the 1.5 example's texture an edited image is encoded; the unedited
    # image given as pixels keeps the package's bytes.
    path = DATA / "examples" / "example-1.5.bem"
    with charkit.BemPackage.open(path) as pkg:
        meshes = _meshes(pkg)
        name = pkg.facts["images"][0]["name"]
        rgba = pkg.image_rgba(0).copy()
    same = charkit.bem.pack(path, meshes, images=[{"name": name, "pixels": rgba}])
    assert same["ok"], same
    assert [t["encoded"] for t in same["textures"]] == [False]
    rgba[0, 0] = [255, 0, 0, 255]
    report = charkit.bem.pack(path, meshes, output=tmp_path / "t.bem",
                              images=[{"name": name, "pixels": rgba}])
    assert report["ok"], report
    assert [t["encoded"] for t in report["textures"]] == [True]


def test_pack_refuses_arrays_that_do_not_match(tmp_path):
    path = DATA / "examples" / "example-1.5.bem"
    with charkit.BemPackage.open(path) as pkg:
        meshes = _meshes(pkg)
    n = len(meshes[0]["attributes"]["POSITION"])
    meshes[0]["attributes"]["NORMAL"] = np.zeros((n - 1, 3), np.float32)  # one vertex short
    with pytest.raises(charkit.CharkitError) as e:
        charkit.bem.pack(path, meshes, output=tmp_path / "never.bem")
    assert e.value.code == "CAPI_ARGUMENT"
    assert "/meshes/0/attributes/" in str(e.value)
    assert not (tmp_path / "never.bem").exists()
    # Arrays that match their description but not each other: a report
    # located at the mesh and draw, nothing written.
    meshes[0]["attributes"]["NORMAL"] = np.zeros((n, 3), np.float32)
    meshes[0]["primitives"][0]["indices"] = meshes[0]["primitives"][0]["indices"].copy()
    meshes[0]["primitives"][0]["indices"][0] = n  # one past the last vertex
    report = charkit.bem.pack(path, meshes, output=tmp_path / "never.bem")
    assert not report["ok"]
    assert report["error"]["location"].startswith("/meshes/0/primitives/0")
    assert not (tmp_path / "never.bem").exists()

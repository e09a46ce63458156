"""InputSpec, sample_poses and pose_features against `charkit deformer sample`."""

import json

import numpy as np
import pytest

from _helpers import (FIGURE, FIGURE_BONES, assert_bit_equal,
                      charkit, cli, load_npz)


def _axis(enabled, lo, hi):
    return {"enabled": enabled, "min_deg": lo, "max_deg": hi}


def test_spec_from_names_has_cli_defaults():
    spec = charkit.InputSpec(["a", "b"], curves=["c"])
    d = spec.to_dict()
    assert spec.bone_names == ["a", "b"]
    assert spec.curve_names == ["c"]
    assert spec.bone_count == 2 and spec.curve_count == 1
    assert spec.feature_count() == 7
    assert spec.feature_count("engine") == 13
    for bone in d["bones"]:
        assert [(a["enabled"], a["min_deg"], a["max_deg"]) for a in bone["axes"]] == \
            [(True, -45.0, 45.0)] * 3
    assert (d["curves"][0]["min"], d["curves"][0]["max"]) == (0.0, 1.0)
    again = charkit.InputSpec.from_json(spec.to_json())
    assert again.to_dict() == d


def test_features_match_cli_bones_axes_range(tmp_path):
    # --bones with --axes xz --range 30: y disabled.
    out = tmp_path / "d.npz"
    cli("deformer", "sample", FIGURE, "--bones", ",".join(FIGURE_BONES), "--axes", "xz",
        "--range", "30", "--poses", "25", "--seed", "4242", "-o", out,
        "--write-spec", tmp_path / "spec.json", "-q")
    spec = charkit.InputSpec([{"name": b, "axes": [_axis(True, -30.0, 30.0),
                                                   _axis(False, -30.0, 30.0),
                                                   _axis(True, -30.0, 30.0)]}
                              for b in FIGURE_BONES])
    written = json.loads((tmp_path / "spec.json").read_text())
    assert spec.to_dict() == charkit.InputSpec.from_json(json.dumps(written)).to_dict()

    rotations, euler, curves = charkit.sample_poses(spec, 25, seed=4242)
    assert rotations.shape == (26, 3, 4) and rotations.dtype == np.float64
    assert euler.shape == (26, 3, 3) and curves.shape == (26, 0)
    # Sample 0 is the rest pose; y never turns; every angle within its range.
    assert_bit_equal(rotations[0], np.tile(np.float64([0, 0, 0, 1]), (3, 1)), "rest rotation")
    assert np.all(euler[:, :, 1] == 0)
    assert np.all(np.abs(euler) <= 30)
    assert np.count_nonzero(euler[1:, :, [0, 2]]) == 25 * 3 * 2

    feats = charkit.pose_features(spec, rotations)
    want = load_npz(out)["features"]
    assert_bit_equal(feats, want, "axis-angle features")
    assert np.all(feats[0] == 0)


def test_features_match_cli_all_bones_with_curves(tmp_path):
    # --bones all, then a spec with curves written by hand (curves do not move
    # the mesh, they only add feature columns).
    cli("deformer", "sample", FIGURE, "--bones", "all", "--poses", "2", "-o",
        tmp_path / "all.npz", "--write-spec", tmp_path / "all_spec.json", "-q")
    doc = json.loads((tmp_path / "all_spec.json").read_text())
    assert len(doc["bones"]) == 19
    doc["bones"][0]["axes"][1] = _axis(True, -10.0, 80.0)
    doc["curves"] = [{"name": "jaw_open", "min": 0.0, "max": 1.0},
                     {"name": "brow", "min": -0.5, "max": 2.0}]
    (tmp_path / "spec2.json").write_text(json.dumps(doc))
    out = tmp_path / "d.npz"
    cli("deformer", "sample", FIGURE, "--spec", tmp_path / "spec2.json", "--poses", "30",
        "--seed", "9", "-o", out, "-q")
    spec = charkit.InputSpec.from_json(json.dumps(doc))
    assert spec.feature_count() == 19 * 3 + 2
    rotations, euler, curves = charkit.sample_poses(spec, 30, seed=9)
    assert curves.shape == (31, 2)
    assert np.all(curves[0] == 0)
    assert np.all((curves[1:, 0] >= 0) & (curves[1:, 0] < 1))
    assert np.all((curves[1:, 1] >= -0.5) & (curves[1:, 1] < 2))
    feats = charkit.pose_features(spec, rotations, curves)
    want = load_npz(out)["features"]
    assert_bit_equal(feats, want, "features with curves")
    assert_bit_equal(feats[:, -2:], want[:, -2:], "curve columns vs the CLI")
    assert_bit_equal(feats[:, -2:], curves.astype(np.float32), "curve columns")
    # The dataset's spec is the one we built.
    assert charkit.Dataset.load(out).spec.to_dict() == spec.to_dict()


def test_default_seed_is_the_cli_default(tmp_path):
    out = tmp_path / "d.npz"
    cli("deformer", "sample", FIGURE, "--bones", "joint_2", "--poses", "5", "-o", out, "-q")
    spec = charkit.InputSpec(["joint_2"])
    rotations, _, _ = charkit.sample_poses(spec, 5)
    assert_bit_equal(charkit.pose_features(spec, rotations), load_npz(out)["features"],
                        "features with the default seed 777")


@pytest.mark.parametrize("layout", ["axis-angle", "engine"])
def test_features_bit_equal_to_cli(tmp_path, layout):
    # sample_poses + pose_features == the dataset's features, bit for bit
    # (poses cross the C API in double precision, as the CLI keeps them).
    out = tmp_path / "d.npz"
    cli("deformer", "sample", FIGURE, "--bones", ",".join(FIGURE_BONES), "--poses", "200",
        "--seed", "4242", "--layout", layout, "-o", out, "-q")
    spec = charkit.InputSpec(FIGURE_BONES)
    rotations, _, _ = charkit.sample_poses(spec, 200, seed=4242)
    rest = _figure_rest_rotations(FIGURE_BONES) if layout == "engine" else None
    feats = charkit.pose_features(spec, rotations, layout=layout, rest_local=rest)
    assert_bit_equal(feats, load_npz(out)["features"], layout + " features, bit for bit")


def test_features_are_rotation_vectors(tmp_path):
    # An independent check of the axis-angle layout: numpy's rotation vectors
    # of the sampled quaternions (w >= 0, angle = 2 atan2(|v|, w)).
    spec = charkit.InputSpec(FIGURE_BONES)
    rotations, _, _ = charkit.sample_poses(spec, 200, seed=4242)
    q = rotations.astype(np.float64)
    q = np.where(q[..., 3:4] < 0, -q, q)
    v = q[..., :3]
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2 * np.arctan2(n, q[..., 3:4])
    want = np.where(n > 0, v / np.where(n > 0, n, 1) * angle, 0).reshape(201, -1)
    np.testing.assert_allclose(charkit.pose_features(spec, rotations), want.astype(np.float32),
                               rtol=1e-6, atol=1e-7)


def _figure_rest_rotations(bones):
    """The rest local rotations of RiggedFigure's joints, from the GLB's nodes."""
    import struct
    blob = FIGURE.read_bytes()
    n = struct.unpack("<I", blob[12:16])[0]
    gltf = json.loads(blob[20:20 + n])
    index = {"joint_%d" % j: j for j in gltf["skins"][0]["joints"]}
    return np.array([gltf["nodes"][index[b]].get("rotation", [0, 0, 0, 1]) for b in bones],
                    np.float32)


def test_euler_angles_give_the_quaternions():
    spec = charkit.InputSpec([{"name": "b", "axes": [_axis(True, -170.0, 170.0)] * 3}])
    rotations, euler, _ = charkit.sample_poses(spec, 50, seed=1)
    e = np.radians(euler[:, 0, :].astype(np.float64))

    def q(axis, a):
        v = np.zeros((len(a), 4))
        v[:, axis] = np.sin(a / 2)
        v[:, 3] = np.cos(a / 2)
        return v

    def mul(p, r):  # Hamilton product, (x, y, z, w)
        px, py, pz, pw = p.T
        rx, ry, rz, rw = r.T
        return np.stack([pw * rx + px * rw + py * rz - pz * ry,
                         pw * ry - px * rz + py * rw + pz * rx,
                         pw * rz + px * ry - py * rx + pz * rw,
                         pw * rw - px * rx - py * ry - pz * rz], axis=1)

    want = mul(q(2, e[:, 2]), mul(q(1, e[:, 1]), q(0, e[:, 0])))   # q = qz * qy * qx
    got = rotations[:, 0, :].astype(np.float64)
    sign = np.where(np.sum(want * got, axis=1) < 0, -1.0, 1.0)[:, None]
    np.testing.assert_allclose(got, want * sign, atol=1e-6)


def test_one_pose_and_engine_layout():
    spec = charkit.InputSpec(["a", "b"], curves=["c"])
    half = np.float32(np.sqrt(0.5))
    rot = np.array([[0, 0, 0, 1], [half, 0, 0, half]], np.float32)   # b: 90 deg about x
    f = charkit.pose_features(spec, rot, curves=[0.25])
    assert f.shape == (7,)
    np.testing.assert_allclose(f, [0, 0, 0, np.pi / 2, 0, 0, 0.25], atol=1e-6)
    # Curves left out are 0.
    assert charkit.pose_features(spec, rot)[-1] == 0
    e = charkit.pose_features(spec, rot, curves=[0.25], layout="engine")
    assert e.shape == (13,)
    # Rows of the rotation matrix: identity, then a 90 deg turn about x.
    np.testing.assert_allclose(e, [1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, -1, 0.25], atol=1e-6)
    # rest_local composes as rest_local * pose: a rest turn of -90 deg about x on b
    # brings it back to the identity.
    rest = np.array([[0, 0, 0, 1], [-half, 0, 0, half]], np.float32)
    e2 = charkit.pose_features(spec, rot, curves=[0.25], layout="engine", rest_local=rest)
    np.testing.assert_allclose(e2, [1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0.25], atol=1e-6)


def test_engine_features_match_cli(tmp_path):
    # The dataset's engine features equal pose_features with the rig's rest
    # local rotations, read from the GLB's nodes.
    out = tmp_path / "e.npz"
    cli("deformer", "sample", FIGURE, "--bones", ",".join(FIGURE_BONES), "--poses", "20",
        "--seed", "5", "--layout", "engine", "-o", out, "-q")
    rest = _figure_rest_rotations(FIGURE_BONES)
    spec = charkit.InputSpec(FIGURE_BONES)
    rotations, _, _ = charkit.sample_poses(spec, 20, seed=5)
    feats = charkit.pose_features(spec, rotations, layout="engine", rest_local=rest)
    want = load_npz(out)["features"]
    assert feats.shape == want.shape == (21, 18)
    assert_bit_equal(feats, want, "engine features")


def test_bad_rotation_shape_is_a_value_error():
    spec = charkit.InputSpec(["a", "b"])
    with pytest.raises(ValueError, match="rotations"):
        charkit.pose_features(spec, np.zeros((4, 3, 4), np.float32))
    with pytest.raises(ValueError, match="rotations"):
        charkit.pose_features(spec, np.zeros((4, 2, 3), np.float32))
    with pytest.raises(ValueError, match="curves"):
        charkit.pose_features(spec, np.zeros((4, 2, 4), np.float32), curves=np.zeros((4, 1)))


def test_pose_library_matches_cli_bake(tmp_path):
    # `deformer bake --sample 3` bakes poses 1..3 of the seeded sampling and
    # writes their pose library.
    cli("deformer", "sample", FIGURE, "--bones", ",".join(FIGURE_BONES), "--poses", "8",
        "-o", tmp_path / "d.npz", "-q")
    cli("deformer", "train", tmp_path / "d.npz", "-o", tmp_path / "m.json", "-q")
    cli("deformer", "bake", tmp_path / "m.json", FIGURE, "--sample", "3", "--seed", "9",
        "-o", tmp_path / "baked.glb", "--library", tmp_path / "lib.json", "--prefix", "ck_",
        "-q")
    want = json.loads((tmp_path / "lib.json").read_text())
    spec = charkit.InputSpec(FIGURE_BONES)
    rotations, euler, _ = charkit.sample_poses(spec, 3, seed=9)
    names = ["pose_1", "pose_2", "pose_3"]
    got = json.loads(charkit.pose_library_json(spec, "Proxy", names, rotations[1:],
                                               shape_keys=["ck_" + n for n in names]))
    for key in ("format", "version", "mesh", "bones", "curves"):
        assert got[key] == want[key], key
    assert [(p["name"], p["shape_key"]) for p in got["poses"]] == \
        [(p["name"], p["shape_key"]) for p in want["poses"]]
    for i, (g, w) in enumerate(zip(got["poses"], want["poses"])):
        assert sorted(g["rotations"]) == sorted(FIGURE_BONES)
        for b, bone in enumerate(FIGURE_BONES):
            # The same double quaternions as the CLI's.
            assert g["rotations"][bone]["quaternion"] == w["rotations"][bone]["quaternion"]
            np.testing.assert_allclose(g["rotations"][bone]["euler_xyz_deg"],
                                       w["rotations"][bone]["euler_xyz_deg"], atol=1e-4)
            np.testing.assert_allclose(g["rotations"][bone]["euler_xyz_deg"],
                                       euler[i + 1, b], atol=1e-4)
    # Curves are written per pose; names and keys are checked.
    spec_c = charkit.InputSpec(["joint_2"], curves=["smile"])
    doc = json.loads(charkit.pose_library_json(spec_c, "m", ["a"], np.float32([[[0, 0, 0, 1]]]),
                                               curves=[[0.5]]))
    assert doc["poses"][0]["curves"] == {"smile": 0.5}
    assert "shape_key" not in doc["poses"][0] or not doc["poses"][0]["shape_key"]
    with pytest.raises(ValueError, match="shape_keys"):
        charkit.pose_library_json(spec_c, "m", ["a"], np.float32([[[0, 0, 0, 1]]]),
                                  shape_keys=["x", "y"])

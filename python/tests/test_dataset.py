"""Rigs and datasets: Rig from arrays (against a numpy LBS), Rig.load, and
Dataset.from_positions against `charkit deformer sample --targets pc2`."""

import json

import numpy as np
import pytest

from _helpers import (FIGURE, FIGURE_BONES, assert_bit_equal,
                      charkit, cli, cli_json, load_npz, write_pc2)


# ---- numpy reference skinning -------------------------------------------------

def quat_matrix(q):
    x, y, z, w = np.asarray(q, np.float64) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def quat_mul(p, r):
    px, py, pz, pw = p
    rx, ry, rz, rw = r
    return np.array([pw * rx + px * rw + py * rz - pz * ry, pw * ry - px * rz + py * rw + pz * rx,
                     pw * rz + px * ry - py * rx + pz * rw, pw * rw - px * rx - py * ry - pz * rz])


def trs_matrix(t, q, s):
    m = np.eye(4)
    m[:3, :3] = quat_matrix(q) * np.asarray(s, np.float64)[None, :]
    m[:3, 3] = t
    return m


def world_matrices(parents, trs, pose=None):
    """pose: {joint: rest-relative quaternion}; local rotation = rest * pose."""
    out = []
    for j, p in enumerate(parents):
        q = trs[j, 3:7].astype(np.float64)
        if pose and j in pose:
            q = quat_mul(q, pose[j])
        m = trs_matrix(trs[j, :3], q, trs[j, 7:10])
        out.append(m if p < 0 else out[p] @ m)
    return np.array(out)


def lbs(positions, joints, weights, skin):
    v = np.c_[positions.astype(np.float64), np.ones(len(positions))]
    out = np.zeros((len(positions), 3))
    for k in range(4):
        out += weights[:, k:k + 1] * np.einsum("vij,vj->vi", skin[joints[:, k]], v)[:, :3]
    return out


def small_rig_arrays(seed=3):
    rng = np.random.default_rng(seed)
    names = ["root", "spine", "arm", "hand"]
    parents = np.array([-1, 0, 1, 1])
    trs = np.zeros((4, 10), np.float32)
    trs[:, 7:10] = 1
    trs[:, :3] = [[0.1, 0, 0], [0, 1, 0], [0.5, 0.2, 0], [0, 0.8, 0.1]]
    for j in range(4):
        q = rng.normal(size=4)
        trs[j, 3:7] = q / np.linalg.norm(q)
    v = 40
    positions = rng.uniform(-1, 2, size=(v, 3)).astype(np.float32)
    joints = rng.integers(0, 4, size=(v, 4)).astype(np.uint32)
    weights = rng.uniform(0, 1, size=(v, 4)).astype(np.float32)
    weights /= weights.sum(axis=1, keepdims=True)
    return names, parents, trs, positions, joints, weights


def test_rig_from_arrays_default_inverse_bind():
    names, parents, trs, positions, joints, weights = small_rig_arrays()
    rig = charkit.Rig(names, parents, trs, positions, joints, weights, mesh_name="body")
    info = rig.info()
    assert info["mesh"] == "body" and info["vertices"] == 40
    assert info["joints"] == names and list(info["parents"]) == [-1, 0, 1, 1]
    assert rig.vertex_count == 40 and rig.joint_names == names and rig.morph_names == []
    assert_bit_equal(rig.positions(), positions, "positions")

    spec = charkit.InputSpec(["arm", "spine"])
    qa = np.array([0.3, -0.2, 0.1, 0.9]); qa /= np.linalg.norm(qa)
    qs = np.array([0.0, 0.25, 0.0, 0.97]); qs /= np.linalg.norm(qs)
    rot = np.array([qa, qs], np.float32)
    rest_world = world_matrices(parents, trs)
    posed = world_matrices(parents, trs, {2: rot[0].astype(np.float64),
                                          1: rot[1].astype(np.float64)})
    skin = posed @ np.linalg.inv(rest_world)
    want = lbs(positions, joints, weights, skin)
    got = rig.skin(spec, rot)
    assert got.shape == (40, 3) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=2e-5)
    # At rest (default inverse bind = inverse rest world) skinning is the identity.
    rest = rig.skin(spec, np.tile(np.float32([0, 0, 0, 1]), (2, 1)))
    np.testing.assert_allclose(rest, positions, atol=2e-5)
    # Offsets are added in bind space, before skinning.
    off = np.random.default_rng(0).normal(scale=0.05, size=(40, 3)).astype(np.float32)
    np.testing.assert_allclose(rig.skin(spec, rot, offsets=off),
                               lbs(positions + off, joints, weights, skin), atol=2e-5)


def test_rig_inverse_bind_is_row_major():
    names, parents, trs, positions, joints, weights = small_rig_arrays(7)
    rest_world = world_matrices(parents, trs)
    # Bound somewhere else than the rest pose: a translated, turned bind.
    shift = trs_matrix([0.3, -0.1, 0.2], [0.0, 0.0, np.sin(0.2), np.cos(0.2)], [1, 1, 1])
    inverse_bind = np.linalg.inv(rest_world @ shift).astype(np.float32)   # (J, 4, 4) row-major
    rig = charkit.Rig(names, parents, trs, positions, joints, weights, inverse_bind=inverse_bind)
    spec = charkit.InputSpec(["hand"])
    q = np.float32([[0.0, 0.6, 0.0, 0.8]])
    posed = world_matrices(parents, trs, {3: q[0].astype(np.float64)})
    want = lbs(positions, joints, weights, posed @ inverse_bind.astype(np.float64))
    np.testing.assert_allclose(rig.skin(spec, q), want, atol=2e-5)


def test_rig_add_morph_and_shape_checks():
    names, parents, trs, positions, joints, weights = small_rig_arrays()
    rig = charkit.Rig(names, parents, trs, positions, joints, weights,
                      triangles=np.array([[0, 1, 2], [2, 3, 4]]))
    rig.add_morph("smile", np.ones((40, 3), np.float32))
    rig.add_morph("frown", np.zeros((40, 3), np.float32))
    rig.add_morph("smile", np.zeros((40, 3), np.float32))   # replaced, not added
    assert rig.morph_names == ["smile", "frown"]
    with pytest.raises(ValueError, match="deltas"):
        rig.add_morph("bad", np.zeros((39, 3), np.float32))
    with pytest.raises(ValueError, match="rest_trs"):
        charkit.Rig(names, parents, trs[:, :9], positions, joints, weights)
    with pytest.raises(ValueError, match="joints"):
        charkit.Rig(names, parents, trs, positions, -np.ones((40, 4), np.int64), weights)
    with pytest.raises(ValueError, match="inverse_bind"):
        charkit.Rig(names, parents, trs, positions, joints, weights,
                    inverse_bind=np.zeros((4, 16), np.float32))
    # A parent after its child is the library's to refuse.
    with pytest.raises(charkit.CharkitError) as e:
        charkit.Rig(names, [-1, 2, 0, 1], trs, positions, joints, weights)
    assert e.value.status in (1, 3) and e.value.code


def test_rig_load():
    rig = charkit.Rig.load(FIGURE)
    info = rig.info()
    assert info["vertices"] == 370 == rig.vertex_count
    assert len(info["joints"]) == 19 and set(FIGURE_BONES) <= set(rig.joint_names)
    assert all(p < j for j, p in enumerate(info["parents"]))
    assert rig.positions().shape == (370, 3)
    # RiggedFigure is bound under a -90 deg turn about x: at rest, skinning is that turn.
    spec = charkit.InputSpec(FIGURE_BONES)
    rest = rig.skin(spec, np.tile(np.float32([0, 0, 0, 1]), (3, 1)))
    p = rig.positions().astype(np.float64)
    np.testing.assert_allclose(rest, np.c_[p[:, 0], p[:, 2], -p[:, 1]], atol=1e-5)


# ---- Datasets ----------------------------------------------------------------

POSES, SEED = 12, 21


def _bump(rig_positions, count):
    """A known world-space bump per pose (none at rest)."""
    v = rig_positions.shape[0]
    i = np.arange(count + 1, dtype=np.float64)[:, None]
    k = np.arange(v, dtype=np.float64)[None, :]
    b = np.zeros((count + 1, v, 3))
    b[:, :, 0] = 0.01 * np.sin(0.3 * k + i)
    b[:, :, 1] = 0.02 * np.cos(0.1 * k * i)
    b[:, :, 2] = 0.005 * i / count
    b[0] = 0
    return b


@pytest.fixture(scope="module")
def pc2_case(tmp_path_factory):
    """Targets = LBS of each sampled pose + a known bump, written as a PC2 cache,
    sampled by the CLI with --targets pc2 and built by Dataset.from_positions."""
    tmp = tmp_path_factory.mktemp("pc2")
    rig = charkit.Rig.load(FIGURE)
    spec = charkit.InputSpec(FIGURE_BONES)
    rotations, _, _ = charkit.sample_poses(spec, POSES, seed=SEED)
    lbs_pos = np.stack([rig.skin(spec, r) for r in rotations])
    targets = (lbs_pos + _bump(rig.positions(), POSES)).astype(np.float32)
    write_pc2(tmp / "t.pc2", targets)
    out = tmp / "d.npz"
    summary = cli_json("deformer", "sample", FIGURE, "--bones", ",".join(FIGURE_BONES),
                       "--poses", POSES, "--seed", SEED, "--targets", "pc2",
                       "--cache", tmp / "t.pc2", "-o", out, "-q")
    ds = charkit.Dataset.from_positions(rig, spec, rotations, targets)
    return dict(rig=rig, spec=spec, rotations=rotations, lbs=lbs_pos, targets=targets,
                summary=summary, want=load_npz(out), ds=ds)


def test_from_positions_bit_equal_to_cli_pc2(pc2_case):
    # Deltas bit-equal to `deformer sample --targets pc2` (docs/c_api.md).
    assert_bit_equal(pc2_case["ds"].deltas(), pc2_case["want"]["deltas"],
                     "deltas from positions, bit for bit")


def test_from_positions_matches_cli_pc2(pc2_case):
    rig, spec, rotations = pc2_case["rig"], pc2_case["spec"], pc2_case["rotations"]
    targets, want, summary, ds = (pc2_case[k] for k in ("targets", "want", "summary", "ds"))
    assert (ds.sample_count, ds.feature_count, ds.vertex_count) == (POSES + 1, 9, 370)
    assert ds.layout == "axis-angle"
    assert_bit_equal(ds.deltas(), want["deltas"], "deltas from positions")
    assert_bit_equal(ds.features(), want["features"], "features from positions")
    # The features are those of pose_features on the same rotations, exactly.
    assert_bit_equal(ds.features(), charkit.pose_features(spec, rotations), "features")
    mean, worst = ds.lbs_error
    assert mean == pytest.approx(summary["lbsError"]["mean"], rel=1e-6)
    assert worst == pytest.approx(summary["lbsError"]["max"], rel=1e-6)
    assert worst > 0.01
    # The deltas, skinned, give the targets back.
    d = ds.deltas()
    for i in (1, 5, POSES):
        np.testing.assert_allclose(rig.skin(spec, rotations[i], offsets=d[i]), targets[i],
                                   atol=2e-5)


def test_from_positions_of_plain_lbs_is_zero(pc2_case):
    rig, spec, rotations, lbs_pos = (pc2_case[k] for k in ("rig", "spec", "rotations", "lbs"))
    # Plain LBS targets: zero deltas and zero LBS error.
    plain = charkit.Dataset.from_positions(rig, spec, rotations, lbs_pos)
    np.testing.assert_allclose(plain.deltas(), 0, atol=2e-5)
    assert plain.lbs_error[1] < 1e-5


def test_from_positions_engine_layout_and_curves(tmp_path):
    rig = charkit.Rig.load(FIGURE)
    spec = charkit.InputSpec(FIGURE_BONES, curves=["jaw"])
    rotations, _, curves = charkit.sample_poses(spec, 6, seed=2)
    targets = np.stack([rig.skin(spec, r) for r in rotations])
    ds = charkit.Dataset.from_positions(rig, spec, rotations, targets, curves=curves,
                                        layout="engine")
    assert ds.layout == "engine" and ds.feature_count == 19
    assert_bit_equal(ds.features()[:, -1], curves[:, 0].astype(np.float32), "curve column")
    with pytest.raises(ValueError, match="positions"):
        charkit.Dataset.from_positions(rig, spec, rotations, targets[:, :10])


def test_load_cli_dataset_and_round_trip(tmp_path):
    out = tmp_path / "d.npz"
    cli("deformer", "sample", FIGURE, "--bones", ",".join(FIGURE_BONES), "--poses", "10",
        "--seed", "3", "-o", out, "-q")
    want = load_npz(out)
    ds = charkit.Dataset.load(out)
    assert ds.lbs_error is None
    assert_bit_equal(ds.features(), want["features"], "loaded features")
    assert_bit_equal(ds.deltas(), want["deltas"], "loaded deltas")
    assert ds.spec.bone_names == FIGURE_BONES

    # From arrays ((N, 3V) deltas accepted), saved and loaded back.
    made = charkit.Dataset(ds.spec, want["features"], want["deltas"].reshape(11, -1),
                           mesh_name="Proxy")
    made.save(tmp_path / "copy.npz")
    again = load_npz(tmp_path / "copy.npz")
    assert_bit_equal(again["features"], want["features"], "saved features")
    assert_bit_equal(again["deltas"], want["deltas"], "saved deltas")
    side = json.loads((tmp_path / "copy.json").read_text())
    assert side["layout"] == "axis_angle" and side["mesh"] == "Proxy"
    assert (side["sample_count"], side["feature_count"], side["vertex_count"]) == (11, 9, 370)
    loaded = charkit.Dataset.load(tmp_path / "copy.npz")
    assert_bit_equal(loaded.deltas(), want["deltas"], "reloaded deltas")

    with pytest.raises(ValueError, match="features"):
        charkit.Dataset(ds.spec, want["features"][:, :8], want["deltas"])
    with pytest.raises(ValueError, match="deltas"):
        charkit.Dataset(ds.spec, want["features"], want["deltas"][:5])

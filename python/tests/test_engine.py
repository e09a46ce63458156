"""The engine bridge: export_nmn against `charkit deformer export-nmn`,
import_network, and run_network on .nmn and ONNX against `charkit deformer run`."""

import json

import numpy as np
import pytest

from _helpers import (DATA, FIGURE, FIGURE_BONES, assert_bit_equal, charkit, cli, load_npz,
                      read_tensor_pb)

EXPORT_CLI = ["--hidden", "16", "--morphs", "6", "--iterations", "80", "--batch", "16",
              "--lr", "0.002", "--seed", "4"]
EXPORT_PY = dict(hidden=[16], morphs=6, iterations=80, batch_size=16, learning_rate=0.002,
                 seed=4)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A dataset (axis-angle), the same poses in the engine layout, and the
    CLI's and our exports of it."""
    d = tmp_path_factory.mktemp("engine")
    bones = ",".join(FIGURE_BONES)
    cli("deformer", "sample", FIGURE, "--bones", bones, "--poses", "40", "--seed", "11",
        "-o", d / "d.npz", "-q")
    cli("deformer", "sample", FIGURE, "--bones", bones, "--poses", "40", "--seed", "11",
        "--layout", "engine", "-o", d / "de.npz", "-q")
    (d / "cli").mkdir()
    (d / "py").mkdir()
    cli("deformer", "export-nmn", d / "d.npz", FIGURE, "-o", d / "cli" / "MLD.nmn",
        "--pose-model", d / "cli" / "engine.json", *EXPORT_CLI, "-q")
    rig = charkit.Rig.load(FIGURE)
    ds = charkit.Dataset.load(d / "d.npz")
    calls = []
    model = charkit.export_nmn(rig, ds, d / "py" / "MLD.nmn",
                               progress=lambda *a: calls.append(a), **EXPORT_PY)
    return dict(dir=d, model=model, calls=calls, dataset=ds)


def test_export_matches_cli(exported):
    d = exported["dir"]
    ours, theirs = d / "py", d / "cli"
    assert (ours / "MLD.nmn").read_bytes() == (theirs / "MLD.nmn").read_bytes()
    assert json.loads((ours / "MLD.bmd_ue.json").read_text()) == \
        json.loads((theirs / "MLD.bmd_ue.json").read_text())
    got, want = load_npz(ours / "MLD.morphs.npz"), load_npz(theirs / "MLD.morphs.npz")
    assert sorted(got) == sorted(want)
    for k in want:
        if want[k].dtype.kind == "f":
            assert_bit_equal(got[k], want[k], "morphs.npz " + k)
        else:
            assert np.array_equal(got[k], want[k]), k

    model = exported["model"]
    assert model.kind == "neural" and model.layout == "engine"
    assert model.feature_count == 18
    assert model.morph_names == ["mean"] + ["pc%d" % i for i in range(1, 7)]
    # The returned model is the one `--pose-model` saves.
    model.save(d / "py" / "engine.json")
    a, b = load_npz(d / "py" / "engine.npz"), load_npz(theirs / "engine.npz")
    assert sorted(a) == sorted(b)
    for k in b:
        assert_bit_equal(a[k], b[k], "exported model " + k)
    calls = exported["calls"]
    assert calls and all(0 <= dn <= tot for dn, tot, _ in calls)


def test_export_cancel_and_options(exported, tmp_path):
    rig = charkit.Rig.load(FIGURE)
    ds = exported["dataset"]
    with pytest.raises(charkit.Cancelled):
        charkit.export_nmn(rig, ds, tmp_path / "X.nmn", progress=lambda *a: False,
                           hidden=[8], morphs=3, iterations=200)
    assert not (tmp_path / "X.nmn").exists()
    with pytest.raises(TypeError, match="basis_size"):
        charkit.export_nmn(rig, ds, tmp_path / "X.nmn", basis_size=3)


def test_run_network_nmn_matches_cli(exported, tmp_path):
    d = exported["dir"]
    nmn = d / "py" / "MLD.nmn"
    engine = load_npz(d / "de.npz")["features"]
    raw = charkit.run_network(nmn, engine)
    assert raw.shape == (41, 6) and raw.dtype == np.float32
    cli("deformer", "run", nmn, "--input", d / "de.npz", "-o", tmp_path / "w.npy", "-q")
    assert_bit_equal(raw, np.load(tmp_path / "w.npy"), ".nmn outputs vs run")
    assert_bit_equal(charkit.run_network(nmn, engine[4]), raw[4], "one row")


@pytest.mark.parametrize("clamp", ["none", "unit", "auto"])
def test_import_round_trip(exported, clamp):
    d = exported["dir"]
    nmn = d / "py" / "MLD.nmn"
    rig = charkit.Rig.load(FIGURE)
    spec = exported["dataset"].spec
    # Our export records its outputs as learned-basis coefficients, which
    # the default (auto) leaves unclamped.
    sidecar = json.loads((d / "py" / "MLD.bmd_ue.json").read_text())
    assert sidecar["outputs"] == "basisCoefficients"
    model, warnings = charkit.import_network(nmn, rig, spec, clamp=clamp)
    assert model.clamp == ("unit" if clamp == "unit" else "none")
    if clamp == "auto":
        clamp = "none"
    assert isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)
    assert model.layout == "engine" and model.kind == "neural"
    assert model.feature_count == 18
    # NAME.morphs.npz was put on the rig.
    names = ["mean"] + ["pc%d" % i for i in range(1, 7)]
    assert model.morph_names == names
    assert set(names) <= set(rig.morph_names)

    engine = charkit.Dataset.load(d / "de.npz")
    assert engine.layout == "engine"
    feats = engine.features()
    raw = charkit.run_network(nmn, feats)
    w = model.weights(feats)
    assert w.shape == (41, 7)
    assert np.all(w[:, 0] == 1)
    want = raw if clamp == "none" else np.clip(raw, 0, 1)
    np.testing.assert_allclose(w[:, 1:], want, rtol=0, atol=1e-5)
    exported_model = exported["model"]
    np.testing.assert_allclose(model.morphs(), exported_model.morphs(), rtol=0, atol=1e-7)
    if clamp == "none":
        # The exported model clamps to its training range, which these (training)
        # rows stay within: the offsets agree.
        np.testing.assert_allclose(model.offsets(feats), exported_model.offsets(feats),
                                   rtol=0, atol=1e-5)
        np.testing.assert_allclose(exported_model.weights(feats), w, rtol=0, atol=1e-5)
    else:
        np.testing.assert_allclose(model.offsets(feats),
                                   np.einsum("nm,mvk->nvk", w, model.morphs()), atol=1e-5)


def test_import_auto_clamp_without_recorded_outputs(exported, tmp_path):
    # A sidecar that does not say what the outputs are (another tool's):
    # auto clamps them as morph-target weights, to [0, 1].
    d = exported["dir"]
    for name in ("MLD.nmn", "MLD.morphs.npz"):
        (tmp_path / name).write_bytes((d / "py" / name).read_bytes())
    sidecar = json.loads((d / "py" / "MLD.bmd_ue.json").read_text())
    del sidecar["outputs"]
    (tmp_path / "MLD.bmd_ue.json").write_text(json.dumps(sidecar))
    rig = charkit.Rig.load(FIGURE)
    model, _ = charkit.import_network(tmp_path / "MLD.nmn", rig, exported["dataset"].spec)
    assert model.clamp == "unit"


def test_import_without_morphs_file_names_it(exported, tmp_path):
    # The sidecar's morph targets are not on the rig's mesh and MLD.morphs.npz
    # is not beside the network: the error says which file is missing.
    d = exported["dir"]
    for name in ("MLD.nmn", "MLD.bmd_ue.json"):
        (tmp_path / name).write_bytes((d / "py" / name).read_bytes())
    rig = charkit.Rig.load(FIGURE)
    with pytest.raises(charkit.CharkitError) as e:
        charkit.import_network(tmp_path / "MLD.nmn", rig, exported["dataset"].spec)
    assert e.value.code == "IMPORT_MORPHS"
    assert str(tmp_path / "MLD.morphs.npz") in str(e.value)


def test_import_bad_clamp_and_spec(exported):
    d = exported["dir"]
    rig = charkit.Rig.load(FIGURE)
    with pytest.raises(ValueError, match="clamp"):
        charkit.import_network(d / "py" / "MLD.nmn", rig, exported["dataset"].spec,
                               clamp="training-range")
    # Two bones = 12 inputs, the network takes 18.
    with pytest.raises(charkit.CharkitError) as e:
        charkit.import_network(d / "py" / "MLD.nmn", rig, charkit.InputSpec(FIGURE_BONES[:2]))
    assert e.value.status in (1, 3) and e.value.code


ONNX_CASE = DATA / "onnx" / "pytorch-exported" / "mlp_elu"


def test_run_onnx_matches_cli_and_pytorch(tmp_path):
    model = ONNX_CASE / "model.onnx"
    x = read_tensor_pb(ONNX_CASE / "test_data_set_0" / "input_0.pb")
    expected = read_tensor_pb(ONNX_CASE / "test_data_set_0" / "output_0.pb")
    assert x.ndim == 2 and x.shape[1] == 12
    got = charkit.run_network(model, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)

    # More rows than the stored case, through the CLI with a .npy input.
    rows = np.random.default_rng(1).normal(size=(33, 12)).astype(np.float32)
    np.save(tmp_path / "in.npy", rows)
    cli("deformer", "run", model, "--input", tmp_path / "in.npy", "-o", tmp_path / "out.npy",
        "-q")
    assert_bit_equal(charkit.run_network(model, rows), np.load(tmp_path / "out.npy"),
                     "ONNX outputs vs run")
    with pytest.raises(charkit.CharkitError) as e:
        charkit.run_network(model, rows[:, :11])
    assert e.value.status in (1, 3) and e.value.code


def test_nmn_refusal_says_what_export_refuses(exported, tmp_path):
    """nmn_refusal() is "" exactly when PoseModel.export_nmn writes the model as it
    is, and otherwise the reason the export's NMN_EXPORT_MODEL error gives."""
    model = exported["model"]  # neural, engine layout, learned basis, unclamped
    assert model.nmn_refusal() == ""
    model.export_nmn(tmp_path / "ok.nmn")
    assert (tmp_path / "ok.nmn").exists()
    ds = exported["dataset"]  # axis-angle
    refused = [charkit.PoseModel.train(ds),
               charkit.PoseModel.train(ds, kind="neural", hidden=[4], iterations=20,
                                       clamp="none")]
    for m, words in zip(refused, ("linear model", "axis-angle layout")):
        why = m.nmn_refusal()
        assert words in why, why
        with pytest.raises(charkit.CharkitError) as e:
            m.export_nmn(tmp_path / "no.nmn")
        assert e.value.code == "NMN_EXPORT_MODEL" and why in str(e.value)
    assert not (tmp_path / "no.nmn").exists()

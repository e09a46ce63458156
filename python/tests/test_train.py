"""PoseModel.train against `charkit deformer train` / `run` / `eval`, own-format
round trip, progress callbacks and cancelling."""

import json

import numpy as np
import pytest

from _helpers import (FIGURE, FIGURE_BONES, assert_bit_equal, charkit, cli, cli_json,
                      load_npz)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    d = tmp_path_factory.mktemp("train")
    out = d / "d.npz"
    cli("deformer", "sample", FIGURE, "--bones", ",".join(FIGURE_BONES), "--poses", "40",
        "--seed", "11", "-o", out, "-q")
    return d, out


def _compare_models(cli_json_path, model, tmp_path, name):
    """Saves model beside the CLI's and compares the .npz arrays bit for bit
    and the JSON's hyper-parameters."""
    ours = tmp_path / (name + ".json")
    model.save(ours)
    want = load_npz(cli_json_path.with_suffix(".npz"))
    got = load_npz(ours.with_suffix(".npz"))
    assert sorted(got) == sorted(want)
    for k in want:
        assert_bit_equal(got[k], want[k], "%s: %s" % (name, k))
    jw = json.loads(cli_json_path.read_text())
    jg = json.loads(ours.read_text())
    assert jg["hyper"] == jw["hyper"]
    for k in ("kind", "layout", "mesh", "vertices", "inputs"):
        assert jg[k] == jw[k], k
    return want


def test_linear_matches_cli(sampled, tmp_path):
    d, data = sampled
    cli("deformer", "train", data, "-o", tmp_path / "cli.json", "--lambda", "0.01",
        "--holdout", "0.2", "--split-seed", "5", "-q")
    ds = charkit.Dataset.load(data)
    model = charkit.PoseModel.train(ds, ridge_lambda=0.01, holdout=0.2, split_seed=5)
    assert model.kind == "linear" and model.layout == "axis-angle"
    assert model.vertex_count == 370 and model.feature_count == 9
    assert model.morph_names == []
    assert model.spec.bone_names == FIGURE_BONES
    want = _compare_models(tmp_path / "cli.json", model, tmp_path, "linear")
    assert want["linear_weights"].shape == (9, 3 * 370)

    feats = ds.features()
    off = model.offsets(feats)
    assert off.shape == (41, 370, 3)
    assert np.all(off[0] == 0)     # no bias: the rest pose gives zero
    cli("deformer", "run", tmp_path / "cli.json", "--input", data, "-o", tmp_path / "o.npy",
        "-q")
    assert_bit_equal(off.reshape(41, -1), np.load(tmp_path / "o.npy"), "linear offsets vs run")
    assert_bit_equal(model.offsets(feats[7]), off[7], "one row")
    np.testing.assert_allclose(off.reshape(41, -1), feats @ want["linear_weights"],
                               rtol=1e-4, atol=1e-6)

    ev = cli_json("deformer", "eval", tmp_path / "cli.json", data, "-q")
    err = model.error(ds)
    assert err["samples"] == 41
    _assert_eval_equal(err, ev)

    stats = model.stats
    assert stats["train"]["samples"] + stats["holdout"]["samples"] == 41
    assert stats["holdout"]["samples"] == 8


def _assert_eval_equal(err, ev):
    """err from PoseModel.error, ev from `deformer eval --json` (any nesting)."""
    def find(doc, key):
        if isinstance(doc, dict):
            if key in doc and isinstance(doc[key], (int, float)):
                return doc[key]
            for v in doc.values():
                r = find(v, key)
                if r is not None:
                    return r
        return None
    for key in ("mean", "max"):
        want = find(ev, key)
        assert want is not None, "no %r in eval's JSON: %s" % (key, ev)
        assert err[key] == pytest.approx(want, rel=1e-9, abs=1e-12), key


NEURAL_CLI = ["--kind", "neural", "--hidden", "16,8", "--iterations", "60", "--batch", "16",
              "--lr", "0.002", "--seed", "5", "--basis-size", "4"]
NEURAL_PY = dict(kind="neural", hidden=[16, 8], iterations=60, batch_size=16,
                 learning_rate=0.002, seed=5, basis_size=4)


@pytest.mark.parametrize("clamp_cli,clamp_py", [("unit", "unit"), ("range", "training-range"),
                                                ("none", "none")])
def test_neural_matches_cli(sampled, tmp_path, clamp_cli, clamp_py):
    d, data = sampled
    cli("deformer", "train", data, "-o", tmp_path / "cli.json", *NEURAL_CLI,
        "--clamp", clamp_cli, "-q")
    ds = charkit.Dataset.load(data)
    calls = []
    model = charkit.PoseModel.train(ds, clamp=clamp_py, progress=lambda *a: calls.append(a),
                                **{k: v for k, v in NEURAL_PY.items()})
    assert model.kind == "neural"
    assert model.morph_names == ["mean", "pc1", "pc2", "pc3", "pc4"]
    assert model.info()["clamp"] == clamp_py
    want = _compare_models(tmp_path / "cli.json", model, tmp_path, "neural-" + clamp_py)

    # Progress: called, done never above total, ends at total.
    assert calls, "progress was never called"
    assert all(0 <= dn <= tot for dn, tot, _ in calls)
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)
    assert calls[-1][0] == calls[-1][1]
    assert all(np.isfinite(loss) for _, _, loss in calls)

    feats = ds.features()
    cli("deformer", "run", tmp_path / "cli.json", "--input", data, "-o", tmp_path / "o.npy",
        "--offsets", "-q")
    off = model.offsets(feats)
    assert_bit_equal(off.reshape(41, -1), np.load(tmp_path / "o.npy"), "neural offsets vs run")
    cli("deformer", "run", tmp_path / "cli.json", "--input", data, "-o", tmp_path / "w.npy",
        "--clamp", "-q")
    w = model.weights(feats)
    assert w.shape == (41, 5)
    assert_bit_equal(w, np.load(tmp_path / "w.npy"), "neural weights vs run --clamp")
    assert np.all(w[:, 0] == 1)
    if clamp_py == "unit":
        assert np.all((w >= 0) & (w <= 1))
    morphs = model.morphs()
    assert_bit_equal(morphs.reshape(5, -1), want["morphs"], "morphs")
    # offsets = weights . morphs
    np.testing.assert_allclose(off, np.einsum("nm,mvk->nvk", w, morphs), atol=1e-5)
    _assert_eval_equal(model.error(ds), cli_json("deformer", "eval", tmp_path / "cli.json",
                                                  data, "-q"))


def test_save_load_round_trip(sampled, tmp_path):
    d, data = sampled
    ds = charkit.Dataset.load(data)
    feats = ds.features()
    for kind, opts in (("linear", {}), ("neural", dict(hidden=[8], iterations=30,
                                                        batch_size=8))):
        model = charkit.PoseModel.train(ds, kind=kind, **opts)
        path = tmp_path / ("m_%s.json" % kind)
        model.save(path)
        assert path.exists() and path.with_suffix(".npz").exists()
        back = charkit.PoseModel.load(path)
        assert back.kind == kind
        assert back.info()["hyper"] == model.info()["hyper"]
        assert_bit_equal(back.offsets(feats), model.offsets(feats), kind + " reloaded offsets")
        # Saving the loaded model gives the same files.
        again = tmp_path / ("again_%s.json" % kind)
        back.save(again)
        assert again.with_suffix(".npz").read_bytes() == path.with_suffix(".npz").read_bytes()
        model.close()
        assert model.closed
        with pytest.raises(ValueError):
            model.offsets(feats)


def test_morph_target_basis(sampled):
    d, data = sampled
    ds = charkit.Dataset.load(data)
    deltas = ds.deltas()
    names = ["s3", "s9", "s17"]
    basis = deltas[[3, 9, 17]]
    model = charkit.PoseModel.train(ds, kind="neural", basis="morph-targets", morph_names=names,
                                morph_deltas=basis, hidden=[8], iterations=40, batch_size=8,
                                clamp="none")
    assert model.morph_names == names
    assert model.info()["fixed_first_morph"] is False
    np.testing.assert_allclose(model.morphs(), basis, atol=1e-7)
    w = model.weights(ds.features())
    assert w.shape == (41, 3)
    with pytest.raises(ValueError, match="morph_deltas"):
        charkit.PoseModel.train(ds, kind="neural", basis="morph-targets", morph_names=names,
                            morph_deltas=basis[:, :100])


def test_unknown_option_is_a_type_error(sampled):
    d, data = sampled
    ds = charkit.Dataset.load(data)
    with pytest.raises(TypeError, match="lambda"):
        charkit.PoseModel.train(ds, **{"lambda": 0.1})
    with pytest.raises(TypeError, match="hiden"):
        charkit.PoseModel.train(ds, kind="neural", hiden=[4])
    with pytest.raises(TypeError):
        charkit.PoseModel.train(ds, iterations="many")
    # A bad value is the library's to refuse.
    with pytest.raises(charkit.CharkitError) as e:
        charkit.PoseModel.train(ds, kind="neural", clamp="sometimes")
    assert e.value.status == 3 and e.value.code
    with pytest.raises(charkit.CharkitError) as e:
        charkit.PoseModel.train(ds, kind="quadratic")
    assert e.value.status in (1, 3) and e.value.code


# ---- Cancelling ---------------------------------------------------------------

# The library reports progress every 250 Adam steps and after the last
# (docs/c_api.md), so 1000 iterations give calls at 250, 500, 750 and 1000.

def test_progress_false_cancels(sampled):
    d, data = sampled
    ds = charkit.Dataset.load(data)
    calls = []

    def stop_at_second(done, total, loss):
        calls.append((done, total))
        return len(calls) < 2

    with pytest.raises(charkit.Cancelled) as e:
        charkit.PoseModel.train(ds, kind="neural", hidden=[8], iterations=1000, batch_size=8,
                            progress=stop_at_second)
    assert e.value.status == 4 and e.value.code
    assert isinstance(e.value, charkit.CharkitError)
    assert len(calls) == 2, "progress called again after it cancelled: %s" % calls
    assert calls[1][0] < calls[1][1] == 1000
    # The dataset still works after a cancelled call.
    assert charkit.PoseModel.train(ds).kind == "linear"


class Boom(RuntimeError):
    pass


def test_progress_exception_propagates(sampled):
    d, data = sampled
    ds = charkit.Dataset.load(data)
    seen = []

    def explode(done, total, loss):
        seen.append(done)
        if len(seen) == 2:
            raise Boom("from the callback")
        return True

    with pytest.raises(Boom, match="from the callback"):
        charkit.PoseModel.train(ds, kind="neural", hidden=[8], iterations=1000, batch_size=8,
                            progress=explode)
    assert len(seen) == 2, "progress called again after it raised: %s" % seen
    # None and True go on; 0 (falsy) cancels like False.
    m = charkit.PoseModel.train(ds, kind="neural", hidden=[4], iterations=300, batch_size=8,
                            progress=lambda *a: None)
    assert m.kind == "neural"
    with pytest.raises(charkit.Cancelled):
        charkit.PoseModel.train(ds, kind="neural", hidden=[4], iterations=300, batch_size=8,
                            progress=lambda *a: 0)


# ---- Early stopping -------------------------------------------------------------

def test_early_stopping_records_its_choice_and_matches_cli(sampled, tmp_path):
    d, data = sampled
    ds = charkit.Dataset.load(data)
    opts = dict(kind="neural", hidden=[8], iterations=400, batch_size=8, seed=3, basis_size=4,
                validation=0.25, patience=2, check_every=20)
    calls = []
    model = charkit.PoseModel.train(ds, progress=lambda *a: calls.append(a[:2]), **opts)
    h = model.hyper
    # 40 poses + rest: 4 held out, round(0.25 * 36) = 9 set aside to choose the steps
    assert h["validation_samples"] == 9 and h["max_iterations"] == 400
    assert h["iterations"] % 20 == 0 and 0 < h["iterations"] <= h["stopped_after"] <= 400
    assert h["stopped_after"] in (400, h["iterations"] + 2 * 20)
    assert model.stats["train"]["samples"] == 37  # the set-aside poses train the final network
    # progress counts on through both runs and ends at its total
    assert [c[0] for c in calls] == sorted(c[0] for c in calls) and calls[-1][0] == calls[-1][1]
    # the final network is that many steps on every training pose, as the CLI makes it
    plain = dict(opts, validation=0, iterations=h["iterations"])
    ref = charkit.PoseModel.train(ds, **plain)
    feats = ds.features()
    assert_bit_equal(model.offsets(feats), ref.offsets(feats), "early-stopped = plain run")
    cli("deformer", "train", data, "-o", tmp_path / "es.json", "--kind", "neural", "--hidden",
        "8", "--iterations", "400", "--batch", "8", "--seed", "3", "--basis-size", "4",
        "--validation", "0.25", "--patience", "2", "--check-every", "20", "-q")
    _compare_models(tmp_path / "es.json", model, tmp_path, "early-stopped")
    # 0 turns it off; a linear model refuses it
    assert "stopped_after" not in charkit.PoseModel.train(ds, **dict(opts, validation=0)).hyper
    with pytest.raises(charkit.CharkitError) as e:
        charkit.PoseModel.train(ds, kind="linear", validation=0.1)
    assert e.value.code == "MODEL_OPTIONS"

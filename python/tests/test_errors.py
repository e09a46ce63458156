"""The error model: CharkitError's status / code / message / location for
failed C calls, ValueError / TypeError for arguments refused in Python."""

import numpy as np
import pytest

from _helpers import DATA, FIGURE, FIGURE_BONES, charkit

MISSING = DATA / "no-such-dir" / "missing"


@pytest.mark.parametrize("call", [
    lambda: charkit.Rig.load(str(MISSING) + ".glb"),
    lambda: charkit.Dataset.load(str(MISSING) + ".npz"),
    lambda: charkit.PoseModel.load(str(MISSING) + ".json"),
    lambda: charkit.run_network(str(MISSING) + ".onnx", np.zeros((1, 3), np.float32)),
    lambda: charkit.bem_validate(str(MISSING) + ".bem"),
    lambda: charkit.motion_convert(str(MISSING) + ".bvh"),
], ids=["rig", "dataset", "model", "network", "bem", "motion"])
def test_missing_file_is_an_io_error(call):
    with pytest.raises(charkit.CharkitError) as e:
        call()
    err = e.value
    assert type(err) is charkit.CharkitError
    assert err.status == 2
    assert err.code.startswith("IO_"), err.code
    assert err.message
    assert str(err).startswith(err.code + ": ")
    assert err.message in str(err)


def test_save_into_missing_folder_is_an_io_error(tmp_path):
    ds = charkit.Dataset(charkit.InputSpec(["a"]), np.zeros((1, 3), np.float32),
                         np.zeros((1, 2, 3), np.float32))
    with pytest.raises(charkit.CharkitError) as e:
        ds.save(tmp_path / "nope" / "d.npz")
    assert e.value.status == 2 and e.value.code.startswith("IO_")


@pytest.mark.parametrize("make", [
    lambda: charkit.InputSpec(["a", "a"]),                                  # duplicate name
    lambda: charkit.InputSpec([""]),                                        # empty name
    lambda: charkit.InputSpec([{"name": "a", "axes": [
        {"enabled": True, "min_deg": 30.0, "max_deg": -30.0}] * 3}]),       # min > max
    lambda: charkit.InputSpec(["a"], curves=[{"name": "c", "min": 0.0, "max": float("nan")}]),
    lambda: charkit.InputSpec.from_json('{"bones": [{"name": "a"'),         # broken JSON
    lambda: charkit.InputSpec.from_json('{"bones": [], "curves": [], "extra": 1}'),
], ids=["duplicate", "empty-name", "min>max", "nan", "broken-json", "unknown-key"])
def test_bad_spec(make):
    with pytest.raises(charkit.CharkitError) as e:
        make()
    assert e.value.status in (1, 3)
    assert e.value.code and e.value.message


def test_invalid_file_is_invalid_input(tmp_path):
    bad = tmp_path / "bad.glb"
    bad.write_bytes(b"glTF\x02\x00\x00\x00garbage")
    with pytest.raises(charkit.CharkitError) as e:
        charkit.Rig.load(bad)
    assert e.value.status == 1 and e.value.code
    # The mesh name is checked too.
    with pytest.raises(charkit.CharkitError) as e:
        charkit.Rig.load(FIGURE, mesh="no such mesh")
    assert e.value.status == 1 and e.value.code


def test_wrong_shapes_are_value_errors_before_the_call():
    spec = charkit.InputSpec(FIGURE_BONES)
    rig = charkit.Rig.load(FIGURE)
    with pytest.raises(ValueError, match="rotations"):
        rig.skin(spec, np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="offsets"):
        rig.skin(spec, np.tile(np.float32([0, 0, 0, 1]), (3, 1)), offsets=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="features"):
        charkit.Dataset(spec, np.zeros((2, 8), np.float32), np.zeros((2, 370, 3), np.float32))
    ds = charkit.Dataset(spec, np.zeros((2, 9), np.float32), np.zeros((2, 370, 3), np.float32))
    model = charkit.PoseModel.train(ds, holdout=0.0)
    with pytest.raises(ValueError, match="features"):
        model.offsets(np.zeros((5, 10), np.float32))
    with pytest.raises(ValueError, match="features"):
        model.offsets(np.zeros((2, 2, 9), np.float32))
    with pytest.raises(ValueError, match="inputs"):
        charkit.run_network(FIGURE, np.zeros((2, 2, 2), np.float32))
    with pytest.raises(ValueError):
        charkit.pose_features(spec, np.zeros(12, np.float32))
    with pytest.raises(TypeError):
        charkit.pose_features("not a spec", np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="layout"):
        charkit.pose_features(spec, np.zeros((3, 4), np.float32), layout="euler")


def test_library_refuses_a_linear_models_weights():
    spec = charkit.InputSpec(["a"])
    ds = charkit.Dataset(spec, np.zeros((3, 3), np.float32), np.zeros((3, 4, 3), np.float32))
    model = charkit.PoseModel.train(ds, holdout=0.0)
    with pytest.raises(charkit.CharkitError) as e:
        model.weights(np.zeros((1, 3), np.float32))
    assert e.value.status in (1, 3) and e.value.code


def test_error_string_and_repr():
    e = charkit.CharkitError(1, "MODEL_SHAPE", "wrong size", "/layers/0")
    assert str(e) == "MODEL_SHAPE: /layers/0: wrong size"
    assert str(charkit.CharkitError(2, "IO_OPEN", "cannot open x")) == "IO_OPEN: cannot open x"
    assert "MODEL_SHAPE" in repr(e)
    c = charkit.Cancelled(4, "CANCELLED", "stopped")
    assert isinstance(c, charkit.CharkitError) and c.status == 4


def test_error_is_cleared_and_located():
    # A location is given where the library knows one: a JSON pointer here.
    with pytest.raises(charkit.CharkitError) as e:
        charkit.InputSpec(["a", "a"])
    assert e.value.status == 1 and e.value.code == "POSE_SPEC_NAME"
    assert e.value.location == "/bones/1/name"
    assert str(e.value) == "POSE_SPEC_NAME: /bones/1/name: " + e.value.message
    # The next successful call works normally.
    assert charkit.InputSpec(["a"]).bone_count == 1


def test_errors_and_progress_in_other_threads():
    # The last error is per thread: read in the thread that failed. Training
    # in a worker thread reports progress there (the Blender add-on does this).
    import threading
    from concurrent.futures import ThreadPoolExecutor
    spec = charkit.InputSpec(["a"])
    rng = np.random.default_rng(0)
    ds = charkit.Dataset(spec, rng.normal(size=(20, 3)).astype(np.float32),
                         rng.normal(size=(20, 5, 3)).astype(np.float32))

    def bad(_):
        try:
            charkit.PoseModel.train(ds, kind="neural", clamp="sometimes")
        except charkit.CharkitError as e:
            return e.status, e.code
        return None

    threads = set()

    def good(_):
        return charkit.PoseModel.train(
            ds, kind="neural", hidden=[4], iterations=10, batch_size=4,
            progress=lambda *a: threads.add(threading.get_ident())).kind

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(bad, range(4))) == [(3, "CAPI_ARGUMENT")] * 4
        assert list(pool.map(good, range(4))) == ["neural"] * 4
    assert threads and threading.get_ident() not in threads


def test_close_and_collect():
    import gc
    spec = charkit.InputSpec(["a"])
    for _ in range(50):
        with charkit.InputSpec(["b"], curves=["c"]) as s:
            assert s.feature_count() == 4
        assert s.closed
        s.close()                                   # twice is fine
        with pytest.raises(ValueError, match="closed"):
            s.to_json()
        ds = charkit.Dataset(spec, np.zeros((2, 3), np.float32), np.zeros((2, 4, 3), np.float32))
        sub = ds.spec                               # a handle of its own
        del ds
        gc.collect()
        assert sub.bone_names == ["a"]
    assert "closed" in repr(s)

"""Library basics, BEM validation and motion conversion against the CLI."""

import json

import pytest

from _helpers import DATA, charkit, cli


def test_versions():
    assert charkit.c_api_version() >= 1
    v = charkit.version()
    assert len(v.split(".")) == 3 and all(p.isdigit() for p in v.split("."))
    out = cli("--version").stdout
    assert v in out


def test_old_names_are_aliases():
    # Renamed in this release (one word per concept); the old name stays one release.
    assert charkit.Model is charkit.PoseModel
    assert "PoseModel" in charkit.__all__ and "Model" in charkit.__all__


def test_bem_validate_matches_cli():
    path = DATA / "examples" / "example-1.5.bem"
    report = charkit.bem_validate(path)
    assert report["valid"] is True
    assert report["declaredVersion"] == "1.5"
    want = json.loads(cli("bem", "validate", "--json", path).stdout)["files"][0]
    # The report has the fields of `bem validate --json` for one package.
    for key in ("valid", "declaredVersion", "effectiveVersion", "neededVersion",
                "payloadCount", "container", "issues"):
        assert report[key] == want[key], key


def test_bem_validate_invalid_package(tmp_path):
    blob = (DATA / "examples" / "example-1.5.bem").read_bytes()
    bad = tmp_path / "bad.bem"
    bad.write_bytes(blob[: len(blob) // 2])
    report = charkit.bem_validate(bad)          # a report, not an error
    assert report["valid"] is False
    p = cli("bem", "validate", "--json", bad, check=False)
    assert p.returncode == 1
    want = json.loads(p.stdout)["files"][0]
    assert want["valid"] is False
    assert report["issues"] == want["issues"]
    assert want["issues"]["numErrors"] >= 1


def test_motion_convert_matches_cli():
    path = DATA / "bvh" / "test_freebvh.bvh"
    text = charkit.motion_convert(path)
    lines = text.splitlines()
    assert len(lines) > 1
    frames = [json.loads(line) for line in lines]
    assert all(len(f["points"]) == 33 for f in frames)
    assert [f["frame"] for f in frames] == list(range(len(frames)))
    want = cli("motion", "convert", path, "-o", "-", "-q").stdout
    assert text == want


def test_motion_convert_bad_input(tmp_path):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n")
    with pytest.raises(charkit.CharkitError) as e:
        charkit.motion_convert(bad)
    assert e.value.status == 1 and e.value.code

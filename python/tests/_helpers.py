"""Shared helpers of the charkit Python tests: the package (or a module skip),
the charkit CLI runner, data paths, PC2 and ONNX TensorProto readers/writers.

Importing this module skips the importing test module only when
libcharkit_c cannot be found at all; any other import failure is an error.
"""

import json
import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

try:
    import charkit  # noqa: F401
except OSError as e:
    if getattr(e, "charkit_library_not_found", False):
        pytest.skip("libcharkit_c not found (set CHARKIT_LIBRARY): %s" % e,
                    allow_module_level=True)
    raise

DATA = Path(os.environ.get("CHARKIT_DATA") or REPO / "tests" / "data")
CLI = os.environ.get("CHARKIT_CLI") or str(REPO / "build" / "dev" / "apps" / "charkit" / "charkit")
FIGURE = DATA / "models" / "RiggedFigure.glb"
SIMPLE = DATA / "models" / "RiggedSimple.glb"
# Three bones of RiggedFigure that move its mesh.
FIGURE_BONES = ["joint_2", "joint_11", "joint_7"]


def cli(*args, check=True, cwd=None):
    """Runs the charkit CLI; returns the CompletedProcess (text). check=True
    fails the test with the CLI's stderr when it exits non-zero."""
    if not os.path.exists(CLI):
        pytest.fail("charkit CLI not found at %s (set CHARKIT_CLI)" % CLI)
    cmd = [CLI] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=600)
    if check and p.returncode != 0:
        pytest.fail("%s exited %d:\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p


def cli_json(*args, **kw):
    p = cli(*args, "--json", **kw)
    return json.loads(p.stdout)


def load_npz(path):
    with np.load(str(path)) as z:
        return {k: z[k] for k in z.files}


def assert_bit_equal(a, b, what=""):
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.shape == b.shape, "%s: shape %s != %s" % (what, a.shape, b.shape)
    assert a.dtype == b.dtype, "%s: dtype %s != %s" % (what, a.dtype, b.dtype)
    if not np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                          np.ascontiguousarray(b).view(np.uint8)):
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        bad = int(np.count_nonzero(a != b))
        pytest.fail("%s: %d of %d elements differ (max |diff| %g)" % (what, bad, a.size,
                                                                    float(np.nanmax(diff))))


def write_pc2(path, positions, start_frame=0.0, sample_rate=1.0):
    """A PC2 point cache: 32-byte header then samples x points x 3 float32."""
    pos = np.ascontiguousarray(positions, dtype="<f4")
    samples, points, three = pos.shape
    assert three == 3
    header = b"POINTCACHE2\0" + struct.pack("<iiffi", 1, points, float(start_frame),
                                            float(sample_rate), samples)
    assert len(header) == 32
    Path(path).write_bytes(header + pos.tobytes())


def _varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def read_tensor_pb(path):
    """A float32 ONNX TensorProto (.pb) as a numpy array: dims (field 1),
    data_type (2, must be FLOAT = 1), float_data (4) or raw_data (9)."""
    buf = Path(path).read_bytes()
    dims, floats, raw, dtype = [], [], None, None
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
            if field == 1:
                dims.append(v)
            elif field == 2:
                dtype = v
        elif wire == 2:
            n, i = _varint(buf, i)
            chunk = buf[i:i + n]
            i += n
            if field == 1:
                j = 0
                while j < len(chunk):
                    v, j = _varint(chunk, j)
                    dims.append(v)
            elif field == 4:
                floats.extend(struct.unpack("<%df" % (n // 4), chunk))
            elif field == 9:
                raw = chunk
        elif wire == 5:
            if field == 4:
                floats.append(struct.unpack("<f", buf[i:i + 4])[0])
            i += 4
        elif wire == 1:
            i += 8
        else:
            raise ValueError("unexpected wire type %d in %s" % (wire, path))
    assert dtype == 1, "not a float tensor: data_type %s" % dtype
    arr = np.frombuffer(raw, "<f4") if raw is not None else np.array(floats, np.float32)
    return arr.astype(np.float32).reshape(dims)

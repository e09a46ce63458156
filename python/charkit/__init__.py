"""charkit: Python bindings (ctypes) for charkit's C API, libcharkit_c.

Pose-driven deformers from Python: input specs and seeded pose sampling,
rigs (glTF/GLB/VRM or arrays), datasets, linear and neural pose models,
Unreal ML Deformer ``.nmn`` export/import, ONNX/.nmn inference, plus BEM
validation and motion conversion. numpy is the only dependency.

The library is found through the CHARKIT_LIBRARY environment variable (a
path), then ``charkit/_lib/libcharkit_c.so``, then the system library path;
importing charkit raises OSError naming the paths tried when none loads.
Failed calls raise CharkitError (``.status``, ``.code``, ``.message``,
``.location``); a cancelled call raises Cancelled. See docs/python.md.

Example::

    import charkit
    rig = charkit.Rig.load("hero.glb")
    spec = charkit.InputSpec(["upperarm_l", "lowerarm_l"])
    rot, _, _ = charkit.sample_poses(spec, 200, seed=777)
    targets = ...  # (201, V, 3) posed positions from your reference deformer
    ds = charkit.Dataset.from_positions(rig, spec, rot, targets)
    model = charkit.PoseModel.train(ds, kind="neural", hidden=[64, 64])
    offsets = model.offsets(charkit.pose_features(spec, rot))
"""

from __future__ import annotations

from . import _native
from ._errors import Cancelled, CharkitError
from .dataset import Dataset
from .pose_model import Model, PoseModel, export_nmn, import_network, run_network
from .rig import Rig
from .spec import InputSpec, pose_features, pose_library_json, sample_poses
from .tools import bem_validate, motion_convert
from .bem import BemPackage

__all__ = [
    "version", "c_api_version", "library_path", "CharkitError", "Cancelled",
    "InputSpec", "sample_poses", "pose_features", "pose_library_json", "Rig", "Dataset",
    "PoseModel", "Model", "export_nmn", "import_network", "run_network", "bem_validate", "motion_convert",
    "BemPackage",
]

#: The path (or name) libcharkit_c was loaded from.
library_path = _native.library_path


def version() -> str:
    """charkit's version, "MAJOR.MINOR.PATCH"."""
    return _native.fn.version().decode("utf-8")


def c_api_version() -> int:
    """CHARKIT_C_API_VERSION of the loaded library."""
    return int(_native.fn.c_api_version())

"""BEM package validation and motion conversion (basics of `charkit bem` and `charkit motion`)."""

from __future__ import annotations

import json

from . import _native as N

__all__ = ["bem_validate", "motion_convert"]


def bem_validate(path) -> dict:
    """Validates a BEM package (.bem or .zip) and returns the report
    {"valid", "declaredVersion", "effectiveVersion", "issues": [...]}.

    An invalid package is not an error (the report says so); CharkitError is
    raised only when the file cannot be read.
    """
    return json.loads(N.call_string(N.fn.bem_validate, N.path_arg(path)))


def motion_convert(path) -> str:
    """Converts a motion (BVH, keypoint JSON, FBX, glTF/GLB) into MediaPipe-33
    keypoint NDJSON (one JSON object per line), as ``charkit motion convert``
    does with its defaults."""
    return N.call_string(N.fn.motion_convert, N.path_arg(path))

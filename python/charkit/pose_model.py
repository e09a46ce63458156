"""Pose models (linear ridge regression or an MLP over morph targets) and the engine bridge.

``PoseModel.train`` fits a model to a Dataset with the options of ``charkit
deformer train``; a model maps feature rows to bind-space vertex offsets
(``offsets``) and, when neural, to morph weights (``weights``).
``export_nmn`` retrains a dataset the Unreal ML Deformer's way and writes
NAME.nmn + NAME.bmd_ue.json + NAME.morphs.npz; ``import_network`` turns a
.nmn or ONNX network back into a PoseModel; ``run_network`` runs either file on
raw input rows like ``charkit deformer run``.

Options go to the C API as one JSON object; an unknown keyword raises
TypeError before anything is called. A ``progress(done, total, loss)``
callable may stop a long call by returning False (charkit.Cancelled is then
raised); an exception it raises stops the call and propagates unchanged.
"""

from __future__ import annotations

import json
import numbers
import operator
from ctypes import byref, c_double, c_uint64, c_void_p

import numpy as np

from . import _native as N
from .dataset import Dataset
from .rig import Rig
from .spec import InputSpec, _need_spec

__all__ = ["PoseModel", "Model", "export_nmn", "import_network", "run_network"]


# ---- Options -----------------------------------------------------------------

def _opt_int(name, v):
    if isinstance(v, bool):
        raise TypeError("%s must be an int, not bool" % name)
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError("%s must be an int, not %s" % (name, type(v).__name__)) from None


def _opt_float(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError("%s must be a number, not %s" % (name, type(v).__name__))
    return float(v)


def _opt_bool(name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError("%s must be a bool, not %s" % (name, type(v).__name__))
    return bool(v)


def _opt_str(name, v):
    if not isinstance(v, str):
        raise TypeError("%s must be a str, not %s" % (name, type(v).__name__))
    return v


def _opt_int_list(name, v):
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return [int(v)]
    if isinstance(v, (str, bytes)):
        raise TypeError("%s must be a list of ints" % name)
    return [_opt_int(name, x) for x in v]


# python keyword -> (JSON key, converter)
_TRAIN_OPTIONS = {
    "ridge_lambda": ("lambda", _opt_float),
    "hidden": ("hidden", _opt_int_list),
    "learning_rate": ("learning_rate", _opt_float),
    "weight_decay": ("weight_decay", _opt_float),
    "iterations": ("iterations", _opt_int),
    "batch_size": ("batch_size", _opt_int),
    "seed": ("seed", _opt_int),
    "standardize": ("standardize", _opt_bool),
    "activation": ("activation", _opt_str),
    "clamp": ("clamp", _opt_str),
    "basis": ("basis", _opt_str),
    "basis_size": ("basis_size", _opt_int),
    "holdout": ("holdout", _opt_float),
    "split_seed": ("split_seed", _opt_int),
    "targets": ("targets", _opt_str),
    "validation": ("validation", _opt_float),
    "patience": ("patience", _opt_int),
    "check_every": ("check_every", _opt_int),
}

_EXPORT_OPTIONS = {
    "hidden": ("hidden", _opt_int_list),
    "morphs": ("morphs", _opt_int),
    "iterations": ("iterations", _opt_int),
    "batch_size": ("batch_size", _opt_int),
    "learning_rate": ("learning_rate", _opt_float),
    "seed": ("seed", _opt_int),
}


def _options_json(func, table, options, base=None) -> str:
    doc = dict(base or {})
    for key, value in options.items():
        if key not in table:
            raise TypeError("%s() got an unexpected keyword argument %r (accepted: %s)"
                            % (func, key, ", ".join(sorted(table))))
        if value is None:
            continue        # the library's default
        json_key, conv = table[key]
        doc[json_key] = conv(key, value)
    return json.dumps(doc, default=N.json_default)


# ---- PoseModel -----------------------------------------------------------------

class PoseModel(N.Handle):
    """A trained (or imported) pose model: features -> bind-space vertex offsets."""

    _free = staticmethod(N.fn.model_free)
    _kind = "PoseModel"

    def __init__(self, *args, **kwargs):
        raise TypeError("make a PoseModel with PoseModel.train, PoseModel.load, export_nmn or "
                        "import_network")

    @classmethod
    def _wrap(cls, ptr) -> "PoseModel":
        self = cls.__new__(cls)
        N.Handle.__init__(self, ptr)
        self._info = None    # the info JSON text, fetched once
        self._facts = None   # the same, parsed once, for the properties
        return self

    @classmethod
    def train(cls, dataset, kind="linear", progress=None, morph_names=None, morph_deltas=None,
              **options) -> "PoseModel":
        """Trains a model on a Dataset.

        kind "linear" (ridge regression, closed form) or "neural" (an MLP
        predicting morph weights). Options (the defaults of ``charkit deformer
        train``): ridge_lambda, hidden (list of int), learning_rate,
        iterations, batch_size, seed, standardize, clamp ("none" | "unit" |
        "training-range"), basis ("learned" | "morph-targets": the morph
        targets morph_names with morph_deltas (M, V, 3)), basis_size,
        holdout, split_seed, targets, validation (neural: early stopping's
        share of the training samples, 0 = none), patience, check_every.
        progress(done, total, loss) returning False cancels (raises
        charkit.Cancelled).
        """
        text = _options_json("train", _TRAIN_OPTIONS, options, {"kind": _opt_str("kind", kind)})
        if not isinstance(dataset, Dataset):
            raise TypeError("dataset must be a charkit.Dataset, not %s" % type(dataset).__name__)
        names_arr, deltas, count = None, None, 0
        if (morph_names is None) != (morph_deltas is None):
            raise ValueError("give both morph_names and morph_deltas, or neither")
        if morph_names is not None:
            names = list(morph_names)
            count = len(names)
            deltas = N.f32(morph_deltas, "morph_deltas", (count, dataset.vertex_count, 3))
            names_arr = N.string_array(names)
        prog = N.Progress(progress)
        out = N.ModelP()
        status = N.fn.model_train(dataset._h, N.str_arg(text), count, names_arr,
                                  N.fptr(deltas), prog.c_fn, None, byref(out))
        model = cls._wrap(out) if status == 0 and out else None
        prog.reraise()
        N.check(status)
        return model

    @classmethod
    def load(cls, json_path) -> "PoseModel":
        """Reads pose_model.json (+ pose_model.npz beside it)."""
        out = N.ModelP()
        N.check(N.fn.model_load(N.path_arg(json_path), byref(out)))
        return cls._wrap(out)

    def save(self, json_path) -> None:
        """Writes pose_model.json + pose_model.npz."""
        N.check(N.fn.model_save(self._h, N.path_arg(json_path)))

    def info(self) -> dict:
        """{"kind", "layout", "mesh", "vertices", "features", "spec", "morphs",
        "fixed_first_morph", "clamp", "hyper", "stats"}"""
        if self._info is None:
            self._info = N.call_string(N.fn.model_info_json, self._h)
        return json.loads(self._info)

    def _fact(self, key, default=None):
        """One value of info(), parsed once: the properties below are read on
        every evaluation (offsets, weights), so they must not parse the JSON."""
        if self._facts is None:
            self._facts = self.info()
        return self._facts.get(key, default)

    @property
    def kind(self) -> str:
        return self._fact("kind")

    @property
    def layout(self) -> str:
        return N.layout_name(self._fact("layout"))

    @property
    def clamp(self) -> str:
        """How predicted weights are clamped: "none", "unit" or "training-range"."""
        return self._fact("clamp")

    @property
    def targets(self):
        """What the offsets are, as recorded at training: "bind-correction" (added
        to the bind mesh before skinning) or "rest-deformation" (added to the
        rest mesh); None when the model does not record it."""
        return (self._fact("hyper") or {}).get("targets")

    @property
    def hyper(self) -> dict:
        """The options the model was trained with, and what training chose (for
        early stopping: "iterations" trained, "max_iterations", "stopped_after",
        "validation_error"); {} when the model records none."""
        return dict(self._fact("hyper") or {})

    @property
    def vertex_count(self) -> int:
        return int(self._fact("vertices"))

    @property
    def feature_count(self) -> int:
        return int(self._fact("features"))

    @property
    def morph_names(self) -> list:
        return list(self._fact("morphs") or [])

    @property
    def stats(self) -> dict:
        return self.info().get("stats") or {}

    @property
    def spec(self) -> InputSpec:
        s = self._fact("spec")
        return InputSpec.from_json(s if isinstance(s, str) else json.dumps(s))

    def _rows(self, features):
        f = N.f32(features, "features")
        single = f.ndim == 1
        if single:
            f = f.reshape(1, -1)
        N.check_shape(f, "features", (None, self.feature_count))
        return f, single

    def offsets(self, features):
        """Bind-space offsets (N, V, 3) for feature rows (N, F); (V, 3) for one row (F,)."""
        f, single = self._rows(features)
        out = np.empty((f.shape[0], self.vertex_count, 3), np.float32)
        N.check(N.fn.model_offsets(self._h, N.fptr(f), f.shape[0], N.fptr(out)))
        return out[0] if single else out

    def weights(self, features):
        """A neural model's morph weights (N, M) (morph 0 included, clamped as the
        model says); (M,) for one row."""
        f, single = self._rows(features)
        out = np.empty((f.shape[0], len(self.morph_names)), np.float32)
        N.check(N.fn.model_weights(self._h, N.fptr(f), f.shape[0], N.fptr(out)))
        return out[0] if single else out

    def morphs(self):
        """A neural model's morph targets, (M, V, 3)."""
        out = np.empty((len(self.morph_names), self.vertex_count, 3), np.float32)
        N.check(N.fn.model_morphs(self._h, N.fptr(out), out.size))
        return out

    def error(self, dataset) -> dict:
        """The model's vertex errors on a dataset's samples: {"samples", "mean", "max"}."""
        if not isinstance(dataset, Dataset):
            raise TypeError("dataset must be a charkit.Dataset, not %s" % type(dataset).__name__)
        return json.loads(N.call_string(N.fn.model_error_json, self._h, dataset._h))

    def nmn_refusal(self) -> str:
        """Why export_nmn would refuse this model (it is linear, its inputs are
        not in the engine layout, it weighs given morph targets, or it clamps),
        in words; "" when it can be written as it is."""
        return N.call_string(N.fn.model_nmn_refusal, self._h)

    def export_nmn(self, nmn_path, dataset=None) -> float:
        """Writes this model as it is to NAME.nmn, NAME.bmd_ue.json and
        NAME.morphs.npz, as ``charkit deformer export-nmn MODEL.json`` does:
        the network that was evaluated is the one that ships. The model must
        be neural, in the engine layout, with a learned basis and no clamp
        (else a charkit error NMN_EXPORT_MODEL says which fails; the module
        function ``export_nmn`` retrains instead). The file is read back and
        run against the model on ``dataset``'s rows (None: rows around the
        model's input mean); returns the largest difference (at most 1e-5).
        """
        if dataset is not None and not isinstance(dataset, Dataset):
            raise TypeError("dataset must be a charkit.Dataset or None, not %s"
                            % type(dataset).__name__)
        diff = c_double(0.0)
        N.check(N.fn.model_export_nmn(self._h, dataset._h if dataset is not None else None,
                                      N.path_arg(nmn_path), byref(diff)))
        return float(diff.value)

    def __repr__(self):
        if self.closed:
            return "<charkit.PoseModel (closed)>"
        i = self.info()
        return "<charkit.PoseModel %s %s features=%s vertices=%s morphs=%d>" % (
            i.get("kind"), N.layout_name(i.get("layout", "")), i.get("features"),
            i.get("vertices"), len(i.get("morphs") or []))


#: PoseModel's former name, kept for one release (one word per
#: concept: a "model" is a character model; a trained deformer is a pose model).
Model = PoseModel


# ---- Engine bridge -------------------------------------------------------------


def export_nmn(rig, dataset, nmn_path, progress=None, **options) -> PoseModel:
    """Retrains ``dataset`` in the engine layout and writes NAME.nmn,
    NAME.bmd_ue.json and NAME.morphs.npz, as ``charkit deformer export-nmn``
    does; returns the exported network as a PoseModel (engine layout).

    Options: hidden, morphs, iterations, batch_size, learning_rate, seed.
    """
    text = _options_json("export_nmn", _EXPORT_OPTIONS, options)
    if not isinstance(rig, Rig):
        raise TypeError("rig must be a charkit.Rig, not %s" % type(rig).__name__)
    if not isinstance(dataset, Dataset):
        raise TypeError("dataset must be a charkit.Dataset, not %s" % type(dataset).__name__)
    path = N.path_arg(nmn_path)
    prog = N.Progress(progress)
    out = N.ModelP()
    status = N.fn.export_nmn(rig._h, dataset._h, N.str_arg(text), path, prog.c_fn, None,
                             byref(out))
    model = PoseModel._wrap(out) if status == 0 and out else None
    prog.reraise()
    N.check(status)
    return model


_CLAMPS = {"none": 0, "unit": 1, "auto": 3}


def import_network(path, rig, spec, clamp="auto"):
    """A .nmn (global mode) or .onnx network as a PoseModel in the engine layout,
    as ``charkit deformer import`` makes it. Returns (model, warnings).

    Inputs are the spec's bones x 6 + curves; outputs weigh the rig's morph
    targets (by the NAME.bmd_ue.json sidecar's names when present, else in
    order); NAME.morphs.npz beside a .nmn is put on the rig first (the rig
    is changed). clamp: "auto" (none when the sidecar records the outputs as
    learned-basis coefficients, as charkit's export does; else [0, 1]),
    "unit" ([0, 1]) or "none".
    """
    if not isinstance(rig, Rig):
        raise TypeError("rig must be a charkit.Rig, not %s" % type(rig).__name__)
    _need_spec(spec)
    if clamp not in _CLAMPS:
        raise ValueError("clamp must be 'auto', 'unit' or 'none', not %r" % (clamp,))
    warn = c_void_p()
    out = N.ModelP()
    status = N.fn.import_network(N.path_arg(path), rig._h, spec._h, _CLAMPS[clamp],
                                 byref(warn), byref(out))
    text = N.take_string(warn)
    N.check(status)
    model = PoseModel._wrap(out)
    warnings = json.loads(text) if text else []
    return model, [str(w) for w in warnings]


#: Outputs per row the first call to charkit_network_run makes room for.
_FIRST_GUESS = 256


def _network_run(p, x, rows, width, per_row):
    """One charkit_network_run call with room for per_row outputs per row:
    (status, outputs reported, buffer)."""
    buf = np.empty(max(rows, 1) * per_row, np.float32)
    outputs = c_uint64(0)
    status = N.fn.network_run(p, N.fptr(x), rows, width, N.fptr(buf), buf.size, byref(outputs))
    return status, int(outputs.value), buf


def run_network(path, inputs):
    """Runs a .nmn or .onnx file on raw input rows (N, I) like ``charkit deformer
    run``; returns its outputs (N, O) float32 ((O,) for one row (I,)).

    The output count is learnt from the first row (the library reports it,
    failing with status 3 when the buffer is too small); the whole batch is
    then written into an array of exactly (N, O).
    """
    x = N.f32(inputs, "inputs")
    single = x.ndim == 1
    if single:
        x = x.reshape(1, -1)
    if x.ndim != 2:
        raise ValueError("inputs must have shape (N, I), not %s" % (tuple(x.shape),))
    rows, width = x.shape
    p = N.path_arg(path)
    probe_rows = min(rows, 1)
    status, o, buf = _network_run(p, x, probe_rows, width, _FIRST_GUESS)
    if status == 3 and o > _FIRST_GUESS:
        status, o, buf = _network_run(p, x, probe_rows, width, o)
    N.check(status)
    if probe_rows * o > buf.size:
        raise N.CharkitError(5, "INTERNAL", "charkit_network_run wrote %d outputs per row into "
                             "a buffer for %d" % (o, buf.size // max(probe_rows, 1)))
    if rows <= 1:
        res = buf[:rows * o].reshape(rows, o)
        return res[0] if single else res
    out = np.empty((rows, o), np.float32)
    got = c_uint64(0)
    N.check(N.fn.network_run(p, N.fptr(x), rows, width, N.fptr(out), out.size, byref(got)))
    if int(got.value) != o:
        raise N.CharkitError(5, "INTERNAL", "charkit_network_run reported %d outputs per row, "
                             "then %d" % (o, int(got.value)))
    return out

"""Saving a fitted :class:`~hmcpgm.MLPR` to a file and loading it back, without pickle.

The file is a NumPy ``.npz`` archive (a zip of ``.npy`` arrays) read with
``allow_pickle=False``, so loading a file from someone else cannot run code. It
holds:

* ``meta``: a JSON string with ``format`` (``"hmcpgm-model"``),
  ``format_version`` (8 for a model averaged with the neighbour stack, the
  metadata's ``stack_weight``; 7 for a model whose nbh and full use the
  prevalence's prior, the metadata's ``prior``; 6 for a model that pools its mLPRs with
  isotonic posteriors, 5 for one with a descendants' exponent, which older
  readers cannot apply and must refuse; else 4; version 3 files,
  whose score model stored its per-class choice as positions in the candidate
  list of that time, and version
  2 files, from before ``version="auto"``, still load), the hmcpgm version that
  wrote it, the estimator's parameters, the fitted version and cross-validation table, the class names in column order,
  the hierarchy's edges and a SHA-256 ``digest`` of everything else in the file;
* ``theta``, ``prevalence``, ``tempering``: per-class arrays; ``own_tempering``
  and ``descendants_tempering`` when fitted;
* ``pool_model/<name>``: the isotonic score models of the pool, when the model
  pools (its weight is the metadata's ``pool_weight``);
* ``stack/center``, ``stack/scale``, ``stack/platt``, ``stack/coef``: the
  neighbour stack, when the model has one (its prior precision is the metadata's
  ``stack_lam``);
* ``recalibration/knots_x``, ``recalibration/knots_y``: the shared
  recalibration map, when fitted;
* ``score_model/<name>``: the arrays of the fitted score model
  (:meth:`hmcpgm.likelihood.ScoreModel.to_dict`); ``score_model/choice`` and
  ``score_model/candidates`` hold model names (strings), not positions.

:func:`load_model` refuses, in one line, a file whose digest does not match
(anything edited after saving), and checks every array's shape, dtype and range
and their consistency with each other, so a damaged or hand-made file never
predicts. Class names must be strings or integers (JSON keeps both).
"""

import hashlib
import io
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ._atomic import atomic_write
from ._util import json_ready, json_records, plain_name
from .exceptions import HmcpgmError, InputError

__all__ = ["save_model", "load_model", "is_model_file"]

FORMAT = "hmcpgm-model"
FORMAT_VERSION = 8  # written only by models with a neighbour stack (older readers must refuse them); 7: nbh
# and full with the prevalence's prior; 6: a pool; 5: a descendants' exponent
# 3: the score model's choice as positions (likelihood.LEGACY_AUTO_CANDIDATES)
_READS = (2, 3, 4, 5, 6, 7, FORMAT_VERSION)
# The zip archive's comment (its last bytes) seals every byte before it with SHA-256: checked before any
# member is decompressed. Files saved before the seal load too (their members are read bounded, then
# checked by the digest in the metadata).
_SEAL_PREFIX = b"hmcpgm-sha256:"
_SEAL_LENGTH = len(_SEAL_PREFIX) + 64
_DEFLATE_MAX_RATIO = 1032  # the most that deflate can expand a byte: a member claiming more is lying


def _digest(meta, arrays):
    """SHA-256 over the metadata (without the digest) and every array's name, dtype, shape and bytes."""
    h = hashlib.sha256()
    h.update(json.dumps({k: v for k, v in meta.items() if k != "digest"}, sort_keys=True).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_model(model, path):
    """Save a fitted :class:`~hmcpgm.MLPR` to ``path`` (an ``.npz`` archive).

    Parameters
    ----------
    model : MLPR
        A fitted estimator whose class names are strings or integers.
    path : str or Path
        The archive written (replaced if it exists; no suffix is added).

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from hmcpgm import Hierarchy, MLPR
    >>> h = Hierarchy.from_parents([None, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = np.sort(rng.integers(0, 2, (400, 2)), axis=1)[:, ::-1]
    >>> model = MLPR(hierarchy=h).fit(rng.normal(y), y)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = save_model(model, os.path.join(d, "m.npz"))
    ...     again = load_model(os.path.join(d, "m.npz"))
    >>> s = rng.normal(size=(3, 2))
    >>> bool(np.array_equal(again.predict_proba(s), model.predict_proba(s)))
    True
    """
    from sklearn.utils.validation import check_is_fitted

    from .estimator import MLPR

    if not isinstance(model, MLPR):
        last = "; or save its MLPR step alone with save_model(pipe[-1], path)" if hasattr(model, "steps") else ""
        raise InputError(
            f"save_model saves a fitted MLPR only, got a {type(model).__name__}: save other objects with "
            f"joblib.dump(obj, path) (pickle: load such files only from a source you trust){last}"
        )
    check_is_fitted(model, ["network_", "score_model_", "hierarchy_"])
    from ._fit_params import check_fit_time_params
    from .estimator import check_params

    try:  # load_model checks them: a model it would refuse is not written (over a good file)
        check_params(model)
        check_fit_time_params(model, getattr(model, "_fit_params", None))  # the file would hide the change
    except InputError as exc:
        raise InputError(f"cannot save this model, its parameters were changed after fit: {exc}") from None
    hierarchy = model.hierarchy_
    for name in hierarchy.classes:
        if not isinstance(name, (str, int, np.integer)) or isinstance(name, bool):
            raise InputError(f"only models whose class names are strings or integers can be saved; got {name!r}")
    state = model.score_model_.to_dict()
    arrays = {f"score_model/{k}": np.asarray(v) for k, v in state.items() if k not in ("kind", "classes")}
    arrays["theta"] = np.asarray(model.theta_, dtype=float)
    arrays["prevalence"] = np.asarray(model.prevalence_, dtype=float)
    arrays["tempering"] = np.asarray(model.tempering_, dtype=float)
    if getattr(model, "own_tempering_", None) is not None:
        arrays["own_tempering"] = np.asarray(model.own_tempering_, dtype=float)
    if getattr(model, "descendants_tempering_", None) is not None:
        arrays["descendants_tempering"] = np.asarray(model.descendants_tempering_, dtype=float)
    pool_weight = model.second_stage_.pool_weight
    if pool_weight is not None:
        pool_state = model.second_stage_.pool_model.to_dict()
        arrays.update({f"pool_model/{k}": np.asarray(v) for k, v in pool_state.items() if k not in ("kind", "classes")})
    stack = model.second_stage_.stack_model if model.second_stage_.stack_weight is not None else None
    if stack is not None:
        arrays.update({f"stack/{k}": v for k, v in stack.to_dict().items() if k not in ("kind", "lam")})
    if model.recalibration_ is not None:
        arrays["recalibration/knots_x"] = np.asarray(model.recalibration_.knots_x, dtype=float)
        arrays["recalibration/knots_y"] = np.asarray(model.recalibration_.knots_y, dtype=float)
    cv_results = None if model.cv_results_ is None else json_records(model.cv_results_)
    meta = {
        "format": FORMAT,
        "format_version": (FORMAT_VERSION if stack is not None else 7 if model.second_stage_.prior == "prevalence"
                           else 6 if pool_weight is not None else 5 if "descendants_tempering" in arrays else 4),
        "hmcpgm_version": _version(),
        "params": {k: plain_name(v) for k, v in model.get_params().items() if k != "hierarchy"},
        "flat": model.hierarchy is None,
        "classes": [plain_name(c) for c in hierarchy.classes],
        "edges": [[plain_name(p), plain_name(c)] for p, c in hierarchy.edges],
        "score_model_kind": state["kind"],
        "version": model.version_,
        "consistency": getattr(model, "consistency_", "hierrank"),
        "prior": model.second_stage_.prior,
        **({} if pool_weight is None else {"pool_weight": pool_weight, "pool_model_kind": pool_state["kind"]}),
        **({} if stack is None else {"stack_weight": model.second_stage_.stack_weight, "stack_lam": stack.lam}),
        "recalibrated_on": getattr(model, "recalibrated_on_", None),
        "feature_names": hasattr(model, "feature_names_in_"),  # fitted on a DataFrame of string class names
        "cv_results": cv_results,
        "cv_results_attrs": None if model.cv_results_ is None else json_ready(dict(model.cv_results_.attrs)),
    }
    meta["digest"] = _digest(meta, arrays)
    path = Path(path)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, meta=np.array(json.dumps(meta)), **arrays)
    with zipfile.ZipFile(buffer, "a") as zf:
        zf.comment = _SEAL_PREFIX + b"0" * 64  # fixes the comment's length, which the sealed bytes include
    raw = buffer.getvalue()[:-_SEAL_LENGTH]
    with atomic_write(path, binary=True) as fh:
        fh.write(raw)
        fh.write(_SEAL_PREFIX + hashlib.sha256(raw).hexdigest().encode())
    return path


def is_model_file(path):
    """True when ``path`` is an archive written by :func:`save_model`.

    Parameters
    ----------
    path : str or Path
        The file to look at (only its zip directory is read).

    Returns
    -------
    bool
        False for a missing file, a directory or any other file.
    """
    path = Path(path)
    if not path.is_file() or not zipfile.is_zipfile(path):
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            return "meta.npy" in zf.namelist()
    except (zipfile.BadZipFile, NotImplementedError, ValueError, EOFError, OSError):  # a damaged directory
        return False


def _raw_bytes(path):
    """The file's bytes, read once, with the seal checked (a one-line error when it does not match)."""
    raw = path.read_bytes()
    at = raw.rfind(_SEAL_PREFIX, max(0, len(raw) - 2 * _SEAL_LENGTH))
    if at >= 0:
        seal = raw[at:]
        if at != len(raw) - _SEAL_LENGTH or hashlib.sha256(raw[:at]).hexdigest().encode() != seal[len(_SEAL_PREFIX):]:
            raise InputError(
                f"model file {path} is damaged: its bytes do not match the checksum written when it was saved "
                "(a copy cut short or altered?); save the model again"
            )
    return raw


def _read_member(zf, info):
    """One ``.npy`` member as an array, reading no more than its header and the zip directory promise."""
    if info.file_size > _DEFLATE_MAX_RATIO * info.compress_size + 1024:
        raise ValueError(f"member {info.filename!r} claims {info.file_size} bytes from {info.compress_size}")
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ValueError(f"member {info.filename!r} has .npy version {version}")
        if dtype.hasobject:
            raise TypeError(f"member {info.filename!r} holds Python objects, which need pickle")
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if nbytes != info.file_size - fh.tell():
            raise ValueError(f"member {info.filename!r}: its header promises {nbytes} bytes, the archive "
                             f"{info.file_size - fh.tell()}")
        data = fh.read(nbytes)
    if len(data) != nbytes:
        raise EOFError(f"member {info.filename!r} is cut short")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()


def _read(path):
    """(meta, arrays) of an archive, or a one-line error for anything unreadable."""
    raw = _raw_bytes(path)
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            arrays = {info.filename.removesuffix(".npy"): _read_member(zf, info) for info in zf.infolist()}
    except TypeError as exc:  # object arrays need pickle: refused
        raise InputError(
            f"model file {path} cannot be read without pickle ({exc}); it was not written by save_model"
        ) from None
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error, KeyError, RuntimeError,
            NotImplementedError) as exc:
        raise InputError(f"model file {path} is damaged or truncated ({type(exc).__name__}: {exc})") from None
    try:
        meta = json.loads(str(arrays.pop("meta")))
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
    except (KeyError, ValueError) as exc:
        raise InputError(f"model file {path} has no readable metadata ({exc})") from None
    return meta, arrays


def load_model(path):
    """Load a model saved by :func:`save_model`; it predicts exactly as the saved one did.

    Parameters
    ----------
    path : str or Path
        An archive written by :func:`save_model` (read without pickle).

    Returns
    -------
    MLPR
        The fitted estimator.

    Raises
    ------
    InputError
        One line naming the file and what is wrong: not an hmcpgm model, another
        format version, contents changed after saving (digest), an array of the
        wrong shape, dtype or range, arrays inconsistent with each other.
    """
    import pandas as pd

    from ._fit_params import fit_time_params
    from .estimator import MLPR, check_params
    from .hierarchy import Hierarchy
    from .likelihood import NeighbourStack, score_model_from_dict
    from .network import LabelNetwork
    from .options import VERSIONS, check_choice
    from .second_stage import CONSISTENCY, SecondStage

    path = Path(path)
    if path.is_dir():
        raise InputError(f"model file {str(path)!r} is a directory, not a file")
    if not path.is_file():
        raise FileNotFoundError(f"model file {str(path)!r} does not exist")
    if not is_model_file(path):
        _raw_bytes(path)  # a sealed file whose bytes changed is called damaged, not foreign
        raise InputError(f"model file {path} is not an hmcpgm model (expected an .npz written by save_model)")
    meta, arrays = _read(path)
    if meta.get("format") != FORMAT or meta.get("format_version") not in _READS:
        raise InputError(
            f"model file {path} has format {meta.get('format')!r} version {meta.get('format_version')!r}; "
            f"this hmcpgm reads {FORMAT!r} versions {', '.join(map(str, _READS[:-1]))} and {FORMAT_VERSION}"
        )
    if meta.get("digest") != _digest(meta, arrays):
        raise InputError(
            f"model file {path} was changed after it was saved (its integrity digest does not match); "
            "refit and save the model again"
        )
    try:
        classes, edges = meta["classes"], [tuple(e) for e in meta["edges"]]
        hierarchy = Hierarchy.from_edges(edges, classes=classes)
        params = dict(meta["params"])
        if meta["format_version"] == 2:  # before version="auto": the paper's model, nothing cross-fitted
            params.update(tempering=None, recalibrate=False)
        unknown = sorted(set(params) - set(MLPR().get_params()))
        if unknown:
            raise InputError(f"unknown estimator parameters {unknown}")
        _check_arrays(arrays, hierarchy.n_classes)
        state = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("score_model/")}
        state.update(kind=meta["score_model_kind"], classes=classes)
        pool_state = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("pool_model/")}
        if bool(pool_state) != ("pool_weight" in meta):
            raise ValueError("a pool needs both its weight and its isotonic score models")
        pool_model = None
        if pool_state:
            pool_state.update(kind=meta["pool_model_kind"], classes=classes)
            pool_model = score_model_from_dict(pool_state, hierarchy)
        stack_state = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("stack/")}
        if bool(stack_state) != ("stack_weight" in meta):
            raise ValueError("a stack needs both its weight and its arrays")
        stack = None
        if stack_state:
            stack = NeighbourStack.from_dict({**stack_state, "lam": meta["stack_lam"]}, hierarchy)
        model = MLPR(hierarchy=None if meta.get("flat") else hierarchy, **params)
        check_params(model)
        model._fit_params = fit_time_params(model)  # as fit keeps them: a later set_params is refused alike
        version, consistency = meta.get("version", params.get("version")), meta.get("consistency", "hierrank")
        check_choice(version, "the fitted version", VERSIONS)
        check_choice(consistency, "the fitted consistency", CONSISTENCY)
        network = LabelNetwork(hierarchy, arrays["theta"])
        model.second_stage_ = SecondStage(
            hierarchy, version, arrays.get("tempering", 1.0),
            score_model_from_dict(state, hierarchy), network.theta, _recalibration(arrays),
            engine=model.engine, options=model.inference_options or {}, network=network,
            own=arrays.get("own_tempering"),  # absent in files of 0.2: all evidence at tempering_
            consistency=consistency, descendants=arrays.get("descendants_tempering"),
            pool_weight=meta.get("pool_weight"), pool_model=pool_model,
            stack_weight=meta.get("stack_weight"), stack_model=stack,
            prior=meta.get("prior", "network"),  # files without it (before format 7): the network's prior
        )
        # files before 0.3 hold cross-fitted maps only
        model.recalibrated_on_ = meta.get("recalibrated_on",
                                          None if model.second_stage_.recalibration is None else "cross-fitting")
        crossfitted = model.recalibrated_on_ == "cross-fitting"
        model.crossfit_recalibration_ = model.second_stage_.recalibration if crossfitted else None
        model.cv_results_ = None if meta.get("cv_results") is None else pd.DataFrame(meta["cv_results"])
        if model.cv_results_ is not None:  # the pool's and the consistency's choices (files before 0.3 lack them)
            model.cv_results_.attrs.update(_attrs_in(meta.get("cv_results_attrs") or {}))
    except (HmcpgmError, KeyError, TypeError, ValueError) as exc:
        what = f"lacks {exc}" if isinstance(exc, KeyError) else str(exc)
        raise InputError(f"model file {path} is not a valid hmcpgm model: {what}") from None
    model.classes_ = np.asarray(hierarchy.classes, dtype=object)
    model.n_features_in_ = hierarchy.n_classes
    if meta.get("feature_names", False):  # files before 0.3 do not say: left unset
        model.feature_names_in_ = np.asarray(hierarchy.classes, dtype=object)
    return model


def _attrs_in(attrs):
    """``cv_results_.attrs`` as saved: JSON made the pool's and the stack's weights (their criterion's keys)
    strings."""
    for name in ("pool", "stack"):
        entry = attrs.get(name)
        if isinstance(entry, dict) and isinstance(entry.get("cv"), dict):
            entry["cv"] = {float(w): value for w, value in entry["cv"].items()}
    return attrs


def _recalibration(arrays):
    from .calibration import RecalibrationMap

    if "recalibration/knots_x" not in arrays:
        return None
    x, y = arrays["recalibration/knots_x"], arrays["recalibration/knots_y"]
    if x.ndim != 1 or x.shape != y.shape or len(x) < 1 or np.any(np.diff(x) < 0) or np.any(np.diff(y) < 0):
        raise ValueError("the recalibration map's knots must be two non-decreasing vectors of one length")
    if np.any((y < 0) | (y > 1)) or not np.all(np.isfinite(x)):
        raise ValueError("the recalibration map's values must lie in [0, 1]")
    return RecalibrationMap(x, y)


# name -> (trailing shape after K, or None for any; lower bound; upper bound)
_ARRAY_RULES = {
    "theta": ((), 0.0, 1.0),
    "prevalence": ((), 0.0, 1.0),
    "tempering": ((), 0.0, None),
    "own_tempering": ((), 0.0, None),
    "descendants_tempering": ((), 0.0, None),
    "score_model/prevalence": ((), 0.0, 1.0),
    "score_model/lpr": (None, 0.0, 1.0),
    "score_model/density0": (None, 0.0, None),
    "score_model/density1": (None, 0.0, None),
    "score_model/sd": ((2,), 0.0, None),
    "score_model/mean": ((2,), None, None),
    "stack/center": ((), None, None),
    "stack/scale": ((), 0.0, None),
    "stack/platt": ((2,), None, None),
    "stack/coef": ((5,), None, None),
}


def _check_arrays(arrays, k):
    """Shapes, dtypes, ranges and consistency of a model's arrays (a ValueError names the first fault)."""
    for name in ("theta", "prevalence"):
        if name not in arrays:
            raise KeyError(f"the array {name!r}")
    for name, a in arrays.items():
        if name.startswith("recalibration/"):
            continue  # not per class: checked by _recalibration
        if name.startswith("pool_model/"):  # the pool's score models: the score model's rules
            name = "score_model/" + name.split("/", 1)[1]
        if name in ("score_model/choice", "score_model/candidates"):  # names (positions in format 3)
            if a.dtype.kind not in "Ufiu" or a.ndim != 1:
                raise ValueError(f"array {name!r} must be a vector of model names, got {a.dtype} {a.shape}")
            continue  # the score model checks the names
        if name == "score_model/informative":
            if a.dtype != bool or a.shape != (k,):
                raise ValueError(f"array {name!r} must be ({k},) booleans, got {a.dtype} {a.shape}")
            continue
        if a.dtype.kind not in "fiu":
            raise ValueError(f"array {name!r} must be numeric, got dtype {a.dtype}")
        if a.ndim == 0 or a.shape[0] != k:
            raise ValueError(f"array {name!r} must have one row per class ({k}), got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"array {name!r} holds NaN or infinite values")
        tail, low, high = _ARRAY_RULES.get(name, (None, None, None))
        if tail is not None and a.shape[1:] != tail:
            raise ValueError(f"array {name!r} must have shape {(k, *tail)}, got {a.shape}")
        if (low is not None and a.min() < low) or (high is not None and a.max() > high):
            raise ValueError(f"array {name!r} holds values outside [{low}, {high}]")
    for prefix, what in (("score_model", "the score model"), ("pool_model", "the pool's score model")):
        grid_names = tuple(f"{prefix}/{n}" for n in ("lpr", "density0", "density1"))
        grids = [a.shape[1:] for n, a in arrays.items() if n in grid_names]
        if grids and (len(set(grids)) > 1 or len(grids[0]) != 1 or grids[0][0] < 2):
            raise ValueError(f"{what}'s grids must be (K, G) with one G >= 2, got shapes {grids}")
        if f"{prefix}/lo" in arrays and f"{prefix}/hi" in arrays:
            lo, hi = arrays[f"{prefix}/lo"], arrays[f"{prefix}/hi"]
            if lo.shape != (k,) or hi.shape != (k,) or np.any(lo > hi):
                raise ValueError(f"{what}'s grid ends must satisfy lo <= hi for every class")


def _version():
    from . import __version__

    return __version__

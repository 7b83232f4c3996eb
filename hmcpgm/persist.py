"""Saving a fitted :class:`~hmcpgm.MLPR` to a file and loading it back, without pickle.

The file is a NumPy ``.npz`` archive (a zip of ``.npy`` arrays) read with
``allow_pickle=False``, so loading a file from someone else cannot run code. It
holds:

* ``meta``: a JSON string with ``format`` (``"hmcpgm-model"``),
  ``format_version`` (1), the hmcpgm version that wrote it, the estimator's
  parameters, the class names in column order and the hierarchy's edges;
* ``theta``, ``prevalence``: per-class arrays;
* ``score_model/<name>``: the arrays of the fitted score model
  (:meth:`hmcpgm.likelihood.ScoreModel.to_dict`).

Class names must be strings or integers (JSON keeps both).
"""

import json
import zipfile
from pathlib import Path

import numpy as np

from .exceptions import InputError

__all__ = ["save_model", "load_model", "is_model_file"]

FORMAT = "hmcpgm-model"
FORMAT_VERSION = 1


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


def save_model(model, path):
    """Save a fitted :class:`~hmcpgm.MLPR` to ``path`` (an ``.npz`` archive).

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

    check_is_fitted(model, ["network_", "score_model_", "hierarchy_"])
    hierarchy = model.hierarchy_
    for name in hierarchy.classes:
        if not isinstance(name, (str, int, np.integer)) or isinstance(name, bool):
            raise InputError(
                f"only models whose class names are strings or integers can be saved; got {name!r}"
            )
    state = model.score_model_.to_dict()
    arrays = {f"score_model/{k}": np.asarray(v) for k, v in state.items() if k not in ("kind", "classes")}
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "hmcpgm_version": _version(),
        "params": {k: _plain(v) for k, v in model.get_params().items() if k != "hierarchy"},
        "flat": model.hierarchy is None,
        "classes": [_plain(c) for c in hierarchy.classes],
        "edges": [[_plain(p), _plain(c)] for p, c in hierarchy.edges],
        "score_model_kind": state["kind"],
    }
    path = Path(path)
    with path.open("wb") as fh:
        np.savez_compressed(
            fh,
            meta=np.array(json.dumps(meta)),
            theta=np.asarray(model.theta_, dtype=float),
            prevalence=np.asarray(model.prevalence_, dtype=float),
            **arrays,
        )
    return path


def is_model_file(path):
    """True when ``path`` is an archive written by :func:`save_model`."""
    path = Path(path)
    if not path.is_file() or not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as zf:
        return "meta.npy" in zf.namelist()


def load_model(path):
    """Load a model saved by :func:`save_model`; it predicts exactly as the saved one did."""
    from .estimator import MLPR
    from .hierarchy import Hierarchy
    from .likelihood import score_model_from_dict
    from .network import LabelNetwork

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {str(path)!r} does not exist")
    if not is_model_file(path):
        raise InputError(f"model file {path} is not an hmcpgm model (expected an .npz written by save_model)")
    with np.load(path, allow_pickle=False) as archive:
        try:
            meta = json.loads(str(archive["meta"]))
        except (KeyError, ValueError) as exc:
            raise InputError(f"model file {path} has no readable metadata ({exc})") from None
        if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
            raise InputError(
                f"model file {path} has format {meta.get('format')!r} version {meta.get('format_version')!r}; "
                f"this hmcpgm reads {FORMAT!r} version {FORMAT_VERSION}"
            )
        arrays = {name: archive[name] for name in archive.files}
    hierarchy = Hierarchy.from_edges([tuple(e) for e in meta["edges"]], classes=meta["classes"])
    state = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("score_model/")}
    state.update(kind=meta["score_model_kind"], classes=meta["classes"])
    model = MLPR(hierarchy=None if meta.get("flat") else hierarchy, **meta["params"])
    model.hierarchy_ = hierarchy
    model.network_ = LabelNetwork(hierarchy, arrays["theta"])
    model.classes_ = np.asarray(hierarchy.classes, dtype=object)
    model.theta_ = model.network_.theta
    model.prevalence_ = arrays["prevalence"]
    model.n_features_in_ = hierarchy.n_classes
    model.score_model_ = score_model_from_dict(state, hierarchy)
    return model


def _version():
    from . import __version__

    return __version__

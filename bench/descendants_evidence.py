"""Does the descendants' evidence deserve its own exponent? (issue 19; a measured negative, not in the default)

The default's nbh and full raise every other class's likelihood ratio to one
exponent ``a`` (a class's own evidence keeps indpt's). On a forest the full
version can give the evidence *below* a class its own exponent ``d`` while
``a`` stays the exponent of the evidence outside the class's subtree:
:func:`hmcpgm.inference.split_full_posterior` computes that posterior exactly
(two upward passes, one downward), and
``fit_second_stage_auto(..., descendants=True)`` fits ``d`` after ``a`` and
then ``a`` again, keeping them when the cross-fitted criterion improves. The
hierarchical corrections that do best on the leaderboard (TPR-DAG's
descendants variant, the max constraint) lean on exactly that evidence.

Per run on a tree (the first stage's scores as in ``bench/version_transfer.py``),
AU(PRC) (%) of HierRank rankings:

- ``default`` and ``+desc``: the default second stage's choice without and with
  ``descendants=True`` (its version, and its AU(PRC) on the validation and
  test rows);
- ``full``: the full version alone, with one exponent and with the split one
  (``a`` / ``d`` as fitted, own evidence at indpt's exponent, no max lifting):
  what the split changes in the model before any version choice.

Usage (from the repository root)::

    python bench/descendants_evidence.py --runs Enron_corr.classwise
    python bench/descendants_evidence.py   # the 10 runs on trees (minutes)
"""

import dataclasses
import warnings

import numpy as np
from version_transfer import load_run, new_rows_auprc, run_arguments  # bench/ is on sys.path when a script runs


def main():
    from hmcpgm.selection import fit_second_stage_auto

    args = run_arguments(__doc__)
    warnings.simplefilter("ignore")
    print("AU(PRC) % (valid / test) of the default's choice without and with descendants=True, and of full alone "
          "with one exponent a and with the descendants' own exponent d")
    print(f"{'run':<24} {'default':<21} {'+desc':<21} {'full, one a':<23} {'full, a and d':<28}")
    gains = {"choice": [], "full": []}
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        cells, scores = {}, {}
        for key, desc in (("default", False), ("desc", True)):
            stage, details = fit_second_stage_auto(z["s_train"], z["y_train"], h, allow_empty=True, seed=0,
                                                   descendants=desc, return_predictions=True)
            scores[key] = new_rows_auprc(stage, z, h, ev)
            cells[key] = f"{stage.version:<5} {scores[key][0]:6.2f} / {scores[key][1]:6.2f}"
            full = details["versions"].get("full")
            if full is None:
                scores[f"full_{key}"] = None
                continue
            fitted = dataclasses.replace(stage, version="full", a=full["a"], engine=full["engine"],
                                         own=details["versions"]["indpt"]["a"], consistency="hierrank",
                                         descendants=full["descendants"])
            scores[f"full_{key}"] = new_rows_auprc(fitted, z, h, ev)
            a = np.unique(full["a"]).round(3).tolist()
            d = "-" if full["descendants"] is None else np.unique(full["descendants"]).round(3).tolist()
            label = f"a {a}" if key == "default" else f"a {a} d {d}"
            cells[f"full_{key}"] = f"{scores[f'full_{key}'][0]:6.2f} / {scores[f'full_{key}'][1]:6.2f} {label}"
        gains["choice"].append(np.subtract(scores["desc"], scores["default"]))
        if scores["full_default"] is not None and scores["full_desc"] is not None:
            gains["full"].append(np.subtract(scores["full_desc"], scores["full_default"]))
        row = [cells.get(k, "-") for k in ("default", "desc", "full_default", "full_desc")]
        print(f"{run:<24} {row[0]:<21} {row[1]:<21} {row[2]:<23} {row[3]:<28}", flush=True)
    for what, rows in gains.items():
        if rows:
            mean = np.mean(rows, axis=0)
            print(f"mean gain of the descendants' exponent ({'the choice' if what == 'choice' else 'full alone'}, "
                  f"{len(rows)} runs): valid {mean[0]:+.3f}, test {mean[1]:+.3f} points")


if __name__ == "__main__":
    main()

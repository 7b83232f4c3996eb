"""The Bayesian FDR cutoff on data sets it was not tuned on: seeded synthetic DAG benchmarks with noisy labels.

The held-out recalibration's prior (two pseudo-events per isotonic block at the
cross-fitted map's rate, ``hmcpgm.estimator.HELD_OUT_PRIOR_COUNT``) was chosen on
the 16 leaderboard runs (docs/real_data.md). This script asks how the cutoff does
on data it never saw. Each seed draws a Gene-Ontology-like DAG of 60 classes (about
40% of them with two parents), 30 features (3 nominal, read as codes: they are
binned numbers, a < b < c; 2% of the numeric cells
missing) and labels from a logistic model of the noise-free features, closed
upward; the features are then observed with noise, so even the best-scored events
are not certain. It writes train / valid / test ARFF files (900 / 300 / 600 rows)
to a temporary folder, runs :func:`hmcpgm.applications.run_benchmark` (the
leaderboard's pipeline: the joint first stage, or ``--first-stage classwise``; then
``MLPR()``, the map refitted on the validation rows) and prints mLPR-auto-HierRank's Bayesian cutoff on the test rows
at alpha 0.05, 0.1 and 0.2 as *called / realised FDP / oracle*, with the held-out
map (what the leaderboard reports) and with the cross-fitted map; then, for the
top 50 events of the ranking, their realised FDP beside the FDR estimated from the
held-out map, the cross-fitted map and the mLPRs before recalibration. At the end:
the cells where the held-out map realises an FDP above alpha + 0.05 with at least 50
events called (the leaderboard's check), those above alpha, the false discovery rate
of each map (the mean of the seeds' FDPs, a seed that calls nothing counting 0, with
its standard error over the seeds: what the cutoff promises to keep at alpha) and the
top-50 numbers averaged over the seeds. With ``--leaderboard`` the pipeline also runs
the classic corrections (issue 19's leaderboard on data it was not tuned on), and the
script prints mLPR-auto-HierRank's test AU(PRC) minus the best correction's (picked on
the test rows) and minus the one picked on the validation rows, per seed and on average,
and minus each method's (every correction, the raw scores, the paper's versions) on
average over the seeds.

Usage (from the repository root)::

    python bench/fdr_noisy_dag.py                 # seeds 0 to 9, about 2 minutes
    python bench/fdr_noisy_dag.py --seeds 0,1,2
    python bench/fdr_noisy_dag.py --seeds 0-39     # 40 seeds, about 8 minutes
    python bench/fdr_noisy_dag.py --rows 1800,600,600   # as many validation rows as test rows
    python bench/fdr_noisy_dag.py --seeds 0-19 --leaderboard   # and against the corrections, about 5 minutes
    python bench/fdr_noisy_dag.py --seeds 0-19 --leaderboard --candidates max,htd   # HTD in the consistency choice
    python bench/fdr_noisy_dag.py --seeds 0-19 --leaderboard --first-stage classwise
    python bench/fdr_noisy_dag.py --seeds 0-39 --leaderboard --engine junction   # exact cross-fitting
"""

import argparse
import tempfile
import warnings
from pathlib import Path

import numpy as np
from version_transfer import standard_error

ALPHAS = (0.05, 0.1, 0.2)
TOP = 50  # the events whose estimated and realised FDP are compared (the curve's nearest rank)


def write_benchmark(folder, seed, n_classes=60, n_features=30, rows=(900, 300, 600)):
    """The three ARFF files of one seeded synthetic DAG benchmark; returns their paths."""
    rng = np.random.default_rng(seed)
    names = [f"GO{k:07d}" for k in range(n_classes)]
    parents = [[]] + [sorted(set(rng.choice(k, size=1 if k < 6 or rng.random() < 0.6 else 2,
                                            replace=False).tolist())) for k in range(1, n_classes)]
    edges = [("root", names[0])] + [(names[p], names[k]) for k in range(1, n_classes) for p in parents[k]]
    weights = rng.normal(size=(n_classes, n_features)) * (rng.random((n_classes, n_features)) < 0.2)
    header = ["@RELATION noisydag"] + [f"@ATTRIBUTE f{j} numeric" for j in range(n_features - 3)] + [
        f"@ATTRIBUTE n{j} {{a,b,c}}" for j in range(3)] + [
        "@ATTRIBUTE class hierarchical " + ",".join(f"{p}/{c}" for p, c in edges), "@DATA"]
    paths = []
    for part, n in zip(("train", "valid", "test"), rows):
        x = rng.normal(size=(n, n_features))
        logits = x @ weights.T + 0.5
        y = np.zeros((n, n_classes), bool)
        for k in range(n_classes):  # parents come first: the labels are closed upward
            y[:, k] = np.all(y[:, parents[k]], axis=1) & (rng.random(n) < 1 / (1 + np.exp(-logits[:, k])))
        y[:, 0] = True
        x = x + rng.normal(size=x.shape)  # observed with noise
        lines = []
        for i in range(n):
            cells = ["?" if rng.random() < 0.02 else f"{v:.4f}" for v in x[i, :-3]]
            cells += ["abc"[int(np.clip(v + 1, 0, 2))] for v in x[i, -3:]]
            lines.append(",".join(cells) + "," + "@".join(names[k] for k in np.flatnonzero(y[i])))
        path = Path(folder) / f"noisydag{seed}.{part}.arff"
        path.write_text("\n".join(header + lines) + "\n")
        paths.append(path)
    return paths


def synthetic_scores(n, folder):
    """The first ``n`` benchmarks (seeds 0 to n - 1, default sizes) with the joint first stage's scores, one
    at a time: name, hierarchy, evaluated classes (bool) and a dict of ``s_`` / ``y_`` arrays per part
    (``train``, ``valid``, ``test``), as ``bench/version_transfer.load_run`` gives a leaderboard run's."""
    from hmcpgm.applications import first_stage_scores
    from hmcpgm.datasets import load_hmc_arff

    for seed in range(n):
        train, valid, test = (load_hmc_arff(p) for p in write_benchmark(folder, seed))
        s_train, (s_valid, s_test) = first_stage_scores(train, (valid, test), "joint", progress=False)
        z = {"s_train": s_train, "y_train": train.labels, "s_valid": s_valid, "y_valid": valid.labels,
             "s_test": s_test, "y_test": test.labels}
        yield f"noisydag{seed}", train.hierarchy, np.asarray(train.evaluated, bool), z


def leaderboard_gaps(seed, result):
    """mLPR-auto-HierRank's test AU(PRC) minus the best correction's (test-picked) and the validation-picked one's
    (points), printed as one line."""
    from benchmarks_table import _best_correction, _chosen_correction

    auto = result["methods"]["mLPR-auto-HierRank"]["auprc"]
    (best, b), (chosen, c) = _best_correction(result), _chosen_correction(result)
    out = (100 * (auto - b["auprc"]), 100 * (auto - c["auprc"]),
           {name: 100 * (auto - m["auprc"]) for name, m in result["methods"].items()})
    stage = result.get("second_stage") or {}
    print(f"{seed:>4} AU(PRC) mLPR-auto {100 * auto:.2f} ({stage.get('version')}, valid "
          f"{100 * result['methods']['mLPR-auto-HierRank']['valid_auprc']:.2f}), best correction {best} "
          f"{100 * b['auprc']:.2f} ({out[0]:+.2f}), chosen on valid {chosen} {100 * c['auprc']:.2f} ({out[1]:+.2f})",
          flush=True)
    return out


def main():
    from hmcpgm.applications import run_benchmark

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default=",".join(map(str, range(10))))
    parser.add_argument("--rows", default="900,300,600", help="train,valid,test rows")
    parser.add_argument("--leaderboard", action="store_true",
                        help="also run the classic corrections and print mLPR-auto's AU(PRC) minus the best one's")
    parser.add_argument("--first-stage", default="joint", choices=("joint", "classwise"))
    parser.add_argument("--candidates", default=None,
                        help="the consistency choice's candidates in place of the library's (e.g. max,htd)")
    parser.add_argument("--engine", default="auto",
                        help="mLPR-auto's engine (junction: exact cross-fitting too, where auto cross-fits "
                             "full with loopy BP)")
    args = parser.parse_args()
    if args.candidates:
        import hmcpgm.selection._auto as auto

        auto.CONSISTENCY_CANDIDATES = tuple(args.candidates.split(","))
    sizes = tuple(int(n) for n in args.rows.split(","))
    seeds = [int(s) for part in args.seeds.split(",")
             for s in (range(int(part.split("-")[0]), int(part.split("-")[1]) + 1) if "-" in part else [part])]
    warnings.simplefilter("ignore")
    print("mLPR-auto-HierRank, Bayesian cutoff on the test rows: called / realised FDP / oracle")
    print(f"{'seed':>4} {'map':<13} " + " ".join(f"{'alpha ' + str(a):>18}" for a in ALPHAS))
    over, cells, called_any, above, tops = 0, 0, 0, 0, []
    fdps = {"held-out": [], "cross-fitted": []}  # per seed, per alpha; 0 where nothing is called
    gaps = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in seeds:
            train, valid, test = write_benchmark(folder, seed, rows=sizes)
            # the nominal features are binned numbers (a < b < c): their codes, as synthetic_scores reads them
            result = run_benchmark(train, test, valid, first_stage=args.first_stage, corrections=args.leaderboard,
                                   engine=args.engine, bootstrap=0, progress=False, nominal="codes")
            if args.leaderboard:
                gaps.append(leaderboard_gaps(seed, result))
            rows = {"held-out": result["methods"]["mLPR-auto-HierRank"], "cross-fitted": {}}
            for a in ALPHAS:
                got = result["fdr_crossfitted"][str(a)]
                rows["cross-fitted"].update({f"bayes_rank@{a}": got["called"], f"bayes_fdp@{a}": got["fdp"],
                                             f"oracle_rank@{a}": got["oracle"]})
            for label, numbers in rows.items():
                fdps[label].append([numbers[f"bayes_fdp@{a}"] or 0.0 for a in ALPHAS])
                line = []
                for a in ALPHAS:
                    called, fdp = numbers[f"bayes_rank@{a}"], numbers[f"bayes_fdp@{a}"]
                    line.append(f"{called:5d} / {'-' if fdp is None else format(fdp, '.3f'):>5} / "
                                f"{numbers[f'oracle_rank@{a}']:4d}")
                    if label == "held-out":
                        cells += 1
                        over += called >= 50 and fdp is not None and fdp > a + 0.05
                        called_any += called > 0
                        above += called > 0 and fdp > a
                print(f"{seed:>4} {label:<13} " + " ".join(f"{c:>18}" for c in line), flush=True)
            curve = result["fdr_curve"]
            i = int(np.argmin(np.abs(np.asarray(curve["rank"]) - TOP)))
            tops.append([curve[k][i] for k in ("realised", "calibrated", "cross-fitted", "mlpr")])
            top_rank = curve["rank"][i]
            print(f"{'':>4} top {curve['rank'][i]} events: realised FDP {tops[-1][0]:.3f}, estimated with the "
                  f"held-out map {tops[-1][1]:.3f}, the cross-fitted map {tops[-1][2]:.3f}, "
                  f"the mLPRs as they are {tops[-1][3]:.3f}", flush=True)
    print(f"held-out map: FDP above alpha + 0.05 with at least 50 called in {over} of {cells} cells; "
          f"above alpha in {above} of the {called_any} cells that call anything")
    for label, values in fdps.items():
        values = np.asarray(values)
        se = standard_error(values)
        print(f"{label} map, false discovery rate (the mean FDP over the seeds, 0 where nothing is called): "
              + ", ".join(f"alpha {a}: {m:.3f} +- {s:.3f}" for a, m, s in zip(ALPHAS, values.mean(axis=0), se)))
    if gaps:
        each = {name: np.array([g[2][name] for g in gaps]) for name in gaps[0][2]}
        print(f"mLPR-auto-HierRank minus each method, AU(PRC) points over {len(gaps)} seeds: mean +- its standard "
              "error, worst seed")
        for name, g in sorted(each.items(), key=lambda kv: kv[1].mean()):
            print(f"  {name:<28} {g.mean():+.2f} +- {standard_error(g):.2f}, "
                  f"worst {g.min():+.2f}")
        gaps = np.asarray([g[:2] for g in gaps])
        for j, label in enumerate(("the best correction (picked on the test rows)",
                                   "the correction picked on the validation rows")):
            g = gaps[:, j]
            print(f"mLPR-auto - {label}: mean {g.mean():+.2f} +- {standard_error(g):.2f} points of AU(PRC) over "
                  f"{len(g)} seeds, worst {g.min():+.2f}, best {g.max():+.2f}")
    tops = np.mean(tops, axis=0)
    print(f"top {top_rank} events, mean over seeds: realised FDP {tops[0]:.3f}, estimated with the held-out map "
          f"{tops[1]:.3f}, the cross-fitted map {tops[2]:.3f}, the mLPRs as they are {tops[3]:.3f}")


if __name__ == "__main__":
    main()

"""Generate docs/benchmarks.md and docs/benchmarks.json from the real HMC benchmarks.

Runs :func:`hmcpgm.applications.run_benchmark` over every data set in
``shared/data/hmc/`` beside the repository that has training and test files. Data
sets that ship without a validation file (ImCLEF07A, Enron_corr) get one from
``run_benchmark`` itself: a seeded random 30% of the training rows become the
validation rows, the other 70% the training rows.

Usage (from the repository root)::

    python bench/benchmarks_table.py                       # every data set, both first stages
    python bench/benchmarks_table.py --datasets cellcycle_FUN,eisen_FUN --first-stages joint
    python bench/benchmarks_table.py --datasets cellcycle_GO --update   # keep the other rows
    python bench/benchmarks_table.py --datasets cellcycle_FUN --out-dir /tmp/bench   # a trial run
    python bench/benchmarks_table.py --render-only         # page and figure from benchmarks.json

``--update`` keeps the results already in ``docs/benchmarks.json`` for the
(data set, first stage) runs that are not rerun; without it the page holds
exactly the runs of this command. The page also gets ``docs/img/fdr_real.png``.
``--out-dir`` writes ``benchmarks.md`` and ``benchmarks.json`` there instead of ``docs/``.
"""

import argparse
import json
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA
DOCS = ROOT / "docs"
VALID_FRACTION = 0.3
NOT_RUN = "the command above does not name it."
ORDER = ("cellcycle_FUN", "eisen_FUN", "gasch1_FUN", "ImCLEF07A", "Enron_corr",
         "cellcycle_GO", "eisen_GO", "gasch1_GO")


def find_datasets(data_dir):
    """{name: (train, valid or None, test)} for every data set in ``data_dir``."""
    found = {}
    for train in sorted(data_dir.glob("*.train.arff")):
        name = train.name[: -len(".train.arff")]
        valid, test = data_dir / f"{name}.valid.arff", data_dir / f"{name}.test.arff"
        if test.is_file():
            found[name] = (train, valid if valid.is_file() else None, test)
    for suffix in ("_Train.arff", "_trainvalid.arff"):
        for train in sorted(data_dir.glob(f"*{suffix}")):
            name = train.name[: -len(suffix)]
            for test_suffix in ("_Test.arff", "_test.arff"):
                test = data_dir / f"{name}{test_suffix}"
                if test.is_file():
                    found[name] = (train, None, test)
    return dict(sorted(found.items(), key=lambda kv: ORDER.index(kv[0]) if kv[0] in ORDER else 99))


def run_one(name, train, valid, test, *, seed, versions, first_stage, progress):
    """run_benchmark on one data set (it carves validation rows when there is no file)."""
    from hmcpgm.applications import run_benchmark

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_benchmark(train, test, valid, first_stage=first_stage, valid_fraction=VALID_FRACTION,
                               seed=seed, versions=versions, progress=progress)
    result["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught
                                 if not w.category.__module__.startswith(("pgmpy", "numba"))})
    for w in result["warnings"]:
        print("  " + w, flush=True)
    result["dataset"] = name
    result["validation"] = (
        f"no validation file; a seeded random {VALID_FRACTION:.0%} of the training file's rows "
        f"(seed {seed}) is the validation set, the other {1 - VALID_FRACTION:.0%} the training set"
        if valid is None else "train, valid and test files as distributed"
    )
    result["seconds"]["total"] = round(time.perf_counter() - t0, 2)
    return result


def _pct(x):
    return "-" if x is None else f"{100 * x:.1f}"


def _key(r):
    return (ORDER.index(r["dataset"]) if r["dataset"] in ORDER else 99, FIRST_STAGES.index(r["first_stage"]))


FIRST_STAGES = ("joint", "classwise")
FIRST_STAGE_WORDS = {"joint": "joint ridge regression (one model for every class, `--first-stage joint`)",
                     "classwise": "class-wise logistic regression (one model per class, `--first-stage classwise`)"}
ALPHAS = ("0.05", "0.1", "0.2")


def _called(m, alpha):
    n, f = m.get(f"bayes_rank@{alpha}"), m.get(f"bayes_fdp@{alpha}")
    oracle = m.get(f"oracle_rank@{alpha}")
    tail = "" if oracle is None else f" / {oracle}"
    if n is None:
        return "-"
    if f is None:
        low = m.get(f"bayes_min_fdr@{alpha}")
        return f"0 / - ({'-' if low is None else f'min {low:.2f}'}){tail}"
    return f"{n} / {f:.3f}{tail}"


def _crossfitted(r, alpha):
    """The cell of mLPR-auto's cutoff with the map fit() built by cross-fitting (``fdr_crossfitted``)."""
    c = r.get("fdr_crossfitted", {}).get(alpha)
    return "-" if c is None else _called(_method_cells(c, alpha), alpha)


def _method_cells(c, alpha):
    """A ``fdr_crossfitted`` cell under the keys of a method row (``bayes_rank@alpha``, ...)."""
    return {f"bayes_rank@{alpha}": c["called"], f"bayes_fdp@{alpha}": c["fdp"],
            f"bayes_min_fdr@{alpha}": c["min_fdr"], f"oracle_rank@{alpha}": c["oracle"]}


def _as_auto(results):
    """The runs with mLPR-auto's cutoff cells replaced by those of the cross-fitted map."""
    out = []
    for r in results:
        if "fdr_crossfitted" not in r:
            continue
        m = dict(r["methods"]["mLPR-auto-HierRank"])
        for alpha, c in r["fdr_crossfitted"].items():
            m.update(_method_cells(c, alpha))
        out.append({**r, "methods": {**r["methods"], "mLPR-auto-HierRank": m}})
    return out


def _count(cells):
    return f"{len(cells)} cell{'s' * (len(cells) != 1)}" + (f" ({'; '.join(cells)})" if cells else "")


def _weak(results, min_oracle=20):
    """(data set, first stage, alpha) where mLPR-auto calls fewer than half the oracle's events."""
    out = []
    for r in results:
        m = r["methods"]["mLPR-auto-HierRank"]
        for alpha in ALPHAS:
            o, n = m.get(f"oracle_rank@{alpha}"), m.get(f"bayes_rank@{alpha}")
            if o is not None and o >= min_oracle and n < o / 2:
                out.append(f"{r['dataset']} ({r['first_stage']}) at {alpha}: {n} of the oracle's {o}")
    return out


def _corrections(result):
    """Names of the classic-correction families in a result (``iso-tpr``, ``platt-mcm``, ...)."""
    return sorted({k.rsplit("-", 1)[0] for k in result["methods"]
                   if k.startswith(("iso-", "platt-")) and k.endswith("-NaiveSort")})


def _correction_by(result, metric):
    """The correction with the largest ``metric``, ties to the first name in sorted order, and its
    numbers (None, None without corrections or when a result does not record ``metric``)."""
    fams = _corrections(result)
    if not fams or any(metric not in result["methods"][f"{f}-NaiveSort"] for f in fams):
        return None, None
    best = max(fams, key=lambda f: result["methods"][f"{f}-NaiveSort"][metric])
    return best, result["methods"][f"{best}-NaiveSort"]


def _best_correction(result):
    """The best correction on the test rows: the oracle's pick, the strongest baseline."""
    return _correction_by(result, "auprc")


def _chosen_correction(result):
    """The correction a user without test labels would pick: the best validation AU(PRC) (None in
    results made before ``valid_auprc`` was recorded)."""
    return _correction_by(result, "valid_auprc")


def _summary(label, gaps, spreads=None):
    """One line: mean, worst and best of the gaps; with the bootstrap (``spreads``: per run the standard
    error and 95% interval of the gap, or None) the mean's standard error (runs independent) and how many
    runs' intervals lie wholly below or above 0."""
    line = (f"mLPR-auto - {label} over {len(gaps)} data sets: mean {sum(gaps) / len(gaps):+.2f} "
            f"points, worst {min(gaps):+.2f}, best {max(gaps):+.2f}.")
    if spreads and all(sp is not None for sp in spreads):
        se = sum(sp[0] ** 2 for sp in spreads) ** 0.5 / len(spreads)
        below = sum(sp[2] < 0 for sp in spreads)
        above = sum(sp[1] > 0 for sp in spreads)
        line += (f" Bootstrap: standard error of the mean {se:.2f}; 95% interval of the gap wholly below 0 on "
                 f"{below} runs, wholly above 0 on {above}.")
    return line


def _gap_spread(method):
    """(standard error, low, high) of mLPR-auto-HierRank minus ``method`` in points, from the paired bootstrap
    that ``run_benchmark`` records as ``method - reference`` (None in results made without it)."""
    if "auprc_diff_se" not in method:
        return None
    return 100 * method["auprc_diff_se"], -100 * method["auprc_diff_high"], -100 * method["auprc_diff_low"]


def _bootstrap_note(results):
    """The sentence that explains the ``± x`` of the leaderboard (empty when the results lack the bootstrap)."""
    counts = {r.get("bootstrap", {}).get("resamples") for r in results}
    if len(counts) != 1 or not next(iter(counts)):
        return ""
    return (f"*± x*: the standard error of the gap, from {next(iter(counts))} bootstrap resamples of the test "
            "rows (objects drawn with replacement, every method scored on the same resamples, so the gap is "
            "paired; `hmcpgm.metrics.bootstrap_average_precision`). The best correction is picked on the same "
            "test rows, so its gap is biased against mLPR-auto. ")


def _gap_cell(gap, spread):
    return f"{gap:+.2f}" if spread is None else f"{gap:+.2f} ± {spread[0]:.2f}"


def leaderboard_lines(results, stages):
    """The leaderboard: mLPR-auto against the best classic correction per run (markdown lines).

    Two baselines per run: the best correction on the test rows (an oracle's pick, the strongest
    baseline) and, when the results record validation AU(PRC), the correction a user would pick
    on the validation rows.
    """
    lines = []
    for stage in stages:
        rows = [r for r in results if r["first_stage"] == stage and _corrections(r)]
        if not rows:
            continue
        with_valid = all(_chosen_correction(r)[0] is not None for r in rows)
        head = ["data set", "Raw", "best correction", "its AU(PRC)", "mLPR-auto", "auto - best",
                *(["chosen on valid", "its AU(PRC)", "auto - chosen"] if with_valid else []),
                "P@R0.1 auto / best", "P@R0.2 auto / best", "max-F1 auto / best", "fit s auto / best"]
        lines += [f"### {stage} first stage", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        gaps, chosen_gaps, spreads, chosen_spreads, valid_gaps = [], [], [], [], []
        for r in rows:
            m = r["methods"]
            auto = m["mLPR-auto-HierRank"]
            name, best = _best_correction(r)
            gap = 100 * (auto["auprc"] - best["auprc"])
            gaps.append(gap)
            spreads.append(_gap_spread(best))
            fit = r.get("fit_seconds", {})
            cells = [r["dataset"], _pct(m["Raw-HierRank"]["auprc"]), name, _pct(best["auprc"]),
                     _pct(auto["auprc"]), _gap_cell(gap, spreads[-1])]
            if with_valid:
                chosen, picked = _chosen_correction(r)
                chosen_gaps.append(100 * (auto["auprc"] - picked["auprc"]))
                valid_gaps.append(100 * (auto["valid_auprc"] - picked["valid_auprc"]))  # the oracle's pick there
                chosen_spreads.append(_gap_spread(picked))
                cells += [chosen, _pct(picked["auprc"]), _gap_cell(chosen_gaps[-1], chosen_spreads[-1])]
            for key in ("precision@recall0.1", "precision@recall0.2", "f1_max_f1_cutoff"):
                cells.append(f"{_pct(auto.get(key))} / {_pct(best.get(key))}")
            cells.append(f"{fit.get('mLPR-auto', float('nan')):.1f} / {fit.get(name, float('nan')):.1f}")
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", _summary("best correction", gaps, spreads)]
        if with_valid:
            lines += ["", _summary("the correction chosen on the validation rows", chosen_gaps, chosen_spreads)]
            lines += ["", "The same comparison on the validation rows (every method scored on them, the best "
                      "correction picked on them; no bootstrap): " + _summary("best correction", valid_gaps)]
        lines += [""]
    return lines


def exact_vs_loopy_lines(results):
    """mLPR-full answered exactly and by loopy BP on the DAG runs (markdown lines; none when no run has both)."""
    runs = [r for r in results if "full_exact_vs_loopy" in r]
    if not runs:
        return []
    lines = ["## mLPR-full on the DAGs: exact or loopy?", "",
             "The paper's full model on the test rows, its mLPRs answered by `engine=\"auto\"` (exact) and by "
             "loopy BP (approximate on these DAGs), HierRank AU(PRC) (%); the paper's indpt beside; the largest "
             "and mean absolute difference between the two answers over the test mLPRs (all classes); seconds "
             "of each engine on the validation and test rows.", "",
             "| data set | first stage | exact engine | full, exact | full, loopy | indpt | max abs diff "
             "| mean abs diff | seconds exact / loopy |",
             "|---|---|---|---|---|---|---|---|---|"]
    lift, below = [], []
    for r in runs:
        g, m = r["full_exact_vs_loopy"], r["methods"]
        exact, loopy = m["mLPR-full-HierRank"]["auprc"], m["mLPR-full-loopy-HierRank"]["auprc"]
        indpt = m.get("mLPR-indpt-HierRank", {}).get("auprc")
        lift.append(100 * (exact - loopy))
        if indpt is not None:
            below.append(100 * (indpt - exact))
        lines.append(f"| {r['dataset']} | {r['first_stage']} | {g['exact_engine']} | {_pct(exact)} | {_pct(loopy)} "
                     f"| {_pct(indpt)} | {g['max_abs_diff']:.3g} | {g['mean_abs_diff']:.3g} "
                     f"| {g['seconds_exact']:.0f} / {g['seconds_loopy']:.0f} |")
    lines += ["", f"Exact minus loopy over {len(lift)} runs: mean {sum(lift) / len(lift):+.2f} points "
                  f"(from {min(lift):+.2f} to {max(lift):+.2f})"
              + (f"; indpt minus exact full: mean {sum(below) / len(below):+.2f} points "
                 f"(from {min(below):+.2f} to {max(below):+.2f})" if below else "") + ".", ""]
    return lines


def cafa_lines(results):
    """CAFA's protein-centric metrics on the GO runs (markdown lines; none when no run has them)."""
    runs = [r for r in results if "fmax" in r["methods"].get("mLPR-auto-HierRank", {})]
    if not runs:
        return []
    lines = ["## Gene Ontology: CAFA's metrics", "",
             "Protein-centric Fmax, Smin and weighted Fmax (CAFA's conventions, `hmcpgm.metrics.cafa_metrics`, "
             "equal to the `cafaeval` package's; information accretion from the training labels; values "
             "propagated to ancestors by max; every class) of the test rows, for mLPR-auto and the best "
             "classic correction by AU(PRC). Smin: lower is better.", "",
             "| data set | first stage | method | Fmax | Smin | weighted Fmax |", "|---|---|---|---|---|---|"]
    for r in runs:
        name, _ = _best_correction(r)
        for fam, key in (("mLPR-auto", "mLPR-auto-HierRank"), (name, f"{name}-NaiveSort")):
            m = r["methods"].get(key, {})
            if "fmax" in m:
                lines.append(f"| {r['dataset']} | {r['first_stage']} | {fam} | {m['fmax']:.3f} | "
                             f"{m['smin']:.2f} | {m['weighted_fmax']:.3f} |")
    return lines + [""]


def leaderboard_figure(results, path):
    """AU(PRC) of each second stage minus the best classic correction's, per run (docs/img/leaderboard.png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [r for r in results if _corrections(r)]
    if not runs:
        return
    fig, ax = plt.subplots(figsize=(10, 4.8))
    labels = [f"{r['dataset']} ({r['first_stage']})" for r in runs]
    x = range(len(runs))
    styles = {"mLPR-auto": ("o", "C3"), "mLPR-indpt": ("s", "C0"), "Raw": ("x", "0.4")}
    for fam, (marker, color) in styles.items():
        ys = [100 * (r["methods"][f"{fam}-HierRank"]["auprc"] - _best_correction(r)[1]["auprc"]) for r in runs]
        ax.scatter(x, ys, marker=marker, color=color, label=f"{fam} + HierRank", zorder=3)
    for prefix, marker in (("iso-", "_"), ("platt-", "|")):
        ys = [[100 * (r["methods"][f"{f}-NaiveSort"]["auprc"] - _best_correction(r)[1]["auprc"])
               for f in _corrections(r) if f.startswith(prefix)] for r in runs]
        for i, col in enumerate(ys):
            ax.scatter([i] * len(col), col, marker=marker, color="0.6", s=60,
                       label=f"{prefix[:-1]}-calibrated corrections" if i == 0 else None)
    ax.axhline(0, color="black", lw=0.8)
    ax.axhline(-0.1, color="black", lw=0.5, ls=":")
    ax.set_xticks(list(x), labels, fontsize=7, rotation=45, ha="right")
    ax.set_ylim(bottom=max(ax.get_ylim()[0], -3))
    ax.set_ylabel("AU(PRC) minus the best correction's (points)")
    ax.set_title("Second stages on the test rows: each run's best classic correction at 0 (dotted: -0.1)",
                 fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def second_stage_page(results, command, stages):
    """docs/second_stage.md: "Which second stage?", the leaderboard with every method of every run."""
    lines = [
        "# Which second stage?",
        "",
        "<!-- GENERATED by bench/benchmarks_table.py: do not edit by hand. -->",
        "",
        "The same first-stage scores (out of fold on the training rows) go through every second stage: "
        "the default `MLPR()` ranked by HierRank (*mLPR-auto*), the paper's fixed model per version, and "
        "the classic corrections of `hmcpgm.corrections` after per-class calibration fitted on the "
        "training rows (`iso-` isotonic, `platt-` Platt scaling): `flat` (no correction), `htd` "
        "(HTD-DAG), `gpav` (the exact isotonic regression on the DAG), `tpr` (TPR-DAG threshold-free, "
        "HTD top-down), `iso_tpr` (the same with GPAV top-down: ISO-TPR), `descens` (TPR-DAG over "
        "descendants), `and` / `or` (Obozinski), `mcm` (C-HMCNN's max constraint, = Obozinski max); "
        "corrections are ranked by their values (NaiveSort, ancestors first on ties). Every number is on "
        "the test rows over the evaluated classes: micro AU(PRC), precision at recall 0.1 and 0.2 (the "
        "high-precision start of the PR curve), F1 at the max-F1 cutoff chosen on the validation rows, "
        "and the seconds to fit the second stage (mLPR: `fit` on the training rows, for mLPR-auto plus "
        "`fit_recalibration` on the validation rows, numba's first compile included in "
        "a process's first run; corrections: the per-class calibration's fit plus calibrating and correcting the "
        "validation and test rows).",
        "",
        "Regenerate with (from the repository root):",
        "",
        "```",
        command,
        "```",
        "",
    ]
    if any(_corrections(r) for r in results):
        lines += ["![AU(PRC) minus the best correction, per run](img/leaderboard.png)", ""]
    lines += leaderboard_lines(results, stages)
    for r in results:
        if not _corrections(r):
            continue
        fit = r.get("fit_seconds", {})
        auto = r["methods"]["mLPR-auto-HierRank"]
        boot = "auprc_diff_se" in auto
        lines += [f"## {r['dataset']}, {r['first_stage']} first stage", "",
                  "| second stage | AU(PRC) |" + (" minus mLPR-auto ± SE |" if boot else "")
                  + " P@R0.1 | P@R0.2 | max-F1 | fit s |", "|---|---|" + ("---|" if boot else "") + "---|---|---|---|"]
        rows = []
        for method, m in r["methods"].items():
            fam, ranker = method.rsplit("-", 1)
            if fam.startswith("mLPR") and ranker != "HierRank" or fam == "Raw" and ranker != "HierRank":
                continue
            diff = (f" {100 * (m['auprc'] - auto['auprc']):+.2f} ± {100 * m['auprc_diff_se']:.2f} |"
                    if boot else "")
            rows.append((m["auprc"], f"| {fam if fam != 'Raw' else 'Raw (HierRank)'} | {_pct(m['auprc'])} |{diff} "
                                     f"{_pct(m.get('precision@recall0.1'))} | {_pct(m.get('precision@recall0.2'))} | "
                                     f"{_pct(m['f1_max_f1_cutoff'])} | "
                                     f"{fit.get(fam, float('nan')):.1f} |"))
        lines += [row for _, row in sorted(rows, key=lambda t: -t[0])] + [""]
    return "\n".join(lines)


def _fdr_breaches(results, min_called=50, slack=0.05):
    out = []
    for r in results:
        m = r["methods"]["mLPR-auto-HierRank"]
        for alpha in ALPHAS:
            n, f = m[f"bayes_rank@{alpha}"], m[f"bayes_fdp@{alpha}"]
            if n >= min_called and f is not None and f > float(alpha) + slack:
                out.append(f"{r['dataset']} ({r['first_stage']}) at {alpha}: {n} called, FDP {f:.3f}")
    return out


def fdr_figure(results, path):
    """Estimated against realised FDR over the first 1,000 ranks of mLPR-auto-HierRank, one panel per data set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    runs = [r for r in results if "fdr_curve" in r]
    names = [n for n in ORDER if any(r["dataset"] == n for r in runs)]
    if not names:
        return
    cols = 4
    nrows = -(-len(names) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(12, 3.1 * nrows), squeeze=False, sharex=True, sharey=True)
    colors = {"joint": "C0", "classwise": "C3"}
    for ax, name in zip(axes.ravel(), names):
        for r in (r for r in runs if r["dataset"] == name):
            c = r["fdr_curve"]
            keep = [i for i, n in enumerate(c["rank"]) if 20 <= n <= 1000]
            col = colors.get(r["first_stage"], "0.3")
            ax.plot([c["calibrated"][i] for i in keep], [c["realised"][i] for i in keep], color=col)
            ax.plot([c["mlpr"][i] for i in keep], [c["realised"][i] for i in keep], color=col, ls=":")
            if "cross-fitted" in c:
                ax.plot([c["cross-fitted"][i] for i in keep], [c["realised"][i] for i in keep], color=col, ls="--")
        ax.plot([0, 0.3], [0, 0.3], color="black", lw=0.8)
        ax.fill_between([0, 0.3], [0, 0.3], [0.05, 0.35], color="0.9", zorder=0)
        ax.set(xlim=(0, 0.3), ylim=(0, 0.6), title=name)
        ax.title.set_fontsize(9)
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("realised FDP (test rows)", fontsize=8)
    for ax in axes[-1, :]:
        ax.set_xlabel("estimated FDR: mean(1 - p)", fontsize=8)
    handles = [Line2D([], [], color=colors["joint"], label="joint first stage"),
               Line2D([], [], color=colors["classwise"], label="class-wise first stage"),
               Line2D([], [], color="0.3", label="recalibrated on the validation rows (what the cutoff uses)"),
               Line2D([], [], color="0.3", ls="--", label="recalibrated by cross-fitting (no held-out rows)"),
               Line2D([], [], color="0.3", ls=":", label="mLPRs before recalibration"),
               Line2D([], [], color="black", lw=0.8, label="estimated = realised (grey: up to 0.05 above)")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle("mLPR-auto-HierRank: estimated against realised FDR over the first 20 to 1,000 ranks", fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def reliability_figure(results, path):
    """Observed rate against mean recalibrated mLPR of mLPR-auto, per data set (docs/img/reliability_real.png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True)
    for ax, stage in zip(axes, FIRST_STAGES):
        for r in (r for r in results if r["first_stage"] == stage and "reliability" in r):
            t = r["reliability"]["calibrated"]
            keep = [i for i, n in enumerate(t["events"]) if n >= 100]
            ax.plot([t["mean_p"][i] for i in keep], [t["observed"][i] for i in keep], marker="o", ms=3,
                    label=r["dataset"])
        ax.plot([0, 1], [0, 1], color="black", lw=0.8)
        ax.set(xlim=(0, 1), ylim=(0, 1), title=f"{stage} first stage", xlabel="mean recalibrated mLPR in the bin")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left")
    axes[0].set_ylabel("observed rate of positives (test rows)")
    fig.suptitle("mLPR-auto: reliability on the test rows (ten equal-width bins, bins of >= 100 events)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _gap(result, name):
    g = _worst_gap(result["reliability"][name])
    return "-" if g is None else f"{g:+.3f}"


def _worst_gap(table, min_events=100):
    """observed - predicted in the bin (of at least ``min_events``) where they differ most."""
    gaps = [o - p for p, o, n in zip(table["mean_p"], table["observed"], table["events"]) if n >= min_events]
    return max(gaps, key=abs) if gaps else None


def render(results, command, missing, versions):
    """The markdown page."""
    stages = [s for s in FIRST_STAGES if any(r["first_stage"] == s for r in results)]
    lines = [
        "# Benchmarks",
        "",
        "<!-- GENERATED by bench/benchmarks_table.py: do not edit by hand. -->",
        "",
        "Real hierarchical multi-label benchmarks (the Clus-HMC ARFF files as C-HMCNN redistributes them, "
        "https://github.com/EGiunchiglia/C-HMCNN, folder `HMC_data`; here in `shared/data/hmc/` beside the "
        "repository) run through `hmcpgm benchmark` "
        "(`hmcpgm.applications.run_benchmark`), with two first stages: "
        + "; ".join(FIRST_STAGE_WORDS[s] for s in stages) + ". "
        "First-stage scores are out of fold on the training rows; the second stage is fitted "
        "on them; cutoffs are chosen on the validation rows; every number is measured on the test "
        "rows over the evaluated classes (the artificial root and the three GO roots are left out).",
        "",
        "* **mLPR-auto** is the default `MLPR()`: version (indpt, nbh or full), evidence "
        "exponent and score model per class chosen by cross-fitting on the training rows only, "
        "the values averaged with the neighbour stack's posteriors at a weight also chosen by "
        "cross-fitting (`stack=\"auto\"`; docs/concepts.md, \"Stacking the neighbours' scores?\"), "
        "and its Bayesian FDR cutoff on the recalibrated values (`calibrated_proba`).",
        "* **mLPR-indpt / nbh / full** are the paper's model: kernel LPR score models, evidence "
        "exponent 1, no recalibration (`MLPR(version=..., score_model=\"lpr\", tempering=None, "
        "recalibrate=False)`).",
        "",
        "This page was generated by running, from the repository root:",
        "",
        "```",
        command,
        "```",
        "",
        "Every number below is also in [`benchmarks.json`](benchmarks.json), beside this page.",
        f"Machine: {platform.machine()}, Python {platform.python_version()}; "
        "times are wall-clock seconds on a shared 2-core machine.",
        "",
        "## Coverage",
        "",
    ]
    seen = []
    for r in results:
        if r["dataset"] not in seen:
            seen.append(r["dataset"])
            lines.append(f"* **{r['dataset']}**: {r['validation']}.")
    for name, reason in missing.items():
        if "/" not in name:
            lines.append(f"* **{name}**: not on this page: {reason}")
    lines += [
        "",
        "## The leaderboard: the default against the classic corrections",
        "",
        "Micro AU(PRC) (%) on the test rows: mLPR-auto (HierRank) against the best of the classic "
        "corrections after per-class isotonic or Platt calibration (the best one per run, chosen on the "
        "test rows: the strongest baseline) and, beside it, the correction a user would pick without the test "
        "labels: the one with the best AU(PRC) on the validation rows. " + _bootstrap_note(results) +
        "Every method of every run: [Which second stage?](second_stage.md).",
        "",
        *leaderboard_lines(results, stages),
        *cafa_lines(results),
        *exact_vs_loopy_lines(results),
        "## The default second stage against the raw scores",
        "",
        "Micro AU(PRC) (%) of HierRank rankings on the test rows. *chosen*: the version mLPR-auto "
        "picked on the training rows and its evidence exponent *a*. *Published* is C-HMCNN (mean of "
        "10 seeds, its README) and, where known, Clus-HMC / Clus-Ens (Wehrmann et al. 2018): whole "
        "pipelines with their own first stage.",
        "",
    ]
    for stage in stages:
        rows = [r for r in results if r["first_stage"] == stage]
        head = ["data set", "Raw", "mLPR-auto", "auto - Raw", "chosen (a)"]
        head += [f"paper {v}" for v in versions] + ["full engine", "published", "seconds"]
        lines += [f"### {stage} first stage", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        diffs = []
        for r in rows:
            m = r["methods"]
            raw, auto = m["Raw-HierRank"]["auprc"], m["mLPR-auto-HierRank"]["auprc"]
            diffs.append(100 * (auto - raw))
            st = r["second_stage"]
            eng = r["engine"].get("full", {})
            cells = [r["dataset"], _pct(raw), _pct(auto), f"{100 * (auto - raw):+.2f}",
                     f"{st['version']} ({'/'.join(f'{a:.2f}' for a in st['tempering'])})"
                     + (f", pool {st['pool_weight']:g}" if st.get("pool_weight", 1.0) < 1 else "")
                     + (f", stack {st['stack_weight']:g}" if st.get("stack_weight") else "")]
            cells += [_pct(m[f"mLPR-{v}-HierRank"]["auprc"]) for v in versions]
            cells += [f"{eng.get('engine', '-')} ({'exact' if eng.get('exact') else 'approximate'})" if eng else "-",
                      ", ".join(f"{k} {_pct(v)}" for k, v in r["published"].items()) or "none",
                      f"{r['seconds']['total']:.0f}"]
            lines.append("| " + " | ".join(cells) + " |")
        if diffs:
            lines += ["", f"mLPR-auto - Raw over {len(diffs)} data sets: mean {sum(diffs) / len(diffs):+.2f} "
                          f"points, worst {min(diffs):+.2f}, best {max(diffs):+.2f}.", ""]
        reasons = {}
        for key, reason in missing.items():
            if key.endswith(f"/{stage}"):
                reasons.setdefault(reason, []).append(f"**{key.split('/')[0]}**")
        for reason, names in reasons.items():
            lines += [f"Not run with this first stage: {', '.join(names)}: {reason}.", ""]
    lines += [
        "## The Bayesian FDR cutoff",
        "",
        "Events called positive on the test rows (evaluated classes) by the Bayesian cutoff "
        "(the longest prefix of the HierRank ranking whose mean of 1 - p is at most alpha), their "
        "realised false discovery proportion and the *oracle*'s count, as *called / FDP / oracle*: the "
        "oracle is the longest prefix of the same ranking whose realised FDP on the test labels is at "
        "most alpha (power: a good cutoff calls a large share of it). When nothing is called, *min* is "
        "the smallest estimated FDR of any prefix (what the cutoff says it can promise). mLPR-auto "
        "averages its recalibrated mLPRs, the map refitted on the validation rows "
        "(`MLPR.fit_recalibration`, `hmcpgm fit --holdout`: the final model's own mLPRs against labels it "
        "was not fitted on); *mLPR-auto, cross-fitted map* is the same ranking cut with the map `fit` builds "
        "from cross-fitted mLPRs, what a user without held-out rows gets. The paper's versions average their "
        "mLPRs as they are.",
        "",
    ]
    for stage in stages:
        rows = [r for r in results if r["first_stage"] == stage]
        head = ["data set", "method"] + [f"alpha {a}" for a in ALPHAS]
        lines += [f"### {stage} first stage", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in rows:
            for fam in ["mLPR-auto"] + [f"mLPR-{v}" for v in versions]:
                m = r["methods"][f"{fam}-HierRank"]
                lines.append("| " + " | ".join([r["dataset"], fam] + [_called(m, a) for a in ALPHAS]) + " |")
                if fam == "mLPR-auto" and "fdr_crossfitted" in r:
                    lines.append("| " + " | ".join([r["dataset"], "mLPR-auto, cross-fitted map"]
                                                   + [_crossfitted(r, a) for a in ALPHAS]) + " |")
        lines.append("")
    breaches = _fdr_breaches(results)
    weak = _weak(results)
    lines += [
        "mLPR-auto, wherever its cutoff calls at least 50 events, realises an FDP above alpha + 0.05 in: "
        + ("; ".join(breaches) if breaches else "none of the runs above") + ".",
        "",
        "Wherever the oracle calls at least 20 events, mLPR-auto calls fewer than half as many in: "
        + ("; ".join(weak) if weak else "none of the runs above") + ".",
        "",
        "With the cross-fitted map instead: an FDP above alpha + 0.05 (at least 50 called) in "
        + (_count(_fdr_breaches(_as_auto(results))) if any("fdr_crossfitted" in r for r in results) else "-")
        + "; fewer than half the oracle's events in "
        + (_count(_weak(_as_auto(results))) if any("fdr_crossfitted" in r for r in results) else "-") + ".",
        "",
        "![Estimated against realised FDR on the test rows](img/fdr_real.png)",
        "",
        "*Estimated FDR (mean of 1 - p over the top r events of mLPR-auto-HierRank, r from 20 to 1,000) "
        "against the realised proportion of negatives among them, on the test rows, one panel per data "
        "set; solid: the mLPRs recalibrated on the validation rows, which the cutoff uses; dashed: "
        "recalibrated by cross-fitting; dotted: the mLPRs before recalibration. "
        "Made by this script from `benchmarks.json`.*",
        "",
        "Reliability of mLPR-auto on the test rows: over the ten equal-width bins holding at least 100 "
        "events, the largest gap between the observed rate of positives and the mean probability "
        "(positive: more positives than predicted, the conservative side), for the recalibrated mLPRs "
        "and for the mLPRs before recalibration. The map is fitted for the top of the ranking, where "
        "the cutoffs fall; it is not always closer in the middle bins.",
        "",
        "| data set | first stage | worst gap, recalibrated | worst gap, before |",
        "|---|---|---|---|",
        *[f"| {r['dataset']} | {r['first_stage']} | {_gap(r, 'calibrated')} | {_gap(r, 'mlpr')} |"
          for r in results if "reliability" in r],
        "",
        "![Reliability of the recalibrated mLPRs on the test rows](img/reliability_real.png)",
        "",
        "## Which version when",
        "",
        "* **indpt** (each class's own LPR with its prior) when one first-stage model scores all "
        "classes well from shared features and the hierarchy adds little (the joint first stage on "
        "the FunCat and GO sets): the other versions can only add what the neighbours' scores carry, "
        "and the automatic choice keeps indpt unless another version is better on the training rows "
        "by more than a bootstrap standard error.",
        "* **nbh** and **full** keep each class's own evidence at indpt's strength and add the other "
        "classes' evidence at a fitted strength `a` (`own_tempering_` and `tempering_`): with "
        "class-wise first stages, whose classifiers err more independently, the neighbours' scores "
        "add ranking power and `a` comes out between about 0.05 and 0.7; on data drawn from the "
        "network (the paper's synthetic data, `hmcpgm demo`) full is chosen with `a` near 1.",
        "* **The max constraint** (`consistency_ == \"max\"`) is chosen where lifting each class to "
        "its most confident descendant ranks better on the training rows than HierRank's pooling "
        "(the image-annotation set); elsewhere HierRank pools.",
        "* **The pool** (`pool_weight_ < 1`) averages the version's mLPRs with each class's own "
        "isotonic posterior where that ranks better on the cross-fitted training rows; the column "
        "*chosen (a)* above gives each run's weight (none shown: the mLPRs alone).",
        "* **The stack** (`stack_weight_`) averages the values after the pool with a penalised "
        "logistic regression per class on its own and its parents' and children's calibrated "
        "scores, which the network reads only through their labels, at the weight among 0, 0.25, 0.5, "
        "0.75 and 1 whose averaged cross-fitted values rank best; *chosen (a)* shows it (none shown: no "
        "stack).",
        "* Let `version=\"auto\"` decide; its `cv_results_` shows the cross-validation table it "
        "decided on.",
        "",
        "## Per data set",
        "",
        "AU(PRC) and F1 in percent (F1 at the max-F1 cutoff chosen on the validation rows); "
        "*violations* counts (object, ancestor, descendant) pairs that the test ranking puts "
        "out of order (HierRank makes none by construction; NaiveSort of Raw scores does).",
        "",
    ]
    for r in results:
        h = r["hierarchy"]
        lines += [
            f"### {r['dataset']}, {r['first_stage']} first stage",
            "",
            f"{h['kind']} of {h['classes']} classes ({h['evaluated_classes']} evaluated, "
            f"{h['multi_parent_classes']} with several parents, {h['edges']} edges). "
            "Seconds: " + ", ".join(f"{k} {v}" for k, v in r["seconds"].items()) + ".",
            "",
            "| method | AU(PRC) | F1 | violations |",
            "|---|---|---|---|",
        ]
        for method, m in r["methods"].items():
            lines.append(f"| {method} | {_pct(m['auprc'])} | {_pct(m['f1_max_f1_cutoff'])} | {m['violations']} |")
        if r.get("warnings"):
            lines += ["", "Warnings raised during the run:", ""]
            lines += [f"* `{w}`" for w in r["warnings"]]
        lines.append("")
    return "\n".join(lines)


def _write(path, text):
    """Replace ``path`` with ``text`` all at once (hmcpgm's safe writer: a kill leaves the old file)."""
    from hmcpgm._atomic import atomic_write

    with atomic_write(path) as fh:
        fh.write(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", help="comma-separated data set names (default: all found)")
    parser.add_argument("--versions", default="indpt,nbh,full", help="comma-separated mLPR versions")
    parser.add_argument("--first-stages", default="joint,classwise",
                        help="comma-separated first stages (default joint,classwise)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--out-dir", type=Path, default=DOCS,
                        help="where to write benchmarks.md and benchmarks.json (default docs/)")
    parser.add_argument("--update", action="store_true",
                        help="keep results of other runs (data set, first stage) already in benchmarks.json")
    parser.add_argument("--missing", action="append", default=[], metavar="NAME[/STAGE]=REASON",
                        help="state why a data set (or a data set with one first stage) is not on the page "
                             "(repeatable)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite benchmarks.md and the figure from benchmarks.json without running anything")
    args = parser.parse_args(argv)

    available = find_datasets(args.data_dir)
    if not available and not args.render_only:
        parser.error(f"no data sets (*.train.arff with a test file) in {args.data_dir}; pass --data-dir")
    names = args.datasets.split(",") if args.datasets else list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        parser.error(f"unknown data sets {unknown}; found {list(available)}")
    stages = args.first_stages.split(",")
    if not set(stages) <= set(FIRST_STAGES):
        parser.error(f"--first-stages must name {FIRST_STAGES}, got {args.first_stages!r}")
    versions = tuple(args.versions.split(","))
    out_md, out_json = args.out_dir / "benchmarks.md", args.out_dir / "benchmarks.json"
    out_png = args.out_dir / "img" / "fdr_real.png"
    out_png.parent.mkdir(parents=True, exist_ok=True)

    def write(results):
        merged_missing = dict(m.split("=", 1) for m in args.missing)
        for n in available:
            if n not in {r["dataset"] for r in results} and n not in merged_missing:
                merged_missing[n] = NOT_RUN
        commands = sorted({r["command"] for r in results})
        # each page complete or untouched: a long run rewrites them after every data set
        _write(out_json, json.dumps({"versions": list(versions), "results": results}, indent=2) + "\n")
        _write(out_md, render(results, "\n".join(commands), merged_missing, versions))
        fdr_figure(results, out_png)
        reliability_figure(results, out_png.parent / "reliability_real.png")
        leaderboard_figure(results, out_png.parent / "leaderboard.png")
        _write(args.out_dir / "second_stage.md",
            second_stage_page(results, "\n".join(commands), [s for s in FIRST_STAGES if s in {
                r["first_stage"] for r in results}]))

    if args.render_only:
        stored = json.loads(out_json.read_text())
        versions = tuple(stored["versions"])
        write(stored["results"])
        print(f"wrote {out_md} and {out_png} from {out_json}")
        return
    command = "python bench/benchmarks_table.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    previous = {}
    if args.update and out_json.is_file():
        previous = {(r["dataset"], r["first_stage"]): r for r in json.loads(out_json.read_text())["results"]}
    fresh = {}
    for name in names:
        for stage in stages:
            train, valid, test = available[name]
            print(f"[{time.strftime('%H:%M:%S')}] {name} ({stage}) ...", flush=True)
            r = run_one(name, train, valid, test, seed=args.seed, versions=versions, first_stage=stage,
                        progress=not args.quiet)
            r["command"] = command
            fresh[(name, stage)] = r
            m = r["methods"]
            print(f"  done in {r['seconds']['total']} s; AU(PRC) Raw {m['Raw-HierRank']['auprc']:.4f}, "
                  f"mLPR-auto {m['mLPR-auto-HierRank']['auprc']:.4f} ({r['second_stage']['version']})", flush=True)
            write(sorted({**previous, **fresh}.values(), key=_key))  # a long run leaves its finished runs behind
    print(f"wrote {out_md}, {out_json} and {out_png}")


if __name__ == "__main__":
    main()

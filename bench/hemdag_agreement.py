"""hmcpgm.corrections against HEMDAG's own R code, on random hierarchies (needs R).

Usage (from the repository root)::

    python bench/hemdag_agreement.py                        # R's installed HEMDAG: library(HEMDAG)
    python bench/hemdag_agreement.py --cases 200 --seed 2
    python bench/hemdag_agreement.py --hemdag-source ~/hemdag   # a checkout of HEMDAG's repository

It draws ``--cases`` random hierarchies with HEMDAG's single root ``"00"`` (half
trees, half DAGs whose classes have up to three parents), each with 2 to 11
objects whose values are uniform in [0, 1] (half the cases) or multiples of 0.2
(ties with each other and with the thresholds), in a column order that is not
topological, and with the root's column left out in a third of the cases (HEMDAG
then adds it, holding the largest value of the matrix; here the same column is
added before calling hmcpgm). For every case it runs, in one ``Rscript``
process, HEMDAG's ``htd``, ``gpav.over.examples`` (without and with per-class
weights), ``tpr.dag`` for every ``positive`` x ``bottomup`` x ``topdown`` and six
``(t, w)`` pairs, ``obozinski.max`` / ``and`` / ``or`` and
``scores.normalization`` (maxnorm, qnorm), and the same through
``hmcpgm.corrections``. Per function it prints how many cases agree to 1e-12 and,
where GPAV runs on a DAG (``gpav``, ISO-TPR), how many differ because hmcpgm's
exact isotonic regression has a lower squared error than HEMDAG's order-dependent
GPAV (checked against the same bottom-up values, HEMDAG's result being
hierarchy-consistent); any other difference is a disagreement, listed, and the
script exits with status 1. Calls on which HEMDAG itself raises an error are
counted apart: HEMDAG's ``obozinski.or`` fails when exactly one object has a
nonzero value on a class or its descendants (R drops the one-row matrix to a
vector; ``obozinski.and`` has the same code over the ancestors).

Conventions of HEMDAG's that the script follows (and reports in
docs/concepts.md): ``gpav``'s ``W`` is read in the column order of
``adj.upper.tri(g)`` (a topological order), not of the score matrix, so the
weights are passed in that order; HEMDAG's functions mishandle a matrix with one
row (R drops the matrix to a vector), so every case has at least two.

``--hemdag-source``: a folder with HEMDAG's ``R/`` and ``src/gpav.cpp``; every
``R/*.R`` file is sourced and ``gpav.cpp`` compiled with ``R CMD SHLIB``. R needs
the packages graph, RBGL, plyr and preprocessCore either way.
"""

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

BOTTOM_UP = ("threshold.free", "threshold", "weighted.threshold.free", "weighted.threshold", "tau")
TW = ((0.0, 0.0), (0.3, 0.0), (0.5, 0.5), (0.6, 0.8), (0.0, 0.4), (1.0, 1.0))

DRIVER = r"""
suppressMessages({library(graph); library(RBGL); library(plyr); library(preprocessCore)})
args <- commandArgs(trailingOnly=TRUE)
cases <- args[1]; source.dir <- if (length(args) > 1) args[2] else ""
if (source.dir == "") {
  suppressMessages(library(HEMDAG))
} else {
  for (f in sort(list.files(file.path(source.dir, "R"), pattern="[.]R$", full.names=TRUE))) source(f)
  dyn.load(file.path(cases, paste0("gpav", .Platform$dynlib.ext)))
}
normalised <- function(kind, S) {
  tryCatch(scores.normalization(kind, S),
           error=function(e) scores.normalization(c(maxnorm="MaxNorm", qnorm="Qnorm")[[kind]], S))
}
for (case in list.dirs(cases, recursive=FALSE)) {
  ed <- read.csv(file.path(case, "edges.csv"), colClasses="character")
  S <- as.matrix(read.csv(file.path(case, "S.csv"), row.names=1, check.names=FALSE))
  storage.mode(S) <- "double"
  g <- addEdge(ed$parent, ed$child, graphNEL(nodes=union(ed$parent, ed$child), edgemode="directed"))
  root <- root.node(g)
  Sr <- S  # gpav.over.examples needs the root's column; the others add it as below
  if (!(root %in% colnames(S))) {Sr <- cbind(rep(max(S), nrow(S)), S); colnames(Sr)[1] <- root}
  W <- unlist(read.csv(file.path(case, "W.csv"), check.names=FALSE)[1, ])
  tasks <- read.csv(file.path(case, "tasks.csv"), colClasses="character")
  for (i in seq_len(nrow(tasks))) {
    tk <- tasks[i, ]
    out <- tryCatch(switch(tk$method,
      htd=htd(S, g, root),
      gpav=gpav.over.examples(Sr, g, W=NULL),
      gpavw=gpav.over.examples(Sr, g, W=W[colnames(adj.upper.tri(g))]),
      tpr=suppressWarnings(tpr.dag(S, g, root, positive=tk$positive, bottomup=tk$bottomup, topdown=tk$topdown,
                                   t=as.numeric(tk$t), w=as.numeric(tk$w))),
      max=obozinski.max(S, g, root), and=obozinski.and(S, g, root), or=obozinski.or(S, g, root),
      maxnorm=normalised("maxnorm", S), qnorm=normalised("qnorm", S)),
      error=function(e) {cat(basename(case), tk$id, conditionMessage(e), "\n"); NULL})
    if (!is.null(out)) write.csv(out, file.path(case, paste0("out.", tk$id, ".csv")))
  }
}
"""


def tasks():
    """Every call the script makes per case: method and tpr.dag's arguments."""
    out = [{"method": m} for m in ("htd", "gpav", "gpavw", "max", "and", "or", "maxnorm", "qnorm")]
    for positive, bottomup, topdown in itertools.product(("children", "descendants"), BOTTOM_UP, ("htd", "gpav")):
        if not (bottomup == "tau" and positive == "children"):
            out += [{"method": "tpr", "positive": positive, "bottomup": bottomup, "topdown": topdown, "t": t, "w": w}
                    for t, w in TW]
    return [{"id": i, "positive": "", "bottomup": "", "topdown": "", "t": "", "w": "", **d} for i, d in enumerate(out)]


def write_cases(folder, n, seed):
    """``n`` random case folders (edges, values, weights, tasks) under ``folder``."""
    rng = np.random.default_rng(seed)
    for c in range(n):
        k = int(rng.integers(3, 25))
        names = ["00"] + [f"c{j}" for j in rng.permutation(np.arange(1, k))]
        edges = []
        for j in range(1, k):
            n_parents = 1 if c % 2 == 0 else int(rng.integers(1, 4))
            edges += [(names[p], names[j]) for p in sorted(rng.choice(j, size=min(n_parents, j), replace=False))]
        m = int(rng.integers(2, 12))
        values = rng.random((m, k)) if c % 4 < 2 else rng.integers(0, 6, size=(m, k)) / 5.0
        frame = pd.DataFrame(values, columns=names, index=[f"r{i}" for i in range(m)])
        columns = [x for x in rng.permutation(names) if c % 3 != 0 or x != "00"]
        d = folder / f"case{c:04d}"
        d.mkdir()
        pd.DataFrame(edges, columns=["parent", "child"]).to_csv(d / "edges.csv", index=False)
        frame[columns].to_csv(d / "S.csv", float_format="%.17g")
        pd.DataFrame([rng.uniform(0.5, 3.0, size=k)], columns=names).to_csv(d / "W.csv", index=False,
                                                                          float_format="%.17g")
        pd.DataFrame(tasks()).to_csv(d / "tasks.csv", index=False)


def with_root(S):
    """HEMDAG's artificial root: the column ``"00"`` holding the largest value of the matrix, when missing."""
    return S if "00" in S.columns else S.assign(**{"00": float(S.to_numpy().max())})


def hmcpgm_values(task, S, h, W):
    """The same call through hmcpgm.corrections."""
    from hmcpgm.corrections import gpav, htd, maxnorm, obozinski, qnorm, tpr_dag

    method = task["method"]
    if method in ("maxnorm", "qnorm"):
        return (maxnorm if method == "maxnorm" else qnorm)(S)
    S = with_root(S)
    if method == "htd":
        return htd(S, h)
    if method in ("gpav", "gpavw"):
        return gpav(S, h, weights=pd.Series(W) if method == "gpavw" else None)
    if method in ("max", "and", "or"):
        return obozinski(S, h, method=method)
    return tpr_dag(S, h, positive=task["positive"], bottomup=task["bottomup"].replace(".", "_"),
                   topdown=task["topdown"], t=float(task["t"]), w=float(task["w"]))


def isotonic_input(task, S, h):
    """What the isotonic step of ``task`` regresses: the values, or TPR-DAG's bottom-up values (hmcpgm's
    TPR-DAG with HTD agrees with HEMDAG's, so these are HEMDAG's too)."""
    from hmcpgm.corrections._inputs import matrix_in
    from hmcpgm.corrections._rules import tpr_bottom_up_rows

    S = with_root(S)
    if task["method"] != "tpr":
        return S
    x = tpr_bottom_up_rows(matrix_in(S, h), h, task["positive"], task["bottomup"].replace(".", "_"),
                           float(task["t"]), float(task["w"]))
    return pd.DataFrame(x.T, index=S.index, columns=list(h.classes))


def squared_error(values, target, weights):
    """Per object, the weighted squared distance of ``values`` to ``target`` (columns by name)."""
    return (weights * (values[list(target.columns)].to_numpy() - target.to_numpy()) ** 2).sum(axis=1)


def compare(folder):
    """Per function: [cases, agree, exact isotonic lower than HEMDAG's GPAV, disagree, missing]; and the list
    of disagreements."""
    from hmcpgm import Hierarchy

    table, bad = {}, []
    for d in sorted(folder.glob("case*")):
        edges = pd.read_csv(d / "edges.csv", dtype=str)
        S = pd.read_csv(d / "S.csv", index_col=0)
        W = pd.read_csv(d / "W.csv").iloc[0]
        h = Hierarchy.from_edges(list(zip(edges.parent, edges.child)))
        is_dag = any(len(h.parents(c)) > 1 for c in h.classes)
        for task in pd.read_csv(d / "tasks.csv", dtype=str, keep_default_na=False).to_dict("records"):
            key = task["method"] if task["method"] != "tpr" else "tpr.dag " + " ".join(
                (task["positive"], task["bottomup"], task["topdown"]))
            row = table.setdefault(key, [0, 0, 0, 0, 0])
            row[0] += 1
            out = d / f"out.{task['id']}.csv"
            if not out.exists():  # HEMDAG raised (printed by the driver)
                row[4] += 1
                continue
            theirs = pd.read_csv(out, index_col=0)
            ours = hmcpgm_values(task, S, h, W)[theirs.columns]
            gap = float(np.max(np.abs(ours.to_numpy() - theirs.to_numpy())))
            if gap <= 1e-12:
                row[1] += 1
                continue
            if is_dag and (task["method"] in ("gpav", "gpavw") or task["topdown"] == "gpav"):
                y = isotonic_input(task, S, h)
                w = W[list(y.columns)].to_numpy() if task["method"] == "gpavw" else 1.0
                loss_ours, loss_theirs = (squared_error(v, y, w) for v in (ours, theirs))
                consistent = all((theirs[c] <= theirs[p] + 1e-12).all() for p, c in h.edges)
                if consistent and np.all(loss_ours <= loss_theirs + 1e-10):
                    row[2] += 1
                    continue
            row[3] += 1
            bad.append((d.name, task, f"largest difference {gap:.3g}"))
    return table, bad


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hemdag-source", type=Path, default=None,
                        help="a folder with HEMDAG's R/ and src/gpav.cpp (default: R's installed HEMDAG)")
    parser.add_argument("--keep", type=Path, default=None, help="write the cases and HEMDAG's outputs here")
    args = parser.parse_args()
    if shutil.which("Rscript") is None:
        sys.exit("hemdag_agreement: Rscript not found (install R with the packages graph, RBGL, plyr, "
                 "preprocessCore and HEMDAG)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep if args.keep is not None else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if any(folder.glob("case*")):
            sys.exit(f"hemdag_agreement: {folder} already holds cases; give an empty or new folder")
        write_cases(folder, args.cases, args.seed)
        (folder / "driver.R").write_text(DRIVER)
        command = ["Rscript", str(folder / "driver.R"), str(folder)]
        if args.hemdag_source is not None:
            source = args.hemdag_source.expanduser().resolve()
            shutil.copy(source / "src" / "gpav.cpp", folder / "gpav.cpp")
            subprocess.run(["R", "CMD", "SHLIB", "gpav.cpp"], cwd=folder, check=True, capture_output=True)
            command.append(str(source))
        print(f"{args.cases} cases (seed {args.seed}); running HEMDAG in R ...", flush=True)
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode:
            sys.exit(f"hemdag_agreement: Rscript failed: {run.stderr.strip().splitlines()[-1:]}")
        table, bad = compare(folder)
    for line in run.stdout.splitlines():
        print("HEMDAG raised:", line.strip())
    print(f"\n{'function':<58} {'cases':>6} {'agree':>6} {'lower':>6} {'differ':>6} {'failed':>6}")
    for key, (n, agree, lower, differ, missing) in table.items():
        print(f"{key:<58} {n:>6} {agree:>6} {lower:>6} {differ:>6} {missing:>6}")
    print("\nagree: every value within 1e-12 of HEMDAG's; lower: on a DAG, hmcpgm's exact isotonic regression has "
          "a lower squared error than HEMDAG's GPAV; failed: HEMDAG raised an error (not counted as a disagreement)")
    for case, task, what in bad[:20]:
        print("DIFFERENT:", case, json.dumps({k: v for k, v in task.items() if v != ""}), what)
    print(f"{len(bad)} disagreements in {sum(row[0] for row in table.values())} calls")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

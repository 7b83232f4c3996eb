"""Peak resident memory and wall time of ``hmcpgm evaluate`` beside the CAFA evaluator (``cafaeval``), same files.

Usage (from the repository root)::

    python bench/evaluate_memory.py                      # 27,000 terms, 5,000 targets, 200 predictions each
    python bench/evaluate_memory.py --targets 1000 --terms 5000   # a quick run

A random ontology of the Gene Ontology's biological-process size (one namespace, each
term one or two parents among the earlier ones), a ground truth of three terms per
target and ``--per-target`` random predictions per target are written to a temporary
folder; then ``python -m hmcpgm evaluate ONTOLOGY PREDICTIONS GROUND_TRUTH`` and
``cafaeval ONTOLOGY FOLDER GROUND_TRUTH`` (when the package is installed) run one
after the other under ``/usr/bin/time -v``: the script prints each one's "Maximum
resident set size" in MB, its wall time, and the ratios, measured in this one run,
and checks that both give the same Fmax. Both hold the (targets x terms) matrix of
scores; the score matrix alone weighs ``8 * targets * terms`` bytes, printed beside.
"""

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def write_files(folder, n_terms, n_targets, per_target, seed=0):
    rng = np.random.default_rng(seed)
    names = [f"GO:{j + 1:07d}" for j in range(n_terms)]
    lines = ["format-version: 1.2", "ontology: go", ""]
    for j, name in enumerate(names):
        lines += ["[Term]", f"id: {name}", f"name: term {j}", "namespace: biological_process"]
        if j:
            parents = set(rng.integers(0, j, size=1 + int(rng.random() < 0.3)).tolist())
            lines += [f"is_a: {names[p]}" for p in sorted(parents)]
        lines.append("")
    (folder / "go.obo").write_text("\n".join(lines))
    terms = np.array(names)
    with open(folder / "gt.tsv", "w") as fh:
        for t in range(n_targets):
            fh.write("".join(f"T{t}\t{term}\n" for term in rng.choice(terms, 3)))
    (folder / "pred").mkdir()
    with open(folder / "pred" / "pred.tsv", "w") as fh:
        for t in range(n_targets):
            fh.write("".join(f"T{t}\t{term}\t{s:.3f}\n"
                             for term, s in zip(rng.choice(terms, per_target), rng.random(per_target))))


def timed(command, cwd):
    """(peak RSS in MB, wall seconds, stdout) of a command run under /usr/bin/time -v."""
    start = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-v", *command], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if run.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{run.stderr[-2000:]}")
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1)) / 1024
    return peak, wall, run.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, default=27_000)
    parser.add_argument("--targets", type=int, default=5_000)
    parser.add_argument("--per-target", type=int, default=200)
    args = parser.parse_args()
    if not Path("/usr/bin/time").exists():
        raise SystemExit("this script needs GNU time at /usr/bin/time")
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        write_files(folder, args.terms, args.targets, args.per_target)
        print(f"{args.terms} terms, {args.targets} targets, {args.targets * args.per_target} prediction lines; "
              f"the score matrix alone: {8 * args.terms * args.targets / 2**20:.0f} MB")
        ours = timed([sys.executable, "-m", "hmcpgm", "evaluate", "go.obo", "pred/pred.tsv", "gt.tsv",
                      "--json", "ours.json"], folder)
        print(f"hmcpgm evaluate   peak {ours[0]:8.0f} MB   {ours[1]:6.1f} s")
        cafaeval = shutil.which("cafaeval")
        if cafaeval is None:
            print("cafaeval is not installed (pip install cafaeval): no comparison")
            return
        theirs = timed([cafaeval, "go.obo", "pred", "gt.tsv", "-out_dir", "cafa"], folder)
        print(f"cafaeval          peak {theirs[0]:8.0f} MB   {theirs[1]:6.1f} s")
        print(f"hmcpgm / cafaeval: memory {ours[0] / theirs[0]:.2f}x, time {ours[1] / theirs[1]:.2f}x")
        import json

        import pandas as pd

        f_ours = json.loads((folder / "ours.json").read_text())["biological_process"]["fmax"]
        f_theirs = pd.read_csv(folder / "cafa" / "evaluation_best_f.tsv", sep="\t")["f"].iloc[0]
        print(f"Fmax: hmcpgm {f_ours:.6f}, cafaeval {f_theirs:.6f}")


if __name__ == "__main__":
    main()

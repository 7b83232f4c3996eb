"""Reading an OBO ontology: ``hmcpgm.ontology.read_ontology``'s seconds on a Gene Ontology-sized file.

Writes an OBO file of ``--terms`` terms in GO's three namespaces (default 48,000, about
the Gene Ontology's count with its obsolete terms) whose stanzas have the Gene
Ontology's shape: a name, a namespace, a ``def`` with its references, zero to four
synonyms, zero to three xrefs, one or two ``is_a`` parents with comments, some
``part_of`` and ``regulates`` relationships, alternative ids, obsolete terms with
``replaced_by`` and ``consider`` (about 22 MB at the default size). Then it times
``read_ontology`` on it, best of ``--repeat`` runs, and prints the terms and edges read.

With ``--base REV`` (a git revision) the same file is read by that revision's package
(exported by ``bench/_baseline.py``) in a subprocess, after this checkout's, and the
script prints both times, their ratio, and whether the two read the same
ontology (classes, edges, names and alternative ids of every namespace).

Usage (from the repository root)::

    python bench/obo_reading.py
    python bench/obo_reading.py --base HEAD~1 --repeat 3
"""

import argparse
import json
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np
from _baseline import describe_checkout, export_baseline, run_child  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
NAMESPACES = ("biological_process", "molecular_function", "cellular_component")

# run on one package (PYTHONPATH): times read_ontology and pickles what it read
CHILD = """
import pickle, sys, time, warnings
from hmcpgm.ontology import read_ontology
path, out, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
best = float("inf")
for _ in range(repeat):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onto = read_ontology(path)
    best = min(best, time.perf_counter() - start)
read = {ns: (h.classes, sorted(h.edges)) for ns, h in onto.hierarchies.items()}
with open(out, "wb") as fh:
    pickle.dump((read, onto.names, onto.alt_ids), fh)
print(best)
"""


def write_obo(path, n_terms, seed=0):
    """An OBO file of ``n_terms`` terms with the Gene Ontology's kinds of lines."""
    rng = np.random.default_rng(seed)
    names = [f"GO:{j + 1:07d}" for j in range(n_terms)]
    lines = ["format-version: 1.2", "data-version: releases/2026-01-01", "ontology: go",
             'subsetdef: goslim_generic "Generic GO slim"', "default-namespace: gene_ontology", ""]
    for j, name in enumerate(names):
        k = j % 3
        label = f"synthetic process number {j}"
        lines += ["[Term]", f"id: {name}", f"name: {label}", f"namespace: {NAMESPACES[k]}"]
        if rng.random() < 0.05:
            lines.append(f"alt_id: GO:{9_000_000 + j:07d}")
        lines.append(f'def: "The chemical reactions and pathways of {label}, in an organism with '
                     f'enough words to look real." [GOC:mah, PMID:{rng.integers(10**7)}]')
        lines += [f'synonym: "{label} variant {s}" EXACT []' for s in range(rng.integers(0, 5))]
        lines += [f"xref: Reactome:R-HSA-{rng.integers(10**6)}" for _ in range(rng.integers(0, 4))]
        if j > 10 and rng.random() < 0.08:
            lines += ["is_obsolete: true", f"replaced_by: {names[j - 3]}", f"consider: {names[j - 6]}", ""]
            continue
        if j >= 3:
            pool = np.arange(k, j, 3)  # earlier terms of the same namespace
            for p in sorted(set(rng.choice(pool, size=1 + int(rng.random() < 0.4)).tolist())):
                lines.append(f"is_a: {names[p]} ! synthetic process number {p}")
            if rng.random() < 0.2:
                lines.append(f"relationship: part_of {names[rng.choice(pool)]} ! a whole")
            if rng.random() < 0.1:
                lines.append(f"relationship: regulates {names[rng.choice(pool)]} ! a process")
        lines.append("")
    lines += ["[Typedef]", "id: part_of", "name: part of", "", "[Typedef]", "id: regulates", "name: regulates", ""]
    Path(path).write_text("\n".join(lines), encoding="utf-8")


def _loaded(path):
    with open(path, "rb") as fh:
        return pickle.load(fh)


def timed(code_root, path, out, repeat):
    return float(run_child(code_root, CHILD, path, out, repeat))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, default=48_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--base", help="a git revision whose package reads the same file, in the same run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "go.obo"
        write_obo(path, args.terms)
        print(f"{args.terms} terms, {path.stat().st_size / 1e6:.1f} MB")
        mine = timed(ROOT, path, Path(tmp) / "mine.pkl", args.repeat)
        read, _, _ = _loaded(Path(tmp) / "mine.pkl")
        sizes = {ns: [len(c), len(e)] for ns, (c, e) in read.items()}
        print(f"terms and edges read per namespace: {json.dumps(sizes)}")
        print(f"this checkout ({describe_checkout()}): read_ontology {mine:.2f} s")
        if args.base:
            commit, folder = export_baseline(args.base)
            base = timed(folder, path, Path(tmp) / "base.pkl", args.repeat)
            same = _loaded(Path(tmp) / "base.pkl") == _loaded(Path(tmp) / "mine.pkl")
            print(f"base {commit[:7]}: read_ontology {base:.2f} s; ratio base / this checkout {base / mine:.2f}x; "
                  f"same ontology read: {same}")
            if not same:
                sys.exit(1)


if __name__ == "__main__":
    main()

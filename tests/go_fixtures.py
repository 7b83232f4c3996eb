"""Small generated Gene-Ontology-like files for the tests: an OBO file, annotations, CAFA predictions.

Nothing is downloaded: a random ontology of a few namespaces is drawn from a seed,
with the features of the real files that readers trip on (several parents, part_of
relations, alternative ids, an obsolete term, a relation that is neither is_a nor
part_of, a cross-namespace edge, term names with spaces).
"""

import numpy as np

NAMESPACES = ("biological_process", "molecular_function")


def random_ontology(rng, n_terms=(7, 5)):
    """``{term: {"namespace", "name", "is_a", "part_of", "regulates", "alt_id", "obsolete"}}``, topological."""
    terms = {}
    number = 1
    for ns, n in zip(NAMESPACES, n_terms):
        ids = []
        for j in range(n):
            term = f"GO:{number:07d}"
            number += 1
            parents = [] if j == 0 else sorted(set(rng.choice(ids, size=rng.integers(1, min(j, 3) + 1)).tolist()))
            cut = rng.integers(0, len(parents) + 1) if len(parents) > 1 else len(parents)
            terms[term] = {"namespace": ns, "name": f"{ns.split('_')[0]} term {j}", "is_a": parents[:cut],
                           "part_of": parents[cut:], "regulates": [], "alt_id": [], "obsolete": False}
            if j > 2 and rng.random() < 0.3:
                terms[term]["regulates"] = [ids[0]]
            ids.append(term)
        terms[ids[-1]]["alt_id"] = [f"GO:{9000000 + number:07d}"]
    # an obsolete term (left out by every reader) and a cross-namespace edge (dropped)
    terms[f"GO:{number:07d}"] = {"namespace": NAMESPACES[0], "name": "obsolete thing", "is_a": [], "part_of": [],
                                 "regulates": [], "alt_id": [], "obsolete": True}
    last_mf = [t for t, d in terms.items() if d["namespace"] == NAMESPACES[1] and not d["obsolete"]][-1]
    terms[last_mf]["is_a"] = terms[last_mf]["is_a"] + ["GO:0000001"]
    return terms


def obo_text(terms):
    """The ontology in OBO 1.2."""
    lines = ["format-version: 1.2", "ontology: go", ""]
    for term, d in terms.items():
        lines += ["[Term]", f"id: {term}", f"name: {d['name']}", f"namespace: {d['namespace']}"]
        lines += [f"alt_id: {a}" for a in d["alt_id"]]
        lines += [f"is_a: {p} ! {terms[p]['name']}" for p in d["is_a"]]
        lines += [f"relationship: part_of {p} ! {terms[p]['name']}" for p in d["part_of"]]
        lines += [f"relationship: regulates {p}" for p in d["regulates"]]
        if d["obsolete"]:
            lines.append("is_obsolete: true")
        lines.append("")
    lines += ["[Typedef]", "id: part_of", "name: part of", ""]
    return "\n".join(lines)


def live_terms(terms, namespace):
    """The non-obsolete terms of a namespace, in file order."""
    return [t for t, d in terms.items() if d["namespace"] == namespace and not d["obsolete"]]


def parents_within(terms, term):
    """The is_a and part_of parents of ``term`` in its own namespace."""
    ns = terms[term]["namespace"]
    return [p for p in terms[term]["is_a"] + terms[term]["part_of"] if terms[p]["namespace"] == ns]


def random_annotations(rng, terms, n_targets=12):
    """``[(target, term)]``: a few leaf-ish terms per target (not closed upward), some by alternative id."""
    pairs = []
    for i in range(n_targets):
        for ns in NAMESPACES:
            if rng.random() < 0.15:
                continue  # a target without annotation in this namespace
            live = live_terms(terms, ns)
            for term in rng.choice(live, size=rng.integers(1, 3), replace=False):
                use = terms[term]["alt_id"][0] if terms[term]["alt_id"] and rng.random() < 0.5 else term
                pairs.append((f"P{i:03d}", use))
    return pairs


def random_predictions(rng, terms, n_targets=12):
    """``[(target, term, score)]`` with scores on a coarse grid (ties with the thresholds), repeats, strangers."""
    rows = []
    for i in range(n_targets + 2):  # two targets without ground truth
        for ns in NAMESPACES:
            live = live_terms(terms, ns)
            for term in rng.choice(live, size=rng.integers(0, len(live) + 1), replace=False):
                rows.append((f"P{i:03d}", term, float(np.round(rng.random(), 2))))
    if rows:
        rows.append((rows[0][0], rows[0][1], 0.5))  # the same pair twice: the max counts
    return rows


def scores_and_annotations(folder, rng, terms, namespace, n_train=300, n_test=80):
    """Scores CSVs (column ``gene``, one column per non-root term) and two-column annotation files.

    Each gene is annotated with one random term; its scores are noisy indicators of the
    term and its ancestors. Writes train_scores.csv, train_annotations.tsv,
    test_scores.csv and test_annotations.tsv into ``folder``.
    """
    from hmcpgm.ontology import read_ontology

    h = read_ontology(folder / "go.obo").hierarchy(namespace)
    columns = [c for c in h.classes if c not in h.roots]
    for name, n in (("train", n_train), ("test", n_test)):
        lines, rows = [], []
        for i in range(n):
            gene = f"{name}{i}"
            term = columns[rng.integers(len(columns))]
            lines.append(f"{gene}\t{term}\n")
            closed = {term, *h.ancestors(term)}
            noise = rng.normal(0.25, 0.2, len(columns))
            rows.append(f"{gene}," + ",".join(f"{min(max(0.5 * (c in closed) + e, 0), 1):.4f}"
                                             for c, e in zip(columns, noise)) + "\n")
        (folder / f"{name}_annotations.tsv").write_text("".join(lines))
        (folder / f"{name}_scores.csv").write_text("gene," + ",".join(columns) + "\n" + "".join(rows))
    return columns

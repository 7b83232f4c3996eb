"""The comparison of bench/hemdag_agreement.py (without R): it tells agreement, a better GPAV and a difference apart."""

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from hemdag_agreement import compare, hmcpgm_values, with_root, write_cases  # noqa: E402


def _outputs(folder, change=None):
    """Write hmcpgm's own values where HEMDAG's would go; ``change(case, task, frame)`` may alter one."""
    from hmcpgm import Hierarchy

    for d in sorted(folder.glob("case*")):
        edges = pd.read_csv(d / "edges.csv", dtype=str)
        S = pd.read_csv(d / "S.csv", index_col=0)
        W = pd.read_csv(d / "W.csv").iloc[0]
        h = Hierarchy.from_edges(list(zip(edges.parent, edges.child)))
        for task in pd.read_csv(d / "tasks.csv", dtype=str, keep_default_na=False).to_dict("records"):
            values = hmcpgm_values(task, S, h, W)
            if change is not None:
                values = change(d.name, task, values, S, h)
            if values is not None:
                values.to_csv(d / f"out.{task['id']}.csv", float_format="%.17g")


def _dag_case(folder):
    from hmcpgm import Hierarchy

    for d in sorted(folder.glob("case*")):
        edges = pd.read_csv(d / "edges.csv", dtype=str)
        h = Hierarchy.from_edges(list(zip(edges.parent, edges.child)))
        if any(len(h.parents(c)) > 1 for c in h.classes):
            return d.name
    raise AssertionError("no DAG among the cases")


def test_own_values_agree_everywhere(tmp_path):
    write_cases(tmp_path, 6, seed=1)
    _outputs(tmp_path)
    table, bad = compare(tmp_path)
    assert not bad
    assert all(agree == n for n, agree, *_ in table.values())
    assert sum(row[0] for row in table.values()) == 6 * len(pd.read_csv(tmp_path / "case0000" / "tasks.csv"))


def test_a_changed_value_is_a_disagreement_and_a_missing_output_a_failure(tmp_path):
    write_cases(tmp_path, 4, seed=2)

    def change(case, task, values, S, h):
        if case == "case0001" and task["method"] == "htd":
            values.iloc[0, 0] += 0.01
        if case == "case0002" and task["method"] == "qnorm":
            return None  # as when HEMDAG raises
        return values

    _outputs(tmp_path, change)
    table, bad = compare(tmp_path)
    assert [(case, task["method"]) for case, task, _ in bad] == [("case0001", "htd")]
    assert table["qnorm"][4] == 1 and table["htd"][3] == 1


def test_a_worse_consistent_gpav_on_a_dag_counts_as_lower_not_as_a_difference(tmp_path):
    from hmcpgm.corrections import htd

    write_cases(tmp_path, 6, seed=3)
    dag = _dag_case(tmp_path)

    def change(case, task, values, S, h):
        if case == dag and task["method"] == "gpav":
            return htd(with_root(S), h)  # hierarchy-consistent, but not the least-squares fit
        return values

    _outputs(tmp_path, change)
    table, bad = compare(tmp_path)
    assert not bad
    assert table["gpav"][2] == 1

"""Triangulations of the moral graph: valid junction forests, and the searched one never worse."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import dags

from hmcpgm.inference import _triangulation
from hmcpgm.inference._triangulation import (
    count_feasible,
    eliminate_in_order,
    elimination_cliques,
    junction_forest,
    moral_adjacency,
    searched_elimination,
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_junction_forest(hierarchy, elimination):
    """Every moral edge inside a clique; the cliques holding a class form a connected subtree."""
    sets, nbrs = junction_forest(elimination)
    for a, adj in enumerate(moral_adjacency(hierarchy)):
        for b in adj:
            assert any(a in c and b in c for c in sets)
    for v in range(hierarchy.n_classes):
        holding = {i for i, c in enumerate(sets) if v in c}
        assert holding
        start = next(iter(holding))
        seen, stack = {start}, [start]
        while stack:
            for j in nbrs[stack.pop()]:
                if j in holding and j not in seen:
                    seen.add(j)
                    stack.append(j)
        assert seen == holding
    edges = sum(len(n) for n in nbrs) // 2
    assert edges <= len(sets) - 1  # a forest


def total_states(hierarchy, elimination):
    return sum(count_feasible(sorted(c), hierarchy.ancestor_matrix) for c in junction_forest(elimination)[0])


@SETTINGS
@given(h=dags(max_classes=12, max_parents=4), stop=st.sampled_from([1, 2, 4, 1000]),
       restarts=st.integers(1, 5), local=st.integers(0, 3))
def test_searched_elimination_is_a_valid_triangulation_never_worse_than_weighted_min_fill(h, stop, restarts, local):
    plain = elimination_cliques(h, "weighted", max_width=62)
    best, totals = searched_elimination(h, restarts=restarts, local=local, stop_weight=stop)
    assert_junction_forest(h, best)
    assert sorted(v for v, _ in best) == list(range(h.n_classes))
    # each clique is its class and the class's neighbours still alive when it was eliminated
    for i, (v, c) in enumerate(best):
        assert v in c and not c & {u for u, _ in best[:i]}
    total = total_states(h, best)
    assert totals[0] == total_states(h, plain)  # the first restart is the plain weighted min-fill
    assert total == min(t for t in totals if t is not None) <= totals[0]


@SETTINGS
@given(h=dags(max_classes=14, max_parents=4), restarts=st.integers(2, 8), local=st.integers(0, 4))
def test_pruned_restarts_are_those_above_the_best_total_so_far(h, restarts, local):
    pruned, totals = searched_elimination(h, restarts=restarts, local=local, stop_weight=2)
    _, full = searched_elimination(h, restarts=restarts, local=local, stop_weight=2, prune=False)
    assert None not in full
    assert total_states(h, pruned) == min(full)
    for r, t in enumerate(totals):
        if t is None:
            assert full[r] > min(full[:r])
        else:
            assert t == full[r]


@SETTINGS
@given(h=dags(max_classes=12, max_parents=4), restarts=st.integers(1, 4))
def test_an_elimination_replayed_from_its_order_gives_the_same_cliques(h, restarts):
    best, _ = searched_elimination(h, restarts=restarts, stop_weight=2)
    assert eliminate_in_order(h, [v for v, _ in best]) == best


def test_the_searched_order_is_kept_on_disk_and_a_broken_file_ignored(tmp_path, monkeypatch):
    from strategies import from_parent_lists

    rng = np.random.default_rng(1)
    h = from_parent_lists([[]] + [sorted(rng.choice(j, size=min(j, 3), replace=False).tolist()) for j in range(1, 25)])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setitem(_triangulation._SEARCH, "stop_weight", 4)
    monkeypatch.setitem(_triangulation._SEARCH, "restarts", 6)
    expected, totals = searched_elimination(h, **_triangulation._SEARCH)
    assert len(totals) == 6 + _triangulation._SEARCH["local"]
    first = _triangulation._cached_search(h)
    files = list((tmp_path / "hmcpgm" / "triangulation").iterdir())
    assert first == expected and len(files) == 1
    monkeypatch.setattr(_triangulation, "searched_elimination", None)  # a second search would fail
    assert _triangulation._cached_search(h) == expected
    files[0].write_text('{"order": [0, 0')
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setitem(_triangulation._SEARCH, "stop_weight", 4)
    monkeypatch.setitem(_triangulation._SEARCH, "restarts", 6)
    assert _triangulation._cached_search(h) == expected

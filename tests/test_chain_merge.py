"""Chain-Merge against a plain reference: per-object blocks by pool-adjacent-violators,
then numpy's stable argsort of the block means, on both of its paths."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hmcpgm.ranking import _merge, _runmerge
from hmcpgm.ranking._merge import chain_merge


def reference(values, seq, seg_start):
    """(order, block, mean) by the definition, one object and one segment at a time."""
    n_obj, n_cls = values.shape
    bounds = list(seg_start) + [n_cls]
    blocks = []  # (mean, events) in object-major layout order
    for m in range(n_obj):
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            stack = []  # [sum, count, start]
            for j in range(lo, hi):
                stack.append([values[m, seq[m, j]], 1, j])
                while len(stack) > 1 and stack[-1][0] / stack[-1][1] > stack[-2][0] / stack[-2][1]:
                    s, c, _ = stack.pop()
                    stack[-1][0] += s
                    stack[-1][1] += c
            for s, c, start in stack:
                blocks.append((s / c, [m * n_cls + seq[m, j] for j in range(start, start + c)]))
    means = np.array([b[0] for b in blocks])
    ranked = np.argsort(-means, kind="stable")
    order, block, mean = [], np.empty(n_obj * n_cls, dtype=np.intp), np.empty(n_obj * n_cls)
    for r, b in enumerate(ranked):
        order.extend(blocks[b][1])
        block[blocks[b][1]] = r
        mean[blocks[b][1]] = blocks[b][0]
    return np.array(order, dtype=np.intp), block.reshape(n_obj, n_cls), mean.reshape(n_obj, n_cls)


@st.composite
def problems(draw):
    n_obj = draw(st.integers(0, 5))
    n_cls = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    levels = draw(st.sampled_from([3, 1000]))  # few levels: many ties
    values = rng.integers(0, levels, size=(n_obj, n_cls)) / levels
    seq = np.array([rng.permutation(n_cls) for _ in range(n_obj)], dtype=np.int64).reshape(n_obj, n_cls)
    cuts = sorted(set(rng.integers(1, n_cls, size=draw(st.integers(0, 3))).tolist())) if n_cls > 1 else []
    return values, seq, np.array([0, *cuts], dtype=np.int64)


def assert_same(got, want):
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("max_runs", [10**9, 0], ids=["merge-of-runs", "sort"])
@settings(max_examples=150, deadline=None)
@given(problem=problems())
def test_chain_merge_matches_the_reference(problem, max_runs):
    values, seq, seg_start = problem
    saved = _merge.MAX_RUNS, _merge.MAX_RUN_SHARE
    _merge.MAX_RUNS, _merge.MAX_RUN_SHARE = max_runs, 1  # 10**9: always merge the runs; 0: always sort
    try:
        got = chain_merge(values, seq, seg_start)
    finally:
        _merge.MAX_RUNS, _merge.MAX_RUN_SHARE = saved
    assert_same(got, reference(values, seq, seg_start))


def test_merge_of_runs_gives_the_same_ranking_in_any_number_of_slices():
    rng = np.random.default_rng(3)
    n_obj, n_cls = 200, 60
    values = np.round(rng.random((n_obj, n_cls)), 2)  # ties across objects
    seq = np.argsort(-values, axis=1, kind="stable").astype(np.int64)
    seq[:, 50:] = rng.permuted(seq[:, 50:], axis=1)  # and a few merged blocks
    want = reference(values, seq, np.zeros(1, dtype=np.int64))
    assert_same(chain_merge(values, seq), want)
    n = n_obj * n_cls
    b_mean, b_first, count = np.empty(n), np.empty(n + 1, dtype=np.int64), np.empty(n_obj, dtype=np.int64)
    _runmerge.object_blocks(values, seq, np.zeros(1, dtype=np.int64), b_mean, b_first, count)
    run_lo, run_hi = _runmerge.object_runs(b_mean, count, n_cls)
    assert count.sum() >= 4 * _runmerge.SAMPLE  # so that up to 4 slices are used
    for n_parts in (1, 2, 3, 4):
        b_rank, order = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        _runmerge.merge_runs(b_mean, b_first, seq, run_lo, run_hi, n_parts, b_rank, order)
        np.testing.assert_array_equal(order, want[0])

"""Chain-Merge: interleave per-object orders optimally by maximum-mean prefix blocks."""

import numpy as np

from . import _kernels

__all__ = ["chain_merge"]


def chain_merge(values, seq, seg_start=None):
    """Merge per-object orders into one ranking of all events.

    Each object's order ``seq[m]`` (class indices) is split into maximum-mean
    prefix blocks (per segment, when the object is several independent chains);
    all blocks are then sorted by mean, descending. A stable sort over an
    object-major layout keeps each object's own order on ties, so the merged
    ranking restricted to an object is exactly ``seq[m]``; given those per-object
    orders, this interleaving maximises CATCH (Sidney 1975; the paper's
    Chain-Merge).

    Returns
    -------
    order : (M*K,) flat event indices, best first
    block : (M, K) rank of the block of each event (0 = first)
    block_mean : (M, K) that block's mean value
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    seq = np.ascontiguousarray(seq, dtype=np.int64)
    n_obj, n_cls = values.shape
    if seg_start is None:
        seg_start = np.zeros(1, dtype=np.int64)
    n = n_obj * n_cls
    blk_id = np.empty((n_obj, n_cls), dtype=np.int64)
    blk_off = np.empty((n_obj, n_cls), dtype=np.int64)
    b_mean = np.empty(n)
    b_len = np.empty(n, dtype=np.int64)
    nb = _kernels.prefix_blocks(
        values, seq, np.asarray(seg_start, dtype=np.int64), blk_id, blk_off, b_mean, b_len
    )
    b_mean = b_mean[:nb]
    b_len = b_len[:nb]
    b_order = np.argsort(-b_mean, kind="stable")
    b_rank = np.empty(nb, dtype=np.int64)
    b_rank[b_order] = np.arange(nb)
    start = np.zeros(nb, dtype=np.int64)
    np.cumsum(b_len[b_order][:-1], out=start[1:])
    order = np.empty(n, dtype=np.intp)
    block = np.empty(n, dtype=np.intp)
    mean = np.empty(n)
    _kernels.scatter_blocks(seq, blk_id, blk_off, b_rank, start, b_mean, order, block, mean)
    return order, block.reshape(n_obj, n_cls), mean.reshape(n_obj, n_cls)

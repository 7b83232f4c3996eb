"""hmcpgm at scale: chunked, out-of-core and distributed (dask) prediction, ranking and decisions.

Objects are independent until the global merge of their HierRank blocks, so the
pipeline runs one chunk of objects at a time, scores -> likelihoods -> mLPR ->
each object's HierRank blocks, in this process or on a ``dask.distributed``
cluster, with memory bounded by the chunk size. Global decisions (the Bayesian
FDR cutoff, the top ``r`` events) need no global sort: a histogram of block
means locates the cutoff, and only the events near it are merged (two passes).
Results are the same numbers as the whole-matrix functions
(:func:`hmcpgm.hier_rank`, :func:`hmcpgm.bayes_cutoff`, :meth:`hmcpgm.Ranking.top`).

Files: :func:`read_matrix_chunks` and :class:`TableWriter` read and write CSV and
Parquet in chunks; :func:`predict_files` and :func:`rank_files` are the
``hmcpgm predict`` and ``hmcpgm rank`` commands with ``--chunk-size``.

dask and pyarrow are an optional extra (``pip install "hmcpgm[scale]"``), imported
only when a cluster or a Parquet file is used; chunks in this process need
neither.
"""

from ._execute import INSTALL, check_scheduler, open_client, scheduler_option
from ._files import (
    DEFAULT_CHUNK_SIZE,
    CafaWriter,
    TableWriter,
    predict_files,
    rank_files,
    read_matrix_chunks,
    read_matrix_file,
)
from ._pipeline import (
    ModelMlpr,
    NetworkMlpr,
    predict_proba,
    predict_stream,
    rank_chunks,
    rank_model,
    rank_stream,
    row_chunks,
)
from ._ranking import ChunkedRanking
from ._runs import N_BINS, ChunkSummary, RunStore, descending_bins

__all__ = [
    "ChunkedRanking", "ChunkSummary", "RunStore", "N_BINS", "descending_bins",
    "ModelMlpr", "NetworkMlpr", "row_chunks", "rank_stream", "rank_chunks", "rank_model",
    "predict_stream", "predict_proba", "open_client", "check_scheduler", "scheduler_option", "INSTALL",
    "read_matrix_chunks", "read_matrix_file", "TableWriter", "CafaWriter", "predict_files", "rank_files",
    "DEFAULT_CHUNK_SIZE",
]

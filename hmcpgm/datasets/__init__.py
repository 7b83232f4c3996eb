"""Data sets: the paper's synthetic benchmark and the Clus-HMC ARFF benchmarks.

* :func:`make_paper_synthetic` draws the 25-class synthetic data of the paper on
  :func:`paper_forest` (label matrices on any hierarchy come from
  :meth:`hmcpgm.LabelNetwork.sample`).
* :func:`load_hmc_arff` reads one Clus-HMC ARFF file (FunCat trees, Gene Ontology
  DAGs) and :func:`load_hmc_split` the train / validation / test files of one
  benchmark with a shared hierarchy.
"""

from ._arff import dataset_name, load_hmc_arff, load_hmc_split
from ._data import HMCData, HMCSplit
from ._synthetic import (
    PAPER_ETA,
    PAPER_PARENTS,
    SyntheticData,
    make_paper_synthetic,
    paper_forest,
)

__all__ = [
    "HMCData",
    "HMCSplit",
    "PAPER_ETA",
    "PAPER_PARENTS",
    "SyntheticData",
    "dataset_name",
    "load_hmc_arff",
    "load_hmc_split",
    "make_paper_synthetic",
    "paper_forest",
]

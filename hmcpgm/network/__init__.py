"""The label network: the hierarchy and its CPD parameters, as one frozen object.

A :class:`LabelNetwork` is the Bayesian network every mLPR engine answers
questions about: one binary label node per class with

* roots: P(Y_k = 1) = theta_k;
* non-roots: P(Y_k = 1 | all parents = 1) = theta_k, P(Y_k = 1 | any parent = 0) = 0.

This module holds the only definition of that rule (:func:`log_cpd`) and everything
derived from it: the prior probability of label configurations, pgmpy's CPD tables,
prior marginals and sampling. :meth:`LabelNetwork.to_pgmpy` and
:meth:`LabelNetwork.from_pgmpy` convert both ways, so the pgmpy network a user
inspects or edits is the one the batched engines answer for.

Score evidence does not need score nodes: it enters pgmpy queries as virtual
evidence, one column [L_k(0), L_k(1)] / (L_k(0) + L_k(1)) per class. For
teaching and drawing, :func:`augmented_network` adds the score nodes S_k.

pgmpy is imported inside the functions (``import pgmpy`` takes seconds), within
:func:`quiet_pgmpy`, which silences its logger and import-time notices for the
duration only.
"""

from ._augmented import augmented_network
from ._network import LabelNetwork, check_network, check_pseudo_count
from ._pgmpy import quiet_pgmpy
from ._rule import log_cpd, log_prior

__all__ = [
    "LabelNetwork", "augmented_network", "check_network", "check_pseudo_count", "log_cpd", "log_prior", "quiet_pgmpy",
]

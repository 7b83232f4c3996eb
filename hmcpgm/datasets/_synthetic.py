"""The paper's synthetic benchmark.

Labels follow the hierarchical model (:meth:`hmcpgm.LabelNetwork.sample`): a root is positive with
probability ``theta_k``; any other class is positive with probability ``theta_k``
when all its parents are positive, and never otherwise. Scores are Beta
distributed given the label.
"""

from dataclasses import dataclass

import numpy as np

from .._arrays import count
from .._validation import theta_vector
from ..exceptions import InputError
from ..hierarchy import Hierarchy
from ..network import LabelNetwork

__all__ = [
    "PAPER_ETA",
    "PAPER_PARENTS",
    "SyntheticData",
    "make_paper_synthetic",
    "paper_forest",
]

#: 1-based parent of each of the paper's 25 classes (0 = the class is a root).
PAPER_PARENTS = (0, 0, 0, 2, 3, 3, 4, 4, 4, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 12, 13, 13, 13, 14)

#: Beta shape ``eta_k`` of each of the paper's 25 classes: negatives score
#: ``Beta(eta_k, 3.5)`` and positives ``Beta(3.5, eta_k)``. ``eta = 2`` is an easy
#: class, ``eta = 4`` a hard one, ``eta = 5.5`` scores positives lower than negatives.
PAPER_ETA = (
    5.5, 5.5, 5.5, 5.5, 4, 4, 2, 2, 2, 4, 2, 5.5, 5.5, 2, 5.5, 4, 5.5, 4, 4, 2, 5.5, 4, 4, 5.5, 4,
)

_BETA_OTHER = 3.5


def paper_forest():
    """The 25-class forest of the paper's synthetic data (three trees).

    Classes are named ``0 .. 24``: class ``k`` here is class ``k + 1`` in the
    paper, so the paper's 1-based parent list becomes 0-based parent indices.

    Returns
    -------
    Hierarchy
        A forest of 25 classes and three roots.

    Examples
    --------
    >>> h = paper_forest()
    >>> h.n_classes, h.kind, h.roots
    (25, 'forest', (0, 1, 2))
    >>> h.parents(24)  # the paper's class 25 has parent 14
    (13,)
    """
    return Hierarchy.from_parents([p - 1 for p in PAPER_PARENTS])


@dataclass(frozen=True, eq=False)
class SyntheticData:
    """A draw of the paper's synthetic benchmark, made by :func:`make_paper_synthetic`.

    Attributes
    ----------
    hierarchy : Hierarchy
        The 25-class forest (:func:`paper_forest`); fixes the column order.
    theta : ndarray of shape (K,)
        The conditional probabilities the labels were drawn with.
    eta : ndarray of shape (K,)
        Beta shapes: negatives score ``Beta(eta, 3.5)``, positives ``Beta(3.5, eta)``.
    train_scores, test_scores : ndarray of shape (M, K), float
    train_labels, test_labels : ndarray of shape (M, K), int8
    n_draws : int
        How many theta vectors were drawn before every class had
        ``min_positives`` training positives (1 when the first one did; 0 when
        theta was given).
    """

    hierarchy: Hierarchy
    theta: np.ndarray
    eta: np.ndarray
    train_scores: np.ndarray
    train_labels: np.ndarray
    test_scores: np.ndarray
    test_labels: np.ndarray
    n_draws: int = 1

    def split_test(self, n_valid=None):
        """Split the test objects into validation and test parts (paper: 5,000 / 5,000).

        The objects are independent draws, so the first ``n_valid`` test rows
        form the validation part and the rest the test part.

        Parameters
        ----------
        n_valid : int, optional
            Default: half of the test rows (rounded down).

        Returns
        -------
        valid_scores, valid_labels, test_scores, test_labels : ndarray
            The first ``n_valid`` test rows and the remaining ones (views, not copies).

        Examples
        --------
        >>> data = make_paper_synthetic(200, 100, seed=1, min_positives=0)
        >>> [a.shape[0] for a in data.split_test()]
        [50, 50, 50, 50]
        """
        m = self.test_scores.shape[0]
        if n_valid is None:
            n_valid = m // 2
        n_valid = count(n_valid, "n_valid")
        if n_valid > m:
            raise InputError(f"n_valid must be at most the {m} test rows, got {n_valid}")
        return (
            self.test_scores[:n_valid],
            self.test_labels[:n_valid],
            self.test_scores[n_valid:],
            self.test_labels[n_valid:],
        )


def make_paper_synthetic(
    n_train=50_000,
    n_test=10_000,
    *,
    seed=None,
    min_positives=15,
    eta=PAPER_ETA,
    theta=None,
    max_draws=1000,
):
    """Draw the paper's synthetic data set (section 5 of Ye et al.).

    ``theta_k ~ Uniform(0, 1)`` for every class, redrawn (with fresh training
    labels) until every class has at least ``min_positives`` positives among the
    training objects. Labels come from the hierarchical model on
    :func:`paper_forest`; scores of negatives are ``Beta(eta_k, 3.5)`` and of
    positives ``Beta(3.5, eta_k)``.

    Parameters
    ----------
    n_train, n_test : int
        Numbers of training and test objects (paper: 50,000 and 10,000; split the
        test objects with :meth:`SyntheticData.split_test`).
    seed : int, numpy.random.Generator or None
        Same seed, same data.
    min_positives : int
        Required training positives per class; 0 accepts the first theta.
    eta : array-like of shape (25,)
        Beta shapes, default :data:`PAPER_ETA`.
    theta : array-like of shape (25,), optional
        Use these probabilities instead of drawing them (no redraw; the
        ``min_positives`` requirement is then not enforced).
    max_draws : int
        Give up (``InputError``) after this many theta draws.

    Returns
    -------
    SyntheticData
        The hierarchy, theta, eta, and the training and test scores and labels.

    Examples
    --------
    >>> data = make_paper_synthetic(2000, 500, seed=0)
    >>> data.train_scores.shape, data.test_labels.shape
    ((2000, 25), (500, 25))
    >>> int(data.train_labels.sum(axis=0).min()) >= 15
    True
    >>> data.hierarchy.violations(data.train_labels)
    0
    """
    n_train = count(n_train, "n_train")
    n_test = count(n_test, "n_test")
    min_positives = count(min_positives, "min_positives")
    max_draws = count(max_draws, "max_draws")
    if max_draws < 1:
        raise InputError(f"max_draws must be at least 1, got {max_draws}")
    hierarchy = paper_forest()
    try:
        eta = np.array(eta, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"eta must be {hierarchy.n_classes} positive numbers, got {eta!r}") from None
    if eta.shape != (hierarchy.n_classes,) or not np.all(np.isfinite(eta) & (eta > 0)):
        raise InputError(
            f"eta must hold {hierarchy.n_classes} positive finite Beta shapes, got shape "
            f"{eta.shape} with values {eta}"
        )
    seeds = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)
    if not (seed is None or isinstance(seed, seeds)
            or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0)):
        raise InputError(f"seed must be None, an int >= 0 or a numpy Generator, got {seed!r}")
    rng = np.random.default_rng(seed)

    if theta is not None:
        theta = theta_vector(theta, hierarchy).copy()
        train_labels = LabelNetwork(hierarchy, theta).sample(n_train, rng)
        n_draws = 0
    else:
        if min_positives > n_train:
            raise InputError(
                f"min_positives={min_positives} positives per class cannot be met with "
                f"n_train={n_train} training objects"
            )
        for n_draws in range(1, max_draws + 1):  # noqa: B007 -- read after the loop: the draw that met min_positives
            theta = rng.random(hierarchy.n_classes)
            train_labels = LabelNetwork(hierarchy, theta).sample(n_train, rng)
            if train_labels.sum(axis=0).min() >= min_positives:
                break
        else:
            counts = train_labels.sum(axis=0)
            raise InputError(
                f"no theta among max_draws={max_draws} draws gave every class at least "
                f"min_positives={min_positives} training positives with n_train={n_train} "
                f"(last draw: fewest positives {counts.min()} in class {int(counts.argmin())}); "
                "raise n_train or max_draws, or lower min_positives"
            )
    test_labels = LabelNetwork(hierarchy, theta).sample(n_test, rng)
    theta.flags.writeable = False
    eta.flags.writeable = False
    return SyntheticData(
        hierarchy=hierarchy,
        theta=theta,
        eta=eta,
        train_scores=_beta_scores(train_labels, eta, rng),
        train_labels=train_labels,
        test_scores=_beta_scores(test_labels, eta, rng),
        test_labels=test_labels,
        n_draws=n_draws,
    )


def _beta_scores(labels, eta, rng):
    positive = labels.astype(bool)
    a = np.where(positive, _BETA_OTHER, eta)
    b = np.where(positive, eta, _BETA_OTHER)
    return rng.beta(a, b)


"""The loaded benchmark data: one ARFF file (:class:`HMCData`) and a train/valid/test split."""

from dataclasses import dataclass

import numpy as np

from .._util import preview, repeated
from ..exceptions import HierarchyError, InputError
from ..hierarchy import Hierarchy

__all__ = ["HMCData", "HMCSplit"]


@dataclass(frozen=True, eq=False)
class HMCData:
    """One ARFF file of a hierarchical multi-label benchmark.

    Attributes
    ----------
    features : ndarray of shape (M, F), float
        Missing values (``?``) are NaN. Nominal features hold category codes
        ``0, 1, ...`` in the order the ``@ATTRIBUTE`` line declares the values.
    labels : ndarray of shape (M, K), int8
        Closed upward: ``hierarchy.violations(labels) == 0``.
    hierarchy : Hierarchy
        Fixes the column order of ``labels`` (the order of the class attribute).
    feature_names : tuple of str
    excluded : tuple
        Classes left out of evaluation by the benchmark convention: the children
        of a dropped super-root (the three GO roots); empty for FunCat files.
    path : str or None
        Where the data was read from.
    categories : tuple
        Per column of ``features``: the declared values of a nominal feature held as
        codes, None for a number; empty when unknown.
    """

    features: np.ndarray
    labels: np.ndarray
    hierarchy: Hierarchy
    feature_names: tuple
    excluded: tuple = ()
    path: str | None = None
    categories: tuple = ()

    @property
    def n_objects(self):
        """int: the number of rows M."""
        return self.features.shape[0]

    @property
    def top_level(self):
        """tuple: the classes with no parent (the roots of the forest or DAG)."""
        return self.hierarchy.roots

    @property
    def evaluated(self):
        """bool array (K,): True for the classes that enter evaluation (not ``excluded``)."""
        mask = np.ones(self.hierarchy.n_classes, dtype=bool)
        if self.excluded:
            mask[self.hierarchy.indices(self.excluded)] = False
        return mask

    @property
    def class_counts(self):
        """int array (K,): positives per class."""
        return self.labels.sum(axis=0, dtype=np.int64)

    def one_hot(self):
        """These rows with each nominal feature of three or more values as one 0/1 column per value.

        The columns are named ``"<name>=<value>"`` and their categories are None (numbers
        now); a missing value is NaN in each. A feature of two values keeps its code
        column, and numbers stay as they are, so a second call changes nothing. What
        :func:`hmcpgm.datasets.load_hmc_arff` gives with ``nominal="one-hot"``.

        Returns
        -------
        HMCData
            ``self`` when it has no such feature, else a copy with the columns replaced.

        Raises
        ------
        InputError
            When a new column's name is taken by another feature.
        """
        import dataclasses

        if not any(values is not None and len(values) >= 3 for values in self.categories):
            return self
        columns, names, categories = [], [], []
        for j, (name, values) in enumerate(zip(self.feature_names, self.categories)):
            x = self.features[:, j]
            if values is None or len(values) < 3:
                columns.append(x[:, None])
                names.append(name)
                categories.append(values)
                continue
            hot = (x[:, None] == np.arange(len(values))[None, :]).astype(float)
            hot[np.isnan(x)] = np.nan
            columns.append(hot)
            names += [f"{name}={v}" for v in values]
            categories += [None] * len(values)
        taken = repeated(names)
        if taken:
            raise InputError(f"{self.path}: one-hot columns would share the names {preview(taken)} with other "
                             "features; rename the feature")
        return dataclasses.replace(self, features=np.hstack(columns), feature_names=tuple(names),
                                   categories=tuple(categories))

    def check_hierarchy_like(self, reference):
        """Raise :class:`HierarchyError` unless the class attribute is ``reference``'s: classes, edges, order.

        Parameters
        ----------
        reference : HMCData
            The rows whose labels a second stage was (or will be) fitted on.

        Raises
        ------
        HierarchyError
            Naming both files and, in a few words, what tells the two apart.
        """
        a, b = self.hierarchy, reference.hierarchy
        if a == b and self.excluded == reference.excluded:
            return
        if set(a.classes) != set(b.classes):
            extra = sorted(set(a.classes) - set(b.classes), key=str)
            missing = sorted(set(b.classes) - set(a.classes), key=str)
            why = f"classes only in the first: {preview(extra, 3)}, only in the second: {preview(missing, 3)}"
        elif set(a.edges) != set(b.edges):
            why = f"edges only in the first: {preview(sorted(set(a.edges) - set(b.edges), key=str), 3)}"
        elif a.classes != b.classes:
            first = next(i for i, (x, y) in enumerate(zip(a.classes, b.classes)) if x != y)
            why = f"the same classes in another order: position {first} is {a.classes[first]!r} against " \
                  f"{b.classes[first]!r}"
        else:
            why = "other classes excluded from evaluation"
        raise HierarchyError(f"{self.path} declares a different hierarchy than {reference.path} ({why}); the splits "
                             "of a benchmark must share one class attribute")

    def check_features_like(self, reference):
        """Raise :class:`InputError` unless the features are ``reference``'s: names, order and nominal values.

        A first stage fitted on one file's columns reads another file's by position,
        so a different name, order or declaration of a nominal feature's values (whose
        codes or one-hot columns would then mean other values) is refused.

        Parameters
        ----------
        reference : HMCData
            The rows whose columns a first stage was (or will be) fitted on.

        Raises
        ------
        InputError
            Naming both files and the first feature that differs.
        """
        mine, theirs = self.feature_names, reference.feature_names
        if mine != theirs:
            j = next((j for j, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
            name = lambda names: repr(names[j]) if j < len(names) else "none"  # noqa: E731
            raise InputError(
                f"{self.path} has {len(mine)} features but {reference.path} {len(theirs)}; the first that differs "
                f"is number {j + 1}: {name(mine)} against {name(theirs)}" if len(mine) != len(theirs) else
                f"{self.path} and {reference.path} differ in feature number {j + 1} of {len(mine)}: "
                f"{name(mine)} against {name(theirs)}"
            )
        if self.categories and reference.categories and self.categories != reference.categories:
            j = next(j for j, (a, b) in enumerate(zip(self.categories, reference.categories)) if a != b)
            declared = lambda values: "numeric" if values is None else f"values {preview(values, 5)}"  # noqa: E731
            raise InputError(
                f"{self.path} declares feature {self.feature_names[j]!r} {declared(self.categories[j])} but "
                f"{reference.path} {declared(reference.categories[j])}; its numbers would mean other values"
            )


@dataclass(frozen=True, eq=False)
class HMCSplit:
    """Train, validation and test files of one benchmark, sharing one hierarchy.

    Attributes
    ----------
    name : str
    hierarchy : Hierarchy
    train : HMCData
    valid : HMCData or None
        None for benchmarks shipped without a validation file (ImCLEF07A, Enron).
    test : HMCData
    """

    name: str
    hierarchy: Hierarchy
    train: HMCData
    valid: HMCData | None
    test: HMCData

    @property
    def excluded(self):
        """tuple: classes left out of evaluation (see :attr:`HMCData.excluded`)."""
        return self.train.excluded

    @property
    def evaluated(self):
        """bool array (K,): the classes that enter evaluation."""
        return self.train.evaluated

    def summary(self):
        """Row counts and classes without positives, per split.

        Returns
        -------
        dict
            ``{"classes": K, "kind": ..., "features": F, "<split>": {"rows": M,
            "classes_without_positives": n}}`` for each split present.
        """
        out = {
            "classes": self.hierarchy.n_classes,
            "kind": self.hierarchy.kind,
            "features": self.train.features.shape[1],
        }
        for part in ("train", "valid", "test"):
            data = getattr(self, part)
            if data is not None:
                out[part] = {
                    "rows": data.n_objects,
                    "classes_without_positives": int(np.count_nonzero(data.class_counts == 0)),
                }
        return out

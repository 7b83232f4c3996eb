"""First-stage classifier scores: one score per (object, class) from features.

The second stage (mLPR) is fitted on scores of labelled objects. Scores of the
very objects a classifier was trained on are optimistic, so the training scores
are *out of fold*: the rows are split into folds and each fold is scored by
classifiers trained on the other folds. :class:`OutOfFoldScores` is the
scikit-learn transformer that does it, the way ``StackingClassifier`` builds its
second-stage features with ``cross_val_predict``: ``fit_transform(X, y)``
returns the out-of-fold scores of the training rows, ``transform(X)`` scores new
rows.

Two first stages:

* joint (the default): one estimator fitted once on the whole (M, K) label
  matrix (scikit-learn multi-output). :func:`default_classifier` is mean
  imputation, standardisation and ridge regression of the 0/1 labels on the
  features for all classes at once, the penalty chosen by efficient
  leave-one-out cross-validation (``RidgeCV``), one linear solve for every class.
* class-wise (``classwise=True``): one clone of a binary classifier per class,
  by default :func:`default_classwise_classifier` (logistic regression; its
  :class:`LogisticColumns` solves every class's model in one vectorised call,
  about 9 s per fit for the Gene Ontology's 4,125 classes). This is
  the paper's setting (one SVM per class); the scores of different classes are
  on different scales, which the second stage's per-class score models undo.

Scores come from ``decision_function`` when the estimator has one, else
``predict_proba[:, 1]``, else ``predict`` (regressors such as the default), the
same method for every class (``method`` forces one). A class whose training
labels are all 0 or all 1 (in a fold, or overall) cannot be fitted; it gets a
constant score, the least committal one on the method's scale: its training
prevalence smoothed with Jeffreys' half count, ``q = (positives + 1/2) / (n + 1)``,
as log-odds ``log(q / (1 - q))`` for ``decision_function`` (about ``-log(2n)``
for no positive), as ``q`` for ``predict_proba``; for ``predict`` the label value
0 or 1, what a fit on constant labels predicts.

New rows are scored either by the estimator refitted on all training rows
(``refit=True``, the default, as ``StackingClassifier``) or by the average of
the fold models (``refit=False``, cross-fitting). ``bench/realdata_study.py
--first-stage-shift`` measures how far each moves the test scores from the
out-of-fold training scores the second stage is fitted on.

The functions :func:`out_of_fold_scores`, :func:`fit_first_stage` and
:func:`predict_scores` are the earlier functional interface, kept as thin
wrappers.
"""

from ._defaults import default_classifier, default_classwise_classifier
from ._functional import FirstStageModel, fit_first_stage, out_of_fold_scores, predict_scores
from ._logistic import LogisticColumns
from ._transformer import OutOfFoldScores

__all__ = [
    "FirstStageModel",
    "LogisticColumns",
    "OutOfFoldScores",
    "default_classifier",
    "default_classwise_classifier",
    "fit_first_stage",
    "out_of_fold_scores",
    "predict_scores",
]

"""The default first-stage estimators: joint ridge regression, or one logistic regression per class."""

import numpy as np


def default_classifier():
    """The default (joint) first stage: impute, standardise, multi-output ridge on 0/1 labels.

    ``SimpleImputer(strategy="mean")``, ``StandardScaler()`` and
    ``RidgeCV(alphas=numpy.logspace(-1, 4, 11))``, fitted jointly on all classes;
    its scores are the ridge predictions (a linear estimate of P(Y = 1 | x)).

    Returns
    -------
    sklearn.pipeline.Pipeline
        A new, unfitted pipeline.

    Examples
    --------
    >>> default_classifier().steps[-1][0]
    'ridgecv'
    """
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(
        SimpleImputer(strategy="mean"), StandardScaler(), RidgeCV(alphas=np.logspace(-1, 4, 11))
    )


def default_classwise_classifier():
    """The default class-wise first stage: impute, standardise, logistic regression per class.

    ``SimpleImputer(strategy="mean")``, ``StandardScaler()`` and
    :class:`LogisticColumns` (``LogisticRegression``'s model, L2 penalty,
    ``C=1``, for every class, solved to a gradient of 1e-8 C n); its scores are
    the decision function (log-odds). One call fits every class's model: the
    imputation and scaling are shared, the logistic regressions are not.

    Returns
    -------
    sklearn.pipeline.Pipeline
        A new, unfitted pipeline.

    Examples
    --------
    >>> default_classwise_classifier().steps[-1][0]
    'logisticcolumns'
    """
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ._logistic import LogisticColumns

    return make_pipeline(SimpleImputer(strategy="mean"), StandardScaler(), LogisticColumns())

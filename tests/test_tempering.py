"""hmcpgm.tempering: the logistic tail against scipy's expit, and one-line refusals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, logit

from hmcpgm import Hierarchy, InputError
from hmcpgm.tempering import own_evidence, temper, tempered_lpr, tempering_groups, with_prior


@settings(max_examples=60, deadline=None)
@given(log_ratio=st.floats(-700, 700), prevalence=st.floats(1e-6, 1 - 1e-6), a=st.floats(0, 1))
def test_tempered_posteriors_keep_their_relative_precision_in_the_tails(log_ratio, prevalence, a):
    """0.5 (1 + tanh(x / 2)) returned 0 below a log-odds of about -37 (tempered_lpr, own_evidence, with_prior),
    where the posterior is expit(x); the network engines gave the right value."""
    L = np.array([[[1.0, np.exp(log_ratio)]]])
    expect = expit(logit(prevalence) + a * log_ratio)
    np.testing.assert_allclose(tempered_lpr(L, [prevalence], a), [[expect]], rtol=1e-9, atol=0)
    indpt = expit(logit(prevalence) + log_ratio)  # own_evidence from the untempered posterior down to a
    if 1e-300 < indpt < 0.999:  # near 1, 1 - p in floating point limits any such correction (documented)
        np.testing.assert_allclose(own_evidence(np.array([[indpt]]), L, 1.0, a), [[expect]], rtol=1e-6, atol=0)
    if 1e-300 < expect < 1 - 1e-15:
        np.testing.assert_allclose(with_prior(np.array([[expect]]), np.array([-3.0])),
                                   [[expit(logit(expect) - 3.0)]], rtol=1e-9, atol=0)


def test_bad_tempering_inputs_are_refused_in_one_line():
    with pytest.raises(InputError, match="likelihoods must be >= 0, got -1.0"):
        temper([[[-1.0, 2.0]]], 0.5)
    with pytest.raises(InputError, match="likelihoods must be >= 0, got nan"):
        tempered_lpr([[[np.nan, 2.0]]], [0.5])
    with pytest.raises(InputError, match=r"prevalence must have shape \(1,\) or \(1, 1\)"):
        tempered_lpr([[[1.0, 2.0]]], [0.5, 0.5])
    with pytest.raises(InputError, match=r"prevalence must have shape \(3,\)"):
        tempered_lpr(np.ones((1, 3, 2)), [0.5, 0.5])
    with pytest.raises(InputError, match="a must be finite and >= 0, got nan"):
        temper([[[1.0, 2.0], [1.0, 3.0]]], [np.nan, 1.0])
    with pytest.raises(InputError, match=r"likelihoods must have shape \(1, 2, 2\)"):
        own_evidence(np.array([[0.5, 0.5]]), np.array([[[1.0, 4.0]]]), 0.5, 1.0)
    with pytest.raises(InputError, match="labels must hold only 0 and 1"):
        tempering_groups(Hierarchy.from_parents([None, 0, 0]), "frequency", np.array([[1, np.nan, 0], [1, 1, 0]]),
                         n_groups=2)

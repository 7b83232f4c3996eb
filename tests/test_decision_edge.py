"""Edge cases of cutoffs, the recalibration map and the ranking metrics."""

import numpy as np
import pytest

from hmcpgm import Hierarchy, hier_rank
from hmcpgm.metrics import precision_recall_at


@pytest.fixture
def chain():
    return Hierarchy.from_parents([None, 0])


# ---------------------------------------------------------------------- metrics of rankings
def test_precision_recall_at_without_events_is_nan(chain):
    # zero objects: no event to call, so precision and recall are 0 / 0
    ranking = hier_rank(np.zeros((0, 2)), chain)
    precision, recall = precision_recall_at(ranking, np.zeros((0, 2)), 0.5)
    assert np.isnan(precision) and np.isnan(recall)
    precision, recall = precision_recall_at(ranking, np.zeros((0, 2)), [0.1, 1.0])
    assert precision.shape == (2,) and np.isnan(precision).all() and np.isnan(recall).all()

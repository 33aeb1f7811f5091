"""The spacing rule's settled-rows stop (sklearn_attnclust._spacing.on_rows) at
extreme scales (review C of session 27): read in input units, the rows'
squared distances underflowed to 0 at 1e-200 (every row read as settled, the
merged pair on a big blob kept: audit F1 unmended) and ``spread ** 2``
overflowed at 1e200 (an OverflowError out of ``fit``)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer


def _small_near_big(seed=0):
    # three blobs of 2000 rows 30 apart, 60 rows 10 from the first (audit F1)
    rng = np.random.default_rng(seed)
    C = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 30.0], [30.0, 0.0]])
    return np.vstack([c + rng.normal(size=(m, 2)) for c, m in zip(C, [2000, 60, 2000, 2000])])


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_small_cluster_gets_a_head_at_any_scale(scale):
    X = _small_near_big()
    ref = AttentionQuantizer(4, random_state=0).fit(X)
    # the unit fit: one head on the small cluster (its 60 rows)
    assert np.linalg.norm(ref.cluster_centers_ - [10.0, 0.0], axis=1).min() < 1.0
    est = AttentionQuantizer(4, random_state=0).fit(X * scale)
    got = np.sort(est.cluster_centers_ / scale, axis=0)
    # (centres of spread-1 blobs 10 to 30 apart: 1e-6 is far above rounding, far
    # below the 9.7 the kept pair moved a centre by)
    np.testing.assert_allclose(got, np.sort(ref.cluster_centers_, axis=0), atol=1e-6)
    np.testing.assert_array_equal(est.labels_, ref.labels_)

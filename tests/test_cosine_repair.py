"""The cosine layer's split-merge trial on sparse rows (maths/cosine/repair.py)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.layers import cosine as layer
from sklearn_attnclust.maths.cosine.repair import split_merge_start


def _topics(n, d, topics, per_row, seed):
    """Unit CSR rows, each with ``per_row`` entries from its topic's block of the
    terms and as many from all the terms (as bench_sparse_point.synthetic_tfidf)."""
    rng = np.random.default_rng(seed)
    topic = rng.integers(topics, size=n)
    own = topic[:, None] * (d // topics) + rng.integers(d // topics, size=(n, per_row))
    cols = np.concatenate([own, rng.integers(d, size=(n, per_row))], axis=1)
    X = sp.csr_matrix((rng.exponential(1.0, cols.size), cols.ravel(),
                       np.arange(0, cols.size + 1, 2 * per_row)), shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    return X.tocsr(), topic


def _objective(X, labels, K):
    """The spherical k-means objective ``sum (1 - cos)`` of a partition, each
    cluster's centre the direction of its summed unit rows."""
    S = np.vstack([np.asarray(X[labels == h].sum(axis=0)).ravel() for h in range(K)])
    return X.shape[0] - np.linalg.norm(S, axis=1).sum()


def _centres(X, labels, K):
    S = np.vstack([np.asarray(X[labels == h].sum(axis=0)).ravel() for h in range(K)])
    return S / np.linalg.norm(S, axis=1, keepdims=True)


def _nearest(X, heads):
    A = np.asarray(X @ heads.T)
    labels = np.argmax(A, axis=1)
    return labels, A[np.arange(labels.size), labels]


def test_split_merge_parts_two_heads_on_one_cluster():
    # topics 0..3; heads 0 and 1 share topic 0 (halves of its rows), head 2 holds
    # topics 1 and 2 together, head 3 topic 3: the start splits head 2's rows and
    # merges the two halves of topic 0, and lowers the objective
    X, topic = _topics(2000, 400, 4, 10, 0)
    labels = topic.copy()
    zero = np.flatnonzero(topic == 0)
    labels[zero[: zero.size // 2]] = 1
    labels[topic == 1] = 2
    labels[topic == 2] = 2
    heads = _centres(X, labels, 4)
    labels, cos = _nearest(X, heads)
    start = split_merge_start(X, np.ones(X.shape[0]), None, heads, labels, cos)
    assert start is not None
    np.testing.assert_allclose(np.linalg.norm(start, axis=1), 1.0, rtol=1e-12)
    new_labels = _nearest(X, start)[0]
    assert adjusted_rand_score(topic, new_labels) > 0.9 > adjusted_rand_score(topic, labels)
    assert _objective(X, new_labels, 4) < _objective(X, labels, 4)


def test_split_merge_leaves_a_right_partition():
    # each head on its own topic: no split gains twice a merge's loss
    X, topic = _topics(2000, 400, 4, 10, 1)
    heads = _centres(X, topic, 4)
    labels, cos = _nearest(X, heads)
    assert split_merge_start(X, np.ones(X.shape[0]), None, heads, labels, cos) is None


def test_split_merge_needs_three_heads():
    X, topic = _topics(200, 60, 2, 5, 2)
    heads = _centres(X, topic, 2)
    labels, cos = _nearest(X, heads)
    assert split_merge_start(X, np.ones(X.shape[0]), None, heads, labels, cos) is None


def test_split_merge_weights_count_as_repeats():
    # a weight of 2 is a row given twice: the same start
    X, topic = _topics(600, 200, 3, 8, 3)
    labels = topic.copy()
    zero = np.flatnonzero(topic == 0)
    labels[zero[: zero.size // 2]] = 1
    labels[topic == 1] = 2
    heads = _centres(X, labels, 3)
    labels, cos = _nearest(X, heads)
    w = np.where(np.arange(X.shape[0]) % 3 == 0, 2.0, 1.0)
    twice = np.flatnonzero(w == 2.0)
    Xr = sp.vstack([X, X[twice]]).tocsr()
    lr, cr = np.concatenate([labels, labels[twice]]), np.concatenate([cos, cos[twice]])
    a = split_merge_start(X, np.ones(X.shape[0]), w, heads, labels, cos)
    b = split_merge_start(Xr, np.ones(Xr.shape[0]), None, heads, lr, cr)
    assert a is not None and b is not None
    np.testing.assert_allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("seed", [4])
def test_sparse_fit_with_swap_stage_reaches_the_topics(seed, monkeypatch):
    # rows dense enough for L-BFGS pairs (a swap stage): seeds whose fit ends with
    # two heads on one topic without the trials (3e4 x 2e4 rows, K = 10: 14 of 24
    # seeds reached the topics, 24 of 24 with them) at a lower risk with them
    X, topic = _topics(30000, 20000, 10, 25, 0)
    fitted = AttentionQuantizer(10, geometry="cosine", random_state=seed).fit(X)
    monkeypatch.setattr(layer, "split_merge_start", lambda *args: None)
    plain = AttentionQuantizer(10, geometry="cosine", random_state=seed).fit(X)
    assert adjusted_rand_score(topic, plain.labels_) < 0.95
    assert adjusted_rand_score(topic, fitted.labels_) > 0.99
    assert fitted.risk_ < plain.risk_


def test_two_empty_heads_are_not_the_merged_pair():
    # an empty head's merge costs nothing with any partner; two empty heads
    # merged would give no direction (and no trial): the pair holds a head with rows
    import scipy.sparse as sp

    from sklearn_attnclust.maths.cosine.repair import split_merge_start

    rng = np.random.default_rng(0)
    X = sp.csr_matrix(sp.random(300, 50, density=0.2, format="csr", random_state=1)
                      + sp.eye(300, 50, format="csr"))
    inv = 1 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    H = rng.standard_normal((5, 50))
    H /= np.linalg.norm(H, axis=1, keepdims=True)
    labels = rng.integers(2, 5, 300)  # (heads 0 and 1 empty, first in the pairs' order)
    start = split_merge_start(X, inv, None, H, labels, rng.random(300) * 0.2)
    assert start is not None
    np.testing.assert_allclose(np.linalg.norm(start, axis=1), 1.0, rtol=1e-12)

"""The layer contract: a new layer is one module plus one registry line.

The module below (a fixed-temperature Gaussian layer on the point layer's
chart, written here and registered under a test-only geometry) is all it
takes for ``AttentionQuantizer(geometry=GEOMETRY)`` to fit, predict and pass
scikit-learn's estimator checks; the registry is restored after each test.
Its maths derives from :class:`LayerMaths` with only what has no default
(no preconditioner, no relocation): the strategy runs it as it runs the
package's own layers.  It declares its per-block kernel, and reads its chart
and centres from a row source: it then fits a dask array through the layer
contract's generic fit, with no dask code of its own.
"""

import numpy as np
import pytest
from scipy.special import logsumexp, softmax
from sklearn.base import clone
from sklearn.cluster import kmeans_plusplus
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.utils.estimator_checks import check_estimator

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._assign import nearest_point
from sklearn_attnclust._init import canonical_order
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.layers import (Layer, LayerMaths, LayerState, Statistics, layer_class,
                                      register_layer, registered_geometries,
                                      unregister_layer)
from sklearn_attnclust.layers.base import missing_members, preconditioner_of, relocation_of
from sklearn_attnclust.layers.free_energy import FreeEnergyLayer
from sklearn_attnclust.maths.point.chart import PointChart
from sklearn_attnclust.rows.statistics import KernelStatistics

GEOMETRY = "gaussian-test"


# -- the new layer's module ---------------------------------------------------------
def gaussian_sums(Y, w, Z, beta, need_grad):
    """The kernel: the sums of a block of rows ``Y`` (chart units) at the points
    ``Z``: ``sum_i w_i F(y_i)``, and the masses ``sum_i w_i p_ih`` (K,) and
    ``sum_i w_i p_ih y_i`` (K, d) of the gradient."""
    L = -beta * ((Y[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)
    F = -logsumexp(L, axis=1) / beta
    value = float(np.sum(F) if w is None else F @ w)
    if not need_grad:
        return (value,)
    P = softmax(L, axis=1) * (1.0 if w is None else w[:, None])
    return value, P.sum(axis=0), P.T @ Y


def moment_sums(Y, w):
    """The rows' sum and sum of squared norms, of a block (unweighted)."""
    return Y.sum(axis=0), np.einsum("ij,ij->", Y, Y)


class GaussianStatistics(Statistics):
    """The rows in the chart's units and their weights: the kernel's sums in memory."""

    def __init__(self, Y, weights):
        self.Y, self.weights = Y, weights
        self.n_samples = Y.shape[0]
        self.total_weight = float(self.n_samples if weights is None else weights.sum())

    def sums(self, *args):
        return gaussian_sums(self.Y, self.weights, *args)


class GaussianMaths(LayerMaths):
    """``R = (1/W) sum_i w_i (-(1/beta) log sum_h exp(-beta |y_i - z_h|^2))`` at the
    heads' chart points ``z_h``: the free energy of a Gaussian mixture."""

    coarse_tol = 1e-2
    kernel = staticmethod(gaussian_sums)

    def __init__(self, n_clusters, beta, chart):
        self.n_clusters, self.beta, self.chart = n_clusters, beta, chart
        self.unit_root = self.kernel_scale = chart.spread
        self.kernel_offset = chart.offset

    def statistics(self, rows, weights):
        return GaussianStatistics(self.chart.scaled(rows), weights)

    def starts(self, rows, weights, init, rng):
        if isinstance(init, str):  # k-means++ over the rows in canonical order, so
            # that a row of weight 2 seeds as its two repeats do
            Y = self.chart.scaled(rows)
            order = canonical_order(Y)
            Z, _ = kmeans_plusplus(Y[order], self.n_clusters, random_state=rng,
                                   sample_weight=None if weights is None else weights[order])
            init = self.chart.offset + self.chart.spread * Z
        return self.chart.heads(np.asarray(init, dtype=np.float64))

    def risk(self, M, stats, return_grad=False):
        Z = self.chart.scaled_points(M)
        out = stats.sums(Z, self.beta, return_grad)
        W = stats.total_weight
        if not return_grad:
            return out[0] / W
        gZ = (2.0 / W) * (out[1][:, None] * Z - out[2])
        return out[0] / W, self.chart.pull_back(M, gZ), out[1] / W

    def stationarity(self, M, rgrad, masses):
        return float(np.linalg.norm(rgrad))


@register_layer(GEOMETRY, "free-energy")
class GaussianLayer(FreeEnergyLayer):
    """Clusters around points, soft at a fixed temperature in the chart's units."""

    geometry = GEOMETRY
    auto_temperature, n_random = 4.0, 10

    def _warm_start(self):
        return getattr(self, "centers", None)

    def _fit(self, X, w, rng, *, init=None, n_init=None):
        self.chart, _ = chart_from_data(X, w)
        if self.chart.spread == 0.0:  # every row the same point
            self.centers, self.fit_ = np.tile(self.chart.offset, (self.n_clusters, 1)), None
            return
        maths = GaussianMaths(self.n_clusters, self.temperature, self.chart)
        self.fit_ = self._descend(maths, X, w, maths.statistics(X, w), rng, init, n_init)
        self.centers = self.chart.points(self.fit_.heads)

    def fit(self, X, w, rng):
        self._fit(X, w, rng)

    def source_maths(self, rows):  # the chart from two passes over a row source
        n = rows.shape[0]
        mean = KernelStatistics(rows, moment_sums).sums()[0] / n
        spread = np.sqrt(KernelStatistics(rows, moment_sums, offset=mean).sums()[1] / n)
        return GaussianMaths(self.n_clusters, self.temperature, PointChart(mean, spread))

    def source_readouts(self, fit, maths, rows):
        self.chart, self.fit_ = maths.chart, fit
        self.centers = self.chart.points(fit.heads)

    def assign(self, X):
        return nearest_point(X, self.centers)

    def predict(self, X):
        return self.assign(X)[0]

    def predict_proba(self, X):
        X = np.asarray(X, dtype=np.float64)
        d2 = ((X[:, None, :] - self.centers[None, :, :]) ** 2).sum(axis=2)
        return softmax(-self.temperature * d2 / max(self.chart.spread, 1e-300) ** 2, axis=1)

    def transform(self, X):
        return (self.predict_proba(X) @ self.centers).astype(X.dtype, copy=False)

    def state(self, dtype):
        fit = self.fit_
        return LayerState(
            heads_=self.chart.heads(self.centers).astype(dtype) if fit else
            np.zeros((self.n_clusters, self.centers.shape[1] + 1), dtype),
            cluster_centers_=self.centers.astype(dtype), temperature_=self.temperature,
            risk_=fit.risk if fit else 0.0, n_iter_=fit.n_iter if fit else 0,
            risk_curve_=fit.risk_curve if fit else np.zeros(1),
        )


unregister_layer(GEOMETRY, "free-energy")  # registered by the fixture only
# -- end of the module ---------------------------------------------------------------


@pytest.fixture
def registered():
    register_layer(GEOMETRY, "free-energy")(GaussianLayer)
    yield
    unregister_layer(GEOMETRY, "free-energy")


def test_a_registered_layer_fits_and_predicts(registered):
    X, y = make_blobs(600, centers=3, n_features=2, cluster_std=0.6, random_state=0)
    aq = AttentionQuantizer(3, geometry=GEOMETRY, random_state=0).fit(X)
    assert isinstance(aq.layer_, GaussianLayer)
    assert adjusted_rand_score(y, aq.labels_) > 0.95
    assert adjusted_rand_score(aq.labels_, aq.predict(X)) == 1.0
    assert aq.cluster_centers_.shape == (3, 2) and aq.transform(X[:4]).shape == (4, 2)
    assert aq.risk_curve_[-1] <= aq.risk_curve_[0]
    assert not hasattr(aq, "score_samples")  # the layer offers no likelihood
    P = aq.predict_proba(X)
    assert np.allclose(P.sum(axis=1), 1.0) and np.array_equal(P.argmax(axis=1), aq.labels_)


def test_a_registered_layer_fits_on_dask(registered):
    # the generic fit of the layer contract: the layer's kernel over the dask
    # array's blocks (on dask's synchronous scheduler), its read-outs lazy
    da = pytest.importorskip("dask.array")
    import dask

    X, y = make_blobs(1500, centers=3, n_features=2, cluster_std=0.6, random_state=0)
    a = AttentionQuantizer(3, geometry=GEOMETRY, random_state=0).fit(X)
    Xd = da.from_array(X, chunks=(400, 2))
    with dask.config.set(scheduler="synchronous"):
        b = AttentionQuantizer(3, geometry=GEOMETRY, random_state=0).fit(Xd)
        labels, predicted = b.labels_.compute(), b.predict(Xd).compute()
        out = b.transform(Xd).compute()
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, atol=1e-7)
    assert adjusted_rand_score(a.labels_, labels) == 1.0
    assert np.array_equal(predicted, labels)
    assert b.inertia_ == pytest.approx(a.inertia_, rel=1e-9)
    np.testing.assert_allclose(out, a.transform(X), atol=1e-7)


def test_a_registered_layer_passes_the_estimator_checks(registered):
    check_estimator(AttentionQuantizer(3, geometry=GEOMETRY, random_state=0))


def test_unregistered_geometry_is_refused(registered):
    unregister_layer(GEOMETRY, "free-energy")
    try:
        assert GEOMETRY not in registered_geometries()
        with pytest.raises(ValueError, match="geometry"):
            AttentionQuantizer(2, geometry=GEOMETRY).fit(np.eye(3))
    finally:
        register_layer(GEOMETRY, "free-energy")(GaussianLayer)


def test_registry_resolves_the_package_layers():
    assert {"point", "direction", "cosine"} <= set(registered_geometries())
    assert layer_class("direction").__name__ == "DirectionLayer"
    assert layer_class("direction", "free-energy").__name__ == "AxisLayer"
    with pytest.raises(ValueError, match="risk='reconstruction'"):
        layer_class("point", "reconstruction")
    for geometry in ("point", "direction", "cosine"):
        assert issubclass(layer_class(geometry), Layer)


def test_each_layer_owns_its_temperature_rule():
    with pytest.raises(ValueError, match="temperature must be > 0"):
        AttentionQuantizer(2, temperature=0.0).fit(np.eye(3))
    with pytest.raises(ValueError, match="temperature='learn'"):
        AttentionQuantizer(2, geometry="direction", temperature="learn").fit(np.eye(3))
    # the linear layer is the competitive one at temperature 0 (allowed there)
    aq = AttentionQuantizer(2, geometry="direction", temperature=0.0, random_state=0)
    assert aq.fit(np.eye(3)[:, :2] + 0.1).temperature_ == 0.0


def test_maths_protocol_defaults():
    maths = GaussianMaths(2, 1.0, chart_from_data(np.eye(3))[0])
    assert missing_members(maths) == []
    assert maths.preconditioner(None, None) is None and maths.relocate(None, [], None) is None
    assert preconditioner_of(maths) is None and relocation_of(maths) is None

    class Legacy:  # a maths class of the older protocol: None members
        preconditioner = relocate = None

    assert preconditioner_of(Legacy()) is None and relocation_of(Legacy()) is None


@pytest.mark.parametrize("geometry, risk", [("point", "auto"), ("direction", "auto"),
                                            ("direction", "free-energy"), ("cosine", "auto")])
def test_package_maths_follow_the_protocol(geometry, risk):
    # (structurally: the maths classes derive from LayerMaths once merged)
    X, _ = make_blobs(200, centers=2, n_features=3, random_state=0)
    aq = AttentionQuantizer(2, geometry=geometry, risk=risk, random_state=0).fit(np.abs(X))
    maths = getattr(aq.layer_, "maths", None)
    if maths is not None:
        assert missing_members(maths) == []
    state = aq.layer_.state(np.float64)
    assert isinstance(state, LayerState)
    assert clone(aq).fit(np.abs(X)).n_iter_ == aq.n_iter_


@pytest.mark.parametrize("params, expected", [
    ({}, 1), ({"init": "random"}, 10), ({"temperature": "learn"}, 1),
    ({"geometry": "cosine", "temperature": "learn"}, 3),
    ({"temperature": "learn", "init": "random"}, 10),
    ({"geometry": "direction", "init": "random"}, 5),
    ({"geometry": "direction", "init": lambda X, K, rs: X[:K]}, 1),
    ({"geometry": "direction", "risk": "free-energy", "init": lambda X, K, rs: X[:K]}, 5),
    ({"geometry": "cosine", "init": "random"}, 10), ({"n_init": 4}, 4),
])
def test_n_init_auto_is_resolved_once_by_the_layer(params, expected):
    from sklearn_attnclust.layers import make_layer

    assert make_layer(AttentionQuantizer(3, **params).get_params()).n_init == expected


def test_explicit_centres_give_one_start_with_a_warning():
    from sklearn_attnclust.layers import make_layer

    params = AttentionQuantizer(2, init=np.eye(2), n_init=3).get_params()
    with pytest.warns(RuntimeWarning, match="only one init"):
        assert make_layer(params).n_init == 1


@pytest.mark.parametrize("geometry, risk", [(GEOMETRY, "free-energy"),
                                            ("direction", "free-energy"), ("cosine", "auto")])
def test_generic_fit_on_rows_in_memory(registered, geometry, risk):
    # the generic fit reads any row source: on rows in memory (threads), the
    # layer's fit to the sums' order
    from sklearn_attnclust.layers import make_layer
    from sklearn_attnclust.rows.memory import MemoryRows

    X = np.abs(make_blobs(2000, centers=3, n_features=3, random_state=1)[0])
    params = AttentionQuantizer(3, geometry=geometry, risk=risk, random_state=0).get_params()
    a, b = make_layer(params), make_layer(params)
    a.fit(X, None, a.make_rng(0))
    assert b.fit_source(MemoryRows(X), b.make_rng(0)) is b
    np.testing.assert_allclose(b.centers, a.centers, atol=1e-7)
    assert np.array_equal(b.predict(X), a.predict(X))


def test_a_layer_without_a_kernel_refuses_a_row_source():
    from sklearn_attnclust.layers import make_layer
    from sklearn_attnclust.rows.memory import MemoryRows

    layer = make_layer(AttentionQuantizer(2, temperature="learn").get_params())
    with pytest.raises(ValueError, match="temperature='learn' fits numpy arrays"):
        layer.fit_source(MemoryRows(np.eye(3)), layer.make_rng(0))

"""scikit-learn's own estimator checks over the attention estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_attnclust import AttentionQuantizer, InContextQuantizer

_CLUSTERING_IN_2D = (
    "check_clustering sets n_clusters=3 on 2-feature blobs; the heads of "
    "AttentionQuantizer are n_clusters <= n_features directions."
)


def _expected_failed_checks(estimator):
    # the check's blobs are standardised: lift="auto" fits the lifted layer,
    # whose heads live in n_features + 1 dimensions and need not be orthogonal
    if isinstance(estimator, AttentionQuantizer) and (
        estimator.lift is False or estimator.attention == "linear"
        or estimator.context_length is not None
    ):
        return {"check_clustering": _CLUSTERING_IN_2D}
    return {}


@parametrize_with_checks(
    [
        AttentionQuantizer(random_state=0),
        AttentionQuantizer(lift=False, random_state=0),
        AttentionQuantizer(lift=True, n_init=2, random_state=0),
        AttentionQuantizer(attention="linear", init="random", random_state=0),
        AttentionQuantizer(context_length=3, solver="projected", random_state=0),
        InContextQuantizer(),
        InContextQuantizer(attention="softmax", context_size=50, random_state=0),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)

"""scikit-learn's own estimator checks over the attention estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_attnclust import AttentionQuantizer, InContextQuantizer

_CLUSTERING_IN_2D = (
    "check_clustering sets n_clusters=3 on 2-feature blobs; the heads of the "
    "direction layers are n_clusters <= n_features directions."
)
_UNWEIGHTED = (
    "the direction layers' context moments are unweighted: unequal sample "
    "weights are supported by geometry='point' only."
)


def _expected_failed_checks(estimator):
    if not isinstance(estimator, AttentionQuantizer):
        return {}
    if estimator.geometry == "direction" and estimator.risk == "free-energy":
        return {"check_clustering": _CLUSTERING_IN_2D}
    if estimator.geometry == "direction":
        return {
            "check_clustering": _CLUSTERING_IN_2D,
            "check_sample_weight_equivalence_on_dense_data": _UNWEIGHTED,
            "check_sample_weights_not_overwritten": _UNWEIGHTED,
        }
    return {}


@parametrize_with_checks(
    [
        AttentionQuantizer(random_state=0),
        AttentionQuantizer(init="random", n_init=2, temperature=4.0, random_state=0),
        AttentionQuantizer(2, geometry="direction", random_state=0),
        AttentionQuantizer(2, geometry="direction", attention="linear", init="random",
                           random_state=0),
        AttentionQuantizer(2, geometry="direction", risk="free-energy", random_state=0),
        AttentionQuantizer(2, geometry="direction", context_length=3, solver="projected",
                           random_state=0),
        InContextQuantizer(),
        InContextQuantizer(attention="softmax", context_length=50, random_state=0),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)

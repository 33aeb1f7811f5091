"""Shared by the tests of the direction layers' float32 passes (not a test module)."""

import sklearn_attnclust.maths.sizes as sizes
from sklearn_attnclust.datasets import make_orthogonal_mixture


def mixed_rows_and_spy(monkeypatch, cls):
    """Rows over ``sizes.MIXED_MIN_SIZE`` (patched to 1000: 3000 x 12, three
    orthogonal clusters), their labels and a list of ``(statistics, float32 statistics)``, one
    per call of ``cls.low_precision``."""
    X, y, _ = make_orthogonal_mixture(3000, 12, 3, sigma=0.3, random_state=4)
    monkeypatch.setattr(sizes, "MIXED_MIN_SIZE", 1000)
    calls = []
    original = cls.low_precision

    def spy(self, st):
        calls.append((st, original(self, st)))
        return calls[-1][1]

    monkeypatch.setattr(cls, "low_precision", spy)
    return X, y, calls

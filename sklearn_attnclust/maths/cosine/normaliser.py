"""The von Mises-Fisher normaliser of the cosine layer's likelihood (moved out of
:mod:`.maths`, which re-exports it; the same functions)."""

import numpy as np
from scipy.special import gammaln, ive

__all__ = ["log_bessel_iv", "log_bessel_iv_debye", "vmf_log_normaliser"]


def log_bessel_iv(v, x):
    """``log I_v(x)`` for ``v >= 0``, ``x > 0``: from ``scipy.special.ive`` where
    it is a normal number, else by the uniform asymptotic (Debye) expansion,
    whose leading term is accurate to ``O(1 / v)`` in relative terms, there
    beyond ``ive``'s range (large ``v`` against ``x``)."""
    v, x = float(v), float(x)
    with np.errstate(under="ignore", over="ignore"):
        e = float(ive(v, x))
    if np.isfinite(e) and e > 1e-280:
        return float(np.log(e) + x)
    return log_bessel_iv_debye(v, x)


def log_bessel_iv_debye(v, x):
    """``log I_v(x)`` by the uniform asymptotic expansion in ``v`` (two terms)."""
    v, x = float(v), float(x)
    # I_v(x) ~ exp(v eta) / (sqrt(2 pi v) (1 + z^2)^1/4), z = x / v,
    # eta = sqrt(1 + z^2) + log(z / (1 + sqrt(1 + z^2)))
    if v == 0:
        return float(x - 0.5 * np.log(2 * np.pi * x))
    z = x / v
    s = np.sqrt(1.0 + z * z)
    t = 1.0 / s
    # the first correction u1(t) / v of the series
    u1 = (3.0 * t - 5.0 * t**3) / 24.0
    return float(v * (s + np.log(z / (1.0 + s))) - 0.5 * np.log(2 * np.pi * v)
                 - 0.5 * np.log(s) + np.log1p(u1 / v))


def vmf_log_normaliser(d, kappa):
    """``log C_d(kappa)``, the von Mises-Fisher density on the unit sphere of ``R^d``
    being ``C_d(kappa) exp(kappa <mu, y>)`` (with respect to the sphere's area):
    ``C_d = kappa^(d/2-1) / ((2 pi)^(d/2) I_(d/2-1)(kappa))``; at ``kappa = 0``
    the uniform density ``Gamma(d/2) / (2 pi^(d/2))``."""
    d, kappa = int(d), float(kappa)
    if kappa == 0.0:
        return float(gammaln(d / 2.0) - np.log(2.0) - (d / 2.0) * np.log(np.pi))
    v = d / 2.0 - 1.0
    return float(v * np.log(kappa) - (d / 2.0) * np.log(2 * np.pi) - log_bessel_iv(v, kappa))

"""Fitting the heads: the risk of ``_attention`` minimised on the spheres of ``_sphere``.

This is the strategy layer between the mathematics and the estimator: it
builds the data statistics once, makes the temperature and the penalty
scale-free, runs the optimiser from each start and keeps the best.  On large
data the starts are optimised on a sample first (coarse-to-fine), and large
float64 fits run their passes in float32 until a float64 check (mixed
precision, :data:`MIXED_MIN_SIZE`).  It knows nothing of scikit-learn.
"""

import sys
from dataclasses import dataclass

import numpy as np

from ._attention import (
    ContextStatistics,
    attention_risk,
    typical_head_score,
)
from ._blocks import N_THREADS, one_blas_thread
from ._sphere import minimize_on_spheres

__all__ = ["HeadsFit", "fit_heads", "coarse_sample_size"]


@dataclass
class HeadsFit:
    """Outcome of :func:`fit_heads` (the best start)."""

    heads: np.ndarray
    scale: float
    beta: float
    second: np.ndarray
    risk: float
    n_iter: int
    risk_curve: np.ndarray
    converged: bool
    line_search_failed: bool
    grad_norm: float
    tol: float
    n_iter_coarse: int = 0
    coarse_size: int = 0


def default_chunk_size(n_samples, n_features, n_heads):
    """Rows per chunk of the passes over the data: 1024 to 4096.

    The temporaries of a chunk hold about 50 K numbers per row (per
    thread); within the range, the chunk is the largest whose temporaries
    over all threads stay below the size of the data (measured on
    n = 10^4 to 2 10^5, d = 8 to 64, K = 8 and 32: chunks of 2048 to 4096
    rows are also the fastest, 8192 is slower by up to half).
    """
    rows = int(n_samples) * int(n_features) // (50 * max(int(n_heads), 1) * N_THREADS)
    return int(min(max(rows, 1024), 4096))


#: The smallest ``tol`` of a fit on float32 input, ``sqrt(eps)`` of float32:
#: the relative decrease test compares ``tol**2`` with risks held in float32.
FLOAT32_TOL = float(np.sqrt(np.finfo(np.float32).eps))


#: Smallest float64 data (``n * d`` entries, 4 MiB) whose coarse-to-fine fit
#: runs its passes in float32 until the float64 check.  Measured (orthonormal
#: mixtures, n = 3 10^4 to 2 10^5, d = 8 to 64, K = 2 to 32): 12 to 30 % less
#: fit time.  Smaller fits take tens of milliseconds and keep the float64
#: passes, whose results do not depend on how the rows are chunked (a dask
#: fit equals the numpy one to 1e-8); float32 sums do, at float32's rounding.
MIXED_MIN_SIZE = 2**19


#: L-BFGS pairs of both stages of a coarse-to-fine fit (8 elsewhere), whose
#: steps cost passes over many rows rather than the pairs' small array
#: operations.  The full-data stage starts with the coarse stage's pairs: at
#: n = 200000, d = 32, K = 8 it takes 6 passes with 16 pairs, 7 with 8.
LARGE_FIT_MEMORY = 16


#: Fits on more than ``COARSE_FACTOR`` times the coarse sample size start on a sample.
COARSE_FACTOR = 4

#: Gradient tolerance of the coarse stage (at least ``tol``).  The coarse
#: optimum is off the full-data one by the sample's noise (a full-data gradient
#: of about 3e-3 at 2048 rows per head), so solving the sample beyond 1e-3 buys
#: nothing.  Measured (four seeds): 200000 x 32, K = 8, 8.8 -> 8.2 full-data
#: evaluations' worth of work; 100000 x 128, 10.5 -> 9.0; the centroid distances
#: unchanged to 1e-3.
COARSE_TOL = 1e-3


#: From this many rows on, a sample of about 2000 rows per head that would be
#: too large for the coarse stage is cut to ``1 / (COARSE_FACTOR + 1)`` of the
#: data, so that many heads on large data still start on a sample.
COARSE_CAP_ROWS = 65536


def coarse_sample_size(n_samples, n_heads, n_features):
    """Rows of the random sample of the coarse stage of :func:`fit_heads`.

    About 2000 points per head, and at least ``8 d`` of them; the statistical
    error of the coarse optimum is then well below the distance the fine
    stage, on all the data, has to cover.  On data of at least
    :data:`COARSE_CAP_ROWS` rows where that sample would exceed
    ``n / COARSE_FACTOR`` (many heads), it is cut to ``n / (COARSE_FACTOR + 1)``
    rows: the coarse optimum is noisier, and the full-data stage, which
    starts from it, still ends at the full-data optimum.  Measured at
    n = 100000, d = 64, K = 32: fits 1.1 to 1.9 s instead of 1.9 to 2.9 s,
    the same centroid distances (three seeds).
    """
    m = int(max(2048 * max(int(n_heads), 1), 8 * int(n_features), 4096))
    n = int(n_samples)
    if n >= COARSE_CAP_ROWS and n <= COARSE_FACTOR * m:
        m = max(n // (COARSE_FACTOR + 1), 4096)
    return m


def fit_heads(
    X,
    make_starts,
    *,
    attention="competitive",
    temperature=2.0,
    context_length=None,
    scale=None,
    alpha=0.0,
    solver="riemannian",
    learning_rate=1.0,
    max_iter=300,
    tol=1e-6,
    verbose=0,
    random_state=None,
    coarse="auto",
    chunk_size=None,
    n_heads=None,
    stats=None,
):
    """Minimise the attention risk over the heads from several starts.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Validated data (float64 or float32).
    make_starts : callable
        ``make_starts(second, sample) -> iterable of (K, d) unit starts``,
        given the data's second moment and the rows to seed from (the coarse
        sample, or ``X``).
    attention : {"competitive", "linear"}
    temperature : float
        Relative to :func:`typical_head_score`; ignored for the linear layer.
    context_length : int or None
    scale : float or None
        Fixed output scale, or None to profile it out.
    alpha : float
        Orthogonality penalty, relative to the data's mean squared norm.
    solver, learning_rate, max_iter, tol :
        As in :func:`minimize_on_spheres`; ``tol`` is raised to the square
        root of the machine epsilon for float32 data.  ``max_iter`` bounds
        each stage.
    verbose : int
        Print the risk at each step when positive.
    random_state : numpy.random.Generator or None
        Draws the coarse sample (None: a fixed seed).
    coarse : "auto" or bool
        Coarse-to-fine: optimise from every start on a random sample of
        :func:`coarse_sample_size` rows, keep the best start by its risk on
        all the data, and polish it on all the data to ``tol``, so the result
        is the full-data optimum.  ``"auto"`` does so when the risk needs a
        pass over the data and ``n`` exceeds ``COARSE_FACTOR`` times the
        sample size.
    chunk_size : int or None
        Rows per chunk in the passes over the data (None:
        :func:`default_chunk_size`).
    n_heads : int or None
        Number of heads the starts have, to size the coarse sample (None:
        ``d``, the largest possible).
    stats : ContextStatistics-like, optional
        Precomputed statistics of ``X`` (streamed moments, or the chunked
        statistics of a dask array from ``_dask``); computed from ``X``
        when None.  ``X`` is then only sampled (rows ``X[index]``).
    Returns
    -------
    HeadsFit
        The start of lowest (penalised) risk.  Heads are not yet signed.
        ``n_iter`` and ``risk_curve`` are those of the full-data stage.

    Raises
    ------
    ValueError
        When the risk is not finite at any start.
    """
    rms = 1.0
    if stats is None and isinstance(X, np.ndarray):
        # the fit is scale-free; far from unit scale the risk's sixth powers
        # of x under- or overflow (in float32 above all), so fit X / rms
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            mean_sq = float(np.mean(np.einsum("ij,ij->i", X, X, dtype=np.float64)))
        if np.isfinite(mean_sq) and mean_sq > 0 and not (1e-4 <= mean_sq <= 1e4):
            rms = float(np.sqrt(mean_sq))
            X = X / X.dtype.type(rms)
    with one_blas_thread():
        # the skinny products (n, d) x (d, 2K) run several times faster on
        # one BLAS thread than on several
        result = _fit_heads(
            X, make_starts, attention=attention, temperature=temperature,
            context_length=context_length, scale=scale, alpha=alpha, solver=solver,
            learning_rate=learning_rate, max_iter=max_iter, tol=tol, verbose=verbose,
            random_state=random_state, coarse=coarse, chunk_size=chunk_size,
            n_heads=n_heads, stats=stats,
        )
    if rms != 1.0:  # back to the scale of the input
        c2 = rms**2
        result.scale /= c2
        result.beta /= c2
        result.risk *= c2
        result.risk_curve = result.risk_curve * c2
        result.second = (result.second.astype(np.float64) * c2).astype(result.second.dtype)
    return result


def _fit_heads(X, make_starts, *, attention, temperature, context_length, scale, alpha,
               solver, learning_rate, max_iter, tol, verbose, random_state, coarse,
               chunk_size, n_heads, stats):
    linear = attention == "linear"
    L = context_length
    needs_data = not (linear and L is None)
    n, d = X.shape
    K_max = int(n_heads) if n_heads is not None else d
    if chunk_size is None:
        chunk_size = default_chunk_size(n, d, K_max)
    def make_stats(rows, keep_data=True):
        st = ContextStatistics.from_data(rows, keep_data=keep_data,
                                         need_fourth=L is not None)
        st.chunk_size = chunk_size
        return st

    if stats is None:
        stats = make_stats(X, keep_data=needs_data)
    norm = stats.mean_sq_norm
    dtype = X.dtype
    if dtype != np.float64:
        tol = max(tol, FLOAT32_TOL)
    abs_alpha = alpha * norm
    rng = random_state if random_state is not None else np.random.default_rng(0)

    def risk_at(M, st, beta, return_grad=False):
        """``(risk, scale[, grad])`` of the layer being fitted."""
        return attention_risk(
            M.astype(dtype, copy=False), st, beta=beta, context_length=L,
            scale=scale, alpha=abs_alpha, return_grad=return_grad,
        )

    last = {}  # the last evaluation on the full data: heads, risk, scale

    def objectives(st, beta):
        def evaluate(M, return_grad):
            out = risk_at(M, st, beta, return_grad=return_grad)
            if st is stats:
                last.update(heads=np.array(M, copy=True), risk=out[0], scale=out[1])
            return out

        def objective(M):
            risk, _, grad = evaluate(M, True)
            return risk / norm, grad.astype(np.float64, copy=False) / norm

        def value(M):
            return evaluate(M, False)[0] / norm

        return objective, value

    callback = None
    if verbose:
        def callback(it, value, gnorm, step):
            print(
                f"Iteration {it}: risk {value * norm:.6g}, "
                f"gradient norm {gnorm:.3g}, step {step:.3g}",
                file=sys.stdout,
            )

    def run(st, M0, stage_tol, cb, pairs=None, memory=8, steps=None):
        objective, value = objectives(st, beta)
        return minimize_on_spheres(
            objective, M0, solver=solver, learning_rate=learning_rate,
            max_iter=max_iter if steps is None else steps, tol=stage_tol, callback=cb,
            value_fun=value, step_rule="lbfgs", pairs=pairs, memory=memory,
        )

    # the coarse sample: the starts are seeded from it and first optimised on it
    m = coarse_sample_size(n, K_max, d)
    large = coarse is True or (coarse == "auto" and n > COARSE_FACTOR * m)
    use_coarse = needs_data and max_iter > 0 and large
    sample, sample_stats = X, None
    if large:  # the starts are seeded from a sample in any case
        idx = np.sort(rng.choice(n, size=min(m, n), replace=False))
        sample = np.asarray(X[idx])  # a dask array's sample is computed here
    elif not isinstance(sample, np.ndarray):
        sample = np.asarray(sample)  # a small dask array: seed from all of it
    # mixed precision: a large float64 fit runs its passes in float32 (at half
    # the cost: the values agree with float64 to about 1e-8, relatively, the
    # sums being accumulated in float64) until the last, float64 stage; the
    # float32 chunks hold as many bytes as the float64 ones
    mixed = (use_coarse and dtype == np.float64 and n * d >= MIXED_MIN_SIZE
             and hasattr(stats, "astype"))
    if use_coarse:
        sample_stats = make_stats(sample)
        if mixed:
            sample_stats = sample_stats.astype(np.float32, chunk_size=2 * chunk_size)
    second = stats.second

    best = None
    beta = 0.0
    coarse_results = []
    for M0 in make_starts(second, sample):
        if best is None and not coarse_results and not linear:
            beta = temperature / typical_head_score(stats.second, M0.shape[0])
        if use_coarse:
            res = run(sample_stats, M0, max(tol, COARSE_TOL), None, memory=LARGE_FIT_MEMORY)
            if not np.all(np.isfinite(res.heads)) or not np.isfinite(res.value):
                continue
            coarse_results.append((res.heads, res.n_iter, res.pairs))
            continue
        res = run(stats, M0, tol, callback)
        if not np.all(np.isfinite(res.heads)) or not np.isfinite(res.value):
            continue
        if best is None or res.value < best.value:
            best = res
    n_iter_coarse = 0
    if use_coarse and len(coarse_results) > 1:
        # several starts: keep the one of lowest risk on all the data
        full_value = objectives(stats, beta)[1]
        scored = [(full_value(r[0]), r) for r in coarse_results]
        scored = [(v, r) for v, r in scored if np.isfinite(v)]
        coarse_results = [min(scored, key=lambda t: t[0])[1]] if scored else []
    if use_coarse and coarse_results:
        M1, n_iter_coarse, pairs = coarse_results[0]
        # the sample's curvature is the full data's up to sampling noise: the
        # full-data stage starts with the coarse stage's L-BFGS memory
        first = None
        if mixed:  # to tol in float32, then checked (and if need be finished) in float64
            first = run(stats.astype(np.float32, chunk_size=2 * chunk_size), M1, tol,
                        callback, pairs=pairs, memory=LARGE_FIT_MEMORY)
            if np.all(np.isfinite(first.heads)) and np.isfinite(first.value):
                M1, pairs = first.heads, first.pairs
            else:
                first = None
        if first is not None and first.grad_norms[-1] <= tol:
            # converged on the gradient, which float32 gives to about 1e-8 (far
            # below tol); the risk is then evaluated once in float64, below
            best = first
        else:
            # the float32 and float64 steps share max_iter
            steps = max_iter - (first.n_iter if first is not None else 0)
            best = run(stats, M1, tol, callback, pairs=pairs, memory=LARGE_FIT_MEMORY,
                       steps=steps)
            if first is not None:  # one curve: the float32 steps, then the float64 ones
                best.values = first.values + best.values[1:]
                best.grad_norms = first.grad_norms + best.grad_norms[1:]
                best.n_iter += first.n_iter
        if not np.all(np.isfinite(best.heads)) or not np.isfinite(best.value):
            best = None
    if best is None:
        raise ValueError("The risk was not finite at any start; check the scale of X.")
    if alpha == 0 and "heads" in last and np.array_equal(last["heads"], best.heads):
        risk, lam = last["risk"], last["scale"]  # no penalty: the risk is known
    else:
        risk, lam = attention_risk(
            best.heads.astype(dtype), stats, beta=beta, context_length=L, scale=scale
        )
    return HeadsFit(
        heads=best.heads,
        scale=float(lam),
        beta=float(beta),
        second=stats.second,
        risk=float(risk),
        n_iter=int(best.n_iter),
        risk_curve=np.asarray(best.values, dtype=np.float64) * norm,
        converged=bool(best.converged),
        line_search_failed=bool(best.line_search_failed),
        grad_norm=float(best.grad_norms[-1]),
        tol=float(tol),
        n_iter_coarse=int(n_iter_coarse),
        coarse_size=int(sample_stats.n_samples) if use_coarse else 0,
    )

"""The temperature scan of the softmax stack (:func:`.in_context.stack_fixed_points`):
the relative temperatures in increasing order, the first with ``K`` substantial fixed
points kept; flows whose seeds merge into fewer than ``K`` groups given up and run to
their ends only where no temperature is kept.  Moved out of :mod:`.in_context` (at its
500 lines).  This module knows nothing of scikit-learn.
"""

__all__ = ["HELD_FLOWS", "scan_temperatures"]

#: Flows given up whose state the scan holds, to go on with where no temperature is
#: kept (the first ones; the later ones start again there): each holds the seeds'
#: weights and scores, ``24 q m`` bytes (6 MB at 500 seeds on 500 tokens), so that
#: a scan of 17 temperatures holds no more than 2 of them however many it gives up.
HELD_FLOWS = 2


def scan_temperatures(taus, run, flat, refine, n_clusters):
    """:func:`.in_context.stack_fixed_points`'s relative temperatures ``taus`` in
    increasing order: the first whose flow (``run(tau, give_up)``; ``run`` None:
    ``flat()``'s one point at every temperature) has ``n_clusters`` substantial
    fixed points, ``n_clusters`` distinct once refined (``refine``), is kept.  A
    scan of several temperatures gives a flow up (``run`` returns a function that
    runs it on) where its seeds merge into fewer than ``n_clusters`` groups
    (:func:`.gram_steps.low_precision_flow`): that temperature has fewer fixed
    points, and its flow goes on to its end only where no temperature is kept (the
    best of the scan is then the one it would have been, no step of the first
    :data:`HELD_FLOWS` run twice).
    Returns (centers, tau, count), or None where no temperature is kept, and the
    best temperature's (tau, points, sizes, count): the first of most substantial
    fixed points."""
    best, merged = None, []  # (merged: temperatures whose flows were given up)
    for tau in taus:
        found = flat() if tau == 0 or run is None else run(tau, len(taus) > 1)
        if callable(found):  # (given up: found runs the flow on to its end)
            merged.append((tau, found if len(merged) < HELD_FLOWS else None))
            continue
        points, sizes, count = found
        if best is None or count > best[3]:
            best = (tau, points, sizes, count)
        if count >= n_clusters:
            centers = refine(tau, points)
            if centers.shape[0] >= n_clusters:
                return (centers, float(tau), count), best
    for tau, finish in merged:  # (no temperature kept: these flow on to their ends)
        points, sizes, count = finish() if finish is not None else run(tau)
        if best is None or count > best[3] or (count == best[3] and tau < best[0]):
            best = (tau, points, sizes, count)
    return None, best

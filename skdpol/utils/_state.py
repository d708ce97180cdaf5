"""All-or-nothing updates of an estimator's state."""

import copy

import numpy as np

# the mutable curator state of every estimator (algorithm objects and the RNG)
LIVE_STATE = ("_algo", "_ftl", "_rng")


def run_transaction(obj, method, *args):
    """Run ``method(*args)``; on any error restore ``obj.__dict__`` as it was.

    The mutable curator state is deep-copied *together*, so objects it
    shares (an algorithm holding the estimator's generator) stay shared.

    numpy's floating-point reports are switched off for the whole call: an
    overflow, underflow or invalid operation on the rows (a label within a
    factor ``y_bound`` of the largest float, a subnormal feature) would
    otherwise surface as a ``RuntimeWarning`` -- or, under a user's
    ``np.seterr(all="raise")``, a ``FloatingPointError`` -- for one row and
    not for its neighbour, and warnings and errors are part of what an
    observer sees. Every private path clips or rejects what such an operation
    could produce (NaN/inf rows are refused by an explicit check, overflowed
    norms clip the row to zero), so nothing is lost by silencing them here.
    """
    saved = dict(obj.__dict__)
    saved.update(copy.deepcopy({k: saved[k] for k in LIVE_STATE if k in saved}))
    try:
        with np.errstate(all="ignore"):
            return method(*args)
    except BaseException:
        obj.__dict__.clear()
        obj.__dict__.update(saved)
        raise

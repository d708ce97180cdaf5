"""Bounds, clipping and budget checks.

Clipping is what makes a sensitivity hold for *any* input: every row is
projected onto the L2 ball of radius ``data_norm`` and every label onto
``[-y_bound, y_bound]`` before any data-dependent computation.
"""

import numbers

import numpy as np


def check_privacy_params(epsilon, delta):
    """Validate a privacy budget; raise ``ValueError`` naming the parameter."""
    if not isinstance(epsilon, numbers.Real) or not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}.")
    if not isinstance(delta, numbers.Real) or not (0 <= delta < 1):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}.")


def row_norms_max(X):
    """Largest L2 norm of the rows of ``X`` (0 for an empty array)."""
    if X.shape[0] == 0:
        return 0.0
    return float(np.sqrt(np.einsum("ij,ij->i", X, X).max()))


def clip_rows(X, bound):
    """Project every row of ``X`` onto the L2 ball of radius ``bound``.

    Returns a new array; ``X`` is not modified.
    """
    X = np.asarray(X, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    # rows already inside the ball keep a factor of exactly 1.0
    scale = np.minimum(1.0, bound / np.maximum(norms, np.finfo(np.float64).tiny))
    return X * scale[:, None]


def clip_labels(y, bound):
    """Clip labels to ``[-bound, bound]``."""
    return np.clip(np.asarray(y, dtype=np.float64), -bound, bound)

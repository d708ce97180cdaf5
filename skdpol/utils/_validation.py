"""Bounds, clipping and budget checks.

Clipping is what makes a sensitivity hold for *any* input: every row is
projected onto the L2 ball of radius ``data_norm`` and every label onto
``[-y_bound, y_bound]`` before any data-dependent computation.
"""

import numpy as np


def row_norms_max(X):
    """Largest L2 norm of the rows of ``X`` (0 for an empty array)."""
    if X.shape[0] == 0:
        return 0.0
    return float(np.sqrt(np.einsum("ij,ij->i", X, X).max()))


def clip_rows(X, bound):
    """Project every row of ``X`` onto the L2 ball of radius ``bound``.

    ``X`` is never modified: when no row needs clipping it is returned as it
    is (no copy, the common case on the hot path), otherwise a clipped copy.
    """
    X = np.asarray(X, dtype=np.float64)
    sq_norms = np.einsum("ij,ij->i", X, X)
    over = sq_norms > bound**2
    if not over.any():
        return X
    X = X.copy()
    X[over] *= (bound / np.sqrt(sq_norms[over]))[:, None]
    return X


def clip_labels(y, bound):
    """Clip labels to ``[-bound, bound]``."""
    return np.clip(np.asarray(y, dtype=np.float64), -bound, bound)

"""Bounds, clipping and budget checks.

Clipping is what makes a sensitivity hold for *any* input: every row is
projected onto the L2 ball of radius ``data_norm`` and every label onto
``[-y_bound, y_bound]`` before any data-dependent computation.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import assert_all_finite


def row_norms_max(X):
    """Largest L2 norm of the rows of ``X`` (0 for an empty array)."""
    if X.shape[0] == 0:
        return 0.0
    if sp.issparse(X):  # from the nonzeros (utils._sparse), never densified
        from ._sparse import as_csr, row_sq_norms
        return float(np.sqrt(row_sq_norms(as_csr(X)).max()))
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


def clip_rows_in_place(U, radius, raw=None, shrink=1.0):
    """Scale the rows of ``U`` whose norm exceeds ``radius`` onto the radius
    times ``shrink``, in place, and check ``raw`` (the array ``U`` was made
    from, default ``U``) for NaN and infinity on the way.

    The finiteness check reads the squared row norms this computes anyway
    (free, and a second line behind ``validate_data``'s): a non-finite norm
    sends ``raw`` to :func:`sklearn.utils.assert_all_finite`, which raises
    its usual "Input X contains NaN / infinity" error. A norm that is
    infinite only because large finite values overflowed when squared (or
    scaled) is clipped along the row's direction, computed from its largest
    entries without overflow (dividing by an infinite norm would zero it).
    """
    sq = np.einsum("ij,ij->i", U, U)
    if not np.isfinite(sq).all():
        assert_all_finite(raw if raw is not None else U, input_name="X")
    over = ~(sq <= radius * radius)
    if over.any():
        scale_rows_onto(U, over, radius, shrink)
    return U


def scale_rows_onto(U, which, radius, shrink=1.0):
    """Scale the rows ``U[which]`` (nonzero, not NaN) onto norm ``radius *
    shrink``, in place, along their direction, without overflow: an
    infinite entry (a scaling that overflowed) gives the direction alone."""
    rows = U[which]
    inf = np.isinf(rows)  # X times a scale overflowed: the direction is the infinite part's
    with_inf = inf.any(axis=1)
    rows[with_inf] = np.where(inf[with_inf], np.sign(rows[with_inf]), 0.0)
    rows /= np.abs(rows).max(axis=1, keepdims=True)  # > 0 on these rows: no overflow below
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]
    U[which] = rows * (radius * shrink / norms)

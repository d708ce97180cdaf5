"""Symmetric matrices as vectors whose L2 norm is the Frobenius norm.

Off-diagonal entries are stored once, multiplied by sqrt(2), so isotropic
noise on the packed vector is symmetric noise on the matrix with variance
s^2 on the diagonal and s^2 / 2 off it, and the sensitivity of a packed sum is
the Frobenius norm of the matrix difference.
"""

import functools

import numpy as np

_SQRT2 = np.sqrt(2.0)


def packed_dim(d):
    return d * (d + 1) // 2


@functools.lru_cache(maxsize=64)
def _weights(d):
    rows, cols = np.triu_indices(d)
    w = np.where(rows == cols, 1.0, _SQRT2)
    for a in (rows, cols, w):
        a.flags.writeable = False  # shared by every caller through the cache
    return rows, cols, w


def pack_symmetric(M):
    """Pack a symmetric (…, d, d) array into (…, d(d+1)/2)."""
    d = M.shape[-1]
    rows, cols, w = _weights(d)
    return M[..., rows, cols] * w


def unpack_symmetric(p, d):
    """Inverse of :func:`pack_symmetric`."""
    rows, cols, w = _weights(d)
    out = np.zeros(p.shape[:-1] + (d, d))
    vals = p / w
    out[..., rows, cols] = vals
    out[..., cols, rows] = vals
    return out

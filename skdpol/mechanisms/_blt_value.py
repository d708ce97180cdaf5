"""The BLT value and its closed forms (the stream: :mod:`._blt`).

A BLT (Dvijotham, McMahan, Pillutla, Steinke and Thakurta 2024; McMahan, Xu
and Zhang 2024) is a lower-triangular Toeplitz C whose coefficients are
c_0 = 1, c_k = sum_j omega_j theta_j^(k-1) (k >= 1): generating function
c(x) = 1 + sum_j omega_j x / (1 - theta_j x). Its inverse is again a BLT
(c(x) = 1 + x omega^T (I - x Theta)^-1 1 is a state-space transfer
function, and 1 / c(x) = 1 - x omega^T (I - x (Theta - 1 omega^T))^-1 1):
C^-1 has coefficients 1 and sum_j nu_j lambda_j^(k-1), lambda the
eigenvalues of Theta - 1 omega^T. Both multiply a stream online with one buffer
per j, and every quantity below (sensitivity, max and mean error) has a
closed form in O(buffers^2), so the parameters are optimised for a horizon
of 10^6 steps in well under a second.
"""

import dataclasses
import math
from functools import lru_cache

import numpy as np

__all__ = ["BLT"]


def _series_one(q, n, weighted):
    """sum_{k=0}^{n-1} w_k q^k with w_k = 1 or (n - k), for -1 < q <= 1.

    Closed forms (1 - q^n) / (1 - q) and (n (1 - q) - q (1 - q^n)) / (1 - q)^2
    lose every digit when n (1 - q) is small; there the binomial series
    sum_j (-u)^j C(n, j + 1) (resp. C(n + 1, j + 2)), u = 1 - q, converges
    fast."""
    u = 1.0 - q
    if n * abs(u) < 1e-2:
        w = 1 if weighted else 0
        top = n + w
        total, term, j = 0.0, float(math.comb(top, 1 + w)), 0
        while True:
            total += term
            j += 1
            # C(top, j + 1 + w) / C(top, j + w) = (top - j - w) / (j + 1 + w)
            term *= -u * (top - j - w) / (j + 1 + w)
            if abs(term) <= 1e-17 * abs(total) or j > 60:
                return total
    # 1 - q^n, accurate for q near 1 too
    e = -math.expm1(n * math.log1p(-u)) if q > 0 else 1.0 - q**n
    if not weighted:
        return e / u
    return (n * u - q * e) / u**2


def _series(q, n, weighted=False):
    """Elementwise :func:`_series_one`, vectorised where the closed form holds."""
    q = np.asarray(q, dtype=np.float64)
    u = 1.0 - q
    small = n * np.abs(u) < 1e-2
    with np.errstate(all="ignore"):
        e = np.where(q > 0, -np.expm1(n * np.log1p(-u)), 1.0 - q**n)
        out = e / u if not weighted else (n * u - q * e) / u**2
    if np.any(small):
        # _series_one element by element (a loop, not np.vectorize's lambda:
        # one frame less on a stream's release path; the same values)
        qs = np.where(small, q, 0.0)
        exact = np.empty(qs.shape)
        for i, v in enumerate(qs.flat):
            exact.flat[i] = _series_one(float(v), int(n), weighted)
        out = np.where(small, exact, out)
    return out


@dataclasses.dataclass(frozen=True)
class BLT:
    """A BLT ``C`` with coefficients 1, sum_j omega_j theta_j^(k-1).

    ``omega > 0`` and ``0 <= theta < 1`` (one buffer each). ``inverse``
    gives the poles ``lam`` and weights ``nu`` of ``C^-1``'s coefficients
    1, sum_j nu_j lam_j^(k-1).
    """

    omega: tuple
    theta: tuple

    def __post_init__(self):
        w, t = np.asarray(self.omega, float), np.asarray(self.theta, float)
        if w.shape != t.shape or w.ndim != 1:
            raise ValueError("omega and theta must be 1-d of one length.")
        if not (np.all(w > 0) and np.all(t >= 0) and np.all(t < 1)):
            raise ValueError("a BLT needs omega > 0 and 0 <= theta < 1.")

    @property
    def inverse(self):
        """(lam, nu) of C^-1: 1 / c(x) = 1 + sum_j nu_j x / (1 - lam_j x)."""
        return _inverse(tuple(self.omega), tuple(self.theta))

    # ------------------------------------------------------------ coefficients
    def coefficients(self, n):
        """c_0..c_(n-1): C's first column."""
        k = np.arange(1, n)
        w, t = np.asarray(self.omega), np.asarray(self.theta)
        return np.concatenate([[1.0], (w[:, None] * t[:, None] ** (k - 1)).sum(axis=0)])

    def inverse_coefficients(self, n):
        """The first column of C^-1."""
        lam, nu = self.inverse
        k = np.arange(1, n)
        return np.concatenate([[1.0], (nu[:, None] * lam[:, None] ** (k - 1)).sum(axis=0)])

    # ------------------------------------------------------- closed forms
    def sensitivity(self, n):
        """Largest column norm of C (n x n): sqrt(1 + sum_{k=1}^{n-1} c_k^2)."""
        return _column_norm(self, int(n))

    def _noise_terms(self):
        # B = A C^-1 is Toeplitz with b_k = sum_{s<=k} (C^-1)_s
        #   = beta - sum_j gamma_j lam_j^k
        # _inverse directly (its cache is C code): no property frame on a
        # stream's release path (noise_std_at -> _sum_b2 -> here)
        lam, nu = _inverse(tuple(self.omega), tuple(self.theta))
        gamma = nu / (1.0 - lam)
        return 1.0 + gamma.sum(), gamma, lam

    def max_error(self, n):
        """Noise std of the last prefix sum per unit noise on y: sqrt(sum_k b_k^2)."""
        return math.sqrt(_last_sum_b2(self, int(n), False))

    def rms_error(self, n):
        """Root mean square over t = 1..n of the prefix sums' noise std."""
        return math.sqrt(_sum_b2(self, n, True) / n)


def _sum_b2(blt, n, weighted):
    # sum_k w_k b_k^2 (w_k = 1 or n - k) from the geometric series of the poles
    beta, gamma, lam = blt._noise_terms()
    # sum_k w_k 1^k: n, or n (n + 1) / 2 weighted (what _series(1.0, n) returns,
    # exactly, without its element loop: one frame less on a release path)
    ones = float(math.comb(n + 1, 2)) if weighted else float(n)
    total = (beta**2 * ones
             - 2.0 * beta * (gamma * _series(lam, n, weighted)).sum()
             + (np.outer(gamma, gamma) * _series(np.outer(lam, lam), n, weighted)).sum())
    return max(float(total), 0.0)


def _sensitivity(blt, n):
    w, t = np.asarray(blt.omega), np.asarray(blt.theta)
    cross = np.outer(w, w) * _series(np.outer(t, t), n - 1)
    return math.sqrt(1.0 + float(cross.sum()))


# every release of a BLT stream reads the sensitivity of its prefix (the
# spend so far, BLTPrefixSum.event): ~60 us a time in closed form, looked up
# after the first (a function of the public design and n alone)
_column_norm = lru_cache(maxsize=4096)(_sensitivity)

# every release of a stream reads sum_k b_k^2 at its length (its public noise
# std, BLT.max_error): ~0.1 ms a time in closed form, looked up after the
# first; called as _last_sum_b2(blt, n, False), the cache being C code (no
# Python frame between a stream's noise_std_at and the closed form)
_last_sum_b2 = lru_cache(maxsize=4096)(_sum_b2)


@lru_cache(maxsize=64)
def _inverse(omega, theta):
    # c(x) = 1 + x w^T (I - x T)^-1 1 with T = diag(theta) is a state-space
    # transfer function; its inverse is 1 - x w^T (I - x (T - 1 w^T))^-1 1,
    # so C^-1's coefficients are -w^T M^(k-1) 1 with M = T - 1 w^T: with
    # M = V diag(lam) V^-1, nu_j = -(w^T V)_j (V^-1 1)_j
    w, t = np.asarray(omega, float), np.asarray(theta, float)
    M = np.diag(t) - np.outer(np.ones_like(w), w)
    lam, V = np.linalg.eig(M)
    nu = -(w @ V) * np.linalg.solve(V, np.ones_like(w))
    if np.max(np.abs(lam.imag), initial=0) > 1e-9 or np.max(np.abs(nu.imag), initial=0) > 1e-9:
        raise ValueError("this BLT's inverse has complex poles.")
    lam, nu = lam.real, nu.real
    if not np.all((lam > -1) & (lam < 1)):
        raise ValueError("this BLT's inverse is not stable (a pole outside (-1, 1)).")
    return lam, nu

"""Seed 003's kernel online regularised least squares (KORLS) in feature space.

Rows arrive already mapped to features, phi_t in R^D with ||phi_t|| <= kappa
(kappa = 1 for :class:`~skdpol.kernel.RandomFourierFeatures`), and labels
clipped to |y_t| <= M (``y_bound``). Row t = 1, 2, ... (rows, not rounds)
updates

    w_{t+1} = w_t - eta_t [(<w_t, phi_t> - y_t) phi_t + lambda_t w_t],  w_1 = 0,
    eta_t = (t + t0)^-theta,  lambda_t = (t + t0)^-(1 - theta),  1/2 < theta < 1,

seed 003 eq. (3) with K_x = phi(x): f(x) = <w, phi(x)> and ||f||_K = ||w||
(w stays in the span of the rows). A round is ``batch_size`` rows, learned
one after the other as in the seed; only the releases are per round.

eta_t lambda_t = 1 / (t + t0) exactly, so 1 - eta_t lambda_t =
(t + t0 - 1) / (t + t0) and products of it telescope:
prod_{s=i+1..t} (1 - eta_s lambda_s) = (i + t0) / (t + t0).

Contraction
-----------
w_{t+1} = A_t w_t + eta_t y_t phi_t, A_t = (1 - eta_t lambda_t) I - eta_t phi_t phi_t^T,
whose eigenvalues lie in [1 - eta_t (kappa^2 + lambda_t), 1 - eta_t lambda_t].
The seed's condition t0^theta >= kappa^2 + 1 (enforced) gives
eta_t < t0^-theta <= 1 / (kappa^2 + 1) and lambda_t < 1, so
eta_t (kappa^2 + lambda_t) <= 1: A_t is PSD and ||A_t|| <= 1 - eta_t lambda_t.

Norm bound (public, data-independent)
-------------------------------------
||w_{t+1}|| <= ||A_t|| ||w_t|| + eta_t kappa M, so ||w_t|| <= B_t with B_1 = 0,
B_{t+1} = (1 - eta_t lambda_t) B_t + eta_t kappa M; times (t + t0) this is a sum,

    B_{t+1} = kappa M / (t + t0) * sum_{i=1..t} (i + t0)^(1 - theta).

By induction B_{t+1} <= kappa M / lambda_t, the seed's Lemma 2; for t >> t0 the
ratio is about 1 / (2 - theta).

Sensitivity of every release (replace-one)
------------------------------------------
Replace row i by (phi', y'). Both streams reach the same w_i and their
lambda terms cancel:

    d_{i+1} = w_{i+1} - w'_{i+1} = -eta_i [(phi phi^T - phi' phi'^T) w_i - (y phi - y' phi')].

-phi' phi'^T <= phi phi^T - phi' phi'^T <= phi phi^T, so that matrix has norm
<= kappa^2, and ||y phi - y' phi'|| <= 2 kappa M; with ||w_i|| <= B_i,

    ||d_{i+1}|| <= c_i = eta_i kappa (kappa B_i + 2 M).

(Bounding each row's residual on its own, as the seed's eq. (16) does, gives
2 eta_i kappa (kappa B_i + M), up to twice as large once B_i >> M.) After row
i both streams apply the same A_t, so ||d_{t+1}|| <= (1 - eta_t lambda_t) ||d_t||
and the iterate after row t moves by at most

    Delta_t = max_{i<=t} c_i (i + t0) / (t + t0) = max(c_t, (1 - eta_t lambda_t) Delta_{t-1}).

This holds for every t and whichever row was replaced (earlier rounds
included), so each release of :class:`~skdpol.online.OutputPerturbation` is
charged its own Delta; the composition over releases is done there.
c_i (i + t0) = (i + t0)^(1 - theta) kappa (kappa B_i + 2 M) grows with i, so
the maximum is the last row's, Delta_t = c_t ~ t^(1 - 2 theta); the code keeps
the running maximum anyway (free, and independent of that monotonicity).

The seed's Theorem 1 only changes the last row and states
C_t = 2 (kappa^2 + 1) kappa M / (t - 1 + t0)^(2 theta - 1) (eq. 12, an RKHS-norm
bound; its eq. 17 multiplies by kappa for the sup norm, since
||f||_inf <= kappa ||f||_K). Output perturbation of w needs the RKHS
(Euclidean) norm; :func:`seed_sensitivity` returns C_t for comparison.

Floating point
--------------
The bounds are proved in exact arithmetic. ``sensitivity()`` and
``norm_bound()`` multiply them by 1 + 1e-9 (``SAFETY``), which covers the
feature norms (rows are accepted up to kappa (1 + 1e-12), and the bounds grow
at most like kappa^3) and the evaluation of the public sums (compensated,
relative error below 1e-12). It does *not* cover rounding inside the iterate:
every row adds about u ||w_t|| (u = 2^-53), contracted only by
(i + t0) / (t + t0), so the computed iterate can drift from the exact one by
up to about u B_t t (u B_t sqrt(t) for random rounding errors), against
Delta_t ~ B_t t^-theta: a relative excess of up to u t^(1 + theta) in the
worst case (3e-6 at t = 10^6, theta = 0.75). Measured against an 80-bit
reference (D = 50, theta = 0.75, 2 10^5 rows) the drift stays near 2e-12
Delta_t, since ||w_t|| << B_t and the data term contracts too. See
docs/security.md (floating-point caveat).

References
----------
Seed 003, *A Study on Differential Private Online Learning*, J. Computer and
Communications 5 (2017) 28-33: eq. (3), Lemma 2, Theorem 1.
"""

import math
from numbers import Integral, Real

import numpy as np
from scipy.linalg.blas import daxpy, ddot, dscal

from ..online import RoundBuffer

SAFETY = 1e-9  # relative inflation of the public bounds, see "Floating point"
NORM_TOLERANCE = 1e-12  # rows may exceed kappa by this (rounding of phi)
_BLOCK = 4096  # rows of the public schedule computed at once


def default_t0(theta, kappa=1.0):
    """Smallest t0 with t0**theta >= kappa**2 + 1 (in floating point).

    Examples
    --------
    >>> t0 = default_t0(0.75)
    >>> t0 ** 0.75 >= 2.0, round(t0, 6)
    (True, 2.519842)
    """
    target = kappa * kappa + 1.0
    t0 = target ** (1.0 / theta)
    # the power rounds: step to the first float that satisfies the condition
    while t0 ** theta < target:
        t0 = math.nextafter(t0, math.inf)
    while math.nextafter(t0, 0.0) ** theta >= target:
        t0 = math.nextafter(t0, 0.0)
    return t0


def step_sizes(t, theta, t0):
    """eta_t = (t + t0)^-theta and lambda_t = (t + t0)^-(1 - theta) for rows t >= 1."""
    n = np.asarray(t, dtype=np.float64) + t0
    return n ** -theta, n ** -(1.0 - theta)


def seed_sensitivity(t, theta, t0, kappa, y_bound):
    """Seed 003's C_t = 2 (kappa^2 + 1) kappa M / (t - 1 + t0)^(2 theta - 1) (eq. 12).

    The seed's f_t has seen rows 0..t-1, the last with step
    (t - 1 + t0)^-theta; :class:`KernelORLS` after n rows last stepped with
    (n + t0)^-theta, so compare its ``sensitivity()`` with
    ``seed_sensitivity(n + 1, ...)``.
    """
    n = np.asarray(t, dtype=np.float64) - 1.0 + t0
    return 2.0 * (kappa * kappa + 1.0) * kappa * y_bound / n ** (2.0 * theta - 1.0)


def seed_norm_bound(t, theta, t0, kappa, y_bound):
    """Seed 003's Lemma 2, kappa M / lambda_t; bounds the iterate after row t."""
    return kappa * y_bound * (np.asarray(t, dtype=np.float64) + t0) ** (1.0 - theta)


def _two_sum(hi, lo, x):
    """Add x to the compensated sum hi + lo (Neumaier)."""
    s = hi + x
    if abs(hi) >= abs(x):
        lo += (hi - s) + x
    else:
        lo += (x - s) + hi
    return s, lo


def _positive(name, value, *, allow_none=False):
    if allow_none and value is None:
        return None
    if (not isinstance(value, Real) or isinstance(value, bool)
            or not math.isfinite(value) or value <= 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")
    return float(value)


class KernelORLS(RoundBuffer):
    """Seed 003's online regularised least squares on feature rows.

    The iterate ``W`` (1, D) is curator state;
    :class:`~skdpol.online.OutputPerturbation` publishes noisy copies of it,
    calibrated by :meth:`sensitivity` (derivation in the module docstring).

    Parameters
    ----------
    n_components : int
        Dimension D of the feature rows.
    theta : float
        In (1/2, 1): eta_t = (t + t0)^-theta, lambda_t = (t + t0)^-(1 - theta).
    y_bound : float
        M: labels must lie in [-M, M] (clipped by the caller).
    t0 : float or None
        Offset of the schedule; must satisfy t0**theta >= kappa**2 + 1.
        None: the smallest such t0, ``default_t0(theta, kappa)``.
    kappa : float
        Bound on the feature norms (1 for random Fourier features).
    batch_size : int
        Rows per round (releases happen after complete rounds).
    horizon : int or None
        Rounds planned (None: unbounded).

    Attributes
    ----------
    W : ndarray of shape (1, D)
        The exact (non-private) iterate after the last complete round.
    radius : float
        Public bound on ||W|| now (:meth:`norm_bound`); projecting a noisy
        release onto this ball is free post-processing and never moves it
        away from W.
    free_rounds : int
        0: every round reads its rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.kernel import RandomFourierFeatures
    >>> rng = np.random.default_rng(0)
    >>> rff = RandomFourierFeatures(2, 64, gamma=1.0, rng=rng)
    >>> X = rng.uniform(-1, 1, size=(500, 2))
    >>> y = np.clip(np.sin(3 * X[:, 0]), -1, 1)
    >>> algo = KernelORLS(n_components=64, theta=0.75, y_bound=1.0, batch_size=10)
    >>> algo.learn(rff.transform(X), y)
    >>> algo.n_rounds, algo.W.shape
    (50, (1, 64))
    >>> round(algo.sensitivity(), 4), round(algo.norm_bound(), 2)
    (0.0545, 3.79)
    >>> round(float(seed_sensitivity(501, 0.75, algo.t0, 1.0, 1.0)), 4)  # seed's C_t
    0.1784
    >>> bool(np.linalg.norm(algo.W) <= algo.norm_bound())
    True
    """

    def __init__(self, *, n_components, theta, y_bound, t0=None, kappa=1.0,
                 batch_size=1, horizon=None):
        if not isinstance(n_components, Integral) or n_components < 1:
            raise ValueError(f"n_components must be a positive integer, got {n_components!r}.")
        if (not isinstance(theta, Real) or isinstance(theta, bool)
                or not 0.5 < theta < 1.0):
            raise ValueError(f"theta must lie in the open interval (1/2, 1), got {theta!r}.")
        if not isinstance(batch_size, Integral) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
        if horizon is not None and (not isinstance(horizon, Integral) or horizon < 1):
            raise ValueError(f"horizon must be a positive integer or None, got {horizon!r}.")
        self.theta = float(theta)
        self.y_bound = _positive("y_bound", y_bound)
        self.kappa = _positive("kappa", kappa)
        t0 = _positive("t0", t0, allow_none=True)
        if t0 is None:
            t0 = default_t0(self.theta, self.kappa)
        elif t0 ** self.theta < self.kappa ** 2 + 1.0:
            raise ValueError(
                f"t0={t0!r} violates t0**theta >= kappa**2 + 1 (theta={self.theta}, "
                f"kappa={self.kappa}): the step would not contract; the smallest "
                f"valid t0 is {default_t0(self.theta, self.kappa)!r}.")
        self.t0 = t0
        super().__init__(n_features=n_components, n_outputs=1,
                         batch_size=batch_size, horizon=horizon)
        self.n_components = int(n_components)
        self.W = np.zeros((1, self.n_components))
        self.free_rounds = 0
        self._build_schedule(0, 0.0, 0.0, 0.0)

    # -- public, data-independent schedule -------------------------------------------

    def _build_schedule(self, start, hi, lo, peak):
        """Steps and bounds of rows start+1 .. start+_BLOCK (public: index only).

        hi + lo is sum_{i<=start} kappa M (i + t0)^(1 - theta), compensated so
        that its relative error stays ~u however many blocks came before; the
        cumulative sum inside a block adds at most _BLOCK u ~ 5e-13.
        """
        theta, kappa, M = self.theta, self.kappa, self.y_bound
        n = self.t0 + np.arange(start + 1, start + _BLOCK + 1, dtype=np.float64)
        grow = n ** (1.0 - theta)  # eta_t (t + t0)
        terms = (kappa * M) * grow  # u_{t+1} - u_t, u_t = B_t (t - 1 + t0)
        csum = np.cumsum(terms)
        u_before = hi + (lo + np.concatenate(([0.0], csum[:-1])))
        peak_here = grow * kappa * (kappa * u_before / (n - 1.0) + 2.0 * M)  # c_t (t + t0)
        self._block_start = start  # rows before the block's first row
        self._carry = (hi, lo)
        # arrays, not lists: the estimator deep-copies its state on every call
        self._eta = n ** -theta
        self._shrink = (n - 1.0) / n  # 1 - eta_t lambda_t
        self._terms = terms
        self._u_after = hi + (lo + csum)
        self._peak_after = np.maximum.accumulate(np.maximum(peak_here, peak))

    def _schedule_offset(self, first):
        """Index in the block of row ``first + 1``, moving to the next block if needed."""
        offset = first - self._block_start
        if offset < len(self._eta):
            return offset
        hi, lo = _two_sum(*self._carry, math.fsum(self._terms))  # exact block sum
        self._build_schedule(first, hi, lo, float(self._peak_after[-1]))
        return 0

    def _bound_index(self):
        return self.n_rows_used - 1 - self._block_start

    def sensitivity(self):
        """Replace-one sensitivity (L2) of ``W`` now (0 before any round)."""
        n = self.n_rows_used
        if n == 0:
            return 0.0
        return (1.0 + SAFETY) * float(self._peak_after[self._bound_index()]) / (n + self.t0)

    def norm_bound(self):
        """Public bound B on ||W|| now (0 before any round)."""
        n = self.n_rows_used
        if n == 0:
            return 0.0
        return (1.0 + SAFETY) * float(self._u_after[self._bound_index()]) / (n + self.t0)

    @property
    def radius(self):
        return self.norm_bound()

    # -- learning ---------------------------------------------------------------------

    @property
    def published(self):
        return self.W

    def _publish(self):
        pass

    def run(self, X, y):
        """Check the rows' bounds, then consume them (see :meth:`RoundBuffer.run`)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_components or y.shape != (X.shape[0],):
            raise ValueError(
                f"expected feature rows of shape (n, {self.n_components}) and n labels, "
                f"got shapes {X.shape} and {y.shape}.")
        # the sensitivity proof needs both bounds on every row; refuse before any update
        limit = (self.kappa * (1.0 + NORM_TOLERANCE)) ** 2
        bad = ~(np.einsum("ij,ij->i", X, X) <= limit)
        if bad.any():
            raise ValueError(
                f"{int(bad.sum())} feature rows (first: row {int(np.argmax(bad))}) have a "
                f"norm above kappa={self.kappa} or non-finite values; nothing was learned.")
        bad = ~(np.abs(y) <= self.y_bound)
        if bad.any():
            raise ValueError(
                f"{int(bad.sum())} labels (first: row {int(np.argmax(bad))}) lie outside "
                f"[-y_bound, y_bound] with y_bound={self.y_bound}; clip them first. "
                "Nothing was learned.")
        yield from super().run(X, y)

    def _round(self, X, y):
        first = self.n_rows_used  # rows before this round
        count = X.shape[0]
        labels = y.tolist()
        row = self.W[0]
        v = row
        done = 0
        while done < count:  # one piece per schedule block
            j = self._schedule_offset(first + done)
            take = min(count - done, len(self._eta) - j)
            etas = self._eta[j:j + take].tolist()  # Python floats: cheap in the loop
            shrinks = self._shrink[j:j + take].tolist()
            # w = sigma v: the shrink (1 - eta lambda) multiplies sigma, not the
            # vector, so a row costs one dot and one axpy (BLAS, in place on v);
            # indexing beats iterating over X, whose iterator costs more than a row
            sigma = 1.0
            for k in range(take):
                phi = X[done + k]
                residual = sigma * ddot(v, phi) - labels[done + k]
                sigma *= shrinks[k]
                v = daxpy(phi, v, a=-(etas[k] * residual / sigma))
            v = dscal(sigma, v)
            done += take
        if v is not row:  # BLAS copied (W not contiguous float64): write back
            row[...] = v

"""Data-independent random Fourier features of norm exactly one.

Seed 003 learns in the RKHS of a Mercer kernel K and releases f_t + b_t. A
kernel expansion f_t = sum_i a_i K(x_i, .) contains the training rows, so
releasing it would publish them whatever the noise on the coefficients. A
random feature map phi: R^d -> R^D with phi(x).phi(x') ~ K(x, x') fixes the
representation instead: the model is a vector w in R^D, and the map depends
only on (n_features, kernel, gamma) and the RNG, never on data, so it can be
published with the model.

Paired features
---------------
With m = n_components / 2 frequencies omega_1..omega_m (rows of Omega),

    phi(x) = sqrt(1 / m) [cos(Omega x), sin(Omega x)],

so ||phi(x)||^2 = (1 / m) sum_j (cos^2 + sin^2) = 1 for every x: kappa = 1
exactly (the usual single-cosine map with random phases has
||phi(x)|| <= sqrt(2) only, and a data-dependent norm). The privacy bound of
:class:`~skdpol.kernel.KernelORLS` needs sup ||phi(x)|| = kappa, so paired
features are what make kappa = 1 hold for *every* input, not on average.
In floating point the norm is 1 within a few units in the last place.

phi(x).phi(x') = (1 / m) sum_j cos(omega_j . (x - x')), an unbiased estimate
of the shift-invariant kernel whose spectral density the omega_j follow
(Bochner), with variance ((1 + K(2 delta)) / 2 - K(delta)^2) / m,
delta = x - x':

* ``"rbf"``: K(x, x') = exp(-gamma ||x - x'||_2^2), omega ~ N(0, 2 gamma I);
* ``"laplacian"``: K(x, x') = exp(-gamma ||x - x'||_1), omega_k i.i.d.
  Cauchy(0, gamma) (the product of the one-dimensional transforms).

Intercept
---------
With ``intercept=True`` a constant feature is appended and the whole vector is
scaled so that the norm stays exactly one:

    phi(x) = [sqrt(1 / 2) phi_rff(x), sqrt(1 / 2)],

i.e. the kernel learned is (K + 1) / 2. Giving the constant half of the unit
norm balances it against the kernel part (both have K(x, x) = 1 / 2); the
intercept is then sqrt(1 / 2) times the last coefficient and is regularised
like the others (seed 003's lambda_t shrinks the whole RKHS norm).
"""

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

KERNELS = ("rbf", "laplacian")


class RandomFourierFeatures:
    """Paired random Fourier features with ||phi(x)||_2 = 1 for every x.

    Parameters
    ----------
    n_features : int
        Input dimension d.
    n_components : int
        Number of random features 2 m (even: cosine and sine of m
        frequencies), excluding the intercept feature.
    kernel : {"rbf", "laplacian"}
        exp(-gamma ||x - x'||_2^2) or exp(-gamma ||x - x'||_1).
    gamma : float
        Kernel width, > 0. It must not be derived from the data (it fixes
        the public feature map).
    intercept : bool
        Append the constant feature sqrt(1 / 2) and scale the random part by
        sqrt(1 / 2) (the kernel becomes (K + 1) / 2, the norm stays 1).
    rng : numpy.random.Generator, int or None
        Draws the frequencies, once, in the constructor.

    Attributes
    ----------
    frequencies : ndarray of shape (n_components // 2, n_features)
        Omega; public (data-independent).
    n_features_out : int
        Length of phi(x): n_components (+ 1 with the intercept).

    Examples
    --------
    >>> import numpy as np
    >>> rff = RandomFourierFeatures(3, 8, gamma=0.5, rng=0)
    >>> Z = rff.transform(np.array([[0.0, 1.0, 2.0], [1e6, -3.0, 0.5]]))
    >>> Z.shape
    (2, 8)
    >>> np.allclose(np.linalg.norm(Z, axis=1), 1.0), rff.kappa
    (True, 1.0)
    """

    def __init__(self, n_features, n_components, *, kernel="rbf", gamma=1.0,
                 intercept=False, rng=None):
        if not isinstance(n_features, Integral) or n_features < 1:
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}.")
        if (not isinstance(n_components, Integral) or n_components < 2
                or n_components % 2):
            raise ValueError(
                "n_components must be an even integer >= 2 (cosine and sine of "
                f"n_components // 2 frequencies), got {n_components!r}.")
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}.")
        if (not isinstance(gamma, Real) or isinstance(gamma, bool)
                or not math.isfinite(gamma) or gamma <= 0):
            raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}.")
        self.n_features = int(n_features)
        self.n_components = int(n_components)
        self.kernel = kernel
        self.gamma = float(gamma)
        self.intercept = bool(intercept)
        rng = np.random.default_rng(rng)
        m = self.n_components // 2
        shape = (m, self.n_features)
        if kernel == "rbf":
            self.frequencies = rng.standard_normal(shape) * math.sqrt(2.0 * self.gamma)
        else:
            self.frequencies = rng.standard_cauchy(shape) * self.gamma
        self.n_features_out = self.n_components + int(self.intercept)
        # sqrt(1/m) makes the random part unit norm; the intercept halves it
        self._scale = math.sqrt((0.5 if self.intercept else 1.0) / m)

    @property
    def kappa(self):
        """sup_x ||phi(x)||_2 = sqrt(sup K(x, x)): exactly 1."""
        return 1.0

    def transform(self, X):
        """Map rows to features: one matrix product, one cosine, one sine.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Phi : ndarray of shape (n_samples, n_features_out), float64
            Rows of norm 1.
        """
        # sparse rows (CSR / CSC): the projections X @ frequencies.T are a
        # sparse product; only the features, (n, n_components), are dense
        sparse = sp.issparse(X)
        X = X.astype(np.float64, copy=False) if sparse else np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features}), got shape {X.shape}.")
        with np.errstate(over="ignore", invalid="ignore"):
            Z = np.asarray(X @ self.frequencies.T)
        overflow = ~np.isfinite(Z)
        if overflow.any():
            if not np.isfinite(X.data if sparse else X).all():
                raise ValueError("X contains non-finite values (NaN or infinity).")
            # a finite row so large that a projection overflows (|x| near 1e308)
            # has no meaningful phase; phase 0 keeps every feature of norm <= 1,
            # so the sensitivity bounds hold for every finite row, and nothing
            # is raised about one row's size (an error would be a release)
            Z[overflow] = 0.0
        m = self.frequencies.shape[0]
        out = np.empty((X.shape[0], self.n_features_out))
        np.cos(Z, out=out[:, :m])
        np.sin(Z, out=out[:, m:2 * m])
        out[:, :2 * m] *= self._scale
        if self.intercept:
            out[:, 2 * m] = math.sqrt(0.5)
        return out

    def kernel_matrix(self, X, Y):
        """The exact kernel that phi(x).phi(y) estimates, (K + 1) / 2 with the intercept.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
        Y : array-like of shape (k, n_features)

        Returns
        -------
        ndarray of shape (n, k)
        """
        X = np.asarray(X, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        diff = X[:, None, :] - Y[None, :, :]
        if self.kernel == "rbf":
            K = np.exp(-self.gamma * np.sum(diff * diff, axis=2))
        else:
            K = np.exp(-self.gamma * np.sum(np.abs(diff), axis=2))
        return (K + 1.0) / 2.0 if self.intercept else K

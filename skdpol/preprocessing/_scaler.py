"""PrivateStandardScaler: a differentially private mean and variance per column.

Sensitivity (replace-one neighbours). Column j is clipped to its public
bounds [lo_j, hi_j] and mapped to z = (x - c_j) / w_j in [-1, 1], with
c_j = (lo_j + hi_j) / 2 and w_j = (hi_j - lo_j) / 2. The release is the
vector S = (sum_i z_i, sum_i z_i^2) of length 2d, one Gaussian (or, with
``delta=0``, L2-Laplace) mechanism; the row count n is public. Replacing one
row z by z' moves column j's pair by (a, a b) with a = z'_j - z_j and
b = z'_j + z_j, where |a| + |b| <= 2 (both z in [-1, 1]). Its squared norm
a^2 (1 + b^2) <= a^2 (1 + (2 - |a|)^2) is increasing in |a| on [0, 2] (its
derivative 2a (1 + (2 - a)(2 - 2a)) has no root there), so at most 4 (a = 2,
b = 0: the mean moves, the second moment does not). Over d columns the L2
sensitivity of S is therefore 2 sqrt(d) -- less than the sqrt(5 d) of the
two sums released separately.

Everything after the noise is post-processing: the noisy mean of z is
clipped to [-1, 1] (so ``mean_`` lies within the bounds), the noisy second
moment to [0, 1], and a noisy variance <= 0 is released as 0. The scale used
by ``transform`` is ``max(sqrt(var_), min_scale * (hi - lo))``: the public
floor keeps it positive and gives the stated output bound (each output
entry has |x - mean_| / scale_ <= (hi - lo) / (min_scale (hi - lo)) =
1 / min_scale, see :func:`row_norm_bound`).
"""

import math
import os
import warnings
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from ..accounting import PrivacySpent, epsilon_spent
from ..exceptions import PrivacyLeakWarning
from ..ledger import PrivacyLedger
from ..ledger import check_budget, record_release
from ..utils import run_transaction
from ..mechanisms import NoiseSpec, family_for, noise_event
from ..utils import StreamMixin, is_seeded
from ..utils import user_stacklevel
from ._scaler_public import PublicStandardScaler, StandardiseMixin, refuse_sparse


def column_bounds(bounds, n_features):
    """(lo, hi) as float arrays of shape (n_features,), checked."""
    try:
        lo, hi = bounds
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (n_features,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (n_features,)).copy()
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be (lo, hi), each a number or one value per column "
            f"({n_features}), got {bounds!r}.") from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo < hi)):
        raise ValueError(f"bounds must be finite with lo < hi in every column, got {bounds!r}.")
    return lo, hi


class PrivateStandardScaler(StandardiseMixin, OneToOneFeatureMixin, TransformerMixin, StreamMixin,
                            BaseEstimator):
    """Standardise with a differentially private mean and standard deviation.

    ``fit`` clips every column to its public ``bounds``, releases the noisy
    sum and sum of squares of the clipped values in one mechanism (Gaussian,
    or L2-Laplace with ``delta=0``; sensitivity derived in the module), and
    derives ``mean_``, ``var_`` and ``scale_`` from them. ``transform``
    clips to the same bounds, then computes ``(x - mean_) / scale_``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the one release ``fit`` makes. ``numpy.inf``: no
        noise (a non-private reference; recorded as infinite epsilon).
    bounds : (lo, hi) or None, default=None
        Public range of each column (numbers, or one per column). Values
        are clipped to it. None reads the range off the data and emits
        :class:`~skdpol.PrivacyLeakWarning`: the guarantee then does not
        cover it.
    delta : float, default=1e-5
        ``delta=0`` switches to pure-DP (L2-Laplace) noise.
    min_scale : float, default=0.05
        Floor of ``scale_`` as a fraction of each column's range ``hi - lo``
        (public). It keeps the scale positive when the noisy variance is
        <= 0 and bounds every output entry by ``1 / min_scale``.
    noise_sampler : {"discrete", "float"}, default="discrete"
        ``"discrete"``: the hardened exact sampler on a grid
        (:mod:`skdpol.mechanisms`); ``"float"``: numpy's floating point.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise. Use None (OS entropy) for real releases: anyone
        who knows the seed can regenerate the noise.
    ledger : PrivacyLedger, str, path-like or None, default=None
        Record the release in this :class:`~skdpol.PrivacyLedger`; a fit
        that would pass its budget raises
        :class:`~skdpol.BudgetExhaustedError` before any row is read.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Noisy mean of the clipped columns (within the bounds).
    var_ : ndarray of shape (n_features,)
        Noisy variance, 0 where the noise made it <= 0.
    scale_ : ndarray of shape (n_features,)
        ``max(sqrt(var_), min_scale * (hi - lo))``.
    bounds_ : tuple of ndarray
        The (lo, hi) used, per column.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.
    n_samples_seen_ : int
        Rows of the fit (public under replace-one neighbours).
    privacy_spent_ : skdpol.accounting.PrivacySpent

    Notes
    -----
    **Neighbours.** Data sets differing in one row, replaced. The release
    (``mean_``, ``var_``, ``scale_``, ``transform``) is one mechanism of
    L2 sensitivity 2 sqrt(d) on the centred, range-scaled sums (derivation
    in :mod:`skdpol.preprocessing._scaler`), calibrated with dp-accounting.
    The fitted scaler keeps no curator state (its noise generator is
    dropped after the release), so its pickle may be shared.

    **Use in a pipeline.** The estimator after it needs a ``data_norm``:
    :func:`row_norm_bound` states one from the parameters
    (``sqrt(d) / min_scale``); the model clips rows to whatever it is given,
    so a smaller public choice (e.g. ``3 * sqrt(d)``, three standard
    deviations per column) only clips the outliers.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.preprocessing import PrivateStandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(loc=50.0, scale=10.0, size=(10_000, 2))
    >>> scaler = PrivateStandardScaler(epsilon=1.0, bounds=(0.0, 100.0), random_state=0)
    >>> Z = scaler.fit_transform(X)
    >>> np.round(scaler.mean_), np.round(scaler.scale_)
    (array([50., 50.]), array([10., 10.]))
    >>> round(scaler.privacy_spent_.epsilon, 3)
    1.0
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "bounds": ["array-like", tuple, None],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "min_scale": [Interval(Real, 0, 1, closed="right")],
        "noise_sampler": [StrOptions({"discrete", "float"})],
        "random_state": ["random_state"],
        "ledger": [PrivacyLedger, str, os.PathLike, None],
    }

    def __init__(self, epsilon=1.0, *, bounds=None, delta=1e-5, min_scale=0.05,
                 noise_sampler="discrete", random_state=None, ledger=None):
        self.epsilon = epsilon
        self.bounds = bounds
        self.delta = delta
        self.min_scale = min_scale
        self.noise_sampler = noise_sampler
        self.random_state = random_state
        self.ledger = ledger

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    @property
    def _noise(self):
        return family_for(self.epsilon, self.delta)

    def _noise_spec(self):
        """The noise of fit's one release (of all the column sums at once)."""
        return NoiseSpec.calibrated(
            self.epsilon, self.delta, family=self._noise, sampler=self.noise_sampler,
            make_event=lambda m: noise_event(m, self._noise, self.noise_sampler))

    def _declared_event(self, method, args):
        """(event, ledger head) of ``fit``'s one release, from the parameters
        alone (the ledger checks its budget with it; a fit starts a new
        stream, so no head). None for an input without rows (the real call
        refuses it)."""
        if _num_samples(args[0]) < 1:
            return None
        return self._noise_spec().event(), None

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the noisy mean and variance of the clipped columns (one release).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        check_budget(self, self._fit, (X,))
        run_transaction(self, self._fit, X)
        return self

    def _fit(self, X):
        refuse_sparse(X)
        X = validate_data(self, X, reset=True, dtype=np.float64)
        n, d = X.shape
        self._begin_stream(one_release=True)
        if self.bounds is None:
            warnings.warn(
                "bounds is None: the column ranges were read off the data, which leaks "
                "them and voids the guarantee for them. Pass bounds=(lo, hi).",
                PrivacyLeakWarning, stacklevel=user_stacklevel())
            self._infer("bounds")
            lo, hi = X.min(axis=0), X.max(axis=0)
            hi = np.where(hi > lo, hi, lo + 1.0)
        else:
            lo, hi = column_bounds(self.bounds, d)
        centre, half = (lo + hi) / 2, (hi - lo) / 2
        Z = (np.clip(X, lo, hi) - centre) / half
        sums = np.concatenate([Z.sum(axis=0), np.einsum("ij,ij->j", Z, Z)])
        spec = self._noise_spec()
        # sensitivity 2 sqrt(d) of the 2d sums (module docstring)
        noisy = spec.perturb(sums, 2.0 * math.sqrt(d), self._rng)
        event = spec.event()
        mean_z = np.clip(noisy[:d] / n, -1.0, 1.0)
        var_z = np.maximum(np.clip(noisy[d:] / n, 0.0, 1.0) - mean_z**2, 0.0)
        self.bounds_ = (lo, hi)
        self.mean_ = centre + half * mean_z
        self.var_ = half**2 * var_z
        self.scale_ = np.maximum(np.sqrt(self.var_), self.min_scale * (hi - lo))
        self.n_samples_seen_ = n
        del self._rng  # no curator state survives the release
        eps, how = (math.inf, "none (epsilon=inf)") if math.isinf(self.epsilon) else \
            epsilon_spent(event, self.delta)
        inferred = tuple(self._inferred)
        self.privacy_spent_ = PrivacySpent(
            epsilon=float(eps), delta=float(self.delta), accountant=how,
            bounds_trusted=not inferred, releases=1, inferred=inferred,
            seeded=is_seeded(self.random_state))
        record_release(self, event)  # last: a refusal undoes the fit

    def _check_released(self):
        check_is_fitted(self, "scale_")

    def public_model(self):
        """The shareable release: the released statistics and ``privacy_spent_`` only.

        Returns
        -------
        model : PublicStandardScaler
            ``transform`` as this scaler's; without its ``random_state`` (a
            seed regenerates the noise) or ``ledger``.
        """
        check_is_fitted(self, "scale_")
        model = PublicStandardScaler._from_release(self)
        model.bounds_ = tuple(b.copy() for b in self.bounds_)  # a tuple: not copied there
        return model

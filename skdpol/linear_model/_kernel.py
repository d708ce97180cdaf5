"""KernelPrivateOnlineRegressor: kernel regression on a stream (seed 003).

A linear model on public, data-independent random Fourier features
(:class:`skdpol.kernel.RandomFourierFeatures`), so the released model is a
weight vector and never a training row. It lives beside the linear
estimators because it *is* one in feature space and shares their machinery;
the numerics are in :mod:`skdpol.kernel` and :mod:`skdpol.online`.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils import ACCEPT_SPARSE, csr_rows
from ..kernel import KERNELS, KernelORLS, RandomFourierFeatures
from ..kernel import final_event, final_release
from ..mechanisms import NoiseSpec
from ..mechanisms import prefix_sum_event
from ..online import (
    NoisyGradientDescent,
    OutputPerturbation,
    PrivateQuadraticFTL,
    one_shot_event,
    one_shot_ridge,
    round_event,
    steps_per_round,
)
from ..utils import inject_docstring
from ._base import SHARED_CONSTRAINTS, PrivateLinearMixin, StreamingRegressorMixin
from ._public import PublicKernelRegressor, kernel_predict
from ._streams import GradientStream

# "auto" streams with noisy GD from rounds of this many rows, with PQFTL below.
# Measured on friedman1 (50k rows, epsilon = 1, median of 2 seeds): GD reaches
# R^2 0.66 with rounds of 50 rows, 0.47 with 30 and -8 with 10; PQFTL 0.50
# with per-row rounds and 0.52 with rounds of 100.
AUTO_GD_BATCH = 50

# the default bandwidth in unit space (rows divided by data_norm); see gamma
GAMMA = 5.0


@inject_docstring(GAMMA=GAMMA)
class KernelPrivateOnlineRegressor(StreamingRegressorMixin, PrivateLinearMixin, RegressorMixin,
                             BaseEstimator):
    """Differentially private kernel regression on a stream.

    Every row is mapped by a random Fourier feature map phi (``kernel``,
    ``gamma``, ``n_components``) whose frequencies are drawn from the random
    state alone, never from the data, and ||phi(x)|| = 1 for every x: the
    rows need no clipping. ``data_norm`` sets the units: the kernel is taken
    between x / data_norm and x' / data_norm, so ``gamma`` means the same
    whatever the units of X. The model is a weight vector
    on those features, released with noise:

    * ``algorithm="gd"``: noisy gradient descent on the Huber loss (residuals
      clipped to ``residual_bound``; :mod:`skdpol.online._noisy_gd`). ``fit``
      runs up to ``max_iter`` full-batch steps; ``partial_fit`` runs
      ceil(batch_size / 50) steps (at most ``max_iter``) on each round of
      ``batch_size`` rows, and since rounds are disjoint the whole stream
      costs one round, with no horizon needed. Not a seed algorithm: it
      releases sums of clipped residuals instead of sums of labels, which
      is what makes it the most accurate (friedman1, epsilon = 1: test R^2
      0.85 against 0.74 for ``"ftl"``; ``docs/benchmarks/kernel.md``). Its
      rounds must be large: with 10-row rounds the model is mostly noise.
    * ``algorithm="ftl"``: ridge regression in feature space by
      private Follow-the-Leader (PQFTL, the tree of private sums of
      phi phi^T and y phi used by :class:`PrivateOnlineRegressor`), with
      rows of norm 1; ``fit`` releases one noisy copy of the sums. The
      best choice for per-row rounds.
    * ``algorithm="korls"``: seed 003's online regularised least squares,
      w <- w - eta_t [(<w, phi_t> - y_t) phi_t + lambda_t w] with
      eta_t = (t + t0)^-theta, lambda_t = (t + t0)^-(1 - theta), released by
      output perturbation (POCP, :class:`skdpol.online.OutputPerturbation`)
      after every call; ``fit`` releases the final iterate once
      (:mod:`skdpol.kernel._release`). Its sensitivity is derived for every
      release and every replaced row, not only the last row
      (:mod:`skdpol.kernel._korls`).
    * ``algorithm="auto"`` (default): ``"gd"`` for ``fit`` and for streams
      with ``batch_size >= 50``; ``"ftl"`` for smaller rounds, for
      ``delta=0`` (pure-DP steps compose linearly in their number) and for
      ``epsilon=inf`` (the exact ridge solution).

    Parameters
    ----------
    {epsilon}
    {delta}
    {data_norm_kernel}
    {y_bound}
    kernel : {{"rbf", "laplacian"}}, default="rbf"
        Shift-invariant kernel approximated by the features:
        exp(-gamma ||x - x'||_2^2) or exp(-gamma ||x - x'||_1).
    gamma : float, default=GAMMA
        Kernel bandwidth in unit space, rows divided by ``data_norm``: the
        kernel is exp(-gamma ||x - x'||^2 / data_norm^2) (``"rbf"``) or
        exp(-gamma ||x - x'||_1 / data_norm). A parameter, never read off
        the data.
    n_components : int, default=128
        Number of random features, rounded up to an even number (cos/sin
        pairs). More features approximate the kernel better but spread the
        noise over more weights; ``"ftl"`` releases sums of size
        n_components^2 / 2.
    algorithm : {{"auto", "gd", "ftl", "korls"}}, default="auto"
    alpha : float, default=1e-4
        ``"gd"`` and ``"ftl"``: ridge weight (the model minimises the mean
        loss plus alpha ||w||^2 / 2).
    max_iter : int, default=1000
        ``"gd"`` only: most gradient steps of one round (``fit`` is one round
        of all rows). Each step is one noisy release, so more steps mean more
        noise per step for the same budget.
    residual_bound : float, default=0.125
        ``"gd"`` only: Huber threshold C as a fraction of ``y_bound``;
        residuals are clipped to [-C y_bound, C y_bound] before they enter a
        gradient, which bounds a row's influence whatever its label. 1/8 beat
        1/15 and 1/4 on friedman1 (residuals of a good model are far below
        the label bound).
    theta : float, default=0.8
        ``"korls"`` only: the step-size exponent in (1/2, 1). Larger theta
        means smaller steps and sensitivity ~ t^(1 - 2 theta), but a
        stronger regularisation lambda_t = (t + t0)^-(1 - theta).
    t0 : float or None, default=None
        ``"korls"`` only: schedule offset; None takes the smallest t0 with
        t0^theta >= 2 (seed 003's condition with kappa = 1).
    {batch_size}
    {release_every}
    {horizon}
    noise_calibration : {{"tight"}}, default="tight"
        Only the tight calibration: seed 003 adds one scalar of noise to the
        function, which does not make a function private, so there is no
        "paper" calibration to reproduce.
    {noise_sampler}
    {mechanism}
        Used by the per-round private ridge (``algorithm="ftl"``); noisy GD
        and seed 003's output perturbation release no prefix sums.
    fit_intercept : bool, default=True
        Add a constant feature (the features are then scaled by sqrt(1/2)
        so the row norm stays 1; the intercept is regularised like the
        other weights).
    {random_state}
    {ledger}
        The feature map and the noise come from two independent streams
        spawned from it, so publishing the map reveals nothing of the noise.

    Attributes
    ----------
    coef_ : ndarray of shape (n_components,)
        Released weights of the random features.
    intercept_ : float
    n_iter_ : int
        ``"gd"``: gradient steps of each round (of ``fit``'s single round);
        1 for ``"ftl"`` and ``"korls"``, which make one pass.
    algorithm_ : str
        The algorithm that ran (what ``"auto"`` resolved to; a function of
        the parameters only).
    random_features_ : RandomFourierFeatures
        The public feature map (frequencies only, data-independent).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only if X had string column names.
    n_samples_seen_ : int
        Rows consumed so far.
    {stream_counts}
    privacy_spent_ : skdpol.accounting.PrivacySpent

    Notes
    -----
    **Sparse input.** ``X`` may be a ``scipy.sparse`` CSR or CSC matrix: the
    random features are one sparse product ``X @ frequencies.T`` (the
    (n, n_components) features are dense, the rows never are).

    Neighbouring streams differ in one row (replace-one). The feature map is
    public, so a row's whole influence is through phi(x) (norm 1) and its
    clipped label (|y| <= y_bound): for ``"ftl"`` the tree's joint
    sensitivity of :class:`PrivateOnlineRegressor` with R = 1, M = y_bound;
    for ``"korls"`` the bound Delta_n of :class:`skdpol.kernel.KernelORLS`;
    for ``"gd"`` each step's gradient sum moves by at most 2 C (every row's
    term is a clipped residual times phi(x)), and a row enters the steps of
    its own round only.
    ``partial_fit`` publishes after every call (continual release) and
    ``privacy_spent_`` covers every release; ``fit`` publishes once.
    The live estimator holds curator state (exact sums or the exact
    iterate, the noise generator) in underscore attributes: its pickle is as
    sensitive as the data. ``public_model()`` is the shareable release.

    References
    ----------
    Seed 003: online regularised least squares in an RKHS with output
    perturbation. Rahimi & Recht (2007), random features for large-scale
    kernel machines.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_friedman1
    >>> from skdpol import KernelPrivateOnlineRegressor
    >>> X, y = make_friedman1(n_samples=20_000, noise=1.0, random_state=0)
    >>> est = KernelPrivateOnlineRegressor(epsilon=1.0, y_bound=30.0, gamma=0.25,
    ...                                    random_state=0).fit(X, y)
    >>> est.coef_.shape, est.privacy_spent_.epsilon <= 1.0
    ((128,), True)
    >>> bool(est.score(X, y) > 0.5)
    True
    """

    _parameter_constraints = {
        "epsilon": SHARED_CONSTRAINTS["epsilon"],
        "delta": SHARED_CONSTRAINTS["delta"],
        "data_norm": SHARED_CONSTRAINTS["data_norm"],
        "y_bound": [Interval(Real, 0, None, closed="neither"), None],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "algorithm": [StrOptions({"auto", "gd", "ftl", "korls"})],
        "alpha": SHARED_CONSTRAINTS["alpha"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "residual_bound": [Interval(Real, 0, None, closed="neither")],
        "theta": [Interval(Real, 0.5, 1, closed="neither")],
        "t0": [Interval(Real, 0, None, closed="neither"), None],
        "batch_size": SHARED_CONSTRAINTS["batch_size"],
        "release_every": SHARED_CONSTRAINTS["release_every"],
        "horizon": SHARED_CONSTRAINTS["horizon"],
        "noise_calibration": [StrOptions({"tight"})],
        "noise_sampler": SHARED_CONSTRAINTS["noise_sampler"],
        "mechanism": SHARED_CONSTRAINTS["mechanism"],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
        "ledger": SHARED_CONSTRAINTS["ledger"],
    }

    def __init__(self, *, epsilon=1.0, delta=1e-5, data_norm=None, y_bound=None, kernel="rbf",
                 gamma=GAMMA,
                 n_components=128, algorithm="auto", alpha=1e-4, max_iter=1000,
                 residual_bound=0.125, theta=0.8, t0=None,
                 batch_size="auto", release_every=1, horizon=None, noise_calibration="tight",
                 noise_sampler="discrete",
                 mechanism="auto", fit_intercept=True, random_state=None, ledger=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.y_bound = y_bound
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.algorithm = algorithm
        self.alpha = alpha
        self.max_iter = max_iter
        self.residual_bound = residual_bound
        self.theta = theta
        self.t0 = t0
        self.batch_size = batch_size
        self.release_every = release_every
        self.horizon = horizon
        self.noise_calibration = noise_calibration
        self.noise_sampler = noise_sampler
        self.mechanism = mechanism
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger

    # ----------------------------------------------------------- set-up
    def _start(self, stream, X, y):
        """Resolve the stream's bounds, derive its generators, draw the public map."""
        units = stream.units = self._resolve_units(X, y)
        features_rng, self._rng = self._rng.spawn(2)
        # the kernel of the unit-space rows x / data_norm: gamma is unit-free
        unit_gamma = (self.gamma / units.data_norm**2 if self.kernel == "rbf"
                      else self.gamma / units.data_norm)
        self.random_features_ = RandomFourierFeatures(  # cos/sin pairs: an even count
            X.shape[1], self.n_components + self.n_components % 2, kernel=self.kernel,
            gamma=unit_gamma, intercept=self.fit_intercept, rng=features_rng)

    _kind = "kernel"  # no entry of the linear algorithms' registry

    def _auto_round(self, n_rows):
        # one round per call: noisy GD takes its steps inside a round, and the
        # tree of PQFTL / KORLS's releases want the fewest rounds
        return n_rows

    def _multiplier(self, make_event):
        return NoiseSpec.calibrated(self.epsilon, self.delta, family=self._noise,
                                    sampler=self.noise_sampler,
                                    make_event=make_event).multiplier

    def _korls(self, rounds, batch_size, n_out):
        return KernelORLS(n_components=n_out,
                          theta=self.theta, y_bound=1.0, t0=self.t0,
                          batch_size=batch_size, horizon=rounds)

    def _noisy_gd(self, batch_size, rounds, n_out, rng):
        """Noisy gradient descent on the Huber loss, calibrated for one round."""
        n_steps = steps_per_round(batch_size, self.max_iter)
        base = self._noise_spec
        m = self._multiplier(lambda m: round_event(base.with_multiplier(m), n_steps))
        return NoisyGradientDescent(
            n_features=n_out, row_bound=1.0,
            residual_bound=self.residual_bound, alpha=self.alpha, batch_size=batch_size,
            horizon=rounds, max_iter=self.max_iter, noise=base.with_multiplier(m),
            rng=rng)

    def _algorithm_for(self, stream, batch_size=None):
        """The algorithm behind ``"auto"``: noisy GD for ``fit`` and for rounds of
        at least AUTO_GD_BATCH rows when delta > 0, PQFTL otherwise."""
        if self.algorithm != "auto":
            return self.algorithm
        if self.delta == 0 or math.isinf(self.epsilon):
            # K pure-DP steps compose linearly, not like sqrt(K); without noise
            # PQFTL's exact ridge solution beats a finite number of steps
            return "ftl"
        if not stream:
            return "gd"
        return "gd" if (self.batch_size_ if batch_size is None else batch_size) >= AUTO_GD_BATCH \
            else "ftl"

    def _n_features_out(self):
        """Length of the public feature map's output (``random_features_``'s
        ``n_features_out``): an even count of cos/sin features, plus the
        intercept's constant."""
        return self.n_components + self.n_components % 2 + int(self.fit_intercept)

    def _stream_algorithm(self, algorithm, batch_size, rounds, n_out, rng):
        """The stream's ``algorithm`` (resolved): noisy GD, POCP over KORLS, or
        PQFTL over ``n_out`` features; all three take the mapped rows alike."""
        if algorithm == "gd":
            return self._noisy_gd(batch_size, rounds, n_out, rng)
        if algorithm == "korls":
            return OutputPerturbation(
                self._korls(rounds, batch_size, n_out), epsilon=self.epsilon,
                delta=self.delta, noise=self._noise_spec, rng=rng)
        m = self._multiplier(lambda m: prefix_sum_event(
            self._mechanism, horizon=rounds, noise=self._noise_spec.with_multiplier(m)))
        return PrivateQuadraticFTL(
            n_features=n_out, alpha=self.alpha, row_bound=1.0,
            label_bound=1.0, noise=self._noise_spec.with_multiplier(m),
            horizon=rounds, batch_size=batch_size, rng=rng,
            mechanism=self._mechanism)

    # ----------------------------------------------------------- declared costs
    def _planned_stream(self, n_rows, n_features, args):
        """The stream a first call of ``n_rows`` rows would start, its
        algorithm built from public quantities with a throw-away generator
        (no feature map drawn, nothing learned, the estimator untouched)."""
        del n_features, args  # the features' count is public: n_components
        stream = self._planned_state(None, n_rows)
        batch_size = stream.batch_size
        stream.algorithm = self._stream_algorithm(
            self._algorithm_for(stream=True, batch_size=batch_size), batch_size,
            self._rounds(batch_size), self._n_features_out(), np.random.default_rng(0))
        return stream

    def _fit_event(self, n_rows, n_features, args):
        """The event ``fit`` on ``n_rows`` rows will record, from public
        quantities only (as :meth:`_fit`, fed nothing)."""
        del n_features, args
        algorithm = self._algorithm_for(stream=False)
        n_out = self._n_features_out()
        if algorithm == "gd":  # one round of every row
            return self._noisy_gd(n_rows, 1, n_out, np.random.default_rng(0)).event(1)
        if algorithm == "korls":  # rounds of one row: released after the first
            return final_event(epsilon=self.epsilon, delta=self.delta, noise=self._noise_spec,
                               n_rounds=n_rows)
        base = self._noise_spec
        m = self._multiplier(lambda m: one_shot_event(base.with_multiplier(m)))
        return one_shot_event(base.with_multiplier(m))

    def _publish(self, w):
        # feature space: the weights only take the label unit back (the
        # features, not the rows, carry the unit of X)
        w = np.asarray(w, dtype=np.float64).reshape(-1) * self._stream.units.y_scale
        if self.fit_intercept:
            self.coef_ = w[:-1].copy()
            self.intercept_ = float(w[-1] * math.sqrt(0.5))  # the constant feature's value
        else:
            self.coef_ = w.copy()
            self.intercept_ = 0.0

    # ----------------------------------------------------------- learning
    _learn_traces = False  # the kernel model publishes once per call

    def _learn(self, X, y, progressive):
        del progressive  # no per-row progressive predictions for the kernel model
        stream = self._live_stream()
        X, y = validate_data(self, X, y, reset=stream is None, dtype=np.float64,
                             y_numeric=True, accept_sparse=ACCEPT_SPARSE)
        X = csr_rows(X)
        self._check_horizon(X.shape[0], seen=0 if stream is None else stream.n_seen)
        if stream is None:
            # the rows reach the algorithm as public random features ("mapped")
            stream = self._new_stream(GradientStream, X.shape[0], rows="mapped")
            self._start(stream, X, y)
            self.algorithm_ = self._algorithm_for(stream=True)
            stream.algorithm = self._stream_algorithm(
                self.algorithm_, stream.batch_size, self._rounds(stream.batch_size),
                self.random_features_.n_features_out, self._rng)
        stream.learn(self.random_features_.transform(X), y)
        self.n_iter_ = stream.algorithm.n_steps if self.algorithm_ == "gd" else 1
        # PQFTL, POCP over KORLS and noisy GD present the same learn / published / event
        self._record_stream(stream, X.shape[0], *stream.release())

    def _fit(self, X, y):
        X, y = validate_data(self, X, y, reset=True, dtype=np.float64,
                             y_numeric=True, accept_sparse=ACCEPT_SPARSE)
        X = csr_rows(X)
        stream = self._begin_one_release(X.shape[0])
        self._start(stream, X, y)
        F = self.random_features_.transform(X)
        yc = stream.units.labels(y)
        algorithm = self.algorithm_ = self._algorithm_for(stream=False)
        self.n_iter_ = 1
        if algorithm == "gd":
            gd = self._noisy_gd(X.shape[0], 1, F.shape[1], self._rng)  # one round of all rows
            gd.learn(F, yc)
            w, event = gd.published, gd.event()
            self.n_iter_ = gd.n_steps
        elif algorithm == "korls":
            w, event = final_release(
                self._korls(None, 1, F.shape[1]), F, yc, epsilon=self.epsilon, delta=self.delta,
                noise=self._noise_spec, rng=self._rng)
        else:
            base = self._noise_spec
            m = self._multiplier(lambda m: one_shot_event(base.with_multiplier(m)))
            w, event = one_shot_ridge(
                F, yc, alpha=self.alpha, row_bound=1.0, label_bound=1.0,
                noise=base.with_multiplier(m), rng=self._rng)
        self._record_one_release(stream, X.shape[0], w, event)

    # ----------------------------------------------------------- using
    def predict(self, X):
        """Predict with the published model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "coef_")
        X = csr_rows(validate_data(self, X, reset=False, dtype=np.float64,
                                   accept_sparse=ACCEPT_SPARSE))
        return kernel_predict(self.random_features_, self.coef_, self.intercept_, X)

    def public_model(self):
        """The shareable release: feature map, weights and ``privacy_spent_`` only.

        Returns
        -------
        model : PublicKernelRegressor
        """
        check_is_fitted(self, "coef_")
        return PublicKernelRegressor._from_release(self)


"""Build a private streaming algorithm from the estimators' parameters."""

from ..losses import HuberLoss
from ..mechanisms import NoiseSpec
from ..mechanisms import prefix_sum_event
from ._centred import CentredMomentumFTRL, centre_rows, centred_event, centres
from ._ftal import INITIAL_CURVATURE, PrivateFTAL
from ._gradient import ImplicitGD, ProjectedGD
from ._lsq import PrivateLeastSquaresClassifier
from ._mi_ogd import MutualInformationOGD
from ._momentum import MomentumFTRL
from ._noisy_gd import MOMENTUM, NoisyGradientDescent, gradient_schedule, round_event
from ._pocp import OutputPerturbation, offline_event, offline_release
from ._registry import ALGORITHMS, GRADIENT_ALGORITHMS  # noqa: F401  (re-exported)

# families whose fit is one round of every row (one release of that round)
ONE_ROUND_FIT = frozenset({"noisy-gd", "least-squares"})


def _noisy_gd(*, loss, n_features, alpha, row_bound, batch_size, horizon, epsilon, delta,
              noise, rng, cls=NoisyGradientDescent):
    """Rounds of noisy GD (:mod:`._noisy_gd`): each round is K Gaussian steps over
    its own rows, so a stream costs one round (parallel composition). ``cls``:
    a subclass that takes its gradient sums elsewhere (the Dask ``fit``,
    :mod:`skdpol.linear_model._dask_fit`), with the same schedule and noise."""
    if not noise.gaussian or delta == 0:
        raise ValueError(
            "algorithm='noisy-gd' needs delta > 0: its K steps compose like sqrt(K) "
            "only under Gaussian noise (pure-DP steps would add up linearly)."
        )
    n_steps, lr = gradient_schedule(batch_size, epsilon, delta, loss, row_bound, alpha=alpha)
    spec = NoiseSpec.calibrated(
        epsilon, delta, family=noise.family, sampler=noise.sampler,
        make_event=lambda m: round_event(noise.with_multiplier(m), n_steps))
    return cls(
        loss=loss, n_features=n_features, row_bound=row_bound, alpha=alpha,
        batch_size=batch_size, horizon=horizon, max_iter=n_steps, n_steps=n_steps,
        learning_rate=lr, noise=spec, rng=rng, momentum=MOMENTUM)


def _base(algorithm, common, rng):
    if algorithm == "igd":
        return ImplicitGD(**common)
    return ProjectedGD(**common, rng=rng)


def _least_squares(*, loss, n_features, alpha, batch_size, horizon, epsilon, delta, noise,
                   intercept, rng, mechanism):
    """The classifier's least-squares stream (:mod:`._lsq`): its sums through
    one prefix-sum mechanism, calibrated to (epsilon, delta) for every release."""
    spec = NoiseSpec.calibrated(
        epsilon, delta, family=noise.family, sampler=noise.sampler,
        make_event=lambda m: prefix_sum_event(mechanism, horizon=horizon,
                                              noise=noise.with_multiplier(m)))
    return PrivateLeastSquaresClassifier(
        n_features=n_features, n_outputs=loss.n_outputs, alpha=alpha, batch_size=batch_size,
        horizon=horizon, noise=spec, rng=rng, intercept=intercept is not None,
        mechanism=mechanism)


def _centred_momentum(common, epsilon, delta, noise, rng, mechanism, step_rows, stable_rows):
    """The regressor's "ftrl-momentum" on privately centred rows
    (:mod:`._centred`): one multiplier for the centring's two releases and
    the stream's prefix sums together, so the three cost (epsilon, delta);
    None where :func:`~skdpol.online._centred.centre_rows` says the hold
    would be too long (public quantities)."""
    horizon, batch_size = common["horizon"], common["batch_size"]
    spec = NoiseSpec.calibrated(
        epsilon, delta, family=noise.family, sampler=noise.sampler,
        make_event=lambda m: centred_event(
            prefix_sum_event(mechanism, horizon=horizon, noise=noise.with_multiplier(m)),
            m, noise.sampler))
    rows = centre_rows(spec.multiplier, noise.sampler, common["n_features"] - 1, batch_size,
                       None if horizon is None else horizon * batch_size)
    if rows is None:
        return None
    return CentredMomentumFTRL(**common, noise=spec, rng=rng, mechanism=mechanism,
                               step_rows=step_rows, stable_rows=stable_rows, centre_rows=rows)


def make_stream(algorithm, *, loss, n_features, radius, alpha, row_bound, batch_size,
                horizon, epsilon, delta, noise, calibration, feedback, rng,
                mechanism="tree", intercept=None, step_rows=None, stable_rows=None, step_divisor=None,
                blt_buffers=None, centre=False, stable_momentum=None,
                curvature_cap=None):
    """The continual-release algorithm; ``horizon`` in rounds (or None).

    ``noise`` is a :class:`~skdpol.mechanisms.NoiseSpec` giving the family
    and sampler (its multiplier is not used): every algorithm gets the spec
    :meth:`NoiseSpec.calibrated` returns for its own mechanism.
    ``mechanism`` picks the prefix sums' release of ftal / ftrl ("tree" or
    "blt"). ``intercept``: the value of the rows' constant column (None:
    no intercept), read by "ls" and "ftrl-momentum" (which moves it to 0.5
    internally). ``step_rows``: "ftrl-momentum"'s cap on a round's step
    (:class:`~skdpol.online._momentum.MomentumFTRL`; ignored by the others),
    ``stable_rows`` its cap after the noise scale;
    ``step_divisor``: its step's divisor (None: its default; public,
    :data:`~skdpol.online._registry.WIDE_STEP_DIVISOR`); ``blt_buffers``: its
    BLT's buffers (None: the BLT's default; public,
    :func:`~skdpol.online._registry.wide_blt_buffers`); ``centre``: the
    regressor's "ftrl-momentum" centres its rows privately where
    :func:`~skdpol.online._centred.centres` allows (:mod:`._centred`);
    ``stable_momentum``: its most momentum where ``stable_rows`` caps the step
    (:func:`~skdpol.online._step_noise.capped_momentum`; None: its default,
    0.95, always; public,
    :data:`~skdpol.online._registry.WIDE_REGRESSOR_MOMENTUM`);
    ``curvature_cap``: its per-coordinate step cap read from the releases
    (None: none; public, :data:`~skdpol.online._registry.WIDE_CURVATURE_CAP`,
    :mod:`~skdpol.online._curvature`).
    """
    family = getattr(ALGORITHMS.get(algorithm), "family", None)  # the registry's builder
    common = dict(loss=loss, n_features=n_features, radius=radius, alpha=alpha,
                  row_bound=row_bound, batch_size=batch_size, horizon=horizon)
    if family == "noisy-gd":
        del calibration, feedback  # one calibration; full gradients
        common.pop("radius")  # unconstrained: its gradients are bounded everywhere
        return _noisy_gd(**common, epsilon=epsilon, delta=delta, noise=noise, rng=rng)
    if family == "least-squares":
        del calibration, feedback, radius, row_bound  # refused / not read / its own R
        return _least_squares(loss=loss, n_features=n_features, alpha=alpha,
                              batch_size=batch_size, horizon=horizon, epsilon=epsilon,
                              delta=delta, noise=noise, intercept=intercept, rng=rng,
                              mechanism=mechanism)
    if family == "output-perturbation":
        return OutputPerturbation(_base(algorithm, common, rng), epsilon=epsilon,
                                  delta=delta, noise=noise, calibration=calibration, rng=rng)
    if family == "prefix-sum":
        if calibration == "paper":
            # seed 001's TBAP: pure-DP L2-Laplace nodes, epsilon split over the levels
            noise = NoiseSpec("laplace", noise.sampler)
        spec = NoiseSpec.calibrated(
            epsilon, delta, family=noise.family, sampler=noise.sampler,
            make_event=lambda m: prefix_sum_event(mechanism, horizon=horizon,
                                                  noise=noise.with_multiplier(m)))
        initial = 0.0
        if algorithm == "ftrl" and isinstance(loss, HuberLoss):
            # the regressor's "ftrl": sigma_0 = b R^2 / 2, public (_ftal notes)
            initial = INITIAL_CURVATURE * batch_size * loss.smoothness(row_bound)
        return PrivateFTAL(**common, noise=spec, rng=rng, mechanism=mechanism,
                           centre="published" if algorithm == "ftrl" else "origin",
                           initial=initial)
    if family == "momentum":
        del calibration, feedback  # paper refused upstream; full gradients
        common.pop("radius")  # unconstrained: its gradients are bounded everywhere
        if step_divisor is not None:
            common["step_divisor"] = step_divisor
        if stable_momentum is not None:
            common["stable_momentum"] = stable_momentum
        if curvature_cap is not None:
            common["curvature_cap"] = curvature_cap
        if centre and centres(loss, intercept, noise, epsilon, batch_size):
            centred = _centred_momentum(common, epsilon, delta, noise, rng, mechanism,
                                        step_rows, stable_rows)
            if centred is not None:
                return centred
        spec = NoiseSpec.calibrated(
            epsilon, delta, family=noise.family, sampler=noise.sampler,
            make_event=lambda m: prefix_sum_event(mechanism, horizon=horizon,
                                                  noise=noise.with_multiplier(m)))
        return MomentumFTRL(**common, noise=spec, rng=rng, intercept=intercept is not None,
                            mechanism=mechanism, step_rows=step_rows, stable_rows=stable_rows,
                            blt_buffers=blt_buffers)
    if family == "mutual-information":
        spec = NoiseSpec.calibrated(epsilon, delta, family=noise.family, sampler=noise.sampler)
        return MutualInformationOGD(**common, feedback=feedback, noise=spec, rng=rng)
    raise ValueError(f"unknown algorithm {algorithm!r}.")


def fit_once(algorithm, X, y, *, loss, n_features, radius, alpha, row_bound, batch_size,
             epsilon, delta, noise, calibration, feedback, rng, intercept=None, one_release=None,
             **stream_options):
    """``fit``'s one release: POL for igd/ftal/ftrl, averaged GIGA for giga,
    one round of K noisy full-batch steps for noisy-gd, one noisy copy of
    the sums of every row for ls (a prefix sum of one leaf), one pass of the
    stream (its last model) for mi-ogd and ftrl-momentum (``X`` holds whole
    rounds: the planned horizon is ``len(X) // batch_size`` rounds, and
    ``mechanism`` releases its prefix sums).

    ``one_release``: the estimator kind's choice
    (:meth:`~skdpol.online._registry.AlgorithmSpec.fit_release`; None: the
    registry's ``one_release``), e.g. "stream" for the regressor's ftrl.
    ``stream_options``: :func:`make_stream`'s keywords after ``rng``
    (``mechanism``, ``step_rows``, ...), for a one release that streams.

    Returns (W, event, algorithm_object_or_None). MI-OGD's guarantee does not
    improve with one release (each row already pays once), so it streams.
    """
    one_release, algo, _ = _one_release_algorithm(
        algorithm, X.shape[0], loss=loss, n_features=n_features, radius=radius, alpha=alpha,
        row_bound=row_bound, batch_size=batch_size, epsilon=epsilon, delta=delta, noise=noise,
        calibration=calibration, feedback=feedback, rng=rng, intercept=intercept,
        one_release=one_release, **stream_options)
    if one_release == "stream":
        algo.learn(X, y)
        return algo.published.copy(), algo.event(), algo
    W, event = offline_release(algo, X, y, epsilon=epsilon, delta=delta, noise=noise,
                               rng=rng, calibration=calibration)
    return W, event, None


def _one_release_algorithm(algorithm, n_rows, *, loss, n_features, radius, alpha, row_bound,
                           batch_size, epsilon, delta, noise, calibration, feedback, rng,
                           intercept, one_release, **stream_options):
    """(one release, the stream or base that makes it, its common terms) for
    ``fit`` over ``n_rows`` rows: the registry's spec of ``algorithm`` and the
    one release (``one_release``, or the registry's); shared by
    :func:`fit_once` and :func:`fit_once_event`, so both build the same object
    from the same public terms (``rng`` is drawn from in the same order)."""
    spec = ALGORITHMS[algorithm]
    one_release = spec.one_release if one_release is None else one_release
    common = dict(loss=loss, n_features=n_features, radius=radius, alpha=alpha,
                  row_bound=row_bound, batch_size=batch_size, horizon=None)
    if spec.family in ONE_ROUND_FIT:  # one round of every row (noisy GD: K noisy steps)
        common["batch_size"] = n_rows
        common["horizon"] = 1
    if spec.family == "momentum" or (spec.family == "prefix-sum" and one_release == "stream"):
        common["horizon"] = n_rows // batch_size  # a known horizon: the BLT of that many rounds
    if one_release == "stream":
        return one_release, make_stream(
            algorithm, **common, epsilon=epsilon, delta=delta, noise=noise,
            calibration=calibration, feedback=feedback, rng=rng, intercept=intercept,
            **stream_options), common
    return one_release, _base("giga" if one_release == "averaged" else "igd", common, rng), common


def fit_once_event(algorithm, n_rows, *, loss, n_features, radius, alpha, row_bound,
                   batch_size, epsilon, delta, noise, calibration, feedback, rng,
                   intercept=None, one_release=None, **stream_options):
    """The event :func:`fit_once` states for ``n_rows`` rows (a multiple of
    ``batch_size``, as ``fit`` pads them), from public quantities only: the
    stream or base is built (``rng``: a throw-away generator; building reads
    no row) and asked its cost after ``n_rows // batch_size`` rounds, or
    POL's (:func:`~skdpol.online._pocp.offline_event`). Nothing is learned."""
    one_release, algo, common = _one_release_algorithm(
        algorithm, n_rows, loss=loss, n_features=n_features, radius=radius, alpha=alpha,
        row_bound=row_bound, batch_size=batch_size, epsilon=epsilon, delta=delta, noise=noise,
        calibration=calibration, feedback=feedback, rng=rng, intercept=intercept,
        one_release=one_release, **stream_options)
    if one_release == "stream":
        return algo.event(n_rows // common["batch_size"])
    return offline_event(algo, n_rows, epsilon=epsilon, delta=delta, noise=noise,
                         calibration=calibration)

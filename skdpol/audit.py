"""Empirical privacy audit: a statistical lower bound on epsilon.

Train many times on two neighbouring data sets D and D' (they differ in one
row, the *canary*), compute a scalar statistic of each released model and
test how well a threshold separates the two. For any (epsilon, delta)-DP
mechanism and any threshold tau, with P = Pr[stat(D') >= tau] and
Q = Pr[stat(D) >= tau],

    P <= e^epsilon Q + delta,   so   epsilon >= ln((P - delta) / Q).

With Clopper-Pearson bounds (a lower bound on P, an upper bound on Q) the
right-hand side is a lower bound on the true epsilon that holds with the
stated confidence. The threshold and its direction are chosen on one half
of the runs and the bound is computed on the other half, so the selection
does not bias it.

A lower bound above the claimed epsilon *refutes* the claim. A bound below it
proves nothing by itself: an audit is only meaningful together with a power
check (the same audit must refute a deliberately under-noised mechanism).
"""

import dataclasses
import math
import warnings

import numpy as np
from scipy import optimize, stats
from sklearn.base import clone

from .exceptions import PrivacyLeakWarning

__all__ = ["AuditResult", "audit_estimator", "detectable_epsilon", "epsilon_ceiling",
           "epsilon_lower_bound", "float_noise_can_give", "gdp_epsilon", "grid_noise_can_give",
           "one_run_epsilon", "one_run_p_value"]


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_estimator`.

    Attributes
    ----------
    epsilon_lower_bound : float
        Lower bound on the mechanism's epsilon at ``delta`` (confidence
        ``confidence``); 0 when the runs cannot separate D from D'.
    epsilon_claimed : float
        The epsilon the estimator reports (``privacy_spent_.epsilon``).
    delta : float
    confidence : float
    n_runs : int
        Runs per data set.
    threshold : float
        The threshold chosen on the selection half.
    epsilon_gdp : float
        A point estimate, not a bound: the epsilon at ``delta`` of the
        Gaussian-DP curve fitted to the two samples of statistics
        (mu = mean gap / pooled std; :func:`gdp_epsilon`). Near the claim
        for a tight Gaussian mechanism with a good statistic.
    epsilon_ceiling : float
        The largest lower bound these runs could ever give (perfect
        separation; :func:`epsilon_ceiling`): no mechanism can be refuted
        above it, however leaky.
    epsilon_detectable : float
        The power of this run count, stated: the epsilon (at ``delta``) of a
        Gaussian mechanism that this audit typically refutes when its claim
        is ``epsilon_claimed`` (:func:`detectable_epsilon`). Below it a leak
        of that shape usually goes unseen.
    """

    epsilon_lower_bound: float
    epsilon_claimed: float
    delta: float
    confidence: float
    n_runs: int
    threshold: float
    epsilon_gdp: float = math.nan
    epsilon_ceiling: float = math.nan
    epsilon_detectable: float = math.nan

    @property
    def refuted(self):
        """True when the audit proves the claimed epsilon wrong."""
        return self.epsilon_lower_bound > self.epsilon_claimed


def _clopper_pearson(k, n, alpha):
    """One-sided Clopper-Pearson (lower, upper) bounds, each at level ``alpha``."""
    lower = 0.0 if k == 0 else stats.beta.ppf(alpha, k, n - k + 1)
    upper = 1.0 if k == n else stats.beta.ppf(1 - alpha, k + 1, n - k)
    return lower, upper


def _bound_at(stat_in, stat_out, tau, delta, alpha):
    """Lower bound on epsilon from 'stat >= tau' between the two samples."""
    p_lo, _ = _clopper_pearson(int(np.sum(stat_in >= tau)), stat_in.size, alpha)
    _, q_hi = _clopper_pearson(int(np.sum(stat_out >= tau)), stat_out.size, alpha)
    if p_lo - delta <= 0 or q_hi <= 0:
        return 0.0
    return max(0.0, math.log((p_lo - delta) / q_hi))


def epsilon_lower_bound(stats_d, stats_d_prime, delta, confidence=0.95):
    """Lower bound on epsilon from statistics of runs on D and on D'.

    Both directions (D' above D and D above D') and a grid of thresholds are
    tried on the first half of each sample; the best is evaluated on the
    second half with Clopper-Pearson bounds (each at level
    ``(1 - confidence) / 2``).

    Parameters
    ----------
    stats_d, stats_d_prime : array-like of shape (n_runs,)
    delta : float
    confidence : float, default=0.95

    Returns
    -------
    epsilon : float
    threshold : float
        Signed: negative direction is encoded by flipping both samples.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.audit import epsilon_lower_bound
    >>> rng = np.random.default_rng(0)
    >>> eps, _ = epsilon_lower_bound(rng.normal(0, 1, 4000), rng.normal(3, 1, 4000), 1e-5)
    >>> bool(eps > 1.0)
    True
    """
    a = np.asarray(stats_d, dtype=float)
    b = np.asarray(stats_d_prime, dtype=float)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("the audit statistics must be finite.")
    alpha = (1.0 - confidence) / 2.0
    ha, hb = a.size // 2, b.size // 2
    best = (0.0, 0.0, 1.0)  # (bound on the selection half, tau, sign)
    for sign in (1.0, -1.0):
        sel_in, sel_out = sign * b[:hb], sign * a[:ha]
        grid = np.quantile(np.concatenate([sel_in, sel_out]), np.linspace(0.5, 0.999, 60))
        for tau in grid:
            eps = _bound_at(sel_in, sel_out, tau, delta, alpha)
            if eps > best[0]:
                best = (eps, tau, sign)
    _, tau, sign = best
    eps = _bound_at(sign * b[hb:], sign * a[ha:], tau, delta, alpha)
    return eps, float(sign * tau)


def epsilon_ceiling(n_runs, delta, confidence=0.95):
    """The largest bound :func:`epsilon_lower_bound` can return from ``n_runs``
    runs per data set: every evaluation run on D' above the threshold and
    none on D.

    Examples
    --------
    >>> from skdpol.audit import epsilon_ceiling
    >>> round(epsilon_ceiling(1000, 1e-5), 2)
    4.91
    """
    n = int(n_runs) - int(n_runs) // 2  # the evaluation half
    alpha = (1.0 - confidence) / 2.0
    p_lo, _ = _clopper_pearson(n, n, alpha)
    _, q_hi = _clopper_pearson(0, n, alpha)
    return max(0.0, math.log((p_lo - delta) / q_hi)) if p_lo > delta else 0.0


def _gdp_delta(eps, mu):
    # delta(eps) of mu-GDP (Dong, Roth & Su 2022, Corollary 2.13); pinned
    # against dp-accounting's Gaussian privacy loss distribution in the tests
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def _gdp_to_epsilon(mu, delta):
    """epsilon at ``delta`` of mu-GDP (the Gaussian mechanism of std 1 / mu)."""
    if mu <= 0 or _gdp_delta(0.0, mu) <= delta:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    hi = 1.0
    while _gdp_delta(hi, mu) > delta:
        hi *= 2.0
    return optimize.brentq(lambda e: _gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-12)


def gdp_epsilon(stats_d, stats_d_prime, delta):
    """Point estimate of epsilon at ``delta`` from a Gaussian-DP fit of the
    statistics: mu = |mean(D') - mean(D)| / pooled std. A statistic, not a
    bound (it assumes Gaussian-shaped scores); see :func:`epsilon_lower_bound`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.audit import gdp_epsilon
    >>> rng = np.random.default_rng(0)
    >>> round(gdp_epsilon(rng.normal(0, 1, 20_000), rng.normal(1, 1, 20_000), 1e-5), 1)
    4.3
    """
    a = np.asarray(stats_d, dtype=float)
    b = np.asarray(stats_d_prime, dtype=float)
    spread = math.sqrt((a.var() + b.var()) / 2.0)
    if spread == 0:
        return 0.0 if a.mean() == b.mean() else math.inf
    return _gdp_to_epsilon(abs(b.mean() - a.mean()) / spread, delta)


def _typical_bound(mu, n_runs, delta, confidence):
    """The bound epsilon_lower_bound gives on the evaluation half for
    Gaussian scores N(0, 1) vs N(mu, 1) at the expected counts, best threshold."""
    n = int(n_runs) - int(n_runs) // 2
    alpha = (1.0 - confidence) / 2.0
    tau = np.linspace(-3.0, mu + 6.0, 400)
    k_in = np.round(n * stats.norm.sf(tau - mu))
    k_out = np.round(n * stats.norm.sf(tau))
    p_lo = np.where(k_in > 0, stats.beta.ppf(alpha, np.maximum(k_in, 1), n - k_in + 1), 0.0)
    q_hi = np.where(k_out < n, stats.beta.ppf(1 - alpha, k_out + 1, np.maximum(n - k_out, 1)), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.where(p_lo > delta, np.log((p_lo - delta) / q_hi), 0.0)
    return float(max(eps.max(), 0.0))


def detectable_epsilon(epsilon_claimed, delta, n_runs, confidence=0.95):
    """The audit's power, stated: the epsilon (at ``delta``) of a Gaussian
    mechanism whose claim ``epsilon_claimed`` this audit typically refutes.

    The canary scores of a Gaussian mechanism are N(0, 1) and N(mu, 1)
    (mu-GDP, with the ideal statistic); the audit's bound at the expected
    counts grows with mu, and the smallest mu whose bound passes the claim
    is converted to epsilon. ``inf`` when even perfect separation cannot
    pass the claim (:func:`epsilon_ceiling`). The noise cut this audit
    detects is mu / mu_claimed.

    Examples
    --------
    >>> from skdpol.audit import detectable_epsilon
    >>> round(detectable_epsilon(1.0, 1e-5, 1000), 1)   # a noise cut of ~4x
    3.8
    """
    if epsilon_ceiling(n_runs, delta, confidence) <= epsilon_claimed:
        return math.inf
    lo, hi = 0.0, 1.0
    while _typical_bound(hi, n_runs, delta, confidence) <= epsilon_claimed:
        lo, hi = hi, 2.0 * hi
    for _ in range(40):
        mid = (lo + hi) / 2.0
        if _typical_bound(mid, n_runs, delta, confidence) > epsilon_claimed:
            hi = mid
        else:
            lo = mid
    return _gdp_to_epsilon(hi, delta)


# ---------------------------------------------------------------- one-run audit
def one_run_p_value(n_canaries, n_guesses, n_correct, epsilon, delta):
    """Chance that an (epsilon, delta)-DP training lets ``n_correct`` of
    ``n_guesses`` guesses about independent fair-coin canaries be right.

    Steinke, Nasr and Jagielski (2023, "Privacy auditing with one (1)
    training run", Theorem 3.1 and its delta extension, Proposition 5.1 /
    Theorem 5.2): with each of m canaries included with probability 1/2,
    the number W of correct guesses among r satisfies, for every v,

        P[W >= v] <= beta + 2 m delta alpha,
        beta  = P[Binomial(r, q) >= v],          q = e^eps / (1 + e^eps),
        alpha = max_{1 <= i <= v} (P[Binomial(r, q) >= v - i] - beta) / i.

    A p-value below the significance refutes the (epsilon, delta) claim.
    """
    q = 1.0 / (1.0 + math.exp(-epsilon))
    beta = float(stats.binom.sf(n_correct - 1, n_guesses, q))
    if delta == 0 or n_correct == 0:
        return min(beta, 1.0)
    i = np.arange(1, n_correct + 1)
    alpha = float(np.max((stats.binom.sf(n_correct - i - 1, n_guesses, q) - beta) / i))
    return min(beta + 2.0 * n_canaries * delta * alpha, 1.0)


def _one_run_bound(m, r, v, delta, significance):
    # the largest epsilon still refuted (p-value <= significance); the p-value
    # grows with epsilon, so bisect on [0, hi]
    if r == 0 or one_run_p_value(m, r, v, 0.0, delta) > significance:
        return 0.0
    hi = 1.0
    while one_run_p_value(m, r, v, hi, delta) <= significance:
        hi *= 2.0
        if hi > 1e3:
            return math.inf
    lo = 0.0
    for _ in range(50):
        mid = (lo + hi) / 2.0
        if one_run_p_value(m, r, v, mid, delta) <= significance:
            lo = mid
        else:
            hi = mid
    return lo


def one_run_epsilon(scores, included, delta, confidence=0.95, guesses=None):
    """Lower bound on epsilon from *one* training with many canaries.

    Each canary was put in the training data by a fair coin (``included``),
    independently of everything else; ``scores`` says how strongly the
    released model remembers each (larger = more likely included). The
    audit guesses "included" for the k highest scores and counts the right
    guesses (:func:`one_run_p_value`); k runs over ``guesses`` (default: m/2,
    m/4, ... down to 8) with a Bonferroni correction, so the bound holds
    with probability ``confidence`` whatever k turns out best.

    One training instead of thousands, at a price: the bound can never pass
    what r guesses can show (about 2 at epsilon 8 with 1,000 guesses, SNJ
    2023 Figure 1), so it finds gross leaks (a tenfold noise cut), not
    small ones. Use :func:`epsilon_lower_bound` on repeated runs for those.

    Parameters
    ----------
    scores : array of shape (m,)
    included : bool array of shape (m,)
        The coins: which canaries the training saw.
    delta : float
    confidence : float, default=0.95
    guesses : sequence of int, optional
        Numbers of top-scored canaries to guess; fix them before looking
        at the scores.

    Returns
    -------
    float
        The largest epsilon refuted at this confidence (0 if none).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.audit import one_run_epsilon
    >>> rng = np.random.default_rng(0)
    >>> included = rng.random(10_000) < 0.5
    >>> scores = included + rng.normal(0, 0.1, 10_000)   # a glaring leak
    >>> one_run_epsilon(scores, included, delta=1e-5) > 4
    True
    >>> one_run_epsilon(rng.normal(size=10_000), included, delta=1e-5)   # no signal
    0.0
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    included = np.asarray(included, dtype=bool).ravel()
    if scores.shape != included.shape:
        raise ValueError(f"scores ({scores.size}) and included ({included.size}) "
                         "must have one entry per canary.")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contains non-finite values.")
    m = scores.size
    if guesses is None:
        guesses = [m >> j for j in range(1, 64) if (m >> j) >= 8]
    guesses = [int(k) for k in guesses if 0 < int(k) <= m]
    if not guesses:
        raise ValueError(f"no usable number of guesses for {m} canaries.")
    significance = (1.0 - confidence) / len(guesses)
    # ties broken by a fixed permutation, never by the coins
    order = np.lexsort((np.arange(m)[::-1], -scores))
    hits = np.cumsum(included[order])
    return max(_one_run_bound(m, k, int(hits[k - 1]), delta, significance) for k in guesses)


# ------------------------------------------------------ the floating-point channel
def _neighbours(a, steps):
    """``a`` and its ``steps`` nearest doubles on each side."""
    out, up, down = [a], a, a
    for _ in range(steps):
        up, down = np.nextafter(up, np.inf), np.nextafter(down, -np.inf)
        out += [up, down]
    return out, up, down


def float_noise_can_give(release, value, scale, window=8):
    """Can ``release`` be ``value + scale * z`` computed in floating point?

    The exclusion test of Mironov (2012) for a float sampler that releases
    ``fl(value + fl(scale * z))`` (numpy's ``normal(value, scale)``,
    ``laplace``, and ``noise_sampler="float"``): per coordinate, True when
    some double z makes the computed release equal ``release``. A False
    coordinate rules ``value`` out *with certainty*, whatever epsilon the
    mechanism claims: the attack an observer of the exact doubles runs
    against each candidate neighbour.

    Sound (never False for a release that ``value`` did produce): z ranges
    over all doubles, a superset of any sampler's outputs, and wherever the
    search window cannot settle a coordinate the answer is True. The
    hardened ``noise_sampler="discrete"`` releases grid points that every
    neighbour reaches (:func:`grid_noise_can_give`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.audit import float_noise_can_give
    >>> rng = np.random.default_rng(0)
    >>> x, sigma = np.full(1000, 0.3), 7.3
    >>> r = x + rng.normal(0.0, sigma, 1000)        # what x released
    >>> bool(float_noise_can_give(r, x, sigma).all())   # never rules out the truth
    True
    >>> bool(float_noise_can_give(r, x + 1e-3, sigma).all())  # a neighbour is ruled out
    False
    """
    release = np.asarray(release, dtype=np.float64)
    value = np.broadcast_to(np.asarray(value, dtype=np.float64), release.shape)
    scale = float(scale)
    with np.errstate(all="ignore"):
        # the noises n with fl(value + n) == release form an interval of
        # doubles around release - value; look at `window` on each side
        noises, up, down = _neighbours(release - value, window)
        possible = ((value + up) == release) | ((value + down) == release)  # wider: unsure
        for n in noises:
            lands = (value + n) == release
            # is n = fl(scale * z) for some double z? fl(scale * .) is monotone,
            # so checking the doubles around n / scale settles it when they
            # bracket n; otherwise say yes
            zs, z_up, z_down = _neighbours(n / scale, 3)
            hit = np.zeros(release.shape, dtype=bool)
            for z in zs:
                hit |= (scale * z) == n
            unsure = ~(((scale * z_down) < n) & ((scale * z_up) > n))
            possible |= lands & (hit | unsure)
        possible |= ~np.isfinite(release)
    return possible


def grid_noise_can_give(release, step):
    """Can ``release`` come from the hardened sampler on a grid of ``step``?

    The discrete path releases ``step * (rint(value / step) + Z)`` with
    integer noise Z of full support, so a release is possible for every
    value (every neighbour) exactly when it is an integer number of grid
    steps below 2^52: per coordinate, the same answer for D and D', and the
    exclusion attack of :func:`float_noise_can_give` has nothing to work on.
    """
    k = np.asarray(release, dtype=np.float64) / float(step)
    return np.isfinite(k) & (k == np.rint(k)) & (np.abs(k) < 2.0**52)


def _default_statistic(model, canary_x):
    if hasattr(model, "_score_unchecked"):
        # a public release: its score at the canary, without re-validation
        return float(np.ravel(model._score_unchecked(canary_x[None, :]))[0])
    if hasattr(model, "decision_function"):
        return float(np.ravel(model.decision_function(canary_x[None, :]))[0])
    return float(np.ravel(model.predict(canary_x[None, :]))[0])


def audit_estimator(estimator, X, y, canary_x, canary_y, *, index=0,
                    method="fit", chunks=None, statistic=None, n_runs=1000,
                    delta=None, epsilon_claimed=None, confidence=0.95,
                    random_state=0, fit_params=None):
    """Audit an estimator's claimed epsilon on one pair of neighbouring data sets.

    D is ``(X, y)``; D' is the same with row ``index`` replaced by
    ``(canary_x, canary_y)``. The estimator is cloned and trained
    ``n_runs`` times on each with distinct ``random_state`` values.

    Parameters
    ----------
    estimator : estimator with ``random_state`` and ``privacy_spent_``
        Configured with the privacy parameters to audit (explicit bounds).
    X, y : ndarray
        The data set D.
    canary_x, canary_y : ndarray, scalar
        The replacement row of D'.
    index : int, default=0
        Row of D that the canary replaces. For continual release, 0 (the
        first row) lies in one node of every tree level.
    method : {"fit", "partial_fit"}, default="fit"
        How to train; ``"partial_fit"`` feeds the rows in ``chunks``.
    chunks : sequence of int or None
        Chunk sizes for ``"partial_fit"`` (they must sum to ``len(X)``). The
        default doubles (1, 1, 2, 4, ...), so that the releases after the
        calls use one distinct tree node holding row 0 at each level.
    statistic : callable or None
        ``statistic(models, canary_x) -> float`` where ``models`` is the list
        of models released after each call (one for ``"fit"``). The default
        sums the models' predictions (or decision values) at ``canary_x``.
    n_runs : int, default=1000
        Trainings per data set.
    delta : float or None
        The delta of the bound; None uses the delta the estimator reports.
    epsilon_claimed : float or None
        The claim under test; None uses ``privacy_spent_.epsilon``.
    confidence : float, default=0.95
    random_state : int, default=0
        Base of the per-run seeds (D uses base + i, D' base + n_runs + i).
    fit_params : dict or None
        Passed to every ``fit`` / ``partial_fit`` call (e.g. ``classes``).

    Returns
    -------
    result : AuditResult

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol import PrivateOnlineRegressor
    >>> from skdpol.audit import audit_estimator
    >>> X = np.zeros((20, 2)); y = np.zeros(20)
    >>> est = PrivateOnlineRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0)
    >>> result = audit_estimator(est, X, y, np.array([1.0, 0.0]), 1.0, n_runs=200)
    >>> result.refuted
    False
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    X_prime, y_prime = X.copy(), y.copy()
    X_prime[index], y_prime[index] = canary_x, canary_y
    if method == "partial_fit":
        if chunks is None:
            chunks = [1]
            while sum(chunks) < len(X):
                chunks.append(min(sum(chunks), len(X) - sum(chunks)))
        if sum(chunks) != len(X):
            raise ValueError(f"chunks sum to {sum(chunks)}, X has {len(X)} rows.")
    elif method != "fit":
        raise ValueError(f"method must be 'fit' or 'partial_fit', got {method!r}.")

    def default(models, cx):
        return sum(_default_statistic(m, cx) for m in models)

    statistic = statistic or default
    canary_x = np.asarray(canary_x, dtype=float)

    fit_params = fit_params or {}

    def run(Xd, yd, seed):
        est = clone(estimator).set_params(random_state=seed)
        models = []
        if method == "fit":
            est.fit(Xd, yd, **fit_params)
            models.append(est.public_model())
        else:
            start = 0
            for size in chunks:
                est.partial_fit(Xd[start:start + size], yd[start:start + size], **fit_params)
                models.append(est.public_model())
                start += size
        return statistic(models, canary_x), est.privacy_spent_

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        stats_d = np.array([run(X, y, random_state + i)[0] for i in range(n_runs)])
        results = [run(X_prime, y_prime, random_state + n_runs + i) for i in range(n_runs)]
    stats_dp = np.array([s for s, _ in results])
    spent = results[-1][1]
    delta = spent.delta if delta is None else delta
    claimed = spent.epsilon if epsilon_claimed is None else epsilon_claimed
    eps, tau = epsilon_lower_bound(stats_d, stats_dp, delta, confidence)
    return AuditResult(
        epsilon_lower_bound=eps, epsilon_claimed=claimed, delta=delta,
        confidence=confidence, n_runs=n_runs, threshold=tau,
        epsilon_gdp=gdp_epsilon(stats_d, stats_dp, delta),
        epsilon_ceiling=epsilon_ceiling(n_runs, delta, confidence),
        epsilon_detectable=detectable_epsilon(claimed, delta, n_runs, confidence),
    )

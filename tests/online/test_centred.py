"""The regressor's stream on privately centred rows (skdpol.online._centred)."""

import math
import pickle
import warnings

import numpy as np
import pytest
from dp_accounting import ComposedDpEvent, GaussianDpEvent, ZCDpEvent
from dp_accounting.rdp import RdpAccountant

from skdpol import PrivateOnlineRegressor
from skdpol.accounting import epsilon_spent
from skdpol.audit import detectable_epsilon, epsilon_lower_bound
from skdpol.losses._linear import HuberLoss
from skdpol.mechanisms import NoiseSpec, prefix_sum_event
from skdpol.online import make_stream
from skdpol.online._centred import (
    BOUND_SHARE,
    CENTRED_CONSTANT,
    MAX_BOUND,
    MEAN_SHARE,
    STREAM_SHARE,
    CentredMomentumFTRL,
    bound_epsilon,
    centred_event,
    mean_sensitivity,
)
from skdpol.online._momentum import MomentumFTRL

TAU = 0.125


def _stream(*, n_features=5, batch_size=10, horizon=400, epsilon=1.0, delta=1e-6,
            sampler="discrete", seed=0, centre=True):
    return make_stream(
        "ftrl-momentum", loss=HuberLoss(TAU), n_features=n_features, radius=math.inf,
        alpha=0.0, row_bound=math.sqrt(2.0), batch_size=batch_size, horizon=horizon,
        epsilon=epsilon, delta=delta, noise=NoiseSpec("gaussian", sampler),
        calibration="tight", feedback="full", rng=np.random.default_rng(seed),
        mechanism="blt", intercept=1.0, centre=centre)


def _unit_rows(rng, n, d, centre=0.6, spread=0.1):
    """Unit-space rows [u, 1] far inside the ball (a mean and a small spread)."""
    U = centre / math.sqrt(d) + spread * rng.normal(size=(n, d)) / math.sqrt(d)
    U /= np.maximum(1.0, np.linalg.norm(U, axis=1, keepdims=True))
    return np.hstack([U, np.ones((n, 1))])


def generated(n=20_000, d=10, seed=0):
    """A regression whose rows sit far inside their public bound: each feature
    about 1 +- 0.2, data_norm = 1.8 sqrt(d) (King County's shape)."""
    rng = np.random.default_rng(seed)
    X = 1.0 + 0.2 * rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = X @ w + 0.3 * rng.normal(size=n)
    return X, y, float(1.8 * math.sqrt(d)), float(np.abs(y).max())


# ----------------------------------------------------------------- calibration
@pytest.mark.parametrize("sampler", ["discrete", "float"])
def test_centring_and_stream_compose_to_exactly_the_budget(sampler):
    algo = _stream(sampler=sampler)
    assert isinstance(algo, CentredMomentumFTRL)
    m = algo._multiplier
    event = algo.event(algo.horizon)
    assert isinstance(event, ComposedDpEvent)
    mean_event, bound_event, stream_event = event.events
    # dp-accounting's RDP accountant on the three pieces: epsilon = 1 at delta
    rdp = RdpAccountant()
    for e in event.events:
        rdp.compose(e)
    assert rdp.get_epsilon(1e-6) == pytest.approx(1.0, rel=1e-3)
    assert epsilon_spent(event, 1e-6)[0] == pytest.approx(1.0, rel=1e-6)

    # the shares: 5 % (mean), 2 % (bound), 93 % (stream) of rho
    def rho(e):
        if isinstance(e, GaussianDpEvent):
            return 0.5 / e.noise_multiplier**2
        assert isinstance(e, ZCDpEvent)
        return e.rho
    total = sum(rho(e) for e in event.events)
    assert rho(mean_event) / total == pytest.approx(MEAN_SHARE, rel=1e-9)
    assert rho(bound_event) / total == pytest.approx(BOUND_SHARE, rel=1e-9)
    assert rho(stream_event) / total == pytest.approx(STREAM_SHARE, rel=1e-9)
    assert rho(stream_event) == pytest.approx(0.5 / m**2, rel=1e-12)
    assert bound_event.rho == pytest.approx(bound_epsilon(m) ** 2 / 8)


def test_nothing_is_spent_before_the_first_round():
    algo = _stream()
    assert algo.event(0) == algo._tree.event(0)
    assert isinstance(algo.event(1), ComposedDpEvent)


def test_the_rule_is_public_and_keeps_todays_stream_elsewhere():
    assert isinstance(_stream(epsilon=math.inf), MomentumFTRL)
    assert not isinstance(_stream(epsilon=math.inf), CentredMomentumFTRL)
    assert not isinstance(_stream(centre=False), CentredMomentumFTRL)
    assert not isinstance(_stream(batch_size=1), CentredMomentumFTRL)
    # d = 1,000 over 20,000 rows at epsilon 1: the mean would need ~7,300 rows
    wide = _stream(n_features=1001, batch_size=400, horizon=50)
    assert not isinstance(wide, CentredMomentumFTRL)
    assert isinstance(_stream(n_features=101, batch_size=313, horizon=64),
                      CentredMomentumFTRL)
    # a planned 100,000 rows or more: the rows outweigh the noise, no centring
    assert isinstance(_stream(n_features=91, batch_size=100, horizon=999), CentredMomentumFTRL)
    assert not isinstance(_stream(n_features=91, batch_size=100, horizon=1_000),
                          CentredMomentumFTRL)


# ----------------------------------------------------------------- sensitivity
def test_the_mean_sums_move_by_at_most_2_sqrt2():
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(2000):
        A = _unit_rows(rng, 20, 4, centre=rng.uniform(0, 1.2), spread=rng.uniform(0, 3))
        u = rng.uniform(-1, 1, 20)
        B, v = A.copy(), u.copy()
        B[7] = _unit_rows(rng, 1, 4, centre=-1.0, spread=3.0)[0]
        v[7] = -np.sign(u[7])
        s = np.append(A[:, :-1].sum(axis=0), u.sum())
        t = np.append(B[:, :-1].sum(axis=0), v.sum())
        worst = max(worst, np.linalg.norm(s - t))
    assert worst <= mean_sensitivity(20)
    assert worst > 2.0  # the bound is approached
    assert mean_sensitivity(1000) == pytest.approx(2 * math.sqrt(2), rel=1e-9)
    assert mean_sensitivity(1000) > 2 * math.sqrt(2)


def test_centred_rows_have_the_stated_bound_and_leaf_sensitivity():
    rng = np.random.default_rng(4)
    algo = _stream(n_features=5, batch_size=10, horizon=40, epsilon=50.0)
    A = _unit_rows(rng, algo.centre_rows, 4)
    algo.learn(A, rng.uniform(-1, 1, A.shape[0]))
    assert algo.mean is not None and 0 < algo.bound <= MAX_BOUND
    assert algo.row_bound == pytest.approx(math.hypot(algo.bound, CENTRED_CONSTANT))
    assert algo.lipschitz == pytest.approx(TAU * algo.row_bound)
    # rows far out are clipped onto B (the training rows, not the published model)
    seen = []
    original = MomentumFTRL._round

    def spy(self, X, y):
        seen.append(np.asarray(X).copy())
        return original(self, X, y)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MomentumFTRL, "_round", spy)
        algo.learn(_unit_rows(rng, 10, 4, centre=-1.0, spread=5.0), np.ones(10))
    W = seen[0][:, :-1]
    assert np.all(np.linalg.norm(W, axis=1) <= algo.bound)
    # the released noise is that of leaves of sensitivity 2 tau R_B
    released_std = algo._tree.noise_std_at([1])[0]
    inner_std = algo._tree.inner.noise_std_at([1])[0]
    assert released_std / inner_std == pytest.approx(
        algo.row_bound / math.hypot(MAX_BOUND, CENTRED_CONSTANT))


def test_the_published_model_predicts_raw_rows_as_the_centred_model():
    rng = np.random.default_rng(5)
    algo = _stream(epsilon=20.0)
    A = _unit_rows(rng, algo.centre_rows + 20, 4)
    algo.learn(A, rng.uniform(-1, 1, A.shape[0]))
    theta = algo._average * algo._scale  # on the centred rows [w, 1]
    W = algo.published
    V = A[:, :-1]
    centred = np.hstack([V - algo.mean, np.ones((V.shape[0], 1))])
    inside = np.linalg.norm(V - algo.mean, axis=1) <= algo.bound
    assert inside.any()
    np.testing.assert_allclose((A @ W.T)[inside], (centred @ theta.T)[inside], atol=1e-12)


# ----------------------------------------------------------------- audit
AUDIT_EPSILON, AUDIT_DELTA = 12.0, 1e-5  # the mean's own share: epsilon ~2.2


def _centred_algo(seed, factor=1.0, sampler="discrete"):
    """A centred stream built directly (whatever the hold rule says), its
    calibration as the factory's, every multiplier times ``factor``."""
    spec = NoiseSpec.calibrated(
        AUDIT_EPSILON, AUDIT_DELTA, sampler=sampler,
        make_event=lambda m: centred_event(
            prefix_sum_event("blt", horizon=1, noise=NoiseSpec("gaussian", sampler, m)),
            m, sampler)).scaled(factor)
    return CentredMomentumFTRL(loss=HuberLoss(TAU), n_features=3, alpha=0.0, batch_size=1,
                               horizon=1, noise=spec, rng=np.random.default_rng(seed),
                               centre_rows=1)


def _released_sums(X, y, seed, factor):
    """The mean's release [sum v~, sum u~] itself (before the projections,
    which are post-processing and only hide the canary)."""
    out = []
    perturb = NoiseSpec.perturb

    def spy(self, *args, **kwargs):
        value = perturb(self, *args, **kwargs)
        out.append(value)
        return value
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(NoiseSpec, "perturb", spy)
        _centred_algo(seed, factor)._release_centring(X, y)
    released = out[0]
    return released[0] + released[-1]  # along the canary's move (2, 0, 2)


def test_audit_of_the_centring_release(audit_runs):
    """The mean's release on the worst pair (one row: [-1, 0] with label -1,
    or [1, 0] with +1: the sums move by 2 sqrt(2)), claimed at its own
    share's epsilon. Not refuted honestly; refuted with a tenth of the noise."""
    X, Xp = np.array([[-1.0, 0.0, 1.0]]), np.array([[1.0, 0.0, 1.0]])
    y, yp = np.array([-1.0]), np.array([1.0])
    algo = _centred_algo(0)
    mean_event = algo.event(1).events[0]
    claimed = epsilon_spent(mean_event, AUDIT_DELTA)[0]
    assert 1.5 < claimed < 3.0
    found = {}
    for factor in (1.0, 0.1):
        d = np.array([_released_sums(X, y, i, factor) for i in range(audit_runs)])
        dp = np.array([_released_sums(Xp, yp, audit_runs + i, factor)
                       for i in range(audit_runs)])
        found[factor] = epsilon_lower_bound(d, dp, AUDIT_DELTA)[0]
    assert found[1.0] <= claimed, (found, claimed)
    assert found[0.1] > claimed, (found, claimed,
                                  detectable_epsilon(claimed, AUDIT_DELTA, audit_runs))


# ----------------------------------------------------------------- the estimator
def _one_pass(est, X, y, chunk=1_000):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lo in range(0, X.shape[0], chunk):
            est.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk])
    return est


def _regressor(data_norm, y_bound, **params):
    return PrivateOnlineRegressor(epsilon=1.0, delta=1e-6, data_norm=data_norm,
                                  y_bound=y_bound, **params)


def test_rows_far_inside_their_bound_beat_todays_stream(monkeypatch):
    X, y, data_norm, y_bound = generated()
    Xte, yte, _, _ = generated(n=5_000, seed=99)
    ours, todays = [], []
    for seed in range(3):
        est = _one_pass(_regressor(data_norm, y_bound, horizon=len(X), random_state=seed), X, y)
        assert isinstance(est._stream.algorithm, CentredMomentumFTRL)
        ours.append(est.score(Xte, yte))
    monkeypatch.setattr("skdpol.online._factory.centres", lambda *a: False)
    for seed in range(3):
        est = _one_pass(_regressor(data_norm, y_bound, horizon=len(X), random_state=seed), X, y)
        assert not isinstance(est._stream.algorithm, CentredMomentumFTRL)
        todays.append(est.score(Xte, yte))
    assert np.median(ours) > np.median(todays), (ours, todays)


def test_privacy_spent_and_the_declared_cost_include_the_centring():
    from skdpol.ledger._hook import declared_event
    X, y, data_norm, y_bound = generated(n=3_000)
    est = _regressor(data_norm, y_bound, horizon=3_000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lo in range(0, 3_000, 250):  # calls of 250 rows: the first ones are held
            declared, _ = declared_event(est, est._learn, (X[lo:lo + 250], y[lo:lo + 250], False))
            est.partial_fit(X[lo:lo + 250], y[lo:lo + 250])
            recorded = est._stream.algorithm.event()
            assert epsilon_spent(declared, 1e-6) == epsilon_spent(recorded, 1e-6)
            held = est._stream.algorithm.mean is None
            assert held == (lo + 250 < est._stream.algorithm.centre_rows)
            assert isinstance(recorded, ComposedDpEvent) != held
            if held:
                assert est.n_samples_learned_ == 0
                np.testing.assert_array_equal(est.coef_, 0.0)
    assert est.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-6)


def test_an_open_stream_centres_and_flush_centres_held_rows():
    X, y, data_norm, y_bound = generated(n=3_000)
    est = _one_pass(_regressor(data_norm, y_bound, random_state=0), X, y)  # horizon=None
    assert isinstance(est._stream.algorithm, CentredMomentumFTRL)
    assert est._stream.algorithm.mean is not None
    short = _regressor(data_norm, y_bound, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        short.partial_fit(X[:120], y[:120])  # all held
    algo = short._stream.algorithm
    assert algo.mean is None and short.n_samples_learned_ == 0
    from skdpol.ledger._hook import declared_event
    declared, _ = declared_event(short, short._flush, ())
    short.flush()
    assert algo is short._stream.algorithm and algo.mean is not None
    assert short.n_samples_learned_ == 120 and short.n_samples_waiting_ == 0
    assert epsilon_spent(declared, 1e-6) == epsilon_spent(algo.event(), 1e-6)
    assert np.any(short.coef_ != 0.0)


def test_fit_with_ftrl_momentum_centres_and_auto_fit_is_unchanged():
    X, y, data_norm, y_bound = generated(n=3_000)
    est = _regressor(data_norm, y_bound, algorithm="ftrl-momentum", random_state=0).fit(X, y)
    assert isinstance(est._stream.algorithm, CentredMomentumFTRL)
    assert est.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-6)
    auto = _regressor(data_norm, y_bound, random_state=0).fit(X, y)
    assert auto.algorithm_ == "noisy-gd"


def test_a_call_that_fails_after_the_centring_changes_nothing(monkeypatch):
    X, y, data_norm, y_bound = generated(n=3_000)
    a = _regressor(data_norm, y_bound, horizon=3_000, random_state=0)
    b = _regressor(data_norm, y_bound, horizon=3_000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.partial_fit(X[:500], y[:500])  # held
        b.partial_fit(X[:500], y[:500])
        before = pickle.dumps(a)
        # a fault after the centring's draw and the rounds (the release's record)
        import skdpol.linear_model._base as base

        def fail(*args, **kwargs):
            raise RuntimeError("injected")
        with monkeypatch.context() as patch:
            patch.setattr(base, "record_release", fail)
            with pytest.raises(RuntimeError, match="injected"):
                a.partial_fit(X[500:1500], y[500:1500])
        assert pickle.dumps(a) == before
        assert a._stream.algorithm.mean is None
        # bad input in the chunk that would centre: refused, nothing changed
        bad = X[500:1500].copy()
        bad[3, 2] = np.nan
        with pytest.raises(ValueError):
            a.partial_fit(bad, y[500:1500])
        assert pickle.dumps(a) == before
        for est in (a, b):
            est.partial_fit(X[500:1500], y[500:1500])
            est.partial_fit(X[1500:], y[1500:])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_


def test_pickle_mid_hold_and_after_resumes_the_same_stream():
    X, y, data_norm, y_bound = generated(n=3_000)
    ref = _regressor(data_norm, y_bound, horizon=3_000, random_state=0)
    est = _regressor(data_norm, y_bound, horizon=3_000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lo in range(0, 3_000, 500):
            ref.partial_fit(X[lo:lo + 500], y[lo:lo + 500])
            est = pickle.loads(pickle.dumps(est))  # seeded: a bit-exact continuation
            est.partial_fit(X[lo:lo + 500], y[lo:lo + 500])
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    # the public model folds the centring in: predictions on raw X, no clipping
    public = est.public_model()
    np.testing.assert_allclose(public.predict(X[:50]), est.predict(X[:50]))
    np.testing.assert_allclose(est.predict(X[:50]), X[:50] @ est.coef_ + est.intercept_)


def test_release_every_publishes_the_centred_model_on_its_calls():
    X, y, data_norm, y_bound = generated(n=4_000)
    est = _regressor(data_norm, y_bound, horizon=4_000, release_every=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lo in range(0, 4_000, 500):
            est.partial_fit(X[lo:lo + 500], y[lo:lo + 500])
    assert isinstance(est._stream.algorithm, CentredMomentumFTRL)
    assert est.n_samples_learned_ == 4_000
    assert est.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-6)


@pytest.mark.slow
def test_audit_of_the_whole_centred_stream(audit_runs, weakened_noise, monkeypatch):
    """The estimator end to end (the mean, the bound and the stream's leaf:
    the canary is in the held rows and in the round), claimed at epsilon 2,
    one release of one round of 64 rows (held for the centring: the hold is
    forced to the round; its count is public and the argument does not
    depend on it). Not refuted honestly; refuted with a tenth of the
    calibrated noise."""
    from skdpol.audit import audit_estimator
    monkeypatch.setattr("skdpol.online._factory.centre_rows", lambda *a: 64)
    # the canary's row is in both; its label flips, so its residual is clipped
    # to -tau in D and +tau in D': the leaf moves by 2 tau ||w||. The other
    # rows are unit rows at +-e2: the median centred norm is ~1, so B = 1 and
    # the canary's centred row (~e1) is not clipped away
    X, y = np.zeros((64, 2)), np.zeros(64)
    X[1:, 1] = np.resize([1.0, -1.0], 63)
    X[0, 0], y[0] = 1.0, -1.0
    est = PrivateOnlineRegressor(epsilon=2.0, delta=1e-5, data_norm=1.0, y_bound=1.0,
                                 residual_bound=1.0, batch_size=64, horizon=64)

    def coefficient(models, canary_x):
        # the leaf moves the canary's coefficient; the intercept also carries
        # the label mean, whose move is opposite, and would hide it
        return sum(float(m.coef_[0]) for m in models)

    def run(**kw):
        return audit_estimator(est, X, y, np.array([1.0, 0.0]), 1.0, method="partial_fit",
                               chunks=[64], n_runs=audit_runs, statistic=coefficient, **kw)
    honest = run()
    assert honest.epsilon_claimed <= 2.0 + 1e-9
    assert not honest.refuted, honest
    with weakened_noise(0.1):
        cut = run(epsilon_claimed=2.0)
    assert cut.refuted, cut


def test_the_scaled_prefix_sum_states_its_leaves_sensitivity_and_noise_in_its_units():
    from skdpol.mechanisms import BLTPrefixSum
    from skdpol.online._centred import _ScaledPrefixSum
    inner = BLTPrefixSum(dim=3, horizon=8, sensitivity=2.0, noise_multiplier=1.5,
                         rng=np.random.default_rng(0))
    scaled = _ScaledPrefixSum(inner, 4.0)
    assert scaled.sensitivity == pytest.approx(0.5)
    # the noise per unit of sensitivity is the inner mechanism's (a public ratio)
    assert (scaled.noise_std_at(5) / scaled.sensitivity
            == pytest.approx(inner.noise_std_at(5) / inner.sensitivity))

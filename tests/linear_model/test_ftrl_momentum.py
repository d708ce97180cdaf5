"""algorithm="ftrl-momentum" in the estimators: the regressor's default stream.

Resolution of "auto", accuracy against one pass of scikit-learn's SGD on a
generated stream (and at epsilon = inf), ``fit``, bad input, and an end-to-end
audit (the claim not refuted honestly, refuted with a tenth of the noise).
"""

import math

import numpy as np
import pytest
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.metrics import accuracy_score, r2_score

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.exceptions import BudgetExhaustedError

# tests/linear_model/_huber_audit.py
from _huber_audit import CASES, check_audit, regression_rows as _regression

CHUNK = 1_000


def _stream(est, X, y, **kw):
    for lo in range(0, X.shape[0], CHUNK):
        est.partial_fit(X[lo:lo + CHUNK], y[lo:lo + CHUNK], **kw)
    return est


# ----------------------------------------------------------------- "auto"
@pytest.mark.parametrize("params, stream, expected", [
    (dict(), True, "ftrl-momentum"),
    (dict(mechanism="tree"), True, "ftrl-momentum"),
    # pure DP: the first-order stream too (PURE_STREAM; PQFTL published the
    # zero model there, docs/benchmarks/pure_stream.md)
    (dict(delta=0.0), True, "ftrl-momentum"),
    (dict(delta=0.0, noise_calibration="paper"), True, "ftl"),
    (dict(noise_calibration="paper"), True, "ftl"),  # the seeds' calibration: PQFTL
    (dict(), False, "noisy-gd"),  # fit unchanged
    (dict(delta=0.0), False, "ftl"),
    (dict(algorithm="ftl"), True, "ftl"),  # still selectable
])
def test_the_regressor_auto_stream(params, stream, expected):
    est = PrivateOnlineRegressor(**params)
    assert est._algorithm_for(stream) == expected


def test_the_classifier_auto_stream_is_ls_not_momentum():
    """The classifier streams "ls" (docs/benchmarks/classifier_stream.md), also
    under pure DP; "ftrl" for the paper calibration (not defined for "ls")."""
    assert PrivateOnlineLogistic()._algorithm_for(True) == "ls"
    assert PrivateOnlineLogistic(noise_calibration="paper")._algorithm_for(True) == "ftrl"
    assert PrivateOnlineLogistic(delta=0.0)._algorithm_for(True) == "ls"


# ----------------------------------------------------------------- rounds
@pytest.mark.parametrize("params, rows, step_rows", [
    (dict(horizon=None), 100, 100),
    (dict(horizon=5_000), 50, 50),
    (dict(horizon=100_000), 100, 100),  # every real table: today's rounds and step
    (dict(horizon=200_000), 200, 100),  # longer: 1,000 rounds, the step of 100 rows
    (dict(horizon=1_000_000), 1_000, 100),
    # k x the rule, k x its step, capped at one round's after the noise scale
    (dict(horizon=200_000, release_every=2), 400, ("stable", 200)),
    # a set batch_size: its own step, capped at 100 rows' after the noise scale
    (dict(horizon=200_000, batch_size=200), 200, ("stable", 200)),
])
def test_auto_rounds_and_their_step(params, rows, step_rows):
    X, y, data_norm, y_bound = _regression(n=1_000)
    est = PrivateOnlineRegressor(data_norm=data_norm, y_bound=y_bound, random_state=0,
                                 **params)
    est.partial_fit(X, y)
    algo = est._stream.algorithm
    assert est.batch_size_ == rows and algo.batch_size == rows
    # the round's step times the noise rule's public scale (noise_step_scale:
    # sqrt(1 + (r / 0.2)^2), r = d nu^2 / n; for an open horizon at the rounds
    # so far, at least 40: open_rule_rounds)
    scale = algo._noise_step_scale(algo.loss)
    if isinstance(step_rows, tuple):  # lr lambda <= 2 (the heavy ball's bound is 3.9)
        assert algo.learning_rate == pytest.approx(min(step_rows[1] / scale, 100) / (50 * 1.25))
    else:
        assert algo.learning_rate == pytest.approx(step_rows / (50 * 1.25 * scale))
    if params.get("horizon") is None:  # 10 rounds: the rule of 40 rounds of 100 rows
        assert algo.n_rounds == 10
        assert scale == algo._noise_step_scale(algo.loss, 40) > 1.0
    elif params["horizon"] >= 100_000:  # d = 5 over 100,000+ rows: r ~ 0.01
        assert 1.0 < scale < 1.01


def test_fit_over_more_than_100000_rows_takes_the_same_rounds_and_step():
    X, y, data_norm, y_bound = _regression(n=150_000, d=3)
    est = PrivateOnlineRegressor(data_norm=data_norm, y_bound=y_bound, delta=1e-7,
                                 algorithm="ftrl-momentum", random_state=0).fit(X, y)
    algo = est._stream.algorithm  # the one pass fit ran
    assert algo.batch_size == 150 and algo.n_rounds == 1_000
    scale = algo._noise_step_scale(algo.loss)  # the noise rule's, ~1 here (r ~ 0.003)
    assert 1.0 < scale < 1.001
    assert algo.learning_rate == pytest.approx(100 / (50 * 1.25 * scale))


def test_bigger_rounds_stay_scale_free():
    """Past 100,000 rows the rounds grow with the horizon (a row count), not
    with the data: multiplying X and data_norm by 1,000 and y and y_bound by
    100 multiplies the predictions by 100."""
    X, y, data_norm, y_bound = _regression(n=150_000, d=3)
    preds = []
    for sx, sy in ((1.0, 1.0), (1000.0, 100.0)):
        est = PrivateOnlineRegressor(data_norm=data_norm * sx, y_bound=y_bound * sy,
                                     horizon=len(X), delta=1e-7, random_state=7)
        for lo in range(0, len(X), 10_000):
            est.partial_fit(X[lo:lo + 10_000] * sx, y[lo:lo + 10_000] * sy)
        assert est.batch_size_ == 150 and est.n_samples_learned_ == len(X)
        preds.append(est.predict(X[:2_000] * sx) / sy)
    np.testing.assert_allclose(preds[0], preds[1], rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------- accuracy
def test_a_set_batch_size_keeps_the_regressor_stable():
    """Rows that share a direction (friedman1's columns are uniform on [0, 1])
    and set rounds of 1,000 rows: the uncapped step b / (50 R~^2) is far past
    heavy ball's bound and gave R^2 -0.05; capped at ROUND_ROWS rows after the
    noise scale it learns (0.34 here; rounds of 100 reach 0.72)."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=25_000, noise=1.0, random_state=0)
    est = PrivateOnlineRegressor(epsilon=math.inf, data_norm=math.sqrt(10), y_bound=30.0,
                                 horizon=20_000, batch_size=1_000, random_state=0)
    for lo in range(0, 20_000, 5_000):
        est.partial_fit(X[lo:lo + 5_000], y[lo:lo + 5_000])
    assert est._stream.algorithm.learning_rate * est._stream.algorithm.row_bound**2 <= 2.0 + 1e-12
    assert est.score(X[20_000:], y[20_000:]) > 0.3


def test_one_pass_at_epsilon_inf_matches_one_pass_of_sgd():
    X, y, data_norm, y_bound = _regression()
    Xte, yte = X[15_000:], y[15_000:]
    X, y = X[:15_000], y[:15_000]
    est = _stream(PrivateOnlineRegressor(epsilon=math.inf, data_norm=data_norm,
                                         y_bound=y_bound, horizon=len(X), random_state=0),
                  X, y)
    assert est.algorithm_ == "ftrl-momentum" and est.batch_size_ == 100
    sgd = SGDRegressor(random_state=0)
    for lo in range(0, len(X), CHUNK):
        sgd.partial_fit(X[lo:lo + CHUNK], y[lo:lo + CHUNK])
    ours, theirs = r2_score(yte, est.predict(Xte)), r2_score(yte, sgd.predict(Xte))
    assert theirs > 0.9
    assert ours >= theirs - 0.01, (ours, theirs)


def test_one_pass_without_a_horizon_learns_at_epsilon_half():
    # the default horizon=None: the open rule (the step of a stream planned to
    # end at the rounds so far). 20,000 rows of d = 8 at epsilon 0.5, chunks of
    # 1,000: R^2 0.943-0.970 over seeds 0-3 (0.659-0.925 with the step
    # b / (50 R~^2) the open stream took before)
    X, y, data_norm, y_bound = _regression(n=25_000)
    est = _stream(PrivateOnlineRegressor(epsilon=0.5, delta=1e-6, data_norm=data_norm,
                                         y_bound=y_bound, random_state=0), X[:20_000], y[:20_000])
    assert est.algorithm_ == "ftrl-momentum" and est.horizon is None
    assert est._stream.algorithm.learning_rate < 100 / (50 * 1.25)  # the rule is on
    assert est.score(X[20_000:], y[20_000:]) >= 0.93


def test_one_pass_at_epsilon_one_is_close_to_the_noiseless_pass():
    X, y, data_norm, y_bound = _regression(n=40_000)
    scores = {}
    for eps in (1.0, math.inf):
        est = _stream(PrivateOnlineRegressor(epsilon=eps, delta=1e-6, data_norm=data_norm,
                                             y_bound=y_bound, horizon=len(X),
                                             random_state=1), X, y)
        scores[eps] = est.score(X, y)
    assert est.privacy_spent_.epsilon == math.inf
    assert scores[1.0] > scores[math.inf] - 0.05, scores
    # against the old default stream, PQFTL, on the same rows
    ftl = _stream(PrivateOnlineRegressor(epsilon=1.0, delta=1e-6, data_norm=data_norm,
                                         y_bound=y_bound, horizon=len(X), algorithm="ftl",
                                         random_state=1), X, y)
    assert scores[1.0] > ftl.score(X, y) - 0.02


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_classifier_stream_at_epsilon_inf_matches_sgd(n_classes):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20_000, 6))
    scores = X @ rng.normal(size=(6, n_classes)) + rng.logistic(size=(20_000, n_classes))
    y = np.argmax(scores, axis=1) if n_classes > 2 else (scores[:, 0] > scores[:, 1]).astype(int)
    Xtr, ytr, Xte, yte = X[:15_000], y[:15_000], X[15_000:], y[15_000:]
    est = _stream(PrivateOnlineLogistic(epsilon=math.inf, data_norm=6.0, horizon=15_000,
                                        algorithm="ftrl-momentum", random_state=0),
                  Xtr, ytr, classes=np.arange(n_classes))
    sgd = SGDClassifier(loss="log_loss", random_state=0)
    for lo in range(0, 15_000, CHUNK):
        sgd.partial_fit(Xtr[lo:lo + CHUNK], ytr[lo:lo + CHUNK], classes=np.arange(n_classes))
    ours = accuracy_score(yte, est.predict(Xte))
    theirs = accuracy_score(yte, sgd.predict(Xte))
    assert ours >= theirs - 0.01, (ours, theirs)


def test_fit_is_one_pass_of_the_stream_with_its_guarantee():
    X, y, data_norm, y_bound = _regression(n=6_000)
    est = PrivateOnlineRegressor(epsilon=1.0, delta=1e-6, data_norm=data_norm, y_bound=y_bound,
                                 algorithm="ftrl-momentum", random_state=0).fit(X, y)
    assert est.algorithm_ == "ftrl-momentum"
    assert est.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-6)
    assert est.n_samples_seen_ == 6_000 and est.n_samples_waiting_ == 0
    assert est.score(X, y) > 0.5


def test_every_call_publishes_and_one_budget_covers_all():
    X, y, data_norm, y_bound = _regression(n=5_000)
    est = PrivateOnlineRegressor(epsilon=1.0, delta=1e-6, data_norm=data_norm, y_bound=y_bound,
                                 horizon=5_000, random_state=0)
    for k, lo in enumerate(range(0, 5_000, CHUNK), start=1):
        est.partial_fit(X[lo:lo + CHUNK], y[lo:lo + CHUNK])
        assert est.privacy_spent_.releases == k
        assert est.privacy_spent_.epsilon <= 1.0 + 1e-9
    assert est.batch_size_ == 50  # a horizon below 10,000 rows: rounds of 50
    assert est.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-6)


# ----------------------------------------------------------------- bad input
def test_a_bad_chunk_names_the_problem_and_changes_nothing():
    X, y, data_norm, y_bound = _regression(n=3_000)
    est = PrivateOnlineRegressor(data_norm=data_norm, y_bound=y_bound, horizon=3_000,
                                 random_state=0)
    est.partial_fit(X[:1_000], y[:1_000])
    coef, seen = est.coef_.copy(), est.n_samples_seen_
    bad = X[1_000:2_000].copy()
    bad[7, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.partial_fit(bad, y[1_000:2_000])
    with pytest.raises(ValueError):
        est.partial_fit(X[1_000:2_000, :3], y[1_000:2_000])  # wrong number of features
    with pytest.raises(BudgetExhaustedError):
        est.partial_fit(X[:2_500], y[:2_500])  # past the horizon
    np.testing.assert_array_equal(est.coef_, coef)
    assert est.n_samples_seen_ == seen
    est.partial_fit(X[1_000:2_000], y[1_000:2_000])  # and the stream goes on
    assert est.n_samples_seen_ == 2_000


def test_switching_the_algorithm_mid_stream_is_refused():
    X, y, data_norm, y_bound = _regression(n=2_000)
    est = PrivateOnlineRegressor(data_norm=data_norm, y_bound=y_bound, random_state=0)
    est.partial_fit(X[:1_000], y[:1_000])
    est.set_params(algorithm="ftl")
    with pytest.raises(ValueError, match="algorithm"):
        est.partial_fit(X[1_000:], y[1_000:])


# ----------------------------------------------------------------- audit
@pytest.mark.parametrize("case", CASES)
def test_audit(case, audit_runs, weakened_noise):
    check_audit(case, audit_runs, weakened_noise, stream_algorithm="auto",
                fit_algorithm="ftrl-momentum")


@pytest.mark.parametrize("case", [
    "one release", pytest.param("continual release", marks=pytest.mark.slow)])
def test_audit_without_a_horizon(case, audit_runs, weakened_noise):
    # horizon=None: the open BLT's epochs and the open step rule (a step that
    # varies with the rounds so far, public): the same claim, the same verdicts
    check_audit(case, audit_runs, weakened_noise, stream_algorithm="auto",
                fit_algorithm="ftrl-momentum", open_horizon=True)

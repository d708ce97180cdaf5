"""PrivateOnlineLogistic with the least-squares stream ("ls", the default stream)."""

import math

import numpy as np
import pytest
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import log_loss
from sklearn.utils._param_validation import InvalidParameterError

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.online._lsq import INTERCEPT, LOGIT_SCALE
from skdpol.online._registry import LS_AUTO_MAX_FEATURES


def _data(n=20_000, d=5, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X @ np.linspace(1.5, -1.0, d) + rng.logistic(size=n)
    if n_classes == 2:
        return X, (score > 0).astype(int)
    return X, np.digitize(score, np.linspace(-1.5, 1.5, n_classes - 1))


def _stream(X, y, chunk=1000, **params):
    classes = np.unique(y)
    params = {"data_norm": 4.0, "random_state": 0, "horizon": len(X), **params}
    clf = PrivateOnlineLogistic(**params)
    for s in range(0, len(X), chunk):
        clf.partial_fit(X[s:s + chunk], y[s:s + chunk], classes=classes)
    return clf


# ------------------------------------------------------------------ "auto"
def test_auto_streams_with_ls_and_fits_with_noisy_gd():
    X, y = _data(3000)
    assert _stream(X, y).algorithm_ == "ls"
    clf = PrivateOnlineLogistic(data_norm=4.0, random_state=0).fit(X, y, classes=[0, 1])
    assert clf.algorithm_ == "noisy-gd"


def test_auto_takes_first_order_streams_for_wide_rows_and_the_paper_calibration():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, LS_AUTO_MAX_FEATURES + 1)) / 40
    y = rng.integers(0, 2, 50)
    # wide: "ftrl-momentum" (tests/linear_model/test_wide_auto.py), "ftrl" under pure DP
    clf = PrivateOnlineLogistic(data_norm=1.0, random_state=0, horizon=100)
    assert clf.partial_fit(X, y, classes=[0, 1]).algorithm_ == "ftrl-momentum"
    pure = PrivateOnlineLogistic(data_norm=1.0, random_state=0, horizon=100, delta=0.0)
    assert pure.partial_fit(X, y, classes=[0, 1]).algorithm_ == "ftrl"
    narrow = PrivateOnlineLogistic(data_norm=1.0, random_state=0, horizon=100)
    assert narrow.partial_fit(X[:, :LS_AUTO_MAX_FEATURES], y, classes=[0, 1]).algorithm_ == "ls"
    paper = PrivateOnlineLogistic(data_norm=1.0, random_state=0, horizon=100,
                                  noise_calibration="paper")
    assert paper.partial_fit(X[:, :3], y, classes=[0, 1]).algorithm_ == "ftrl"


def test_ls_refuses_the_paper_calibration_and_the_regressor():
    X, y = _data(200)
    clf = PrivateOnlineLogistic(data_norm=4.0, algorithm="ls", horizon=200,
                                noise_calibration="paper")
    with pytest.raises(ValueError, match="noise_calibration='paper' is not defined"):
        clf.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(InvalidParameterError, match="algorithm"):
        PrivateOnlineRegressor(y_bound=1.0, algorithm="ls").fit(X, y)


# ------------------------------------------------------------------ accuracy
def test_one_pass_at_eps_inf_is_at_least_one_pass_of_sgd():
    X, y = _data(30_000)
    Xte, yte = _data(10_000, seed=1)
    ours = _stream(X, y, epsilon=math.inf).score(Xte, yte)
    sgd = SGDClassifier(loss="log_loss", random_state=0)
    for s in range(0, len(X), 1000):
        sgd.partial_fit(X[s:s + 1000], y[s:s + 1000], classes=[0, 1])
    assert ours >= sgd.score(Xte, yte) - 0.005
    private = _stream(X, y, epsilon=1.0).score(Xte, yte)
    assert private >= ours - 0.02


def test_without_noise_the_model_is_least_squares_on_pm1_labels():
    X, y = _data(5000)
    clf = _stream(X, y, epsilon=math.inf)
    # the reference: unit rows (clipped to norm 1) with the constant INTERCEPT
    U = X / 4.0
    U /= np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1.0)
    A = np.hstack([U, np.full((len(U), 1), INTERCEPT)])
    n = len(A)
    w = np.linalg.solve(A.T @ A + n * 1e-6 * np.eye(A.shape[1]), A.T @ (2.0 * y - 1.0))
    np.testing.assert_allclose(clf.coef_[0], LOGIT_SCALE * w[:-1] / 4.0, rtol=1e-7)
    np.testing.assert_allclose(clf.intercept_[0], LOGIT_SCALE * w[-1] * INTERCEPT, rtol=1e-7)


def test_predict_proba_is_calibrated_enough_to_beat_the_base_rate():
    X, y = _data(20_000)
    Xte, yte = _data(5000, seed=2)
    clf = _stream(X, y, epsilon=1.0)
    proba = clf.predict_proba(Xte)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    base = log_loss(yte, np.full(len(yte), y.mean()))
    assert log_loss(yte, proba[:, 1]) < 0.8 * base


def test_multinomial_stream_learns_and_matches_one_hot_least_squares():
    X, y = _data(30_000, n_classes=3)
    Xte, yte = _data(5000, n_classes=3, seed=3)
    exact = _stream(X, y, epsilon=math.inf)
    assert exact.coef_.shape == (3, 5) and exact.intercept_.shape == (3,)
    U = X / 4.0
    U /= np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1.0)
    A = np.hstack([U, np.full((len(U), 1), INTERCEPT)])
    W = np.linalg.solve(A.T @ A + len(A) * 1e-6 * np.eye(6), A.T @ np.eye(3)[y])
    ref = np.argmax(np.hstack([Xte / 4.0, np.full((len(Xte), 1), 1.0)]) @ np.vstack(
        [W[:-1], W[-1] * INTERCEPT]), axis=1)
    assert np.mean(exact.predict(Xte) == ref) > 0.99  # unclipped test rows differ a little
    private = _stream(X, y, epsilon=1.0)
    assert private.score(Xte, yte) >= exact.score(Xte, yte) - 0.03
    np.testing.assert_allclose(private.predict_proba(Xte).sum(axis=1), 1.0)


def test_fit_with_ls_is_one_release_of_the_sums():
    X, y = _data(10_000)
    clf = PrivateOnlineLogistic(data_norm=4.0, algorithm="ls", random_state=0).fit(
        X, y, classes=[0, 1])
    assert clf.privacy_spent_.releases == 1
    assert clf.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-6)
    assert clf.score(X, y) > 0.75


# ------------------------------------------------------------------ rounds
def test_bigger_rounds_wait_count_and_account():
    X, y = _data(8000)
    clf = PrivateOnlineLogistic(data_norm=4.0, algorithm="ls", batch_size=3000,
                                horizon=8000, random_state=0)
    with pytest.warns(UserWarning, match="no round"):
        clf.partial_fit(X[:1000], y[:1000], classes=[0, 1])
    assert clf.n_samples_waiting_ == 1000
    for s in range(1000, 8000, 1000):
        clf.partial_fit(X[s:s + 1000], y[s:s + 1000])
    # the call that reaches the horizon learns the last 2,000 rows as a final round
    assert clf.n_samples_seen_ == clf.n_samples_learned_ == 8000
    assert clf.n_samples_waiting_ == 0
    assert clf.privacy_spent_.epsilon <= 1.0 + 1e-9
    assert clf.privacy_spent_.releases == 8  # a model after every call
    assert clf.score(X, y) > 0.75


def test_progressive_predict_with_per_row_rounds():
    X, y = _data(300)
    clf = PrivateOnlineLogistic(data_norm=4.0, algorithm="ls", batch_size=1, horizon=300,
                                random_state=0)
    clf.partial_fit(X[:100], y[:100], classes=[0, 1])
    proba = clf.progressive_predict(X[100:], y[100:])
    assert proba.shape == (200, 2) and np.all(np.isfinite(proba))
    assert clf.privacy_spent_.releases == 201


# ------------------------------------------------------------------ bad input
def test_bad_chunks_leave_the_stream_as_it_was():
    X, y = _data(3000)
    clf = _stream(X[:2000], y[:2000], horizon=3000)
    before = (clf.coef_.copy(), clf.intercept_.copy(), clf.n_samples_seen_,
              clf.privacy_spent_)
    bad_label = y[2000:2500].copy()
    bad_label[7] = 5
    with pytest.raises(ValueError, match=r"not in classes .* \(first rows \[7\]\)"):
        clf.partial_fit(X[2000:2500], bad_label)
    bad_rows = X[2000:2500].copy()
    bad_rows[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(bad_rows, y[2000:2500])
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[2000:2500, :3], y[2000:2500])
    assert np.array_equal(clf.coef_, before[0]) and np.array_equal(clf.intercept_, before[1])
    assert (clf.n_samples_seen_, clf.privacy_spent_) == before[2:]
    clf.partial_fit(X[2000:2500], y[2000:2500])  # and the stream goes on
    assert clf.n_samples_seen_ == 2500

"""PrivateOnlineRegressor: behaviour, bad input, what is released."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpol import BudgetExhaustedError, PrivacyLeakWarning, PrivateOnlineRegressor
from skdpol.datasets import make_online_regression
from skdpol.linear_model import PublicLinearRegressor
from skdpol.utils import clip_labels, clip_rows

BOUNDS = dict(data_norm=4.0, y_bound=6.0)


@pytest.fixture
def stream():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + 0.1 * rng.normal(size=4000)
    return X, y


def _state(est):
    return pickle.dumps(est)


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize("params, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=1.0), "delta"),
    (dict(delta=-0.1), "delta"),
    (dict(data_norm=0.0), "data_norm"),
    (dict(horizon=0), "horizon"),
    (dict(batch_size=0), "batch_size"),
    (dict(algorithm="sgd"), "algorithm"),
    (dict(noise_calibration="paper"), "horizon"),
    (dict(noise_calibration="paper", horizon=10, delta=0.0), "delta"),
])
def test_bad_parameters_are_named(params, match, stream):
    X, y = stream
    with pytest.raises(ValueError, match=match):
        PrivateOnlineRegressor(**{**BOUNDS, **params}).partial_fit(X[:10], y[:10])


@pytest.mark.parametrize("bad, match", [
    ("nan_x", "NaN"), ("inf_x", "infinity"), ("nan_y", "NaN"),
    ("width", "features"), ("multioutput", "1d array"),
])
def test_bad_rows_leave_the_state_untouched(bad, match, stream):
    X, y = stream
    est = PrivateOnlineRegressor(**BOUNDS, horizon=4000, random_state=0,
                                 algorithm="ftl").partial_fit(X[:100], y[:100])
    before = _state(est)
    Xb, yb = X[100:200].copy(), y[100:200].copy()
    if bad == "nan_x":
        Xb[17, 1] = np.nan
    elif bad == "inf_x":
        Xb[3, 0] = np.inf
    elif bad == "nan_y":
        yb[5] = np.nan
    elif bad == "width":
        Xb = Xb[:, :2]
    else:
        yb = np.c_[yb, yb]
    with pytest.raises(ValueError, match=match):
        est.partial_fit(Xb, yb)
    assert _state(est) == before
    est.partial_fit(X[100:200], y[100:200])  # and the stream goes on


def test_stream_past_its_horizon_is_refused_and_nothing_is_lost(stream):
    X, y = stream
    est = PrivateOnlineRegressor(**BOUNDS, horizon=250, random_state=0)
    est.partial_fit(X[:200], y[:200])
    before = _state(est)
    with pytest.raises(BudgetExhaustedError, match="horizon=250"):
        est.partial_fit(X[200:300], y[200:300])
    assert _state(est) == before
    est.partial_fit(X[200:250], y[200:250])
    assert est.n_samples_seen_ == 250
    with pytest.raises(BudgetExhaustedError):
        PrivateOnlineRegressor(**BOUNDS, horizon=5).partial_fit(X[:6], y[:6])


def test_first_call_failure_leaves_an_unfitted_estimator(stream):
    X, y = stream
    est = PrivateOnlineRegressor(**BOUNDS, horizon=5)
    with pytest.raises(BudgetExhaustedError):
        est.partial_fit(X[:6], y[:6])
    assert not hasattr(est, "n_features_in_") and not hasattr(est, "_stream")


def test_sparse_input_is_accepted(stream):
    # CSR / CSC learn the dense input's model (tests/linear_model/test_sparse.py)
    from scipy import sparse
    X, y = stream
    est = PrivateOnlineRegressor(**BOUNDS, random_state=0).fit(sparse.csr_matrix(X), y)
    ref = PrivateOnlineRegressor(**BOUNDS, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-9, atol=1e-9)


# -------------------------------------------------------------- the guarantee
def test_privacy_spent_grows_to_the_budget_and_never_past_it(stream):
    X, y = stream
    est = PrivateOnlineRegressor(epsilon=0.7, delta=1e-6, **BOUNDS, horizon=4000, random_state=0)
    spent = []
    for start in range(0, 4000, 500):
        est.partial_fit(X[start:start + 500], y[start:start + 500])
        spent.append(est.privacy_spent_.epsilon)
    assert all(a <= b for a, b in zip(spent, spent[1:]))
    assert spent[-1] == pytest.approx(0.7, rel=1e-6)
    assert max(spent) <= 0.7 * (1 + 1e-9)
    assert est.privacy_spent_.delta == 1e-6
    assert est.privacy_spent_.releases == 8
    assert est.privacy_spent_.bounds_trusted


def test_unbounded_stream_stays_within_budget(stream):
    X, y = stream
    est = PrivateOnlineRegressor(epsilon=1.0, **BOUNDS, horizon=None, random_state=0)
    for start in range(0, 4000, 400):
        est.partial_fit(X[start:start + 400], y[start:start + 400])
        assert est.privacy_spent_.epsilon < 1.0


def test_fit_spends_exactly_the_budget_once(stream):
    X, y = stream
    est = PrivateOnlineRegressor(epsilon=0.5, **BOUNDS, random_state=0).fit(X, y)
    assert est.privacy_spent_.epsilon == pytest.approx(0.5, rel=1e-6)
    assert est.privacy_spent_.releases == 1
    pure = PrivateOnlineRegressor(epsilon=0.5, delta=0.0, **BOUNDS, random_state=0).fit(X, y)
    assert pure.privacy_spent_.epsilon == pytest.approx(0.5) and pure.privacy_spent_.accountant == "pure"


def test_missing_bounds_warn_and_are_reported(stream):
    X, y = stream
    with pytest.warns(PrivacyLeakWarning, match="data_norm"):
        est = PrivateOnlineRegressor(y_bound=6.0).partial_fit(X[:50], y[:50])
    assert not est.privacy_spent_.bounds_trusted
    with pytest.warns(PrivacyLeakWarning, match="y_bound"):
        PrivateOnlineRegressor(data_norm=4.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PrivateOnlineRegressor(**BOUNDS).fit(X, y)  # given bounds: no warning


def test_rows_and_labels_are_clipped_so_outliers_cannot_dominate(stream):
    X, y = stream
    Xo, yo = X.copy(), y.copy()
    Xo[0] *= 1e6
    yo[0] = 1e9
    a = PrivateOnlineRegressor(epsilon=np.inf, **BOUNDS).fit(Xo, yo)
    b = PrivateOnlineRegressor(epsilon=np.inf, **BOUNDS).fit(X, y)
    assert np.abs(a.coef_ - b.coef_).max() < 0.05


def test_chunking_does_not_change_the_published_model(stream):
    X, y = stream
    one = PrivateOnlineRegressor(**BOUNDS, horizon=4000, batch_size=1,
                                 random_state=3).partial_fit(X, y)
    many = PrivateOnlineRegressor(**BOUNDS, horizon=4000, batch_size=1, random_state=3)
    for idx in np.array_split(np.arange(4000), 9):
        many.partial_fit(X[idx], y[idx])
    assert np.allclose(one.coef_, many.coef_, rtol=1e-9)
    assert one.intercept_ == pytest.approx(many.intercept_, rel=1e-9)


def test_partial_fit_after_fit_starts_a_new_stream(stream):
    X, y = stream
    est = PrivateOnlineRegressor(**BOUNDS, horizon=1000, random_state=0).fit(X, y)
    est.partial_fit(X[:300], y[:300])
    assert est.n_samples_seen_ == 300
    assert est.privacy_spent_.releases == 1


def test_same_seed_same_model_and_none_is_fresh(stream):
    X, y = stream
    a = PrivateOnlineRegressor(**BOUNDS, random_state=1).fit(X, y)
    b = PrivateOnlineRegressor(**BOUNDS, random_state=1).fit(X, y)
    c = PrivateOnlineRegressor(**BOUNDS, random_state=None).fit(X, y)
    d = PrivateOnlineRegressor(**BOUNDS, random_state=None).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)
    assert not np.array_equal(c.coef_, d.coef_)


# ------------------------------------------------------- release vs curator
def test_public_model_holds_the_release_only(stream):
    X, y = stream
    X = X.copy()
    X[7] = [1.234567891234, -0.5, 0.25]  # a distinctive training value
    est = PrivateOnlineRegressor(**BOUNDS, horizon=4000, random_state=0)
    est.partial_fit(X[:2000], y[:2000]).partial_fit(X[2000:], y[2000:])
    public = est.public_model()
    assert isinstance(public, PublicLinearRegressor)
    assert np.allclose(public.predict(X), est.predict(X))
    assert public.score(X, y) == est.score(X, y)
    assert public.privacy_spent_ == est.privacy_spent_
    assert not any(k.startswith("_") for k in vars(public))
    blob = pickle.dumps(public)
    assert np.float64(1.234567891234).tobytes() not in blob
    assert b"Philox" not in blob and b"_stream" not in blob
    # every public attribute of the live estimator is a released value
    # (coef_ and intercept_ are read from _published, which holds the released
    # noisy sums and public scales only: solved when first read; batch_size_
    # from the live stream)
    public_names = ({k for k in vars(est) if not k.startswith("_")}
                    | {"coef_", "intercept_", "batch_size_"})
    params = set(est.get_params())
    assert public_names - params == {"algorithm_", "coef_", "intercept_", "n_features_in_",
                                     "n_samples_seen_", "privacy_spent_", "batch_size_",
                                     "n_samples_waiting_", "n_samples_learned_"}
    released = pickle.dumps(est._published)
    assert np.float64(1.234567891234).tobytes() not in released
    assert b"Philox" not in released and b"_tree" not in released and b"_total" not in released
    # the live estimator's pickle does hold curator state: it is the secret one
    assert b"_stream" in pickle.dumps(est)


def test_feature_names_travel_to_the_public_model(stream):
    X, y = stream
    frame = pd.DataFrame(X, columns=["age", "income", "visits"])
    est = PrivateOnlineRegressor(**BOUNDS, random_state=0).fit(frame, y)
    public = est.public_model()
    assert list(public.feature_names_in_) == ["age", "income", "visits"]
    with pytest.raises(ValueError, match="feature names"):
        public.predict(frame.rename(columns={"age": "AGE"}))


# -------------------------------------------------------------- utility
def test_non_private_limit_equals_ridge_with_intercept_column(stream):
    X, y = stream
    est = PrivateOnlineRegressor(epsilon=np.inf, alpha=0.01, algorithm="ftl", **BOUNDS).fit(X, y)
    # unit space: rows / data_norm (clipped to 1) plus a column of ones, labels / y_bound
    D, M = BOUNDS["data_norm"], BOUNDS["y_bound"]
    Xa = np.c_[clip_rows(X, D) / D, np.ones(len(X))]
    ridge = Ridge(alpha=0.01 * len(X), fit_intercept=False).fit(Xa, clip_labels(y, M) / M)
    assert np.allclose(est.coef_, ridge.coef_[:-1] * M / D, atol=1e-8)
    assert est.intercept_ == pytest.approx(ridge.coef_[-1] * M)


def test_accuracy_improves_with_epsilon_and_fit_beats_continual_release():
    data = make_online_regression(n_samples=60_000, noise=0.1, random_state=0)
    X, y, Xt, yt = data.X[:50_000], data.y[:50_000], data.X[50_000:], data.y[50_000:]
    bounds = dict(data_norm=data.data_norm, y_bound=data.y_bound)

    def r2(**kw):
        scores = []
        for seed in range(5):
            est = PrivateOnlineRegressor(**bounds, random_state=seed, **kw)
            if kw.get("horizon"):
                for idx in np.array_split(np.arange(50_000), 10):
                    est.partial_fit(X[idx], y[idx])
            else:
                est.fit(X, y)
            scores.append(est.score(Xt, yt))
        return np.median(scores)

    stream_r2 = [r2(epsilon=e, horizon=50_000) for e in (0.3, 3.0)]
    fit_r2 = [r2(epsilon=e) for e in (0.3, 3.0)]
    assert stream_r2[0] < stream_r2[1]
    assert fit_r2[0] >= stream_r2[0] and fit_r2[1] >= stream_r2[1]
    assert fit_r2[1] > 0.97  # non-private R^2 is ~0.99 on this stream


def test_works_in_a_pipeline_and_grid_search_over_epsilon():
    X, y = load_diabetes(return_X_y=True)
    pipe = make_pipeline(
        FunctionTransformer(),  # stands for any stateless preprocessing
        PrivateOnlineRegressor(data_norm=0.3, y_bound=200.0, random_state=0),
    )
    search = GridSearchCV(pipe, {"privateonlineregressor__epsilon": [0.5, 5.0]}, cv=3)
    search.fit(X, y - 150.0)
    assert set(search.cv_results_["param_privateonlineregressor__epsilon"]) == {0.5, 5.0}
    assert clone(pipe).get_params()["privateonlineregressor__epsilon"] == 1.0


def test_paper_calibration_reports_its_true_cost(stream):
    X, y = stream
    est = PrivateOnlineRegressor(epsilon=1.0, noise_calibration="paper", **BOUNDS,
                                 horizon=4000, random_state=0).partial_fit(X, y)
    spent = est.privacy_spent_.epsilon
    assert 0 < spent < np.inf  # whatever the seed's formula gives, it is reported
    tight = PrivateOnlineRegressor(epsilon=spent, **BOUNDS, horizon=4000, random_state=0)
    assert tight.partial_fit(X, y).privacy_spent_.epsilon == pytest.approx(spent, rel=1e-6)


def test_progressive_predict_is_one_step_ahead(stream):
    X, y = stream
    est = PrivateOnlineRegressor(epsilon=np.inf, **BOUNDS, fit_intercept=False, horizon=4000,
                                 batch_size=1, algorithm="ftl")
    pred = est.progressive_predict(X[:500], y[:500])
    assert pred[0] == 0.0
    ref = PrivateOnlineRegressor(epsilon=np.inf, **BOUNDS, fit_intercept=False, algorithm="ftl").fit(X[:99], y[:99])
    assert pred[99] == pytest.approx(ref.predict(X[99:100])[0])
    assert est.n_samples_seen_ == 500 and est.privacy_spent_.releases == 500
    with pytest.raises(ValueError, match="batch_size=1"):
        PrivateOnlineRegressor(**BOUNDS, batch_size=2).progressive_predict(X[:5], y[:5])


def test_a_fault_after_the_sums_were_updated_rolls_everything_back(stream, monkeypatch):
    X, y = stream
    est = PrivateOnlineRegressor(**BOUNDS, horizon=4000, random_state=0,
                                 algorithm="ftl").partial_fit(X[:100], y[:100])
    before = _state(est)
    from skdpol.online import PrivateQuadraticFTL

    def fail(self):
        raise MemoryError("simulated fault while publishing")

    monkeypatch.setattr(PrivateQuadraticFTL, "deferred_release", fail)
    with pytest.raises(MemoryError):
        est.partial_fit(X[100:200], y[100:200])
    monkeypatch.undo()
    assert _state(est) == before
    # and the stream continues as if the failed call never happened
    ref = PrivateOnlineRegressor(**BOUNDS, horizon=4000, random_state=0,
                                 algorithm="ftl").partial_fit(X[:100], y[:100])
    assert np.array_equal(est.partial_fit(X[100:200], y[100:200]).coef_,
                          ref.partial_fit(X[100:200], y[100:200]).coef_)


def test_paper_calibration_warns_when_the_seed_formula_overspends(stream):
    X, y = stream
    est = PrivateOnlineRegressor(epsilon=0.01, noise_calibration="paper", **BOUNDS,
                                 horizon=100_000, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="1/sqrt"):
        est.partial_fit(X, y)
    assert est.privacy_spent_.epsilon > 0.01


def test_non_private_reference_works_with_delta_zero(stream):
    X, y = stream
    a = PrivateOnlineRegressor(epsilon=np.inf, delta=0.0, **BOUNDS).fit(X, y)
    # fit's pure-DP default is PQFTL; the stream's is "ftrl-momentum" (PURE_STREAM)
    b = PrivateOnlineRegressor(epsilon=np.inf, delta=0.0, algorithm="ftl", **BOUNDS)
    b.partial_fit(X, y)
    assert np.allclose(a.coef_, b.coef_)
    assert a.privacy_spent_.epsilon == np.inf
    c = PrivateOnlineRegressor(epsilon=np.inf, delta=0.0, **BOUNDS).partial_fit(X, y)
    assert c.algorithm_ == "ftrl-momentum" and c.privacy_spent_.epsilon == np.inf
    assert c.score(X, y) > 0.9


def test_progressive_predict_can_return_the_published_models(stream):
    X, y = stream
    est = PrivateOnlineRegressor(**BOUNDS, horizon=4000, batch_size=1, random_state=0)
    pred, coef, intercept = est.progressive_predict(X[:300], y[:300], return_coef=True)
    assert coef.shape == (300, 3) and intercept.shape == (300,)
    assert np.allclose(pred, np.einsum("ij,ij->i", coef, X[:300]) + intercept)
    # the last published model equals the one a row-by-row stream publishes
    ref = PrivateOnlineRegressor(**BOUNDS, horizon=4000, batch_size=1, random_state=0)
    for t in range(299):
        ref.partial_fit(X[t:t + 1], y[t:t + 1])
    assert np.allclose(coef[299], ref.coef_) and intercept[299] == pytest.approx(ref.intercept_)


def test_paper_overspend_warns_once_per_stream(stream):
    X, y = stream
    est = PrivateOnlineRegressor(epsilon=0.01, noise_calibration="paper", **BOUNDS,
                                 horizon=100_000, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for start in range(0, 4000, 500):
            est.partial_fit(X[start:start + 500], y[start:start + 500])
    assert sum("1/sqrt" in str(w.message) for w in caught) == 1


def test_a_failed_refit_leaves_the_fitted_estimator_untouched(stream):
    X, y = stream
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    est = PrivateOnlineRegressor(**BOUNDS, random_state=0).fit(frame, y)
    before = _state(est)
    bad = X.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(bad, y)  # an ndarray would also reset feature_names_in_
    assert _state(est) == before


@pytest.mark.parametrize("algorithm", ["ftal", "mi-ogd"])  # ftrl's fit is its stream
def test_fit_ignores_a_stream_batch_size_its_igd_cannot_use(stream, algorithm):
    # fit runs POL over IGD, whose squared-loss step bound needs per-row
    # rounds: a batch_size set for the stream must not make fit refuse
    X, y = stream
    est = PrivateOnlineRegressor(**BOUNDS, algorithm=algorithm, batch_size=50, random_state=0)
    ref = PrivateOnlineRegressor(**BOUNDS, algorithm=algorithm, random_state=0)
    assert np.array_equal(est.fit(X, y).coef_, ref.fit(X, y).coef_)
    with pytest.raises(ValueError, match="batch_size=1"):
        PrivateOnlineRegressor(**BOUNDS, algorithm="igd", batch_size=50).fit(X, y)


# ----------------------------------------------------------------- the seeds' algorithms warn
def _user_warnings(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if w.category is UserWarning]


@pytest.mark.parametrize("algorithm", ["ftal", "igd", "giga", "mi-ogd"])
def test_the_seeds_gradient_algorithms_warn_once_per_stream_and_fit(algorithm, stream):
    # on the squared loss they return models far worse than the mean at their
    # default alpha (benchmarks/bench_regressor_algorithms.py): never silently
    X, y = stream
    batch = 1 if algorithm == "igd" else "auto"
    est = PrivateOnlineRegressor(**BOUNDS, algorithm=algorithm, horizon=400, batch_size=batch,
                                 random_state=0)
    first = _user_warnings(lambda: est.partial_fit(X[:200], y[:200]))
    assert len(first) == 1 and "comparison with the seed papers" in first[0]
    assert _user_warnings(lambda: est.partial_fit(X[200:400], y[200:400])) == []
    fitted = _user_warnings(lambda: PrivateOnlineRegressor(**BOUNDS, algorithm=algorithm,
                                                           random_state=0).fit(X[:300], y[:300]))
    assert len(fitted) == 1
    assert _user_warnings(lambda: PrivateOnlineRegressor(**BOUNDS, random_state=0)
                          .partial_fit(X[:200], y[:200])) == []


def test_giga_says_when_its_warm_up_covers_the_whole_stream(stream):
    X, y = stream
    def run(labels):
        est = PrivateOnlineRegressor(**BOUNDS, algorithm="giga", horizon=400, batch_size=20,
                                     random_state=0)
        messages = _user_warnings(lambda: est.partial_fit(X[:400], labels))
        return est, messages
    est, messages = run(y[:400])
    assert "no row will be used" in messages[0]
    # and it is true: the published model does not depend on the labels
    other, _ = run(-y[:400])
    np.testing.assert_array_equal(est.coef_, other.coef_)
    np.testing.assert_array_equal(est.intercept_, other.intercept_)

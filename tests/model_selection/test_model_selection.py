"""PrivateHyperparameterSearch: private selection by repeat and select (Papernot & Steinke)."""

import math
import os
import warnings

import numpy as np
import pytest
from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.rdp import RdpAccountant
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpol import (
    PrivacyLeakWarning,
    BudgetExhaustedError,
    PrivacyLedger,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
)
from skdpol.accounting import zcdp_epsilon
from skdpol.accounting._spent import _RDP_ORDERS
from skdpol.ledger import compose
from skdpol.ledger._hook import stated_event
from skdpol.mechanisms import noise_event
from skdpol.model_selection import PrivateHyperparameterSearch
from skdpol.model_selection import _search
from skdpol.preprocessing import PrivateStandardScaler

DELTA = 1e-5


def _data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X @ [2.0, -1.0, 0.5, 0.0] + rng.logistic(size=n) > 0).astype(int)
    return X, y


def _rdp(event, delta=DELTA):
    accountant = RdpAccountant(orders=_RDP_ORDERS,
                               neighboring_relation=NeighboringRelation.REPLACE_ONE)
    accountant.compose(event)
    return accountant.get_epsilon(delta)


def _search_for(**kw):
    params = dict(epsilon=1.0, delta=DELTA, mean_runs=3, random_state=0)
    params.update(kw)
    return PrivateHyperparameterSearch(
        PrivateOnlineLogistic(data_norm=4.0), {"alpha": [1e-3, 1e-2]}, **params)


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return _search_for().fit(X, y, classes=[0, 1]), X, y


def test_total_epsilon_is_dp_accountings_and_meets_the_target(fitted):
    search, _, _ = fitted
    event = dp_event.RepeatAndSelectDpEvent(dp_event.ZCDpEvent(search.rho_run_), 3.0, 1.0)
    direct = _rdp(event)
    assert search.privacy_spent_.epsilon == pytest.approx(direct, rel=1e-9, abs=1e-9)
    assert search.privacy_spent_.accountant == "rdp"
    # calibration pinned: at most the target, and within 0.1 % of it
    assert 0.999 <= search.privacy_spent_.epsilon <= 1.0
    # and a run at twice the rho would overspend (the calibration is not loose)
    twice = dp_event.RepeatAndSelectDpEvent(dp_event.ZCDpEvent(2 * search.rho_run_), 3.0, 1.0)
    assert _rdp(twice) > 1.0


@pytest.mark.parametrize("sampler", ["discrete", "float"])
def test_each_runs_fit_and_score_cost_at_most_the_runs_rho(sampler):
    X, y = _data(2000)
    rho = _search.run_rho(1.0, DELTA, 3, 1.0)
    est = PrivateOnlineLogistic(data_norm=4.0, noise_sampler=sampler, delta=DELTA)
    search = _search_for()
    eps = search._calibrate(est, X, y, [0, 1], rho)
    run = clone(est).set_params(epsilon=eps)
    event = stated_event(run, "fit", (X, y, [0, 1]))
    fit_rho = _search._linear_rho(event)
    assert rho * (1 - 1e-3) <= fit_rho <= rho
    # the fit at the calibrated epsilon is exactly the run's rho at every order
    assert _rdp(event) <= _rdp(dp_event.ZCDpEvent(rho)) + 1e-9
    # the score: the discrete Gaussian of multiplier sqrt(1 / (2 rho)) is rho-zCDP, so the
    # run (parallel composition: a row is in the fit's rows or in the score's) is rho-zCDP
    score_event = noise_event(math.sqrt(0.5 / rho), "gaussian", "discrete")
    assert score_event.rho == pytest.approx(rho, rel=1e-12)


def test_repeat_and_select_against_naive_composition_and_a_single_run():
    rho = _search.run_rho(1.0, DELTA, 10, 1.0)
    single = zcdp_epsilon(rho, DELTA)
    search = _search.search_epsilon(rho, 10, 1.0, DELTA)
    naive = _rdp(dp_event.SelfComposedDpEvent(dp_event.ZCDpEvent(rho), 10))
    assert single < search <= 1.0 < naive
    # mean 1, geometric: K = 1 always, and the bound is (almost) one run's
    one = _search.search_epsilon(rho, 1.0, 1.0, DELTA)
    assert single <= one <= single * 1.05


def test_draws_follow_the_accounted_distribution():
    rng = np.random.default_rng(0)
    for shape in (0.0, 1.0, 2.0):
        ks = np.array([_search.draw_runs(rng, 5.0, shape) for _ in range(20_000)])
        assert ks.min() >= 1
        assert ks.mean() == pytest.approx(5.0, rel=0.05)
    geometric = np.array([_search.draw_runs(rng, 4.0, 1.0) for _ in range(20_000)])
    assert np.mean(geometric == 1) == pytest.approx(0.25, abs=0.02)


def test_ledger_records_one_entry_equal_to_privacy_spent(tmp_path):
    X, y = _data(2000)
    ledger = PrivacyLedger(os.fspath(tmp_path / "search.sqlite"))
    search = _search_for(ledger=ledger).fit(X, y, classes=[0, 1])
    entries = ledger.entries()
    assert len(entries) == 1
    assert entries[0].source == "PrivateHyperparameterSearch"
    assert isinstance(entries[0].event, dp_event.RepeatAndSelectDpEvent)
    assert entries[0].event == _search.total_event(search.rho_run_, 3, 1.0)
    total = ledger.spent(delta=DELTA)
    assert total.epsilon == pytest.approx(search.privacy_spent_.epsilon, rel=1e-9)
    # a second search is a second entry (not a continuation)
    search.fit(X, y, classes=[0, 1])
    assert len([e for e in ledger.entries() if e.charged]) == 2


def test_budget_refused_before_any_row_is_read(tmp_path, monkeypatch):
    X, y = _data(2000)
    ledger = PrivacyLedger(os.fspath(tmp_path / "capped.sqlite"), budget=(0.5, DELTA))
    calls = []
    monkeypatch.setattr(PrivateOnlineLogistic, "fit", lambda self, *a, **k: calls.append(1))
    search = _search_for(ledger=ledger)
    with pytest.raises(BudgetExhaustedError):
        search.fit(X, y, classes=[0, 1])
    assert calls == [] and ledger.entries() == []
    assert not hasattr(search, "privacy_spent_") and not hasattr(search, "best_params_")


def test_bad_input_is_refused_with_a_clear_error_and_leaves_state(fitted):
    search, X, y = fitted
    before = dict(search.__dict__)
    for grid, word in [({"epsilon": [0.5, 1.0]}, "'epsilon'"),
                       ({"privateonlinelogistic__delta": [1e-6]}, "delta"),
                       ({"alpha": 0.1}, "list of values"),
                       ({"no_such": [1]}, "no_such")]:
        bad = clone(search).set_params(param_distributions=grid)
        bad.__dict__.update({k: v for k, v in before.items() if k not in bad.__dict__})
        with pytest.raises((ValueError, TypeError), match=word):
            bad.fit(X, y, classes=[0, 1])
        assert bad.best_params_ == before["best_params_"]
    own_ledger = PrivateHyperparameterSearch(
        PrivateOnlineLogistic(data_norm=4.0, ledger="x.sqlite"), {"alpha": [0.1]})
    with pytest.raises(ValueError, match="give the ledger to"):
        own_ledger.fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="y_bound"):
        PrivateHyperparameterSearch(PrivateOnlineRegressor(data_norm=4.0),
                                    {"alpha": [0.1]}).fit(X, y.astype(float))
    private_step = make_pipeline(PrivateStandardScaler(bounds=(-5.0, 5.0)),
                                 PrivateOnlineLogistic(data_norm=4.0))
    with pytest.raises(ValueError, match="outside the search"):
        PrivateHyperparameterSearch(private_step, {"privateonlinelogistic__alpha": [0.1]}
                                    ).fit(X, y, classes=[0, 1])


def _accuracy(model, X, y):
    return float(np.mean(model.predict(X) == y))


def test_the_search_beats_a_deliberately_bad_candidate_most_of_the_time():
    X, y = _data(6000, seed=1)
    X_test, y_test = _data(4000, seed=2)
    # the bad candidate (a heavy ridge penalty on noisy GD) alone, at the whole budget:
    # its mean test accuracy over a few noise draws
    bad_accuracy = np.mean([_accuracy(PrivateOnlineLogistic(
        data_norm=4.0, alpha=30.0, epsilon=1.0, random_state=s).fit(X, y, classes=[0, 1]),
        X_test, y_test) for s in range(5)])
    wins = 0
    for seed in range(8):
        search = PrivateHyperparameterSearch(
            PrivateOnlineLogistic(data_norm=4.0),
            {"alpha": [1e-3, 1e-2, 1e-1, 30.0]}, epsilon=1.0, delta=DELTA, mean_runs=3,
            random_state=seed).fit(X, y, classes=[0, 1])
        wins += _accuracy(search, X_test, y_test) > bad_accuracy + 0.02
    assert wins >= 6


def test_int_seed_reproduces_and_is_flagged(fitted):
    search, X, y = fitted
    again = clone(search).fit(X, y, classes=[0, 1])
    assert again.best_params_ == search.best_params_
    assert again.best_score_ == search.best_score_
    np.testing.assert_array_equal(again.best_estimator_.coef_, search.best_estimator_.coef_)
    assert search.privacy_spent_.seeded
    fresh = clone(search).set_params(random_state=None).fit(X, y, classes=[0, 1])
    assert not fresh.privacy_spent_.seeded


def test_released_attributes_and_no_runs_count(fitted):
    search, X, y = fitted
    assert set(search.best_params_) == {"alpha"}
    assert type(search.best_estimator_).__name__ == "PublicLinearClassifier"
    assert not hasattr(search.best_estimator_, "_rng")
    # the model's guarantee is the whole search's, not its run's
    assert search.best_estimator_.privacy_spent_ == search.privacy_spent_
    # K is curator state: never a public attribute
    fitted_names = [k for k in vars(search) if k.endswith("_") and not k.startswith("_")]
    assert not any("runs" in k for k in fitted_names), fitted_names
    np.testing.assert_array_equal(search.predict(X), search.best_estimator_.predict(X))
    assert search.predict_proba(X).shape == (len(X), 2)
    assert list(search.classes_) == [0, 1]
    assert search.n_features_in_ == 4
    params = search.get_params(deep=True)
    assert params["estimator__data_norm"] == 4.0
    assert clone(search).get_params()["mean_runs"] == 3


def test_public_pipeline_and_regressor():
    X, y = _data(3000)
    pipe = make_pipeline(FunctionTransformer(lambda Z: Z * 0.5),
                         PrivateOnlineLogistic(data_norm=2.0))
    search = PrivateHyperparameterSearch(
        pipe, {"privateonlinelogistic__alpha": [1e-3, 1e-2]}, mean_runs=2, random_state=0)
    search.fit(X, y, classes=[0, 1])
    assert _accuracy(search, X, y) > 0.7
    assert type(search.best_estimator_[-1]).__name__ == "PublicLinearClassifier"
    rng = np.random.default_rng(0)
    yr = X @ [1.0, -1.0, 0.5, 0.0] + 0.1 * rng.normal(size=len(X))
    reg = PrivateHyperparameterSearch(PrivateOnlineRegressor(data_norm=4.0, y_bound=4.0),
                                      {"alpha": [1e-3, 1e-1]}, mean_runs=2, random_state=0)
    assert reg.fit(X, yr).score(X, yr) > 0.8
    assert 0.9 <= reg.privacy_spent_.epsilon <= 1.0


def test_no_run_drawn_releases_nothing_but_is_charged(tmp_path, monkeypatch):
    X, y = _data(1000)
    monkeypatch.setattr(_search, "draw_runs", lambda rng, mean, shape: 0)
    ledger = PrivacyLedger(os.fspath(tmp_path / "none.sqlite"))
    search = _search_for(ledger=ledger).fit(X, y, classes=[0, 1])
    assert search.best_estimator_ is None and math.isnan(search.best_score_)
    with pytest.raises(NotFittedError, match="no model"):
        search.predict(X)
    assert len(ledger.entries()) == 1


def test_epsilon_inf_is_a_non_private_reference_and_noiseless_is_infinite():
    X, y = _data(1000)
    search = _search_for(epsilon=np.inf).fit(X, y, classes=[0, 1])
    assert math.isinf(search.privacy_spent_.epsilon)
    inner = dp_event.RepeatAndSelectDpEvent(dp_event.NonPrivateDpEvent(), 3.0, 1.0)
    assert math.isinf(compose([inner], DELTA)[0])


def test_not_fitted():
    with pytest.raises(NotFittedError):
        _search_for().predict(np.zeros((2, 4)))


@pytest.mark.filterwarnings("ignore::skdpol.PrivacyLeakWarning")  # classes=None rows
def test_invalid_input_is_refused_before_anything_changes_or_is_spent(tmp_path):
    X, y = _data(1000)
    ledger = PrivacyLedger(os.fspath(tmp_path / "bad.sqlite"))
    search = _search_for(ledger=ledger).fit(X, y, classes=[0, 1])
    before = {k: v for k, v in vars(search).items()}
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    for bad_X, bad_y, classes, word in [
            (X_nan, y, [0, 1], "NaN"),
            (X, y[:-1], [0, 1], "inconsistent numbers of samples"),
            (X, np.where(y == 1, 2, y), [0, 1], "not in classes"),
            (X, X[:, 0], None, "continuous"),
            (X, np.zeros_like(y), None, "at least 2 classes"),
            (X[:1], y[:1], [0, 1], "1 sample")]:
        with pytest.raises(ValueError, match=word):
            search.fit(bad_X, bad_y, classes=classes)
        assert vars(search).keys() == before.keys()
        assert search.best_params_ == before["best_params_"]
        assert search.privacy_spent_ is before["privacy_spent_"]
        assert len(ledger.entries()) == 1


def _leak_warnings(monkeypatch, k, **kw):
    X, y = _data(1000)
    monkeypatch.setattr(_search, "draw_runs", lambda rng, mean, shape: k)
    search = PrivateHyperparameterSearch(
        PrivateOnlineLogistic(), {"data_norm": [None, 4.0]}, mean_runs=3, random_state=0, **kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)  # classes and (for one candidate) data_norm read off the data
    return sorted(str(w.message) for w in caught), search.privacy_spent_.inferred


def test_warnings_and_inferred_bounds_do_not_reveal_the_runs(monkeypatch):
    # K is secret: the warnings and privacy_spent_.inferred must be the same
    # whatever K and whichever candidates ran (here: one run, or six)
    one, inferred_one = _leak_warnings(monkeypatch, 1)
    six, inferred_six = _leak_warnings(monkeypatch, 6)
    assert one == six and len(one) == 2
    assert inferred_one == inferred_six == ("classes", "data_norm")
    # a grid that never reads a bound off the data says so
    X, y = _data(1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clean = _search_for().fit(X, y, classes=[0, 1])
    assert clean.privacy_spent_.bounds_trusted and clean.privacy_spent_.inferred == ()


def test_a_bad_candidate_reports_its_own_error():
    X, y = _data(1000)
    search = PrivateHyperparameterSearch(
        PrivateOnlineLogistic(data_norm=4.0), {"algorithm": ["no-such-algorithm"]},
        mean_runs=2, random_state=0)
    with pytest.raises(ValueError, match="algorithm"):
        search.fit(X, y, classes=[0, 1])
    assert not hasattr(search, "privacy_spent_")


def test_predict_proba_only_for_classifiers():
    reg = PrivateHyperparameterSearch(PrivateOnlineRegressor(data_norm=4.0, y_bound=4.0),
                                      {"alpha": [0.1]})
    assert not hasattr(reg, "predict_proba") and not hasattr(reg, "decision_function")
    assert hasattr(_search_for(), "predict_proba")


# ------------------------------------------------------------ bounded scores (issue 29, 6)
class _Proba:
    """A fitted classifier stand-in with given probabilities."""

    def __init__(self, proba, classes=(0, 1)):
        self.proba, self.classes_ = np.asarray(proba, dtype=float), np.asarray(classes)

    def predict_proba(self, X):
        return self.proba

    def predict(self, X):
        return self.classes_[np.argmax(np.nan_to_num(self.proba, nan=-1), axis=1)]


def test_scores_values_against_sklearn_and_their_bounds():
    from sklearn.metrics import brier_score_loss, log_loss
    from skdpol.model_selection import Accuracy, BrierScore, ClippedLogLoss

    rng = np.random.default_rng(0)
    p1 = rng.uniform(0.02, 0.98, size=500)
    y = (rng.uniform(size=500) < p1).astype(int)
    model = _Proba(np.c_[1 - p1, p1])
    assert BrierScore()(model, model, None, y) == pytest.approx(1 - brier_score_loss(y, p1))
    clipped = ClippedLogLoss(p_min=0.01)
    assert clipped(model, model, None, y) == pytest.approx(
        1 - log_loss(y, np.c_[1 - p1, p1]) / math.log(100))
    # adversarial outputs: 0, 1, NaN, outside [0, 1], not summing to 1, three classes
    bad = _Proba([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [np.nan, 0.5, 0.5], [2.0, -1.0, 5.0],
                  [1.0, 1.0, 1.0], [0.2, 0.3, 0.5]], classes=(0, 1, 2))
    y3 = np.array([0, 0, 1, 2, 1, 2])
    for score in (BrierScore(), ClippedLogLoss(0.01), ClippedLogLoss(1e-6), Accuracy()):
        rows = score.clipped(bad, bad, None, y3)
        assert np.all((rows >= 0) & (rows <= 1)), (score, rows)
    assert BrierScore().clipped(bad, bad, None, y3)[:2].tolist() == [0.0, 1.0]
    np.testing.assert_allclose(ClippedLogLoss(0.01).clipped(bad, bad, None, y3)[:2], [0, 1],
                               atol=1e-12)
    # sensitivity: replacing one of n rows (its label and the model's output on it, the
    # worst rows included) moves the mean by at most 1 / n
    extremes = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [np.nan, 0.3]])
    for score in (BrierScore(), ClippedLogLoss(0.01), Accuracy()):
        assert score.sensitivity(len(y)) == 1.0 / len(y)
        base = score(model, model, None, y)
        for i in range(5):
            for proba in extremes:
                for label in (0, 1):
                    P, y2 = model.proba.copy(), y.copy()
                    P[i], y2[i] = proba, label
                    moved = abs(score(_Proba(P), _Proba(P), None, y2) - base)
                    assert moved <= 1.0 / len(y) + 1e-15, (score, i, proba, label)


def test_every_scoring_adds_the_runs_rho_on_sensitivity_one_over_n_val(monkeypatch):
    X, y = _data(2000)
    seen = []

    class Recording(_search.NoiseSpec):  # the search's score noise only
        def perturb(self, value, sensitivity, rng, pool=None):
            seen.append((self, sensitivity))
            return super().perturb(value, sensitivity, rng, pool)

    monkeypatch.setattr(_search, "NoiseSpec", Recording)
    for scoring in ("accuracy", "brier", "log_loss"):
        seen.clear()
        search = _search_for(scoring=scoring).fit(X, y, classes=[0, 1])
        assert seen and all(s == 1.0 / 400 for _, s in seen)  # n_val = 0.2 * 2000
        for spec, _ in seen:  # the score is exactly rho_run-zCDP (dp-accounting's event)
            assert spec.event().rho == pytest.approx(search.rho_run_, rel=1e-12)
        assert search.privacy_spent_.epsilon <= 1.0


def _unbalanced(n, seed):
    # 88 % in class 0, a weak signal: every reasonable model predicts the majority
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X @ [0.6, -0.3, 0.3, 0.0] - 2.2 + rng.logistic(size=n) > 0).astype(int)
    return X, y


def _columns(Z, keep):
    return Z[:, keep]


def test_default_score_picks_the_better_auc_on_unbalanced_labels(monkeypatch):
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import Pipeline

    X, y = _unbalanced(10_000, 0)
    X_test, y_test = _unbalanced(10_000, 1)
    # K fixed at 6 so that both candidates run (nearly always), and no noise (epsilon=inf):
    # the test is about what the score can tell apart (the private figures: bench_search.py)
    monkeypatch.setattr(_search, "draw_runs", lambda rng, mean, shape: 6)
    pipe = Pipeline([("columns", FunctionTransformer(_columns, kw_args={"keep": [0, 1, 2, 3]})),
                     ("logistic", PrivateOnlineLogistic(data_norm=4.0, algorithm="igd"))])
    # all columns, or only the useless one: both predict the majority on every row
    grid = {"columns__kw_args": [{"keep": [0, 1, 2, 3]}, {"keep": [3]}]}
    picks, auc = {}, {}
    for scoring in ("accuracy", "auto"):
        searches = [PrivateHyperparameterSearch(
            pipe, grid, epsilon=np.inf, mean_runs=6, scoring=scoring, random_state=seed).fit(
                X, y, classes=[0, 1]) for seed in range(10)]
        picks[scoring] = sum(len(s.best_params_["columns__kw_args"]["keep"]) == 4
                             for s in searches)
        auc[scoring] = np.mean([roc_auc_score(y_test, s.decision_function(X_test))
                                for s in searches])
    # accuracy ties (the first run drawn wins); the Brier score tells them apart
    assert picks["auto"] == 10 and picks["accuracy"] <= 8, picks
    assert auc["auto"] > auc["accuracy"] + 0.02, auc


def test_fit_params_are_routed_the_pipeline_way():
    from sklearn.pipeline import Pipeline

    X, y = _data(2000)
    pipe = Pipeline([("scale", FunctionTransformer(lambda Z: Z / 2)),
                     ("logistic", PrivateOnlineLogistic(data_norm=2.0))])
    search = PrivateHyperparameterSearch(pipe, {"logistic__alpha": [1e-3]}, mean_runs=2,
                                         random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # classes reached every run
        search.fit(X, y, logistic__classes=[0, 1])
    assert search.privacy_spent_.inferred == () and list(search.classes_) == [0, 1]
    same = clone(search).fit(X, y, classes=[0, 1])
    assert same.best_score_ == search.best_score_
    with pytest.raises(ValueError, match="twice"):
        clone(search).fit(X, y, classes=[0, 1], logistic__classes=[0, 1])
    with pytest.raises(TypeError, match="sample_weight"):
        clone(search).fit(X, y, logistic__sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="<step>__<parameter>"):
        clone(search).fit(X, y, nosuch__classes=[0, 1])
    with pytest.raises(TypeError, match="unexpected keyword"):
        _search_for().fit(X, y, classes=[0, 1], logistic__classes=[0, 1])


def test_scoring_is_resolved_by_the_estimators_type():
    from skdpol.model_selection import Accuracy, BrierScore, ClippedSquaredError
    from skdpol.model_selection._scores import resolve_scoring

    logistic, regressor = PrivateOnlineLogistic(), PrivateOnlineRegressor(y_bound=1.0)
    assert resolve_scoring("auto", logistic) == BrierScore()
    assert resolve_scoring("auto", regressor) == ClippedSquaredError()
    assert resolve_scoring("accuracy", logistic) == Accuracy()
    for scoring, est, word in [("brier", regressor, "classifier"),
                               ("clipped_mse", logistic, "regressor"),
                               ("auto", PrivateOnlineRegressor(), "y_bound")]:
        with pytest.raises(ValueError, match=word):
            resolve_scoring(scoring, est)

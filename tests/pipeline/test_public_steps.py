"""skdpol.pipeline: which steps are public, how to declare one, and the search's refusal."""

import os
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer, make_column_transformer
from sklearn.feature_extraction import FeatureHasher
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    SplineTransformer,
    StandardScaler,
)

from skdpol import PrivacyLeakError, PrivacyLeakWarning, PrivacyLedger, PrivateOnlineLogistic
from skdpol.datasets import adult_preprocessor
from skdpol.model_selection import PrivateHyperparameterSearch
from skdpol.pipeline import check_public_pipeline, check_public_step, declare_public
from skdpol.preprocessing import PrivateStandardScaler, PublicRangeScaler


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 10 + 50
    y = (X[:, 0] - 50 + 5 * rng.logistic(size=n) > 0).astype(int)
    return X, y


KNOTS = np.linspace(0, 100, 5)[:, None].repeat(3, axis=1)  # public ranges, fixed in advance


@pytest.mark.parametrize("step, kind", [
    ("passthrough", "public"),
    (PublicRangeScaler(bounds=(0, 100)), "public"),
    (FunctionTransformer(np.log1p), "public"),
    (FunctionTransformer(np.log1p, inverse_func=np.expm1), "leak"),  # check_inverse warns on rows
    (FeatureHasher(n_features=8), "public"),
    (SimpleImputer(strategy="constant", fill_value=0.0), "public"),
    (SimpleImputer(strategy="mean"), "leak"),
    (OneHotEncoder(), "leak"),  # categories="auto"
    (OneHotEncoder(categories=[[1, 2]], handle_unknown="ignore"), "public"),
    (OneHotEncoder(categories=[[1, 2]]), "leak"),  # handle_unknown="error"
    (OneHotEncoder(categories=[[1, 2]], handle_unknown="ignore", min_frequency=5), "leak"),
    (OrdinalEncoder(categories=[[1, 2]], handle_unknown="use_encoded_value",
                    unknown_value=-1), "public"),
    (StandardScaler(), "leak"),
    (SplineTransformer(knots=KNOTS), "leak"),  # not known: declare it
    (declare_public(SplineTransformer(knots=KNOTS), reason="knots fixed in advance"), "public"),
    (PrivateStandardScaler(bounds=(0, 100)), "private"),
    (make_pipeline(PublicRangeScaler(bounds=(0, 100)), StandardScaler()), "leak"),
    (FeatureUnion([("a", PublicRangeScaler()), ("b", FunctionTransformer())]), "public"),
    (adult_preprocessor(), "public"),
])
def test_check_public_step(step, kind):
    verdict = check_public_step(step)
    assert verdict.kind == kind, verdict
    assert verdict.reason


def test_composites_name_the_leaking_part():
    columns = ColumnTransformer([
        ("codes", OneHotEncoder(categories=[[1, 2]], handle_unknown="ignore",
                                sparse_output=False), [0]),
        ("num", make_pipeline(SimpleImputer(strategy="constant"), StandardScaler()), [1])],
        sparse_threshold=0)
    verdict = check_public_step(columns, "pre")
    assert (verdict.kind, verdict.path) == ("leak", "pre > num > standardscaler")
    # sparse or dense decided by the training rows' density
    sparse = make_column_transformer(
        (OneHotEncoder(categories=[[1, 2]], handle_unknown="ignore"), [0]))
    assert "sparse_threshold" in check_public_step(sparse).reason
    assert check_public_step(clone(sparse).set_params(sparse_threshold=0)).public
    # a fitted private step, frozen, has its own guarantee; unfrozen it is private
    fitted = PrivateStandardScaler(bounds=(0, 100), random_state=0).fit(_data()[0])
    assert check_public_step(FrozenEstimator(fitted)).public


def test_search_refuses_a_standard_scaler_before_any_row_is_read(tmp_path, monkeypatch):
    X, y = _data()
    calls = []
    monkeypatch.setattr(StandardScaler, "fit", lambda self, *a, **k: calls.append(1))
    ledger = PrivacyLedger(os.fspath(tmp_path / "l.sqlite"))
    search = PrivateHyperparameterSearch(
        make_pipeline(StandardScaler(), PrivateOnlineLogistic(data_norm=2.0)),
        {"privateonlinelogistic__alpha": [1e-3, 1e-2]}, mean_runs=2, random_state=0,
        ledger=ledger)
    with pytest.raises(PrivacyLeakError, match="'standardscaler'.*declare_public"):
        search.fit(X, y, classes=[0, 1])
    assert calls == [] and ledger.entries() == [] and not hasattr(search, "privacy_spent_")


def test_search_checks_every_grid_point_not_only_the_drawn_ones():
    X, y = _data()
    pipe = Pipeline([("scale", PublicRangeScaler(bounds=(0, 100))),
                     ("logistic", PrivateOnlineLogistic(data_norm=2.0))])
    grid = [{"scale": [PublicRangeScaler(bounds=(0, 100))]}, {"scale": [StandardScaler()]}]
    with pytest.raises(PrivacyLeakError, match="grid point.*StandardScaler"):
        PrivateHyperparameterSearch(pipe, grid, mean_runs=1, random_state=0).fit(
            X, y, classes=[0, 1])


def test_declared_public_step_passes_and_survives_clone_grid_and_pickle():
    X, y = _data()
    pipe = Pipeline([("spline", declare_public(SplineTransformer(knots=KNOTS),
                                               reason="knots fixed in advance")),
                     ("logistic", PrivateOnlineLogistic(data_norm=3.0))])
    search = PrivateHyperparameterSearch(
        pipe, {"spline__estimator__degree": [2, 3], "logistic__alpha": [1e-3]},
        mean_runs=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        search.fit(X, y, classes=[0, 1])
    assert search.privacy_spent_.epsilon <= 1.0
    again = pickle.loads(pickle.dumps(clone(search)))
    assert again.estimator[0].reason == "knots fixed in advance"
    assert check_public_step(again.estimator.set_params(spline__estimator__degree=2)[0]).public
    # replacing the step replaces the declaration
    with pytest.raises(PrivacyLeakError, match="SplineTransformer"):
        clone(search).set_params(estimator__spline=SplineTransformer(knots=KNOTS)).fit(
            X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="reason"):
        declare_public(StandardScaler(), reason=" ").fit(X)


def test_search_takes_a_frozen_private_scaler_and_refuses_a_live_one():
    X, y = _data()
    scaler = PrivateStandardScaler(bounds=(0, 100), epsilon=0.5, random_state=0).fit(X)
    frozen = make_pipeline(FrozenEstimator(scaler), PrivateOnlineLogistic(data_norm=10.0))
    search = PrivateHyperparameterSearch(
        frozen, {"privateonlinelogistic__alpha": [1e-3]}, mean_runs=2, random_state=0)
    search.fit(X, y, classes=[0, 1])
    assert search.best_estimator_[0].estimator.mean_ is scaler.mean_  # not refitted
    live = make_pipeline(PrivateStandardScaler(bounds=(0, 100)),
                         PrivateOnlineLogistic(data_norm=10.0))
    with pytest.raises(PrivacyLeakError, match="FrozenEstimator"):
        PrivateHyperparameterSearch(live, {"privateonlinelogistic__alpha": [1e-3]}).fit(
            X, y, classes=[0, 1])


def test_check_public_pipeline_for_grid_search_users():
    X, y = _data()
    leaky = make_pipeline(StandardScaler(), PrivateOnlineLogistic(data_norm=2.0))
    with pytest.raises(PrivacyLeakError, match="'standardscaler'"):
        check_public_pipeline(leaky)
    with pytest.warns(PrivacyLeakWarning, match="'standardscaler'"):
        verdicts = check_public_pipeline(leaky, on_leak="warn")
    assert [v.kind for v in verdicts] == ["leak", "private"]
    fine = make_pipeline(PublicRangeScaler(bounds=(0, 100)),
                         PrivateOnlineLogistic(data_norm=2.0, random_state=0))
    assert [v.kind for v in check_public_pipeline(fine)] == ["public", "private"]
    # a non-private final estimator is a leak too
    from sklearn.linear_model import LogisticRegression
    with pytest.raises(PrivacyLeakError, match="logisticregression"):
        check_public_pipeline(make_pipeline(PublicRangeScaler(), LogisticRegression()))
    # the checked pipeline then goes to GridSearchCV as usual
    grid = GridSearchCV(fine, {"privateonlinelogistic__alpha": [1e-3, 1e-2]}, cv=2)
    grid.fit(X, y, privateonlinelogistic__classes=[0, 1])
    assert grid.best_params_["privateonlinelogistic__alpha"] in (1e-3, 1e-2)

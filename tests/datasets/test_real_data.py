"""Real data sets: loaders, public-schema preprocessing, and a sanity fit of each estimator.

The data live in the project's shared folder (``skdpol.datasets.data_home()``);
every test that needs them skips, saying why, when the folder is absent.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skdpol import (
    KernelPrivateOnlineRegressor,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
    PrivateSubmodularSelector,
)
from skdpol.datasets import (
    ADULT_BINS,
    ADULT_CATEGORIES,
    ADULT_RANGES,
    WINE_QUALITY_RANGES,
    adult_preprocessor,
    data_home,
    load_adult,
    load_wine_quality,
    row_norm_bound,
    scale_to_unit,
    wine_quality_preprocessor,
)
from skdpol.submodular import ConcaveMassCost


def _load(loader):
    try:
        return loader()
    except FileNotFoundError as exc:
        pytest.skip(f"real data absent: {exc}")


@pytest.fixture(scope="module")
def adult():
    return _load(load_adult)


@pytest.fixture(scope="module")
def wine():
    return _load(load_wine_quality)


@pytest.fixture(scope="module")
def adult_Z(adult):
    """All of Adult through the preprocessor, fitted on one row (it reads nothing)."""
    pre = adult_preprocessor().fit(adult.X.iloc[:1])
    return pre, pre.transform(adult.X)


# ------------------------------------------------------------------ loaders
def test_missing_folder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SKDPOL_DATA", str(tmp_path / "nowhere"))
    assert data_home() is None
    with pytest.raises(FileNotFoundError, match="never downloads"):
        load_adult()
    with pytest.raises(FileNotFoundError, match="winequality_white.csv.gz"):
        load_wine_quality(tmp_path)  # a folder without the file
    # no variable, and no shared/data beside the project root or its parents
    monkeypatch.delenv("SKDPOL_DATA")
    monkeypatch.setattr("skdpol.datasets._PROJECT_ROOT", tmp_path / "project")
    assert data_home() is None
    with pytest.raises(FileNotFoundError, match="no folder given"):
        load_adult()


def test_explicit_folder_and_file(tmp_path):
    folder = data_home()
    if folder is None:
        pytest.skip("real data absent: no shared data folder")
    rows = pd.read_csv(folder / "winequality_white.csv.gz", nrows=7)
    path = tmp_path / "wine.csv"
    rows.to_csv(path, index=False)
    data = load_wine_quality(path)
    assert data.X.shape == (7, 11) and data.y.tolist() == rows["quality"].tolist()
    assert load_wine_quality(folder).X.shape == (4898, 11)


def test_adult_loader(adult):
    assert adult.X.shape == (48_842, 14)
    assert adult.X_train.shape == (32_561, 14) and adult.X_test.shape == (16_281, 14)
    assert np.array_equal(np.concatenate([adult.y_train, adult.y_test]), adult.y)
    assert set(np.unique(adult.y)) == {0, 1} and adult.target_names == ["<=50K", ">50K"]
    # missing values are NaN, only in the three columns the README names
    missing = adult.X.isna().sum()
    assert set(missing[missing > 0].index) == {"workclass", "occupation", "native_country"}
    # the documented category lists cover every value in the file
    for column, categories in ADULT_CATEGORIES.items():
        assert set(adult.X[column].dropna()) <= set(categories), column


def test_wine_loader(wine):
    assert wine.X.shape == (4898, 11) and wine.y.shape == (4898,)
    assert list(wine.X.columns) == list(WINE_QUALITY_RANGES)
    lo, hi = wine.y_offset - wine.y_bound, wine.y_offset + wine.y_bound
    assert (lo, hi) == (0.0, 10.0)
    assert np.all((wine.y >= lo) & (wine.y <= hi))


# ------------------------------------------------------------ preprocessing
def test_adult_preprocessing_shape_nan_and_bound(adult_Z):
    pre, Z = adult_Z
    n_onehot = sum(len(c) + 1 for c in ADULT_CATEGORIES.values())  # + "missing"
    n_bins = sum(len(e) + 1 for e in ADULT_BINS.values())
    assert Z.shape == (48_842, len(ADULT_RANGES) + n_bins + n_onehot)
    assert np.all(Z[:, len(ADULT_RANGES):len(ADULT_RANGES) + n_bins].sum(axis=1)
                  == len(ADULT_BINS))  # no numeric cell is missing in the file: one bin each
    assert not np.isnan(Z).any()
    assert Z.min() >= 0.0 and Z.max() <= 1.0

    bound = np.sqrt(len(ADULT_RANGES) + len(ADULT_BINS) + len(ADULT_CATEGORIES))
    assert row_norm_bound(pre) == pytest.approx(bound)
    assert np.linalg.norm(Z, axis=1).max() <= bound * (1 + 1e-12)
    # one 1 per categorical block: missing values land in their own column
    onehot = Z[:, len(ADULT_RANGES) + n_bins:]
    assert np.array_equal(onehot.sum(axis=1), np.full(Z.shape[0], len(ADULT_CATEGORIES)))


def test_wine_preprocessing_shape_nan_and_bound(wine):
    pre = wine_quality_preprocessor().fit(wine.X.iloc[:1])
    Z = pre.transform(wine.X)
    assert Z.shape == (4898, 11) and not np.isnan(Z).any()
    assert Z.min() >= 0.0 and Z.max() <= 1.0
    assert row_norm_bound(pre) == pytest.approx(np.sqrt(11))
    assert np.linalg.norm(Z, axis=1).max() <= row_norm_bound(pre) * (1 + 1e-12)


def test_categories_are_given_not_discovered(adult, adult_Z):
    """A category absent from the rows the preprocessor sees still gets its column,
    and the transform does not depend on which rows it was fitted on."""
    pre_all, Z_all = adult_Z
    X = adult.X
    # a slice without "Never-worked" workclass and without any missing value
    sl = X[(X["workclass"] == "Private") & X.notna().all(axis=1)].iloc[:200]
    pre = adult_preprocessor().fit(sl)
    names = list(pre.get_feature_names_out())
    assert names == list(pre_all.get_feature_names_out())
    for column, categories in ADULT_CATEGORIES.items():
        for value in [*categories, "missing"]:
            assert f"{column}_{value}" in names
    assert np.array_equal(pre.transform(X), Z_all)
    assert "workclass_Never-worked" in names and (sl["workclass"] == "Never-worked").sum() == 0


def test_unknown_category_and_missing_numeric_stay_in_bound(adult):
    rows = adult.X.iloc[:3].copy()
    rows.loc[rows.index[0], "workclass"] = "Astronaut"  # not in the public list
    rows.loc[rows.index[1], "age"] = np.nan
    rows.loc[rows.index[2], "capital_gain"] = 10**9  # past the top code: clipped
    pre = adult_preprocessor().fit(rows)
    Z = pre.transform(rows)
    assert not np.isnan(Z).any()
    assert np.linalg.norm(Z, axis=1).max() <= row_norm_bound(pre)
    names = list(pre.get_feature_names_out())
    workclass = [i for i, n in enumerate(names) if n.startswith("workclass_")]
    assert Z[0, workclass].sum() == 0.0  # unknown: a block of zeros
    assert Z[1, names.index("age")] == 0.5 and Z[2, names.index("capital_gain")] == 1.0


def test_scale_to_unit_uses_only_the_ranges():
    X = np.array([[0.0, 0.0], [9.0, 99.0], [-5.0, 1e6]])
    Z = scale_to_unit(X, low=[0.0, 0.0], high=[9.0, 99.0], log=[False, True])
    assert np.allclose(Z, [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    # the same rows among others map the same way: nothing is read off the batch
    more = np.vstack([X, np.full((5, 2), 1e3)])
    assert np.array_equal(scale_to_unit(more, low=[0.0, 0.0], high=[9.0, 99.0],
                                        log=[False, True])[:3], Z)


def test_row_norm_bound_refuses_what_it_cannot_bound():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import StandardScaler

    with pytest.raises(ValueError, match="cannot bound"):
        row_norm_bound(ColumnTransformer([("s", StandardScaler(), ["a"])]))
    with pytest.raises(ValueError, match="remainder"):
        row_norm_bound(ColumnTransformer([("s", "drop", ["a"])], remainder="passthrough"))


# ----------------------------------------------- estimators on real slices
def test_logistic_on_adult_beats_the_majority(adult):
    n = 8_000
    pipe = make_pipeline(adult_preprocessor(), PrivateOnlineLogistic(
        epsilon=np.inf, data_norm=row_norm_bound(adult_preprocessor()), random_state=0))
    pipe.fit(adult.X_train.iloc[:n], adult.y_train[:n],
             privateonlinelogistic__classes=adult.classes)
    majority = np.mean(adult.y_test == 0)
    assert pipe.score(adult.X_test.iloc[:5_000], adult.y_test[:5_000]) > majority + 0.02


def test_logistic_fit_on_adult_at_epsilon_one_is_near_the_non_private_model(adult_Z, adult):
    # issue 13's acceptance: noisy GD's fit >= 84.0 % at epsilon = 1 (measured
    # 85.1-85.6 % over seeds; non-private LogisticRegression 86.2 %)
    pre, Z = adult_Z
    n = adult.X_train.shape[0]
    clf = PrivateOnlineLogistic(epsilon=1.0, delta=1e-5, data_norm=row_norm_bound(pre),
                                random_state=0).fit(Z[:n], adult.y_train, classes=adult.classes)
    assert clf.algorithm_ == "noisy-gd"
    assert clf.privacy_spent_.epsilon <= 1.0 and clf.privacy_spent_.bounds_trusted
    assert clf.score(Z[n:], adult.y_test) >= 0.84


def test_logistic_stream_on_adult(adult):
    pre = adult_preprocessor().fit(adult.X_train.iloc[:1])
    clf = PrivateOnlineLogistic(epsilon=np.inf, data_norm=row_norm_bound(pre), random_state=0)
    for start in range(0, 6_000, 1_000):
        chunk = slice(start, start + 1_000)
        clf.partial_fit(pre.transform(adult.X_train.iloc[chunk]), adult.y_train[chunk],
                        classes=adult.classes)
    assert clf.score(pre.transform(adult.X_test.iloc[:5_000]), adult.y_test[:5_000]) \
        > np.mean(adult.y_test == 0) + 0.02


@pytest.fixture(scope="module")
def wine_split(wine):
    Xtr, Xte, ytr, yte = train_test_split(wine.X, wine.y - wine.y_offset, test_size=0.25,
                                          random_state=0)
    return Xtr, Xte, ytr, yte, wine.y_bound


@pytest.mark.parametrize("make", [
    lambda yb, dn: PrivateOnlineRegressor(epsilon=np.inf, data_norm=dn, y_bound=yb,
                                          random_state=0),
    lambda yb, dn: KernelPrivateOnlineRegressor(epsilon=np.inf, y_bound=yb, random_state=0),
], ids=["linear", "kernel"])
def test_regressors_on_wine_explain_variance(wine_split, make):
    Xtr, Xte, ytr, yte, yb = wine_split
    dn = row_norm_bound(wine_quality_preprocessor())
    pipe = make_pipeline(wine_quality_preprocessor(), make(yb, dn)).fit(Xtr, ytr)
    assert pipe.score(Xte, yte) > 0.1  # linear regression reaches ~0.28 (README)


def test_private_fits_on_wine_at_epsilon_one(wine_split):
    # issue 13: the regressor's fit (noisy GD on the Huber loss) against
    # PQFTL's fit and Ridge. One draw is one sample: over 10 seeds on this
    # split noisy GD scores 0.13-0.20 (mean 0.16), PQFTL -0.01-0.08 (mean
    # 0.05), Ridge 0.25; the means of 5 draws vary by about 0.01, so the
    # margins below fail only if the ordering itself breaks
    Xtr, Xte, ytr, yte, yb = wine_split
    pre = wine_quality_preprocessor().fit(Xtr.iloc[:1])
    Ztr, Zte, dn = pre.transform(Xtr), pre.transform(Xte), row_norm_bound(pre)
    ridge = Ridge(alpha=1.0).fit(Ztr, ytr).score(Zte, yte)
    linear, pqftl = [], []
    for seed in range(5):
        model = PrivateOnlineRegressor(epsilon=1.0, data_norm=dn, y_bound=yb, random_state=seed)
        linear.append(model.fit(Ztr, ytr).score(Zte, yte))
        assert model.algorithm_ == "noisy-gd"
        pqftl.append(PrivateOnlineRegressor(epsilon=1.0, data_norm=dn, y_bound=yb,
                                            algorithm="ftl", random_state=seed)
                     .fit(Ztr, ytr).score(Zte, yte))
    kernel = KernelPrivateOnlineRegressor(epsilon=1.0, data_norm=dn, y_bound=yb,
                                          random_state=0).fit(Ztr, ytr).score(Zte, yte)
    assert np.mean(linear) > ridge - 0.12 and np.mean(linear) > np.mean(pqftl) + 0.07
    assert kernel > ridge - 0.1


def test_default_fit_on_wine_at_epsilon_half_beats_a_constant(wine_split):
    # noisy GD with the classifier's schedule (T = 2 / nu) scored R^2 -0.425
    # [-0.616, 0.020] here at epsilon 0.5 (5 seeds, benchmarks/bench_stream.py)
    # while epsilon 1 gave 0.209; the Huber schedule (T = 0.4 / nu,
    # HUBER_SCHEDULE_C) gives 0.197 over 20 seeds (worst 0.095)
    Xtr, Xte, ytr, yte, yb = wine_split
    pre = wine_quality_preprocessor().fit(Xtr.iloc[:1])
    Ztr, Zte, dn = pre.transform(Xtr), pre.transform(Xte), row_norm_bound(pre)
    scores = [PrivateOnlineRegressor(epsilon=0.5, data_norm=dn, y_bound=yb, random_state=seed)
              .fit(Ztr, ytr).score(Zte, yte) for seed in range(3)]
    assert min(scores) > 0.0 and np.median(scores) > 0.1  # 0.096-0.156 on this split


def test_pqftl_stream_on_wine_does_no_harm(wine_split):
    # 500-row rounds at epsilon = 1: noise dominates the ten small-spread
    # columns, the intercept carries the signal. Shrinking in the metric of
    # A^-1 published the zero model (R^2 -1.0: the scale's midpoint); the
    # release must stay at least as good as predicting the label mean.
    Xtr, Xte, ytr, yte, yb = wine_split
    pre = wine_quality_preprocessor().fit(Xtr.iloc[:1])
    Ztr, Zte, dn = pre.transform(Xtr), pre.transform(Xte), row_norm_bound(pre)
    scores = []
    for seed in range(3):
        est = PrivateOnlineRegressor(epsilon=1.0, data_norm=dn, y_bound=yb,
                                     horizon=len(Ztr), algorithm="ftl", random_state=seed)
        for lo in range(0, len(Ztr), 500):
            est.partial_fit(Ztr[lo:lo + 500], ytr[lo:lo + 500])
        assert est.algorithm_ == "ftl"
        scores.append(est.score(Zte, yte))
    assert np.median(scores) > -0.1, scores


def test_the_default_stream_on_wine_learns_more_than_the_mean(wine_split):
    # the regressor's default stream (ftrl-momentum) on the same 500-row
    # chunks at epsilon = 1: issue 31 measured R^2 0.02 for the old default
    # (PQFTL) one pass; the Huber gradient stream pays for residual_bound only
    Xtr, Xte, ytr, yte, yb = wine_split
    pre = wine_quality_preprocessor().fit(Xtr.iloc[:1])
    Ztr, Zte, dn = pre.transform(Xtr), pre.transform(Xte), row_norm_bound(pre)
    scores = []
    # 5 seeds: one draw is one sample of the noise (12 seeds: median 0.114,
    # range 0.05-0.16, with the step rule's threshold at r = 0.2)
    for seed in range(5):
        est = PrivateOnlineRegressor(epsilon=1.0, data_norm=dn, y_bound=yb,
                                     horizon=len(Ztr), random_state=seed)
        for lo in range(0, len(Ztr), 500):
            est.partial_fit(Ztr[lo:lo + 500], ytr[lo:lo + 500])
        assert est.algorithm_ == "ftrl-momentum"
        scores.append(est.score(Zte, yte))
    assert np.median(scores) > 0.1, scores


def test_selector_on_wine_keeps_alcohol(wine_split):
    """Paired-difference relevance rounds (as in benchmarks/bench_real.py): without
    noise the selector keeps alcohol, the best-known predictor of quality."""
    Xtr, Xte, ytr, yte, _ = wine_split
    pre = wine_quality_preprocessor().fit(Xtr.iloc[:1])
    Z = pre.transform(Xtr)
    n = Z.shape[0] // 2 * 2
    s = (Z[0:n:2] - Z[1:n:2]) * ((ytr[0:n:2] - ytr[1:n:2]) / 10)[:, None]
    rounds = np.clip(20.0 * np.hstack([s, -s]), -1.0, 1.0)
    sel = PrivateSubmodularSelector(cost=ConcaveMassCost(scale=0.2), epsilon=np.inf,
                                    alpha=0.003, horizon=n // 2, random_state=0).fit(rounds)
    support = sel.support_[:11] | sel.support_[11:]
    assert support[list(WINE_QUALITY_RANGES).index("alcohol")]
    assert 0 < support.sum() < 11
    ridge = Ridge(alpha=1e-3).fit(Z[:, support], ytr)
    assert ridge.score(pre.transform(Xte)[:, support], yte) > 0.1

"""``fit`` on Dask input (skdpol/linear_model/_dask_fit.py).

One in-process ``LocalCluster`` (two workers of one thread, no processes:
cheap to start) serves the module. The Dask fit must equal the in-memory fit
with the same seed: bit for bit with the default discrete sampler (the noisy
sum is rounded to its grid before the noise, which absorbs the blocks'
reordered float additions), within 1e-12 relative with the float sampler;
the same ``privacy_spent_`` and the same ledger entry. Bad input raises a
clear error before any release, with the estimator unchanged.
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from skdpol import BudgetExhaustedError, PrivacyLeakWarning, PrivateOnlineLogistic
from skdpol import PrivateOnlineRegressor
from skdpol.ledger import PrivacyLedger
from skdpol.linear_model import _dask_fit

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

N, D, CHUNK = 6_000, 4, 1_700  # four blocks, the last one short


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c
    cluster.close()


@pytest.fixture
def on_cluster(client):
    with client.as_current():
        yield client


def _data(n=N, d=D, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X @ np.linspace(1.0, -1.0, d) + rng.logistic(size=n)
    if n_classes == 2:
        y = (score > 0).astype(int)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y, X @ np.linspace(1.0, -1.0, d) + 0.3 * rng.normal(size=n)


def _dask(X, y):
    return da.from_array(X, chunks=(CHUNK, X.shape[1])), da.from_array(y, chunks=CHUNK)


def _classifier(**kw):
    return PrivateOnlineLogistic(**{"epsilon": 1.0, "delta": 1e-6, "data_norm": 3.0,
                                    "random_state": 0, **kw})


def _regressor(**kw):
    return PrivateOnlineRegressor(**{"epsilon": 1.0, "delta": 1e-6, "data_norm": 3.0,
                                     "y_bound": 5.0, "random_state": 0, **kw})


def _same(a, b, exact):
    if exact:
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.intercept_, b.intercept_)
    else:  # float sampler: only the blocks' order of additions differs
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-12, atol=1e-12)
    assert a.privacy_spent_ == b.privacy_spent_
    assert a.algorithm_ == b.algorithm_ == "noisy-gd"
    assert a.n_samples_seen_ == b.n_samples_seen_


# ------------------------------------------------------------------ same result
@pytest.mark.parametrize("sampler", ["discrete", "float"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_on_a_dask_array_equals_the_numpy_fit(on_cluster, sampler, n_classes):
    X, y, _ = _data(n_classes=n_classes)
    classes = list(range(n_classes))
    here = _classifier(noise_sampler=sampler).fit(X, y, classes=classes)
    there = _classifier(noise_sampler=sampler).fit(*_dask(X, y), classes=classes)
    _same(here, there, exact=sampler == "discrete")
    np.testing.assert_array_equal(there.classes_, classes)
    assert not hasattr(there, "feature_names_in_")


@pytest.mark.parametrize("sampler", ["discrete", "float"])
def test_regressor_on_a_dask_array_equals_the_numpy_fit(on_cluster, sampler):
    X, _, y = _data()
    here = _regressor(noise_sampler=sampler).fit(X, y)
    there = _regressor(noise_sampler=sampler).fit(*_dask(X, y))
    _same(here, there, exact=sampler == "discrete")
    assert there.score(X, y) > 0.8


def test_dask_dataframes_equal_the_pandas_fit(on_cluster):
    X, y, yr = _data()
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(D)])
    dframe = dd.from_pandas(frame, npartitions=3)
    here = _classifier().fit(frame, y, classes=[0, 1])
    there = _classifier().fit(dframe, dd.from_pandas(pd.Series(y), npartitions=3),
                              classes=[0, 1])
    _same(here, there, exact=True)
    np.testing.assert_array_equal(there.feature_names_in_, frame.columns)
    there.predict(frame)  # the names are checked as for a pandas fit
    here = _regressor().fit(frame, yr)
    there = _regressor().fit(dframe, dd.from_pandas(pd.Series(yr), npartitions=3))
    _same(here, there, exact=True)


def test_a_numpy_y_with_a_dask_x(on_cluster):
    X, y, _ = _data()
    here = _classifier().fit(X, y, classes=[0, 1])
    there = _classifier().fit(_dask(X, y)[0], y, classes=[0, 1])
    _same(here, there, exact=True)


def test_without_a_client_the_blocks_are_computed_here():
    X, y, _ = _data()
    assert _dask_fit._active_client() is None
    here = _classifier().fit(X, y, classes=[0, 1])
    there = _classifier().fit(*_dask(X, y), classes=[0, 1])
    _same(here, there, exact=True)


def test_classes_read_off_y_warn_as_in_memory(on_cluster):
    X, y, _ = _data()
    with pytest.warns(PrivacyLeakWarning, match="classes is None"):
        here = _classifier().fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="classes is None"):
        there = _classifier().fit(*_dask(X, y))
    _same(here, there, exact=True)
    assert there.privacy_spent_.inferred == ("classes",)


def test_the_fitted_estimator_pickles_and_publishes_without_dask_state(on_cluster):
    X, y, _ = _data()
    there = _classifier().fit(*_dask(X, y), classes=[0, 1])
    assert there._stream.algorithm.n_rounds == 1
    back = pickle.loads(pickle.dumps(there))
    np.testing.assert_array_equal(back.predict(X), there.predict(X))
    public = there.public_model()
    np.testing.assert_array_equal(public.coef_, there.coef_)
    back.partial_fit(X[:500], y[:500])  # a stream after fit starts afresh, as in memory


def test_epsilon_inf_matches(on_cluster):
    X, y, _ = _data()
    here = _classifier(epsilon=np.inf).fit(X, y, classes=[0, 1])
    there = _classifier(epsilon=np.inf).fit(*_dask(X, y), classes=[0, 1])
    _same(here, there, exact=False)


# ------------------------------------------------------------------ accounting
def _entry_fields(entry):
    params = dict(entry.params, ledger=None)
    return (entry.source, params, entry.event, entry.delta, entry.epsilon, entry.releases,
            entry.inferred, entry.seeded, entry.parent, entry.charged)


def test_ledger_entry_equals_the_numpy_fits(on_cluster, tmp_path):
    X, y, yr = _data()
    here_path, there_path = tmp_path / "here.sqlite", tmp_path / "there.sqlite"
    _classifier(ledger=here_path).fit(X, y, classes=[0, 1])
    _classifier(ledger=there_path).fit(*_dask(X, y), classes=[0, 1])
    _regressor(ledger=here_path).fit(X, yr)
    _regressor(ledger=there_path).fit(*_dask(X, yr))
    here, there = PrivacyLedger(here_path).entries(), PrivacyLedger(there_path).entries()
    assert len(here) == len(there) == 2
    assert [_entry_fields(e) for e in here] == [_entry_fields(e) for e in there]
    assert PrivacyLedger(there_path).spent().epsilon == PrivacyLedger(here_path).spent().epsilon


def test_the_budget_is_checked_from_public_counts(on_cluster, tmp_path, monkeypatch):
    X, y, _ = _data()
    dX, dy = _dask(X, y)
    est = _classifier(ledger=tmp_path / "l.sqlite")
    declared = _dask_fit.declared_fit_event(est, dX, dy, [0, 1])
    # no zero rows of X's shape are built: the ledger's check is this declaration
    from skdpol.ledger import _hook

    checked = []
    real = _hook.declared_event
    monkeypatch.setattr(_hook, "declared_event",
                        lambda *a: checked.append(real(*a)) or checked[-1])
    PrivacyLedger(tmp_path / "l.sqlite").set_budget(1.2, 1e-6)
    est.fit(dX, dy, classes=[0, 1])
    assert checked == [(declared, None)]
    assert PrivacyLedger(tmp_path / "l.sqlite").entries()[0].event == declared
    before = est.coef_.copy()
    with pytest.raises(BudgetExhaustedError):  # a second epsilon=1 release passes 1.2
        est.fit(dX, dy, classes=[0, 1])
    np.testing.assert_array_equal(est.coef_, before)
    assert len(PrivacyLedger(tmp_path / "l.sqlite").entries()) == 1


# ------------------------------------------------------------------ bad input
def _unchanged(est, fit, match, tmp_path, error=ValueError):
    """``fit`` raises ``error`` and leaves the fitted ``est`` and its ledger as they were."""
    before = (est.coef_.copy(), est.intercept_, est.privacy_spent_, est.n_samples_seen_)
    n_entries = len(PrivacyLedger(tmp_path / "l.sqlite").entries())
    with pytest.raises(error, match=match):
        fit()
    np.testing.assert_array_equal(est.coef_, before[0])
    np.testing.assert_array_equal(est.intercept_, before[1])
    assert (est.privacy_spent_, est.n_samples_seen_) == before[2:]
    assert len(PrivacyLedger(tmp_path / "l.sqlite").entries()) == n_entries


@pytest.fixture
def fitted(tmp_path):
    X, y, yr = _data()
    clf = _classifier(ledger=tmp_path / "l.sqlite").fit(X, y, classes=[0, 1])
    reg = _regressor(ledger=tmp_path / "l.sqlite").fit(X, yr)
    return clf, reg, X, y, yr


def test_unknown_chunk_sizes_are_refused(on_cluster, fitted, tmp_path):
    clf, _, X, y, _ = fitted
    dX, dy = _dask(X, y)
    keep = dX[:, 0] > -10.0  # every row, but dask cannot know how many
    _unchanged(clf, lambda: clf.fit(dX[keep], dy[keep], classes=[0, 1]),
               "unknown chunk sizes", tmp_path)


@pytest.mark.parametrize("missing", ["data_norm", "y_bound"])
def test_a_missing_bound_is_refused(on_cluster, fitted, tmp_path, missing):
    clf, reg, X, y, yr = fitted
    est = reg if missing == "y_bound" else clf
    est.set_params(**{missing: None})
    labels = yr if est is reg else y
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # refused, not read off
        _unchanged(est, lambda: est.fit(*_dask(X, labels)), f"{missing} must be given",
                   tmp_path)


def test_mismatched_lengths_are_refused(on_cluster, fitted, tmp_path):
    clf, reg, X, y, yr = fitted
    dX, dy = _dask(X, y)
    _unchanged(clf, lambda: clf.fit(dX, dy[:-1], classes=[0, 1]),
               f"X has {N} rows but y has {N - 1}", tmp_path)
    _unchanged(reg, lambda: reg.fit(dX, np.zeros(N + 1)), "rows but y has", tmp_path)


@pytest.mark.parametrize("where", ["X", "y"])
def test_nan_in_a_block_is_refused_by_row(on_cluster, fitted, tmp_path, where):
    _, reg, X, _, yr = fitted
    X, yr = X.copy(), yr.copy()
    row = 2 * CHUNK + 5  # in the third block
    (X if where == "X" else yr)[row] = np.nan
    _unchanged(reg, lambda: reg.fit(*_dask(X, yr)),
               rf"Input {where} contains NaN or infinity in 1 row\(s\) \(first rows \[{row}\]\)",
               tmp_path)


def test_an_unknown_label_in_a_block_is_refused_by_row(on_cluster, fitted, tmp_path):
    clf, _, X, y, _ = fitted
    y = y.copy()
    y[CHUNK + 3] = 7
    _unchanged(clf, lambda: clf.fit(*_dask(X, y), classes=[0, 1]),
               rf"labels not in classes \[0, 1\] in 1 row\(s\) \(first rows \[{CHUNK + 3}\]\)",
               tmp_path)


@pytest.mark.parametrize("params", [{"algorithm": "ftl"}, {"delta": 0.0}])
def test_algorithms_other_than_noisy_gd_are_refused(on_cluster, fitted, tmp_path, params):
    _, reg, X, _, yr = fitted
    reg.set_params(**params)
    _unchanged(reg, lambda: reg.fit(*_dask(X, yr)), "noisy gradient descent only", tmp_path)


def test_x_must_be_dask_with_a_dask_y(on_cluster, fitted, tmp_path):
    clf, _, X, y, _ = fitted
    _unchanged(clf, lambda: clf.fit(X, _dask(X, y)[1], classes=[0, 1]),
               "X must be a dask array", tmp_path, error=TypeError)

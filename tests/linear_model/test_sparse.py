"""Sparse input (CSR, CSC): the same models as dense input, and no chunk densified.

Sparse products add the same nonzero products as the dense ones in another
order, so a model agrees with the dense input's up to float rounding
(measured: <= 5e-14 at epsilon = inf; equal at epsilon = 1, where the
discrete noise's grid absorbs the rounding), not bit for bit: the tests
allow 1e-9 (relative and absolute).
"""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol import KernelPrivateOnlineRegressor, PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.exceptions import PrivacyLeakWarning

TOL = dict(rtol=1e-9, atol=1e-9)
FORMATS = ["csr", "csc"]


def _data(n=1200, d=15, density=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    X[:20] *= 10.0  # rows above data_norm: the clipping path
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y


def _as(X, fmt):
    return getattr(sp, f"{fmt}_matrix")(X)


def _run(est, X, y, path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if path == "fit":
            return est.fit(X, y, **kw)
        half = X.shape[0] // 2
        est.partial_fit(X[:half], y[:half], **kw)
        return est.partial_fit(X[half:], y[half:])


def _model(est):
    return np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]


REGRESSOR_CASES = [
    ("auto", {}), ("ftl", {}), ("ftl", {"batch_size": 8}),  # PQFTL: float, grid leaves
    ("noisy-gd", {}), ("ftrl", {}), ("ftal", {}), ("igd", {"batch_size": 1}),
    ("giga", {}), ("mi-ogd", {}), ("mi-ogd", {"feedback": "bandit"}),
    ("ftrl-momentum", {}),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", ["fit", "partial_fit"])
@pytest.mark.parametrize("algorithm, extra", REGRESSOR_CASES)
@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_regressor_sparse_equals_dense(algorithm, extra, path, fmt, epsilon):
    X, y = _data()
    if algorithm == "igd":
        X, y = X[:300], y[:300]
    params = dict(epsilon=epsilon, data_norm=3.0, y_bound=6.0, algorithm=algorithm,
                  horizon=X.shape[0], random_state=0, **extra)
    dense = _run(PrivateOnlineRegressor(**params), X, y, path)
    sparse = _run(PrivateOnlineRegressor(**params), _as(X, fmt), y, path)
    np.testing.assert_allclose(_model(sparse), _model(dense), **TOL)
    np.testing.assert_allclose(sparse.predict(_as(X, fmt)), dense.predict(X), **TOL)
    assert sparse.score(_as(X, fmt), y) == pytest.approx(dense.score(X, y), rel=1e-9)
    assert sparse.privacy_spent_ == dense.privacy_spent_


CLASSIFIER_CASES = [
    ("auto", {}), ("ftrl", {}), ("ftal", {}), ("igd", {}), ("igd", {"batch_size": 1}),
    ("giga", {}), ("mi-ogd", {}), ("noisy-gd", {}), ("ls", {}), ("ls", {"batch_size": 8}),
    ("ftrl-momentum", {}),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", ["fit", "partial_fit"])
@pytest.mark.parametrize("algorithm, extra", CLASSIFIER_CASES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_sparse_equals_dense(algorithm, extra, path, fmt, n_classes):
    X, y = _data()
    labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    classes = np.arange(n_classes)
    params = dict(epsilon=np.inf, data_norm=3.0, algorithm=algorithm, horizon=X.shape[0],
                  random_state=0, **extra)
    dense = _run(PrivateOnlineLogistic(**params), X, labels, path, classes=classes)
    sparse = _run(PrivateOnlineLogistic(**params), _as(X, fmt), labels, path, classes=classes)
    np.testing.assert_allclose(_model(sparse), _model(dense), **TOL)
    Xs = _as(X, fmt)
    np.testing.assert_allclose(sparse.decision_function(Xs), dense.decision_function(X), **TOL)
    np.testing.assert_allclose(sparse.predict_proba(Xs), dense.predict_proba(X), **TOL)
    np.testing.assert_array_equal(sparse.predict(Xs), dense.predict(X))
    # the published model reads sparse rows too
    np.testing.assert_allclose(sparse.public_model().predict_proba(Xs),
                               dense.predict_proba(X), **TOL)


@pytest.mark.parametrize("algorithm", ["ftl", "korls", "gd"])
@pytest.mark.parametrize("path", ["fit", "partial_fit"])
def test_kernel_sparse_equals_dense(algorithm, path):
    """The random-feature map is a product X @ frequencies.T: sparse X gives
    the same (dense, n x n_components) features."""
    X, y = _data(n=400)
    params = dict(epsilon=np.inf, data_norm=3.0, y_bound=6.0, algorithm=algorithm,
                  n_components=32, random_state=0, horizon=400)
    dense = _run(KernelPrivateOnlineRegressor(**params), X, y, path)
    sparse = _run(KernelPrivateOnlineRegressor(**params), _as(X, "csr"), y, path)
    np.testing.assert_allclose(_model(sparse), _model(dense), **TOL)
    np.testing.assert_allclose(sparse.predict(_as(X, "csc")), dense.predict(X), **TOL)


@pytest.mark.parametrize("algorithm", ["ftl", "ftrl", "noisy-gd"])
def test_regressor_progressive_predict_sparse(algorithm):
    X, y = _data(n=60)
    params = dict(epsilon=np.inf, data_norm=3.0, y_bound=6.0, algorithm=algorithm,
                  batch_size=1, horizon=60, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        dense = PrivateOnlineRegressor(**params).progressive_predict(X, y)
        sparse = PrivateOnlineRegressor(**params).progressive_predict(_as(X, "csr"), y)
    np.testing.assert_allclose(sparse, dense, **TOL)


def test_logistic_progressive_predict_sparse():
    X, y = _data(n=60)
    labels = (y > 0).astype(int)
    params = dict(epsilon=np.inf, data_norm=3.0, batch_size=1, horizon=120, random_state=0)
    out = []
    for Xf in (X, _as(X, "csr")):
        est = PrivateOnlineLogistic(**params).partial_fit(Xf[:1], labels[:1], classes=[0, 1])
        out.append(est.progressive_predict(Xf[1:], labels[1:]))
    np.testing.assert_allclose(out[1], out[0], **TOL)


def _wide(n_rows, n_cols=2**17, nnz=30, seed=0):
    """Hashed-feature-like CSR rows: ``nnz`` nonzeros a row among ``n_cols``."""
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n_cols, size=(n_rows, nnz))
    indices.sort(axis=1)
    data = rng.normal(size=(n_rows, nnz))
    X = sp.csr_matrix((data.ravel(), indices.ravel(), np.arange(0, n_rows * nnz + 1, nnz)),
                      shape=(n_rows, n_cols))
    X.sum_duplicates()
    w = np.zeros(n_cols)
    w[rng.integers(0, n_cols, 2000)] = rng.normal(size=2000)
    return X, X @ w


@pytest.mark.parametrize("make", [
    lambda: PrivateOnlineLogistic(data_norm=8.0, random_state=0),  # ftrl stream
    # noisy GD's discrete sampler draws coordinate by coordinate in Python
    # (~5 s per step at d = 2^17): the float sampler keeps the test short
    lambda: PrivateOnlineLogistic(data_norm=8.0, algorithm="noisy-gd", noise_sampler="float",
                                  random_state=0),
    lambda: PrivateOnlineRegressor(data_norm=8.0, y_bound=8.0, algorithm="ftrl",
                                   random_state=0),
    lambda: PrivateOnlineRegressor(data_norm=8.0, y_bound=8.0, algorithm="noisy-gd",
                                   noise_sampler="float", random_state=0),
])
def test_wide_sparse_chunk_is_never_densified(make):
    """A 4,000 x 2^17 CSR chunk (30 nonzeros a row) would take 4.2 GB dense;
    learning from it, and predicting, stays within a small budget."""
    X, y = _wide(4000)
    est = make()
    target = (y > 0).astype(int) if isinstance(est, PrivateOnlineLogistic) else y
    kw = {"classes": [0, 1]} if isinstance(est, PrivateOnlineLogistic) else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        tracemalloc.start()
        try:
            est.partial_fit(X[:2000], target[:2000], **kw)
            est.partial_fit(X[2000:], target[2000:])
            est.predict(X)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    dense_bytes = X.shape[0] * X.shape[1] * 8
    assert peak < 200e6 < dense_bytes / 20, peak
    assert est.n_samples_seen_ == 4000


@pytest.mark.parametrize("first_call", [True, False])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_sparse_is_refused_state_unchanged(first_call, bad):
    X, y = _data(n=400)
    est = PrivateOnlineRegressor(data_norm=3.0, y_bound=6.0, random_state=0, horizon=800)
    if not first_call:
        est.partial_fit(_as(X[:200], "csr"), y[:200])
    before = (None if first_call else _model(est).copy(), getattr(est, "n_samples_seen_", 0))
    Xb = _as(X[200:], "csr")
    Xb.data[5] = bad
    with pytest.raises(ValueError, match="Input X contains"):
        est.partial_fit(Xb, y[200:])
    assert getattr(est, "n_samples_seen_", 0) == before[1]
    if not first_call:
        np.testing.assert_array_equal(_model(est), before[0])


def test_non_finite_sparse_refused_by_fit_and_classifier():
    X, y = _data(n=200)
    Xb = _as(X, "csc")
    Xb.data[0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        PrivateOnlineLogistic(data_norm=3.0).fit(Xb, (y > 0).astype(int), classes=[0, 1])
    with pytest.raises(ValueError, match="Input X contains NaN"):
        PrivateOnlineRegressor(data_norm=3.0, y_bound=6.0).fit(Xb, y)


def test_mismatched_width_sparse_is_refused():
    X, y = _data(n=200)
    est = PrivateOnlineLogistic(data_norm=3.0, random_state=0)
    est.partial_fit(_as(X[:100], "csr"), (y[:100] > 0).astype(int), classes=[0, 1])
    seen = est.n_samples_seen_
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(_as(X[100:, :-1], "csr"), (y[100:] > 0).astype(int))
    assert est.n_samples_seen_ == seen
    with pytest.raises(ValueError, match="features"):
        est.predict(_as(X[:, :-1], "csr"))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sparse_and_dense_chunks_mix_in_one_stream():
    """A stream may take dense and sparse chunks in any order (and rows
    waiting for their round across the two kinds)."""
    X, y = _data(n=1000)
    labels = (y > 0).astype(int)
    params = dict(epsilon=np.inf, data_norm=3.0, batch_size=300, random_state=0)
    dense = PrivateOnlineLogistic(**params)
    mixed = PrivateOnlineLogistic(**params)
    for lo, hi, fmt in [(0, 250, None), (250, 700, "csr"), (700, 1000, None)]:
        dense.partial_fit(X[lo:hi], labels[lo:hi], classes=[0, 1])
        part = X[lo:hi] if fmt is None else _as(X[lo:hi], fmt)
        mixed.partial_fit(part, labels[lo:hi], classes=[0, 1])
    np.testing.assert_allclose(_model(mixed), _model(dense), **TOL)


def test_sparse_overflowing_rows_are_clipped_along_their_direction():
    """Finite entries whose squares overflow: the row is clipped onto the
    unit sphere along its direction, as on the dense path."""
    X, y = _data(n=300)
    X[3, :3] = [1e200, -1e200, 0.0]
    params = dict(epsilon=np.inf, data_norm=3.0, y_bound=6.0, algorithm="noisy-gd",
                  random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        dense = PrivateOnlineRegressor(**params).fit(X, y)
        sparse = PrivateOnlineRegressor(**params).fit(_as(X, "csr"), y)
    assert np.isfinite(_model(sparse)).all()
    np.testing.assert_allclose(_model(sparse), _model(dense), **TOL)


def test_sparse_tags_declared():
    for est in (PrivateOnlineRegressor(), PrivateOnlineLogistic(),
                KernelPrivateOnlineRegressor()):
        assert est.__sklearn_tags__().input_tags.sparse

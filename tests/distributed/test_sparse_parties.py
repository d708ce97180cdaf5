"""The multi-party estimator on sparse rows (in-process parties): the same
model as on dense rows, every party's block kept CSR."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol.distributed import MultiPartyPrivateSGD


@pytest.mark.parametrize("protocol", ["sgd2"])  # sgd1 (n^2 steps) is slow; same party code
@pytest.mark.parametrize("trust_model", ["local", "secure-aggregation"])
@pytest.mark.parametrize("loss", ["squared_error", "log_loss"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_parties_equal_dense(protocol, trust_model, loss, fmt):
    if protocol == "sgd1" and trust_model != "local":
        pytest.skip("sgd1 has no aggregation")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8)) * (rng.random((400, 8)) < 0.3)
    y = X @ rng.normal(size=8)
    if loss == "log_loss":
        y = (y > 0).astype(int)
    parties = np.repeat([0, 1, 2, 3], 100)
    params = dict(protocol=protocol, trust_model=trust_model, loss=loss, data_norm=2.0,
                  epsilon=1.0, random_state=0)
    if protocol == "sgd1":
        params["noise_sampler"] = "float"
    if loss == "squared_error":
        params["y_bound"] = 4.0
    kw = {"classes": [0, 1]} if loss == "log_loss" else {}
    dense = MultiPartyPrivateSGD(**params).fit(X, y, parties=parties, **kw)
    Xs = getattr(sp, f"{fmt}_matrix")(X)
    sparse = MultiPartyPrivateSGD(**params).fit(Xs, y, parties=parties, **kw)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sparse.predict(Xs), dense.predict(X), rtol=1e-9, atol=1e-9)


def test_sparse_nan_refused():
    X = sp.csr_matrix(np.eye(20))
    X.data[3] = np.nan
    est = MultiPartyPrivateSGD(data_norm=1.0, y_bound=1.0)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        est.fit(X, np.zeros(20))
    assert not hasattr(est, "coef_")

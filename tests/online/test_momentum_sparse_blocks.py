"""ftrl-momentum on sparse chunks takes its rows as SparseUnitRows (no
appended column, no per-round CSR); the models must be those of the CSR
rows with the column appended, bit for bit: rounds inside a chunk, rounds
across two chunks, rows waiting for the next call and the final round."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.online._momentum import MomentumFTRL
from skdpol.utils._sparse import SparseUnitRows


def _counted(monkeypatch):
    """Count the rounds whose gradient sums SparseUnitRows took."""
    calls = []
    for name in ("rmatvec", "rmatmul"):
        real = getattr(SparseUnitRows, name)
        monkeypatch.setattr(SparseUnitRows, name,
                            lambda self, r, real=real: calls.append(1) or real(self, r))
    return calls


def _stream(make, X, y, sizes, first):
    est, lo = make(), 0
    for i, size in enumerate(sizes):
        est.partial_fit(X[lo:lo + size], y[lo:lo + size], **(first if i == 0 else {}))
        lo += size
    return est


def _data(n, d, classes, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=8 / d, format="csr", random_state=seed)
    X.data = rng.normal(size=X.data.size)
    s = X @ rng.normal(size=d)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y, s


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize("classes", [2, 3])
def test_sparse_blocks_give_the_appended_rows_models(epsilon, classes, monkeypatch):
    X, y, _ = _data(900, 2000, classes)
    sizes = [130, 270, 70, 330, 100]  # rounds of 60 across calls, waiting rows, the horizon

    def make():
        return PrivateOnlineLogistic(epsilon=epsilon, data_norm=0.8, horizon=900,
                                     batch_size=60, algorithm="ftrl-momentum",
                                     random_state=3)

    first = {"classes": list(range(classes))}
    calls = _counted(monkeypatch)
    fast = _stream(make, X, y, sizes, first)
    assert 5 <= len(calls) < 15  # 15 rounds, those within one call's rows
    monkeypatch.setattr(MomentumFTRL, "sparse_blocks", False)
    slow = _stream(make, X, y, sizes, first)
    assert fast.n_samples_learned_ == slow.n_samples_learned_ == 900
    assert fast.coef_.tobytes() == slow.coef_.tobytes()
    assert np.asarray(fast.intercept_).tobytes() == np.asarray(slow.intercept_).tobytes()


def test_regressor_sparse_blocks(monkeypatch):
    # the regressor's plain ftrl-momentum stream (no centring at epsilon = inf)
    X, _, s = _data(600, 3000, 2, seed=1)

    def make():
        return PrivateOnlineRegressor(epsilon=np.inf, data_norm=1.0, y_bound=4.0,
                                      horizon=600, batch_size=50,
                                      algorithm="ftrl-momentum", random_state=0)

    fast = _stream(make, X, s, [250, 350], {})
    monkeypatch.setattr(MomentumFTRL, "sparse_blocks", False)
    slow = _stream(make, X, s, [250, 350], {})
    assert fast.coef_.tobytes() == slow.coef_.tobytes()
    assert np.asarray(fast.intercept_).tobytes() == np.asarray(slow.intercept_).tobytes()

"""fit's one release of the kernel estimator (skdpol.kernel._release)."""

import math

import numpy as np
import pytest

from skdpol.accounting import epsilon_spent
from skdpol.kernel import KernelORLS
from skdpol.kernel._release import final_release
from skdpol.mechanisms import NoiseSpec

EPSILON, DELTA = 1.0, 1e-5


def _unit_rows(rng, n, d):
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _base(theta, batch_size, horizon=None, d=3, **kw):
    return KernelORLS(n_components=d, theta=theta, y_bound=kw.pop("y_bound", 1.0),
                      batch_size=batch_size, horizon=horizon, **kw)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_final_release(noise):
    rng = np.random.default_rng(11)
    X, y = _unit_rows(rng, 203, 5), rng.uniform(-1, 1, 203)
    base = _base(0.75, 10, d=5)
    W, event = final_release(base, X, y, epsilon=EPSILON, delta=DELTA,
                             noise=NoiseSpec(noise), rng=np.random.default_rng(0))
    assert base.n_rows_used == 200 and W.shape == (1, 5)
    assert np.linalg.norm(W) <= base.radius * (1 + 1e-12)
    delta = DELTA if noise == "gaussian" else 0.0
    assert 0.999 * EPSILON <= epsilon_spent(event, delta)[0] <= EPSILON
    exact, none = final_release(_base(0.75, 10, d=5), X, y, epsilon=math.inf, delta=DELTA,
                                noise=NoiseSpec(noise), rng=np.random.default_rng(0))
    np.testing.assert_array_equal(exact, base.W)
    assert epsilon_spent(none, DELTA)[0] == 0.0

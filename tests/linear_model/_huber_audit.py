"""What the regressor's first-order stream tests share (imported by
test_ftrl_momentum and test_regressor_ftrl): a generated regression and the
audit.

The canary's round holds one row: D has it with label -1, D' with +1, so its
Huber residual is clipped to +tau and -tau (residual_bound=1: tau = 1 here,
the noise scales with it) and the leaf moves by exactly 2 L. The released
model's prediction at the canary is linear in the noisy prefix sum: the
strongest statistic. Claim epsilon = 2 as the other audits do.
"""

import numpy as np
import pytest

from skdpol import PrivateOnlineRegressor
from skdpol.audit import audit_estimator

EPSILON, DELTA = 2.0, 1e-5


def regression_rows(n=20_000, d=8, seed=0):
    """(X, y, data_norm, y_bound): a linear target with an intercept and noise,
    bounds from the generating distribution."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = X @ w + 1.0 + 0.5 * rng.normal(size=n)
    return X, y, float(np.sqrt(d) * 2.5), float(np.abs(w).sum() * 3 + 1)
# one release by default; fit and a continual release (8 rounds, a release
# after each call of 1, 1, 2, 4 rows: the canary in all) marked slow
CASES = ["one release", pytest.param("fit", marks=pytest.mark.slow),
         pytest.param("continual release", marks=pytest.mark.slow)]


def _audit(audit_runs, algorithm, method="partial_fit", n=1, chunks=None, open_horizon=False,
           delta=DELTA):
    X, y = np.zeros((n, 2)), np.zeros(n)
    X[0, 0], y[0] = 1.0, -1.0
    params = dict(epsilon=EPSILON, delta=delta, data_norm=1.0, y_bound=1.0,
                  residual_bound=1.0, batch_size=1, horizon=None if open_horizon else n,
                  fit_intercept=False, algorithm=algorithm)
    return lambda **kw: audit_estimator(
        PrivateOnlineRegressor(**params), X, y, np.array([1.0, 0.0]), 1.0, method=method,
        chunks=chunks, n_runs=audit_runs, **kw)


def check_audit(case, audit_runs, weakened_noise, *, stream_algorithm, fit_algorithm,
                open_horizon=False, delta=DELTA):
    """Not refuted honestly; refuted with a tenth of the calibrated noise.
    ``open_horizon``: the streams run with ``horizon=None`` (the open BLT,
    and for ftrl-momentum the open step rule); ``delta=0``: pure DP (the
    tree with Laplace nodes)."""
    if case == "one release":
        run = _audit(audit_runs, stream_algorithm, open_horizon=open_horizon, delta=delta)
    elif case == "fit":
        run = _audit(audit_runs, fit_algorithm, method="fit", delta=delta)
    else:
        run = _audit(audit_runs, stream_algorithm, n=8, chunks=[1, 1, 2, 4],
                     open_horizon=open_horizon, delta=delta)
    honest = run()
    assert honest.epsilon_claimed <= EPSILON + 1e-9
    assert not honest.refuted, honest
    with weakened_noise(0.1):  # deliberately broken: a tenth of the calibrated noise
        cut = run(epsilon_claimed=EPSILON)
    assert cut.refuted, cut

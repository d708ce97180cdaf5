"""Audits of the classifier's least-squares stream ("ls", the default stream).

Two neighbouring data sets differ in row 0: e1 with label 0 (coded -1) in D,
e1 with label 1 (+1) in D'. Every other row is zero, so the label cross term
X^T y moves by 2 e1 (in leaf units, 2 / s_u = 1 of the sensitivity
sqrt(9/8)) and the Gram not at all: the released models' scores at e1 carry
the whole difference. The claim (epsilon = 2, delta = 1e-5) must not be
refuted; a tenth of the calibrated noise must be
(:func:`skdpol.audit.audit_estimator`, end to end through ``partial_fit``).
"""

import numpy as np
import pytest

from skdpol import PrivateOnlineLogistic
from skdpol.audit import audit_estimator

EPSILON, DELTA = 2.0, 1e-5


def _setting(n=8, d=2):
    X, y = np.zeros((n, d)), np.zeros(n, dtype=int)
    X[0, 0] = 1.0
    return X, y, X[0].copy(), 1


CASES = {
    "ls stream (auto)": dict(),
    "ls stream, pure DP (tree, Laplace)": dict(algorithm="ls", delta=0.0),
    "ls stream, float sampler": dict(algorithm="ls", noise_sampler="float"),
    "ls stream, rounds of 4 rows": dict(algorithm="ls", batch_size=4),
    "ls fit (one release)": dict(algorithm="ls"),
}
SLOW = {"ls stream, pure DP (tree, Laplace)", "ls stream, float sampler",
        "ls stream, rounds of 4 rows"}


# the first calls of the rounds-of-4 case complete no round (and say so)
@pytest.mark.filterwarnings("ignore:no round of")
@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW else c
                                  for c in CASES])
def test_ls_audit(case, audit_runs, weakened_noise):
    X, y, cx, cy = _setting()
    params = dict(epsilon=EPSILON, delta=DELTA, data_norm=1.0, batch_size=1,
                  horizon=len(X), fit_intercept=False)
    params.update(CASES[case])
    method = "fit" if "fit" in case else "partial_fit"
    fit_params = dict(classes=[0, 1])
    honest = audit_estimator(PrivateOnlineLogistic(**params), X, y, cx, cy, method=method,
                             n_runs=audit_runs, fit_params=fit_params)
    assert honest.epsilon_claimed <= EPSILON + 1e-9
    assert not honest.refuted, honest
    with weakened_noise(0.1):  # deliberately broken: a tenth of the calibrated noise
        cut = audit_estimator(PrivateOnlineLogistic(**params), X, y, cx, cy, method=method,
                              n_runs=audit_runs, epsilon_claimed=EPSILON,
                              fit_params=fit_params)
    assert cut.refuted, cut

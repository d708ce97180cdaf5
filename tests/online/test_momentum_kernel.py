"""ftrl-momentum's round compiled (online/_momentum_kernel.py, and the
one-buffer BLT step under it: mechanisms/_blt_kernel.py) against the numpy
lines they replace (the modules' ``_KERNEL_WIDTH = None``): the published
models bit for bit after every call (each call a transaction: a checkpoint
shares the iterates), a refused call in the middle, and a checkpoint that
is never written and continues as the stream does."""

import copy

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.mechanisms import _blt
from skdpol.online import _curvature, _momentum

from test_momentum_sparse_blocks import _data  # tests/online/


def _use_kernels(monkeypatch, on):
    width = 0 if on else None
    monkeypatch.setattr(_blt, "_KERNEL_WIDTH", width)
    monkeypatch.setattr(_momentum, "_KERNEL_WIDTH", width)


def _models(make, X, y, sizes, first):
    est, lo, out = make(), 0, []
    for i, size in enumerate(sizes):
        est.partial_fit(X[lo:lo + size], y[lo:lo + size], **(first if i == 0 else {}))
        lo += size
        if i == 1:  # a refused call (a column too many): nothing may change
            with pytest.raises(ValueError):
                est.partial_fit(sp.random(70, X.shape[1] + 1, format="csr"), y[:70])
        out.append(est.coef_.tobytes() + np.asarray(est.intercept_).tobytes())
    return out


@pytest.mark.parametrize("epsilon", [1.0, np.inf])  # the one-buffer BLT; the tree
@pytest.mark.parametrize("classes, alpha", [(2, None), (3, 1e-3)])  # None: the default, 0
def test_the_compiled_rounds_publish_the_numpy_models(epsilon, classes, alpha, monkeypatch):
    X, y, _ = _data(900, 2000, classes)
    sizes = [130, 270, 70, 330, 100]  # rounds across calls, waiting rows, the horizon

    def make():
        return PrivateOnlineLogistic(epsilon=epsilon, data_norm=0.8, horizon=900, alpha=alpha,
                                     batch_size=60, algorithm="ftrl-momentum", random_state=3)

    first = {"classes": list(range(classes))}
    calls = []
    real = _momentum.momentum_step
    monkeypatch.setattr(_momentum, "momentum_step", lambda *a: calls.append(1) or real(*a))
    # a wide classifier (2,000 columns) takes the kernels of its cap (online/_curvature.py:
    # the plain step where nothing is capped, the capped one, the secant rounds')
    for name in ("momentum_step", "momentum_step_capped", "momentum_step_secant"):
        monkeypatch.setattr(_curvature, name,
                            lambda *a, real=getattr(_curvature, name): calls.append(2) or real(*a))
    _use_kernels(monkeypatch, True)
    got = _models(make, X, y, sizes, first)
    assert calls == [2] * 15
    _use_kernels(monkeypatch, False)
    assert got == _models(make, X, y, sizes, first)


def test_the_regressors_compiled_rounds(monkeypatch):
    X, _, s = _data(600, 3000, 2, seed=1)

    def make():
        return PrivateOnlineRegressor(epsilon=1.0, data_norm=1.0, y_bound=4.0, horizon=600,
                                      batch_size=50, algorithm="ftrl-momentum", random_state=0)

    _use_kernels(monkeypatch, True)
    got = _models(make, X, s, [250, 100, 250], {})
    _use_kernels(monkeypatch, False)
    assert got == _models(make, X, s, [250, 100, 250], {})


def test_a_checkpoint_is_never_written_and_continues_as_the_stream(monkeypatch):
    _use_kernels(monkeypatch, True)
    X, y, _ = _data(600, 2000, 2, seed=2)
    monkeypatch.setattr("skdpol.mechanisms._blt._EXACT_TOTAL", True)  # compared below
    est = PrivateOnlineLogistic(epsilon=1.0, data_norm=0.8, horizon=600, batch_size=60,
                                algorithm="ftrl-momentum", random_state=1)
    est.partial_fit(X[:180], y[:180], classes=[0, 1])
    est.partial_fit(X[180:300], y[180:300])  # its stream owns its iterates again
    stream = est._stream.algorithm
    saved = copy.copy(stream)  # a shallow checkpoint: it shares the arrays
    other = copy.deepcopy(est)
    other._stream.algorithm = saved  # the estimator around the checkpoint
    names = ("_theta", "_velocity", "_average", "_last_release")
    tree_names = ("_enc", "_dec", "_total", "_released")
    kept = [getattr(saved, n).tobytes() for n in names]
    tree_kept = [getattr(saved._tree, n).tobytes() for n in tree_names]
    est.partial_fit(X[300:420], y[300:420])
    assert [getattr(saved, n).tobytes() for n in names] == kept
    assert [getattr(saved._tree, n).tobytes() for n in tree_names] == tree_kept
    other.partial_fit(X[300:420], y[300:420])
    assert other.coef_.tobytes() == est.coef_.tobytes()
    for n in names:
        assert getattr(saved, n).tobytes() == getattr(stream, n).tobytes()

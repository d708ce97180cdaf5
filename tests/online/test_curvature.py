"""The wide classifier's per-coordinate step cap (online/_curvature.py): which
coordinates it caps, its noise gate, its secant rounds, the streams that take
it, the shared column it is for and the plain rows it leaves alone, its numpy
and compiled rounds bit for bit, checkpoints, pickles and refused calls."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.online import _curvature, _momentum
from skdpol.online._curvature import DECAY, GATE, CurvatureCap, secant_round
from skdpol.online._registry import WIDE_CURVATURE_CAP


class _Tree:
    """A mechanism's public noise schedule, and nothing else."""

    def __init__(self, std):
        self.std = std

    def noise_std_at(self, times):
        return np.where(np.asarray(times) > 0, self.std, 0.0)


def _round(cap, lr, released, last, v_prev, t, tree=None, rows=1, intercept=True):
    arrays = [np.array([x], dtype=float) for x in (released, last, v_prev)]
    return cap.rates(lr, *arrays, 0.0, 0.95, tree or _Tree(0.0), t, rows, intercept)


def test_the_secant_rounds_and_what_a_round_keeps_for_the_next():
    assert [t for t in range(1, 42) if secant_round(t)] == [2, 3, 4, 5, 8, 16, 24, 32, 40]
    cap = CurvatureCap(2.0, (1, 3))
    for t in range(1, 18):
        last = np.full((1, 3), float(t))
        cap.rates(1.0, last + 1.0, last, np.zeros((1, 3)), 0.0, 0.95, _Tree(0.0), t, 1, True)
        # the release before a secant round's: a reference (releases are never written)
        assert (cap._before_last is last) == secant_round(t + 1)


def test_the_cap_takes_only_the_coordinates_past_heavy_balls_bound():
    # columns (dtheta = 1 but the fourth's, 0): h = 10 (lr h past 2 (1 + beta) = 3.9),
    # 0.1, -1 (against the gradient), still, 3 (past kappa = 2, inside 3.9), and the
    # intercept (h = 10, kept at lr)
    cap = CurvatureCap(2.0, (1, 6))
    zeros = [0.0] * 6
    assert _round(cap, 1.0, zeros, zeros, zeros, 1) == 1.0  # no secant before round 2
    v_prev = [-1.0, -1.0, -1.0, 0.0, -1.0, -1.0]  # the step -lr v_prev: dtheta
    # dg = (G_2 - G_1) - (G_1 - G_0) with rows = 1, G_1 = G_0 = 0
    rates = _round(cap, 1.0, [10.0, 0.1, -1.0, 5.0, 3.0, 10.0], zeros, v_prev, 2)
    assert rates.tolist() == [[2.0 / 10.0, 1.0, 1.0, 1.0, 1.0, 1.0]]  # kappa den / num
    assert cap._capped.tolist() == [0] and cap._rates.tolist() == [0.2]
    np.testing.assert_array_equal(cap._num, np.float32([[10.0, 0.1, -1.0, 0.0, 3.0, 10.0]]))
    np.testing.assert_array_equal(cap._den, [[1.0, 1.0, 1.0, 0.0, 1.0, 1.0]])
    # round 3, no change of the gradient: the sums decay; the capped column's step was
    # -0.2 v_prev (its own rate, not lr), and the float32 sums are read back as stored
    released = [10.0, 0.1, -1.0, 5.0, 3.0, 10.0]
    rates = _round(cap, 1.0, [2 * x for x in released], released, v_prev, 3)
    den = np.float64(np.float32(DECAY * 1.0 + 0.2 * 0.2))
    num = np.float64(np.float32(DECAY * np.float64(np.float32(10.0))))
    assert rates[0, 0] == 2.0 * den / num
    assert rates[0, 1:].tolist() == [1.0] * 5  # exactly lr
    # rounds 4, 5 (secant rounds, nothing moves: the sums decay alike), 6 (none: the
    # last one's rates, the sums untouched)
    for t in (4, 5):
        _round(cap, 1.0, zeros, zeros, zeros, t)
    kept = (cap._num, cap._den, cap._capped, cap._rates)
    assert kept[2].tolist() == [0] and kept[3][0] == pytest.approx(2.0 * den / num, rel=1e-6)
    rates = _round(cap, 1.0, [100.0] * 6, zeros, zeros, 6)
    assert rates[0, 0] == kept[3][0] and rates[0, 1:].tolist() == [1.0] * 5
    assert (cap._num, cap._den, cap._capped, cap._rates) == kept


def test_the_noise_gate_drops_changes_of_the_noise_s_size():
    # the second difference of the releases over b has noise std at most
    # (s_t + 2 s_{t-1} + s_{t-2}) / b = 4 s / b: a change under GATE times that is dropped
    s, rows = 25.0, 100  # 4 s / 100 = 1: the gate is GATE
    changes = [GATE * 0.9 * rows, GATE * 1.1 * rows]  # G_3 - G_2 (G_2 = G_1 = 0)
    for std, capped in [(s, [1]), (0.0, [0, 1])]:  # with noise; epsilon = inf: both count
        cap = CurvatureCap(2.0, (1, 2))
        for t in (1, 2):
            _round(cap, 100.0, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], t, _Tree(std), rows, False)
        _round(cap, 100.0, changes, [0.0, 0.0], [-0.001, -0.001], 3, _Tree(std), rows, False)
        assert cap._capped.tolist() == capped


def _shared_rows(n, d, seed, shared=0.8):
    """Hashed-like rows with one column of value ``shared`` in every row
    (``benchmarks/bench_wide_stability.py``'s; ``shared=0``: plain rows)."""
    rng = np.random.default_rng(seed)
    idx = np.sort((d * rng.random(size=(n, 30)) ** 4).astype(np.int64), axis=1)
    X = sp.csr_matrix((rng.normal(size=n * 30), idx.ravel(), np.arange(0, n * 30 + 1, 30)),
                      shape=(n, d))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(np.sqrt(1 - shared**2) / norms) @ X)
    if shared:
        X = sp.csr_matrix(X + sp.csr_matrix(
            (np.full(n, shared), (np.arange(n), np.full(n, d - 1))), shape=(n, d)))
    w = rng.normal(size=d)
    w[d - 1] = 3.0
    s = X @ w
    return X, (s + 0.3 * rng.standard_normal(n) > np.median(s)).astype(int)


def test_only_the_wide_classifier_takes_the_cap():
    X, y = _shared_rows(400, 2048, 0)
    est = PrivateOnlineLogistic(epsilon=1.0, data_norm=1.0, horizon=400, random_state=0)
    est.partial_fit(X, y, classes=[0, 1])
    assert est._stream.algorithm._curvature.kappa == WIDE_CURVATURE_CAP
    narrow = PrivateOnlineLogistic(epsilon=1.0, data_norm=1.0, horizon=400, random_state=0,
                                   algorithm="ftrl-momentum")
    narrow.partial_fit(X[:, -1000:], y, classes=[0, 1])
    assert narrow._stream.algorithm._curvature is None
    reg = PrivateOnlineRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0, horizon=400,
                                 random_state=0)
    reg.partial_fit(X, y - 0.5)
    assert reg._stream.algorithm._curvature is None


def _accuracy(X, y, n, monkeypatch, cap=True, epsilon=np.inf):
    import skdpol.linear_model._algorithms as algorithms
    monkeypatch.setattr(algorithms, "WIDE_CURVATURE_CAP", WIDE_CURVATURE_CAP if cap else None)
    est = PrivateOnlineLogistic(epsilon=epsilon, data_norm=1.0, horizon=n, batch_size=1000,
                                random_state=0)
    est.partial_fit(X[:n], y[:n], classes=[0, 1])
    return est.score(X[n:], y[n:]), est._stream.algorithm._curvature


def test_a_shared_column_no_longer_oscillates(monkeypatch):
    # rounds of 1,000 take lr R~^2 = 40: the shared column's lr lambda ~ 10, past heavy
    # ball's 3.9; the cap brings it back (no cap: 0.645 on this seed, with it 0.70)
    X, y = _shared_rows(35_000, 2048, 0)
    capped, cap = _accuracy(X, y, 30_000, monkeypatch)
    assert 2047 in cap._capped  # the token's column (the intercept is 2048)
    free, cap = _accuracy(X, y, 30_000, monkeypatch, cap=False)
    assert cap is None
    assert capped > free + 0.03


def test_plain_hashed_rows_keep_their_accuracy(monkeypatch):
    # no shared column: the cap takes a few columns at most, the accuracy stays
    X, y = _shared_rows(35_000, 2048, 1, shared=0.0)
    capped, cap = _accuracy(X, y, 30_000, monkeypatch)
    free, _ = _accuracy(X, y, 30_000, monkeypatch, cap=False)
    assert abs(capped - free) < 0.01
    assert cap._capped.size < 2048 // 20


def _kernel_calls(monkeypatch):
    calls = []
    for name in ("momentum_step", "momentum_step_capped", "momentum_step_secant"):
        monkeypatch.setattr(_curvature, name, lambda *a, name=name, real=getattr(
            _curvature, name): calls.append(name) or real(*a))
    return calls


@pytest.mark.parametrize("epsilon, alpha", [(1.0, None), (np.inf, None), (np.inf, 1e-3)])
def test_numpy_and_compiled_rounds_with_the_cap_and_a_checkpoint(epsilon, alpha, monkeypatch):
    X, y = _shared_rows(36_000, 2048, 1)  # rounds of 1,000: the shared column's lr lambda ~ 10

    def run(width):
        monkeypatch.setattr(_momentum, "_KERNEL_WIDTH", width)
        est = PrivateOnlineLogistic(epsilon=epsilon, data_norm=1.0, horizon=36_000, alpha=alpha,
                                    batch_size=1000, random_state=2)
        est.partial_fit(X[:2500], y[:2500], classes=[0, 1])
        models = []
        for lo, hi in [(2500, 7000), (7000, 14_500), (14_500, 17_000)]:
            stream = est._stream.algorithm
            saved = copy.copy(stream)  # a shallow checkpoint: it shares the cap's arrays
            kept = [a.tobytes() for a in (saved._curvature._num, saved._curvature._den,
                                          saved._curvature._capped)]
            other = copy.deepcopy(est)
            other._stream.algorithm = saved
            est.partial_fit(X[lo:hi], y[lo:hi])
            assert [a.tobytes() for a in (saved._curvature._num, saved._curvature._den,
                                          saved._curvature._capped)] == kept
            other.partial_fit(X[lo:hi], y[lo:hi])
            assert other.coef_.tobytes() == est.coef_.tobytes()
            models.append(est.coef_.tobytes() + est.intercept_.tobytes())
        est = pickle.loads(pickle.dumps(est))
        est.partial_fit(X[17_000:], y[17_000:])  # to round 36: the secant rounds 24 and 32
        cap = est._stream.algorithm._curvature
        models.append(est.coef_.tobytes() + est.intercept_.tobytes())
        return models, cap._capped.tolist(), cap._num.tobytes() + cap._den.tobytes()

    calls = _kernel_calls(monkeypatch)
    compiled = run(0)
    assert {"momentum_step_secant", "momentum_step_capped"} <= set(calls)
    # rounds 2-5 and 8 (est, and the checkpoint that continues), 16, 24, 32
    assert calls.count("momentum_step_secant") == 5 * 2 + 3
    if epsilon == np.inf:
        assert 2047 in compiled[1]
    n = len(calls)
    assert run(None) == compiled
    assert len(calls) == n  # the numpy lines called no kernel


def test_a_refused_call_in_the_middle_of_the_rounds_changes_nothing(monkeypatch):
    # a call that fails after some of its rounds (here: after its secant rounds'
    # post-processing) leaves the stream as it was: the same models as without it
    monkeypatch.setattr(_momentum, "_KERNEL_WIDTH", 0)
    X, y = _shared_rows(12_000, 2048, 2)

    def make():
        est = PrivateOnlineLogistic(epsilon=np.inf, data_norm=1.0, horizon=12_000,
                                    batch_size=1000, random_state=4)
        est.partial_fit(X[:1500], y[:1500], classes=[0, 1])
        return est

    est = make()
    est.partial_fit(X[1500:6000], y[1500:6000])
    est.partial_fit(X[6000:], y[6000:])
    expected = est.coef_.tobytes() + est.intercept_.tobytes()
    est = make()
    state = pickle.dumps(est)
    real = _curvature.CurvatureCap.kernel_step
    seen = []

    def failing(self, *args):
        real(self, *args)
        seen.append(1)
        if len(seen) == 3:
            raise RuntimeError("interrupted")

    monkeypatch.setattr(_curvature.CurvatureCap, "kernel_step", failing)
    with pytest.raises(RuntimeError):
        est.partial_fit(X[1500:6000], y[1500:6000])
    monkeypatch.setattr(_curvature.CurvatureCap, "kernel_step", real)
    assert pickle.dumps(est) == state
    est.partial_fit(X[1500:6000], y[1500:6000])
    est.partial_fit(X[6000:], y[6000:])
    assert est.coef_.tobytes() + est.intercept_.tobytes() == expected


def test_the_noise_bound_of_an_epoch_mechanism_takes_its_current_std():
    class Epochs:  # knows its current epoch's times only (OpenBLTPrefixSum)
        def noise_std_at(self, times):
            times = np.asarray(times)
            if np.any(times < 5):
                raise ValueError("noise_std_at covers the current epoch only.")
            return 3.0 * np.ones(times.shape)

    assert _curvature._noise_bound(Epochs(), 6, 10) == 4 * 3.0 / 10
    assert _curvature._noise_bound(Epochs(), 8, 10) == (3.0 + 6.0 + 3.0) / 10
    assert _curvature._noise_bound(_Tree(0.0), 8, 10) == 0.0  # epsilon = inf: no gate

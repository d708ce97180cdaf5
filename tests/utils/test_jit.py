"""skdpol.utils.kernel: numba-compiled on first call, the same bits as Python."""

import numpy as np

from skdpol.utils import kernel


@kernel
def _axpy_rint(a, x, y, out):
    # a chain numpy would run as three passes: a * x, + y, rint
    for i in range(x.size):
        out[i] = np.rint(a * x[i] + y[i])
    return out


def test_kernel_matches_numpy_bit_for_bit():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=10_001) * 1e6, rng.normal(size=10_001) * 1e6
    x[:4] = [0.5, -0.5, 1.5, -2.5]  # ties: rint rounds half to even in both
    y[:4] = 0.0
    got = _axpy_rint(0.3, x, y, np.empty_like(x))
    want = np.rint(0.3 * x + y)
    assert got.tobytes() == want.tobytes()
    assert np.array_equal(got[:4], [0.0, -0.0, 0.0, -1.0])


def test_python_function_kept():
    x = np.arange(3.0)
    out = _axpy_rint.py_func(2.0, x, x, np.empty(3))
    assert np.array_equal(out, [0.0, 3.0, 6.0])


def test_compiles_without_a_cache_location(monkeypatch):
    # a read-only install with no user cache directory: numba refuses
    # cache=True at decoration; the kernel still compiles, for this process
    from numba.core import caching

    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])

    @kernel
    def _twice(x):
        return 2.0 * x

    assert _twice(1.5) == 3.0

"""A one-buffer BLT's step takes its buffer's product for the sum over
buffers (mechanisms/_blt.py, ``_add_one``): add.reduce's pass only turned a
-0.0 into +0.0, which the noise erases. Pinned: the releases are those of
the summed step bit for bit, on leaves full of signed zeros and with noise
draws that are often 0 (where the sign could show)."""

import numpy as np
import pytest

from skdpol.mechanisms import BLTPrefixSum
from skdpol.mechanisms import _blt


def _releases(monkeypatch, product, dim, zero_noise):
    monkeypatch.setattr(_blt, "_ONE_BUFFER_PRODUCT", product)
    blt = BLTPrefixSum(dim=dim, sensitivity=2.0, noise_multiplier=0.8, horizon=30,
                       rng=np.random.default_rng(4), buffers=1, leaf_bound=3.0)
    assert blt._enc.shape[0] == blt._dec.shape[0] == 1 and blt._step_size is not None
    if zero_noise:  # integer noise that is 0 on most coordinates: the sign of rint's zeros
        real = blt._draw_noise
        blt._draw_noise = lambda: real() * (np.arange(dim) % 5 == 0)
    rng = np.random.default_rng(9)
    out = []
    for t in range(30):
        leaf = rng.normal(size=dim) * 1e-9  # rounds to a zero of either sign, mostly
        leaf[::3] = -0.0
        leaf[1::7] = rng.normal(size=leaf[1::7].size)
        blt.add(leaf, 1)
        out.append(blt.release())
    return np.array(out)


@pytest.mark.parametrize("dim", [7, 5000])  # full-size coefficients and a (1, 1) column
@pytest.mark.parametrize("zero_noise", [False, True])
def test_one_buffer_product_releases_the_summed_steps(dim, zero_noise, monkeypatch):
    got = _releases(monkeypatch, True, dim, zero_noise)
    want = _releases(monkeypatch, False, dim, zero_noise)
    assert got.tobytes() == want.tobytes()
    if zero_noise:
        assert (got == 0).any()  # zeros were released: their signs were compared too


def test_shared_release_is_the_release_and_stays_its_steps():
    blt = BLTPrefixSum(dim=6, sensitivity=2.0, noise_multiplier=0.8, horizon=5,
                       rng=np.random.default_rng(4), buffers=1)
    blt.add(np.ones(6), 1)
    first = blt.shared_release()
    kept = first.copy()
    assert first.tobytes() == blt.release().tobytes()
    blt.add(np.ones(6), 1)  # the next step replaces the array, never writes it
    assert first.tobytes() == kept.tobytes()
    assert blt.shared_release().tobytes() == blt.release().tobytes()


def test_the_noiseless_trees_shared_release_is_its_release():
    # signed zeros in the leaves: the exact total never holds a -0.0
    from skdpol.mechanisms import PrivatePrefixSum
    tree = PrivatePrefixSum(dim=5, sensitivity=2.0, noise_multiplier=0.0, horizon=8,
                            rng=np.random.default_rng(0))
    for leaf in ([-0.0, 1.0, -0.0, 0.0, -1.0], [-0.0, -1.0, 0.0, -0.0, 1.0], [-0.0] * 5):
        tree.add(np.array(leaf), 1)
        shared = tree.shared_release()
        assert shared.tobytes() == tree.release().tobytes()
        assert not np.signbit(shared[shared == 0]).any()

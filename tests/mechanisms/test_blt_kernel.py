"""The one-buffer BLT step compiled (mechanisms/_blt_kernel.py) against the
numpy step it replaces (``_blt._KERNEL_WIDTH = None``): the same bits in
every array of the state, step after step, on leaves with NaN, infinities,
signed zeros and rint's ties; a checkpoint (``copy.copy``) in the middle is
never written by either side, and both continue as the reference does."""

import copy

import numpy as np
import pytest

from skdpol.mechanisms import BLTPrefixSum
from skdpol.mechanisms import _blt

CONFIGS = {
    "grid": dict(noise_multiplier=0.8, leaf_bound=3.0),
    "grid-default-bound": dict(noise_multiplier=0.8),
    "float": dict(noise_multiplier=0.8, sampler="float"),
    "noiseless": dict(noise_multiplier=0.0),
}


def _leaves(dim, n, step, seed=3):
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        x = rng.normal(size=dim) * (1e-9, 1.0, 5.0)[t % 3]  # zeros of either sign, clips
        x[::5] = -0.0
        x[1::11] = 0.0
        # half-integers in grid units: ties for rint while the buffer is still 0
        x[2::13] = (rng.integers(-50, 50, size=x[2::13].size) + 0.5) * step
        x[3::17] = np.inf
        x[4::19] = -np.inf
        if t % 4 == 3:
            x[5::23] = np.nan
        out.append(x)
    return out


def _state(blt):
    return b"".join(a.tobytes() for a in (blt._enc, blt._dec, blt._released, blt._total,
                                          blt._pool))


def _run(monkeypatch, width, config, dim, n=12, copy_at=6):
    """States after each step, of the stream and of a checkpoint taken at
    ``copy_at`` that continues with the same leaves (its own generator: a
    copy of the stream's, so the same noise)."""
    monkeypatch.setattr(_blt, "_KERNEL_WIDTH", width)
    blt = BLTPrefixSum(dim=dim, sensitivity=2.0, horizon=30, buffers=1,
                       rng=np.random.default_rng(5), **CONFIGS[config])
    leaves = _leaves(dim, n, blt._step_size or 1.0)
    states, clone_states, clone, kept = [], [], None, None
    with np.errstate(invalid="ignore"):  # inf - inf in the totals: NaN, as numpy's
        for t, x in enumerate(leaves):
            if t == copy_at:
                clone = copy.copy(blt)
                kept = _state(clone)
            blt.add(x.copy(), 1)
            states.append(_state(blt))
            if clone is not None:
                assert _state(clone) == kept  # the checkpoint is never written
        for x in leaves[copy_at:]:
            clone.add(x.copy(), 1)
            clone_states.append(_state(clone))
    return states, clone_states


@pytest.mark.parametrize("dim", [7, 5000])  # full-size coefficients and a (1, 1) column
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_the_compiled_step_is_the_numpy_step_bit_for_bit(dim, config, monkeypatch):
    calls = []
    real = _blt.one_buffer_step
    monkeypatch.setattr(_blt, "one_buffer_step",
                        lambda *a: calls.append(1) or real(*a))
    got = _run(monkeypatch, 0, config, dim)
    assert len(calls) == 12 + 6  # every step of the stream and of its checkpoint
    want = _run(monkeypatch, None, config, dim)
    assert got[0] == want[0]
    assert got[1] == want[1] == got[0][6:]  # the checkpoint continues as the stream did


def test_the_releases_handed_out_stay_their_steps(monkeypatch):
    # the buffers and the total are written in place, the release never:
    # shared_release's array (a round algorithm keeps the last one) stays
    monkeypatch.setattr(_blt, "_KERNEL_WIDTH", 0)
    blt = BLTPrefixSum(dim=64, sensitivity=2.0, noise_multiplier=0.8, horizon=10, buffers=1,
                       rng=np.random.default_rng(4))
    held = []
    for t in range(5):
        blt.add(np.full(64, 0.3 * t), 1)
        held.append((blt.shared_release(), blt.release()))
    for shared, copied in held:
        assert shared.tobytes() == copied.tobytes()


def test_several_buffers_and_the_summed_step_keep_numpy(monkeypatch):
    # only one buffer with the product (or the float path) is compiled
    monkeypatch.setattr(_blt, "_KERNEL_WIDTH", 0)
    monkeypatch.setattr(_blt, "one_buffer_step", None)  # would fail if called
    four = BLTPrefixSum(dim=5, sensitivity=2.0, noise_multiplier=0.8, horizon=10,
                        rng=np.random.default_rng(4))
    four.add(np.ones(5), 1)
    monkeypatch.setattr(_blt, "_ONE_BUFFER_PRODUCT", False)
    one = BLTPrefixSum(dim=5, sensitivity=2.0, noise_multiplier=0.8, horizon=10, buffers=1,
                       rng=np.random.default_rng(4))
    one.add(np.ones(5), 1)


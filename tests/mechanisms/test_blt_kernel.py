"""The BLT step compiled (mechanisms/_blt_kernel.py) against the numpy step
it replaces (``_blt._KERNEL_WIDTH = None``), for one buffer and several: the
same bits in every array of the state, step after step, on leaves with NaN,
infinities, signed zeros and rint's ties; a checkpoint (``copy.copy``) in
the middle is never written by either side, and both continue as the
reference does."""

import copy

import numpy as np
import pytest

from skdpol.mechanisms import BLTPrefixSum
from skdpol.mechanisms import _blt, _blt_kernel

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
    total = np.zeros(0) if blt._total is None else blt._total  # (_blt._EXACT_TOTAL)
    return b"".join(a.tobytes() for a in (blt._enc, blt._dec, blt._released, total,
                                          blt._pool))


def _run(monkeypatch, width, config, dim, n=12, copy_at=6, buffers=1):
    """States after each step, of the stream and of a checkpoint taken at
    ``copy_at`` that continues with the same leaves (its own generator: a
    copy of the stream's, so the same noise)."""
    monkeypatch.setattr(_blt, "_KERNEL_WIDTH", width)
    blt = BLTPrefixSum(dim=dim, sensitivity=2.0, horizon=30, buffers=buffers,
                       rng=np.random.default_rng(5), **CONFIGS[config])
    assert blt._enc.shape[0] == blt._dec.shape[0] == buffers
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


def _counted(monkeypatch):
    calls = []
    real = _blt.compiled_step
    monkeypatch.setattr(_blt, "compiled_step", lambda *a: calls.append(1) or real(*a))
    return calls


@pytest.mark.parametrize("dim", [7, 5000])  # full-size coefficients and a (B, 1) column
@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("buffers", [1, 2, 3, 4])
def test_the_compiled_step_is_the_numpy_step_bit_for_bit(buffers, dim, config, monkeypatch,
                                                          exact_totals):
    calls = _counted(monkeypatch)
    got = _run(monkeypatch, 0, config, dim, buffers=buffers)
    assert len(calls) == 12 + 6  # every step of the stream and of its checkpoint
    want = _run(monkeypatch, None, config, dim, buffers=buffers)
    assert got[0] == want[0]
    assert got[1] == want[1] == got[0][6:]  # the checkpoint continues as the stream did


@pytest.mark.parametrize("config", ["grid", "float"])
def test_one_buffer_summed_is_compiled_bit_for_bit(config, monkeypatch):
    # one buffer's sum taken by add.reduce (_ONE_BUFFER_PRODUCT off: from
    # +0.0, a -0.0 product turns +0.0) through the summing kernel
    monkeypatch.setattr(_blt, "_ONE_BUFFER_PRODUCT", False)
    got = _run(monkeypatch, 0, config, 300)
    want = _run(monkeypatch, None, config, 300)
    assert got == want


def test_sums_over_buffers_of_negative_zeros_start_from_positive_zero(monkeypatch):
    # add.reduce over the buffers starts from +0.0: buffers of -0.0 (with
    # positive omega and lambda) sum to +0.0 and y, and so the decoder's
    # buffers, are +0.0; summed from the first product they would be -0.0
    for width in (0, None):
        monkeypatch.setattr(_blt, "_KERNEL_WIDTH", width)
        blt = BLTPrefixSum(dim=3, sensitivity=2.0, noise_multiplier=0.0, horizon=30,
                           rng=np.random.default_rng(5))
        assert (blt._omega > 0).all() and (blt._lam > 0).all()
        blt._enc, blt._dec = np.full((4, 3), -0.0), np.full((4, 3), -0.0)
        blt.add(np.full(3, -0.0), 1)
        assert np.signbit(blt._enc).all() and not np.signbit(blt._dec).any()


def test_a_grid_blt_mixing_one_buffer_and_several_keeps_numpy(monkeypatch):
    # the product on one side and sums on the other (no BLT has it): numpy
    monkeypatch.setattr(_blt, "_KERNEL_WIDTH", 0)
    blt = BLTPrefixSum(dim=5, sensitivity=2.0, noise_multiplier=0.8, horizon=10,
                       rng=np.random.default_rng(4))
    blt._dec, blt._nu, blt._lam = blt._dec[:1], blt._nu[:1], blt._lam[:1]
    ref = copy.deepcopy(blt)
    monkeypatch.setattr(_blt, "_KERNEL_WIDTH", None)
    ref.add(np.ones(5), 1)
    monkeypatch.setattr(_blt, "_KERNEL_WIDTH", 0)
    monkeypatch.setattr(_blt_kernel, "grid_sum_step", None)  # would fail if called
    monkeypatch.setattr(_blt_kernel, "grid_step", None)
    blt.add(np.ones(5), 1)
    assert _state(blt) == _state(ref)


@pytest.mark.parametrize("sampler", ["discrete", "float"])
def test_an_open_stream_across_epochs_and_a_checkpoint_is_bit_for_bit(sampler, monkeypatch,
                                                                      keep_exact_totals):
    # horizon=None: BLT epochs of four buffers (8 then 16 leaves here), a
    # checkpoint in the second epoch continuing as the stream did
    from skdpol.mechanisms import OpenBLTPrefixSum

    monkeypatch.setattr(_blt, "FIRST_EPOCH", 8)

    def run(width):
        monkeypatch.setattr(_blt, "_KERNEL_WIDTH", width)
        blt = OpenBLTPrefixSum(dim=300, sensitivity=2.0, noise_multiplier=0.8, leaf_bound=3.0,
                               rng=np.random.default_rng(5), sampler=sampler)
        leaves = _leaves(300, 20, blt._epoch._step_size or 1.0)
        out, clone = [], None
        with np.errstate(invalid="ignore"):
            for t, x in enumerate(leaves):
                if t == 11:
                    clone = copy.copy(blt)
                blt.add(x.copy(), 1)
                out.append(blt.release().tobytes() + blt.exact_total.tobytes())
            for x in leaves[11:]:
                clone.add(x.copy(), 1)
                out.append(clone.release().tobytes() + clone.exact_total.tobytes())
        assert len(blt._starts) == 2 and blt._epoch._enc.shape[0] == 4
        return out

    got = run(0)
    assert got == run(None)
    assert got[11:20] == got[20:]

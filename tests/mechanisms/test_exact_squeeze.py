"""The squeeze of the exact sampler's numpy pass (mechanisms/_exact_squeeze.py).

It must change no decision: every lane's (box, z, u63, accept, flagged) is
``_exact.decide``'s, on random words and on words crafted next to every
threshold (the lane's own bound and the squeeze's), for every plan kind the
sampler has (small and large scales, Laplace, wide boxes on one and on two
words, the tail); the squeeze bound is re-derived lane by lane; and the
sampler's draws are pinned to those of ``decide`` (the same words, the same
outputs, bit for bit), so every test of the law (test_exact_sampler*.py) and
every audit of the mechanisms holds for the squeezed sampler unchanged.
"""

import numpy as np
import pytest

from skdpol.mechanisms import _exact
from skdpol.mechanisms._discrete import _gaussian_parameters, discrete_noise
from skdpol.mechanisms._exact_squeeze import decide_squeezed, squeeze_table

from test_exact_sampler import PLANS, _crafted_words, _law  # tests/mechanisms/

WIDE_STREAM_SCALE = 12981266.978454564  # the 2^17 classifier's BLT step at epsilon 1


def _same(a, b):
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        else:
            assert x.dtype == y.dtype and np.array_equal(x, y)


@pytest.mark.parametrize("noise, scale", PLANS + [("gaussian", WIDE_STREAM_SCALE)])
def test_the_squeeze_bound_is_below_every_lanes_own(noise, scale):
    # sq_j <= (A_i R_j) & high for every offset of box j (e = 0, 1, w - 1, w and
    # random ones), the tail and reject boxes included (R = 0: sq = 0)
    plan = _exact.make_plan(*_law(noise, scale))
    sq = squeeze_table(plan)
    w = 1 << plan.lw
    rng = np.random.default_rng(5)
    j = np.r_[np.repeat(np.arange(plan.B + 2), 4), rng.integers(0, plan.B + 2, 5000)]
    e = np.r_[np.tile([0, 1, w - 1, w], plan.B + 2), rng.integers(0, w + 1, 5000)]
    idx = _exact.table_index(plan, (j << plan.lw).astype(np.int64), e.astype(np.int64))
    own = (plan.R[j] * plan.table[idx].astype(np.int64)) & plan.high
    assert np.all(sq[j] <= own)
    assert np.all(sq[plan.B:] == 0)
    # and it is the bound of the box's last offset: as tight as a per-box bound can be
    at_w = e == w
    assert np.array_equal(sq[j[at_w]], own[at_w])


def near_thresholds(plan, rng, n_boxes):
    """(box, offset, sign, U) lanes next to the squeeze's threshold and to
    each lane's own one, in ``n_boxes`` random boxes (the tail and reject
    boxes included), e = w among them: every outcome of a pass."""
    w, Q, W = 1 << plan.lw, plan.Q, plan.window
    sq = squeeze_table(plan)
    lanes = []
    for _ in range(n_boxes):
        j = int(rng.integers(0, plan.B + 2))
        off, sign = int(rng.integers(0, w)), int(rng.integers(0, 2))
        if rng.random() < 0.3:
            off, sign = w - 1, 1  # e = w: the squeeze's own lane
        t_sq = int(sq[j]) >> (63 - Q)
        e = np.array([off + sign], dtype=np.int64)
        i = int(_exact.table_index(plan, np.array([j << plan.lw], dtype=np.int64), e)[0])
        t_own = (int(plan.R[j]) * int(plan.table[i])) >> (63 - Q)
        for base in (t_sq, t_own):
            for d in (-W - 1, -2, -1, 0, 1, 2, W - 1, W, W + 1):
                if 0 <= base + d < 2**Q:
                    lanes.append((j, off, sign, base + d))
    return lanes


@pytest.mark.parametrize("noise, scale", PLANS + [("gaussian", WIDE_STREAM_SCALE)])
def test_decisions_equal_decides_on_random_and_crafted_words(noise, scale):
    plan = _exact.make_plan(*_law(noise, scale))
    rng = np.random.default_rng(11)
    words = rng.integers(0, 2**64, 20000, dtype=np.uint64)
    extra = rng.integers(0, 2**64, 10000, dtype=np.uint64) if plan.two_words else None
    _same(decide_squeezed(plan, words, extra), _exact.decide(plan, words, extra))
    words, extra = _crafted_words(plan, near_thresholds(plan, rng, 300), rng)
    got = decide_squeezed(plan, words, extra)
    _same(got, _exact.decide(plan, words, extra))
    assert got[3].any() and not got[3].all()  # both outcomes were exercised


@pytest.mark.parametrize("scale", [40.0, 1e4, WIDE_STREAM_SCALE, 2.0**27 * 1.1])
def test_draws_are_decides_bit_for_bit(scale, monkeypatch):
    # a BLT step's worth of draws (several passes, flagged lanes settled in
    # Python between them): the same values and the same generator state after
    n = 131_073 if scale == WIDE_STREAM_SCALE else 40_000
    rng = np.random.Generator(np.random.Philox(key=[7, 9]))
    got = discrete_noise(rng, n, scale)
    after = rng.bit_generator.random_raw(4)  # the generator's next words
    monkeypatch.setattr(_exact, "decide_squeezed", _exact.decide)
    monkeypatch.setattr(_exact, "_KERNEL", False)  # numpy's pass (got: the compiled one)
    ref_rng = np.random.Generator(np.random.Philox(key=[7, 9]))
    ref = discrete_noise(ref_rng, n, scale)
    assert got.tobytes() == ref.tobytes()
    assert np.array_equal(ref_rng.bit_generator.random_raw(4), after)


def test_tails_and_flags_take_decides_path(monkeypatch):
    # tails and flags made common (test_exact_sampler's hooks: 2 bits of u in
    # numpy, a quarter of the slots tail slots): every flagged lane and tail
    # start must reach Python exactly as decide hands it over
    L, s, K = _gaussian_parameters(300.0)
    monkeypatch.setattr(_exact, "_LANE_BITS", 2)
    monkeypatch.setattr(_exact, "_TAIL_SLOTS", 2**14)
    _exact.clear_plans()
    try:
        plan = _exact.make_plan(s, 0, L + K + 1)
        rng = np.random.default_rng(3)
        words = rng.integers(0, 2**64, 50000, dtype=np.uint64)
        got, ref = decide_squeezed(plan, words), _exact.decide(plan, words)
        _same(got, ref)
        assert got[4] is not None and got[4].sum() > 100
        draws = _exact.sample(np.random.default_rng(4), plan, 20000)
        monkeypatch.setattr(_exact, "decide_squeezed", _exact.decide)
        monkeypatch.setattr(_exact, "_KERNEL", False)
        assert draws.tobytes() == _exact.sample(np.random.default_rng(4), plan, 20000).tobytes()
    finally:
        monkeypatch.undo()
        _exact.clear_plans()

"""The exact sampler's compiled pass (mechanisms/_exact_kernel.py).

It must change no draw: the kernel's entries (the accepted z's and the
flagged lanes' placeholders, in lane order) and its flagged lanes (entry,
box, U) are ``decide_squeezed``'s and ``decide``'s, lane for lane, on random
words and on words crafted next to every threshold, for every plan kind
(small and large scales, Laplace, the wide stream's sigma ~ 2^23.6, split
indices on one and two words, tails and flags made common); ``propose`` and
``sample`` give numpy's draws and leave the generator where numpy leaves it
(flagged lanes settled in the same order, with the same words); and the
draws are pinned to a hash computed on main before the kernel existed.
"""

import hashlib

import numpy as np
import pytest

from skdpol.mechanisms import _exact, _exact_kernel
from skdpol.mechanisms._discrete import _gaussian_parameters, discrete_noise
from skdpol.mechanisms._exact_squeeze import decide_squeezed, plan_squeeze

from test_exact_sampler import PLANS, _crafted_words, _law  # tests/mechanisms/
from test_exact_squeeze import WIDE_STREAM_SCALE, near_thresholds

ALL_PLANS = PLANS + [("gaussian", WIDE_STREAM_SCALE)]


def _run(plan, words, extra, room=None, compiled=True):
    """The kernel's (entries, flags) on one pass, with ``room`` entries of dest."""
    m = words.size
    room = m if room is None else room
    dest, spill = np.empty(room, dtype=np.int64), np.empty(m, dtype=np.int64)
    flags = np.empty((m, 4), dtype=np.int64)
    halves = extra.view(np.uint32) if plan.two_words else _exact_kernel._NO_HALVES
    kernel = _exact_kernel._pass if compiled else _exact_kernel._pass.py_func
    _, n, nf = kernel(words.view(np.int64), _exact_kernel._NO_STATE, 1.0, 0, halves,
                      _exact_kernel._consts(plan), plan.slot_table, plan.R, plan.table,
                      plan_squeeze(plan), dest, 0, spill, flags)
    entries = np.concatenate([dest[:min(n, room)], spill[:max(n - room, 0)]])
    return entries, flags[:nf]


def _expected(plan, words, extra, decide):
    """What the kernel must give, from numpy's (box, z, u63, accept, flagged)."""
    box, z, u63, accept, flagged = decide(plan, words, extra)
    flagged = np.zeros_like(accept) if flagged is None else flagged
    kept = accept | flagged
    assert not (accept & flagged).any()
    entry = np.cumsum(kept) - 1  # each kept lane's place among the entries
    lanes = np.flatnonzero(flagged)
    flags = np.stack([entry[lanes], box[lanes], u63[lanes] >> (63 - plan.Q), z[lanes]], axis=1)
    return z[kept], flags.reshape(-1, 4)


def _assert_same(plan, words, extra):
    got = _run(plan, words, extra)
    for decide in (decide_squeezed, _exact.decide):
        want = _expected(plan, words, extra, decide)
        assert got[0].dtype == want[0].dtype and np.array_equal(got[0], want[0])
        assert np.array_equal(got[1], want[1])
    return got


@pytest.mark.parametrize("noise, scale", ALL_PLANS)
def test_entries_and_flags_equal_numpys_on_random_and_crafted_words(noise, scale):
    plan = _exact.make_plan(*_law(noise, scale))
    rng = np.random.default_rng(23)
    words = rng.integers(0, 2**64, 30001, dtype=np.uint64)
    extra = rng.integers(0, 2**64, 15001, dtype=np.uint64) if plan.two_words else None
    _assert_same(plan, words, extra)
    # lanes next to the squeeze's bound and to each lane's own threshold
    words, extra = _crafted_words(plan, near_thresholds(plan, rng, 400), rng)
    entries, flags = _assert_same(plan, words, extra)
    assert 0 < entries.size < words.size and flags.shape[0] > 0  # every outcome exercised


@pytest.mark.parametrize("noise, scale", [("gaussian", 300.0), ("laplace", 9.0)])
def test_common_flags_and_tails_reach_python_as_numpys(noise, scale, hooks):
    # 2 bits of u compared in the kernel and a quarter of the slots tail slots:
    # thousands of flagged lanes and tail starts in one pass
    hooks(_LANE_BITS=2, _TAIL_SLOTS=2**14)
    plan = _exact.make_plan(*_law(noise, scale))
    words = np.random.default_rng(3).integers(0, 2**64, 50000, dtype=np.uint64)
    entries, flags = _assert_same(plan, words, None)
    assert flags.shape[0] > 1000 and (flags[:, 1] == plan.B).sum() > 100  # tails among them


@pytest.mark.parametrize("noise, scale", [("gaussian", 6.0), ("gaussian", 2.0**33 * 1.7)])
def test_the_python_function_is_the_kernel(noise, scale):
    # the kernel's source, run by Python on numpy scalars, gives the compiled
    # entries: the loop says what the compiled code does
    plan = _exact.make_plan(*_law(noise, scale))
    rng = np.random.default_rng(8)
    words = rng.integers(0, 2**64, 3001, dtype=np.uint64)
    extra = rng.integers(0, 2**64, 1501, dtype=np.uint64) if plan.two_words else None
    got, want = _run(plan, words, extra, compiled=False), _run(plan, words, extra)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("lane_bits", [32, 2])
def test_a_pass_with_less_room_writes_a_prefix_of_the_same_draws(lane_bits, hooks):
    # fill() into a short dest: the first `room` draws, after the flagged lanes
    # (some rejected: entries move up from the spill) are settled with the same
    # words; the generator ends where a pass with room for all of them leaves it
    hooks(_LANE_BITS=lane_bits, _TAIL_SLOTS=2**14 if lane_bits == 2 else 1)
    L, s, K = _gaussian_parameters(300.0)
    plan = _exact.make_plan(s, 0, L + K + 1)
    m = 20000
    full_rng = np.random.default_rng(12)
    full = _exact_kernel.propose_compiled(full_rng, plan, m)
    after = full_rng.bit_generator.random_raw(3)
    for room, dtype in [(full.size // 2, np.int64), (full.size - 1, np.float64), (5, np.int64)]:
        rng = np.random.default_rng(12)
        dest = np.full(room + 7, -1, dtype=dtype)
        spill, flags = np.empty(m, dtype=np.int64), np.empty((m, 4), dtype=np.int64)
        got = _exact_kernel.fill(rng, plan, m, dest, 7, spill, flags)
        assert got == room and np.array_equal(dest[7:], full[:room]) and np.all(dest[:7] == -1)
        assert np.array_equal(rng.bit_generator.random_raw(3), after)


@pytest.mark.parametrize("noise, scale", ALL_PLANS + [("gaussian", 0.05), ("laplace", 0.05)])
def test_propose_and_sample_give_numpys_draws(noise, scale, hooks):
    plan = _exact.make_plan(*_law(noise, scale))
    n = 131_073 if scale == WIDE_STREAM_SCALE else 40_000

    def draws(kernel, dtype=np.int64):
        hooks(_KERNEL=kernel)
        rng = np.random.Generator(np.random.Philox(key=[5, 1]))
        out = _exact.propose(rng, plan, 5000), _exact.sample(rng, plan, n, dtype)
        return out, rng.bit_generator.random_raw(4)

    (p, s), after = draws(True)
    (p_ref, s_ref), after_ref = draws(False)
    assert p.tobytes() == p_ref.tobytes() and s.tobytes() == s_ref.tobytes()
    assert np.array_equal(after, after_ref)
    for dtype in (np.float64, np.int32):  # written by the kernel; converted by numpy
        (_, s), _ = draws(True, dtype)
        assert s.dtype == dtype and np.array_equal(s, s_ref.astype(dtype))


def test_flag_all_plans_keep_the_numpy_path(hooks, monkeypatch):
    hooks(_FLAG_ALL=True)
    plan = _exact.make_plan(*_law("gaussian", 40.0))
    monkeypatch.setattr(_exact_kernel, "_pass", None)  # would raise if called
    assert _exact.sample(np.random.default_rng(1), plan, 500).size == 500


def test_draws_are_mains_bit_for_bit(hooks):
    # sha256 of the draws (and the generator's next words) computed at main
    # f8e8970, before the kernel: discrete_noise at small, wide-stream, split
    # one- and two-word and Laplace scales, then a sample with flags and tails
    # common (two bits of u, a quarter of the slots tail slots)
    cases = [("gaussian", 40.0, 40_000), ("gaussian", 1e4, 40_000),
             ("gaussian", WIDE_STREAM_SCALE, 131_073), ("gaussian", 2.0**27 * 1.1, 40_000),
             ("gaussian", 2.0**33 * 1.7, 40_000), ("laplace", 6.0, 40_000),
             ("laplace", 1e9, 40_000), ("gaussian", 0.7, 5_000)]
    h = hashlib.sha256()
    for noise, scale, n in cases:
        rng = np.random.Generator(np.random.Philox(key=[7, 9]))
        h.update(discrete_noise(rng, n, scale, noise).tobytes())
        h.update(rng.bit_generator.random_raw(4).tobytes())
    assert h.hexdigest() == "ae9131868fd73b49da86bebbacd551dd19abbceb6e65114e7032c32bf5e2c3f3"
    hooks(_LANE_BITS=2, _TAIL_SLOTS=2**14)
    L, s, K = _gaussian_parameters(300.0)
    rng = np.random.default_rng(4)
    d = _exact.sample(rng, _exact.make_plan(s, 0, L + K + 1), 20000)
    h = hashlib.sha256(d.tobytes() + rng.bit_generator.random_raw(4).tobytes())
    assert h.hexdigest() == "e273d6a1cde910f4a1b4472b12163f0ebd60db62653c8cbbb50097279745c41a"


def test_discrete_noise_runs_the_kernel(monkeypatch):
    # the compiled pass is the one the estimators' noise goes through
    calls = []
    real = _exact_kernel._pass
    monkeypatch.setattr(_exact_kernel, "_pass", lambda *args: calls.append(1) or real(*args))
    discrete_noise(np.random.default_rng(0), 40_000, WIDE_STREAM_SCALE)
    assert len(calls) == 3  # passes of at most 16,384 proposals


def test_threads_draw_what_they_draw_alone():
    # the kernel releases the GIL (nogil) and every call has its own scratch:
    # generators drawn from in parallel give their sequential draws
    from concurrent.futures import ThreadPoolExecutor

    def draw(key):
        rng = np.random.Generator(np.random.Philox(key=[key, 3]))
        return discrete_noise(rng, 50_000, WIDE_STREAM_SCALE if key % 2 else 2.0**33 * 1.7)

    alone = [draw(key) for key in range(6)]
    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(draw, range(6)))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(alone, together))

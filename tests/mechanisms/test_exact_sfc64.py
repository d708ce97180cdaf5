"""SFC64's words generated inside the exact sampler's compiled pass.

The BLT draws its noise from an SFC64 generator (``_blt._keyed_generator``);
``_exact_kernel`` then generates the words in the pass itself instead of
reading them from ``random_raw``. It must change no draw and no later word:
the pass's generator gives numpy's SFC64 words from any state (the counter
and the sums wrapping included), continuing across calls and into numpy's own
calls, so ``sample`` gives the draws of the ``random_raw`` path (``_OWN_WORDS =
False``, the reference) for every plan kind, size and output type, flagged
lanes and tails settled in between (with the same words), and leaves the
generator in the same state (the 32-bit buffer included); the draws are
pinned to a hash computed on main before the change; other generators and
two-word plans keep ``random_raw``.
"""

import hashlib

import numpy as np
import pytest

from skdpol.mechanisms import _exact, _exact_kernel
from skdpol.mechanisms._discrete import _gaussian_parameters, discrete_noise

from test_exact_kernel import ALL_PLANS  # tests/mechanisms/
from test_exact_sampler import _law
from test_exact_squeeze import WIDE_STREAM_SCALE

TOP = 2**64 - 1


def _draws(monkeypatch, own, noise, scale, sizes, dtype, seed, state=None):
    """sample's draws of several sizes from one SFC64 generator (from
    ``state``, if given; a 32-bit value buffered first), its state after
    them and its next 32- and 64-bit words."""
    monkeypatch.setattr(_exact_kernel, "_OWN_WORDS", own)
    rng = np.random.Generator(np.random.SFC64(seed if np.isscalar(seed) else list(seed)))
    if state is not None:
        rng.bit_generator.state = {"bit_generator": "SFC64", "state": {"state": np.array(
            state, dtype=np.uint64)}, "has_uint32": 0, "uinteger": 0}
    rng.integers(0, 2**32, dtype=np.uint32)  # leaves half a word in SFC64's buffer
    plan = _exact.make_plan(*_law(noise, scale))
    draws = [_exact.sample(rng, plan, n, dtype) for n in sizes]
    state = rng.bit_generator.state
    after = rng.integers(0, 2**32, 3, dtype=np.uint32), rng.bit_generator.random_raw(3)
    return draws, state, after


def _assert_same(monkeypatch, noise, scale, sizes, dtype=np.int64, seed=(7, 9), start=None):
    """The in-kernel words' draws and state are the random_raw path's."""
    (got, state, after), (want, state_ref, after_ref) = (
        _draws(monkeypatch, own, noise, scale, sizes, dtype, seed, start)
        for own in (True, False))
    assert all(g.dtype == w.dtype and g.tobytes() == w.tobytes() for g, w in zip(got, want))
    assert state["state"]["state"].tolist() == state_ref["state"]["state"].tolist()
    assert state["has_uint32"] == state_ref["has_uint32"] == 1  # the buffer kept, untouched
    assert state["uinteger"] == state_ref["uinteger"]
    assert all(np.array_equal(a, b) for a, b in zip(after, after_ref))
    return got


@pytest.mark.parametrize("seed", [0, 1, 12345, (7, 9), 2**128 - 1])
def test_the_passes_words_are_numpys_sfc64_and_continue_its_stream(seed, monkeypatch):
    # the pass's own SFC64 words against random_raw's, over sizes of one pass
    # and several, numpy's words read in between and after (_assert_same)
    _assert_same(monkeypatch, "gaussian", WIDE_STREAM_SCALE, [0, 1, 7, 1000, 3, 100_003, 64],
                 seed=seed)


def test_the_passes_words_wrap_as_numpys(monkeypatch):
    # every state word at 2^64 - 1 or near it: the sums, the shifted terms and
    # the counter wrap modulo 2^64 in both
    for start in ([TOP, TOP, TOP, TOP], [TOP, 1, TOP - 5, TOP - 2], [2**63, 2**63, 2**63, 0]):
        _assert_same(monkeypatch, "gaussian", WIDE_STREAM_SCALE, [50, 3], start=start)


@pytest.mark.parametrize("noise, scale", ALL_PLANS + [("gaussian", 0.05), ("laplace", 0.05)])
def test_sample_gives_the_random_raw_paths_draws_and_state(noise, scale, monkeypatch):
    # sizes of one pass, several, an exact multiple of the pass: the in-kernel
    # pass sizes are _exact.pass_size's (the same words read, the same state)
    n = 131_073 if scale == WIDE_STREAM_SCALE else 40_000
    for dtype in (np.int64, np.float64):
        _assert_same(monkeypatch, noise, scale, [1, 2, 100, n, 16_384, 16_385], dtype)


@pytest.mark.parametrize("noise, scale", [("gaussian", 300.0), ("laplace", 9.0)])
def test_flags_and_tails_settled_between_passes_read_the_same_words(noise, scale, hooks,
                                                                     monkeypatch):
    # 2 bits of u compared in the kernel and a quarter of the slots tail slots:
    # thousands of flagged lanes and tail starts a pass, settled in Python with
    # numpy's words between the kernel's
    hooks(_LANE_BITS=2, _TAIL_SLOTS=2**14)
    for seed in [(1, 2), (3, 4)]:
        got = _assert_same(monkeypatch, noise, scale, [5, 20_000, 50_000], np.float64, seed)
        assert all(g.size for g in got)


def test_draws_are_mains_bit_for_bit(hooks):
    # sha256 of SFC64 draws (and the generator's next words) computed at main
    # f80f380, before the kernel generated its words: discrete_noise at
    # small, wide-stream, split one- and two-word and Laplace scales, then a
    # sample with flags and tails common (two bits of u, a quarter of the
    # slots tail slots)
    cases = [("gaussian", 40.0, 40_000), ("gaussian", 1e4, 40_000),
             ("gaussian", WIDE_STREAM_SCALE, 131_073), ("gaussian", 2.0**27 * 1.1, 40_000),
             ("gaussian", 2.0**33 * 1.7, 40_000), ("laplace", 6.0, 40_000),
             ("laplace", 1e9, 40_000), ("gaussian", 0.7, 5_000),
             ("gaussian", WIDE_STREAM_SCALE, 1), ("gaussian", WIDE_STREAM_SCALE, 16_400)]
    h = hashlib.sha256()
    for noise, scale, n in cases:
        rng = np.random.Generator(np.random.SFC64([7, 9]))
        h.update(discrete_noise(rng, n, scale, noise).tobytes())
        h.update(rng.bit_generator.random_raw(4).tobytes())
    assert h.hexdigest() == "2bab176d57ece270f3a0b6f546350818122ba710776e05c0a8e2a51664f67114"
    hooks(_LANE_BITS=2, _TAIL_SLOTS=2**14)
    L, s, K = _gaussian_parameters(300.0)
    rng = np.random.Generator(np.random.SFC64(4))
    d = _exact.sample(rng, _exact.make_plan(s, 0, L + K + 1), 20000)
    h = hashlib.sha256(d.tobytes() + rng.bit_generator.random_raw(4).tobytes())
    assert h.hexdigest() == "172e87dea79c74316b5a66ab6ab9af80735f8b4756a9ecb056efbbeb337a0c7e"


def test_only_sfc64_on_one_word_plans_generates_its_words(monkeypatch):
    one = _exact.make_plan(*_law("gaussian", WIDE_STREAM_SCALE))
    two = _exact.make_plan(*_law("gaussian", 2.0**33 * 1.7))
    assert not one.two_words and two.two_words
    sfc = np.random.Generator(np.random.SFC64(0))
    assert _exact_kernel.own_words(sfc, one) and not _exact_kernel.own_words(sfc, two)
    for bits in (np.random.Philox(0), np.random.PCG64(0), np.random.MT19937(0)):
        assert not _exact_kernel.own_words(np.random.Generator(bits), one)
    monkeypatch.setattr(_exact_kernel, "_OWN_WORDS", False)
    assert not _exact_kernel.own_words(sfc, one)
    # and the other generators never enter the kernel with a state
    calls = []
    real = _exact_kernel._pass
    monkeypatch.setattr(_exact_kernel, "_pass",
                        lambda *args: calls.append(args[1].size) or real(*args))
    monkeypatch.setattr(_exact_kernel, "_OWN_WORDS", True)
    discrete_noise(np.random.Generator(np.random.Philox(0)), 40_000, WIDE_STREAM_SCALE)
    assert calls == [0, 0, 0]
    calls.clear()
    discrete_noise(sfc, 40_000, WIDE_STREAM_SCALE)
    assert calls and set(calls) == {4}


def test_the_python_function_is_the_kernel():
    # the kernel's source, run by Python on numpy scalars (uint64 wrapping, as
    # compiled), generates the same words and entries
    plan = _exact.make_plan(*_law("gaussian", 6.0))
    consts = (_exact_kernel._consts(plan), plan.slot_table, plan.R, plan.table,
              _exact_kernel.plan_squeeze(plan))
    got = []
    for kernel in (_exact_kernel._pass, _exact_kernel._pass.py_func):
        state = np.random.SFC64(5).state["state"]["state"]
        dest, spill = np.empty(700, dtype=np.int64), np.empty(2000, dtype=np.int64)
        flags = np.empty((2000, 4), dtype=np.int64)
        with np.errstate(over="ignore"):
            out = kernel(_exact_kernel._NO_WORDS, state, plan.rate, 300, _exact_kernel._NO_HALVES,
                         *consts, dest, 0, spill, flags)
        got.append((out, dest.tolist(), state.tolist()))
    assert got[0] == got[1]


def test_threads_draw_what_they_draw_alone():
    # the kernel releases the GIL (nogil) and holds its own generator's lock:
    # SFC64 generators drawn from in parallel give their sequential draws
    from concurrent.futures import ThreadPoolExecutor

    def draw(key):
        rng = np.random.Generator(np.random.SFC64([key, 3]))
        return discrete_noise(rng, 50_000, WIDE_STREAM_SCALE if key % 2 else 1e4)

    alone = [draw(key) for key in range(6)]
    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(draw, range(6)))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(alone, together))


def test_the_generators_state_is_read_and_written_without_its_lock():
    # sample_compiled reads and writes bit_generator.state while holding
    # bit_generator.lock (as random_raw holds it while drawing). numpy's
    # ``state`` property does not take that lock (a plain threading.Lock); if
    # a numpy version ever did, every noisy release would deadlock: this test
    # fails instead (the probe runs in a daemon thread, given 10 seconds)
    import threading

    bits = np.random.SFC64(0)
    done = threading.Event()

    def probe():
        with bits.lock:
            bits.state = bits.state
        done.set()

    threading.Thread(target=probe, daemon=True).start()
    assert done.wait(10), "numpy's SFC64.state now takes the generator's lock"

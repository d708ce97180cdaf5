"""The exact sampler's pass, compiled: ``decide_squeezed``'s decisions in one loop.

Why. After the generator's words (~3.6 ns each, Philox), the numpy pass
(``_exact_squeeze.decide_squeezed``, then ``z[accept]``) costs ~8-10 ns a
lane: a dozen operations over memory, gathers and boolean compactions. At
the widest noise the estimators draw (2^17 + 1 discrete Gaussians per BLT
step of the 2^17-column classifier) that is over a third of a stream's time.
One compiled loop (``skdpol.utils.kernel``, numba) reads each word once and
spends ~1-2 ns on it.

The same decisions. The loop performs, lane by lane, exactly the integer
operations of ``decide_squeezed`` (int64 throughout, the same operands, the
same order; no floating point anywhere): the slot is the word's low 16 bits
(``decide``'s uint16 view), u63 the word with its sign bit cleared (or,
with ``two_words``, the lane's 32-bit half of ``extra`` shifted as numpy
shifts it), the squeeze test u63 < sq_j first, and for the other lanes
``_exact.table_index``'s product (its direct form, whose Laplace case e b
is the general e ((2 y + e) a + b) at a = 0, the same integer; or its two
halves when ``plan.split``), thr = (A_i R_j) & high, d = u63 - thr, accept
iff d < 0, flagged iff 0 <= d < limit (d read as unsigned below limit <=
2^63, as numpy compares it). Every bound of ``_exact``'s notes on those
intermediates holds unchanged, so none overflows; numba's int64 shifts and
products are numpy's. The tests compare every output, lane for lane, with
``decide_squeezed`` and ``decide``.

The same draws. ``propose`` and ``sample`` draw the same words (the pass
sizes, ``_exact.pass_size``, are untouched) and the kernel writes the
accepted z's in lane order, with a placeholder entry for each flagged lane
(its proposal z; its entry, box, U and z go to ``flags``); the flagged lanes are
then settled in Python in increasing lane order, reading further words from
the generator exactly as before (``_exact._settle``), and the entries of
those rejected are removed: the entries are ``z[accept]`` after settlement,
element for element. ``sample`` has them written straight into its output
(int64, or float64 by the int64-to-float64 conversion numpy's assignment makes),
those past its end into scratch, from which a removal moves them up.
``_FLAG_ALL`` test plans (every lane flagged) keep the numpy path.

SFC64's words, generated in the pass. The BLT's noise comes from an SFC64
generator (``_blt._keyed_generator``). numpy's ``random_raw`` writes its
words to an array that the pass then reads back (~1.7 ns a word, 16 bytes
of memory traffic); SFC64 is four uint64 words of state and five integer
operations a word (numpy's ``sfc64_next``: tmp = a + b + counter++, a = b ^
(b >> 11), b = c + (c << 3), c = rotl(c, 24) + tmp, the word tmp; all
modulo 2^64, as numba's uint64 arithmetic), so for that generator the pass
generates them itself: it takes the state from the generator's ``state``
(under the generator's lock, as ``random_raw`` holds it), runs the same
lanes on the same words, and puts the advanced state back before anything
else draws. ``random_raw`` returns these same words, one per call of
``sfc64_next`` (its 32-bit buffer, ``has_uint32``/``uinteger``, is neither
read nor written by either): the same draws, and the generator left where
``random_raw`` leaves it, which the tests check against numpy's SFC64 and
against the ``random_raw`` path (``_OWN_WORDS = False``, kept as the
reference and for every other generator; two-word plans too). The passes
also follow each other inside one call (the same ``_exact.pass_size``
sizes, its float operations in the same order), returning to Python only
after a pass with flagged lanes, which are settled there, reading on from
the pass's last word, before the next pass draws. At the wide stream's
scale a 2^17 + 1 draw went from 4.6-4.8 to 3.15-3.2 ns a coordinate
(``benchmarks/bench_exact_sampler.py``, SFC64 columns), and the 2^17
stream's noise (20 such draws a pass) from 15.5-17.4 to 10.9-12.1 ms
(``benchmarks/profile_wide_stream.py``, main's tree run alternately).
"""

import math

import numpy as np

from ..utils import kernel
from . import _exact
from ._exact_squeeze import plan_squeeze

# SFC64 generators' words generated inside the compiled pass (module notes);
# False: read from numpy's ``random_raw`` as for every other generator (the
# reference: the same words, the same draws, the generator left in the same state)
_OWN_WORDS = True


@kernel
def _pass(words, state, rate, chunk, halves, consts, slot_table, R, table, squeeze, dest,
          start, spill, flags):
    """Passes over proposal words: the accepted z's in lane order, entry k
    into dest[start + k] while dest has room, else spill[k - room]; a flagged
    lane gets a placeholder entry (its z) and (entry, box, U, z) in ``flags``.

    The words are ``words`` (int64 view, one pass), or, with a 4-word
    ``state`` (SFC64's, as numpy's ``state`` holds it), SFC64's next words,
    generated here and ``state`` advanced past them: then passes of
    ``_exact.pass_size`` proposals (``rate``, at most ``chunk``) follow each
    other until dest is full or a pass has flagged lanes (they are settled in
    Python before any later word is read). Returns (start of the last pass,
    its entries, its flagged lanes)."""
    Q, lw, high, limit_m1, a, b, sh, c = (consts[0], consts[1], consts[2], consts[3],
                                         consts[4], consts[5], consts[6], consts[7])
    mask = (np.int64(1) << lw) - 1
    u_shift = 63 - Q  # U = u63 >> u_shift
    two_words = halves.size > 0
    own = state.size > 0
    s0, s1, s2, s3 = np.uint64(0), np.uint64(0), np.uint64(0), np.uint64(0)
    if own:
        s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    while True:
        room = dest.size - start
        m = words.size
        if own:  # _exact.pass_size(plan, room): the same float operations
            spread = 4.0 * math.sqrt(room * (1.0 - rate) / rate)
            m = min(int(room / rate + spread) + 16, chunk)
        n = 0
        nf = 0
        for i in range(m):
            if own:  # numpy's sfc64_next (uint64 throughout: wraps mod 2^64)
                x = s0 + s1 + s3
                s3 += np.uint64(1)
                s0 = s1 ^ (s1 >> np.uint64(11))
                s1 = s2 + (s2 << np.uint64(3))
                s2 = ((s2 << np.uint64(24)) | (s2 >> np.uint64(40))) + x
                w = np.int64(x)  # the same 64 bits, as random_raw's words viewed as int64
            else:
                w = words[i]
            box = np.int64(slot_table[w & 0xFFFF])
            if two_words:
                u63 = (np.int64(halves[i]) >> (32 - Q)) << u_shift
            else:
                u63 = w & 0x7FFFFFFFFFFFFFFF  # U 2^(63-Q) + bits below
            off = (w >> 16) & mask
            neg = w >> 63  # -sign: 0 or -1
            y = box << lw  # j w
            z = (y + off) ^ neg  # y (sign 0) or ~y = -(y + 1) (sign 1)
            if u63 >= squeeze[box]:  # not settled by the squeeze: decide's arithmetic
                e = off - neg  # |z| - j w
                t = ((y << 1) + e) * a + b  # a (2 j w + e) + b
                if c >= 0:  # table_index's two halves (_exact._split_bits)
                    low = ((t & ((np.int64(1) << c) - 1)) * e) >> c
                    idx = ((t >> c) * e + low) >> (sh - c)
                elif sh >= 0:
                    idx = (t * e) >> sh
                else:
                    idx = (t * e) << -sh
                d = u63 - ((R[box] * np.int64(table[idx])) & high)  # u63 - thr 2^(63-Q)
                if d > limit_m1:  # U >= thr + window: rejected
                    continue
                if d >= 0:  # thr <= U < thr + window: settled in Python
                    flags[nf, 0] = n
                    flags[nf, 1] = box
                    flags[nf, 2] = u63 >> u_shift
                    flags[nf, 3] = z
                    nf += 1
            # (unsigned indices, both >= 0: numba skips its negative-index
            # wraparound, ~15% of the loop)
            if n < room:
                dest[np.uint64(start + n)] = z
            else:
                spill[np.uint64(n - room)] = z
            n += 1
        if not own or nf > 0 or n >= room:
            break
        start += n
    if own:
        state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    return start, n, nf


def _slots(plan):
    """The plan's slot table as the kernel reads it: uint8 where every box
    index fits (B + 1 < 256: the Gaussian plans, B ~ 110), else the uint16
    table. The same entries; half the bytes keep the 2^16-entry table in the
    faster caches between a stream's steps (whose sparse products evict it):
    a 2^17 draw after a 32 MB pass took 0.71 ms against 1.07 ms."""
    slots = getattr(plan, "slots", None)
    if slots is None:
        table = plan.slot_table
        slots = plan.slots = table.astype(np.uint8) if plan.B + 1 < 256 else table
    return slots


def _consts(plan):
    """The plan's scalars as the kernel reads them (int64; built once a plan)."""
    consts = getattr(plan, "consts", None)
    if consts is None:
        consts = plan.consts = np.array(
            [plan.Q, plan.lw, plan.high, plan.limit - 1, plan.a, plan.b, plan.sh_index,
             -1 if plan.split is None else plan.split], dtype=np.int64)
    return consts


_NO_HALVES = np.empty(0, dtype=np.uint32)
_NO_WORDS = np.empty(0, dtype=np.int64)
_NO_STATE = np.empty(0, dtype=np.uint64)


def own_words(rng, plan):
    """Whether the pass generates ``rng``'s words itself: SFC64 (the BLT's
    generator, ``_blt._keyed_generator``), one word a lane (two-word plans and
    every other generator read ``random_raw``)."""
    return _OWN_WORDS and type(rng.bit_generator) is np.random.SFC64 and not plan.two_words


def fill(rng, plan, m, dest, start, spill, flags):
    """One pass of ``m`` proposals (``_exact.propose``'s words): its accepted
    draws, in lane order and flagged lanes settled, written from dest[start]
    on, as many as fit; returns how many were written. ``spill`` (int64) and
    ``flags`` ((m, 4) int64) are scratch of at least m rows."""
    words = rng.bit_generator.random_raw(m)
    halves = _NO_HALVES
    if plan.two_words:
        halves = rng.bit_generator.random_raw((m + 1) // 2).view(np.uint32)
    _, n, nf = _pass(words.view(np.int64), _NO_STATE, 1.0, 0, halves, _consts(plan),
                     _slots(plan), plan.R, plan.table, plan_squeeze(plan), dest, start, spill,
                     flags)
    return settle(rng, plan, n, nf, dest, start, spill, flags)


def settle(rng, plan, n, nf, dest, start, spill, flags):
    """A pass's ``n`` entries from dest[start] on (then spill) with its ``nf``
    flagged lanes settled, in lane order, the rejected ones removed: how many
    of them are in dest."""
    room = dest.size - start
    if nf:  # ~2^-16 per proposal: exact, with u's later bits, in lane order
        drop = []
        for k, box, U, z in flags[:nf].tolist():
            v = _exact._settle(rng, plan, box, z, U)
            if v is None:
                drop.append(k)
            elif k < room:
                dest[start + k] = np.int64(v)  # as numpy's path stores it: int64 first
            else:
                spill[k - room] = v
        if drop:  # remove the rejected lanes' entries: later ones move up
            # (only the entries after a rejected one are moved: the same
            # entries, a quarter of the time of rebuilding the pass's)
            first = drop[0]
            if n <= room:  # all in dest: moved up in place, the last rejection first
                for k in reversed(drop):
                    dest[start + k:start + n - 1] = dest[start + k + 1:start + n]
                    n -= 1
                return n
            kept = np.delete(np.concatenate([dest[start + first:start + min(n, room)],
                                             spill[max(first - room, 0):max(n - room, 0)]]),
                             [k - first for k in drop])
            n = first + kept.size
            dest[start + first:start + min(n, room)] = kept[:max(room - first, 0)]
    return min(n, room)


def propose_compiled(rng, plan, m):
    """``_exact.propose``, compiled: the same accepted z's, in the same order."""
    out = np.empty(m, dtype=np.int64)
    return out[:fill(rng, plan, m, out, 0, out[:0], np.empty((m, 4), dtype=np.int64))]


def sample_compiled(rng, plan, out):
    """``_exact.sample`` into ``out`` (int64 or float64), compiled: the same
    passes (``_exact.pass_size``), the same draws."""
    spill = np.empty(_exact._CHUNK, dtype=np.int64)
    flags = np.empty((_exact._CHUNK, 4), dtype=np.int64)
    filled, n = 0, out.size
    if own_words(rng, plan):
        bits = rng.bit_generator
        args = (_NO_HALVES, _consts(plan), _slots(plan), plan.R, plan.table, plan_squeeze(plan),
                out)
        while filled < n:
            # under the generator's lock, as random_raw: its state out, the
            # passes' words, the state advanced past them back in before any
            # other draw (the flagged lanes' settlement reads on from there)
            with bits.lock:
                held = bits.state
                start, entries, nf = _pass(_NO_WORDS, held["state"]["state"], plan.rate,
                                           _exact._CHUNK, *args, filled, spill, flags)
                bits.state = held
            filled = start + settle(rng, plan, entries, nf, out, start, spill, flags)
        return out
    while filled < n:
        filled += fill(rng, plan, _exact.pass_size(plan, n - filled), out, filled, spill, flags)
    return out

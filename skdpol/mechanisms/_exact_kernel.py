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
"""

import numpy as np

from ..utils import kernel
from . import _exact
from ._exact_squeeze import plan_squeeze


@kernel
def _pass(words, halves, consts, slot_table, R, table, squeeze, dest, start, spill, flags):
    """One pass over ``words`` (int64 view): the accepted z's in lane order,
    entry k into dest[start + k] while dest has room, else spill[k - room];
    a flagged lane gets a placeholder entry (its z) and (entry, box, U, z) in
    ``flags``. Returns (entries, flagged lanes)."""
    Q, lw, high, limit_m1, a, b, sh, c = (consts[0], consts[1], consts[2], consts[3],
                                         consts[4], consts[5], consts[6], consts[7])
    mask = (np.int64(1) << lw) - 1
    u_shift = 63 - Q  # U = u63 >> u_shift
    two_words = halves.size > 0
    room = dest.size - start
    n = 0
    nf = 0
    for i in range(words.size):
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
    return n, nf


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


def fill(rng, plan, m, dest, start, spill, flags):
    """One pass of ``m`` proposals (``_exact.propose``'s words): its accepted
    draws, in lane order and flagged lanes settled, written from dest[start]
    on, as many as fit; returns how many were written. ``spill`` (int64) and
    ``flags`` ((m, 4) int64) are scratch of at least m rows."""
    words = rng.bit_generator.random_raw(m)
    halves = _NO_HALVES
    if plan.two_words:
        halves = rng.bit_generator.random_raw((m + 1) // 2).view(np.uint32)
    n, nf = _pass(words.view(np.int64), halves, _consts(plan), _slots(plan), plan.R,
                  plan.table, plan_squeeze(plan), dest, start, spill, flags)
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
            kept = np.delete(np.concatenate([dest[start:start + min(n, room)],
                                             spill[:max(n - room, 0)]]), drop)
            n = kept.size
            dest[start:start + min(n, room)] = kept[:room]
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
    while filled < n:
        filled += fill(rng, plan, _exact.pass_size(plan, n - filled), out, filled, spill, flags)
    return out

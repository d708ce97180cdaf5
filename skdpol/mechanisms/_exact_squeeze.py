"""A squeeze for the exact sampler's numpy pass: the same decisions, fewer operations.

Why. ``_exact.decide`` settles a proposal lane by computing its own bound
thr = floor(A_i R_j / 2^(63-Q)), i the index of delta = (q(|z|) - q(j w)) / 2^P
in the exp table: about twenty numpy operations on every lane. At the
estimators' widest noise (2^17 + 1 coordinates a BLT step, sigma ~ 2^23.6)
that pass is ~7 ns a lane, more than the generator's words (~3.6 ns), and a
wide stream at epsilon = 1 spends a third of its time drawing noise.

The squeeze. Within box j the offset e = |z| - j w runs over [0, w], dn =
e (a (2 j w + e) + b) grows with e (a, b >= 0), so the index i = floor(dn /
2^sh) is at most i_j = its value at e = w, and A_i >= A_(i_j) since the
table is non-increasing in i (``_exact.exp_table``: floors of 2^31 exp(-i
2^-b), less a constant, clipped at 0). Hence, for every lane of box j,

    sq_j = (A_(i_j) R_j) & high  <=  (A_i R_j) & high = thr 2^(63-Q)

(``& high`` clears the low 63 - Q bits: a floor, monotone), and

    u63 < sq_j   =>   u63 < thr 2^(63-Q)   =>   ``decide`` accepts the lane

(and does not flag it: flagged lanes have u63 >= thr 2^(63-Q)). So a lane
with u63 < sq_j is accepted here without its index; every other lane (the
rejected ones, those in the gap between sq_j and their own bound, and the
tail and reject slots, whose R = 0 gives sq = 0) goes through exactly
``decide``'s arithmetic on the compressed subset (``_exact.table_index``, the
same products). Accept and flag are therefore the same booleans, lane for
lane, and z is computed from the same bits: the same draws from the same
words, bit for bit, and the same Python settlements in the same lane order
(``_exact.propose``). Only the cost changes: with boxes of w <= sigma / 16,
delta over a box spans at most (2 j + 1) / 512, so ~93-95% of the lanes are
settled by the squeeze (the rest: ~2% rejections, the gap, the tail).

The table is per plan (``plan.squeeze``, B + 2 int64 values, built once with
the plan: plans are cached); ``_FLAG_ALL`` test plans keep ``decide``.
``_exact_kernel`` runs these same decisions compiled, lane by lane (the
squeeze first, then ``decide``'s arithmetic), and is tested against this.
"""

import numpy as np

from . import _exact
from ._exact import _SLOT_BITS, _SLOT_VIEW, table_index


def squeeze_table(plan):
    """sq_j = (A_(i_j) R_j) & high for the boxes j = 0..B + 1 (module notes):
    i_j the exp table's index at the largest offset of box j, e = w."""
    boxes = np.arange(plan.B + 2, dtype=np.int64)
    y = np.left_shift(boxes, plan.lw)  # j w
    e = np.full(boxes.size, 1 << plan.lw, dtype=np.int64)  # e = w: the largest dn of the box
    idx = table_index(plan, y, e)
    sq = plan.R * plan.table.take(idx).astype(np.int64)  # < 2^63: R <= 2^32, A < 2^31
    sq &= plan.high
    return sq


def plan_squeeze(plan):
    """The plan's squeeze table, built on first use (cached on the plan)."""
    sq = getattr(plan, "squeeze", None)
    if sq is None:
        sq = plan.squeeze = squeeze_table(plan)
    return sq


def decide_squeezed(plan, words, extra=None):
    """``_exact.decide``'s (box, z, u63, accept, flagged), the same arrays
    lane for lane, with the squeeze (module notes) settling most lanes."""
    if plan.flag_all:
        return _exact.decide(plan, words, extra)
    S, lw, m = _SLOT_BITS, plan.lw, words.size
    w64 = words.view(np.int64)
    box = plan.slot_table.take(words.view(np.uint16)[_SLOT_VIEW::4])
    if plan.two_words:
        u63 = (extra.view(np.uint32)[:m] >> (32 - plan.Q)).astype(np.int64)
        u63 <<= 63 - plan.Q
    else:
        u63 = np.bitwise_and(w64, 2**63 - 1)  # U 2^(63-Q) + bits below
    accept = u63 < plan_squeeze(plan).take(box)
    off = np.right_shift(w64, S)
    off &= (1 << lw) - 1
    neg = np.right_shift(w64, 63)  # -sign: 0 or -1
    y = np.left_shift(box, lw, dtype=np.int64)  # j w
    flagged = None
    rest = np.flatnonzero(~accept)
    if rest.size:  # decide's arithmetic on the lanes the squeeze leaves
        e = np.subtract(off.take(rest), neg.take(rest))  # |z| - j w
        idx = table_index(plan, y.take(rest), e)
        d = plan.R.take(box.take(rest))
        d *= plan.table.take(idx)  # A_i R_j
        d &= plan.high  # thr 2^(63-Q)
        np.subtract(u63.take(rest), d, out=d)
        accept[rest] = d < 0  # U < thr
        near = d.view(np.uint64) < plan.limit  # thr <= U < thr + window
        if near.any():
            flagged = np.zeros(m, dtype=bool)
            flagged[rest[near]] = True
    y += off
    z = np.bitwise_xor(y, neg, out=y)  # y (sign 0) or ~y = -(y + 1) (sign 1)
    return box, z, u63, accept, flagged

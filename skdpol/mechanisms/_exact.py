"""Exact integer draws with P(k) proportional to exp(-q(|k|) / 2^P), vectorised.

Why. The discrete Gaussian and Laplace of ``_discrete`` are the laws

    P(k) proportional to f(|k|),  f(y) = exp(-q(y) / 2^P),  k in Z,

with q(y) = a y^2 + b y for integers a, b >= 0, not both 0 (Gaussian: b = 0;
Laplace: a = 0). Canonne et al.'s algorithms reach them through a discrete
Laplace proposal that is itself a rejection sampler (acceptance ~0.63, times
~0.7 for the Gaussian) and about six Bernoulli(exp(-x)) draws per proposal.
Here a proposal is accepted ~98% of the time (Gaussian; ~97% Laplace) and
costs one 64-bit random word, three table lookups and one integer
comparison, about twenty numpy operations per pass in all (``_exact_squeeze``
settles ~95% of the lanes with a per-box bound: the same decisions, cheaper);
no floating-point value enters any decision.

The envelope (rejection from a histogram). Split y >= 0 into boxes of
w = 2^lw integers, box j = [j w, (j + 1) w) for j < B (the core, up to
f(B w) <= tau, tau below). A proposal reads 64 random bits as

    sign (1 bit) | U (Q bits) | unused | offset o (lw bits) | slot (S = 16 bits)

(the sign in the top bit, U just below it, the slot at the bottom), the
slot through a table of 2^S entries in which box j holds n_j entries,
n_j = ceil(c f(j w)) for a rational c chosen so that the n_j fill the table,
a tail entry and "reject" entries fill the rest. With y = j w + o the
proposal is z = y (sign 0) or z = ~y = -(y + 1) (sign 1), so |z| = y + sign
and the two signs tile Z without overlap. It is accepted with probability

    p = c f(|z|) / n_j     (<= c f(j w) / n_j <= 1, as f decreases),

so P(output z) = (n_j / 2^S)(1 / w)(1 / 2) p = c f(|z|) / (2^(S+1) w):
proportional to f(|z|), exactly, whatever c, w and the rounding of n_j are
(they only set the acceptance rate, sum_z c f(|z|) / (2^(S+1) w)).

The tail. The tail entry starts a tail proposal when U < 2^(Q-16), so with
probability tau = 2^-16 2^(Q-16) / 2^Q = 2^-32 per proposal; the lane then
draws, in Python, further words: each tail entry with U < 2^(Q-16) adds a
level, a reject entry or another tail entry rejects, and the first core
entry gives y' = j w + o; the proposal is y = k B w + y' after k levels, so
P(y) = tau^k P_core(y'). As q(u + v) >= q(u) + q(v) for u, v >= 0,
f(k B w + y') <= f(B w)^k f(y') <= tau^k f(y'), so p = c f(|z|) / (n_j tau^k)
<= 1 and again P(output z) = c f(|z|) / (2^(S+1) w) for |z| >= B w: one law
on all of Z. (The decomposition y = k B w + y' is unique.)

The decision u < p, exactly. u is uniform on [0, 1), known by its first Q
bits U (more bits are read on demand). Write p = rho_j exp(-delta), with
rho_j = c f(j w) / n_j in (0, 1] per box and delta = (q(|z|) - q(j w)) / 2^P
= dn / 2^P, dn = e (a (2 j w + e) + b), e = o + sign in [0, w]. Bounds, from
exact tables (b = 16 table bits for every scale the estimators use):

* i = floor(delta 2^b) and A_i = max(floor(2^31 exp(-i 2^-b)) - 2^(31-b), 0)
  (``exp_table``) satisfy A_i <= 2^31 exp(-delta) < A_i + 2^(31-b) + 1:
  exp(-x) decreases and is 1-Lipschitz on x >= 0, so for delta in
  [i 2^-b, (i + 1) 2^-b), exp(-i 2^-b) - 2^-b <= exp(-delta) <= exp(-i 2^-b);
  A_i >= 0 keeps u63 - thr (below) in int64;
* R_j <= 2^32 rho_j < R_j + r (R_j <= 2^32, r ~ 40), from integer brackets
  of f(j w) (``_brackets``, below);
* thr = floor(A_i R_j / 2^(63-Q)): then thr <= 2^Q p, since A_i R_j <=
  2^63 p, and 2^Q p < thr + Delta with Delta = 1 + ceil(SLACK / 2^(63-Q)),
  SLACK = (2^(31-b) + 1) 2^32 + r (2^31 + 2^(31-b) + 1), since
  2^63 p < (A_i + 2^(31-b) + 1)(R_j + r) <= A_i R_j + SLACK (A_i < 2^31:
  the product A_i R_j is below 2^63).

Hence, u being in [U / 2^Q, (U + 1) / 2^Q),

    U < thr               =>  u < (U + 1) / 2^Q <= p:  accept;
    U >= thr + Delta      =>  u >= U / 2^Q > p:         reject;
    thr <= U < thr + Delta:  flagged; decided in Python by reading u's next
                             bits, 64 at a time, against the exact binary
                             expansion of p (``LazyUniform``),

a flag having probability about Delta / 2^Q, 2^-16 (one lane in ~65000; it
costs ~25 microseconds). numpy compares the word with its sign bit cleared,
u63 = U 2^(63-Q) + (the proposal's bits, < 2^(63-Q)), with thr 2^(63-Q):
u63 < thr 2^(63-Q) iff U < thr, and 0 <= u63 - thr 2^(63-Q) < Delta 2^(63-Q)
iff thr <= U < thr + Delta, so only U enters the decision. Tail and reject
entries have R = 0, hence thr = 0: never accepted in numpy, flagged iff
U < Delta, which for the tail entry includes every tail start (2^(Q-16) <=
Delta). Every intermediate is an int64 below 2^63 (checked when the plan is
built).

Plans, cheaply. A plan needs f(j w) for its ~100-700 boxes. They are
bracketed with int64 numpy arithmetic (``_brackets``): f(j w) = exp(-n)
exp(-i 2^-16) exp(-r) with exact tables for the first two factors and
1 - r <= exp(-r) <= 1 - r + r^2 / 2, floors below and ceilings above, to
~2^-28 relative; n_j comes from the upper bracket, R_j from the lower one
and r from their width. The boxes, counts and slot table (the "shape",
~0.2 ms) are built for a reference law q_ref(y) = a_ref y^2 + b_ref y, with
a_ref <= a and b_ref <= b keeping the top 7 bits (``_reference``): f <= f_ref,
so n_j >= c f_ref(j w) >= c f(j w) and f(B w) <= f_ref(B w) <= tau keep
every inequality above, and every law within 2^-6 of a reference shares its
shape, at a cost of 0.2% (Gaussian) to 0.4% (Laplace) of the acceptance on
average (estimators whose noise scale moves every round get ~0.1 ms plans).
Each law keeps its own R_j: rho_j = c f(j w) / n_j = rho_ref_j
exp(-D_j / 2^P), D_j = q(j w) - q_ref(j w) >= 0, bracketed the same way.
Which plan serves a law is a function of the law alone, so the draws stay a
function of the generator's state.

Wide boxes (Gaussian sigma past ~2^22). Two products outgrow int64 there,
and both are rewritten exactly rather than approximated, so every claim
above holds unchanged (same tables, same bounds, same decisions):

* the brackets need x = q(j w) / 2^P, and q at the core's reach (~7 sigma)
  passes 2^63 near sigma = 2^22. As w = 2^lw, q(j w) = 2^c N with N = a j^2
  (c = 2 lw) for the Gaussian and N = a j^2 w + b j (c = lw) otherwise, so
  x = N / 2^(P - c): the same rational, hence the same bits n, i, r31, from
  an N of ~30 bits (``_box_poly``). For every law that had a plan before,
  the brackets, counts, slot table and R_j are the same integers.
* the index i = floor(dn / 2^(P - b)) needs dn = e t, t = a (2 j w + e) + b,
  about 2^(2 lw + 21) < 2^63 only up to lw ~ 20 (sigma ~ 2^25). Past that,
  t = t_hi 2^c + t_lo and i = floor((t_hi e + floor(t_lo e / 2^c)) /
  2^(P - b - c)), an identity of floors (``_split_bits`` proves it and
  bounds every term, checked per plan; ``table_index``): the same i.

With lw > 23 the offset leaves fewer than 24 bits of the word for U, so u
comes from half of a second word (``two_words``, as for wide Laplace boxes).
Plans exist up to sigma ~ 2^39 (refused beyond: t_hi e would pass 2^63);
``_discrete`` uses them up to 2^36.

The kernel. ``propose`` and ``sample`` run the pass compiled (``_exact_kernel``,
which generates SFC64's words itself): the same words, the same int64 operations
lane for lane (every bound above holds for them), the same flagged lanes settled
in Python in the same order: the same draws (``decide``, ``decide_squeezed``: the reference).
"""

import math
import sys
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ._exact_exp import (  # noqa: F401  (re-exported: their old home)
    LazyUniform, exp_neg_bracket, exp_neg_fixed, floor_exp_neg, floor_scaled_exp)

_SLOT_BITS = 16  # S: the box is one of 2^16 table slots
_TABLE_BITS = 16  # exp(-delta) is tabulated at delta = i 2^-16 ...
_TABLE_SIZE = 2**17  # ... unless that needs more entries (tiny scales): then coarser
_LANE_BITS = 32  # at most this many bits of u are compared in numpy (tests lower it)
_MIN_LANE_BITS = 24  # fewer free bits in the word: u takes half of a second word
_FLAG_ALL = False  # tests set it: every lane is decided by the exact Python comparison
_KERNEL = True  # the compiled pass (``_exact_kernel``); False: numpy's, the same draws
_TAIL_SLOTS = 1  # slots of the tail (tests raise it to make tails common)
_C_BITS = 16  # c = C / 2^16 in the exact acceptance
_REF_BITS = 7  # laws whose a (or b) share their top 7 bits share one shape
_INT64_MAX = 2**63 - 1  # (a test lowers it: plans that could overflow are refused)
_SLOT_VIEW = 0 if sys.byteorder == "little" else 3  # the low 16 bits of a word, as uint16
_CHUNK = 16384  # proposals per numpy pass (bounded temporaries; one pass up to ~16000 draws)


# ---------------------------------------------------------------- the tables
# per ``bits``: [thresholds so far (list), lo, hi, lo_1, hi_1] (``_exp_thresholds``)
_THRESHOLD_RUNS = {}


@lru_cache(maxsize=8)
def _exp_thresholds(size, bits):
    """floor(2^31 exp(-i 2^-bits)) for i < size, exactly.

    Integer brackets lo_i <= 2^W exp(-i 2^-bits) <= hi_i (W = 128) grow by
    powers (lo_{i+1} = floor(lo_i lo_1 / 2^W), hi rounded up), and a
    threshold is taken only where both ends give the same floor at 31 bits;
    elsewhere (about size 2^-90 of the time) it is computed directly.
    The run is kept per ``bits`` and extended, so a shorter table is the
    prefix of a longer one, computed once (every entry is the exact floor,
    whichever run computed it: the same values)."""
    W = 128
    run = _THRESHOLD_RUNS.get(bits)
    if run is None:
        run = _THRESHOLD_RUNS[bits] = [[], 1 << W, 1 << W, *exp_neg_fixed(1, bits, W)]
    out, lo, hi, lo1, hi1 = run
    for i in range(len(out), size):
        a, b = lo >> (W - 31), hi >> (W - 31)
        out.append(a if a == b else floor_exp_neg(Fraction(i, 2**bits), 31))
        lo, hi = (lo * lo1) >> W, -((-hi * hi1) >> W)
    run[1], run[2] = lo, hi
    return np.array(out[:size], dtype=np.int64)


def exp_table(size, bits):
    """A_i = max(floor(2^31 exp(-i 2^-bits)) - 2^(31 - bits), 0) (int32) for
    i < size or more: the table of the next power-of-two size, built once."""
    return _offset_table(1 << max(int(size) - 1, 1).bit_length(), bits)


@lru_cache(maxsize=8)
def _offset_table(size, bits):
    full = _exp_thresholds(size, bits)
    return np.maximum(full - (1 << (31 - bits)), 0).astype(np.int32)


class Plan:
    """Everything ``decide`` needs for one law (``make_plan``)."""

    __slots__ = ("a", "b", "P", "lw", "Q", "two_words", "window", "flag_all", "B", "C",
                 "counts", "slot_table", "R", "table_bits", "table", "sh_index", "split",
                 "high", "limit", "rate", "tail_num", "tail_window", "r_slack", "squeeze",
                 "consts", "slots")

    def q(self, y):
        return self.a * y * y + self.b * y


def _box_bits(a, b, P):
    """lw for boxes of w = 2^lw <= sigma / 16 (Gaussian: a w^2 <= 2^(P-9), as
    sigma^2 = 2^(P-1) / a) or <= scale / 16 (Laplace: b w <= 2^(P-4)): the
    acceptance is about 1 - w / (2.5 sigma), resp. 1 - w / (2 scale)."""
    lw = 0
    if a:
        while a << (2 * lw + 11) <= 1 << P:
            lw += 1
    else:
        while b << (lw + 5) <= 1 << P:
            lw += 1
    return lw


@lru_cache(maxsize=None)
def _exp_int(count):
    """(M, k) int64 arrays with exp(-n) in [M_n, M_n + 1) 2^-(31 + k_n) and
    2^30 <= M_n < 2^31 for n < count, exactly."""
    M, k = [], []
    for n in range(count):
        e = max(n * 1442 // 1000 - 1, 0)  # 2^(31 + e) exp(-n) is near 2^31: adjust exactly
        while floor_scaled_exp(n, 0, 1, 1, 31 + e)[0] < 2**30:
            e += 1
        while floor_scaled_exp(n, 0, 1, 1, 31 + e)[0] >= 2**31:
            e -= 1
        M.append(floor_scaled_exp(n, 0, 1, 1, 31 + e)[0])
        k.append(e)
    return np.array(M, dtype=np.int64), np.array(k, dtype=np.int64)


def _brackets(a, b, P, lw, count):
    """For j < count: (lo, hi, k) int64 with lo 2^-(31 + k) <= f(j w) <= hi 2^-(31 + k).

    f(j w) = exp(-x), x = q(j w) / 2^P = n + i 2^-16 + r, r < 2^-16: exp(-n)
    from ``_exp_int``, exp(-i 2^-16) in [T_i, T_i + 1) 2^-31 from the exact
    table, and (2^31 - r31 - 1) 2^-31 < 1 - r <= exp(-r) <= 1 - r + r^2 / 2
    <= (2^31 - r31 + 1) 2^-31 with r31 = floor(r 2^31), r^2 / 2 < 2^-33. The
    products are floored below and ceiled above after each factor (every
    product < 2^63); the relative width is ~2^-28."""
    # q(j w) / 2^P = N / 2^P' with N = q(j w) / 2^c, an integer polynomial in j
    # (``_box_poly``): the same rational, so the same bits below, with an int64 N
    # at scales where q(j w) itself would pass 2^63 (the caller checks N's reach)
    N, P = _box_poly(a, b, P, lw, np.arange(count, dtype=np.int64))
    n = N >> P
    if P >= 16:
        i = (N >> (P - 16)) & 0xFFFF
        rest = N & ((1 << (P - 16)) - 1)  # r 2^P
        r31 = rest >> (P - 31) if P >= 31 else rest << (31 - P)
    else:
        i, r31 = (N << (16 - P)) & 0xFFFF, np.zeros_like(N)
    M, k = _exp_int(int(n[-1]) + 1)
    M, k = M[n], k[n]
    T = _exp_thresholds(1 << 16, 16)[i]
    lo = (M * T) >> 31
    hi = -((-(M + 1) * (T + 1)) >> 31)
    lo = (lo * ((1 << 31) - r31 - 1)) >> 31
    hi = -((-hi * ((1 << 31) - r31 + 1)) >> 31)
    return lo, hi, k


def _box_poly(a, b, P, lw, j):
    """(N, P') with q(j w) / 2^P = N / 2^P' exactly: q(j w) = a j^2 w^2 + b j w
    = 2^c N, c = 2 lw and N = a j^2 when b = 0, else c = lw and N = a j^2 w + b j;
    P' = P - c. ``j`` is an int or an int64 array (then N's reach is the caller's
    to check, ``_box_reach``)."""
    if b == 0:
        return a * j * j, P - 2 * lw
    return (a << lw) * j * j + b * j, P - lw


def _box_reach(a, b, P, lw, j):
    """N of ``_box_poly`` at box j, in Python integers (checked against _INT64_MAX)."""
    return _box_poly(a, b, P, lw, int(j))[0]


class Shape:
    """Boxes, slot counts and rho_j of one reference law (``_shape``)."""

    __slots__ = ("B", "C", "counts", "slot_table", "R", "r_slack", "rate")


@lru_cache(maxsize=32)
def _shape(a, b, P, lw, tail_num, tail_pow):
    """The core of the envelope of f(y) = exp(-(a y^2 + b y) / 2^P): boxes of
    w = 2^lw up to the first B with f(B w) <= tau = tail_num / 2^tail_pow,
    counts n_j >= c f(j w) and R_j <= 2^32 rho_j < R_j + r_slack; or None."""
    S, w = _SLOT_BITS, 1 << lw
    # the core: boxes j < B, B the first j whose bracket shows f(j w) <= tau
    # (hi <= tail_num 2^(31 + k - tail_pow); a shift below 0 means f > 2^-31 > tau)
    reach = (tail_pow - math.log2(tail_num) + 1) * 0.7  # x(y) there exceeds ln(1 / tau)
    count = 2 + int(math.sqrt(reach * 2**P / a) / w if a else reach * 2**P / b / w)
    if count > 2**14 or _box_reach(a, b, P, lw, count - 1) > _INT64_MAX:
        return None
    lo, hi, k = _brackets(a, b, P, lw, count)
    s = 31 + k - tail_pow
    small = (s >= 0) & (-((-hi) >> np.clip(s, 0, 63)) <= tail_num)
    if not small.any():
        return None
    shape = Shape()
    shape.B = B = int(np.argmax(small))
    lo, hi, k = lo[:B], hi[:B], k[:B]

    # c = C / 2^15 with sum_j n_j <= 2^S - tail slots, n_j = ceil(c hi_j 2^-(31 + k_j))
    # >= c f(j w) (C hi_j < 2^63; shifts past 63 give 1). A float start (each
    # ceiling adds at most 1) and two secant steps get within a few slots of
    # the best c; only the exact integer sum decides
    room, cb = (1 << S) - _TAIL_SLOTS, 15
    shift = np.minimum(cb + 31 + k, 63)
    mass = float(np.dot(hi, np.exp2(-(31.0 + k))))  # sum_j f(j w), approximately
    C = min(max(int((room - B) / mass * 2**cb), 1), 2**31 - 1)
    n = -((-C * hi) >> shift)
    for _ in range(2):
        left = room - int(n.sum())
        if left < 2:
            break
        step = max(int((left - 1) / mass * 2**cb * 0.999), 1)
        trial = -((-min(C + step, 2**31 - 1) * hi) >> shift)
        if int(trial.sum()) > room:
            break
        C, n = min(C + step, 2**31 - 1), trial
    if int(n.sum()) > room:
        return None
    shape.C = C << 1  # the exact p uses c = C / 2^16 (module docstring)
    shape.counts = n
    # R_j = floor(C lo_j / 2^(cb + k_j - 1) / n_j) = floor(2^32 c lo_j 2^-(31 + k_j) / n_j)
    # <= 2^32 rho_j, and 2^32 rho_j <= 2^32 c hi_j 2^-(31 + k_j) / n_j < R_j + 2 +
    # 2^32 (hi_j - lo_j) / hi_j (c hi_j 2^-(31 + k_j) / n_j <= 1): R_j + r_slack
    R = ((C * lo) >> np.minimum(cb + k - 1, 63)) // n
    shape.r_slack = 3 + int(np.max(((hi - lo) << 32) // hi))
    shape.R = np.concatenate([R, [0, 0]])  # box B: the tail, B + 1: reject
    table = np.full(1 << S, B + 1, dtype=np.uint16)
    table[: int(n.sum())] = np.repeat(np.arange(B, dtype=np.uint16), n)
    table[int(n.sum()): int(n.sum()) + _TAIL_SLOTS] = B
    shape.slot_table = table
    # expected acceptance, sum_y f(y) ~ w (sum_j f(j w) - 1 / 2): it only sizes the passes
    shape.rate = C * (mass - 0.5) / 2.0 ** (cb + S)
    return shape


def _reference(a):
    """a with all but its top _REF_BITS bits cleared: 0 <= a - ref < a 2^(1 - _REF_BITS)."""
    drop = max(a.bit_length() - _REF_BITS, 0)
    return (a >> drop) << drop


@lru_cache(maxsize=256)
def make_plan(a, b, P):
    """The envelope of f(y) = exp(-(a y^2 + b y) / 2^P) (module docstring), or
    None when an int64 intermediate could overflow: the caller then uses
    Python integers."""
    S = _SLOT_BITS
    plan = Plan()
    plan.a, plan.b, plan.P = a, b, P
    plan.lw = lw = _box_bits(a, b, P)
    plan.two_words = 63 - (S + lw) < _MIN_LANE_BITS
    plan.Q = Q = min(_LANE_BITS, 32 if plan.two_words else 63 - (S + lw))
    plan.flag_all = _FLAG_ALL
    # a tail start: a tail slot, then U < tail_window = 2^(Q - 16) (<= window
    # below): tau = tail_num / 2^(S + Q) = 2^-32 (other values in tests only)
    plan.tail_window = 1 << max(Q - 16, 0)
    plan.tail_num = _TAIL_SLOTS * plan.tail_window
    a_ref, b_ref = _reference(a), _reference(b)
    shape = _shape(a_ref, b_ref, P, lw, plan.tail_num, S + Q)
    if shape is None:
        return None
    plan.B, plan.C, plan.counts = B, C, n = shape.B, shape.C, shape.counts
    plan.slot_table, plan.R = shape.slot_table, shape.R

    # the law's own rho_j = c f(j w) / n_j = rho_ref_j exp(-D_j / 2^P), D_j = q(j w)
    # - q_ref(j w) >= 0, with exp(-D_j / 2^P) in [lo_j, hi_j] 2^-(31 + k_j) (``_brackets``):
    # R_j = floor(Rref_j lo_j 2^-(31 + k_j)) <= 2^32 rho_j < (Rref_j + s) hi_j 2^-(31 + k_j)
    # < R_j + 1 + (Rref_j (hi_j - lo_j) + s hi_j) 2^-(31 + k_j) <= R_j + 2 + extra_j
    w = 1 << lw
    plan.R, plan.r_slack = shape.R, shape.r_slack
    if (a_ref, b_ref) != (a, b):
        if _box_reach(a - a_ref, b - b_ref, P, lw, B - 1) > _INT64_MAX:
            return None
        lo, hi, k = _brackets(a - a_ref, b - b_ref, P, lw, B)
        R = shape.R[:B]
        shift = np.minimum(31 + k, 63)
        plan.R = np.concatenate([(R * lo) >> shift, [0, 0]])  # Rref_j <= 2^32, lo_j < 2^31
        extra = (R * (hi - lo) + shape.r_slack * hi) >> shift  # floor: < 1 lost
        plan.r_slack = 2 + int(np.max(extra))
    # dn = q(|z|) - q(j w) = e (a (2 j w + e) + b) <= w (a (2 (B + 1) w + w) + b)
    # for every slot (j <= B + 1, e <= w): the table reaches its index
    dn_max = w * (a * (2 * (B + 1) * w + w) + b)
    if (B + 3) << (lw + 1) > _INT64_MAX:
        return None
    tb = _TABLE_BITS
    while tb and _index(dn_max, P - tb) >= _TABLE_SIZE:
        tb -= 1
    plan.table_bits, plan.sh_index = tb, P - tb
    plan.table = exp_table(_index(dn_max, P - tb) + 1, tb)
    plan.split = None
    if dn_max > _INT64_MAX:  # wide boxes: dn itself needs more than 63 bits
        plan.split = _split_bits(dn_max // w, lw, plan.sh_index)
        if plan.split is None:
            return None
    # 2^63 p < (A_i + 2^(31-b) + 1)(R_j + r_slack) <= A_i R_j + slack (A_i < 2^31, R_j <= 2^32)
    top = (1 << (31 - tb)) + 1
    slack = (top << 32) + plan.r_slack * ((1 << 31) + top)
    plan.window = 1 + -(-slack >> (63 - Q))
    if plan.tail_window > plan.window:  # a tail start must be flagged, or the tail is lost
        return None  # (never for the estimators' laws: the docstring's 2^(Q-16) <= Delta)
    plan.high = -(1 << (63 - Q))  # thr 2^(63-Q) = (A_i R_j) & high
    plan.limit = min(plan.window << (63 - Q), 2**63)  # flagged: 0 <= d < limit
    # the reference's acceptance times sum f / sum f_ref (it only sizes the passes)
    ratio = math.sqrt(a_ref / a) if a else b_ref / b
    plan.rate = min(max(shape.rate * ratio, 0.05), 1.0)
    return plan


def _split_bits(t_max, lw, sh):
    """c for the wide boxes' index floor(t e / 2^sh), or None if even split it
    could overflow int64 (``decide``, ``_WIDE`` notes).

    dn = t e with t = a (2 j w + e) + b <= t_max and 0 <= e <= w = 2^lw. With
    t = t_hi 2^c + t_lo (0 <= t_lo < 2^c) and c <= sh,

        floor(t e / 2^sh) = floor((t_hi e + floor(t_lo e / 2^c)) / 2^(sh - c)),

    exactly: t e / 2^sh = (t_hi e + t_lo e / 2^c) / 2^(sh - c), and for an
    integer X and a real x >= 0, floor((X + x) / 2^m) = floor(floor(X + x) / 2^m)
    = floor((X + floor(x)) / 2^m). Every int64 intermediate is bounded: t <=
    t_max, t_lo e < 2^c 2^lw <= 2^62 with c = min(62 - lw, sh), and t_hi e +
    floor(t_lo e / 2^c) <= (t_max >> c) w + w, all checked here."""
    c = min(62 - lw, sh)
    if c < 0 or t_max > _INT64_MAX or ((t_max >> c) + 1) << lw > _INT64_MAX:
        return None
    return c


def _index(dn, shift):
    return dn >> shift if shift >= 0 else dn << -shift


def clear_plans():
    """Forget the cached plans and shapes (after changing a test hook)."""
    make_plan.cache_clear()
    _shape.cache_clear()


# ----------------------------------------------------------------- sampling
def propose(rng, plan, m):
    """The accepted ones among ``m`` independent proposals (int64, i.i.d. from
    the law, a random number of them)."""
    if _KERNEL and not plan.flag_all:  # decide_squeezed's decisions, compiled (same draws)
        return propose_compiled(rng, plan, m)
    words = rng.bit_generator.random_raw(m)
    extra = rng.bit_generator.random_raw((m + 1) // 2) if plan.two_words else None
    box, z, u63, accept, flagged = decide_squeezed(plan, words, extra)  # decide's, cheaper
    if flagged is not None:  # ~2^-16 per proposal: exact, in Python, with u's later bits
        for i in np.flatnonzero(flagged):
            k = _settle(rng, plan, int(box[i]), int(z[i]), int(u63[i]) >> (63 - plan.Q))
            accept[i], z[i] = k is not None, z[i] if k is None else k
    return z[accept]


def decide(plan, words, extra=None):
    """The numpy part of a pass over 64-bit ``words`` (uint64; with
    ``plan.two_words`` u's bits come from ``extra``, half a word per lane):
    (box, z, u63, accept, flagged), flagged None when no lane is; accept and
    flagged are exclusive (accept: d < 0, flagged: 0 <= d < limit <= 2^63).
    See the module docstring."""
    S, lw, m = _SLOT_BITS, plan.lw, words.size
    w64 = words.view(np.int64)
    box = plan.slot_table.take(words.view(np.uint16)[_SLOT_VIEW::4])
    off = np.right_shift(w64, S)
    off &= (1 << lw) - 1
    neg = np.right_shift(w64, 63)  # -sign: 0 or -1
    if plan.two_words:
        u63 = (extra.view(np.uint32)[:m] >> (32 - plan.Q)).astype(np.int64)
        u63 <<= 63 - plan.Q
    else:
        u63 = np.bitwise_and(w64, 2**63 - 1)  # U 2^(63-Q) + bits below
    y = np.left_shift(box, lw, dtype=np.int64)  # j w
    e = np.subtract(off, neg)  # |z| - j w
    idx = table_index(plan, y, e)
    d = plan.R.take(box)
    d *= plan.table.take(idx)  # A_i R_j
    d &= plan.high  # thr 2^(63-Q)
    np.subtract(u63, d, out=d)
    accept = d < 0  # U < thr
    flagged = None
    if plan.flag_all:
        accept[:] = False
        flagged = np.ones(m, dtype=bool)
    elif d.view(np.uint64).min() < plan.limit:  # some thr <= U < thr + window
        flagged = d.view(np.uint64) < plan.limit
    y += off
    z = np.bitwise_xor(y, neg, out=y)  # y (sign 0) or ~y = -(y + 1) (sign 1)
    return box, z, u63, accept, flagged


def table_index(plan, y, e):
    """floor(dn / 2^sh_index), dn = e (a (2 y + e) + b), for int64 arrays y = j w
    and 0 <= e <= w (``e`` may be overwritten), exactly: directly when the plan
    bounds dn below 2^63, else in two halves (``_split_bits``)."""
    if plan.split is not None:
        c = plan.split
        t = np.left_shift(y, 1)
        t += e
        t *= plan.a
        t += plan.b  # t = a (2 j w + e) + b <= t_max
        low = np.bitwise_and(t, (1 << c) - 1)
        low *= e  # < 2^c 2^lw <= 2^62
        low >>= c  # floor(t_lo e / 2^c)
        t >>= c
        t *= e
        t += low  # t_hi e + floor(t_lo e / 2^c) <= (t_max >> c) w + w
        return np.right_shift(t, plan.sh_index - c, out=t)
    if plan.a:
        dn = np.left_shift(y, 1)
        dn += e
        dn *= plan.a
        if plan.b:
            dn += plan.b
        dn *= e
    else:
        dn = np.multiply(e, plan.b, out=e)
    return np.right_shift(dn, plan.sh_index, out=dn) if plan.sh_index >= 0 else \
        np.left_shift(dn, -plan.sh_index, out=dn)


def _settle(rng, plan, j, z, U):
    """The exact decision for a flagged lane (box j, proposal z, first Q bits
    U of u): the accepted integer or None."""
    if j == plan.B + 1:
        return None
    if j == plan.B:  # the tail slot: a tail start iff U < tail_window
        return _tail(rng, plan, z < 0) if U < plan.tail_window else None
    absz = -z if z < 0 else z
    scale_den = int(plan.counts[j]) << _C_BITS  # p = C f(|z|) / (2^16 n_j)
    u = LazyUniform(rng, U, plan.Q)
    if u.below(lambda bits: floor_scaled_exp(plan.q(absz), plan.P, plan.C, scale_den, bits)):
        return z
    return None


def _word(rng, plan):
    """(slot, offset, U) of one proposal word, as ``decide`` reads them."""
    raw = int(rng.bit_generator.random_raw())
    if plan.two_words:
        U = int(rng.bit_generator.random_raw()) >> (64 - plan.Q)
    else:
        U = (raw >> (63 - plan.Q)) & ((1 << plan.Q) - 1)
    return raw & ((1 << _SLOT_BITS) - 1), (raw >> _SLOT_BITS) & ((1 << plan.lw) - 1), U


def _tail(rng, plan, negative):
    """A tail proposal after its start (module docstring), in Python integers:
    y = k B w + y', accepted with probability c f(|z|) / (n_j tau^k)."""
    k = 1
    while True:
        slot, off, U = _word(rng, plan)
        j = int(plan.slot_table[slot])
        if j == plan.B and U < plan.tail_window:
            k += 1
            continue
        if j >= plan.B:
            return None
        y = ((k * plan.B + j) << plan.lw) + off
        absz = y + negative
        # p = (C / 2^16) f / (n_j (tail_num / 2^(S+Q))^k)
        num = plan.C << (k * (_SLOT_BITS + plan.Q))
        den = (int(plan.counts[j]) << _C_BITS) * plan.tail_num**k
        u = LazyUniform(rng, U, plan.Q)
        if u.below(lambda bits: floor_scaled_exp(plan.q(absz), plan.P, num, den, bits)):
            return ~y if negative else y
        return None


def sample(rng, plan, n, dtype=np.int64):
    """``n`` i.i.d. draws of the plan's law. Over-proposing and keeping the
    first n accepted keeps them i.i.d. (acceptances are independent, and
    how many are kept depends on counts only), with one pass most of the
    time; large n is drawn in passes of at most ``_CHUNK`` proposals."""
    out = np.empty(n, dtype=dtype)
    if _KERNEL and not plan.flag_all and out.dtype in (np.int64, np.float64):
        return sample_compiled(rng, plan, out)  # the same passes and draws, compiled
    filled = 0
    while filled < n:
        z = propose(rng, plan, pass_size(plan, n - filled))[:n - filled]
        out[filled:filled + z.size] = z
        filled += z.size
    return out


def pass_size(plan, need):  # proposals for the next pass when ``need`` draws are missing
    spread = 4.0 * math.sqrt(need * (1.0 - plan.rate) / plan.rate)
    return min(int(need / plan.rate + spread) + 16, _CHUNK)


from ._exact_squeeze import decide_squeezed  # noqa: E402  (it reads table_index, above)
from ._exact_kernel import propose_compiled, sample_compiled  # noqa: E402

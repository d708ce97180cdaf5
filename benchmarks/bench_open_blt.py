"""Epoch schedules of the open-ended BLT (``OpenBLTPrefixSum``): a study.

Writes ``docs/benchmarks/open_blt.md``. Question: would an open BLT whose
epochs start short (16-64 leaves, one buffer, designed for their own length)
and grow by 2 or 4 have less prefix-sum noise over 10-1,000 leaves, and a
cheaper step, than today's epochs (2^20 leaves halved while the grid would
inflate the sensitivity by > 1 %, four buffers, doubling), without losing
much at 10^4-10^5 leaves?

Nothing under ``skdpol/`` is changed: the candidates are subclasses of
:class:`~skdpol.mechanisms.OpenBLTPrefixSum` defined here, and the estimator
is made to build them by swapping the name ``OpenBLTPrefixSum`` in
``skdpol.mechanisms._prefix`` (the only place that builds one) for the length
of a run (:func:`open_mechanism`).

Four parts (``--skip`` leaves any out):

1. ``closed-form``: the per-coordinate std of the prefix-sum
   noise after t leaves, for today's schedule, every candidate, and a BLT
   planned for horizon t, at the same noise multiplier (1) and for the wide
   classifier's leaves (2^17 columns, replace-one sensitivity 2 L, leaf bound
   2,048 L: rounds of 2,048 rows; the figures are in units of 2 L x the
   multiplier, so L drops out). Exact, from the package's closed forms: an
   epoch's noise std is ``BLTPrefixSum.noise_std`` (multiplier x its own
   stream sensitivity, grid path included), the current epoch's prefix noise
   is ``noise_std x sqrt(sum_k b_k^2)`` (``_last_sum_b2``, what
   ``noise_std_at`` reads) and a finished epoch adds ``(noise_std x
   BLT.max_error(length))^2``, as ``OpenBLTPrefixSum._added`` does. The
   epochs are built by the schedule's own ``_new_epoch`` (no leaves fed).
2. ``step``: where a 100,000-row open pass's CPU time goes, per prototyped
   schedule (cProfile: the BLT step kernel, the exact sampler, array copies).
3. ``wide``: ``PrivateOnlineLogistic`` (defaults, horizon=None) on the
   generated 2^17-column rows of ``bench_open_wide.py`` (rounds of 2,048
   rows), scored after 100,000 and 300,000 rows of one open pass, for
   today's open BLT and the prototyped candidates, and the known-horizon
   stream (one pass per length); accuracy over seeds and the CPU time of the
   ``partial_fit`` calls (best of ``--repeats`` identical passes).
4. ``adult``: Adult hashed to 2^17 (``bench_open_wide.adult_section``'s
   data), one open pass of its 32,561 rows in chunks of 5,000, per schedule.

Usage (the page is these two runs, in this order)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice python \\
        benchmarks/bench_open_blt.py --eps 1,4 --seeds 0,1,2,3
    ... --eps 1,4 --skip closed-form,step,adult --seeds 4,5,6,7,8,9,10,11 \\
        --append "More seeds (4-11), the wide stream only"
"""

import argparse
import contextlib
import math
import os
import shlex
import sys
import time
import warnings
from functools import lru_cache

import numpy as np
from scipy import optimize

from _common import REPO, machine_lines, md_table, progress_log  # noqa: F401
import skdpol.mechanisms._blt as B
import skdpol.mechanisms._prefix as prefix
from skdpol import PrivateOnlineLogistic
from skdpol.mechanisms._blt_optimise import _unpack, optimal_blt
from skdpol.mechanisms._blt_value import BLT, _last_sum_b2

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "docs", "benchmarks", "open_blt.md")
TIMES = (10, 20, 50, 100, 300, 1_000, 10_000, 100_000)
# the wide classifier's leaves: 2^17 columns, sensitivity 2 L, leaf bound b L
# (b = 2,048 rows a round, the open rule's d / 64): in units of L
DIM, SENS, LEAF_BOUND = 2**17, 2.0, 2048.0


# ------------------------------------------------------------ the schedules
class Scheduled(B.OpenBLTPrefixSum):
    """An open BLT whose epoch i has ``FIRST x GROWTH^i`` leaves (from epoch
    ``JUMP_AFTER`` on: today's 2^20, 2^21, ...), each halved while the grid
    would inflate its sensitivity by > 1 % (today's ``_epoch_length``), with
    one buffer up to ``ONE_MAX`` leaves and four above. Every epoch is a
    :class:`BLTPrefixSum` of the same multiplier, noised for its own stream
    sensitivity: the privacy argument of ``OpenBLTPrefixSum`` unchanged."""

    FIRST, GROWTH, ONE_MAX, JUMP_AFTER = 16, 2, 128, None
    DESIGN = None  # None: blt_for_horizon; else a function (length, buffers) -> BLT

    def _nominal(self, i):
        if self.JUMP_AFTER is not None and i >= self.JUMP_AFTER:
            return B.FIRST_EPOCH * 2 ** (i - self.JUMP_AFTER)
        return self.FIRST * self.GROWTH ** i

    def _buffers(self, length):
        return 1 if length <= self.ONE_MAX else 4

    def _new_epoch(self, length):  # ``length`` (twice the last) is ignored: the schedule's
        length = self._epoch_length(self._nominal(len(self._starts)))
        self._starts.append(self._t)
        ep = B.BLTPrefixSum(dim=self.dim, sensitivity=self.sensitivity,
                            noise_multiplier=self.noise_multiplier, horizon=length,
                            rng=self._keys, sampler=self.sampler, leaf_bound=self.leaf_bound,
                            buffers=self._buffers(length))
        if self.DESIGN is not None:
            ep = _redesigned(ep, self.DESIGN(length, self._buffers(length)))
        return ep


def _redesigned(ep, blt):
    """``ep`` rebuilt around the BLT ``blt`` (a public design): the same
    construction as BLTPrefixSum.__init__ after its ``blt_for_horizon``."""
    ep.blt = blt
    ep.stream_sensitivity = ep.sensitivity * blt.sensitivity(ep.horizon)
    lam, nu = blt.inverse
    ep._theta, ep._omega, ep._lam, ep._nu = (
        B._per_buffer(c, ep.dim) for c in (blt.theta, blt.omega, lam, nu))
    ep._step_size = None
    if ep.sampler == "discrete" and ep.noise_multiplier > 0 and ep.sensitivity > 0:
        ep._set_grid(ep.leaf_bound)
    ep._enc = np.zeros((ep._theta.shape[0], ep.dim))
    ep._dec = np.zeros((lam.size, ep.dim))
    return ep


def _ratios(blt, n, times):
    s = blt.sensitivity(n)
    return np.array([s * blt.max_error(t) / _planned_float(t) for t in times])


@lru_cache(maxsize=None)
def _planned_float(t):
    blt = B.blt_for_horizon(t)
    return blt.sensitivity(t) * blt.max_error(t)


@lru_cache(maxsize=None)
def anytime_blt(n, buffers):
    """A BLT for an epoch of ``n`` leaves minimising the worst ratio, over
    t = 10 ... n (12 points, log-spaced), of its prefix noise at t (noise
    calibrated to its sensitivity at n) to a BLT planned for t: a design for
    a stream that does not know where in its epoch it stops. Nelder-Mead from
    the RMSE design; public (reads n and buffers only)."""
    times = np.unique(np.geomspace(10, n, 12).astype(int))
    base = optimal_blt(n, buffers) if buffers != 4 else B.blt_for_horizon(n)
    th = np.asarray(base.theta)
    p0 = np.concatenate([np.log(base.omega), np.log(th / (1 - th))])

    def loss(p):
        try:
            w, t = _unpack(p, buffers)
            r = _ratios(BLT(tuple(w), tuple(t)), n, times)
        except (ValueError, FloatingPointError, ZeroDivisionError, np.linalg.LinAlgError):
            return 1e6
        return float(np.max(np.log(r))) if np.all(np.isfinite(r)) else 1e6

    with np.errstate(all="ignore"):
        res = optimize.minimize(loss, p0, method="Nelder-Mead",
                                options=dict(maxiter=4000, xatol=1e-7, fatol=1e-10))
    w, t = _unpack(res.x, buffers)
    return BLT(tuple(float(v) for v in w), tuple(float(v) for v in t))


def schedule(name, **kw):
    return type(name, (Scheduled,), kw)


TODAY = "today (2^20 halved, 4 buffers, x2)"
CANDIDATES = {
    TODAY: B.OpenBLTPrefixSum,
    "16 x2 (1 buffer <= 128)": schedule("S16x2", FIRST=16, GROWTH=2),
    "16 x4 (1 buffer <= 128)": schedule("S16x4", FIRST=16, GROWTH=4),
    "32 x2 (1 buffer <= 128)": schedule("S32x2", FIRST=32, GROWTH=2),
    "32 x4 (1 buffer <= 128)": schedule("S32x4", FIRST=32, GROWTH=4),
    "64 x2 (1 buffer <= 128)": schedule("S64x2", FIRST=64, GROWTH=2),
    "64 x4 (1 buffer <= 128)": schedule("S64x4", FIRST=64, GROWTH=4),
    "64 (1 buffer), then today's": schedule("S64today", FIRST=64, JUMP_AFTER=1),
    "128 (1 buffer), then today's": schedule("S128today", FIRST=128, JUMP_AFTER=1),
    "today's lengths, 2 buffers (RMSE design)": schedule(
        "Two", JUMP_AFTER=0, ONE_MAX=0, _buffers=lambda self, n: 2),
    "today's lengths, anytime 2 buffers": schedule(
        "Any2", JUMP_AFTER=0, ONE_MAX=0, DESIGN=staticmethod(lambda n, b: anytime_blt(n, 2)),
        _buffers=lambda self, n: 2),
    "today's lengths, anytime 4 buffers": schedule(
        "Any4", JUMP_AFTER=0, ONE_MAX=0, DESIGN=staticmethod(lambda n, b: anytime_blt(n, 4))),
}
# prototyped end to end (part 2)
PROTOTYPED = ("64 (1 buffer), then today's", "today's lengths, anytime 2 buffers",
              "today's lengths, 2 buffers (RMSE design)")


# ------------------------------------------------------- part 1: closed forms
def epochs(cls, n, sampler):
    """[(first leaf, BLTPrefixSum)] of ``cls``'s epochs covering n leaves,
    built by its own ``_new_epoch`` (the epoch switch of ``_added`` without
    leaves: the design and noise std read the public bounds only)."""
    s = cls(dim=DIM, sensitivity=SENS, noise_multiplier=1.0, rng=np.random.default_rng(0),
            sampler=sampler, leaf_bound=LEAF_BOUND)
    out = []
    while True:
        ep = s._epoch
        out.append((s._starts[-1], ep))
        if s._starts[-1] + ep.horizon >= n:
            return out
        s._t += ep.horizon
        s._epoch = s._new_epoch(2 * ep.horizon)


def open_std(plan, t):
    """Per-coordinate prefix-noise std after t leaves (OpenBLTPrefixSum.noise_std_at)."""
    var = 0.0
    for start, ep in plan:
        if t <= start + ep.horizon:
            return math.sqrt(var + ep.noise_std**2 * _last_sum_b2(ep.blt, t - start, False))
        var += (ep.noise_std * ep.blt.max_error(ep.horizon)) ** 2
    raise ValueError(t)


def planned_std(t, sampler, buffers=4):
    p = B.BLTPrefixSum(dim=DIM, sensitivity=SENS, noise_multiplier=1.0, horizon=t,
                       rng=np.random.default_rng(0), sampler=sampler, leaf_bound=LEAF_BOUND,
                       buffers=buffers)
    return p.noise_std * p.blt.max_error(t)


def closed_form_section(sampler, log):
    ref = {t: planned_std(t, sampler) for t in TIMES}
    rows = [["BLT planned for horizon t (4 buffers)"] + [f"{ref[t]:.2f}" for t in TIMES],
            ["BLT planned for t, 1 buffer (t <= 64: the wide rule)"]
            + [f"{planned_std(t, sampler, 1) / ref[t]:.3f}x" if t <= 64 else "" for t in TIMES]]
    plans = {}
    for name, cls in CANDIDATES.items():
        plan = epochs(cls, max(TIMES), sampler)
        plans[name] = plan
        rows.append([name] + [f"{open_std(plan, t) / ref[t]:.3f}x" for t in TIMES])
        log(f"closed form {sampler} {name} done")
    head = ["schedule"] + [f"t = {t:,}" for t in TIMES]
    # the epochs and their calibration (privacy: each epoch's own sensitivity)
    ep_rows = []
    for name, plan in plans.items():
        for i, (start, ep) in enumerate(plan[:5]):
            ep_rows.append([name if i == 0 else "", f"{start:,}", f"{ep.horizon:,}",
                            str(len(ep.blt.theta)),
                            f"{ep.blt.sensitivity(ep.horizon):.3f}",
                            f"{ep.noise_std / SENS:.3f}",
                            f"{ep.noise_std * ep.blt.max_error(ep.horizon):.2f}"])
    return head, rows, ep_rows


def step_profile(repeats=3):
    """Where the open stream's pass goes, per schedule: cProfile of one pass
    of 100,000 generated rows at 2^17 (epsilon 1, seed 0; the last of
    ``repeats`` passes, the first warming the caches): the pass's CPU time,
    the BLT step (the compiled ``grid_step`` of one buffer or
    ``grid_sum_step`` of several, or ``_add_one``'s numpy path), the exact
    sampler's noise and the array copies (checkpoints: a call's first step
    copies the shared buffers)."""
    import cProfile
    import pstats

    import bench_open_wide as ow
    chunks, _ = ow.make_data(DIM, 100_000, 0)
    rows = []
    for name in (TODAY,) + PROTOTYPED:
        with open_mechanism(CANDIDATES[name]):
            for _ in range(repeats):
                est = ow.private(False, 1.0, 0, horizon=None)()
                prof = cProfile.Profile()
                t0 = time.process_time()
                prof.enable()
                for i, (X, sc) in enumerate(chunks):
                    est.partial_fit(X, (sc > 0).astype(int),
                                    **({"classes": [0, 1]} if i == 0 else {}))
                prof.disable()
                total = time.process_time() - t0
        stats = pstats.Stats(prof).stats
        step = sum(v[2] for (f, _, fn), v in stats.items()
                   if fn in ("grid_step", "grid_sum_step", "float_step")
                   or (fn == "_add_one" and f.endswith("_blt.py")))
        noise = sum(v[2] for (f, _, fn), v in stats.items() if fn == "_pass")
        copies = sum(v[2] for (f, _, fn), v in stats.items() if "method 'copy'" in fn)
        rows.append([name, f"{1e3 * total:.0f}", f"{1e3 * step:.1f}", f"{1e3 * noise:.1f}",
                     f"{1e3 * copies:.1f}"])
    return md_table(["schedule", "pass (ms, profiled)", "BLT step kernel (ms)",
                     "exact sampler (ms)", "array copies (ms)"], rows)


# -------------------------------------------------------- part 2: end to end
@contextlib.contextmanager
def open_mechanism(cls):
    """The estimator's open BLT built as ``cls`` inside the block."""
    saved = prefix.OpenBLTPrefixSum
    prefix.OpenBLTPrefixSum = cls
    try:
        yield
    finally:
        prefix.OpenBLTPrefixSum = saved


def wide_section(eps_list, seeds, n_rows, repeats, log):
    import bench_open_wide as ow
    ow.REPEATS = repeats
    points = [p for p in (100_000, 300_000) if p <= n_rows]
    first = {"classes": [0, 1]}
    res = {}  # (eps, stream) -> {point: [(seed, score, sec)]}
    for seed in seeds:
        chunks, test = ow.make_data(DIM, n_rows, seed)
        for eps in eps_list:
            for N in points:
                _, got = ow.run(ow.private(False, eps, seed, horizon=N), chunks[:N // ow.CHUNK],
                                test, {N}, False, first)
                res.setdefault((eps, "horizon = N (known)"), {}).setdefault(N, []).append(
                    (seed,) + got[N])
            for name in (TODAY,) + PROTOTYPED:
                with open_mechanism(CANDIDATES[name]):
                    _, got = ow.run(ow.private(False, eps, seed, horizon=None), chunks, test,
                                    set(points), False, first)
                for p, (score, sec) in got.items():
                    res.setdefault((eps, "open, " + name), {}).setdefault(p, []).append(
                        (seed, score, sec))
                log(f"wide seed={seed} eps={eps} {name} "
                    + " ".join(f"{p}:{s:.4f}/{t:.3f}s" for p, (s, t) in sorted(got.items())))
    table = []
    for (eps, stream), cells in res.items():
        line = [f"{eps:g}", stream]
        for p in points:
            got = cells.get(p, [])
            sc = np.array([g[1] for g in got])
            se = np.array([g[2] for g in got])
            line.append(f"{np.median(sc):.3f} [{sc.min():.3f}, {sc.max():.3f}] "
                        f"{1e3 * np.median(se):.0f} ms")
        table.append(line)
    # paired by seed against today's open stream
    pairs = []
    for eps in eps_list:
        base = res[(eps, "open, " + TODAY)]
        for name in PROTOTYPED:
            cand = res[(eps, "open, " + name)]
            line = [f"{eps:g}", name]
            for p in points:
                b = {g[0]: g for g in base[p]}
                d = np.array([g[1] - b[g[0]][1] for g in cand[p]])
                r = np.median([g[2] / b[g[0]][2] for g in cand[p]])
                line.append(f"{np.median(d):+.3f} [{d.min():+.3f}, {d.max():+.3f}] "
                            f"{(d > 0).sum()} up / {(d < 0).sum()} down, time x{r:.2f}")
            pairs.append(line)
    head = ["epsilon", "stream"] + [f"{p:,} rows" for p in points]
    return md_table(head, table), md_table(head, pairs)


def adult_section(eps_list, seeds, log):
    from bench_wide_rounds import adult
    from sklearn.linear_model import SGDClassifier
    res = {}
    for seed in seeds:
        X, y, X_test, y_test, norm = adult(DIM, seed)
        n, chunk = X.shape[0], 5_000
        chunks = [(X[lo:lo + chunk], y[lo:lo + chunk]) for lo in range(0, n, chunk)]

        def feed(est):
            spent = 0.0
            for i, (Xc, yc) in enumerate(chunks):
                t0 = time.process_time()
                est.partial_fit(Xc, yc, **({"classes": [0, 1]} if i == 0 else {}))
                spent += time.process_time() - t0
            return est, spent
        est, sec = feed(SGDClassifier(random_state=seed))
        res.setdefault(("-", "SGD one pass"), []).append((seed, est.score(X_test, y_test), sec, None))
        for eps in eps_list:
            make = lambda **kw: PrivateOnlineLogistic(  # noqa: E731
                epsilon=eps, data_norm=norm, random_state=seed, **kw)
            est, sec = feed(make(horizon=n))
            res.setdefault((eps, "horizon = n (known)"), []).append(
                (seed, est.score(X_test, y_test), sec, None))
            for name in (TODAY,) + PROTOTYPED:
                with open_mechanism(CANDIDATES[name]):
                    est, sec = feed(make())
                    score = est.score(X_test, y_test)
                    est.flush()
                    res.setdefault((eps, "open, " + name), []).append(
                        (seed, score, sec, est.score(X_test, y_test)))
            log(f"adult seed={seed} eps={eps} done")
    table = []
    for (eps, stream), got in res.items():
        sc = np.array([g[1] for g in got])
        se = np.array([g[2] for g in got])
        after = [g[3] for g in got if g[3] is not None]
        fl = (f"{np.median(after):.4f} [{min(after):.4f}, {max(after):.4f}]" if after else "")
        table.append([eps if eps == "-" else f"{eps:g}", stream,
                      f"{np.median(sc):.4f} [{sc.min():.4f}, {sc.max():.4f}]", fl,
                      f"{1e3 * np.median(se):.0f} ms"])
    return md_table(["epsilon", "stream", "accuracy after the pass", "after flush()",
                     "CPU time of the pass"], table)


TITLE = "# Epoch schedules of the open-ended BLT"
PROSE = """\
A study: nothing under `skdpol/` changed. The question (from [open_wide.md](open_wide.md)): the wide classifier's open stream (`PrivateOnlineLogistic`, 2^17 hashed columns, `horizon=None`, rounds of 2,048 rows) has 1.2-1.4x the prefix-sum noise of a BLT planned for its length over its first 10-100 rounds, and its four-buffer BLT step is a large part of a pass's time. Would epochs that start short (16-64 leaves, one buffer, designed for their own length) and grow by 2 or 4 do better over 10-1,000 rounds, with a cheaper step, and not much worse at 10^4-10^5?

**Answer: no schedule of that family is better over 10-1,000 rounds.** Each one wins only until its first epoch ends. From there to about 10^4 rounds it has about 1.25x today's noise. Today's schedule stays. A 64-leaf one-buffer first epoch is the best of the short starts. Measured end to end at 100,000 rows it gains +0.010 to +0.015 accuracy (7-8 of 8 seeds up) and takes ~0.7x the CPU time. At 300,000 rows it loses 0.014-0.022 (0 of 8 seeds up). This is what the closed forms predict. A speed-only alternative keeps today's epoch lengths with two buffers: ~0.83x the CPU time and 0.3-5.3 % more noise at every length, with accuracy unchanged within seed noise (a median of -0.003 to -0.006, slightly more seeds down than up).

### The privacy argument (unchanged for every schedule here)

Each epoch e is a `BLTPrefixSum` on its own leaves [s_e, s_e + n_e). Its C_e is designed for n_e leaves and has stream sensitivity sens(C_e), the largest column norm over n_e rows (1.440 for a 64-leaf one-buffer epoch, 1.927 for today's 8,192-leaf four-buffer epoch; the "sens(C_e)" column of the epoch tables). Its step noise std is the multiplier m x the leaf sensitivity 2 L x sens(C_e). On the grid path it is also multiplied by the grid's inflation: the "noise std" column, at most 1.004x sens(C_e) here. So **every epoch is calibrated to its own sensitivity**. A shorter or one-buffer epoch has a smaller sens(C_e) and therefore less noise per step, never a different multiplier. Given the public releases of the epochs before it, an epoch is a Gaussian mechanism of multiplier m on its leaves, also for adaptively chosen leaves (Denisov et al. 2022, Thm 2.1).

A row lies in one leaf, so it lies in exactly one epoch. Every other epoch sees the same leaves under both neighbours and is a function of public releases and independent noise, because each epoch's key is drawn from the key generator in turn. So the whole open stream costs one epoch's event, `noise_event(m)`, whatever the number of epochs and their lengths. This is parallel composition, as in `OpenBLTPrefixSum`'s notes. The argument needs the schedule to be public. Here every epoch's length and buffers are a function of the epoch's index and the public bounds (dim, sensitivity, leaf bound: today's grid halving), and the "anytime" designs are a function of (length, buffers) only.

One reporting difference: `event(n_leaves)` reports the first epoch's interim spend while that epoch runs. That spend reaches the full multiplier at 64 leaves for a 64-leaf first epoch, instead of at 8,192. The stated open cost is the same.

### Why short epochs lose (closed forms)

The tables below are exact: `BLTPrefixSum.noise_std`, `_last_sum_b2` and `BLT.max_error`, summed over finished epochs as `OpenBLTPrefixSum._added` does. The discrete path is what the estimator runs. For the wide classifier (leaf bound 2,048 L against sensitivity 2 L), today's 2^20 first epoch is halved by the 1 % grid rule down to **8,192 leaves** (16.8 M rows). So every schedule ends in 8,192-leaf epochs, and the 10^4 and 10^5 cells are sums of 2-13 of them.

- **Today's 10-50-round gap is unspent budget, not a poor design.** The first epoch's noise is calibrated to sens(C) over 8,192 leaves. After t leaves the stream has used only sens(C) over t rows: 1/1.264 of it at t = 50, 1/1.392 at t = 15. Its interim event is a Gaussian of multiplier 1.264 m at t = 50, and its noise there (1.249x planned) is 0.99 x 1.264 of the noise of a BLT planned for 50 leaves at that spend. An open stream cannot spend the budget on leaves it has not seen. A schedule can only choose *when* to spend it.
- **A restart is paid by every later prefix sum.** A finished epoch's final noise stays in every later release: 5.10 for a 64-leaf epoch, 8.07 for an 8,192-leaf one, in units of 2 L m. A BLT's error grows only logarithmically with its length, so a finished short epoch costs nearly as much as a long one. Just after a 64-leaf first epoch, the prefix noise is already 1.07x today's. It is 1.22-1.26x from 80 to 500 leaves and 1.18x at 8,192 (64 then today's, against today's; the 128-leaf start has 0.83-0.91x up to 128 leaves, then 1.25-1.31x). Doubling epochs pay this once per doubling: the "16/32/64 x2" rows are 1.5-2.4x planned over 100-10^4 rounds.
- **Designing one epoch for every length ("anytime")** means the 8,192-leaf epoch minimises the worst ratio to planned over t = 10 ... 8,192. It gives 1.11-1.23x over 10-1,000 rounds, but its final noise is 1.17x the RMSE design's, so every later epoch carries it: 1.53x at 10^4 against today's 1.33x. The two-buffer RMSE design for today's lengths is 1.003-1.053x today's noise at every t.

### End to end, time, and the recommendation

The prototypes are subclasses of `OpenBLTPrefixSum` in `benchmarks/bench_open_blt.py`, which the estimator builds through a swap of the name in `skdpol.mechanisms._prefix`. Three were run: "64 (1 buffer), then today's", "today's lengths, 2 buffers (RMSE design)" and "today's lengths, anytime 2 buffers". All are run against today's open stream and the known horizon, on the generated 2^17 rows of `bench_open_wide.py` (seeds 0-3, then 4-11 in the last section) and on Adult hashed to 2^17 (15 rounds and a flush).

- **64 (1 buffer), then today's.** At 100,000 rows (49 rounds, inside its first epoch; closed form 1.03x planned against today's 1.25x) it gains +0.011 / +0.011 accuracy at epsilon 1 / 4 over seeds 0-3, and +0.010 / +0.015 over seeds 4-11 (7 and 8 of 8 up). That is about half the gap to the known horizon at epsilon 1 (0.572 known, 0.545 today, 0.557 candidate) and all of it at epsilon 4. At 300,000 rows (146 rounds, past its restart; 1.26x today's noise) it loses 0.021 / 0.018 over seeds 0-3 and 0.014 / 0.022 over seeds 4-11 (0 of 8 up). On Adult (15 rounds) the medians move by +0.002 / -0.001, within seed noise.
- **Time.** A profiled 100,000-row pass (epsilon 1) spends 23 ms in the four-buffer step kernel (`grid_sum_step`) and 10 ms copying arrays (a call's first step copies the buffers shared with the checkpoint), out of 129 ms. With one buffer the kernel takes 5.9 ms and the copies 5.3 ms. With two buffers they take 11.4 ms and 6.7 ms. An earlier run of the same profile, on a busier machine, measured 29 + 18 of 146 ms. Measured per pass, CPU time is x0.67-0.72 for the 64-leaf start while inside it (x0.85-0.90 at 300,000 rows, after its switch to four buffers) and x0.81-0.85 for two buffers at every length. On Adult it is 31-32 against 46-47 ms.
- **Two buffers, today's lengths.** Accuracy changes by -0.003 to -0.010 (medians, seeds 0-3) and -0.003 to -0.006 (seeds 4-11), with more seeds down than up but every range straddling 0. The closed form is +0.3-5.3 % noise.

**Recommendation: keep today's schedule.** The short-start schedules do not lower the noise over 10-1,000 rounds. They move today's unspent first-epoch budget to the first 16-128 rounds and pay 1.25x over everything after, up to ~10^4 rounds. An open stream cannot know on which side of that line it will end, and open_wide.md's streams run to 10^6 rows (488 rounds). Two changes are defensible if the lead wants them, each behind a rule for wide streams only:

1. *Speed:* today's epoch lengths with two buffers. Expected effect: ~0.83x the CPU time of a 2^17 open pass, +0.3-5.3 % prefix noise, and no accuracy change resolvable with 8 seeds (medians -0.003 to -0.006).
2. *Short open wide streams:* a 64-leaf one-buffer first epoch, then today's epochs. Expected effect: -15 to -18 % noise and ~0.7x the time up to 64 rounds (131,072 rows at 2^17), then +7 % noise at 65 rounds and +18-26 % from 80 rounds to ~8,000 rounds. This is a bet on the length of the stream. I would not take it without evidence that open wide streams mostly stop within 64 rounds.

**What a package change would need.** `OpenBLTPrefixSum` would take a schedule: per-epoch buffers, and optionally a first epoch length before today's 2^20 halving. `prefix_sum_mechanism` would stop ignoring `buffers` for `horizon=None`, and `wide_blt_buffers(None)` would give the open rule. For (1), the two-buffer designs would be stored for 2^10-2^20 (`optimal_blt(n, 2)` takes ~0.1 s a length), with the grid halving reading the same design as the epoch. Today `grid_inflation` reads the four-buffer design. Tests would pin the epoch lengths and buffers as functions of the public bounds, `noise_std_at` against an empirical std across an epoch switch, and `event()` (the open event `noise_event(m)` against dp-accounting, and the interim spend reaching m at the end of a short first epoch). They would also cover checkpoints, `refresh_noise` and `exact_total` across switches (partial_fit chunks crossing leaf 64), with an audit (`skdpol/audit.py`) of an open stream whose differing row lies in the first epoch and in the second: not refuted at the calibrated noise, refuted with the noise cut. `check_outputs.py` would change exactly the open-ended BLT configurations of the wide classifier, and nothing else if the rule is keyed to wide streams.

### Commands

The page is two runs of `benchmarks/bench_open_blt.py`: this one, and the appended "More seeds" section (`--skip closed-form,step,adult --seeds 4,5,6,7,8,9,10,11 --append 'More seeds (4-11), the wide stream only'`). Together they take ~2 min on the shared 2-core machine.
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--eps", default="1,4")
    parser.add_argument("--seeds", default="0,1,2,3")
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: "
                        "closed-form, step, wide, adult")
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--log", default=None)
    parser.add_argument("--append", default=None,
                        help="append the tables to --out under this heading")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    eps_list = [float(e) for e in args.eps.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    skip = set(filter(None, args.skip.split(",")))
    log = progress_log(args.log)

    t0 = time.time()
    sections = []
    if "closed-form" not in skip:
        for sampler in ("discrete", "float"):
            head, rows, ep_rows = closed_form_section(sampler, log)
            sections += [f"### Prefix-noise std after t leaves, {sampler} path", "",
                         "First row: the std of a BLT planned for horizon t, per coordinate, "
                         "in units of 2 L x the multiplier; the others: their std over it.", "",
                         md_table(head, rows), "",
                         f"Epochs ({sampler} path; the first five): sens(C_e) is the epoch's "
                         "column norm over its own length; noise std is the epoch's step noise "
                         "per coordinate (multiplier x sensitivity x sens(C_e), x the grid's "
                         "inflation on the discrete path) in units of 2 L; final std is the "
                         "variance it adds, as a std, to every later prefix sum.", "",
                         md_table(["schedule", "first leaf", "leaves", "buffers", "sens(C_e)",
                                   "noise std", "final std"], ep_rows), ""]
    if "step" not in skip:
        sections += ["### Where a pass goes (100,000 rows at 2^17, epsilon 1, 49 rounds)", "",
                     "cProfile's own time of the parts, summed over the pass (profiling "
                     "inflates the total a little).", "", step_profile(), ""]
    if "wide" not in skip:
        table, pairs = wide_section(eps_list, seeds, args.rows, args.repeats, log)
        sections += ["### The wide classifier's open stream (2^17, rounds of 2,048 rows)", "",
                     "Cells: median [min, max] accuracy over seeds, then the median CPU time "
                     "of the partial_fit calls up to that point (best of the identical "
                     "passes).", "", table, "",
                     "Paired by seed against today's open stream (accuracy change, seeds up / "
                     "down, CPU time ratio):", "", pairs, ""]
    if "adult" not in skip:
        sections += ["### Adult hashed to 2^17 (a short real open stream, 32,561 rows: 15 "
                     "rounds of 2,048)", "", adult_section(eps_list, seeds, log), ""]
    written = (f"Written by `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice python "
               f"benchmarks/bench_open_blt.py {shlex.join(sys.argv[1:])}` in "
               f"{(time.time() - t0) / 60:.1f} min.")
    if args.append:
        lines = [f"## {args.append}", "", written, ""] + machine_lines() + [""] + sections
        with open(args.out, "a") as f:
            f.write("\n" + "\n".join(lines) + "\n")
    else:
        lines = [TITLE, "", written, ""] + machine_lines() + ["", PROSE, ""] + sections
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

"""Throughput and memory of the streaming estimators' partial_fit, against scikit-learn's SGD.

1. Throughput: one stream of 200,000 rows in chunks of 10,000, d = 90
   through ``PrivateOnlineRegressor(...).partial_fit`` against
   ``SGDRegressor().partial_fit`` and d = 54 (issue 31: covertype's width)
   through ``PrivateOnlineLogistic(...).partial_fit`` against
   ``SGDClassifier().partial_fit``, every estimator at its defaults
   (``algorithm="auto"``: "ftrl-momentum" for both at this 200,000-row
   horizon; the classifier's "ls", its default below a 100,000-row horizon,
   runs too, for reference; the hardened discrete sampler, ``batch_size="auto"``, the BLT), with the
   library's default BLAS threads and with BLAS limited to one thread;
   interleaved in the same run and repeated; reported as medians of rows/s
   and of the per-repeat ratio skdpol / SGD. One more row reads ``coef_``
   after every chunk (the regressor solves its release when first read).
2. Where a chunk of the regressor's ``algorithm="ftl"`` (PQFTL, its default
   before issue 31) goes: the per-chunk cost of each part measured alone in the same run (the row-norm test, the uncopied float
   Gram and side products of the default path, a round with a row to clip,
   the exact fixed-point copy and Gram that rounds under 64 rows take, the
   4,277 noise draws of one BLT step, the solve), against SGD's whole chunk.
3. Memory flat in T: d = 20, T = 100,000 and 1,000,000 rows in chunks of
   10,000 made on the fly, ``horizon=None``; peak traced memory (tracemalloc)
   of the streaming loop and ``len(pickle.dumps(est))`` at the end (the
   regressor at its default stream).

Writes docs/benchmarks/speed_memory.md (not with --quick, unless --out).

    python benchmarks/bench_speed_memory.py            # full run (~5 minutes)
    python benchmarks/bench_speed_memory.py --quick    # smoke run, < 1 minute
    python benchmarks/bench_speed_memory.py --profile  # also print a cProfile
"""

import argparse
import copy
import cProfile
import gc
import io
import math
import os
import pickle
import pstats
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

from _common import REPO, blas_description, command_line, machine_lines, md_table  # also puts the checkout on sys.path

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from sklearn.linear_model import SGDClassifier, SGDRegressor  # noqa: E402
from sklearn.metrics import accuracy_score, r2_score  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor  # noqa: E402
from skdpol.online import momentum_round  # noqa: E402
from skdpol.mechanisms._discrete import discrete_noise  # noqa: E402
from skdpol.online._ftl import float_rows  # noqa: E402
from skdpol.online._lsq import _syrk, _uncopied_leaf  # noqa: E402

DEFAULT_OUT = REPO / "docs" / "benchmarks" / "speed_memory.md"
EPSILON = 1.0
# issue 31's acceptance: >= 0.8x SGDRegressor (d = 90), >= 1x SGDClassifier (d = 54)
TARGET_REGRESSOR, TARGET_LOGISTIC = 0.8, 1.0


# --------------------------------------------------------------------- helpers
def public_bounds(d, coef, noise):
    """Bounds from the generating distribution (not from the drawn rows)."""
    data_norm = float(np.sqrt(stats.chi2.ppf(1 - 1e-6, d) / d))  # rows are N(0, I/d)
    y_bound = float(5.0 * np.sqrt(coef @ coef / d + noise**2))
    return data_norm, y_bound


def make_stream(n, d, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    coef = rng.standard_normal(d)
    X = rng.standard_normal((n, d)) / np.sqrt(d)  # rows of norm ~1
    y = X @ coef + noise * rng.standard_normal(n)
    return X, y, coef


def fmt_rate(x):
    return f"{x:,.0f}"


def interleaved_ms(fns, repeats, stat=np.median):
    """``stat`` (median, or min) of the ms of each of ``fns``, timed in turn
    within each repeat (so a slow spell of the shared machine hits every
    part alike)."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, t in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return [1e3 * float(stat(t)) for t in times]


# ------------------------------------------------------------------ throughput
def run_stream(make_est, X, y, chunk, blas_threads=None, fit_kwargs=None, read=False):
    """Consume the stream with a fresh estimator; return (seconds, estimator)."""
    fit_kwargs = fit_kwargs or {}
    with threadpool_limits(limits=blas_threads), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_est()
        t0 = time.perf_counter()
        for start in range(0, X.shape[0], chunk):
            est.partial_fit(X[start:start + chunk], y[start:start + chunk], **fit_kwargs)
            if read:
                est.coef_  # noqa: B018 (the read is what is timed)
        return time.perf_counter() - t0, est


def _test_rows(coef, seed):
    d = coef.size
    rng_t = np.random.default_rng(seed + 1)
    Xt = rng_t.standard_normal((20_000, d)) / np.sqrt(d)
    return Xt, Xt @ coef + 0.1 * rng_t.standard_normal(Xt.shape[0])


def throughput(n, d, d_clf, chunk, repeats, seed=0):
    X, y, coef = make_stream(n, d, seed=seed)
    Xc, yc, coef_c = make_stream(n, d_clf, seed=seed)
    labels = (yc > 0).astype(int)
    tests = {"reg": _test_rows(coef, seed), "clf": _test_rows(coef_c, seed)}
    data_norm, y_bound = public_bounds(d, coef, 0.1)
    data_norm_c, _ = public_bounds(d_clf, coef_c, 0.1)
    delta = 1.0 / n**1.1

    def regressor():
        return PrivateOnlineRegressor(epsilon=EPSILON, delta=delta, data_norm=data_norm,
                                      y_bound=y_bound, horizon=n, random_state=0)

    def logistic(**params):
        return PrivateOnlineLogistic(epsilon=EPSILON, delta=delta, data_norm=data_norm_c,
                                     horizon=n, random_state=0, **params)

    def logistic_ls():  # the default below a 100,000-row horizon, for reference
        return logistic(algorithm="ls")

    binary = {"classes": [0, 1]}
    # name -> (factory, rows, labels, partial_fit kwargs, BLAS threads, read coef_, reference)
    variants = {}
    for blas, tag in ((None, ""), (1, ", BLAS 1 thread")):
        sgd_r, sgd_c = f"SGDRegressor().partial_fit{tag}", f"SGDClassifier().partial_fit{tag}"
        variants[f"PrivateOnlineRegressor.partial_fit{tag}"] = (regressor, X, y, {}, blas, False,
                                                                sgd_r)
        if blas is None:
            variants["PrivateOnlineRegressor.partial_fit, coef_ read after every chunk"] = (
                regressor, X, y, {}, blas, True, sgd_r)
        variants[sgd_r] = (SGDRegressor, X, y, {}, blas, False, sgd_r)
        variants[f"PrivateOnlineLogistic.partial_fit{tag}"] = (logistic, Xc, labels, binary,
                                                               blas, False, sgd_c)
        if blas is None:
            variants["PrivateOnlineLogistic(algorithm=\"ls\").partial_fit"] = (
                logistic_ls, Xc, labels, binary, blas, False, sgd_c)
        variants[sgd_c] = (SGDClassifier, Xc, labels, binary, blas, False, sgd_c)
    names = list(variants)
    for name in names:  # warm-up: imports, BLAS threads, first-call caches
        make, XX, yy, kw, blas, read, _ = variants[name]
        run_stream(make, XX[: 2 * chunk], yy[: 2 * chunk], chunk, blas, kw, read)

    times = {name: [] for name in names}
    last = {}
    for rep in range(repeats):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:  # interleaved, rotating order
            make, XX, yy, kw, blas, read, _ = variants[name]
            gc.collect()
            elapsed, est = run_stream(make, XX, yy, chunk, blas, kw, read)
            times[name].append(elapsed)
            last[name] = est
        print(f"  repeat {rep + 1}/{repeats}: "
              + "; ".join(f"{k}: {times[k][-1]:.3f}s" for k in names), flush=True)

    rows, ratios = [], {}
    XX_width = {name: variants[name][1].shape[1] for name in names}
    for name in names:
        t = np.array(times[name])
        ref = variants[name][6]
        ratio = np.array(times[ref]) / t  # rows/s of this over rows/s of SGD, same repeat
        ratios[name] = float(np.median(ratio))
        est = last[name]
        if isinstance(est, (PrivateOnlineLogistic, SGDClassifier)):
            Xt, yt = tests["clf"]
            score = f"accuracy {accuracy_score(yt > 0, est.predict(Xt)):.3f}"
        else:
            Xt, yt = tests["reg"]
            score = f"R^2 {r2_score(yt, est.predict(Xt)):.3f}"
        spent = (f"{est.privacy_spent_.epsilon:.3f}" if hasattr(est, "privacy_spent_")
                 else "- (non-private)")
        algorithm = getattr(est, "algorithm_", None)
        rows.append([
            name + (f" (auto = {algorithm})" if algorithm and "algorithm=" not in name else ""),
            f"{XX_width[name]}", fmt_rate(n / np.median(t)), f"{np.median(t):.3f}",
            "1 (reference)" if ref == name else
            f"**{np.median(ratio):.2f}x** [{ratio.min():.2f}, {ratio.max():.2f}] vs {ref}",
            score, spent,
        ])
    header = ["method", "d", "rows/s (median)", "seconds per stream (median)",
              "throughput ratio vs SGD, median [min, max] of per-repeat ratios",
              "test score (20k fresh rows, last repeat)", "epsilon spent"]
    return md_table(header, rows), ratios, (data_norm, y_bound, delta, data_norm_c)


# ------------------------------------------------------------------ components
def components(n, d, chunk, repeats, bounds):
    """Per-chunk cost of the regressor's parts, each timed alone (ms, medians)."""
    data_norm, y_bound, delta = bounds[:3]
    X, y, _ = make_stream(2 * chunk, d, seed=3)
    Xc, yc = X[:chunk], y[:chunk]
    # PQFTL's parts: the regressor's default stream before issue 31, still selectable
    est = PrivateOnlineRegressor(epsilon=EPSILON, delta=delta, data_norm=data_norm,
                                 y_bound=y_bound, horizon=n, random_state=0, algorithm="ftl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.partial_fit(Xc, yc)
    ftl = est._stream.algorithm
    grid, scales = ftl.grid, est._stream.units.ftl_scales()
    A = grid.design(Xc, yc, **scales)
    rows = float_rows(ftl, Xc, yc, scales["row_scale"], scales["label_scale"])
    assert rows.inside.all(), "the benchmark's bounds should hold for every row"
    X_out = Xc.copy()
    X_out[0] *= 100.0  # one row beyond data_norm
    clipped = float_rows(ftl, X_out, yc, scales["row_scale"], scales["label_scale"])
    tree = ftl._tree
    scale = tree.noise_multiplier * tree._grid_sensitivity
    gen = np.random.default_rng(0)
    release = ftl.deferred_release()
    lines = []
    for blas, tag in ((None, "default BLAS threads"), (1, "BLAS 1 thread")):
        with threadpool_limits(limits=blas):
            sgd = SGDRegressor().partial_fit(Xc, yc)
            parts = [
                ("validate_data as a later chunk runs it (X's finiteness: in the row norms)",
                 lambda: est._validate_chunk(Xc, yc, False, y_numeric=True)),
                ("default path: row norms (is any row to clip?) and clipped labels",
                 lambda: float_rows(ftl, Xc, yc, scales["row_scale"],
                                         scales["label_scale"])),
                (f"default path: Gram X.T @ X (float, uncopied, {chunk:,} x {d})",
                 lambda: Xc.T @ Xc),
                ("default path: the whole leaf (Gram, [1, y'].T @ X, scaling, packing)",
                 lambda: rows.leaf(0, chunk)),
                ("a round with one row to clip: the leaf of a clipped copy of its rows",
                 lambda: clipped.leaf(0, chunk)),
                ("(previous path, now for rounds < 64 or > 2^20 rows) the exact grid: one copy",
                 lambda: grid.design(Xc, yc, **scales)),
                (f"(previous path) its Gram A.T @ A (exact, {chunk:,} x {A.shape[1]})",
                 lambda: A.T @ A),
                (f"{tree.dim:,} exact discrete Gaussian draws (one BLT step's noise)",
                 lambda: discrete_noise(gen, tree.dim, scale)),
                ("the solve (eigen-repair, ridge, shrinkage; once per read of coef_)",
                 lambda: (setattr(release, "_coef", None), release.coef)),
                ("(reference) SGDRegressor().partial_fit of the chunk",
                 lambda: sgd.partial_fit(Xc, yc)),
            ]
            for _, fn in parts:
                fn()  # warm
            for (label, _), ms in zip(parts, interleaved_ms([f for _, f in parts],
                                                                   repeats)):
                lines.append([tag, label, f"{ms:.2f}"])
    return md_table(["BLAS", f"part of one {chunk:,} x {d} chunk", "ms (median)"], lines)


def classifier_components(n, d, chunk, repeats, bounds):
    """Per-chunk cost of the classifier's "ls" stream (its default below a
    100,000-row horizon) and its floor, each part timed alone (ms, minima),
    BLAS limited to one thread."""
    delta, data_norm = bounds[2], bounds[3]
    X, y, _ = make_stream(2 * chunk, d, seed=3)
    inside = np.einsum("ij,ij->i", X, X) <= data_norm**2 * (1 - 1e-9)  # no row to clip
    Xc, yc = X[inside][:chunk], (y[inside][:chunk] > 0).astype(int)
    X_out = Xc.copy()
    X_out[0] *= 100.0  # one row beyond data_norm: its round is summed from a copy
    est = PrivateOnlineLogistic(epsilon=EPSILON, delta=delta, data_norm=data_norm,
                                horizon=n, random_state=0, algorithm="ls")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(5):  # a stream some calls in: its Gram positive definite (Cholesky)
            est.partial_fit(Xc, yc, classes=[0, 1])
    stream = est._stream
    ls, units = stream.algorithm, stream.units
    encoded = est._encode(yc)
    rows = units.lazy_rows(Xc)
    assert _uncopied_leaf(ls, rows, ls._coded(encoded)) is not None, "no row may clip here"
    copied = units.rows(Xc)  # the previous path: the unit rows written out
    rows_out = units.lazy_rows(X_out)
    assert _uncopied_leaf(ls, rows_out, ls._coded(encoded)) is None
    leaf = ls.leaf(rows, encoded)
    live = {"_stream": stream, "_rng": est._rng}

    # the BLT draws its noise two steps at a time: one step that draws the
    # block and one that takes the block's second row, each on a copy
    drawn = copy.copy(ls._tree)
    if drawn._pool.shape[0] == 0:
        drawn.add(leaf, 1)
    empty = copy.copy(drawn)
    empty.add(leaf, 1)
    assert drawn._pool.shape[0] == 1 and empty._pool.shape[0] == 0

    def step():  # two BLT steps (halved below): the live mechanism is not advanced
        copy.copy(empty).add(leaf, 1)
        copy.copy(drawn).add(leaf, 1)

    def call():  # a whole later call, on a checkpoint of the stream
        clone = copy.copy(est)
        clone._stream = stream.checkpoint({})
        clone.partial_fit(Xc, yc)

    lines = []
    with threadpool_limits(limits=1):
        sgd = SGDClassifier().partial_fit(Xc, yc, classes=[0, 1])
        parts = [
            ("validate_data as a later chunk runs it", lambda: est._validate_chunk(Xc, yc, False)),
            ("labels encoded (+-1)", lambda: est._encode(yc)),
            ("row norms: is any row to clip? (UnitSpace.lazy_rows, no copy)",
             lambda: units.lazy_rows(Xc)),
            (f"**Gram alone**: BLAS syrk of the caller's {chunk:,} x {d} rows",
             lambda: _syrk(1.0, Xc.T, trans=0)),
            ("the whole leaf (Gram, [1, y] products, scaling, packing)",
             lambda: ls.leaf(rows, encoded)),
            ("a round with one row to clip: the leaf of a copy of its unit rows",
             lambda: ls.leaf(rows_out, encoded)),
            (f"**one BLT step**: {ls._tree.dim:,} exact discrete Gaussian draws and buffers "
             "(drawn two steps at a time: the mean of the two steps)", step),
            ("**the solve** of the published model (two Cholesky of 55 x 55)", ls._publish),
            ("the cost stated (event)", ls.event),
            ("the transaction's copy: checkpoint (now)",
             lambda: {"_stream": stream.checkpoint({}), "_rng": copy.deepcopy(est._rng)}),
            ("(before) the transaction's deep copy", lambda: copy.deepcopy(live)),
            ("(before) the unit rows copied (UnitSpace.rows: scale, clip, constant column)",
             lambda: units.rows(Xc)),
            (f"(before) the leaf of the copied rows (X.T @ X of {chunk:,} x {d + 1})",
             lambda: ls.leaf(copied, encoded)),
            ("the whole partial_fit call (on a checkpoint of the stream)", call),
            ("(reference) SGDClassifier().partial_fit of the chunk",
             lambda: sgd.partial_fit(Xc, yc)),
        ]
        for _, fn in parts:
            fn()  # warm
        # minima, not medians: each part's cost without another tenant's job
        # preempting it (on this shared machine the medians of the short parts
        # are mostly the other jobs' time slices)
        medians = interleaved_ms([f for _, f in parts], repeats, stat=np.min)
    medians = [m / 2 if fn is step else m for m, (_, fn) in zip(medians, parts)]
    ms = dict(zip((label for label, _ in parts), medians))
    for (label, _), value in zip(parts, medians):
        lines.append([label, f"{value:.3f}"])
    sgd_ms = medians[-1]
    floor = sum(v for k, v in ms.items() if k.startswith("**"))  # Gram, BLT step, solve
    table = md_table([f"part of one {chunk:,} x {d} chunk (BLAS 1 thread)",
                      f"ms (minimum of {repeats})"],
                     lines)
    gram = next(v for k, v in ms.items() if k.startswith("**Gram"))
    # a float32 Gram's worst-case rounding bound (float_leaf_sensitivity's E
    # with u = 2^-24), in units of the leaf's sensitivity: why it is no way out
    g32 = (2 * chunk + 8) * 2.0**-24 / (1 - (2 * chunk + 8) * 2.0**-24)
    e32 = g32 * chunk * math.hypot(ls.row_bound**2 / ls.V_scale, ls.row_bound / ls.u_scale)
    # what every call must also do: validate (SGD too), encode the labels, and
    # test every row's norm (clipping, the privacy bound)
    needed = floor + sum(v for k, v in ms.items()
                         if k.startswith(("validate_data", "labels encoded", "row norms")))
    way_out = ("what would reach it changes the guarantee or the model: a float32 "
               f"Gram (its worst-case rounding, 2 E = {2 * e32:.2g} times the leaf's "
               f"sensitivity at rounds of {chunk:,} rows, would swamp the noise "
               "calibration), or an O(n d) stream: what `algorithm=\"auto\"` takes over a "
               "horizon of 100,000 rows or more (\"ftrl-momentum\", the throughput table; "
               "`docs/benchmarks/classifier_large.md`), and not below, where \"ls\" is "
               "ahead on credit default (`docs/benchmarks/stream.md`).")
    if needed >= sgd_ms:
        verdict = (f"With the validation, the label encoding and the row norms that "
                   f"clipping needs, a call can take no less than {needed:.2f} ms: "
                   f"{sgd_ms / needed:.2f}x at best (minima of the parts; the throughput "
                   "table's ratios are medians of whole streams, another measure), however "
                   "lean the rest of its shell. "
                   f"So 1x `SGDClassifier` at d = {d} is out of reach of a stream that sums "
                   f"a d x d Gram of every row; " + way_out)
    else:
        verdict = (f"With the validation, the label encoding and the row norms that "
                   f"clipping needs, a call can take no less than {needed:.2f} ms "
                   f"({sgd_ms / needed:.2f}x): the rest of the shell is what separates "
                   "the two here.")
    return table, {"floor": floor, "sgd": sgd_ms, "call": medians[-2], "gram": gram,
                   "verdict": verdict}


# ---------------------------------------------------------------------- memory
def stream_chunks(T, d, chunk, seed=0):
    rng = np.random.default_rng(seed)
    coef = rng.standard_normal(d)
    for start in range(0, T, chunk):
        m = min(chunk, T - start)
        X = rng.standard_normal((m, d)) / np.sqrt(d)
        yield X, X @ coef + 0.1 * rng.standard_normal(m)


def memory_run(T, d, chunk, with_estimator):
    data_norm, y_bound = public_bounds(d, np.ones(d), 0.1)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    est = None
    if with_estimator:
        est = PrivateOnlineRegressor(epsilon=EPSILON, delta=1e-7, data_norm=data_norm,
                                     y_bound=y_bound, horizon=None, random_state=0)
    for X, y in stream_chunks(T, d, chunk):
        if est is not None:
            est.partial_fit(X, y)
    del X, y
    elapsed = time.perf_counter() - t0
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out = {"peak": peak - base, "retained": current - base, "seconds": elapsed}
    if est is not None:
        out["pickle"] = len(pickle.dumps(est))
        out["public_pickle"] = len(pickle.dumps(est.public_model()))
        out["eps"] = est.privacy_spent_.epsilon
        out["n"] = est.n_samples_seen_
    return out


def memory(Ts, d, chunk):
    res = {}
    for T in Ts:
        print(f"  memory: T = {T:,}", flush=True)
        res[T] = (memory_run(T, d, chunk, False), memory_run(T, d, chunk, True))
    kib = lambda b: f"{b / 1024:,.1f} KiB"  # noqa: E731
    header = ["quantity"] + [f"T = {T:,}" for T in Ts]
    rows = [
        ["rows seen (n_samples_seen_)"] + [f"{res[T][1]['n']:,}" for T in Ts],
        ["peak traced memory, streaming loop with partial_fit"]
        + [kib(res[T][1]["peak"]) for T in Ts],
        ["peak traced memory, same loop generating chunks only (baseline)"]
        + [kib(res[T][0]["peak"]) for T in Ts],
        ["peak attributable to skdpol (difference)"]
        + [kib(res[T][1]["peak"] - res[T][0]["peak"]) for T in Ts],
        ["memory still held after the loop (the estimator)"]
        + [kib(res[T][1]["retained"]) for T in Ts],
        ["len(pickle.dumps(est)) (curator state, never publish)"]
        + [f"{res[T][1]['pickle']:,} B" for T in Ts],
        ["len(pickle.dumps(est.public_model()))"]
        + [f"{res[T][1]['public_pickle']:,} B" for T in Ts],
        ["epsilon spent so far (horizon=None: every length stays within epsilon)"]
        + [f"{res[T][1]['eps']:.3f}" for T in Ts],
        ["seconds (under tracemalloc, indicative only)"]
        + [f"{res[T][1]['seconds']:.2f}" for T in Ts],
    ]
    return md_table(header, rows), res


# --------------------------------------------------------------------- profile
def profile(n, d, chunk, bounds, top=10, blas_threads=None, classifier=False):
    """cProfile of the default stream's partial_fit: the regressor at d, or the
    classifier (``classifier=True``, d being then its width)."""
    data_norm, y_bound, delta, data_norm_c = bounds
    X, y, _ = make_stream(n, d)
    kw = {}
    if classifier:
        y, kw = (y > 0).astype(int), {"classes": [0, 1]}
        make = lambda: PrivateOnlineLogistic(  # noqa: E731
            epsilon=EPSILON, delta=delta, data_norm=data_norm_c, horizon=n, random_state=0)
    else:
        make = lambda: PrivateOnlineRegressor(  # noqa: E731
            epsilon=EPSILON, delta=delta, data_norm=data_norm, y_bound=y_bound, horizon=n,
            random_state=0)
    run_stream(make, X[: 2 * chunk], y[: 2 * chunk], chunk, blas_threads, kw)  # warm-up
    prof = cProfile.Profile()
    with threadpool_limits(limits=blas_threads):
        prof.enable()
        run_stream(make, X, y, chunk, fit_kwargs=kw)
        prof.disable()
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf).sort_stats("cumulative")
    st.print_stats(top + 6)  # a few wrapper frames come first
    st.sort_stats("tottime").print_stats(top)
    return buf.getvalue()


# ------------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (< 1 min)")
    ap.add_argument("--repeats", type=int, default=None, help="throughput repeats (default 7)")
    ap.add_argument("--profile", action="store_true",
                    help="print a cProfile of skdpol's partial_fit on the d=90 stream")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"Markdown output (default {DEFAULT_OUT.relative_to(REPO)}; "
                         "--quick writes nothing unless --out is given)")
    args = ap.parse_args(argv)

    if args.quick:
        n, d, d_clf, chunk, repeats, part_repeats = 20_000, 90, 54, 2_000, 2, 5
        Ts, d_mem, chunk_mem = (10_000, 100_000), 20, 10_000
    else:
        n, d, d_clf, chunk, repeats, part_repeats = 200_000, 90, 54, 10_000, 7, 41
        Ts, d_mem, chunk_mem = (100_000, 1_000_000), 20, 10_000
    repeats = args.repeats or repeats
    out = args.out if args.out is not None else (None if args.quick else DEFAULT_OUT)

    print(f"throughput: n = {n:,}, d = {d} (classifier {d_clf}), chunks of {chunk:,}, "
          f"{repeats} repeats", flush=True)
    blas = blas_description()
    load_before = os.getloadavg()
    t_table, ratios, bounds = throughput(n, d, d_clf, chunk, repeats)
    print(t_table)
    print("components", flush=True)
    c_table = components(n, d, chunk, part_repeats, bounds)
    print(c_table)
    print("classifier components", flush=True)
    cc_table, cc = classifier_components(n, d_clf, chunk, part_repeats, bounds)
    print(cc_table)
    print(f"memory: d = {d_mem}, T in {Ts}, chunks of {chunk_mem:,}", flush=True)
    m_table, _ = memory(Ts, d_mem, chunk_mem)
    print(m_table)
    load_after = os.getloadavg()
    if args.profile:
        for blas_threads in (None, 1):
            for clf, width in ((False, d), (True, d_clf)):
                print(f"cProfile of {'PrivateOnlineLogistic' if clf else 'PrivateOnlineRegressor'}"
                      f".partial_fit, d = {width}, BLAS threads: {blas_threads or 'default'}")
                print(profile(n, width, chunk, bounds, blas_threads=blas_threads,
                              classifier=clf))

    command = command_line("bench_speed_memory.py")
    data_norm, y_bound, delta, data_norm_c = bounds
    verdict = lambda r, target: "met" if r >= target else "NOT met"  # noqa: E731
    r_reg = ratios["PrivateOnlineRegressor.partial_fit"]
    r_reg1 = ratios["PrivateOnlineRegressor.partial_fit, BLAS 1 thread"]
    r_read = ratios["PrivateOnlineRegressor.partial_fit, coef_ read after every chunk"]
    r_log = ratios["PrivateOnlineLogistic.partial_fit"]
    r_log1 = ratios["PrivateOnlineLogistic.partial_fit, BLAS 1 thread"]
    r_ls = ratios["PrivateOnlineLogistic(algorithm=\"ls\").partial_fit"]
    b_m = momentum_round(n)  # the regressor's rounds at horizon = n
    b_c = momentum_round(n, classifier=True)  # the classifier's
    doc = f"""# Throughput and memory of the streaming estimators' `partial_fit`

Produced by `{command}` (the script is `benchmarks/bench_speed_memory.py`;
`--quick` is a smoke run that writes no file; `--profile` also prints a
cProfile of the default streams' `partial_fit`).

{chr(10).join(machine_lines())}
- BLAS (threadpoolctl): {blas}
- load average (1, 5, 15 min) before / after the measurements:
  {" ".join(f"{x:.2f}" for x in load_before)} / {" ".join(f"{x:.2f}" for x in load_after)}
  (2 cores; other tenants' jobs share them)

## Throughput: one stream of {n:,} rows in chunks of {chunk:,}; d = {d} (regressors), d = {d_clf} (classifiers)

Rows are N(0, I/d) (norm about 1), labels linear plus N(0, 0.1^2) noise
(their sign for the classifiers). skdpol at its defaults:
`PrivateOnlineRegressor(epsilon={EPSILON:g}, delta={delta:.3g}, data_norm={data_norm:.3f},
y_bound={y_bound:.3f}, horizon={n}, random_state=0)` and
`PrivateOnlineLogistic(epsilon={EPSILON:g}, delta={delta:.3g}, data_norm={data_norm_c:.3f},
horizon={n}, random_state=0)`: `algorithm="auto"` (the regressor's
"ftrl-momentum": at horizon = {n:,} rows, {-(-n // b_m):,} rounds of {b_m} rows
(`skdpol.online.momentum_round`: rounds of 100 up to a 100,000-row horizon,
at most 1,000 rounds of at most 1,000 rows beyond), so {chunk // b_m} gradient
sums and BLT steps of d + 1 noise draws per chunk; the classifier's
"ftrl-momentum" too from a 100,000-row horizon on, in {-(-n // b_c):,} rounds of {b_c} rows
(`momentum_round(n, classifier=True)`: ceil(horizon / 200), at most 1,000, each
with the step of at most 600 rows), so {chunk // b_c} gradient sums and BLT steps per chunk;
below that horizon its default is "ls", measured here too (`algorithm="ls"`):
one round per call, so one Gram and one BLT step of (d+1)(d+2)/2 + d + 1
draws per chunk, and one solve per published model), the hardened discrete
sampler, the BLT. The bounds come from the generating distribution (the 1 - 1e-6
quantile of the row norm, 5 standard deviations of y), not from the drawn
rows. SGD: `SGDRegressor()` / `SGDClassifier()` with their defaults (one
pass over the chunk per `partial_fit` call). A fresh estimator consumes
the whole stream {repeats} times per method; all methods run interleaved
(rotating order) within each repeat after one warm-up pass; the ratio is
taken inside each repeat (SGD's seconds over the method's seconds, i.e.
rows/s over SGD's rows/s) and the table gives the median over repeats. Both
BLAS settings are shown, each against SGD under the same setting (SGD's own
loop uses no BLAS threads): OpenBLAS's default of 2 threads on this shared
2-core machine halves a Gram when a core is free and is slow and erratic
when another job holds one.

{t_table}

Targets (issue 31's acceptance): the regressor's `partial_fit` >= {TARGET_REGRESSOR:g}x
`SGDRegressor.partial_fit` (d = {d}), the classifier's >= {TARGET_LOGISTIC:g}x
`SGDClassifier.partial_fit` (d = {d_clf}), at the defaults, same run.
Measured median ratios:

- regressor: **{r_reg:.2f}x** with the default BLAS threads, {r_reg1:.2f}x with one
  thread (target {verdict(r_reg, TARGET_REGRESSOR)} / {verdict(r_reg1, TARGET_REGRESSOR)});
  {r_read:.2f}x when `coef_` is read after every chunk;
- classifier: **{r_log:.2f}x** with the default BLAS threads, {r_log1:.2f}x with one
  thread (target {verdict(r_log, TARGET_LOGISTIC)} / {verdict(r_log1, TARGET_LOGISTIC)});
  its "ls", the default below a 100,000-row horizon, {r_ls:.2f}x.

Where the default streams' time goes (`--profile` prints a cProfile of
each). The regressor's "ftrl-momentum" takes rounds of {b_m} rows here, so a
{chunk:,}-row call is {chunk // b_m} rounds, each two gemv on {b_m} x {d} rows (margins,
gradient sum), the Huber derivative, one BLT step of d + 1 coordinates
(~15 ufunc calls on (buffers, d + 1) arrays; its discrete Gaussian noise is
drawn in blocks of ~4,096 coordinates, one block every ~45 rounds, a few
percent of the step) and ~10 vector updates (momentum, step, average): about
40 small numpy calls a round, whose call overhead, not arithmetic, is the
cost; SGD's Cython loop has none. That is why a horizon past 100,000 rows
takes bigger rounds (rounds of 100 ran at 0.5-0.7x SGD here;
docs/benchmarks/momentum_rounds.md measures what rounds of 100, 200 and 400
rows cost the model); the classifier's rounds of {b_c} rows cost
{chunk // b_c} such rounds a call. The classifier's "ls" is one round per
call, and its d x d Gram of the call's {chunk:,} x {d_clf} rows (O(n d^2),
against SGD's O(n d); summed from the caller's rows, uncopied) is most of a
call by itself: the next section. With the default 2 BLAS threads on this
shared 2-core machine the Gram is slow and erratic.

The "coef_ read after every chunk" row reads the published model after every
call (with "ftrl-momentum" the model is already there; with "ftl" the solve
ran lazily on the first read).

## Where a chunk of the classifier's "ls" stream goes (its default below a 100,000-row horizon), and its floor

Each part timed alone on one {chunk:,} x {d_clf} chunk (BLAS limited to one
thread; the same chunk every time, so its rows are in cache: in the stream
each chunk is read from memory, which makes the Gram ~15 % dearer), the
parts in turn within each repeat, in the same run; the minimum of
{part_repeats} (each part's cost when no other tenant's job preempts it: on
this shared machine the medians of short parts are mostly other jobs' time
slices). Rows marked "(before)" are the parts this release removed
from a call: the copy of the unit rows (scaled, clipped, the constant
column appended) and its Gram, and the deep copy of the stream a call
takes so that a failed call changes nothing (now a checkpoint: `ls`
replaces its arrays instead of writing them in place).

{cc_table}

The floor of a call is what no implementation of this stream avoids: the
Gram, one BLT step's noise and the solve of the published model,
**{cc["floor"]:.2f} ms**, against SGD's whole call, **{cc["sgd"]:.2f} ms**
(its own validation included): {cc["sgd"] / cc["floor"]:.2f}x at best; the
Gram alone is {cc["gram"] / cc["sgd"]:.0%} of SGD's call. A call of "ls"
adds what SGD also does (validation, label encoding) and what any private
stream adds (the row norms that clipping needs, the transaction's copy, the
cost stated, the published model): {cc["call"]:.2f} ms a call here,
{cc["sgd"] / cc["call"]:.2f}x. {cc["verdict"]}

The rows are summed in float64 from the caller's chunk (`X^T X` times
the public scale squared, `1^T X`, `y^T X`); a round with a row to clip
sums a copy of its unit rows instead. The rounding bound of this sum is
derived next to the code (`skdpol/online/_lsq.py`, "Uncopied rounds") and
lies inside the one the leaf's sensitivity already carried, so the noise is
unchanged; the released models move in their last bits only.

## Where a chunk of the regressor's `algorithm="ftl"` goes (PQFTL, the default before issue 31)

Each part timed alone on one {chunk:,} x {d} chunk, the parts in turn within
each repeat, in the same run (medians
of {part_repeats}):

{c_table}

A round none of whose rows needs clipping (every round here) is summed in
float64 straight from the caller's rows: one pass for the row norms, one
Gram `X.T @ X` (BLAS syrk), one product `[1, y'].T @ X`; no copy. A round
with a row to clip sums a clipped copy of its rows instead. The rounding
error is not zero, so the leaf's sensitivity is raised by a bound on it
that holds for any data, summation order and thread count
(`skdpol/online/_ftl.py`, "Float leaves without a copy"): by a factor of
about 1 + 2e-8 for rounds of 10,000 rows. Rounds of fewer than 64 rows
take the exact fixed-point grid instead (scaled, clipped, truncated to
integers of at most 19 bits here, one copy), whose Gram is exact in any
order; before this release every round did. The Gram (O(n d^2)) and the noise of one
BLT step (d'(d'+1)/2 + d' = 4,277 exact discrete Gaussian draws, d' = d + 1)
are the floor; SGD does O(n d) work. What the floor does not allow without
weakening the guarantee: a float32 Gram (its error bound, about 2^29 times
larger, would no longer be small against the sensitivity at this size),
the float sampler (which the review forbade). Per row, the validation, the
row norms, the Gram and the side product each read the chunk once, against
SGD's single pass; the noise and the BLT step are per chunk. Since issue 31
the regressor's default is the O(n d) first-order stream "ftrl-momentum",
which has no Gram (the throughput table above).

## Memory flat in T: d = {d_mem}, `horizon=None`, chunks of {chunk_mem:,} made on the fly

Each chunk is drawn inside the loop and dropped after its `partial_fit`, so no
run holds the whole stream. tracemalloc traces the streaming loop from the
estimator's construction to the last call; the baseline row is the same loop
without the estimator (the chunk generation alone), the regressor at its
default stream ("ftrl-momentum"). With `horizon=None` the prefix sums go
through a chain of BLT epochs; the estimator keeps the model, momentum,
average and last release and a few buffers of the BLT, each of d' floats
with d' = d + 1 (intercept column): O(d) state, whatever T ("ftl" keeps
d'(d'+1)/2 + d' floats a buffer).

{m_table}
"""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(doc)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Throughput and memory of PrivateOnlineRegressor.partial_fit.

1. Throughput: one stream of 200,000 rows, d = 90, in chunks of 10,000,
   through ``PrivateOnlineRegressor(...).partial_fit`` (batch_size 1 and 100)
   and through ``sklearn.linear_model.SGDRegressor().partial_fit``, interleaved
   in the same run and repeated; reported as medians of rows/s and of the
   per-repeat ratio skdpol / SGD.
2. Memory flat in T: d = 20, T = 100,000 and 1,000,000 rows in chunks of
   10,000 made on the fly, ``horizon=None``; peak traced memory (tracemalloc)
   of the streaming loop and ``len(pickle.dumps(est))`` at the end.

Writes docs/benchmarks/speed_memory.md (not with --quick, unless --out).

    python benchmarks/bench_speed_memory.py            # full run (a few minutes)
    python benchmarks/bench_speed_memory.py --quick    # smoke run, < 30 s
    python benchmarks/bench_speed_memory.py --profile  # also print a cProfile
"""

import argparse
import cProfile
import gc
import io
import os
import pickle
import pstats
import sys
import time
import tracemalloc
from pathlib import Path

from _common import REPO, blas_description, command_line, machine_lines, md_table  # also puts the checkout on sys.path

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from sklearn.linear_model import SGDRegressor  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skdpol import PrivateOnlineRegressor  # noqa: E402

DEFAULT_OUT = REPO / "docs" / "benchmarks" / "speed_memory.md"
EPSILON = 1.0


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


# ------------------------------------------------------------------ throughput
def run_stream(make_est, X, y, chunk, blas_threads=None):
    """Consume the stream with a fresh estimator; return (seconds, estimator)."""
    with threadpool_limits(limits=blas_threads):
        est = make_est()
        t0 = time.perf_counter()
        for start in range(0, X.shape[0], chunk):
            est.partial_fit(X[start:start + chunk], y[start:start + chunk])
        return time.perf_counter() - t0, est


SGD_DEFAULT = "SGDRegressor().partial_fit"
SGD_ONE = "SGDRegressor().partial_fit, BLAS 1 thread"


def throughput(n, d, chunk, repeats, seed=0):
    X, y, coef = make_stream(n, d, seed=seed)
    rng_t = np.random.default_rng(seed + 1)
    Xt = rng_t.standard_normal((20_000, d)) / np.sqrt(d)
    yt = Xt @ coef + 0.1 * rng_t.standard_normal(Xt.shape[0])
    data_norm, y_bound = public_bounds(d, coef, 0.1)

    def skdpol_factory(batch_size):
        return lambda: PrivateOnlineRegressor(
            epsilon=EPSILON, data_norm=data_norm, y_bound=y_bound, horizon=n,
            batch_size=batch_size, random_state=0)

    # name -> (factory, BLAS thread limit (None = library default), SGD to compare with)
    variants = {
        "skdpol partial_fit, batch_size=1": (skdpol_factory(1), None, SGD_DEFAULT),
        "skdpol partial_fit, batch_size=100": (skdpol_factory(100), None, SGD_DEFAULT),
        SGD_DEFAULT: (SGDRegressor, None, SGD_DEFAULT),
        "skdpol partial_fit, batch_size=1, BLAS 1 thread": (skdpol_factory(1), 1, SGD_ONE),
        SGD_ONE: (SGDRegressor, 1, SGD_ONE),
    }
    names = list(variants)
    for name in names:  # warm-up: imports, BLAS threads, first-call caches
        make, blas, _ = variants[name]
        run_stream(make, X[: 2 * chunk], y[: 2 * chunk], chunk, blas)

    times = {name: [] for name in names}
    last = {}
    for rep in range(repeats):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:  # interleaved, rotating order
            make, blas, _ = variants[name]
            gc.collect()
            elapsed, est = run_stream(make, X, y, chunk, blas)
            times[name].append(elapsed)
            last[name] = est
        print(f"  repeat {rep + 1}/{repeats}: "
              + "; ".join(f"{k}: {times[k][-1]:.3f}s" for k in names), flush=True)

    # one-shot fit on the whole array, for context (alternating BLAS settings)
    fit_times = {None: [], 1: []}
    for _ in range(repeats):
        for blas_threads in fit_times:
            with threadpool_limits(limits=blas_threads):
                est_fit = PrivateOnlineRegressor(epsilon=EPSILON, data_norm=data_norm,
                                                 y_bound=y_bound, random_state=0)
                t0 = time.perf_counter()
                est_fit.fit(X, y)
                fit_times[blas_threads].append(time.perf_counter() - t0)

    rows, ratios = [], {}
    for name in names:
        t = np.array(times[name])
        ref = variants[name][2]
        ratio = np.array(times[ref]) / t  # rows/s of this over rows/s of SGD, same repeat
        ratios[name] = float(np.median(ratio))
        est = last[name]
        spent = (f"{est.privacy_spent_.epsilon:.3f}" if hasattr(est, "privacy_spent_")
                 else "- (non-private)")
        rows.append([
            name, fmt_rate(n / np.median(t)), f"{np.median(t):.3f}",
            "1 (reference)" if ref == name else
            f"**{np.median(ratio):.2f}x** [{ratio.min():.2f}, {ratio.max():.2f}] vs {ref}",
            f"{r2_score(yt, est.predict(Xt)):.3f}", spent,
        ])
    for blas_threads, ft in fit_times.items():
        ft = np.array(ft)
        rows.append([
            "(context) skdpol fit, whole array, one release"
            + (", BLAS 1 thread" if blas_threads == 1 else ""),
            fmt_rate(n / np.median(ft)), f"{np.median(ft):.3f}", "- (not a stream)",
            f"{r2_score(yt, est_fit.predict(Xt)):.3f}", f"{est_fit.privacy_spent_.epsilon:.3f}",
        ])
    header = ["method", "rows/s (median)", "seconds per stream (median)",
              "throughput ratio vs SGD, median [min, max] of per-repeat ratios",
              "test R^2 (20k fresh rows, last repeat)", "epsilon spent"]
    return md_table(header, rows), ratios, (data_norm, y_bound)


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
        est = PrivateOnlineRegressor(epsilon=EPSILON, data_norm=data_norm,
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
        ["epsilon spent so far (horizon=None: calibrated so that no length exceeds 1)"]
        + [f"{res[T][1]['eps']:.3f}" for T in Ts],
        ["seconds (under tracemalloc, indicative only)"]
        + [f"{res[T][1]['seconds']:.2f}" for T in Ts],
    ]
    return md_table(header, rows), res


# --------------------------------------------------------------------- profile
def profile(n, d, chunk, data_norm, y_bound, top=8, blas_threads=None):
    X, y, _ = make_stream(n, d)
    make = lambda: PrivateOnlineRegressor(  # noqa: E731
        epsilon=EPSILON, data_norm=data_norm, y_bound=y_bound, horizon=n, random_state=0)
    run_stream(make, X[: 2 * chunk], y[: 2 * chunk], chunk, blas_threads)  # warm-up
    prof = cProfile.Profile()
    with threadpool_limits(limits=blas_threads):
        prof.enable()
        run_stream(make, X, y, chunk)
        prof.disable()
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf).sort_stats("cumulative")
    st.print_stats(top + 6)  # a few wrapper frames come first
    st.sort_stats("tottime").print_stats(top)
    return buf.getvalue()


# ------------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (< 30 s)")
    ap.add_argument("--repeats", type=int, default=None, help="throughput repeats (default 7)")
    ap.add_argument("--profile", action="store_true",
                    help="print a cProfile of skdpol's partial_fit on the d=90 stream")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"Markdown output (default {DEFAULT_OUT.relative_to(REPO)}; "
                         "--quick writes nothing unless --out is given)")
    args = ap.parse_args(argv)

    if args.quick:
        n, d, chunk, repeats = 20_000, 90, 2_000, 2
        Ts, d_mem, chunk_mem = (10_000, 100_000), 20, 10_000
    else:
        n, d, chunk, repeats = 200_000, 90, 10_000, 7
        Ts, d_mem, chunk_mem = (100_000, 1_000_000), 20, 10_000
    repeats = args.repeats or repeats
    out = args.out if args.out is not None else (None if args.quick else DEFAULT_OUT)

    print(f"throughput: n = {n:,}, d = {d}, chunks of {chunk:,}, {repeats} repeats", flush=True)
    blas = blas_description()
    load_before = os.getloadavg()
    t_table, ratios, (data_norm, y_bound) = throughput(n, d, chunk, repeats)
    print(t_table)
    print(f"memory: d = {d_mem}, T in {Ts}, chunks of {chunk_mem:,}", flush=True)
    m_table, _ = memory(Ts, d_mem, chunk_mem)
    print(m_table)
    load_after = os.getloadavg()
    if args.profile:
        for blas_threads in (None, 1):
            print(f"cProfile of skdpol partial_fit, BLAS threads: {blas_threads or 'default'}")
            print(profile(n, d, chunk, data_norm, y_bound, blas_threads=blas_threads))

    command = command_line("bench_speed_memory.py")
    r_def = ratios["skdpol partial_fit, batch_size=1"]
    r_100 = ratios["skdpol partial_fit, batch_size=100"]
    r_one = ratios["skdpol partial_fit, batch_size=1, BLAS 1 thread"]
    verdict = lambda r: "met" if r >= 1.5 else "NOT met"  # noqa: E731
    doc = f"""# Throughput and memory of `PrivateOnlineRegressor.partial_fit`

Produced by `{command}` (the script is `benchmarks/bench_speed_memory.py`;
`--quick` is a smoke run that writes no file; `--profile` also prints a
cProfile of skdpol's `partial_fit`).

{chr(10).join(machine_lines())}
- BLAS (threadpoolctl): {blas}
- load average (1, 5, 15 min) before / after the measurements:
  {" ".join(f"{x:.2f}" for x in load_before)} / {" ".join(f"{x:.2f}" for x in load_after)}
  (2 cores; other tenants' jobs share them)

## Throughput: d = {d}, one stream of {n:,} rows in chunks of {chunk:,}

Rows are N(0, I/{d}) (norm about 1), labels linear plus N(0, 0.1^2) noise.
skdpol: `PrivateOnlineRegressor(epsilon={EPSILON:g}, data_norm={data_norm:.3f},
y_bound={y_bound:.3f}, horizon={n}, random_state=0)` (plus `batch_size`); the
bounds come from the generating distribution (the 1 - 1e-6 quantile of the
row norm, 5 standard deviations of y), not from the drawn rows. SGD:
`SGDRegressor()` with its defaults (one pass over the chunk per `partial_fit`
call). A fresh estimator consumes the whole stream {repeats} times per
method; all methods run interleaved (rotating order) within each repeat after
one warm-up pass; the ratio is taken inside each repeat (SGD's seconds over
the method's seconds, i.e. rows/s over SGD's rows/s) and the table gives the
median over repeats. "BLAS 1 thread" rows run under
`threadpoolctl.threadpool_limits(1)`: on this shared 2-core machine
OpenBLAS's default of 2 threads makes numpy's dense kernels slower and very
erratic whenever another job holds a core (in exploratory runs single
`partial_fit` calls of about 10 ms took 100-400 ms, and one 200,000 x 91
`X.T @ X` took about 4 s against 0.1 s on one thread), so both settings are
shown, each against SGD under the same setting. SGD's own loop does not use
BLAS threads.

{t_table}

Target stated for the library: skdpol `partial_fit` throughput >= 1.5x that
of `SGDRegressor.partial_fit` on this stream. Measured median ratio with
batch_size=1: **{r_def:.2f}x with the default BLAS threads, {r_one:.2f}x with
BLAS limited to 1 thread: target {verdict(r_def)} / {verdict(r_one)}**.
The gap is structural at this width: each call of skdpol forms the
d x d Gram matrix of the chunk (O(n d^2) flops, about 4 ms per 10,000 x 90
chunk on one core, near the core's peak), validates the chunk and, per
release, eigendecomposes the noisy (d+1) x (d+1) matrix, where SGD does O(n d)
work. The chunk is no longer copied (clipping copies only when a row is
clipped; the intercept column is folded into the Gram analytically). What
would close the gap: (1) a float32 Gram (2x faster here), not taken because
its data-dependent rounding error is not small against the sensitivity, so
the guarantee would no longer be rigorous; (2) the O(n d) gradient
algorithms of seed 002 (private FTAL / IGD) for throughput-critical streams.

`batch_size` (rows per tree leaf) does not change the work per call: each
call reduces its whole chunk with one `X.T @ X` whatever `batch_size` is
(median ratio vs SGD {r_100:.2f}x with batch_size=100 against {r_def:.2f}x with
batch_size=1; the work is the same, so a difference between the two is timing
noise). It changes the privacy noise:
with `batch_size=100` the tree has `horizon // 100` leaves, hence fewer levels
(about log2 of the leaf count) and less noise in each release, which shows
in the R^2 column. The R^2 column is context only: SGD is not private.

## Memory flat in T: d = {d_mem}, `horizon=None`, chunks of {chunk_mem:,} made on the fly

Each chunk is drawn inside the loop and dropped after its `partial_fit`, so no
run holds the whole stream. tracemalloc traces the streaming loop from the
estimator's construction to the last call; the baseline row is the same loop
without the estimator (the chunk generation alone). The estimator keeps the
exact running sums and one cached noise vector per tree level, each of
d'(d'+1)/2 + d' floats with d' = d + 1 (intercept column), so its state is
O(d^2 log T).

{m_table}
"""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(doc)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

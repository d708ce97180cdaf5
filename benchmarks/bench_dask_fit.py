"""PrivateOnlineLogistic.fit on a Dask array against dask-ml's non-private LogisticRegression.

One run, one ``dask.distributed.LocalCluster`` (2 worker processes of 1
thread, loopback). The training rows are generated on the workers block by
block (a logistic model on d standard-normal features, blocks of 100,000
rows, seeded per block) and persisted there, so both estimators read the
same blocks from worker memory; the client never holds them. Measured on the
same data, one after the other, each the best of ``--repeats`` fits:

* ``PrivateOnlineLogistic(epsilon=1, delta=1e-7).fit`` on the dask array
  (noisy gradient descent, each step's gradient sums computed per block on
  the workers, the noise added once per step on the client), public
  ``data_norm`` and ``classes``;
* ``dask_ml.linear_model.LogisticRegression().fit`` (non-private; its
  defaults: ADMM, ``max_iter=100``, ``C=1``);
* the same private fit in memory on the computed numpy arrays, to check the
  release is the in-memory one (max |coef difference|; "identical" means bit
  for bit).

Rows per second = training rows / wall seconds of ``fit`` (block generation
and persisting excluded; both fits start from the persisted blocks).
Accuracy on 100,000 fresh test rows from the same model. The ratio column
is rows per second over dask-ml's in the same run.

Writes docs/benchmarks/dask_fit.md (not with --quick, unless --out).

    python benchmarks/bench_dask_fit.py                 # 1,000,000 rows, d = 30
    python benchmarks/bench_dask_fit.py --quick --out /tmp/dask_fit.md   # 100,000 rows
"""

import math
import time
import warnings

from _common import command_line, machine_lines, md_table, report_parser, write_report

import numpy as np  # noqa: E402

from skdpol import PrivacyLeakWarning, PrivateOnlineLogistic  # noqa: E402

EPS, DELTA, D, BLOCK = 1.0, 1e-7, 30, 100_000
# rows are N(0, I_d): ||x||^2 ~ chi^2_d, and P(||x|| > 2 sqrt(d)) < 1e-20 for d = 30;
# a public bound from the generator, as a schema's would be (rows beyond are clipped)
DATA_NORM = 2.0 * math.sqrt(D)
COEF = np.linspace(1.0, -1.0, D) / math.sqrt(D) * 3.0


def block(seed, n):
    """One block of the generated table (runs on a worker)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = (X @ COEF + 0.5 + rng.logistic(size=n) > 0).astype(np.int64)
    return X, y


def generated(n_rows, seed):
    """(X, y) dask arrays of ``n_rows`` rows in blocks of BLOCK, built on the workers."""
    import dask.array as da
    from dask import delayed

    xs, ys = [], []
    for i, start in enumerate(range(0, n_rows, BLOCK)):
        n = min(BLOCK, n_rows - start)
        part = delayed(block, pure=True)(seed * 1_000_003 + i, n)
        xs.append(da.from_delayed(part[0], shape=(n, D), dtype=np.float64))
        ys.append(da.from_delayed(part[1], shape=(n,), dtype=np.int64))
    return da.concatenate(xs), da.concatenate(ys)


def timed(fn, repeats):
    best, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


def run(n_rows, repeats, seed=0):
    from dask_ml.linear_model import LogisticRegression
    from distributed import Client, LocalCluster, wait

    Xte, yte = block(10**9 + seed, 100_000)
    rows = []
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None)
    with Client(cluster) as client:
        X, y = generated(n_rows, seed)
        X, y = client.persist([X, y])
        wait([X, y])
        private = PrivateOnlineLogistic(epsilon=EPS, delta=DELTA, data_norm=DATA_NORM,
                                        random_state=seed)
        dp, t_dp = timed(lambda: private.fit(X, y, classes=[0, 1]), repeats)
        print(f"[dask fit] skdpol: {t_dp:.1f} s", flush=True)
        lr, t_lr = timed(lambda: LogisticRegression().fit(X, y), repeats)
        print(f"[dask fit] dask-ml: {t_lr:.1f} s", flush=True)
        Xn, yn = client.compute([X, y], sync=True)
    here, t_here = timed(lambda: PrivateOnlineLogistic(
        epsilon=EPS, delta=DELTA, data_norm=DATA_NORM, random_state=seed).fit(
        Xn, yn, classes=[0, 1]), 1)
    print(f"[dask fit] skdpol in memory: {t_here:.1f} s", flush=True)
    cluster.close()
    gap = float(np.max(np.abs(np.append(dp.coef_ - here.coef_, dp.intercept_ - here.intercept_))))
    same = "identical" if gap == 0 else f"max diff {gap:.1e}"
    lr_acc = float(np.mean(lr.predict(Xte) == yte))
    majority = max(np.mean(yte), 1 - np.mean(yte))
    rate_lr = n_rows / t_lr
    steps = dp._stream.algorithm.n_steps
    rows.append(["skdpol `PrivateOnlineLogistic.fit` (Dask), epsilon = 1",
                 f"{t_dp:.1f}", f"{n_rows / t_dp:,.0f}", f"{t_lr / t_dp:.2f}x",
                 f"{dp.score(Xte, yte):.4f}",
                 f"{steps} noisy steps; vs in-memory fit: {same}; "
                 f"privacy_spent_ {dp.privacy_spent_.epsilon:.3f}"])
    rows.append(["dask-ml `LogisticRegression` (non-private, ADMM)", f"{t_lr:.1f}",
                 f"{rate_lr:,.0f}", "1.00x", f"{lr_acc:.4f}", "defaults"])
    rows.append(["skdpol `PrivateOnlineLogistic.fit` in memory (numpy), epsilon = 1",
                 f"{t_here:.1f}", f"{n_rows / t_here:,.0f}", f"{t_lr / t_here:.2f}x",
                 f"{here.score(Xte, yte):.4f}", "one process, after gathering the blocks"])
    return rows, majority


def report(rows, majority, n_rows, repeats, elapsed):
    return "\n".join([
        "# `fit` on Dask: private noisy GD against dask-ml's LogisticRegression", "",
        f"Produced by `{command_line('bench_dask_fit.py')}` in {elapsed:.0f} s.", "",
        *machine_lines(), "",
        f"{n_rows:,} training rows, d = {D}, generated on the workers in blocks of "
        f"{BLOCK:,} rows (a logistic model on standard-normal features) and persisted "
        f"there; 2 worker processes of 1 thread each (LocalCluster, loopback). "
        f"epsilon = {EPS:g}, delta = {DELTA:g}, data_norm = 2 sqrt(d) (public: the "
        f"generator's), classes = [0, 1]. Seconds: the best of {repeats} fit(s); "
        "rows / s = training rows / seconds; ratio = rows / s over dask-ml's, same run. "
        f"Accuracy on 100,000 fresh test rows (majority class {majority:.4f}).", "",
        md_table(["model", "seconds", "rows / s", "ratio", "test accuracy", "notes"], rows),
        "",
        "How the time splits: the private fit takes K gradient steps (K from n, "
        "epsilon, delta and the bounds: `skdpol.online.gradient_schedule`, at most 400), "
        "each one task per block plus a round trip to the client, which adds the "
        "blocks' sums in block order and the step's noise (the exact discrete "
        "Gaussian sampler). dask-ml's ADMM solves a local problem per block per "
        "iteration. The Dask fit's release equals the in-memory fit's with the same "
        "`random_state` (row 3 and the notes column); see "
        "`skdpol/linear_model/_dask_fit.py` for why and for the float error bound.", ""])


def main():
    parser = report_parser(__doc__)
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    n_rows = args.rows or (100_000 if args.quick else 1_000_000)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # every bound here is public
        rows, majority = run(n_rows, args.repeats)
    write_report(report(rows, majority, n_rows, args.repeats, time.perf_counter() - t0),
                 args, "dask_fit.md")


if __name__ == "__main__":
    main()

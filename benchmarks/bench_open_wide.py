"""Open-ended (``horizon=None``) wide streams: rows a round against stream length.

Writes ``docs/benchmarks/open_wide.md``: the study behind the open wide
classifier's rounds (``skdpol/online/_registry.py``, ``wide_round`` with no
horizon). ``PrivateOnlineLogistic`` at its defaults (``algorithm="auto"`` ->
"ftrl-momentum" on wide rows, ``mechanism="auto"``) over CSR rows of
``--widths`` hashed-like columns (30 nonzeros a row, the Zipf-like column law
of ``bench_wide.py``'s ``make_rows``, one linear target of margins sd 1,
labels its sign), fed in chunks of 10,000 rows.

An open stream does not know its length, so one pass of ``--rows`` rows,
scored on 5,000 held-out rows after 10,000 / 30,000 / 100,000 / ... rows (the
model it has published by then), is the open stream of every length at once.
For each round size (``--open``: "auto" is the rule of the checkout, "main"
the rounds before it, :func:`main_open_round`, a number is ``batch_size=``
that many rows) that pass is run per epsilon and seed; the
known-horizon stream (``horizon=N``, the shipped rule) is one pass per length
N, and one pass of ``SGDClassifier`` (its defaults, ``partial_fit``) is
scored at the same points. Times are the process's CPU time of the
``partial_fit`` calls (chunk slicing included, scoring excluded), up to each
point.

With ``--regressor`` the same for ``PrivateOnlineRegressor`` (``y_bound=4``,
the target itself; ``SGDRegressor``), whose wide rounds do not read the
horizon past 50 x their size (``wide_regressor_round``).

Usage (the page is these four runs, in this order)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice python \\
        benchmarks/bench_open_wide.py --eps 0.5,1,2,4,inf --open auto,main
    ... --eps 0.5,1,2,4 --widths 131072 --open 2048,2500,3500,5000,8192 \\
        --append "Round sizes swept (2^17)"
    ... --eps 0.5,1,2,4 --widths 8192 --open 128,256,512,1024 \\
        --append "Round sizes swept (2^13)"
    ... --regressor --eps 1,4,inf --seeds 0,1,2 --long-seeds 0 --open auto \\
        --append "The regressor (its open rounds unchanged)"
"""

import argparse
import math
import os
import shlex
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier, SGDRegressor

from _common import REPO, machine_lines, md_table  # noqa: F401
from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "docs", "benchmarks", "open_wide.md")
CHUNK = 10_000
NNZ = 30
TEST = 5_000
POINTS = (10_000, 30_000, 100_000, 300_000, 1_000_000)


def main_open_round(d, regressor=False):
    """The open wide classifier's rounds before the open rule (main at
    f80f380): the noiseless ceil(d / 64) at every epsilon, at least the
    narrow 100 rows (measured as "main" with ``batch_size=`` that many rows,
    which takes the same stream: an explicit batch_size changes neither the
    wide step nor the mechanism)."""
    if regressor:
        raise ValueError("the regressor's open rounds did not change: measure 'auto'")
    return max(100, -(-d // 64))


def make_data(d, n, seed):
    """(chunks, test): ``n`` training rows in CSR chunks of CHUNK rows and
    TEST held-out rows, one weight vector; rows as ``bench_wide.make_rows``
    (unit norm, 30 draws of column d u^4, Gaussian values), generated in
    blocks so that a million rows stay cheap."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)

    def block(m):
        idx = np.sort((d * rng.random(size=(m, NNZ)) ** 4).astype(np.int64), axis=1)
        X = sp.csr_matrix((rng.normal(size=m * NNZ), idx.ravel(),
                           np.arange(0, m * NNZ + 1, NNZ)), shape=(m, d))
        X.sum_duplicates()
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.diags(1.0 / norms) @ X
        X = sp.csr_matrix(X)
        X.sort_indices()
        return X, X @ w

    X_test, s_test = block(TEST)
    scale = np.std(s_test)  # margins of sd ~1 (the population's, read off held-out rows)
    chunks = []
    for _ in range(n // CHUNK):
        X, s = block(CHUNK)
        chunks.append((X, s / scale))
    return chunks, (X_test, s_test / scale)


def _labels(s, regressor):
    return s if regressor else (s > 0).astype(int)


REPEATS = 2  # passes of each stream, the fastest timed (seeded: the same scores)


def run(make, chunks, test, points, regressor, first):
    """Scores and CPU seconds at each of ``points`` (rows) of one pass: the
    fastest of REPEATS identical passes at each point (the first also warms
    the per-process caches: BLT designs, compiled kernels)."""
    best = None
    for _ in range(REPEATS):
        est, out = _one_run(make, chunks, test, points, regressor, first)
        if best is not None:
            out = {p: (s, min(t, best[1][p][1])) for p, (s, t) in out.items()}
        best = (est, out)
    return best


def _one_run(make, chunks, test, points, regressor, first):
    est = make()
    X_test, y_test = test[0], _labels(test[1], regressor)
    out, spent, seen = {}, 0.0, 0
    for i, (X, s) in enumerate(chunks):
        y = _labels(s, regressor)
        t0 = time.process_time()
        est.partial_fit(X, y, **(first if i == 0 else {}))
        spent += time.process_time() - t0
        seen += X.shape[0]
        if seen in points:
            out[seen] = (est.score(X_test, y_test), spent)
    return est, out


def private(regressor, eps, seed, **kw):
    if regressor:
        return lambda: PrivateOnlineRegressor(epsilon=eps, data_norm=1.0, y_bound=4.0,
                                              random_state=seed, **kw)
    return lambda: PrivateOnlineLogistic(epsilon=eps, data_norm=1.0, random_state=seed, **kw)


def study(d, eps_list, seed, n, opens, regressor, log):
    chunks, test = make_data(d, n, seed)
    points = [p for p in POINTS if p <= n]
    first = {} if regressor else {"classes": [0, 1]}
    res = []  # (eps, stream label, rows a round, point, score, seconds)
    sgd = (SGDRegressor if regressor else SGDClassifier)
    _, got = run(lambda: sgd(random_state=seed), chunks, test, points, regressor, first)
    for p, (score, sec) in got.items():
        res.append(("-", "SGD one pass", "-", p, score, sec))
    for eps in eps_list:
        for N in points:
            est, got = run(private(regressor, eps, seed, horizon=N), chunks[:N // CHUNK],
                           test, {N}, regressor, first)
            score, sec = got[N]
            res.append((eps, "horizon = N", est.batch_size_, N, score, sec))
            log(f"d={d} seed={seed} eps={eps} known N={N} b={est.batch_size_} "
                f"score={score:.4f} {sec:.2f}s")
        for b in opens:
            kw = ({} if b == "auto" else
                  {"batch_size": main_open_round(d, regressor) if b == "main" else int(b)})
            est, got = run(private(regressor, eps, seed, horizon=None, **kw), chunks, test,
                           set(points), regressor, first)
            label = {"auto": RULE, "main": MAIN}.get(b, "open, batch_size set")
            for p, (score, sec) in got.items():
                res.append((eps, label, est.batch_size_, p, score, sec))
            log(f"d={d} seed={seed} eps={eps} open {b} b={est.batch_size_} "
                + " ".join(f"{p}:{s:.4f}/{t:.2f}s" for p, (s, t) in got.items()))
    return res


def summarise(rows, d, regressor):
    """Median [min, max] score and median seconds per (eps, stream, b, point)."""
    cells = {}
    for seed, eps, label, b, p, score, sec in rows:
        cells.setdefault((eps, label, b), {}).setdefault(p, []).append((score, sec, seed))
    points = sorted({r[4] for r in rows})
    header = ["epsilon", "stream", "rows a round"] + [f"{p:,} rows" for p in points]
    table = []

    def key(k):
        eps, label, b = k
        e = -1 if eps == "-" else (math.inf if eps == math.inf else float(eps))
        return (e, label != "horizon = N", label, -1 if b == "-" else int(b))

    for k in sorted(cells, key=key):
        eps, label, b = k
        line = [("-" if eps == "-" else f"{eps:g}"), label, str(b)]
        for p in points:
            got = cells[k].get(p)
            if not got:
                line.append("")
                continue
            sc = np.array([g[0] for g in got])
            se = np.array([g[1] for g in got])
            line.append(f"{np.median(sc):.3f} [{sc.min():.3f}, {sc.max():.3f}] "
                        f"({len(got)}) {1e3 * np.median(se):.0f} ms")
        table.append(line)
    return md_table(header, table)


INTRO = (
    "The rule measured (`skdpol/online/_registry.py`, `wide_round` and "
    "`WIDE_OPEN_HORIZON`): a wide classifier stream without a horizon, at a finite "
    "epsilon, takes the noisy rounds of a planned horizon of 100,000 rows, "
    "max(ceil(d / 64), min(100,000 // ceil(20 max(1, epsilon)), ceil(d / 8))) rows "
    "(main took ceil(d / 64), at least 100, at every epsilon); epsilon = inf and "
    "known horizons are unchanged. Its accounting is the open BLT's as before: a "
    "leaf sums one round's gradients and one row moves it by 2 L whatever the "
    "round's rows, so the multiplier and the stated cost do not depend on the "
    "rounds. \"open\" rows: one open pass scored at each point; \"horizon = N\": "
    "one pass per N with that horizon.")
RULE, MAIN = "open, this checkout's rule", "open, main's rounds (d / 64)"


def paired(rows):
    """The rule against main's rounds, seed by seed (the same rows and noise
    seed): median [min, max] of the score's change, seeds up / down, and the
    median ratio of CPU times, at each point; "" where the two are the same
    rounds (epsilon = inf, and 4 at 2^17)."""
    got = {}
    for seed, eps, label, b, p, score, sec in rows:
        if label in (RULE, MAIN):
            got.setdefault((eps, p, seed), {})[label] = (b, score, sec)
    points = sorted({k[1] for k in got})
    table = []
    for eps in sorted({k[0] for k in got}, key=float):
        line = [f"{eps:g}"]
        sizes = set()
        for p in points:
            pairs = [v for (e, q, _), v in got.items() if e == eps and q == p and len(v) == 2]
            pairs = [v for v in pairs if v[RULE][0] != v[MAIN][0]]
            if not pairs:
                line.append("same rounds")
                continue
            sizes.add(f"{pairs[0][MAIN][0]} -> {pairs[0][RULE][0]}")
            diff = np.array([v[RULE][1] - v[MAIN][1] for v in pairs])
            ratio = np.median([v[RULE][2] / max(v[MAIN][2], 1e-9) for v in pairs])
            line.append(f"{np.median(diff):+.3f} [{diff.min():+.3f}, {diff.max():+.3f}] "
                        f"{(diff > 0).sum()} up / {(diff < 0).sum()} down, time x{ratio:.2f}")
        table.append([line[0], ", ".join(sorted(sizes)) or "-"] + line[1:])
    header = ["epsilon", "rows a round"] + [f"{p:,} rows" for p in points]
    return md_table(header, table)


def main():
    global REPEATS
    parser = argparse.ArgumentParser()
    parser.add_argument("--widths", default="131072,8192")
    parser.add_argument("--eps", default="1,4,inf")
    parser.add_argument("--seeds", default="0,1,2,3,4,5")
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--long-seeds", default="0,1",
                        help="seeds run to --long-rows instead of --rows")
    parser.add_argument("--long-rows", type=int, default=1_000_000)
    parser.add_argument("--open", default=None,
                        help="comma-separated round sizes of the open pass ('auto': the "
                             "checkout's rule); default per width")
    parser.add_argument("--regressor", action="store_true")
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--append", default=None,
                        help="append the tables to --out under this heading instead of "
                             "writing a new page")
    parser.add_argument("--log", default=None, help="append one line a run here")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    REPEATS = max(1, args.repeats)
    eps_list = [float(e) for e in args.eps.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    long_seeds = {int(s) for s in args.long_seeds.split(",") if s}
    logf = open(args.log, "a") if args.log else None

    def log(msg):
        print(msg, flush=True)
        if logf:
            logf.write(msg + "\n")
            logf.flush()

    t_start = time.time()
    sections = []
    for d in [int(w) for w in args.widths.split(",")]:
        if args.open:
            opens = args.open.split(",")
        else:  # today's open rounds (d / 64, at least 100), up to the known rule's at 1e5
            opens = ["auto"] + [str(b) for b in sorted({max(100, d // 64), d // 32, d // 16,
                                                          min(5_000, d // 8)})]
            opens = list(dict.fromkeys(opens))
        rows = []
        for seed in seeds:
            n = args.long_rows if seed in long_seeds else args.rows
            for r in study(d, eps_list, seed, n, opens, args.regressor, log):
                rows.append((seed,) + r)
        kind = "PrivateOnlineRegressor (R^2)" if args.regressor else "PrivateOnlineLogistic (accuracy)"
        sections += [f"## d = {d:,} ({kind})", "",
                     "Cells: median [min, max] of the score over seeds (how many), then the "
                     "median CPU time of the partial_fit calls up to that point.", "",
                     summarise(rows, d, args.regressor), ""]
        if {"auto", "main"} <= set(opens):
            sections += ["The rule against main's rounds, paired by seed (score change, "
                         "seeds up / down, CPU time ratio):", "", paired(rows), ""]
    written = (f"Written by `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice "
               f"python benchmarks/bench_open_wide.py {shlex.join(sys.argv[1:])}` in {(time.time() - t_start) / 60:.1f} "
               "min.")
    if args.append:
        lines = [f"## {args.append}", "", written, ""] + machine_lines() + [""]
        lines += [line.replace("## d =", "### d =") for line in sections]
        with open(args.out, "a") as f:
            f.write("\n" + "\n".join(lines) + "\n")
    else:
        lines = ["# Open-ended wide streams: rows a round against stream length", "",
                 written + " See the script's docstring for the rows and what each "
                 "stream is.", "", INTRO, ""]
        lines += machine_lines() + [""] + sections
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

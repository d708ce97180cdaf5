"""Open-ended (``horizon=None``) wide streams: rows a round against stream length.

Writes ``docs/benchmarks/open_wide.md``: the study behind the open wide
classifier's rounds (``skdpol/online/_registry.py``, ``wide_round`` with no
horizon, and the notes after ``WIDE_NOISY_COLUMNS_PER_ROW``), which it left at
d / 64: the candidate below won on long generated streams and lost on Adult. ``PrivateOnlineLogistic`` at its defaults (``algorithm="auto"`` ->
"ftrl-momentum" on wide rows, ``mechanism="auto"``) over CSR rows of
``--widths`` hashed-like columns (30 nonzeros a row, the Zipf-like column law
of ``bench_wide.py``'s ``make_rows``, one linear target of margins sd 1,
labels its sign), fed in chunks of 10,000 rows.

An open stream does not know its length, so one pass of ``--rows`` rows,
scored on 5,000 held-out rows after 10,000 / 30,000 / 100,000 / ... rows (the
model it has published by then), is the open stream of every length at once.
For each round size (``--open``: "auto" is the rule of the checkout, d / 64
rows; "candidate" the candidate rule, :func:`candidate_round`; a number is
``batch_size=`` that many rows) that pass is run per epsilon and seed; the
known-horizon stream (``horizon=N``, the shipped rule) is one pass per length
N, and one pass of ``SGDClassifier`` (its defaults, ``partial_fit``) is
scored at the same points. Times are the process's CPU time of the
``partial_fit`` calls (chunk slicing included, scoring excluded), up to each
point.

With ``--regressor`` the same for ``PrivateOnlineRegressor`` (``y_bound=4``,
the target itself; ``SGDRegressor``), whose wide rounds do not read the
horizon past 50 x their size (``wide_regressor_round``).

Usage (the page is these six runs, in this order)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice python \\
        benchmarks/bench_open_wide.py --eps 0.5,1,2,4,inf --open auto,candidate
    ... --eps 0.5,1,2,4 --widths 131072 --open 2048,2500,3500,5000,8192 \\
        --append "Round sizes swept (2^17)"
    ... --eps 0.5,1,2,4 --widths 8192 --open 128,256,512,1024 \\
        --append "Round sizes swept (2^13)"
    ... --regressor --eps 1,4,inf --seeds 0,1,2 --long-seeds 0 --open auto \\
        --append "The regressor (its open rounds unchanged)"
    ... --adult --widths 131072,4096 --eps 0.5,1,2,inf --seeds 0,1,2,3,4 \\
        --append "A short real open stream: Adult hashed"
    ... --regressor --eps 1,4,8,inf --seeds 0,1,2 --long-seeds 0 --open auto \\
        --repeats 1 --append "The regressor after the momentum fix (capped_momentum)"
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

from _common import REPO, machine_lines, md_table, progress_log  # noqa: F401
from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "docs", "benchmarks", "open_wide.md")
CHUNK = 10_000
NNZ = 30
TEST = 5_000
POINTS = (10_000, 30_000, 100_000, 300_000, 1_000_000)


def candidate_round(d, eps):
    """The candidate open rule: the known-horizon rule's noisy rounds for a
    planned horizon of 100,000 rows, max(ceil(d / 64), min(100,000 //
    ceil(20 max(1, eps)), ceil(d / 8))) at finite epsilon (ceil(d / 64) at
    epsilon = inf), at least the narrow 100 rows; measured with
    ``batch_size=`` that many rows, which takes the same stream as the rule
    would (an explicit batch_size changes neither the wide step nor the
    mechanism of a wide classifier stream)."""
    rows = -(-d // 64)
    if not math.isinf(eps):
        rows = max(rows, min(100_000 // math.ceil(20 * max(1.0, eps)), -(-d // 8)))
    return max(100, rows)


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
                  {"batch_size": candidate_round(d, eps) if b == "candidate" else int(b)})
            est, got = run(private(regressor, eps, seed, horizon=None, **kw), chunks, test,
                           set(points), regressor, first)
            label = {"auto": RULE, "candidate": CANDIDATE}.get(b, "open, batch_size set")
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
    "The rule (`skdpol/online/_registry.py`, `wide_round`): a wide classifier "
    "stream without a horizon takes ceil(d / 64) rows a round (at least 100) at "
    "every epsilon. The candidate measured against it (\"candidate\", with "
    "`batch_size=`): the known-horizon rule's noisy rounds for a planned horizon "
    "of 100,000 rows, max(ceil(d / 64), min(100,000 // ceil(20 max(1, epsilon)), "
    "ceil(d / 8))) at finite epsilon. Either way the accounting is the open BLT's: "
    "a leaf sums one round's gradients and one row moves it by 2 L whatever the "
    "round's rows, so the multiplier and the stated cost do not depend on the "
    "rounds. \"open\" rows: one open pass scored at each point; \"horizon = N\": "
    "one pass per N with that horizon. Verdict: the candidate gained at 2^17 and "
    "epsilon 1 from 100,000 rows on and cost Adult hashed to 2^17 (a short real "
    "open stream, the last section) and the 2^13 rows at 100,000-300,000: the "
    "rule stays.")
RULE, CANDIDATE = "open, the rule (d / 64)", "open, candidate (rounds of a 10^5 horizon)"


def paired(rows):
    """The candidate against the rule, seed by seed (the same rows and noise
    seed): median [min, max] of the score's change, seeds up / down, and the
    median ratio of CPU times, at each point; "same rounds" where the two are
    the same (epsilon = inf, and 4 at 2^17)."""
    got = {}
    for seed, eps, label, b, p, score, sec in rows:
        if label in (RULE, CANDIDATE):
            got.setdefault((eps, p, seed), {})[label] = (b, score, sec)
    points = sorted({k[1] for k in got})
    table = []
    for eps in sorted({k[0] for k in got}, key=float):
        line = [f"{eps:g}"]
        sizes = set()
        for p in points:
            pairs = [v for (e, q, _), v in got.items() if e == eps and q == p and len(v) == 2]
            pairs = [v for v in pairs if v[CANDIDATE][0] != v[RULE][0]]
            if not pairs:
                line.append("same rounds")
                continue
            sizes.add(f"{pairs[0][RULE][0]} -> {pairs[0][CANDIDATE][0]}")
            diff = np.array([v[CANDIDATE][1] - v[RULE][1] for v in pairs])
            ratio = np.median([v[CANDIDATE][2] / max(v[RULE][2], 1e-9) for v in pairs])
            line.append(f"{np.median(diff):+.3f} [{diff.min():+.3f}, {diff.max():+.3f}] "
                        f"{(diff > 0).sum()} up / {(diff < 0).sum()} down, time x{ratio:.2f}")
        table.append([line[0], ", ".join(sorted(sizes)) or "-"] + line[1:])
    header = ["epsilon", "rows a round"] + [f"{p:,} rows" for p in points]
    return md_table(header, table)


def adult_section(widths, eps_list, seeds, log):
    """Adult hashed to each width (``bench_wide_rounds.adult``: FeatureHasher,
    numeric columns by their public ranges, data_norm sqrt(14)), one pass of
    its 32,561 training rows in chunks of 5,000 in a per-seed order: a short
    real open stream. Open streams are scored as published after the last
    chunk and after ``flush()`` (the waiting rows learned as a final round)."""
    from bench_wide_rounds import adult
    lines = []
    for d in widths:
        res = {}
        for seed in seeds:
            X, y, X_test, y_test, norm = adult(d, seed)
            n, chunk = X.shape[0], 5_000
            chunks = [(X[lo:lo + chunk], y[lo:lo + chunk]) for lo in range(0, n, chunk)]

            def feed(est):
                for i, (Xc, yc) in enumerate(chunks):
                    est.partial_fit(Xc, yc, **({"classes": [0, 1]} if i == 0 else {}))
                return est
            sgd = feed(SGDClassifier(random_state=seed)).score(X_test, y_test)
            res.setdefault(("-", "SGD one pass", "-"), []).append(sgd)
            for eps in eps_list:
                make = lambda **kw: PrivateOnlineLogistic(  # noqa: E731
                    epsilon=eps, data_norm=norm, random_state=seed, **kw)
                est = feed(make(horizon=n))
                res.setdefault((eps, "horizon = n", est.batch_size_), []).append(
                    est.score(X_test, y_test))
                for label, kw in ((RULE, {}),
                                  (CANDIDATE, {"batch_size": candidate_round(d, eps)})):
                    est = feed(make(**kw))
                    score = est.score(X_test, y_test)
                    est.flush()
                    res.setdefault((eps, label, est.batch_size_), []).append(
                        (score, est.score(X_test, y_test)))
                log(f"adult d={d} seed={seed} eps={eps} done")
        table = []
        for (eps, label, b), got in res.items():
            first = np.array([g[0] if isinstance(g, tuple) else g for g in got])
            cell = f"{np.median(first):.4f} [{first.min():.4f}, {first.max():.4f}]"
            flushed = ""
            if isinstance(got[0], tuple):
                after = np.array([g[1] for g in got])
                flushed = f"{np.median(after):.4f} [{after.min():.4f}, {after.max():.4f}]"
            table.append([eps if eps == "-" else f"{eps:g}", label, str(b), cell, flushed])
        lines += [f"### Adult hashed to d = {d:,} ({len(seeds)} seeds)", "",
                  md_table(["epsilon", "stream", "rows a round", "accuracy after the pass",
                            "after flush()"], table), ""]
    return lines


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
    parser.add_argument("--adult", action="store_true",
                        help="Adult hashed to --widths instead of the generated rows "
                             "(bench_wide_rounds.adult; one pass of 32,561 rows)")
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
    log = progress_log(args.log)

    t_start = time.time()
    sections = []
    widths = [int(w) for w in args.widths.split(",")]
    if args.adult:
        sections += adult_section(widths, eps_list, seeds, log)
        widths = []
    for d in widths:
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
        if {"auto", "candidate"} <= set(opens):
            sections += ["The candidate against the rule, paired by seed (score change, "
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

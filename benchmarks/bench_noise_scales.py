"""Where the exact discrete sampler leaves its vectorised path, and what it costs.

The default noise (``noise_sampler="discrete"``) draws integers on a grid
with an exact sampler (``skdpol/mechanisms/_discrete.py``, ``_exact.py``).
It is vectorised over coordinates for Gaussian scales below
``fast_scale_limit("gaussian")`` grid steps and falls back to a Python
loop beyond (one coordinate at a time; the scalar code is unchanged). The
estimators' scale is m sqrt(d) 2^10 to 2^11 grid steps: it grows with the
width d and the multiplier m (small epsilon, deep trees, many noisy GD
steps). Main (36bd06f) set the limit at 2^22; it is now 2^36.

1. Draws per second at each scale: "main" is main's path at that scale (the
   vectorised sampler below 2^22, the Python loop from 2^22 on: the same
   code, called directly), "now" is ``discrete_noise``; 200,000 draws
   (20,000 for the loop), median of the repeats.
2. Every public configuration below, run on a few thousand rows at its
   defaults but for what the row names: the largest noise scale it asks the
   sampler for (recorded by wrapping ``discrete_noise``), and whether main
   (>= 2^22) or this code (>= 2^36) takes the Python loop for it.
3. The issue's case: ``PrivateOnlineLogistic(algorithm="ftrl",
   mechanism="tree")`` on 2^17 hashed columns (30 non-zeros a row, CSR
   chunks of 1,000), epsilon 1: rows/s with main's limit (2^22, restored in
   process: draws below it are byte-identical to main, the loop is main's
   code) and now, same process, alternated.

Writes docs/benchmarks/noise_scales.md (not with --quick, unless --out).

    python benchmarks/bench_noise_scales.py                # ~5-10 min on 2 busy cores
    python benchmarks/bench_noise_scales.py --quick --out /tmp/noise_scales.md
"""

import contextlib
import time
import warnings

from _common import command_line, machine_lines, md_table, parse_report_args, write_report

import numpy as np
import scipy.sparse as sp

from skdpol import (KernelPrivateOnlineRegressor, PrivateOnlineLogistic,
                    PrivateOnlineRegressor)
from skdpol.distributed import MultiPartyPrivateSGD
from skdpol.mechanisms import _discrete

MAIN_LIMIT = 2.0**22  # main's _VECTOR_LIMIT["gaussian"]
_MODULES = ("skdpol.mechanisms._noise", "skdpol.mechanisms._tree", "skdpol.mechanisms._blt",
            "skdpol.mechanisms._laplace", "skdpol.distributed._party")


# ------------------------------------------------------------ draws per scale
def _rate(fn, n, repeats):
    times = []
    for r in range(repeats):
        rng = np.random.default_rng(r)
        start = time.perf_counter()
        fn(rng, n)
        times.append(time.perf_counter() - start)
    return n / float(np.median(times))


def draws_per_scale(quick):
    rows = []
    exps = (10, 20, 22, 24, 27, 30, 35) if not quick else (20, 24, 30)
    for e in exps:
        scale = 2.0**e * 1.1  # off the power of two: a generic law
        discrete_noise = _discrete.discrete_noise
        discrete_noise(np.random.default_rng(0), 100, scale)  # the plan, built once
        now = _rate(lambda rng, n: discrete_noise(rng, n, scale), 200_000, 3 if quick else 5)
        if scale < MAIN_LIMIT:
            main = now  # the same code and the same draws (check_outputs: 0 changed)
        else:
            main = _rate(lambda rng, n: _discrete._discrete_noise_scalar(rng, n, scale),
                         5_000 if quick else 20_000, 1 if quick else 3)
        rows.append([f"1.1 x 2^{e}", f"{main:,.0f}", f"{now:,.0f}", f"{now / main:.0f}x",
                     "loop" if scale >= MAIN_LIMIT else "vectorised"])
    return rows


# -------------------------------------------------- scales of configurations
@contextlib.contextmanager
def record_scales():
    """Every (noise, scale, size) the estimators ask ``discrete_noise`` for."""
    import importlib
    seen, real = [], _discrete.discrete_noise

    def wrapped(rng, size, scale, noise="gaussian"):
        seen.append((noise, float(scale), int(size)))
        return real(rng, size, scale, noise)

    modules = [importlib.import_module(m) for m in _MODULES]
    for m in modules:
        m.discrete_noise = wrapped
    try:
        yield seen
    finally:
        for m in modules:
            m.discrete_noise = real


@contextlib.contextmanager
def main_limit():
    """Main's vectorised range, in process (the scalar path is main's code)."""
    saved = _discrete._VECTOR_LIMIT["gaussian"]
    _discrete._VECTOR_LIMIT["gaussian"] = MAIN_LIMIT
    try:
        yield
    finally:
        _discrete._VECTOR_LIMIT["gaussian"] = saved


def _dense(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.normal(size=d)
    return X, X @ w / np.sqrt(d) * 3


def _hashed(n, d=2**17, nnz=30, seed=0):
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, d, size=(n, nnz))
    vals = rng.choice([-1.0, 1.0], size=(n, nnz)) / np.sqrt(nnz)
    X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, d))
    X.sum_duplicates()
    w = rng.normal(size=d)
    return X, np.asarray(X @ w).ravel() * 3


def _stream(est, X, y, chunk=1000, **kw):
    for a in range(0, X.shape[0], chunk):
        est.partial_fit(X[a:a + chunk], y[a:a + chunk], **kw)
    return est


def _configs(quick):
    """(label, d label, epsilon, run(X, y_reg, y_clf, eps)) rows."""
    out = []
    widths = [("100", 100), ("1,000", 1000), ("2^17 sparse", 2**17)] if quick else \
        [("100", 100), ("1,000", 1000), ("10,000", 10_000), ("2^17 sparse", 2**17)]
    epsilons = (1.0,) if quick else (0.1, 1.0, 10.0)
    clf = dict(classes=[0, 1])
    runs = {
        "logistic ftrl tree": lambda X, yr, yc, e: _stream(PrivateOnlineLogistic(
            epsilon=e, algorithm="ftrl", mechanism="tree", random_state=0), X, yc, **clf),
        "logistic ftrl blt": lambda X, yr, yc, e: _stream(PrivateOnlineLogistic(
            epsilon=e, algorithm="ftrl", mechanism="blt", random_state=0), X, yc, **clf),
        "logistic auto (defaults)": lambda X, yr, yc, e: _stream(PrivateOnlineLogistic(
            epsilon=e, random_state=0), X, yc, **clf),
        "logistic ftrl tree release_every=4": lambda X, yr, yc, e: _stream(
            PrivateOnlineLogistic(epsilon=e, algorithm="ftrl", mechanism="tree",
                                  release_every=4, random_state=0), X, yc, **clf),
        "logistic ftrl tree delta=0 (Laplace)": lambda X, yr, yc, e: _stream(
            PrivateOnlineLogistic(epsilon=e, delta=0.0, algorithm="ftrl", mechanism="tree",
                                  random_state=0), X, yc, **clf),
        "logistic fit (noisy GD)": lambda X, yr, yc, e: PrivateOnlineLogistic(
            epsilon=e, random_state=0).fit(X, yc),
        "regressor auto (defaults)": lambda X, yr, yc, e: _stream(PrivateOnlineRegressor(
            epsilon=e, random_state=0), X, yr),
        "regressor fit (noisy GD)": lambda X, yr, yc, e: PrivateOnlineRegressor(
            epsilon=e, random_state=0).fit(X, yr),
    }
    for name, run in runs.items():
        for dl, d in widths:
            for e in epsilons:
                out.append((name, dl, d, e, run))
    small = [("kernel auto (128 features)", lambda X, yr, yc, e: _stream(
        KernelPrivateOnlineRegressor(epsilon=e, random_state=0), X, yr)),
             ("kernel fit", lambda X, yr, yc, e: KernelPrivateOnlineRegressor(
                 epsilon=e, random_state=0).fit(X, yr))]
    for trust in ("local", "secure-aggregation"):  # sgd1 needs the float sampler
        small.append((f"seed 004 sgd2 {trust}", lambda X, yr, yc, e, t=trust:
                      MultiPartyPrivateSGD(protocol="sgd2", trust_model=t, epsilon=e,
                                           random_state=0).fit(X, yr)))
    for name, run in small:
        for e in epsilons:
            out.append((name, "10", 10, e, run))
    return out


def scales_of_configurations(quick):
    rows = []
    n = 2000 if quick else 4000
    data = {}
    for name, dl, d, eps, run in _configs(quick):
        if d not in data:
            X, yr = _hashed(n) if d == 2**17 else _dense(n if d < 10_000 else 2000, d)
            data[d] = (X, yr, (yr > np.median(yr)).astype(int))
        X, yr, yc = data[d]
        with warnings.catch_warnings(), record_scales() as seen:
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            try:
                run(X, yr, yc, eps)
                note = ""
            except Exception as exc:  # noqa: BLE001  (a refusal is reported, not hidden)
                note = f"{type(exc).__name__}"
            seconds = time.perf_counter() - start
        gauss = [s for noise, s, _ in seen if noise == "gaussian"]
        lap = [s for noise, s, _ in seen if noise == "laplace"]
        top = max(gauss, default=0.0)
        top_lap = max(lap, default=0.0)
        main_loop = sum(size for noise, s, size in seen
                        if noise == "gaussian" and s >= MAIN_LIMIT)
        now_loop = sum(size for noise, s, size in seen
                       if s >= _discrete._VECTOR_LIMIT[noise])
        total = sum(size for _, _, size in seen)
        scale = (f"2^{np.log2(top):.1f}" if top else "") + \
            (f" (Laplace 2^{np.log2(top_lap):.1f})" if top_lap else "")
        rows.append([name, dl, f"{eps:g}", scale or "no noise drawn", f"{total:,}",
                     f"{main_loop:,}", f"{now_loop:,}",
                     f"{seconds:.1f}" + (f" {note}" if note else "")])
        print(" | ".join(rows[-1]), flush=True)
    return rows


# ------------------------------------------------------------ the issue's case
def issue_case(quick):
    n = 2000 if quick else 4000
    X, yr = _hashed(n, seed=1)
    yc = (yr > np.median(yr)).astype(int)
    rates = {"main": [], "now": []}
    for _ in range(1 if quick else 2):
        for which in ("main", "now"):
            est = PrivateOnlineLogistic(algorithm="ftrl", mechanism="tree", random_state=0)
            ctx = main_limit() if which == "main" else contextlib.nullcontext()
            with ctx, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                _stream(est, X, yc, classes=[0, 1])
                rates[which].append(n / (time.perf_counter() - start))
    main, now = (float(np.median(rates[k])) for k in ("main", "now"))
    return [[f"{n:,} rows, 2^17 hashed columns, chunks of 1,000", f"{main:,.0f}",
             f"{now:,.0f}", f"{now / main:.0f}x"]]


def main():
    args = parse_report_args(__doc__)
    case = issue_case(args.quick)
    per_scale = draws_per_scale(args.quick)
    configs = scales_of_configurations(args.quick)
    text = "\n".join([
        "# The exact sampler's vectorised range: draws per scale, and which "
        "configurations leave it",
        "",
        f"Measured by `{command_line('bench_noise_scales.py')}`; see its docstring.",
        "",
        *machine_lines(),
        "",
        "## The issue's case: `PrivateOnlineLogistic(algorithm=\"ftrl\", mechanism=\"tree\")`, "
        "epsilon 1",
        "",
        md_table(["stream", "rows/s, main's range (2^22)", "rows/s now (2^36)", "speed-up"], case),
        "",
        "## Draws per second at each Gaussian scale (grid steps)",
        "",
        md_table(["scale", "main", "now", "now / main", "main's path"], per_scale),
        "",
        "## Largest noise scale of each configuration, and draws on the Python loop",
        "",
        "Defaults but for the named parameters; 4,000 rows (2,000 at d = 10,000) in chunks "
        "of 1,000; horizon unknown (the default); seed 004's `sgd1` is not listed (it "
        "requires `noise_sampler=\"float\"`). Draws on the loop: "
        "coordinates whose scale is at or past the limit (main: 2^22 Gaussian; now: 2^36 "
        "Gaussian, 2^40 Laplace at both).",
        "",
        md_table(["configuration", "d", "epsilon", "largest scale", "draws", "loop at main",
                  "loop now", "seconds now"], configs),
        "",
    ])
    write_report(text, args, "noise_scales.md")


if __name__ == "__main__":
    main()

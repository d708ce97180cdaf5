"""PrivateSubmodularSelector: regret of private online submodular minimisation.

Data: ``skdpol.datasets.make_submodular_stream(n_items=12, n_rounds=T,
random_state=seed)``, T = 20,000 rows, seeds 0, 1, 2 (the selector's
``random_state`` is the same seed). Its rows define the built-in
``ConcaveMassCost`` f_t(S) = c sqrt(|S|) - sum_{i in S} clip(r_ti, -1, 1)
(``stream.cost``, c = 0.75 sqrt(s) m_hi), whose expected cost F has the
planted set S* as its unique minimiser. Regret of row t is
F(S_t) - F(S*), S_t the set played on row t (the set published before the
row's round); cumulative regret R(t) is its sum up to t, average regret
R(t) / t. All at delta = 1e-5, ``horizon`` = the number of rounds, so the
whole stream's budget is planned and every published set is covered.

1. Full information, ``partial_fit`` with one round a row: the played sets
   are read with ``sel._algo.learn(rows, trace=True)`` (the selector's own
   algorithm object, after ``partial_fit`` of the first row, whose set is
   the initial x = 0's, i.e. empty); epsilon in {0.5, 1, 5, inf}.
2. Bandit: the ``ask()`` / ``tell(cost of the played set)`` loop, one row a
   round, default ``mu=0.1``; the same epsilons; regret uses the set
   ``ask()`` returned (exploration included).
3. Rounds: full information in rounds of 20 rows (every row of a round
   plays the round's set), ``partial_fit``; bandit in rounds of 50 visitors
   through ``ask()`` / ``tell()`` (each visitor plays the set ``ask()``
   gives them, drawn from the round's point), default ``mu``, with issue
   15's acceptance figures: average regret of the first 2,000 visitors and
   of the second half.
4. Log-log slope of R(t) against t (least squares over 30 log-spaced t in
   [T/100, T], on the mean over seeds). Theory: full information
   O(sqrt(T)) (slope 0.5 or less), bandit O(T^(3/4)); slope 1 means no
   learning (constant average regret).
5. Speed, n = 50: rounds/s of full-information ``partial_fit`` (chunks of
   5,000 rows, one round a row), of the bandit ``ask`` / ``tell`` loop, and
   rows/s with rounds of 20 rows. No peer library does this, so absolute
   rates on this machine.

Writes docs/benchmarks/submodular.md and docs/figures/submodular_regret.png
(not with --quick, unless --out; then the figure goes next to --out).

    python benchmarks/bench_submodular.py               # full run (~3-5 min, 2 cores)
    python benchmarks/bench_submodular.py --quick --out /tmp/submodular.md
"""

import time
from pathlib import Path

from _common import REPO, command_line, machine_lines, md_table, parse_report_args, write_report

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from skdpol import PrivateSubmodularSelector  # noqa: E402
from skdpol.datasets import make_submodular_stream  # noqa: E402

EPSILONS = (0.5, 1.0, 5.0, np.inf)
N_ITEMS, DELTA, BATCH, BANDIT_BATCH, CHUNK = 12, 1e-5, 20, 50, 5_000


def _eps_name(eps):
    return "inf" if np.isinf(eps) else f"{eps:g}"


def _full_sets(stream, eps, seed, batch_size=1):
    """Per-row played sets, full information, ``partial_fit`` rounds of batch_size rows."""
    T = stream.rows.shape[0]
    sel = PrivateSubmodularSelector(cost=stream.cost, epsilon=eps, delta=DELTA,
                                    batch_size=batch_size, horizon=T // batch_size,
                                    random_state=seed)
    sel.partial_fit(stream.rows[:batch_size])  # round 1 plays the x = 0 set: empty
    sets = [np.zeros((1, N_ITEMS), dtype=bool)]
    for start in range(batch_size, T, CHUNK):
        sets.append(sel._algo.learn(stream.rows[start:start + CHUNK], trace=True)[1])
    sel._publish()
    return np.repeat(np.vstack(sets), batch_size, axis=0), sel.privacy_spent_


def _bandit_sets(stream, eps, seed, batch_size=1, mu=0.1):
    """Per-visitor played sets, bandit: the ask/tell loop (a round is batch_size visitors)."""
    T = stream.rows.shape[0]
    sel = PrivateSubmodularSelector(n_items=N_ITEMS, cost=stream.cost, feedback="bandit",
                                    epsilon=eps, delta=DELTA, mu=mu, batch_size=batch_size,
                                    horizon=T // batch_size, random_state=seed)
    sets = np.empty((T, N_ITEMS), dtype=bool)
    cost = stream.cost
    for t, row in enumerate(stream.rows):
        mask = sel.ask()
        sets[t] = mask
        sel.tell(float(cost(mask[None, :], row)[0]))
    return sets, sel.privacy_spent_


def _regret(stream, sets):
    return stream.expected_cost(sets) - stream.optimal_cost


def _slope(cumulative):
    T = cumulative.size
    t = np.unique(np.geomspace(max(T // 100, 1), T, 30).astype(int))
    return float(np.polyfit(np.log(t), np.log(cumulative[t - 1]), 1)[0])


def _experiment(name, runner, seeds, T, eps_values, accept=None):
    """Mean per-row regret over seeds for each epsilon, and the summary rows
    (with ``accept``, a list, also issue 15's: first 2,000 visitors, second half)."""
    curves, rows = {}, []
    for eps in eps_values:
        regrets, spent = [], None
        for seed in seeds:
            stream = make_submodular_stream(N_ITEMS, T, random_state=seed)
            sets, spent = runner(stream, eps, seed)
            regrets.append(_regret(stream, sets))
        regrets = np.array(regrets)  # (seeds, T)
        mean = regrets.mean(axis=0)
        curves[eps] = mean
        quarters = regrets.reshape(len(seeds), 4, -1).mean(axis=2)  # (seeds, 4)
        rows.append([name, _eps_name(eps), f"{T:,}"]
                    + [f"{q:.3f}" for q in quarters.mean(axis=0)]
                    + [f"{mean.mean():.3f}",
                       f"[{quarters[:, 3].min():.3f}, {quarters[:, 3].max():.3f}]",
                       f"{_slope(np.cumsum(mean)):.2f}",
                       "inf" if np.isinf(eps) else f"{spent.epsilon:.3f}"])
        if accept is not None:
            head = regrets[:, :min(2_000, T // 10)].mean(axis=1)
            tail = regrets[:, T // 2:].mean(axis=1)
            ratio = tail / head
            accept.append([name, _eps_name(eps), f"{head.mean():.3f}", f"{tail.mean():.3f}",
                           f"{ratio.mean():.2f} [{ratio.min():.2f}, {ratio.max():.2f}]"])
    return curves, rows


def _speed(repeats, quick):
    n, T = 50, (5_000 if quick else 20_000)
    stream = make_submodular_stream(n, T, random_state=0)
    T_bandit = T // 4

    def full(batch_size):
        def run():
            sel = PrivateSubmodularSelector(cost=stream.cost, epsilon=1.0, delta=DELTA,
                                            batch_size=batch_size, horizon=T // batch_size,
                                            random_state=0)
            for start in range(0, T, CHUNK):
                sel.partial_fit(stream.rows[start:start + CHUNK])
        return run

    def bandit():
        sel = PrivateSubmodularSelector(n_items=n, cost=stream.cost, feedback="bandit",
                                        epsilon=1.0, delta=DELTA, horizon=T_bandit,
                                        random_state=0)
        for row in stream.rows[:T_bandit]:
            mask = sel.ask()
            sel.tell(float(stream.cost(mask[None, :], row)[0]))

    cases = [("full information, `partial_fit`, one round a row", full(1), T, "rounds/s"),
             (f"full information, `partial_fit`, rounds of {BATCH} rows", full(BATCH), T,
              "rows/s"),
             ("bandit, `ask()` / `tell(value)` loop", bandit, T_bandit, "rounds/s")]
    rows = []
    for name, fn, count, unit in cases:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        rows.append([name, f"{count:,}", f"{count / np.median(times):,.0f} {unit}"])
    return rows


def _figure(curves_full, curves_bandit, path):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, curves, title in ((axes[0], curves_full, "full information"),
                              (axes[1], curves_bandit, "bandit (ask / tell)")):
        for eps, reg in curves.items():
            t = np.arange(1, reg.size + 1)
            ax.plot(t, np.cumsum(reg) / t, label=f"epsilon = {_eps_name(eps)}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("round t (rows, one round a row)")
        ax.set_title(f"{title}, n = {N_ITEMS}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("average regret R(t) / t")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    args = parse_report_args(__doc__)
    began = time.perf_counter()
    if args.quick:
        seeds, T_full, T_bandit, repeats = range(1), 2_000, 2_000, 1
    else:
        seeds, T_full, T_bandit, repeats = range(3), 20_000, 20_000, 3

    curves_full, full_rows = _experiment(
        "full", _full_sets, seeds, T_full, EPSILONS)
    curves_bandit, bandit_rows = _experiment(
        "bandit, ask/tell", _bandit_sets, seeds, T_bandit, EPSILONS)
    _, batch_rows_full = _experiment(
        f"full, batch_size={BATCH}", lambda s, e, r: _full_sets(s, e, r, BATCH),
        seeds, T_full, (1.0, np.inf))
    accept = []
    _, batch_rows_bandit = _experiment(
        f"bandit, ask/tell, batch_size={BANDIT_BATCH}",
        lambda s, e, r: _bandit_sets(s, e, r, BANDIT_BATCH), seeds, T_bandit,
        (1.0, 5.0, np.inf), accept)
    speed = _speed(repeats, args.quick)

    if args.out:
        figure = Path(args.out).with_suffix(".png")
    elif not args.quick:
        figure = REPO / "docs" / "figures" / "submodular_regret.png"
    else:
        figure = None
    if figure is not None:
        _figure(curves_full, curves_bandit, figure)
    elapsed = time.perf_counter() - began

    header = ["mode", "epsilon", "rows T", "Q1", "Q2", "Q3", "Q4", "avg to T",
              "Q4 min-max over seeds", "slope of R(t)", "epsilon spent"]
    text = "\n".join([
        "# PrivateSubmodularSelector: regret on a planted stream",
        "",
        f"Measured by `{command_line('bench_submodular.py')}`; set-up in the docstring of",
        "`benchmarks/bench_submodular.py`. Run time "
        f"{elapsed:.0f} s.",
        "",
        *machine_lines(),
        "",
        f"## Average regret per row (n = {N_ITEMS}, delta = {DELTA:g}, {len(seeds)} seed(s), "
        "mean over seeds)",
        "",
        "Regret of a row: F(S_t) - F(S*), F the expected cost, S_t the played set. Q1..Q4:",
        "average regret over each quarter of the stream. Slope: least-squares slope of",
        "log R(t) against log t for t in [T/100, T] (1 = no learning; theory 0.5 for full",
        "information, 0.75 for bandit). `horizon` = number of rounds in every run.",
        "",
        md_table(header, full_rows + bandit_rows),
        "",
        f"## Rounds: full information in rounds of {BATCH} rows (each row plays the round's "
        f"set), bandit in rounds of {BANDIT_BATCH} visitors (each visitor plays their own set, "
        "drawn from the round's point)",
        "",
        md_table(header, batch_rows_full + batch_rows_bandit),
        "",
        "Issue 15's acceptance (bandit rounds must learn): average regret of the first 2,000",
        "visitors (T/10 with --quick) and of the second half; ratio = second half / first,",
        "mean [min, max] over seeds.",
        "",
        md_table(["mode", "epsilon", "first 2,000", "second half", "ratio"], accept),
        "",
        "![average regret](../figures/submodular_regret.png)",
        "",
        "Figure: average regret R(t) / t, one round a row, mean over seeds"
        + (" (the committed figure is from the full run)." if args.quick else "."),
        "",
        f"## Speed, n = 50 (epsilon = 1, median of {repeats})",
        "",
        md_table(["what", "rounds (or rows) timed", "rate"], speed),
        "",
    ])
    write_report(text, args, "submodular.md")


if __name__ == "__main__":
    main()

"""Seed 001: regret of private online submodular minimisation, full information against bandit.

Seed 001 (Cardoso and Cummings) runs private Follow-the-Approximate-Leader
on Lovasz extensions and bounds the expected regret by O~(sqrt(T)) with
full information and O~(T^(3/4)) with bandit feedback (only the cost of the
played set is seen). The seed reports no experiment; this one measures the
two regimes on a stream with a known answer:

* stream: ``make_submodular_stream(n_items=12, n_rounds=T)``, whose rows
  define the cost f_t(S) = c sqrt(|S|) - sum_{i in S} clip(r_ti, -1, 1) and
  whose expected cost F has a planted set S* as its unique minimiser;
* full information: ``PrivateSubmodularSelector(cost=stream.cost,
  horizon=T)`` with one ``partial_fit`` call per row; the set played on row
  t is ``get_support()`` before the call (the initial set is empty);
* bandit: ``PrivateSubmodularSelector(feedback="bandit", horizon=T)`` in its
  live loop, ``ask()`` then ``tell(cost of the played set)``, one row a round
  (exploration included in the regret);
* regret of row t = F(S_t) - F(S*), S_t the set played on it (the expected
  cost, so the rows' own noise does not enter the curves).
"""

import time
from pathlib import Path

import numpy as np

from ..datasets import make_submodular_stream
from ..feature_selection import PrivateSubmodularSelector
from ._report import markdown_table, output_folder, provenance, pyplot

__all__ = ["submodular_regret", "run"]

NAME = "submodular-regret"
TITLE = "seed 001: regret of private online submodular minimisation, full information and bandit"
N_ITEMS, DELTA = 12, 1e-5
FEEDBACKS = ("full", "bandit")


def _played_sets(stream, feedback, epsilon, seed):
    """The set played on every row (boolean masks, (T, n)), and privacy_spent_."""
    T = stream.rows.shape[0]
    sets = np.empty((T, N_ITEMS), dtype=bool)
    if feedback == "full":
        sel = PrivateSubmodularSelector(cost=stream.cost, epsilon=epsilon, delta=DELTA,
                                        horizon=T, random_state=seed)
        sets[0] = False  # before the first round the selector plays x = 0: the empty set
        for t in range(T):
            sel.partial_fit(stream.rows[t:t + 1])
            if t + 1 < T:
                sets[t + 1] = sel.get_support()
        return sets, sel.privacy_spent_.epsilon
    sel = PrivateSubmodularSelector(n_items=N_ITEMS, cost=stream.cost, feedback="bandit",
                                    epsilon=epsilon, delta=DELTA, horizon=T,
                                    random_state=seed)
    for t, row in enumerate(stream.rows):
        sets[t] = sel.ask()
        sel.tell(float(stream.cost(sets[t][None, :], row)[0]))
    return sets, sel.privacy_spent_.epsilon


def submodular_regret(n_rounds=10_000, epsilons=(0.5, 1.0, 5.0, np.inf), seeds=(0, 1)):
    """Per-row regret F(S_t) - F(S*) for each feedback and epsilon, mean over seeds.

    Parameters
    ----------
    n_rounds : int, default=10_000
    epsilons : tuple of float, default=(0.5, 1, 5, inf)
        ``inf`` is the same learner without noise.
    seeds : tuple of int, default=(0, 1)
        Seed s draws the stream and the selector's noise.

    Returns
    -------
    regret : dict
        ``(feedback, epsilon) -> ndarray (n_rounds,)``.
    spent : dict
        ``(feedback, epsilon) -> float``: ``privacy_spent_.epsilon``.

    Examples
    --------
    >>> from skdpol.reproduce.submodular_regret import submodular_regret
    >>> regret, spent = submodular_regret(n_rounds=200, epsilons=(1.0,), seeds=(0,))
    >>> bool((regret["full", 1.0] >= 0).all()), round(spent["bandit", 1.0], 6)
    (True, 1.0)
    """
    regret, spent = {}, {}
    for seed in seeds:
        stream = make_submodular_stream(N_ITEMS, n_rounds, random_state=seed)
        for feedback in FEEDBACKS:
            for eps in epsilons:
                sets, spent[feedback, eps] = _played_sets(stream, feedback, eps, seed)
                per_row = stream.expected_cost(sets) - stream.optimal_cost
                key = (feedback, eps)
                regret[key] = regret.get(key, 0.0) + per_row / len(seeds)
    return regret, spent


def _eps_name(eps):
    return "inf" if np.isinf(eps) else f"{eps:g}"


def _slope(per_row):
    """Least-squares slope of log R(t) on log t over t in [T/100, T]."""
    T = per_row.size
    t = np.unique(np.geomspace(max(T // 100, 1), T, 30).astype(int))
    cumulative = np.cumsum(per_row)[t - 1]
    if np.any(cumulative <= 0):
        return float("nan")
    return float(np.polyfit(np.log(t), np.log(cumulative), 1)[0])


def _table(regret, spent):
    return [[feedback, _eps_name(eps), *[q.mean() for q in np.array_split(per_row, 4)],
             per_row.mean(), _slope(per_row), spent[feedback, eps]]
            for (feedback, eps), per_row in regret.items()]


def _plot(regret, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4), sharey=True)
    for ax, feedback in zip(axes, FEEDBACKS):
        for (fb, eps), per_row in regret.items():
            if fb == feedback:
                t = np.arange(1, per_row.size + 1)
                ax.plot(t, np.cumsum(per_row) / t, label=f"epsilon = {_eps_name(eps)}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("round t (one row a round)")
        ax.set_title("full information" if feedback == "full" else "bandit (ask / tell)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("average regret R(t) / t")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"Seed 001: private online submodular minimisation, n = {N_ITEMS} items, "
                 "planted stream", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def reproduce_submodular_regret(out_dir, *, n_rounds=10_000, seeds=(0, 1),
                                epsilons=(0.5, 1.0, 5.0, np.inf), command=None):
    """Measure seed 001's two regimes and write ``submodular_regret.{md,png}`` into ``out_dir``.

    Parameters
    ----------
    out_dir : str or path-like
        Created if absent.
    n_rounds : int, default=10_000
    seeds : tuple of int, default=(0, 1)
    epsilons : tuple of float, default=(0.5, 1, 5, inf)
    command : str or None, default=None
        The command line named in the report.

    Returns
    -------
    rows : list of list
        The table: feedback, epsilon, average regret per quarter, over the
        stream, the slope of log R(t) and the epsilon spent.
    """
    start = time.perf_counter()
    regret, spent = submodular_regret(n_rounds=n_rounds, epsilons=epsilons, seeds=seeds)
    rows = _table(regret, spent)
    out = output_folder(out_dir)
    _plot(regret, out / "submodular_regret.png")
    call = (f"reproduce_submodular_regret(out_dir, n_rounds={n_rounds}, seeds={tuple(seeds)}, "
            f"epsilons={tuple(float(e) for e in epsilons)})")
    header = ["feedback", "epsilon", "Q1", "Q2", "Q3", "Q4", "R(T) / T", "slope of R(t)",
              "epsilon spent"]
    text = f"""# Seed 001: private online submodular minimisation, full information against bandit

{provenance(command or "skdpol.reproduce.submodular_regret." + call, time.perf_counter() - start)}
Settings: `{call}`.

![average regret](submodular_regret.png)

## Set-up

{__doc__.split(chr(10) + chr(10), 1)[1].strip()}

## Average regret per row (n = {N_ITEMS}, delta = {DELTA:g}, mean over {len(seeds)} seed(s))

Q1..Q4: average regret over each quarter of the stream. Slope: least-squares
slope of log R(t) against log t for t in [T/100, T]. The seed's bounds:
slope <= 0.5 (full information), <= 0.75 (bandit); 1 means no learning.

{markdown_table(header, rows)}

The benchmark `benchmarks/bench_submodular.py` measures the same stream at
T = 20,000 with rounds of several rows and the selector's speed
(`docs/benchmarks/submodular.md`).
"""
    (out / "submodular_regret.md").write_text(text)
    return rows


def run(out_dir, *, quick=False, command=None):
    """The CLI's entry: T = 10,000 over two seeds, or ``quick`` (T = 200, one seed).

    Returns
    -------
    paths : list of pathlib.Path
        The Markdown page and the figure written.
    """
    options = dict(n_rounds=200, seeds=(0,)) if quick else {}
    reproduce_submodular_regret(out_dir, command=command, **options)
    return [Path(out_dir) / "submodular_regret.md", Path(out_dir) / "submodular_regret.png"]

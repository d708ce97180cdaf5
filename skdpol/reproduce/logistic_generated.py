"""Seed 002's Figure 2(c) in spirit: private online logistic regression on a
generated 54-feature stream (not on covertype, which is not shipped).

Seed 002 (Jain, Kothari, Thakurta, COLT 2012), Section 5(c): logistic
regression on the binary forest covertype data (54 features, 581,012 rows,
10% held out), test accuracy over 10 runs at delta = 0.01. We cannot ship
that data, so the stream is ``make_online_classification`` (54 features, a
covertype-like layout), the last 10% held out.

How PIGD is run
---------------
POCP (``skdpol.online.OutputPerturbation``) keeps the non-private IGD iterate
as state and only adds noise to what it publishes, so the noise never feeds
back. One per-row ``ImplicitGD`` trajectory per run gives the final iterate
W, and the model a stream consumed in one go with ``horizon=T`` publishes at
the end is ``project_ball(W + N(0, (m Delta)^2 I), radius)``, with Delta the
base's ``sensitivity()`` after T rounds and m the multiplier
``OutputPerturbation`` computes for that horizon. Every eps and both
calibrations reuse W; within a run the two calibrations at one eps share
their standard normal draw (common random numbers) and differ only in scale.
The rows are prepared as the estimator prepares them: clipped to
``data_norm``, then an intercept column equal to ``data_norm`` appended
(row bound sqrt(2) data_norm), labels -1/+1.
"""

import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from dp_accounting import GaussianDpEvent
from sklearn.linear_model import LogisticRegression

from ..accounting import epsilon_spent
from ..datasets import make_online_classification
from ..exceptions import PrivacyLeakWarning
from ..linear_model import PrivateOnlineLogistic
from ..losses import LogisticLoss
from ..mechanisms import NoiseSpec
from ..online import ImplicitGD
from ..online import OutputPerturbation, paper_multiplier
from ..online import project_ball

from ._report import markdown_table, output_folder, provenance, pyplot

__all__ = ["reproduce_logistic_generated", "run"]

NAME = "logistic-generated"
TITLE = ("seed 002, Figure 2(c) in spirit: accuracy of private logistic regression "
         "on a generated 54-feature stream")

ALPHA = 0.05  # the estimator's default, used for IGD too
CHUNK = 10_000  # rows per partial_fit call of the default estimator
# seed 002 Section 5(c), test accuracy in % (real covertype data)
SEED_IGD = 68.1
SEED_PIGD = {20.0: 66.3, 10.0: 62.7, 1.0: 59.4, 0.1: 58.3}
METHODS = ("igd_nonprivate", "pigd_paper", "pigd_tight", "default", "default_fit")
LABELS = {"igd_nonprivate": "non-private IGD", "pigd_paper": "PIGD (paper calibration)",
          "pigd_tight": "PIGD (tight)", "default": "default (partial_fit)",
          "default_fit": "default fit"}


def _augment(X, data_norm):
    """Clip rows to ``data_norm`` and append the intercept column (as the estimator)."""
    norms = np.linalg.norm(X, axis=1)
    scale = np.minimum(1.0, data_norm / np.maximum(norms, 1e-300))
    return np.column_stack([X * scale[:, None], np.full(X.shape[0], data_norm)])


def _accuracy(W, Xa, y_pm1):
    return float(np.mean(np.sign(Xa @ W[0]) == y_pm1))


def _one_run(r, n_samples, epsilons, delta):
    """All methods on the stream of run ``r``; one dict per eps."""
    data = make_online_classification(n_samples=n_samples, n_features=54, random_state=r)
    n_test = n_samples // 10
    n_train = n_samples - n_test
    X, y, X_test, y_test = data.X[:n_train], data.y[:n_train], data.X[n_train:], data.y[n_train:]
    Xa, Xa_test = _augment(X, data.data_norm), _augment(X_test, data.data_norm)
    y_pm1, y_test_pm1 = 2.0 * y - 1.0, 2.0 * y_test - 1.0

    loss = LogisticLoss()
    params = dict(loss=loss, n_features=Xa.shape[1], radius=loss.optimum_radius(ALPHA),
                  alpha=ALPHA, row_bound=math.sqrt(2.0) * data.data_norm, batch_size=1,
                  horizon=n_train)
    base = ImplicitGD(**params)
    for _ in base.run(Xa, y_pm1):
        pass
    W, sens = base.W, base.sensitivity()
    literal_sens = 2.0 * base.lipschitz / n_train  # the seed's Lemma 4 read literally: 2L/t
    shared = {
        "igd_nonprivate": _accuracy(W, Xa_test, y_test_pm1),
        "igd_norm": float(np.linalg.norm(W)),
        "logreg_reference": LogisticRegression(max_iter=1000).fit(X, y).score(X_test, y_test),
        "logreg_same_objective": LogisticRegression(
            C=1.0 / (ALPHA * n_train), fit_intercept=False, max_iter=1000,
        ).fit(Xa, y).score(Xa_test, y_test),
        "majority": float(max(np.mean(y_test), 1.0 - np.mean(y_test))),
    }

    rng = np.random.default_rng(r)
    rows = []
    for eps in epsilons:
        row = {"run": r, "epsilon": float(eps), **shared}
        Z = rng.standard_normal(W.shape)
        for cal in ("paper", "tight"):
            m = OutputPerturbation(ImplicitGD(**params), epsilon=eps, delta=delta,
                                   noise=NoiseSpec("gaussian", "float"), calibration=cal,
                                   rng=None)._spec.multiplier  # the seed's Gaussian noise
            row[f"m_{cal}"] = m
            row[f"pigd_{cal}"] = _accuracy(project_ball(W + m * sens * Z, base.radius),
                                           Xa_test, y_test_pm1)
        row["pigd_paper_literal"] = _accuracy(
            project_ball(W + row["m_paper"] * literal_sens * Z, base.radius),
            Xa_test, y_test_pm1)

        est = PrivateOnlineLogistic(epsilon=eps, delta=delta, data_norm=data.data_norm,
                                    random_state=r)
        for start in range(0, n_train, CHUNK):
            est.partial_fit(X[start:start + CHUNK], y[start:start + CHUNK], classes=[0, 1])
        row["default"] = est.score(X_test, y_test)
        row["default_eps_spent"] = est.privacy_spent_.epsilon
        fit = PrivateOnlineLogistic(epsilon=eps, delta=delta, data_norm=data.data_norm,
                                    random_state=r).fit(X, y, classes=[0, 1])
        row["default_fit"] = fit.score(X_test, y_test)
        row["default_fit_eps_spent"] = fit.privacy_spent_.epsilon
        rows.append(row)
    info = dict(n_train=n_train, sens=sens, literal_sens=literal_sens,
                data_norm=data.data_norm)
    return rows, info


def _summary(runs, delta, n_train):
    """Mean/std over runs per eps, plus the calibrations' true spend."""
    out = []
    for eps, grp in runs.groupby("epsilon", sort=True):
        row = {"epsilon": eps}
        for col in (*METHODS, "pigd_paper_literal", "logreg_reference",
                    "logreg_same_objective", "majority"):
            row[col] = grp[col].mean()
            row[f"{col}_std"] = grp[col].std(ddof=1) if len(grp) > 1 else 0.0
        for cal in ("paper", "tight"):
            m = float(grp[f"m_{cal}"].iloc[0])  # depends on eps, delta, T only
            row[f"{cal}_multiplier"] = m
            row[f"{cal}_eps_spent_one_release"] = epsilon_spent(GaussianDpEvent(m), delta)[0]
            row[f"{cal}_eps_spent_all_rounds"] = epsilon_spent(
                GaussianDpEvent(m / math.sqrt(n_train)), delta)[0]
        row["igd_norm"] = grp["igd_norm"].mean()
        row["default_eps_spent"] = grp["default_eps_spent"].mean()
        row["default_fit_eps_spent"] = grp["default_fit_eps_spent"].mean()
        out.append(row)
    return pd.DataFrame(out)


# ------------------------------------------------------------------ report
def _pm(table, col):
    return [f"{100 * a:.1f} ± {100 * s:.1f}" for a, s in
            zip(table[col], table[f"{col}_std"])]


def _md(df):
    return markdown_table(list(df.columns), df.itertuples(index=False))


def _plot(table, path):
    plt = pyplot()
    eps = table["epsilon"].to_numpy()
    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    ax.axhline(100 * table["igd_nonprivate"].iloc[0], color="black", lw=1.8,
               label="non-private IGD")
    ax.axhline(100 * table["majority"].iloc[0], color="grey", lw=1, ls=":",
               label="majority class")
    for col, style in (("pigd_paper", "s-"), ("pigd_tight", "o-"), ("default", "^-"),
                       ("default_fit", "v-")):
        ax.errorbar(eps, 100 * table[col], yerr=100 * table[f"{col}_std"], fmt=style,
                    capsize=3, label=LABELS[col])
    seed_eps = sorted(SEED_PIGD)
    ax.plot(seed_eps, [SEED_PIGD[e] for e in seed_eps], "x--", color="grey",
            label="seed 002 PIGD (real covertype)")
    ax.axhline(SEED_IGD, color="grey", lw=1, ls="--",
               label="seed 002 non-private IGD (real covertype)")
    ax.set_xscale("log")
    ax.set_xlabel("epsilon (delta = 0.01)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("Seed 002 Fig. 2(c) in spirit: a generated 54-feature stream", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _write_doc(path, table, *, n_samples, n_train, n_runs, delta, runtime, figure,
               sens, literal_sens, data_norm, command=None):
    t = table.set_index("epsilon")
    eps_list = list(t.index)
    acc = pd.DataFrame({"epsilon": [f"{e:g}" for e in eps_list]})
    for col in METHODS:
        acc[LABELS[col]] = _pm(table, col)
    acc["seed 002 PIGD"] = [f"{SEED_PIGD[e]:.1f}" if e in SEED_PIGD else "-" for e in eps_list]
    priv = pd.DataFrame({
        "epsilon": [f"{e:g}" for e in eps_list],
        "m paper": [f"{v:.4g}" for v in t["paper_multiplier"]],
        "m tight": [f"{v:.4g}" for v in t["tight_multiplier"]],
        "paper: one release": [f"{v:.3g}" for v in t["paper_eps_spent_one_release"]],
        "paper: all T rounds": [f"{v:.3g}" for v in t["paper_eps_spent_all_rounds"]],
        "tight: one release": [f"{v:.3g}" for v in t["tight_eps_spent_one_release"]],
        "tight: all T rounds": [f"{v:.3g}" for v in t["tight_eps_spent_all_rounds"]],
        "default partial_fit": [f"{v:.3g}" for v in t["default_eps_spent"]],
        "default fit": [f"{v:.3g}" for v in t["default_fit_eps_spent"]],
    })
    igd = 100 * t["igd_nonprivate"].iloc[0]
    tight = 100 * t["pigd_tight"]
    paper = 100 * t["pigd_paper"]
    chance = 100 * t["majority"].iloc[0]
    e_hi, e_lo = max(eps_list), min(eps_list)
    monotone = bool(np.all(np.diff(tight.to_numpy()) >= -1e-12))
    near_chance = [e for e in eps_list if tight[e] - chance < 2.0]
    chance_text = (f", and does not beat always predicting the majority class "
                   f"({chance:.1f}%) by 2 points at eps = "
                   f"{', '.join(f'{e:g}' for e in near_chance)}" if near_chance else "")
    ratio = t["paper_multiplier"] / t["tight_multiplier"]
    scan_over = all(
        epsilon_spent(GaussianDpEvent(paper_multiplier(e, delta, n_train) / math.sqrt(n_train)),
                      delta)[0] <= e * (1 + 1e-9) for e in np.geomspace(1e-4, 1e3, 29))
    over = bool(np.all(t["paper_eps_spent_all_rounds"] <= t.index.to_numpy() * (1 + 1e-9)))
    versus = "\n".join(
        f"* eps = {e:g}: tight {tight[e]:.1f}, paper {paper[e]:.1f} "
        f"(difference {tight[e] - paper[e]:+.1f} points)" for e in eps_list)
    literal_rows = []
    for e in eps_list:
        m_true = t.loc[e, "paper_multiplier"] * literal_sens / sens
        spent = epsilon_spent(GaussianDpEvent(m_true / math.sqrt(n_train)), delta)[0]
        literal_rows.append(
            f"* eps = {e:g}: {100 * t.loc[e, 'pigd_paper_literal']:.1f}%, noise multiplier "
            f"{m_true:.4g} (tight: {t.loc[e, 'tight_multiplier']:.4g}), true cost of all T "
            f"rounds eps = {spent:.3g}" + (" **> nominal**" if spent > e * (1 + 1e-9) else ""))
    literal = "\n".join("  " + row for row in literal_rows)
    harness_gap = 100 * (t["logreg_same_objective"].iloc[0] - t["igd_nonprivate"].iloc[0])
    harness = (f"IGD matches sklearn on its own objective within {abs(harness_gap):.1f} "
               "points, so the harness is sound" if abs(harness_gap) < 1.0 else
               f"sklearn on IGD's own objective scores {harness_gap:+.1f} points more "
               "than IGD: one pass of IGD has not converged at this T")
    pigd_below = bool(np.all(np.maximum(tight, paper) <= igd))
    default_text = ", ".join(f"{100 * t.loc[e, 'default']:.1f}% at eps = {e:g}" for e in eps_list)
    fit_text = ", ".join(f"{100 * t.loc[e, 'default_fit']:.1f}% at eps = {e:g}" for e in eps_list)
    fig_line = (f"![accuracy vs epsilon]({figure.name})" if figure is not None
                else "(figure not drawn)")
    call = (f"reproduce_logistic_generated(out_dir, n_samples={n_samples}, "
            f"epsilons={tuple(float(e) for e in eps_list)}, delta={delta:g}, n_runs={n_runs})")
    text = f"""# Reproduction in spirit: seed 002, Figure 2(c) (online logistic regression, generated data)

{provenance(command or "skdpol.reproduce.logistic_generated." + call, runtime)}
Settings: `{call}`.

{fig_line}

## Set-up

* Data: the seed uses the binary forest covertype data (54 features, 581,012
  rows, 10% held out), which we cannot ship. Run r uses
  `skdpol.datasets.make_online_classification(n_samples={n_samples}, n_features=54,
  random_state=r)` (10 standardised continuous columns and two one-hot blocks,
  labels from a logistic model), r = 0..{n_runs - 1}; the last {n_samples - n_train:,}
  rows are the test set, the first T = {n_train:,} rows the stream. The public
  row bound is `data.data_norm` = {data_norm:.4g}.
* Rows are prepared as `PrivateOnlineLogistic` prepares them: clipped to
  data_norm, an intercept column equal to data_norm appended (row bound
  sqrt(2) data_norm), labels -1/+1, logistic loss plus alpha/2 ||W||^2 with
  **alpha = {ALPHA}** (the estimator's default), over the ball of radius
  sqrt(2 ln 2 / alpha) = {math.sqrt(2 * math.log(2) / ALPHA):.3f} that holds the optimum.
* **non-private IGD**: per-row implicit gradient descent (`ImplicitGD`,
  batch_size=1, step 1/(alpha t)), one pass; accuracy of its final iterate W.
* **PIGD**: seed 002's output perturbation (POCP) of that IGD with horizon T
  (noise calibrated for publishing after every one of the T rounds, as the
  seed does). The model published at the end of the stream is
  Pi_C(W + N(0, (m Delta)^2 I)) with Delta = 2 L (1 + 2e-6) / (alpha (T + 1))
  = {sens:.4g} (L = sqrt(2) data_norm) and m from `OutputPerturbation` for
  horizon T: `calibration="paper"` is the seed's formula (Algorithm 1, with
  the budget split of its Theorem 1), `"tight"` is exact Gaussian-DP
  accounting of T releases. POCP's noise never feeds back, so each run
  computes one IGD trajectory and reuses W for every eps; at one eps both
  calibrations share their standard normal draw (noise seed r).
* delta = {delta:g} is the seed's value. It is above 1/n, which the estimators
  warn about (a mechanism that publishes one row in the clear satisfies such
  a delta); the warning is silenced here to reproduce the seed. On real data
  choose delta well below 1/n.
* **default**: `PrivateOnlineLogistic(epsilon=eps, delta={delta:g},
  data_norm=data.data_norm, random_state=r)` with its defaults (algorithm
  "ftrl", batch_size 512, alpha 0.05, horizon=None), one pass of
  `partial_fit` in chunks of {CHUNK:,} rows with `classes=[0, 1]` (one release
  per call). **default fit**: the same estimator's `fit` (one release, POL).
* Accuracy = mean(sign(score) == y) on the test rows, mean ± std over
  {n_runs} runs, in %. Each run's `random_state` also draws the generating
  model (its coefficients and class balance), so the std mixes data sets as
  well as noise: the majority-class rate alone varies by
  {100 * t['majority_std'].iloc[0]:.1f} points (std) across runs.

## Results

{_md(acc)}

Non-private references (same for every eps), mean ± std over runs:

* non-private IGD (alpha = {ALPHA}): {igd:.1f} ± {100 * t['igd_nonprivate_std'].iloc[0]:.1f}
* sklearn `LogisticRegression` on IGD's exact objective (augmented rows,
  C = 1 / (alpha T), no extra intercept), the harness check:
  {100 * t['logreg_same_objective'].iloc[0]:.1f} ± {100 * t['logreg_same_objective_std'].iloc[0]:.1f}
* **non-private LogisticRegression (reference)**, sklearn defaults (C = 1) on
  the raw rows: {100 * t['logreg_reference'].iloc[0]:.1f} ± {100 * t['logreg_reference_std'].iloc[0]:.1f}
* majority class of the test set: {chance:.1f}

Seed 002 on real covertype: non-private IGD **{SEED_IGD}**; PIGD
{', '.join(f'eps = {e:g}: **{v}**' for e, v in sorted(SEED_PIGD.items(), reverse=True))}.

### Privacy actually spent (delta = {delta:g})

`epsilon_spent` of the releases, from the accountant. "one release" is what
one `partial_fit` call consuming the whole stream with horizon=T publishes;
"all T rounds" is the seed's setting, a model published after every row
(Gaussian releases compose to GaussianDpEvent(m / sqrt(T))). The default
estimator's columns are its `privacy_spent_` (mean over runs).

{_md(priv)}

The tight calibration spends exactly the nominal eps over T releases (and
almost nothing for a single release, since it is calibrated for T). The
seed's formula {'spends at most the nominal eps at every eps of the table, i.e. it over-noises' if over else 'spends more than nominal at some eps of the table (it under-noises there)'}:
its m is {ratio.min():.1f} to {ratio.max():.1f} times the tight m. Its noise scales
like T^(0.5+c) / sqrt(eps) where a Gaussian mechanism needs sqrt(T) / eps; at
delta = {delta:g} and T = {n_train:,} its true cost over all T rounds is
{'at or below nominal for every eps of a scan from 1e-4 to 1e3' if scan_over else 'above nominal somewhere in a scan of eps from 1e-4 to 1e3'}.

## Discussion

**What reproduces.** The ordering and the shape: non-private IGD is
{'above every PIGD model' if pigd_below else 'not above every PIGD model (a test-set fluctuation)'}, and PIGD's accuracy {'rises monotonically' if monotone else 'rises, though not monotonically,'}
with eps, from {tight[e_lo]:.1f}% at eps = {e_lo:g} to {tight[e_hi]:.1f}% at
eps = {e_hi:g} (tight calibration), against {igd:.1f}% without privacy. As in
the seed, the accuracy lost to privacy is largest at small eps.

**What does not.** The levels. The seed loses {SEED_IGD - SEED_PIGD[20.0]:.1f}
points at eps = 20 and {SEED_IGD - SEED_PIGD[0.1]:.1f} at eps = 0.1; here PIGD
(tight) loses {igd - tight[e_hi]:.1f} points at eps = {e_hi:g}{chance_text}. With
honest constants the noise in PIGD's last model is large next to W: per
coordinate its standard deviation m Delta is {t.loc[e_hi, 'tight_multiplier'] * sens:.3g}
at eps = {e_hi:g} and {t.loc[e_lo, 'tight_multiplier'] * sens:.3g} at eps = {e_lo:g}
(tight; 55 coordinates), while ||W|| is about {t['igd_norm'].iloc[0]:.2g}; once the
noise dominates, the projection onto the ball returns a nearly random
direction. Why the seed's numbers are much better, as far as we can tell:

* **Sensitivity.** The seed's Lemma 4 states IGD's sensitivity as 2L/t; its
  proof drops the step size 1/(alpha t), so the true bound is
  2L/(alpha (t+1)), 1/alpha = {1 / ALPHA:g} times larger at alpha = {ALPHA}
  (see `skdpol.online._gradient`). Our "paper" column applies the seed's
  multiplier to the correct sensitivity. Read literally (noise m 2L/T, a
  diagnostic whose true cost is given for each eps; not part of the table),
  the seed's formula gives:

{literal}

  Even this reading, which under-noises wherever its true cost is above
  nominal, loses {igd - 100 * t.loc[e_hi, 'pigd_paper_literal']:.1f} points at
  eps = {e_hi:g} against the seed's {SEED_IGD - SEED_PIGD[20.0]:.1f}; the slip alone does not
  explain the gap.

* **Scale.** The seed states neither alpha, nor its row bound, nor its
  feature scaling. At fixed eps the noise per coordinate, m 2L / (alpha T),
  scales like row bound / (alpha sqrt(T)), while the ball holding W has
  radius sqrt(2 ln 2 / alpha) whatever the row bound. Our rows have bound
  sqrt(2) x {data_norm:.3g} and T = {n_train:,}; the seed's T is about 523,000,
  and its row bound is not stated (data_norm = 1 instead of {data_norm:.3g}
  would make the noise {data_norm:.3g} times smaller).
* **Data.** The generated stream is not covertype: sklearn's logistic
  regression reaches {100 * t['logreg_reference'].iloc[0]:.1f}% on it, where the seed's
  non-private IGD reached {SEED_IGD}% on covertype; alpha = {ALPHA} costs IGD
  {100 * (t['logreg_reference'].iloc[0] - t['logreg_same_objective'].iloc[0]):.1f} points of
  regularisation bias here (sklearn on IGD's objective:
  {100 * t['logreg_same_objective'].iloc[0]:.1f}%; {harness}).

**Paper against tight**, at equal nominal eps:

{versus}

The seed's multiplier is {ratio.min():.1f} to {ratio.max():.1f} times the tight one
here, {'and its true cost is at or below nominal at every eps of the table: it over-noises, so it cannot beat the tight calibration except by chance (where both are at chance the difference is noise).' if over else 'and at some eps its true cost exceeds nominal (see the spend table): there it under-noises, and any accuracy it gains over the tight calibration is bought with privacy it does not state.'}

**The library's default** (private FTRL through a tree of gradient sums,
batch_size 512, one release per {CHUNK:,}-row chunk, noise ~ log T / T; no
penalty bias, which is why it can beat the penalised non-private IGD)
scores {default_text} (non-private IGD: {igd:.1f}%); its one-release `fit` (POL) reaches {fit_text}.
Output perturbation of an IGD released after every row is the weakest way,
of those compared, to spend the budget on this stream.
"""
    path.write_text(text)


def reproduce_logistic_generated(out_dir, n_samples=200_000,
                                 epsilons=(0.1, 1.0, 10.0, 20.0), delta=0.01, n_runs=10,
                                 plot=True, *, command=None):
    """Reproduce seed 002's Figure 2(c) in spirit and write its report.

    Runs non-private IGD, PIGD with the seed's noise formula and with exact
    accounting, and ``PrivateOnlineLogistic`` with its defaults (``partial_fit``
    in chunks and ``fit``) on generated streams shaped like covertype (54
    features: 10 continuous, two one-hot blocks), and writes
    ``<out_dir>/logistic_generated.md`` and, when ``plot`` is true,
    ``<out_dir>/logistic_generated.png`` (needs matplotlib).

    Parameters
    ----------
    out_dir : str or path-like
        Created if absent.
    n_samples : int, default=200_000
        Rows per run; the last 10% are the test set.
    epsilons : tuple of float, default=(0.1, 1.0, 10.0, 20.0)
    delta : float, default=0.01
    n_runs : int, default=10
        Run r uses data ``random_state=r`` and noise seed r.
    plot : bool, default=True
    command : str or None, default=None
        The command line named in the report (None: this function's call).

    Returns
    -------
    table : pandas.DataFrame
        One row per eps: mean test accuracy of every method (columns
        ``igd_nonprivate``, ``pigd_paper``, ``pigd_tight``, ``default``,
        ``default_fit``, the diagnostic ``pigd_paper_literal``, the references
        ``logreg_reference``, ``logreg_same_objective`` and ``majority``),
        each with a ``<column>_std`` over runs; the multipliers and the
        epsilon spent by one release and by all T rounds of each calibration
        (``paper_eps_spent_one_release``, ``paper_eps_spent_all_rounds``,
        ``tight_...``); the default estimator's mean ``privacy_spent_``
        (``default_eps_spent``, ``default_fit_eps_spent``).
    """
    start = time.perf_counter()
    rows = []
    with warnings.catch_warnings():
        # the seed's delta = 0.01 is above 1/n, which the estimator rightly
        # warns about; it is kept to reproduce the seed and stated in the report
        warnings.filterwarnings("ignore", message="delta=.* is not below 1/n",
                                category=PrivacyLeakWarning)
        for r in range(n_runs):
            run_rows, info = _one_run(r, n_samples, epsilons, delta)  # info: same every run
            rows += run_rows
    table = _summary(pd.DataFrame(rows), delta, info["n_train"])
    out = output_folder(out_dir)
    figure = _plot(table, out / "logistic_generated.png") if plot else None
    runtime = time.perf_counter() - start
    _write_doc(out / "logistic_generated.md", table, n_samples=n_samples, command=command,
               n_runs=n_runs, delta=delta, runtime=runtime, figure=figure, **info)
    return table


def run(out_dir, *, quick=False, command=None):
    """The CLI's entry: the full table, or a seconds-long ``quick`` version.

    Parameters
    ----------
    out_dir : str or path-like
    quick : bool, default=False
        2,000 rows, one run (a smoke test of the pipeline, not the table).
    command : str or None, default=None

    Returns
    -------
    paths : list of pathlib.Path
        The Markdown page and the figure written.
    """
    options = dict(n_samples=2_000, n_runs=1) if quick else {}
    reproduce_logistic_generated(out_dir, command=command, **options)
    return [Path(out_dir) / "logistic_generated.md", Path(out_dir) / "logistic_generated.png"]

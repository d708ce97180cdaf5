"""Reproduction of seed 002's Figure 2(a): average regret of FTL and PQFTL.

Seed 002 (Jain, Kothari, Thakurta, COLT 2012), Section 5: online linear
regression on a synthetic stream, d = 10, g_t ~ N(0, I), y_t = g_t . x* +
N(0, 0.01^2), T = 100,000, alpha = 1. Round t's loss is

    f_t(x) = 1/2 (y_t - g_t . x)^2 + alpha/2 ||x||^2,

the learner plays x_hat_t (the model published after t - 1 rounds) and the
regret after t rounds is sum_{s<=t} f_s(x_hat_s) - min_x sum_{s<=t} f_s(x),
whose minimiser is the ridge solution (t alpha I + G_t^T G_t)^-1 G_t^T y_t.

How f_s(x_hat_s) is measured
----------------------------
``PrivateOnlineRegressor.progressive_predict(X, y, return_coef=True)`` returns,
for every row s, the prediction x_hat_s . g_s and the model x_hat_s itself
(a published release), so both the squared error and alpha/2 ||x_hat_s||^2 are
exact. The offline optimum is exact too.

Nothing here touches curator state: only public attributes and methods.
"""

import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..datasets import make_online_regression
from ..exceptions import PrivacyLeakWarning
from ..linear_model import PrivateOnlineRegressor

from ._report import markdown_table, output_folder, provenance, pyplot

__all__ = ["olr_regret_curves", "reproduce_olr", "run"]

NAME = "olr-regret"
TITLE = "seed 002, Figure 2(a): average regret of private online linear regression"

FTL = "FTL (non-private)"
PAPER = "PQFTL paper"
TIGHT = "PQFTL tight"
_CALIBRATION = {PAPER: "paper", TIGHT: "tight"}
_PAPER_EPS_001 = 1e-2  # the seed's reported PQFTL average regret at eps = 0.01
_INTERMEDIATE = (10, 100, 1_000, 10_000)


# ------------------------------------------------------------------ pieces
def _checkpoints(n_samples, n_checkpoints):
    """~``n_checkpoints`` log-spaced t in [10, T], the intermediate t and T."""
    start = min(10, n_samples)
    grid = np.geomspace(start, n_samples, n_checkpoints).round().astype(np.int64)
    extra = [t for t in _INTERMEDIATE if t <= n_samples]
    return np.unique(np.concatenate([grid, extra, [n_samples]]))


def _offline_optimum(X, y, checkpoints, alpha):
    """min_x sum_{s<=t} f_s(x) at every checkpoint t (ridge, incremental sums)."""
    d = X.shape[1]
    A, b, yy, start = np.zeros((d, d)), np.zeros(d), 0.0, 0
    out = np.empty(len(checkpoints))
    for i, t in enumerate(checkpoints):
        Xc, yc = X[start:t], y[start:t]
        A += Xc.T @ Xc
        b += Xc.T @ yc
        yy += float(yc @ yc)
        start = t
        x = np.linalg.solve(t * alpha * np.eye(d) + A, b)
        out[i] = 0.5 * yy - 0.5 * float(b @ x)  # value of the ridge objective at x
    return out


def _zero_model_regret(X, y, checkpoints, alpha):
    """Regret of always publishing x = 0 (a reference: f_s(0) = y_s^2 / 2)."""
    return 0.5 * np.cumsum(y * y)[checkpoints - 1] - _offline_optimum(X, y, checkpoints, alpha)


def _online_loss(data, epsilon, delta, calibration, alpha, est_seed, checkpoints):
    """Cumulative sum_{s<=t} f_s(x_hat_s) at the checkpoints, and privacy_spent_."""
    X, y = data.X, data.y
    est = PrivateOnlineRegressor(
        epsilon=epsilon, delta=delta, data_norm=data.data_norm, y_bound=data.y_bound,
        # the seed's alpha is per row in raw units; the estimator's is in unit
        # space (rows / data_norm): the same ridge minimiser
        alpha=alpha / data.data_norm**2, fit_intercept=False, horizon=X.shape[0],
        batch_size=1,
        noise_calibration=calibration, random_state=est_seed,
        # the float sampler, as in the seed: its runs at different noise levels
        # share the same standard normal draws (a coupled comparison of the
        # calibrations); the discrete sampler's draws at two scales are unrelated
        noise_sampler="float",
        mechanism="tree",  # the seed's tree (Algorithm 5), not the BLT default
        algorithm="ftl",  # the seed's PQFTL (not the default stream since issue 31)
    )
    with warnings.catch_warnings():
        # the paper calibration's overspend is the point of the comparison: it
        # is reported (epsilon_spent), not warned about
        warnings.filterwarnings("ignore", message="noise_calibration='paper' has spent",
                                category=PrivacyLeakWarning)
        pred, coef, _ = est.progressive_predict(X, y, return_coef=True)
    loss = 0.5 * (y - pred) ** 2 + 0.5 * alpha * np.einsum("ij,ij->i", coef, coef)
    return np.cumsum(loss)[checkpoints - 1], est.privacy_spent_.epsilon


def _run_one(task):
    (rep, data_seed, est_seed, method, eps, n_samples, delta, alpha, checkpoints) = task
    data = make_online_regression(n_samples=n_samples, n_features=10, noise=0.01,
                                  random_state=data_seed)
    calibration = _CALIBRATION.get(method, "tight")
    total, spent = _online_loss(data, eps, delta, calibration, alpha, est_seed, checkpoints)
    regret = total - _offline_optimum(data.X, data.y, checkpoints, alpha)
    return pd.DataFrame({
        "method": method, "epsilon": eps, "epsilon_spent": spent, "repeat": rep,
        "t": checkpoints, "regret": regret, "avg_regret": regret / checkpoints,
    })


def _seeds(random_state, n_repeats):
    """(data seed, estimator seed) per repeat, from one SeedSequence."""
    children = np.random.SeedSequence(random_state).spawn(n_repeats)
    return [tuple(int(s) for s in c.generate_state(2)) for c in children]


def olr_regret_curves(n_samples=100_000, epsilons=(0.01, 0.1, 1.0), delta=1e-5,
                      random_state=0, n_repeats=3, alpha=1.0, n_checkpoints=60,
                      n_jobs=None):
    """Regret of FTL and PQFTL (both calibrations) at log-spaced checkpoints.

    Every repeat draws its own stream and its own tree noise; within a repeat
    all methods see the same stream and the same estimator seed (common random
    numbers: the paper and tight runs at one epsilon share their standard
    normal draws and differ only in scale).

    Returns
    -------
    curves : pandas.DataFrame
        Long form: method, epsilon, epsilon_spent, repeat, t, regret,
        avg_regret (= regret / t).
    """
    from joblib import Parallel, delayed

    checkpoints = _checkpoints(n_samples, n_checkpoints)
    configs = [(FTL, math.inf)] + [(m, float(e)) for m in (PAPER, TIGHT) for e in epsilons]
    tasks = [
        (rep, data_seed, est_seed, method, eps, n_samples, delta, alpha, checkpoints)
        for rep, (data_seed, est_seed) in enumerate(_seeds(random_state, n_repeats))
        for method, eps in configs
    ]
    frames = Parallel(n_jobs=n_jobs)(delayed(_run_one)(task) for task in tasks)
    return pd.concat(frames, ignore_index=True)


# ------------------------------------------------------------------ report
def _summary(curves):
    n_samples = int(curves["t"].max())
    keep = [t for t in _INTERMEDIATE if t < n_samples]
    rows = []
    for (method, eps), grp in curves.groupby(["method", "epsilon"], sort=False):
        mean = grp.groupby("t")["avg_regret"].mean()
        final = grp[grp["t"] == n_samples]["avg_regret"]
        row = {"method": method, "epsilon": eps,
               "epsilon_spent": float(grp["epsilon_spent"].iloc[0])}
        for t in keep:
            row[f"avg_regret_t{t}"] = float(mean.loc[t])
        row["avg_regret_T"] = float(final.mean())
        row["avg_regret_T_std"] = float(final.std(ddof=1)) if len(final) > 1 else 0.0
        rows.append(row)
    return pd.DataFrame(rows)


def _markdown_table(df):
    return markdown_table(list(df.columns), df.itertuples(index=False))


def _plot(curves, epsilons, zero, path):
    plt = pyplot()
    mean = curves.groupby(["method", "epsilon", "t"], sort=False)["avg_regret"].mean()
    colours = dict(zip(epsilons, plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(epsilons)))))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, method in zip(axes, (PAPER, TIGHT)):
        ftl = mean.loc[(FTL, math.inf)]
        ax.loglog(ftl.index, ftl.where(ftl > 0), color="black", lw=1.8, ls="--",
                  label="FTL (non-private)")
        for eps in epsilons:
            curve = mean.loc[(method, float(eps))]
            spent = curves.loc[(curves["method"] == method) & (curves["epsilon"] == eps),
                               "epsilon_spent"].iloc[0]
            label = f"eps={eps:g}" + (f" (true {spent:.3g})" if method == PAPER else "")
            ax.loglog(curve.index, curve.where(curve > 0), color=colours[eps], lw=1.8,
                      label=label)
        ax.loglog(zero.index, zero.where(zero > 0), color="grey", lw=1.2, ls="-.",
                  label="always x = 0 (reference)")
        ax.axhline(_PAPER_EPS_001, color="grey", lw=0.8, ls=":",
                   label="seed's PQFTL at eps=0.01")
        title = ("seed's noise formula (noise_calibration='paper')" if method == PAPER
                 else "exact accounting (noise_calibration='tight')")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("t (rounds)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("average regret  regret(t) / t")
    n_rep = curves["repeat"].nunique()
    fig.suptitle(f"Seed 002 Fig. 2(a): online linear regression, d=10, alpha=1 "
                 f"(mean of {n_rep} runs)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _tight_node_std_V(epsilon, delta, n_samples, data_norm, y_bound):
    """Per-entry std of one tree node's noise on V under the tight calibration.

    Uses the estimator's own defaults (one joint tree, ``default_scales``);
    used only to explain the figure.
    """
    from ..mechanisms import NoiseSpec, tree_event
    from ..online import default_scales, joint_sensitivity

    s_V, s_u = default_scales(data_norm, y_bound)
    m = NoiseSpec.calibrated(
        epsilon, delta, family="gaussian", sampler="float",
        make_event=lambda m: tree_event(noise_multiplier=m, horizon=n_samples)).multiplier
    return m * joint_sensitivity(data_norm, y_bound, s_V, s_u) * s_V


def _write_doc(path, table, curves, *, n_samples, delta, epsilons, random_state,
               n_repeats, runtime, figure, data_norm, y_bound, n_clipped,
               zero_final, command=None):
    paper = table[table["method"] == PAPER].set_index("epsilon")
    tight = table[table["method"] == TIGHT].set_index("epsilon")
    ftl_final = float(table.loc[table["method"] == FTL, "avg_regret_T"].iloc[0])
    spent = "\n".join(
        f"* nominal eps = {e:g}: true eps = {s:.3g} "
        f"({'more' if s > e else 'less'} than nominal: the formula "
        f"{'under' if s > e else 'over'}-noises)"
        for e, s in paper["epsilon_spent"].items())
    verdict = "\n".join(
        f"* eps = {e:g}: tight {tight.loc[e, 'avg_regret_T']:.3g} "
        f"(+- {tight.loc[e, 'avg_regret_T_std']:.2g}), paper "
        f"{paper.loc[e, 'avg_regret_T']:.3g} (+- {paper.loc[e, 'avg_regret_T_std']:.2g}): "
        f"{'tight' if tight.loc[e, 'avg_regret_T'] < paper.loc[e, 'avg_regret_T'] else 'paper'}"
        " lower" for e in tight.index)
    eps_min = float(min(epsilons))
    node = _tight_node_std_V(eps_min, delta, n_samples, data_norm, y_bound)
    reached = tight.loc[eps_min, "avg_regret_T"] <= _PAPER_EPS_001
    levels = int(n_samples).bit_length()
    noise_norm = math.sqrt(2.0 * 10) * node * math.sqrt(levels / 2.0)
    regime = (
        "The noise dominates V_t and u_t over the whole horizon, so the published "
        "model is mostly noise: the eigenvalue floor keeps its norm near "
        "||u noise|| / floor = (y_bound / data_norm) / sqrt(2) = "
        f"{y_bound / data_norm / math.sqrt(2.0):.2f} (default scales), "
        "which costs more than publishing 0."
        if noise_norm > 2 * n_samples else
        f"The noise falls below the signal after about t = {noise_norm / 2:.3g} rounds."
    )
    fig_line = (f"![average regret]({figure.name})" if figure is not None
                else "(figure not drawn: plot=False)")
    call = (f"reproduce_olr(out_dir, n_samples={n_samples}, "
            f"epsilons={tuple(float(e) for e in epsilons)}, delta={delta:g}, "
            f"random_state={random_state}, n_repeats={n_repeats})")
    text = f"""# Reproduction: seed 002, Figure 2(a) (online linear regression)

{provenance(command or "skdpol.reproduce.olr_regret." + call, runtime)}
Settings: `{call}`.

{fig_line}

## Results

Average regret regret(t) / t, mean over {n_repeats} independent run(s) (stream
and noise); `avg_regret_T_std` is the standard deviation over runs at t = T.
`epsilon` is the nominal budget given to the estimator, `epsilon_spent` what
`privacy_spent_` reports for all {n_samples:,} published models together, at
delta = {delta:g}.

{_markdown_table(table)}

For reference: FTL reaches {ftl_final:.3g} at T; always publishing x = 0 has
average regret {zero_final:.3g} at T (dash-dotted line): a model worse than
that carries no usable signal. The seed reports PQFTL average regret of the
order of **1e-2 at eps = 0.01** (dotted line).

Final average regret, tight against paper calibration at the same nominal eps:

{verdict}

## True privacy cost of the seed's noise formula

`noise_calibration="paper"` uses the seed's node noise (Algorithm 5),
sigma^2 = (R^2 / eps') log^2 T log(log T / delta') per tree, with eps' = eps/2,
delta' = delta/2 (Algorithm 4 splits the budget between the V and u trees),
R = max(data_norm, y_bound) and R^2 as the bound of both inputs. Its exact cost
(Gaussian-DP accounting of the whole tree, both sums through one joint
sensitivity) is not the nominal eps:

{spent}

sigma grows like 1 / sqrt(eps) where a Gaussian mechanism needs 1 / eps, so
the formula spends more than stated at small eps and less at large eps. The
tight calibration spends exactly the nominal eps. Where the paper calibration's
true eps is above nominal, its lower curve is bought with privacy it does not
state; compare curves at equal *true* eps.

## Settings

* Stream: `skdpol.datasets.make_online_regression(n_samples={n_samples},
  n_features=10, noise=0.01)`: x* uniform on the unit sphere, g_t ~ N(0, I_10),
  y_t = g_t . x* + N(0, 0.01^2). Seeds: `SeedSequence({random_state})` spawns one
  child per run, which gives the stream's seed and the estimator's seed;
  within a run every method sees the same stream and the same estimator seed
  (common random numbers: at one eps the paper and tight runs share their
  standard normal draws and differ only in scale).
* Estimator: `PrivateOnlineRegressor(alpha=1.0, fit_intercept=False,
  horizon={n_samples}, delta={delta:g})`, one row per round; `epsilon=inf` is
  the non-private FTL. Both calibrations include the estimator's eigenvalue
  floor on the noisy V (post-processing, not in the seed's Algorithm 4).
* Public bounds, from the generating distribution and not from the rows:
  data_norm = {data_norm:.4g} (1 - 1e-6 quantile of ||g||, chi with 10 degrees
  of freedom), y_bound = {y_bound:.4g} (5 standard deviations of y). The
  estimator clips rows and labels to them; rows beyond a bound over all runs:
  {n_clipped}. Regret is measured on the raw losses.
* Loss: f_t(x) = 1/2 (y_t - g_t . x)^2 + alpha/2 ||x||^2 (the seed's Theorems
  7 and 8). Regret(t) = sum_(s<=t) f_s(x_hat_s) - min_x sum_(s<=t) f_s(x), with
  x_hat_s the model published before row s (x_hat_1 = 0). The offline optimum
  is ridge regression on the first t rows, x = (t alpha I + G_t^T G_t)^-1 G_t^T y_t,
  from running sums of G^T G, G^T y and y.y updated between checkpoints; its
  value is 1/2 y.y - 1/2 (G^T y) . x.
* f_s(x_hat_s) is exact: `progressive_predict(X, y, return_coef=True)`
  returns every row's prediction and the published model x_hat_s itself.
* {curves['t'].nunique()} log-spaced checkpoints from t = {int(curves['t'].min())}
  to t = {n_samples:,}.

## Reading the comparison with the paper

The seed does not state R, the bounds or delta for this figure. With honest
public bounds for this stream (R = {max(data_norm, y_bound):.3g}; one row moves V
by up to sqrt(2) R^2 = {math.sqrt(2.0) * data_norm**2:.3g} in Frobenius norm), the
tight calibration at eps = {eps_min:g} puts noise of standard deviation about
{node:.3g} on every entry of every tree node of V; a prefix sum adds up to
{levels} nodes, so the noise matrix has spectral norm about
sqrt(2 d) x {node:.3g} x sqrt({levels}/2) = {noise_norm:.3g}, against a diagonal of
t alpha I + V_t of about 2t = {2 * n_samples:.3g} at t = T.

{regime}
PQFTL's average regret at eps = {eps_min:g} {'reaches' if reached else 'does not reach'}
the reported 1e-2 at T = {n_samples:,}. The gap to FTL closes as eps grows, as in
the seed's figure. A smaller scale is not enough either: with rows
g_t ~ N(0, I/10) (norm about 1), data_norm = y_bound = 2 and the same
alpha = 1, one run at T = 100,000 gave tight 0.135 at eps = 0.01 (paper: 0.083,
but at a true eps of 0.026), where always publishing x = 0 scores 0.0046 (with
alpha = 1 the ridge optimum is nearly 0 at that scale). We found no set-up
with honest public bounds and a nominal eps = 0.01 that reaches 1e-2; the
seed states neither its bounds nor its delta.
"""
    path.write_text(text)


def reproduce_olr(out_dir, n_samples=100_000, epsilons=(0.01, 0.1, 1.0),
                  delta=1e-5, random_state=0, plot=True, *, n_repeats=3,
                  n_jobs=None, command=None):
    """Reproduce seed 002's Figure 2(a) and write its report.

    Runs non-private FTL and PQFTL with the seed's noise formula
    (``noise_calibration="paper"``) and with exact accounting (``"tight"``)
    on the seed's synthetic online linear regression stream, and writes
    ``<out_dir>/olr_regret.md`` and, when ``plot`` is true,
    ``<out_dir>/olr_regret.png`` (needs matplotlib).

    Parameters
    ----------
    out_dir : str or path-like
        Created if absent.
    n_samples : int, default=100_000
        Rounds T (the seed's 100,000).
    epsilons : tuple of float, default=(0.01, 0.1, 1.0)
        Nominal budgets for PQFTL.
    delta : float, default=1e-5
    random_state : int, default=0
        Seeds every stream and every estimator (through a SeedSequence).
    plot : bool, default=True
    n_repeats : int, default=3
        Independent runs (stream and noise) averaged in the table and figure.
    n_jobs : int or None, default=None
        joblib workers over the runs (None: sequential).
    command : str or None, default=None
        The command line named in the report (None: this function's call).

    Returns
    -------
    table : pandas.DataFrame
        One row per method x epsilon: method, epsilon (nominal), epsilon_spent
        (``privacy_spent_.epsilon``), average regret at intermediate t
        (``avg_regret_t<t>``) and at T (``avg_regret_T``, with its standard
        deviation over repeats ``avg_regret_T_std``).

    Notes
    -----
    The progressive losses behind the regret are a non-private diagnostic
    (see ``PrivateOnlineRegressor.progressive_predict``). The paper
    calibration's ``PrivacyLeakWarning`` about overspending is silenced here:
    the spend is reported in ``epsilon_spent`` and in the written report.

    Examples
    --------
    >>> import tempfile
    >>> from skdpol.reproduce.olr_regret import reproduce_olr
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     table = reproduce_olr(out_dir=tmp, n_samples=300, epsilons=(1.0,),
    ...                           plot=False, n_repeats=1)
    >>> list(table["method"])
    ['FTL (non-private)', 'PQFTL paper', 'PQFTL tight']
    """
    start = time.perf_counter()
    curves = olr_regret_curves(n_samples=n_samples, epsilons=epsilons, delta=delta,
                               random_state=random_state, n_repeats=n_repeats,
                               n_jobs=n_jobs)
    table = _summary(curves)
    checkpoints = np.sort(curves["t"].unique())
    n_clipped, zero, data = 0, [], None
    for data_seed, _ in _seeds(random_state, n_repeats):
        data = make_online_regression(n_samples=n_samples, random_state=data_seed)
        n_clipped += int(np.sum((np.linalg.norm(data.X, axis=1) > data.data_norm)
                                | (np.abs(data.y) > data.y_bound)))
        zero.append(_zero_model_regret(data.X, data.y, checkpoints, 1.0) / checkpoints)
    zero = pd.Series(np.mean(zero, axis=0), index=checkpoints)
    out = output_folder(out_dir)
    figure = None
    if plot:
        figure = out / "olr_regret.png"
        _plot(curves, [float(e) for e in epsilons], zero, figure)
    runtime = time.perf_counter() - start
    _write_doc(out / "olr_regret.md", table, curves, n_samples=n_samples, command=command,
               delta=delta, epsilons=epsilons, random_state=random_state,
               n_repeats=n_repeats, runtime=runtime,
               figure=figure, data_norm=data.data_norm, y_bound=data.y_bound,
               n_clipped=n_clipped, zero_final=float(zero.iloc[-1]))
    return table


def run(out_dir, *, quick=False, command=None):
    """The CLI's entry: the seed's set-up, or a seconds-long ``quick`` version.

    Parameters
    ----------
    out_dir : str or path-like
    quick : bool, default=False
        T = 1,000 rounds, eps in (0.1, 1), one run (a smoke test of the
        pipeline, not the figure).
    command : str or None, default=None

    Returns
    -------
    paths : list of pathlib.Path
        The Markdown page and the figure written.
    """
    options = (dict(n_samples=1_000, epsilons=(0.1, 1.0), n_repeats=1) if quick else {})
    reproduce_olr(out_dir, command=command, **options)
    return [Path(out_dir) / "olr_regret.md", Path(out_dir) / "olr_regret.png"]

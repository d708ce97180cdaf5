"""The seed-002 Figure 2(a) reproduction (small scale)."""

import math

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from skdpol.reproduce.olr_regret import (
    FTL,
    PAPER,
    TIGHT,
    _checkpoints,
    _offline_optimum,
    _online_loss,
    reproduce_olr,
)
from skdpol.datasets import make_online_regression


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    table = reproduce_olr(out_dir=out, n_samples=4000, epsilons=(1.0,), delta=1e-5,
                          random_state=0, plot=False, n_repeats=1)
    return table, out


def test_table_rows_and_values(small_run):
    table, _ = small_run
    assert list(zip(table["method"], table["epsilon"])) == [
        (FTL, math.inf), (PAPER, 1.0), (TIGHT, 1.0)]
    regret_cols = [c for c in table.columns if c.startswith("avg_regret")]
    assert {"avg_regret_t10", "avg_regret_t100", "avg_regret_t1000",
            "avg_regret_T"} <= set(regret_cols)
    assert np.isfinite(table[regret_cols].to_numpy()).all()
    private = table[table["method"] != FTL]
    assert np.isfinite(private["epsilon_spent"]).all()
    tight = table[table["method"] == TIGHT].iloc[0]
    assert 0.99 < tight["epsilon_spent"] <= 1.0 + 1e-9  # exact accounting spends the budget
    # the seed's formula over-noises at eps = 1: its true cost is well below nominal
    assert table.loc[table["method"] == PAPER, "epsilon_spent"].iloc[0] < 0.5


def test_ftl_average_regret_decreases(small_run):
    table, _ = small_run
    ftl = table[table["method"] == FTL].iloc[0]
    # log T regret: the average falls by ~60x between t = 10 and t = 4000 on
    # 20 seeds checked; 10x leaves a wide margin
    assert ftl["avg_regret_T"] < ftl["avg_regret_t10"] / 10
    assert ftl["avg_regret_t10"] > ftl["avg_regret_t100"] > ftl["avg_regret_t1000"]


def test_tight_below_paper_at_eps_1(small_run):
    # At eps = 1 the seed's formula puts ~3x more noise on each tree node than
    # exact accounting (its true eps is ~0.32). Same stream and same standard
    # normal draws in both runs: the paper/tight ratio of final average regret
    # was 1.17-1.25 over 20 seeds. (At eps <= 0.1 the ordering flips or is
    # within noise: there the formula under-noises, see docs/reproductions/olr_regret.md.)
    table, _ = small_run
    final = table.set_index("method")["avg_regret_T"]
    assert final[TIGHT] < final[PAPER]


def test_report_written(small_run):
    _, out = small_run
    text = (out / "olr_regret.md").read_text()
    assert "| method | epsilon | epsilon_spent |" in text
    assert "1e-2 at eps = 0.01" in text
    assert not (out / "olr_regret.png").exists()  # plot=False


def test_offline_optimum_is_ridge():
    data = make_online_regression(n_samples=300, random_state=3)
    cps = np.array([1, 17, 300])
    values = _offline_optimum(data.X, data.y, cps, alpha=1.0)
    for t, value in zip(cps, values):
        X, y = data.X[:t], data.y[:t]
        x = Ridge(alpha=float(t), fit_intercept=False, solver="cholesky").fit(X, y).coef_
        expected = 0.5 * np.sum((y - X @ x) ** 2) + 0.5 * t * (x @ x)
        assert value == pytest.approx(expected, rel=1e-10)


def test_ftl_regret_matches_exact_per_row_models():
    # FTL's models are known in closed form, row by row: the measured
    # cumulative loss must be exactly theirs
    n, alpha = 1500, 1.0
    data = make_online_regression(n_samples=n, random_state=5)
    cps = _checkpoints(n, 20)
    measured, spent = _online_loss(data, math.inf, 1e-5, "tight", alpha, 0, cps)
    assert math.isinf(spent)
    d = data.X.shape[1]
    A, b = np.zeros((d, d)), np.zeros(d)
    losses = np.empty(n)
    for s in range(n):  # model before row s: ridge on rows < s
        x = np.linalg.solve(s * alpha * np.eye(d) + A, b) if s else np.zeros(d)
        g, y = data.X[s], data.y[s]
        losses[s] = 0.5 * (y - g @ x) ** 2 + 0.5 * alpha * (x @ x)
        A += np.outer(g, g)
        b += y * g
    exact = np.cumsum(losses)[cps - 1]
    # The leaf grid truncates every coordinate and label toward zero to
    # 2^-26 of a power-of-two unit >= its bound (one row per leaf here), a
    # relative perturbation of the data of ~1.5e-8; an algorithmic slip (a
    # model one row late, a missing alpha) moves the losses by percent.
    np.testing.assert_allclose(measured, exact, rtol=1e-7)


def test_figure_written(tmp_path):
    pytest.importorskip("matplotlib")
    reproduce_olr(out_dir=tmp_path, n_samples=300, epsilons=(1.0,), plot=True,
                  n_repeats=1)
    png = tmp_path / "olr_regret.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "](olr_regret.png)" in (tmp_path / "olr_regret.md").read_text()

"""PrivateSubmodularSelector: the shell, live play, bad input, the audit on support_.

Estimator checks are in test_common.py; the numerics (Lovasz extension,
rounding, bandit estimator, sensitivity, regret) in test_submodular_core.py.
"""

import math
import pickle

import numpy as np
import pytest

from skdpol import BudgetExhaustedError, PrivateSubmodularSelector
from skdpol.accounting import calibrate_noise_multiplier
from skdpol.audit import epsilon_lower_bound
from skdpol.mechanisms import NoiseSpec, tree_event
from skdpol.submodular import ConcaveMassCost, SubmodularPFTAL, make_submodular_stream


def _stream(n=600, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 1.0, size=(n, 6)) + [1, 1, -1, -1, 0.5, -1]


def test_it_selects_the_rewarding_columns_within_budget():
    X = _stream(4000)
    sel = PrivateSubmodularSelector(epsilon=1.0, horizon=4000, random_state=0)
    for start in range(0, 4000, 500):
        sel.partial_fit(X[start:start + 500])
    assert sel.get_support().tolist() == [True, True, False, False, True, False]
    assert sel.transform(X[:5]).shape == (5, 3)
    assert sel.privacy_spent_.epsilon <= 1.0 + 1e-9 and sel.n_samples_seen_ == 4000


@pytest.mark.xfail(strict=True, reason=(
    "known defect, found 2026-11-23: on this stream fit() selects the empty set even at "
    "epsilon=inf (x_ ~ 0.008 on the planted items), and the planted set at epsilon=1 "
    "in 2 of 12 seeds; the test passed before only through seed 0's noise"))
def test_the_planted_set_is_found_with_full_information():
    data = make_submodular_stream(n_items=8, n_rounds=6000, random_state=1)
    found = [PrivateSubmodularSelector(epsilon=1.0, horizon=6000, alpha=0.03, random_state=s)
             .fit(data.rows).support_.tolist() == data.planted.tolist() for s in range(4)]
    assert sum(found) >= 3


def test_bandit_regret_falls_on_the_planted_stream():
    # through the seeds' tree (mechanism="tree") and seed 001's chain estimator
    # the last 1,500 rounds' regret was 0.69-1.18 times the first 1,500's over
    # these 5 seeds (median 1.12); the BLT brought it to 0.45-1.16 (median
    # 0.79), and the singleton estimator of the built-in cost (issue 15) to
    # 0.09-0.16 (median 0.12, when written): the bound leaves room for noise
    data = make_submodular_stream(n_items=8, n_rounds=6000, random_state=1)
    # bandit: the played set's cost only; regret must still fall (noise-light budget)
    ratios = []
    for seed in range(5):
        bandit = PrivateSubmodularSelector(n_items=8, feedback="bandit", epsilon=10.0,
                                           horizon=6000, alpha=0.03, random_state=seed)
        costs = []
        for row in data.rows:
            mask = bandit.ask()
            costs.append(float(data.expected_cost(mask[None, :])[0]))
            bandit.tell(float(data.cost(mask[None, :], row)[0]))
        regret = np.array(costs) - data.optimal_cost
        ratios.append(regret[-1500:].mean() / regret[:1500].mean())
    assert np.median(ratios) < 0.5


def test_bandit_rounds_of_visitors_learn_through_ask_and_tell():
    # issue 15's acceptance, scaled down (the full one: n = 12, 20,000 visitors in
    # rounds of 50, 3 seeds, ratio 0.11-0.27; docs/selector.md): bandit feedback at
    # epsilon = 5, rounds of b visitors through ask()/tell(); the regret of the
    # second half must be at most half that of the first tenth of the visitors.
    # When every round played one set (one estimate a round), the ratio was 0.7-1.5
    # and not better at epsilon = inf.
    n, T, b = 12, 8_000, 40
    ratios = []
    for seed in range(2):
        data = make_submodular_stream(n_items=n, n_rounds=T, random_state=seed)
        sel = PrivateSubmodularSelector(n_items=n, cost=data.cost, feedback="bandit",
                                        epsilon=5.0, batch_size=b, horizon=T // b,
                                        random_state=seed)
        played = np.empty((T, n), dtype=bool)
        for t, row in enumerate(data.rows):
            played[t] = sel.ask()
            sel.tell(float(data.cost(played[t][None, :], row)[0]))
        regret = data.expected_cost(played) - data.optimal_cost
        ratios.append(regret[T // 2:].mean() / regret[:T // 10].mean())
        assert sel.privacy_spent_.epsilon <= 5.0 + 1e-9
    assert max(ratios) <= 0.5, ratios


@pytest.mark.parametrize("epsilon", [np.inf, 2.0])
def test_live_full_information_play_takes_a_callable(epsilon):
    # the plumbing of tell(callable): exact without noise; at epsilon = 2 the
    # support after 300 rounds is the optimum only ~30 % of the time (20
    # seeds, before and after the stream-seed change), so only the bookkeeping
    # is checked there
    sel = PrivateSubmodularSelector(n_items=3, epsilon=epsilon, random_state=0)
    cost = ConcaveMassCost()
    for _ in range(300):
        sel.ask()
        sel.tell(lambda masks: cost(masks, np.array([1.0, -1.0, 1.0])))
    if np.isinf(epsilon):
        assert sel.support_.tolist() == [True, False, True]
    assert sel.privacy_spent_.releases == 300
    assert sel.privacy_spent_.epsilon <= epsilon


@pytest.mark.parametrize("feedback, bad, message", [
    ("full", lambda masks: np.full(len(masks), np.nan), "finite|NaN"),
    ("full", lambda masks: np.zeros((len(masks), 2)), "shape"),
    ("full", lambda masks: np.zeros(len(masks) + 1), "shape"),
    ("full", 0.5, "callable"),
    ("bandit", float("nan"), "finite|NaN"),
    ("bandit", np.array([1.0, 2.0]), "number|scalar|single"),
    ("bandit", lambda masks: np.zeros(len(masks)), "number"),
])
def test_bad_feedback_is_refused_and_changes_nothing(feedback, bad, message):
    sel = PrivateSubmodularSelector(n_items=3, feedback=feedback, cost_bound=2.0,
                                    random_state=0)
    sel.ask()
    before = pickle.dumps(sel)
    with pytest.raises(ValueError, match=message):
        sel.tell(bad)
    assert pickle.dumps(sel) == before


def test_tell_without_ask_is_refused():
    sel = PrivateSubmodularSelector(n_items=3, feedback="bandit", random_state=0)
    with pytest.raises(ValueError, match="ask"):
        sel.tell(0.3)
    sel.ask()
    sel.tell(0.3)
    with pytest.raises(ValueError, match="ask"):
        sel.tell(0.3)  # one tell per ask


def test_a_cost_callable_cannot_reuse_the_built_in_costs_tighter_bound():
    sel = PrivateSubmodularSelector(random_state=0).partial_fit(_stream(20))
    sel.ask()
    with pytest.raises(ValueError, match="ask"):
        sel.tell(lambda masks: np.zeros(len(masks)))


def test_bad_rows_and_the_horizon_change_nothing():
    X = _stream(100)
    sel = PrivateSubmodularSelector(horizon=80, random_state=0).partial_fit(X[:60])
    before = pickle.dumps(sel)
    for bad in (X[60:70, :4], np.where(np.eye(10, 6) > 0, np.nan, X[60:70])):
        with pytest.raises(ValueError):
            sel.partial_fit(bad)
        assert pickle.dumps(sel) == before
    with pytest.raises(BudgetExhaustedError):
        sel.partial_fit(X[60:])
    assert pickle.dumps(sel) == before


def test_resume_after_pickling_is_bit_for_bit():
    X = _stream(900)
    whole = PrivateSubmodularSelector(random_state=0).partial_fit(X[:400]).partial_fit(X[400:])
    half = pickle.loads(pickle.dumps(PrivateSubmodularSelector(random_state=0).partial_fit(X[:400])))
    half.partial_fit(X[400:])
    assert half.x_.tobytes() == whole.x_.tobytes()
    assert half.support_.tolist() == whole.support_.tolist()


def test_a_callable_cost_needs_its_bound():
    with pytest.raises(ValueError, match="cost_bound"):
        PrivateSubmodularSelector(cost=lambda masks, row: masks @ row).fit(_stream(10))


# ----------------------------------------------------------------- audit on support_
def _support_counts(canary, n_runs, seed0, cut, horizon=8, alpha=0.5, sampler="discrete"):
    # two items; every row is zero except row 0, the canary: it rewards item 0
    # in D' and penalises it in D; the statistic counts the rounds whose
    # published set holds item 0
    m = calibrate_noise_multiplier(
        lambda m: tree_event(noise_multiplier=m, horizon=horizon, sampler=sampler), 1.0, 1e-5)
    X = np.zeros((horizon, 2))
    X[0, 0] = canary
    counts = np.empty(n_runs)
    for run in range(n_runs):
        algo = SubmodularPFTAL(n_items=2, cost=ConcaveMassCost(), alpha=alpha,
                               noise=NoiseSpec(sampler=sampler, multiplier=m / cut),
                               horizon=horizon, rng=np.random.default_rng(seed0 + run))
        _, sets = algo.learn(X, trace=True)
        counts[run] = sets[1:, 0].sum() + algo.selected[0]  # every set played after the canary
    return counts


@pytest.mark.parametrize("sampler", [pytest.param("discrete", marks=pytest.mark.slow), "float"])
def test_support_audit_stands_and_a_noise_cut_is_caught(audit_runs, sampler):
    n = audit_runs
    d, d_prime = (_support_counts(-1.0, n, 0, 1.0, sampler=sampler),
                  _support_counts(1.0, n, 10**6, 1.0, sampler=sampler))
    eps, _ = epsilon_lower_bound(d, d_prime, 1e-5, confidence=0.99)
    assert eps <= 1.0, f"audit found epsilon >= {eps:.3f} > 1"
    d, d_prime = (_support_counts(-1.0, n, 0, 10.0, sampler=sampler),
                  _support_counts(1.0, n, 10**6, 10.0, sampler=sampler))
    eps_cut, _ = epsilon_lower_bound(d, d_prime, 1e-5)
    # refuted; measured at 1,000 runs: 1.18 (discrete), 1.63 (float)
    assert eps_cut > 1.0, f"the audit has no power ({eps_cut:.3f})"
    assert math.isfinite(eps_cut)


def test_the_public_model_holds_the_release_and_no_row():
    X = _stream(300)
    X[7] = [0.123456789012345, 2.0, -1.0, 0.5, 0.25, -0.75]
    sel = PrivateSubmodularSelector(random_state=0).fit(X)
    blob = pickle.dumps(sel.public_model())
    assert np.float64(X[7, 0]).tobytes() not in blob
    assert np.float64(X[7, 0]).tobytes() in X.tobytes()  # the control
    public = pickle.loads(blob)
    assert public.get_support().tolist() == sel.get_support().tolist()
    assert public.privacy_spent_ == sel.privacy_spent_
    assert not any(name.startswith("_") and name != "_RELEASED" for name in vars(public))


@pytest.mark.parametrize("feedback, leaf_bound",
                         [("bandit", "range"), ("bandit", "modular"), ("full", "range")])
def test_live_rounds_of_several_visitors_learn_as_the_rows_would(feedback, leaf_bound):
    # a round of b visitors shares the round's point; with full information they
    # play one set, under bandit feedback each plays their own (drawn from the
    # point); feedback waits and the round's leaf is the mean, exactly as
    # learn() does for b rows
    rows = np.random.default_rng(1).uniform(-1, 1, size=(60, 4))
    cost = ConcaveMassCost()
    kwargs = dict(n_items=4, cost=cost, alpha=0.2, noise=NoiseSpec(multiplier=0.7), feedback=feedback,
                  batch_size=5, horizon=12, leaf_bound=leaf_bound, mu=0.5)
    batch = SubmodularPFTAL(**kwargs, rng=np.random.default_rng(3))
    live = SubmodularPFTAL(**kwargs, rng=np.random.default_rng(3))
    batch.learn(rows)
    changed = 0
    for r, row in enumerate(rows):
        played, point = live.ask(), live.x.copy()
        if r % 5:
            assert np.array_equal(point, previous_point)  # the point holds for the round
            changed += not np.array_equal(played, previous)
        previous, previous_point = played, point
        assert live.n_live_waiting == r % 5
        if feedback == "bandit":
            live.tell(float(cost(played[None, :], row)[0]))
        else:
            live.tell(lambda masks, row=row: cost(masks, row))
    assert live.n_rounds == batch.n_rounds == 12 and live.n_live_waiting == 0
    np.testing.assert_allclose(live.x, batch.x, rtol=0, atol=1e-12)
    if feedback == "full":
        assert changed == 0  # the set holds for the whole round
    else:
        assert changed > 0  # each visitor draws their own


def test_a_live_round_waits_for_its_last_visitor_and_bad_feedback_changes_nothing():
    sel = PrivateSubmodularSelector(n_items=3, feedback="bandit", batch_size=4, horizon=10,
                                    epsilon=2.0, random_state=0)
    sel.ask()
    first = sel._algo.x.copy()
    for _ in range(3):
        sel.tell(0.5)
        sel.ask()
        assert np.array_equal(sel._algo.x, first) and sel._algo.n_rounds == 0
    before = pickle.dumps(sel)
    with pytest.raises(ValueError):
        sel.tell(float("nan"))
    assert pickle.dumps(sel) == before
    sel.tell(0.5)  # the fourth visitor completes the round: a new point is published
    assert sel._algo.n_rounds == 1 and sel._algo.n_live_waiting == 0
    assert sel.n_samples_seen_ == 4

"""Calibration and spent epsilon pinned against dp-accounting's own accountants."""

import math

import dp_accounting
import pytest
from dp_accounting import GaussianDpEvent, SelfComposedDpEvent
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from skdpol.accounting import (
    calibrate_noise_multiplier,
    epsilon_spent,
    gaussian_mu,
    gaussian_mu_for_budget,
    paper_tree_sigma,
    privacy_loss_distribution,
    pure_dp_event,
    pure_epsilon,
)
from skdpol.mechanisms import tree_event


def _pld_epsilon(event, delta):
    # dp-accounting's own accountant; with shift-1 events its ADD_OR_REMOVE_ONE
    # reading of Gaussian events is the replace-one pair skdpol means
    acc = PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
                        value_discretization_interval=1e-4)
    acc.compose(event)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("m, levels", [(3.0, 1), (5.0, 10), (12.0, 17)])
def test_gaussian_tree_spent_equals_pld_accountant(m, levels):
    # our exact GDP figure must agree with the PLD accountant's composition
    event = tree_event(noise_multiplier=m, horizon=2 ** (levels - 1), noise="gaussian",
                       sampler="float")
    ours, method = epsilon_spent(event, 1e-5)
    assert method == "gdp"
    pld = _pld_epsilon(event, 1e-5)
    assert ours == pytest.approx(pld, rel=2e-3)


def test_gaussian_tree_not_above_rdp_tree_aggregation():
    # dp-accounting's RDP tree event (REPLACE_SPECIAL) is an upper bound on the same tree
    m, T = 4.0, 1024
    ours, _ = epsilon_spent(tree_event(noise_multiplier=m, horizon=T, sampler="float"), 1e-5)
    rdp = RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
    rdp.compose(dp_accounting.SingleEpochTreeAggregationDpEvent(m, T))
    assert ours <= rdp.get_epsilon(1e-5) + 1e-9


def test_unbounded_tree_costs_one_node_in_the_limit():
    m = 7.0
    partial = [epsilon_spent(tree_event(noise_multiplier=m, horizon=None, n_leaves=2**k,
                                        sampler="float"), 1e-5)[0]
               for k in (1, 5, 20, 60)]
    total, _ = epsilon_spent(tree_event(noise_multiplier=m, horizon=None, sampler="float"), 1e-5)
    assert all(a < b for a, b in zip(partial, partial[1:]))  # grows with the stream
    assert partial[-1] <= total
    assert total == pytest.approx(epsilon_spent(GaussianDpEvent(m), 1e-5)[0])
    # levels 0..L-1 cost mu^2 = (1 - 1/(L + 1)) / m^2: the weights telescope to 1
    L = 61
    event = tree_event(noise_multiplier=m, horizon=None, n_leaves=2**60, sampler="float")
    assert gaussian_mu(event) == pytest.approx(math.sqrt(1 - 1 / (L + 1)) / m)


def test_pure_composition_matches_pld_at_delta_zero():
    event = tree_event(noise_multiplier=2.0, horizon=255, noise="laplace")
    ours, method = epsilon_spent(event, 0.0)
    assert method == "pure"
    assert ours == pytest.approx(8 / 2.0)
    assert privacy_loss_distribution(event).get_epsilon_for_delta(0.0) == pytest.approx(ours, abs=1e-2)


def test_pure_dp_event_is_randomized_response_with_ratio_e_eps():
    for eps in (0.1, 1.0, 5.0):
        assert pure_epsilon(pure_dp_event(eps)) == pytest.approx(eps)
        pld_eps = privacy_loss_distribution(pure_dp_event(eps)).get_epsilon_for_delta(0.0)
        assert pld_eps == pytest.approx(eps, abs=1e-3)


def test_replace_special_reading_of_randomized_response_would_understate():
    # why skdpol builds PLDs per event instead of using one accountant relation
    acc = PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
    acc.compose(pure_dp_event(1.0))
    assert acc.get_epsilon(0.0) == pytest.approx(math.log((1 + math.e) / 2), abs=1e-3)  # not 1.0


def test_laplace_event_pure_epsilon():
    assert pure_epsilon(dp_accounting.LaplaceDpEvent(0.5)) == pytest.approx(2.0)


def test_mixed_events_go_through_pld():
    event = dp_accounting.ComposedDpEvent([GaussianDpEvent(3.0), pure_dp_event(0.5)])
    eps, method = epsilon_spent(event, 1e-5)
    assert method == "pld"
    assert gaussian_mu(event) is None and pure_epsilon(event) is None
    # bracketed by its parts: more than the Gaussian alone, at most Gaussian + 0.5
    gauss = epsilon_spent(GaussianDpEvent(3.0), 1e-5)[0]
    assert gauss < eps <= gauss + 0.5 + 1e-3


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-6), (1.0, 1e-5), (8.0, 1e-3)])
@pytest.mark.parametrize("horizon", [1, 1000, None])
def test_calibration_round_trip(eps, delta, horizon):
    m = calibrate_noise_multiplier(
        lambda m: tree_event(noise_multiplier=m, horizon=horizon), eps, delta)
    spent, _ = epsilon_spent(tree_event(noise_multiplier=m, horizon=horizon), delta)
    assert spent == pytest.approx(eps, rel=1e-6)
    # and calibration is tight: 1% less noise would overspend
    over, _ = epsilon_spent(tree_event(noise_multiplier=0.99 * m, horizon=horizon), delta)
    assert over > eps


def test_calibration_pure_and_generic_paths():
    m = calibrate_noise_multiplier(
        lambda m: tree_event(noise_multiplier=m, horizon=100, noise="laplace"), 2.0, 0.0)
    assert m == pytest.approx(7 / 2.0)
    # a family with no closed form is solved by root-finding on the PLD figure
    make = lambda m: dp_accounting.ComposedDpEvent([GaussianDpEvent(m), pure_dp_event(0.1)])
    m = calibrate_noise_multiplier(make, 1.0, 1e-5)
    assert epsilon_spent(make(m), 1e-5)[0] == pytest.approx(1.0, abs=1e-2)


def test_gaussian_mu_for_budget_matches_dp_accounting_sigma():
    assert 1 / gaussian_mu_for_budget(1.0, 1e-5) == pytest.approx(
        dp_accounting.get_sigma_gaussian(1.0, 1e-5))
    with pytest.raises(ValueError, match="delta > 0"):
        gaussian_mu_for_budget(1.0, 0.0)


def test_paper_tree_sigma_is_the_seed_formula():
    R, eps, delta, T = 3.0, 0.5, 1e-4, 1024
    expected = math.sqrt(R**2 / eps * 10**2 * math.log(10 / delta))
    assert paper_tree_sigma(R, eps, delta, T) == pytest.approx(expected)
    with pytest.raises(ValueError, match="finite horizon"):
        paper_tree_sigma(R, eps, delta, None)


def test_noise_free_events_cost_infinity():
    assert epsilon_spent(SelfComposedDpEvent(GaussianDpEvent(0.0), 3), 1e-5)[0] == math.inf


def test_repeated_pure_events_are_counted():
    # guards against dp-accounting 0.6.0's PLD accountant, which drops the count
    # of a self-composed RandomizedResponseDpEvent (10 x eps=1 reported as 1)
    event = SelfComposedDpEvent(pure_dp_event(1.0), 10)
    assert epsilon_spent(event, 0.0)[0] == pytest.approx(10.0)
    # the all-maximal-loss outcome has mass (e/(1+e))^10 ~ 0.05, so eps(1e-6) is ~10
    assert privacy_loss_distribution(event).get_epsilon_for_delta(1e-6) == pytest.approx(10.0, abs=1e-2)


def test_spend_reprs_show_what_the_accountant_resolves():
    # issue 29: a calibrated spend of 1 printed as 0.9999999995 (the calibration's
    # 1e-9 slack); the repr rounds to 6 significant digits, the value stays exact
    from skdpol.accounting import PrivacySpent

    spent = PrivacySpent(epsilon=0.9999999995, delta=1e-6, accountant="zcdp")
    assert "epsilon=1.0," in repr(spent)
    assert spent.epsilon == 0.9999999995
    assert "epsilon=0.123457," in repr(PrivacySpent(0.1234567891, 0.0, "pure"))
    assert "epsilon=inf," in repr(PrivacySpent(float("inf"), 0.0, "none (epsilon=inf)"))

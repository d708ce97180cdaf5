"""The registry's rules for wide classifier streams (issue 32): which
algorithm, rounds and mechanism "auto" takes for which public inputs."""

import math

import pytest

from skdpol.mechanisms import prefix_noise_ratio
from skdpol.online._registry import (
    CLASSIFIER, LS_AUTO_MAX_FEATURES, REGRESSOR, WIDE_COLUMNS_PER_ROW, WIDE_MIN_ROUNDS,
    WIDE_NOISY_COLUMNS_PER_ROW, WIDE_NOISY_ROUNDS, WIDE_ONE_BUFFER_ROUNDS,
    WIDE_TREE_NOISE_RATIO, auto_stream, wide_blt_buffers, wide_mechanism, wide_round,
    wide_stream)


@pytest.mark.parametrize("n_features, pure, calibration, expected", [
    (LS_AUTO_MAX_FEATURES, False, "tight", "ls"),  # narrow: unchanged
    (LS_AUTO_MAX_FEATURES + 1, False, "tight", "ftrl-momentum"),
    (2**17, False, "tight", "ftrl-momentum"),
    (2**17, True, "tight", "ftrl"),  # pure DP: not measured, as before
    (2**17, False, "paper", "ftrl"),  # the seeds' calibration, as before
    (None, False, "tight", "ls"),  # width not known yet
])
def test_auto_stream_by_width(n_features, pure, calibration, expected):
    assert auto_stream(CLASSIFIER, n_features, calibration, pure=pure) == expected


def test_the_regressor_takes_its_wide_rule_above_1000_features():
    # the same stream; its own rounds and step (tests/linear_model/test_wide_regressor.py)
    assert auto_stream(REGRESSOR, 2**17, "tight") == "ftrl-momentum"
    assert wide_stream(REGRESSOR, 2**17, "ftrl-momentum")
    assert not wide_stream(REGRESSOR, LS_AUTO_MAX_FEATURES, "ftrl-momentum")
    assert not wide_stream(REGRESSOR, 2**17, "ftrl")
    assert not wide_stream(CLASSIFIER, LS_AUTO_MAX_FEATURES, "ftrl-momentum")
    assert not wide_stream(CLASSIFIER, 2**17, "ftrl")
    assert wide_stream(CLASSIFIER, LS_AUTO_MAX_FEATURES + 1, "ftrl-momentum")


@pytest.mark.parametrize("n_features, horizon, expected", [
    (2**17, 100_000, 2_000),  # d / 64 = 2,048, capped at 50 rounds of the horizon
    (2**17, None, 2_048),
    (2**17, 10**7, 2_048),
    (10_000, 20_000, 157),
    (1_001, 100_000, 16),  # below the narrow floor, which the estimator applies
])
def test_wide_round_grows_with_d_and_keeps_fifty_rounds(n_features, horizon, expected):
    assert wide_round(n_features, horizon) == expected
    assert expected >= min(math.ceil(n_features / WIDE_COLUMNS_PER_ROW),
                           (horizon or 10**12) // WIDE_MIN_ROUNDS)


def test_wide_mechanism_takes_the_tree_only_where_its_noise_is_comparable():
    assert wide_mechanism(math.inf, 50, prefix_noise_ratio) == "tree"  # no noise at all
    assert wide_mechanism(math.inf, None, prefix_noise_ratio) == "tree"
    for rounds in (10, 50, 100, 4096):  # the BLT is ~2x lower: it stays
        assert prefix_noise_ratio(rounds) > WIDE_TREE_NOISE_RATIO
        assert wide_mechanism(1.0, rounds, prefix_noise_ratio) == "blt"
    assert wide_mechanism(1.0, None, prefix_noise_ratio) == "blt"
    assert prefix_noise_ratio(1) == pytest.approx(1.0)  # one leaf: the same release
    assert wide_mechanism(1.0, 1, prefix_noise_ratio) == "tree"


@pytest.mark.parametrize("n_features, horizon, epsilon, expected", [
    (2**17, 100_000, 1.0, 5_000),  # 20 rounds: fewer, larger noisy rounds
    (2**17, 100_000, 0.5, 5_000),  # at most 20 rounds below epsilon 1 too
    (2**17, 100_000, 2.0, 2_500),  # 40 rounds
    (2**17, 100_000, 4.0, 2_000),  # 80 rounds would be smaller: the noiseless rule's
    (2**17, 100_000, math.inf, 2_000),
    (2**17, None, 1.0, 2_048),  # open-ended: the noiseless rule
    (2**17, 32_561, 1.0, 1_628),  # Adult's training rows
    (2**12, 32_561, 1.0, 512),  # capped at d / 8
    (2**17, 10**7, 1.0, 16_384),  # a long horizon: capped at d / 8
    (10_000, 20_000, 1.0, 1_000),
])
def test_wide_round_at_finite_epsilon_takes_fewer_larger_rounds(n_features, horizon, epsilon,
                                                                expected):
    assert wide_round(n_features, horizon, epsilon) == expected
    noiseless = wide_round(n_features, horizon)
    assert expected >= noiseless
    if horizon is not None and expected > noiseless:
        assert expected == min(horizon // math.ceil(WIDE_NOISY_ROUNDS * max(1.0, epsilon)),
                               math.ceil(n_features / WIDE_NOISY_COLUMNS_PER_ROW))


@pytest.mark.parametrize("n_features", [1_001, 2_048, 2**13, 2**17, 2**20])
def test_an_open_wide_round_keeps_the_noiseless_rule_at_every_epsilon(n_features):
    # horizon=None: no planned rounds to size the noisy rounds by, and no fixed
    # size measured better at every length (docs/benchmarks/open_wide.md)
    for epsilon in (0.5, 1.0, 2.0, 4.0, math.inf):
        assert wide_round(n_features, None, epsilon) == math.ceil(
            n_features / WIDE_COLUMNS_PER_ROW)


def test_wide_blt_buffers_takes_one_buffer_over_short_horizons():
    assert wide_blt_buffers(20) == 1
    assert wide_blt_buffers(WIDE_ONE_BUFFER_ROUNDS) == 1
    assert wide_blt_buffers(WIDE_ONE_BUFFER_ROUNDS + 1) is None  # the BLT's default
    assert wide_blt_buffers(None) is None  # open-ended: the epochs keep theirs


# ---- the momentum where a wide regressor's step cap binds
# (skdpol.online._step_noise.capped_momentum)


def test_capped_momentum_starts_at_the_rules_momentum_at_the_caps_edge():
    from skdpol.online._step_noise import capped_momentum
    # step_rows / scale == stable_rows: the cap just binds, nothing jumps
    assert capped_momentum(0.95, 0.995, 190, 380, 2.0, True) == pytest.approx(0.95)
    assert capped_momentum(0.95, 0.995, 190, 190, 1.0, True) == pytest.approx(0.95)


@pytest.mark.parametrize("rows,scale", [(200, 1.0), (300, 1.43), (1_000, 4.05), (2_048, 10.2),
                                        (1_024, 4.17), (1_000, 1.0)])
def test_capped_momentum_keeps_the_noise_rules_step_after_momentum(rows, scale):
    from skdpol.online._step_noise import capped_momentum
    beta = capped_momentum(0.95, 0.995, 190, rows, scale, True)
    assert 0.95 <= beta <= 0.995
    # the step a row gets after momentum, lr / (b (1 - beta)), lr of 190 rows:
    # the noise rule's (rows / scale rows, momentum 0.95) times the cap's
    # excess rows / (190 scale) (CAPPED_MOMENTUM_POWER = 2), until 0.995
    rule, excess = (rows / scale) / 0.05, rows / (190 * scale)
    assert 190 / (1 - beta) <= rule * excess * (1 + 1e-12)
    if beta < 0.995:
        assert 190 / (1 - beta) == pytest.approx(rule * excess, rel=1e-12)


def test_capped_momentum_grows_with_the_round_and_stops_at_the_stable_one():
    from skdpol.online._step_noise import capped_momentum
    betas = [capped_momentum(0.95, 0.995, 190, b, 1.0, True)
             for b in (190, 300, 1_000, 1_900, 4_000)]
    assert betas == sorted(betas)
    assert betas[-2:] == [pytest.approx(0.995), 0.995]


@pytest.mark.parametrize("rows", [191, 512, 2_048])
def test_capped_momentum_without_noise_is_the_stable_one(rows):
    # nothing released to amplify: the momentum measured at epsilon = inf
    from skdpol.online._step_noise import capped_momentum
    assert capped_momentum(0.95, 0.995, 190, rows, 1.0, False) == 0.995

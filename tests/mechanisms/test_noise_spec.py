"""NoiseSpec: the one noise specification and the one calibration."""

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent

from skdpol.accounting import calibrate_noise_multiplier, epsilon_spent
from skdpol.mechanisms import NoiseSpec, family_for, noise_event
from skdpol.mechanisms._prefix import prefix_sum_event

FAMILIES_SAMPLERS = [(f, s) for f in ("gaussian", "laplace") for s in ("discrete", "float")]


@pytest.mark.parametrize("family, sampler", FAMILIES_SAMPLERS)
@pytest.mark.parametrize("m", [0.0, 0.3, 2.5])
def test_event_is_noise_event(family, sampler, m):
    if m == 0 and family == "laplace":
        pytest.skip("a pure-DP release needs noise")
    assert NoiseSpec(family, sampler, m).event() == noise_event(m, family, sampler)


@pytest.mark.parametrize("family, sampler", FAMILIES_SAMPLERS)
@pytest.mark.parametrize("releases", [1, 7])
def test_calibration_of_releases_matches_calibrate_noise_multiplier(family, sampler, releases):
    eps, delta = 0.8, 1e-6
    spec = NoiseSpec.calibrated(eps, delta, family=family, sampler=sampler, releases=releases)
    if family == "laplace":  # epsilons add up: releases / epsilon, exactly
        assert spec.multiplier == releases / eps
    else:
        assert spec.multiplier == calibrate_noise_multiplier(
            lambda m: noise_event(m / math.sqrt(releases), family, sampler), eps, delta)
    # and the releases cost the budget, not more
    one = spec.with_multiplier(spec.multiplier / (math.sqrt(releases) if family == "gaussian"
                                                    else releases)).event()
    spent = epsilon_spent(one, 0.0 if family == "laplace" else delta)[0]
    assert spent <= eps * (1 + 1e-9)
    assert spent >= eps * 0.999


@pytest.mark.parametrize("family, sampler", FAMILIES_SAMPLERS)
def test_calibration_of_an_event_matches_calibrate_noise_multiplier(family, sampler):
    eps, delta = 1.3, 1e-5
    make_event = lambda m: prefix_sum_event("tree", horizon=16,  # noqa: E731
                                            noise=NoiseSpec(family, sampler, m))
    spec = NoiseSpec.calibrated(eps, delta, family=family, sampler=sampler,
                                make_event=make_event)
    # pure DP: delta plays no part
    expected = calibrate_noise_multiplier(make_event, eps,
                                          0.0 if family == "laplace" else delta)
    assert spec.multiplier == expected
    assert (spec.family, spec.sampler) == (family, sampler)


def test_infinite_epsilon_is_no_noise():
    spec = NoiseSpec.calibrated(math.inf, 1e-5, family="gaussian", sampler="float",
                                make_event=GaussianDpEvent)
    assert spec.noiseless and spec.multiplier == 0.0
    value = np.arange(3.0)
    out = spec.perturb(value, 1.0, np.random.default_rng(0))
    assert np.array_equal(out, value) and out is not value


def test_family_for_and_validation():
    assert family_for(1.0, 0.0) == "laplace"
    assert family_for(1.0, 1e-5) == "gaussian"
    assert family_for(math.inf, 0.0) == "gaussian"
    with pytest.raises(ValueError, match="noise"):
        NoiseSpec("uniform", "float", 1.0)
    with pytest.raises(ValueError, match="sampler"):
        NoiseSpec("gaussian", "exact", 1.0)
    spec = NoiseSpec("gaussian", "float", 2.0)
    assert spec.scaled(0.5).multiplier == 1.0 and spec.multiplier == 2.0  # frozen


@pytest.mark.parametrize("family, sampler", FAMILIES_SAMPLERS)
@pytest.mark.parametrize("dim, n, tolerance", [(1, 4000, 0.06), (50, 400, 0.03)])
def test_perturb_std_matches_std(family, sampler, dim, n, tolerance):
    # the empirical standard deviation of the noise perturb adds, over n
    # releases, against std(): the tolerance is about 3 standard errors of a
    # Laplace sample's std (4,000 draws: 2%; 20,000 coordinates: under 1%)
    spec = NoiseSpec(family, sampler, 1.7)
    sens = 0.37
    value = np.linspace(-1.0, 1.0, dim)
    rng = np.random.default_rng(5)
    noise = np.array([spec.perturb(value, sens, rng) for _ in range(n)]) - value
    expected = spec.std(sens, dim)
    assert abs(noise.std() / expected - 1.0) < tolerance, (noise.std(), expected)
    # the discrete path's grid inflation is part of std(): slightly above m Delta
    if sampler == "discrete" and family == "gaussian":
        assert 1.7 * sens < expected < 1.7 * sens * 1.01


def test_perturb_is_the_module_perturb():
    from skdpol.mechanisms import perturb

    spec = NoiseSpec("gaussian", "discrete", 0.9)
    a = spec.perturb(np.ones(4), 2.0, np.random.default_rng(3))
    b = perturb(np.ones(4), sensitivity=2.0, multiplier=0.9, noise="gaussian",
                sampler="discrete", rng=np.random.default_rng(3))
    assert np.array_equal(a, b)


def test_weakened_noise_scales_every_calibration(weakened_noise):
    honest = NoiseSpec.calibrated(1.0, 1e-5, family="gaussian", sampler="float")
    with weakened_noise(0.1):
        cut = NoiseSpec.calibrated(1.0, 1e-5, family="gaussian", sampler="float")
        with weakened_noise(0.1):  # nested blocks do not compound
            again = NoiseSpec.calibrated(1.0, 1e-5, family="gaussian", sampler="float")
    assert cut.multiplier == pytest.approx(0.1 * honest.multiplier)
    assert again.multiplier == cut.multiplier
    assert NoiseSpec.calibrated(1.0, 1e-5, family="gaussian", sampler="float") == honest

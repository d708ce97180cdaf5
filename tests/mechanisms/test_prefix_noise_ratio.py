"""prefix_noise_ratio: the tree's prefix-sum noise over the BLT's at the same epsilon."""

import math

import numpy as np
import pytest

from skdpol.mechanisms import BLTPrefixSum, NoiseSpec, PrivatePrefixSum
from skdpol.mechanisms import prefix_noise_ratio, prefix_sum_event


def test_the_blt_is_about_twice_lower_from_ten_leaves_on():
    assert prefix_noise_ratio(1) == pytest.approx(1.0)  # one leaf: one release either way
    ratios = [prefix_noise_ratio(n) for n in (10, 50, 100, 1000, 4096)]
    assert all(1.7 < r < 2.6 for r in ratios)
    assert ratios == sorted(ratios)  # the tree's log factor grows


def test_prefix_noise_ratio_matches_the_calibrated_mechanisms():
    """The ratio is of the two mechanisms' noise std at the same epsilon:
    calibrate both to (1, 1e-5) for 64 leaves and compare their rms prefix-sum
    std (the tree's levels: ceil(log2 n) + 1 in tree_errors, as built)."""
    n = 64
    stds = {}
    for name, cls in (("tree", PrivatePrefixSum), ("blt", BLTPrefixSum)):
        spec = NoiseSpec.calibrated(1.0, 1e-5, sampler="float", make_event=lambda m, name=name:
                                    prefix_sum_event(name, horizon=n, noise=NoiseSpec(
                                        "gaussian", "float").with_multiplier(m)))
        kw = dict(noise="gaussian") if name == "tree" else {}
        mech = cls(dim=1, sensitivity=1.0, noise_multiplier=spec.multiplier, horizon=n,
                   rng=np.random.default_rng(0), sampler="float", **kw)
        stds[name] = math.sqrt(np.mean(mech.noise_std_at(np.arange(1, n + 1)) ** 2))
    assert stds["tree"] / stds["blt"] == pytest.approx(prefix_noise_ratio(n), rel=0.15)



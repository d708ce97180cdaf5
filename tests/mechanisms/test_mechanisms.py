"""Noise samplers and the tree of private prefix sums."""

import pickle

import numpy as np
import pytest
from scipy import stats

from skdpol import BudgetExhaustedError
from skdpol.accounting import epsilon_spent
from skdpol.mechanisms import (
    GaussianMechanism,
    L2LaplaceMechanism,
    LaplaceMechanism,
    PrivatePrefixSum,
    pack_symmetric,
    packed_dim,
    sample_l2_laplace,
    unpack_symmetric,
)


def test_gaussian_mechanism_noise_and_event():
    mech = GaussianMechanism(sensitivity=2.0, noise_multiplier=3.0, rng=np.random.default_rng(0),
                             sampler="float")
    draws = mech.randomise(np.zeros(200_000))
    assert draws.std() == pytest.approx(6.0, rel=0.01)
    assert mech.event.noise_multiplier == 3.0
    # the default is the hardened sampler: the same std (up to the grid), zCDP
    safe = GaussianMechanism(sensitivity=2.0, noise_multiplier=3.0, rng=np.random.default_rng(0))
    draws = safe.randomise(np.zeros(200_000))
    assert safe.sampler == "discrete"
    assert draws.std() == pytest.approx(6.0, rel=0.01)
    assert safe.event.rho == pytest.approx(0.5 / 9.0)


def test_laplace_mechanism_scale_and_event():
    mech = LaplaceMechanism(sensitivity=2.0, epsilon=0.5, rng=np.random.default_rng(0))
    draws = mech.randomise(np.zeros(200_000))
    assert stats.kstest(draws, stats.laplace(scale=4.0).cdf).pvalue > 1e-3
    assert epsilon_spent(mech.event, 0.0)[0] == pytest.approx(0.5)


@pytest.mark.parametrize("dim", [1, 3, 20])
def test_l2_laplace_norm_is_gamma_and_direction_uniform(dim):
    rng = np.random.default_rng(1)
    b = sample_l2_laplace(rng, dim, scale=0.7, size=20_000)
    norms = np.linalg.norm(b, axis=1)
    assert stats.kstest(norms, stats.gamma(dim, scale=0.7).cdf).pvalue > 1e-3
    assert np.abs((b / norms[:, None]).mean(axis=0)).max() < 0.03


def test_l2_laplace_density_ratio_is_bounded_by_e_epsilon():
    # log-density ratio at z of N + a vs N + b is eps (||z-b|| - ||z-a||)/Delta <= eps
    eps, sens, dim = 0.8, 2.0, 5
    mech = L2LaplaceMechanism(sensitivity=sens, epsilon=eps, rng=np.random.default_rng(2))
    a = np.zeros(dim)
    b = np.r_[sens, np.zeros(dim - 1)]
    z = mech.randomise(np.zeros((5000, dim)))
    log_ratio = eps * (np.linalg.norm(z - b, axis=1) - np.linalg.norm(z - a, axis=1)) / sens
    assert log_ratio.max() <= eps + 1e-12
    assert log_ratio.max() > 0.9 * eps  # and the bound is nearly reached
    assert epsilon_spent(mech.event, 0.0)[0] == pytest.approx(eps)


def test_packing_keeps_the_frobenius_norm():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 6, 6))
    S = A + np.swapaxes(A, 1, 2)
    p = pack_symmetric(S)
    assert p.shape == (4, packed_dim(6))
    assert np.allclose(np.linalg.norm(p, axis=1), np.linalg.norm(S, axis=(1, 2)))
    assert np.allclose(unpack_symmetric(p, 6), S)


def _tree(**kw):
    # the float path, whose nodes are exact Gaussian / L2-Laplace draws; the
    # discrete default has its own tests in test_discrete_noise.py
    args = dict(dim=3, sensitivity=1.0, noise_multiplier=1.0, horizon=64,
                rng=np.random.default_rng(0), sampler="float")
    args.update(kw)
    return PrivatePrefixSum(**args)


def test_prefix_noise_uses_one_node_per_set_bit_with_the_right_variance():
    # over many keys, the noise at t has variance popcount(t) * sigma^2
    times = np.array([1, 6, 7, 63])
    draws = np.stack([
        _tree(rng=np.random.default_rng(s), noise_multiplier=2.0).noise_at_many(times)
        for s in range(3000)
    ])
    var = draws.var(axis=(0, 2))
    expected = 4.0 * np.array([bin(t).count("1") for t in times])
    assert np.allclose(var, expected, rtol=0.08)
    assert np.allclose(draws.mean(axis=(0, 2)), 0, atol=0.15)
    tree = _tree(noise_multiplier=2.0)
    assert np.allclose(tree.noise_std_at(times) ** 2, expected)


def test_nodes_are_reused_by_every_prefix_sum_that_covers_them():
    tree = _tree()
    # t = 4 uses node (2, 1); t = 5 uses (2, 1) + (0, 5); t = 6 uses (2, 1) + (1, 3)
    n4, n5, n6, n7 = (tree.noise_at(t) for t in (4, 5, 6, 7))
    assert np.allclose(n5 - n4, tree._draw_node(0, 5))
    assert np.allclose(n7 - n6, tree._draw_node(0, 7))
    assert np.allclose(n6 - n4, tree._draw_node(1, 3))


def test_releases_do_not_depend_on_chunking():
    rng = np.random.default_rng(5)
    leaves = rng.normal(size=(50, 3))
    one = _tree()
    one.add(leaves.sum(axis=0), 50)
    many = _tree()
    for chunk in np.array_split(leaves, 7):
        many.add(chunk.sum(axis=0), len(chunk))
    assert np.array_equal(one.noise_at(50), many.noise_at(50))  # bit for bit
    assert np.allclose(one.release(), many.release(), rtol=1e-12)  # sums differ in order only
    assert np.allclose(one.release() - leaves.sum(axis=0), one.noise_at(50))
    # the batched path gives the same noise as the scalar one
    assert np.allclose(one.noise_at_many(np.arange(1, 51))[-1], one.noise_at(50))


def test_state_stays_small_whatever_the_length():
    tree = _tree(horizon=None, dim=4)
    for _ in range(200):
        tree.add(np.ones(4), 5_000)
        tree.release()
    assert tree.n_leaves == 1_000_000
    assert len(tree._cache) <= tree.n_leaves.bit_length()
    assert len(pickle.dumps(tree)) < 10_000


def test_horizon_is_enforced_without_touching_the_state():
    tree = _tree(horizon=10)
    tree.add(np.ones(3), 8)
    before = pickle.dumps(tree)
    with pytest.raises(BudgetExhaustedError, match="horizon of 10"):
        tree.add(np.ones(3), 3)
    assert pickle.dumps(tree) == before
    tree.add(np.ones(3), 2)
    assert tree.n_leaves == 10


def test_unbounded_levels_get_growing_noise():
    tree = _tree(horizon=None, noise_multiplier=1.0, sensitivity=2.0)
    assert tree.node_scale(0) == pytest.approx(2.0 * np.sqrt(2))
    assert tree.node_scale(3) == pytest.approx(2.0 * np.sqrt(20))
    lap = _tree(horizon=None, noise="laplace", sensitivity=2.0)
    assert lap.node_scale(3) == pytest.approx(2.0 * 20)


def test_laplace_nodes_have_l2_laplace_norms():
    draws = np.stack([_tree(rng=np.random.default_rng(s), noise="laplace", dim=4,
                            noise_multiplier=0.5)._draw_node(0, 1) for s in range(3000)])
    norms = np.linalg.norm(draws, axis=1)
    assert stats.kstest(norms, stats.gamma(4, scale=0.5).cdf).pvalue > 1e-3


def test_tree_event_counts_levels_touched_so_far():
    tree = _tree(horizon=1000)
    assert tree.levels == 10
    assert tree.event(1).count == 1
    assert tree.event(5).count == 3
    assert tree.event(1000).count == 10
    assert tree.event().count == 10


def test_bad_tree_arguments():
    with pytest.raises(ValueError, match="noise"):
        _tree(noise="cauchy")
    with pytest.raises(ValueError, match="horizon"):
        _tree(horizon=0)

"""utils.copy_generator: what copy.deepcopy gives a numpy Generator, cheaper."""

import copy
import pickle

import numpy as np
import pytest

from skdpol.utils import copy_generator


@pytest.mark.parametrize("bits", [np.random.SFC64, np.random.PCG64, np.random.Philox,
                                  np.random.MT19937])
def test_a_copy_draws_on_as_deepcopys_and_leaves_the_original_alone(bits):
    rng = np.random.Generator(bits(np.random.SeedSequence(7, spawn_key=(3,))))
    rng.random(3)
    rng.integers(0, 10, size=3, dtype=np.uint32)  # a buffered 32-bit half, where kept
    rng.bit_generator.seed_seq.spawn(2)
    deep, ours = copy.deepcopy(rng), copy_generator(rng)
    assert type(ours.bit_generator) is bits
    assert pickle.dumps(ours) == pickle.dumps(deep)
    assert repr(ours.bit_generator.state) == repr(deep.bit_generator.state)
    for name in ("entropy", "spawn_key", "pool_size", "n_children_spawned"):
        assert getattr(ours.bit_generator.seed_seq, name) == getattr(
            deep.bit_generator.seed_seq, name)
    assert ours.bit_generator.seed_seq is not rng.bit_generator.seed_seq
    expected = rng.bit_generator.state
    draws = (deep.integers(0, 2**32, size=5, dtype=np.uint32), deep.random(50),
             deep.bit_generator.seed_seq.spawn(1)[0].entropy)
    assert np.array_equal(ours.integers(0, 2**32, size=5, dtype=np.uint32), draws[0])
    assert np.array_equal(ours.random(50), draws[1])
    assert ours.bit_generator.seed_seq.spawn(1)[0].entropy == draws[2]
    assert repr(rng.bit_generator.state) == repr(expected)  # the original untouched
    assert rng.bit_generator.seed_seq.n_children_spawned == 2


def test_a_generator_built_from_a_key_keeps_no_seed_sequence():
    # a keyed Philox (the centred stream's generator) has no seed sequence:
    # the copy has none either, so a restored checkpoint pickles as before
    key = np.random.default_rng(0).integers(0, 2**64, size=2, dtype=np.uint64)
    rng = np.random.Generator(np.random.Philox(key=key))
    rng.random(3)
    ours = copy_generator(rng)
    assert pickle.dumps(ours) == pickle.dumps(copy.deepcopy(rng)) == pickle.dumps(rng)
    assert np.array_equal(ours.random(20), rng.random(20))


def test_a_failed_call_restores_a_generator_shared_with_a_deep_copied_stream():
    # the transaction copies the estimator's generator with copy_generator,
    # through the deep copy's memo: a stream deep-copied before it that holds
    # the same generator holds the same copy after a restore
    from skdpol.utils import Transaction

    owner = _Owner()
    owner._rng = np.random.default_rng(4)
    owner._stream = _Stream(owner._rng)
    before = pickle.dumps(owner.__dict__)
    with pytest.raises(RuntimeError):
        with Transaction(owner):
            owner._rng.random(5)
            raise RuntimeError("refused")
    assert owner._stream.rng is owner._rng
    assert pickle.dumps(owner.__dict__) == before


class _Stream:  # deep-copied by the transaction (no checkpoint method)
    def __init__(self, rng):
        self.rng = rng


class _Owner:
    pass

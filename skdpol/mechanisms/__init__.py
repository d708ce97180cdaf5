"""Noise mechanisms, each with the ``DpEvent`` stating its cost."""

from ._blt import BLTPrefixSum, OpenBLTPrefixSum
from ._discrete import SAMPLERS
from ._gaussian import GaussianMechanism
from ._laplace import L2LaplaceMechanism, LaplaceMechanism
from ._noise import noise_event, perturb, sample_l2_laplace
from ._spec import NoiseSpec, family_for
from ._packing import pack_symmetric, packed_dim, unpack_symmetric
from ._quantile import exponential_mechanism, quantile_distances, quantile_event, target_rank
from ._tree import PrivatePrefixSum, tree_event

__all__ = [
    "BLTPrefixSum",
    "OpenBLTPrefixSum",
    "GaussianMechanism",
    "L2LaplaceMechanism",
    "LaplaceMechanism",
    "NoiseSpec",
    "PrivatePrefixSum",
    "SAMPLERS",
    "exponential_mechanism",
    "family_for",
    "noise_event",
    "pack_symmetric",
    "packed_dim",
    "perturb",
    "quantile_distances",
    "quantile_event",
    "sample_l2_laplace",
    "target_rank",
    "tree_event",
    "unpack_symmetric",
]

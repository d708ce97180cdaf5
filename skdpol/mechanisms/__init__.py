"""Noise mechanisms, each with the ``DpEvent`` stating its cost."""

from ._gaussian import GaussianMechanism
from ._laplace import L2LaplaceMechanism, LaplaceMechanism, sample_l2_laplace
from ._packing import pack_symmetric, packed_dim, unpack_symmetric
from ._tree import PrivatePrefixSum, tree_event

__all__ = [
    "GaussianMechanism",
    "L2LaplaceMechanism",
    "LaplaceMechanism",
    "PrivatePrefixSum",
    "pack_symmetric",
    "packed_dim",
    "sample_l2_laplace",
    "tree_event",
    "unpack_symmetric",
]

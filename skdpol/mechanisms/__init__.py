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

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._discrete import discrete_noise, grid_sensitivity, grid_step, quantise  # noqa: E402, F401
from ._noise import DiscreteNoisePool  # noqa: E402, F401
from ._prefix import prefix_noise_ratio, prefix_sum_event, prefix_sum_mechanism  # noqa: E402, F401
from ._prefix import resolve_mechanism  # noqa: E402, F401
from ._spec import HoldsNoiseSpec  # noqa: E402, F401
_internal = (
    'DiscreteNoisePool', 'HoldsNoiseSpec', 'discrete_noise', 'exponential_mechanism',
    'grid_sensitivity', 'grid_step', 'prefix_noise_ratio', 'prefix_sum_event', 'prefix_sum_mechanism',
    'quantile_distances', 'quantile_event', 'quantise', 'resolve_mechanism', 'target_rank'
)

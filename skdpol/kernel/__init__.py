"""Kernel online learning, seed 003 (numpy/scipy only, no scikit-learn).

Random Fourier features give a public, data-independent model space; the
seed's online regularised least squares runs in it, and its iterates are
released by :class:`~skdpol.online.OutputPerturbation`.
"""

from ._features import KERNELS, RandomFourierFeatures
from ._korls import (
    KernelORLS,
    default_t0,
    seed_norm_bound,
    seed_sensitivity,
    step_sizes,
)

__all__ = [
    "KERNELS",
    "KernelORLS",
    "RandomFourierFeatures",
    "default_t0",
    "seed_norm_bound",
    "seed_sensitivity",
    "step_sizes",
]

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._release import final_event, final_release  # noqa: E402, F401
_internal = ('final_event', 'final_release')

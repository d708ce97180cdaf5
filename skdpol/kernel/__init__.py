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

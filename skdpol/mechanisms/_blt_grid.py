"""The BLT stream's grid path: the float encoder's error bound, the grid
step it allows, and the sensitivity in grid steps (see
:class:`._blt.BLTPrefixSum`)."""

import math

import numpy as np

from ._blt_optimise import blt_for_horizon
from ._discrete import _SLACK, grid_step

__all__ = ["encoding_error_bound", "grid_inflation"]


# ------------------------------------------------- the grid path's error bound
_U = 2.0**-53  # unit roundoff of float64


def encoding_error_bound(blt, leaf_bound):
    """Largest error of the float encoder's ``(C x)_t``, for any stream of
    leaves with coordinates in [-leaf_bound, leaf_bound] (same units).

    Buffer j runs P <- fl(fl(theta P) + x): each step errs by at most
    (2u + u^2) |theta| |P^| + u X, and errors decay by theta, so by induction
    |P^ - P| <= B_j = ((2u + u^2) theta P_max + u X) / (1 - theta - (2u + u^2) theta)
    with P_max = X / (1 - theta). The output x + sum_j omega_j P^_j is a sum of
    buffers + 1 terms (error <= gamma_(d+2) times the sum of magnitudes,
    gamma_k = k u / (1 - k u), any summation order) on top of
    sum_j omega_j B_j. Data-independent: it reads the bounds only.
    """
    X = float(leaf_bound)
    w, t = np.asarray(blt.omega), np.abs(np.asarray(blt.theta))
    a = 2.0 * _U + _U**2
    p_max = X / (1.0 - t)
    denominator = 1.0 - t - a * t
    if np.any(denominator <= 0):
        return math.inf
    B = (a * t * p_max + _U * X) / denominator
    k = w.size + 2
    gamma = k * _U / (1.0 - k * _U)
    return float((w * B).sum() + gamma * (X + (w * (p_max + B)).sum()))


# ------------------------------------------------------ the stream's grid
def _grid_for(blt, sensitivity, n_coords, leaf_bound):
    """(g, E): the grid step of a BLT stream of ``n_coords`` coordinates and
    the bound on its float encoder's error in grid steps (<= 1/2), from the
    public bounds only (see :class:`BLTPrefixSum`)."""
    g = grid_step(sensitivity, n_coords)
    for _ in range(64):  # coarser while the float encoder could err by > 1/2 step
        E = encoding_error_bound(blt, leaf_bound / g)
        if E <= 0.5:
            return g, E
        g *= 2.0
    raise ValueError("no grid keeps the BLT encoder's error below half a step.")  # pragma: no cover


def grid_inflation(horizon, dim, sensitivity, leaf_bound):
    """How much the grid path inflates a BLT stream's sensitivity (>= 1):
    the encoder's float error and the rounding, summed over ``dim x
    horizon`` coordinates, against the factor's own sensitivity. Near 1
    for short streams or small leaves; large when long streams of large
    leaves force a coarse grid."""
    blt = blt_for_horizon(horizon)
    n_coords = dim * horizon
    g, E = _grid_for(blt, sensitivity, n_coords, leaf_bound)
    own = sensitivity * blt.sensitivity(horizon)
    return _grid_units_sensitivity(own, g, E, n_coords) * g / own


def _grid_units_sensitivity(own, g, E, n_coords):
    """L2 sensitivity, in grid steps, of ``n_coords`` published integers whose
    exact values move by ``own`` in L2: slack for the grid, plus at most
    2 E + 1 per coordinate for the float encoder's error and the rounding."""
    return own * (1 + _SLACK) / g + (2.0 * E + 1.0) * math.sqrt(n_coords)

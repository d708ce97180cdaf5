"""The "ls" stream's uncopied leaves (skdpol.online._lsq, "Uncopied rounds")."""

import math
from fractions import Fraction

import numpy as np
import pytest

from skdpol.linear_model._rows import UnitRows, unit_rows
from skdpol.losses import LogisticLoss, MultinomialLoss
from skdpol.mechanisms import NoiseSpec, pack_symmetric
from skdpol.online import make_stream
from skdpol.online._ftl import joint_sensitivity
from skdpol.online._ftl_float import float_leaf_sensitivity
from skdpol.online._lsq import _uncopied_leaf


def _stream(*, n_outputs=1, d=4, batch_size=100, intercept=True, eps=1.0):
    loss = LogisticLoss() if n_outputs == 1 else MultinomialLoss(n_outputs)
    return make_stream("ls", loss=loss, n_features=d + intercept, radius=1.0, alpha=1e-6,
                       row_bound=math.sqrt(2.0), batch_size=batch_size, horizon=None,
                       epsilon=eps, delta=1e-6, noise=NoiseSpec("gaussian", "float"),
                       calibration="tight", feedback="full", rng=np.random.default_rng(0),
                       mechanism="blt", intercept=1.0 if intercept else None)


def _labels(rng, n, n_outputs):
    return (rng.choice([-1.0, 1.0], n) if n_outputs == 1
            else rng.integers(0, n_outputs, n).astype(float))


@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_the_uncopied_leaf_is_the_leaf_of_the_unit_rows(n_outputs, intercept, order):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8)) / 3.0
    X = {"C": X, "F": np.asfortranarray(X), "strided": X[:, ::2]}[order]
    ls = _stream(n_outputs=n_outputs, d=X.shape[1], intercept=intercept, batch_size=300)
    y = _labels(rng, 300, n_outputs)
    rows = unit_rows(X, 4.0, intercept)  # no row clipped
    fast = _uncopied_leaf(ls, rows, ls._coded(y))
    assert fast is not None  # the uncopied path was taken
    copied = ls.leaf(np.asarray(rows), y)  # the definition: the copied unit rows
    np.testing.assert_allclose(fast, copied, rtol=1e-13, atol=1e-15)
    assert np.array_equal(ls.leaf(rows, y), fast)


def test_a_round_with_a_clipped_row_is_summed_from_its_copy():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5)) / 4.0
    X[17] *= 50.0  # this row is clipped onto the unit sphere
    ls = _stream(d=5, batch_size=200)
    y = _labels(rng, 200, 1)
    rows = unit_rows(X, 2.0, True)
    assert _uncopied_leaf(ls, rows, ls._coded(y)) is None
    assert np.array_equal(ls.leaf(rows, y), ls.leaf(np.asarray(rows), y))
    # and the factor range outside which the error bound is not derived
    far = UnitRows(X[:3] * 2.0**460, np.full(3, 2.0**-460), 1.0)
    assert _uncopied_leaf(ls, far, ls._coded(y[:3])) is None


def _exact_leaf(ls, X, f, y, intercept):
    """The leaf of the exact unit rows f x (never rounded), in rationals;
    each coordinate rounded once at the end (sqrt(2) of the packing in float)."""
    m, d = X.shape
    n = d + intercept
    a = Fraction(ls.intercept) if intercept else None
    F, Vs, us = Fraction(f), Fraction(ls.V_scale), Fraction(ls.u_scale)
    rows = [[F * Fraction(float(v)) for v in X[i]] + ([a] if intercept else []) for i in range(m)]
    V = np.empty((n, n))
    for j in range(n):
        for k in range(j, n):
            V[j, k] = V[k, j] = float(sum(r[j] * r[k] for r in rows) / Vs)
    u = [float(sum(r[j] * Fraction(float(y[i])) for i, r in enumerate(rows)) / us)
         for j in range(n)]
    return np.concatenate([pack_symmetric(V), u])


def test_the_uncopied_float_error_is_inside_the_bound_the_sensitivity_carries():
    # rows of very different magnitudes with cancelling entries, scaled by a
    # factor that is no power of two: the float sums of the caller's rows,
    # then the scalings, against the exact sums of the exact unit rows
    rng = np.random.default_rng(2)
    m, d = 64, 3
    X = rng.normal(size=(m, d)) * np.exp(rng.uniform(-6.0, 0.0, size=(m, 1)))
    X[::2] = -X[1::2] * (1.0 + 2.0**-30)  # near-cancelling pairs
    f = 1.0 / 3.7
    X /= np.maximum(np.linalg.norm(X * f, axis=1, keepdims=True), 1.0) * 1.0001
    ls = _stream(d=d, batch_size=m)
    y = _labels(rng, m, 1)
    rows = UnitRows(X, np.full(m, f), 1.0)
    fast = _uncopied_leaf(ls, rows, ls._coded(y))
    assert fast is not None
    # E of float_leaf_sensitivity: the sensitivity it returns for an exact
    # sensitivity of 0 is 2 E
    E = 0.5 * float_leaf_sensitivity(
        0.0, rows_per_leaf=m, n_raw_features=d, radius=1.0, row_bound=ls.row_bound,
        label_bound=1.0, V_scale=ls.V_scale, u_scale=ls.u_scale, n_features=d + 2)
    err = np.linalg.norm(fast - _exact_leaf(ls, X, f, y, True))
    assert err <= E
    # the sensitivity the stream carries is this E over the exact one, unchanged
    exact = joint_sensitivity(ls.row_bound, 1.0, ls.V_scale, ls.u_scale)
    assert exact < ls.sensitivity <= exact * (1 + 1e-9)

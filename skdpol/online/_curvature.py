"""A per-coordinate cap on the wide classifier's step, read from its releases.

Why. The wide classifier's heavy ball (:mod:`._momentum`, beta = 0.95) takes
lr = b / (25 R~^2) on each round's mean gradient, with no cap on b (2,000
rows a round at 2^17 columns and epsilon = inf, 5,000 at epsilon 1). The
mean logistic loss's curvature along a direction u is (1/4) mean((u.x)^2) <=
R~^2 / 4, so lr lambda can reach b / 100 = 20-50, while heavy ball is stable
only for lr lambda < 2 (1 + beta) = 3.9. On hashed rows the mass is spread
over 2^17 columns and no direction comes near the bound, so the big step
works (it is what lets the wide stream match SGD); a column shared by most
rows (a token of value 0.8 in every row: 64 % of each row's squared norm)
oscillates, and the stream fell to 0.53-0.62 accuracy where one pass of
SGD reaches 0.63-0.65 (``docs/benchmarks/wide_stability.md``). One global
cap on lr fixes those rows but costs plain hashed rows 0.03-0.05.

The rule (a diagonal secant). A round releases g_t, the mean gradient at
theta_{t-1}; so g_t - g_{t-1} ~ H (theta_{t-1} - theta_{t-2}), and along
coordinate j the curvature is estimated by least squares over the rounds,
with decay ``DECAY``:

    num_j = DECAY num_j + dg_j dtheta_j      (dg_j kept only past the noise gate)
    den_j = DECAY den_j + dtheta_j^2
    h_j   = num_j / den_j
    lr_j  = min(lr, kappa / h_j) = min(lr, kappa den_j / num_j) where num_j > 0, else lr
            (kappa = WIDE_CURVATURE_CAP = 2)

kappa = 2 keeps the estimated lr_j h_j at about half heavy ball's bound.
Coordinates whose releases show no such curvature keep lr exactly (the same
floats as the scalar step). The noise gate: with a finite epsilon the
released increments carry noise of the same std on every coordinate, and
a product of two noisy differences is biased upward (the increment's noise
enters both dg and, through the velocity, dtheta); a term counts only where
|dg_j| passes ``GATE`` = 4 times a public bound on its noise std,
(s_t + 2 s_{t-1} + s_{t-2}) / b (s the mechanism's prefix-noise std,
``noise_std_at``: dg is the second difference of the releases over b).
At epsilon 1 on hashed rows no column then passed it (the intercept's aside):
their accuracy is main's on seeds 0-2, where without the gate a few columns
were capped on noise (seeds 0 / 2: 0.5782 / 0.6050 -> 0.5798 / 0.6046; the
0.8 token's rows 0.5156 / 0.5010 / 0.6109 with it, 0.5114 / 0.5002 / 0.6114
without).
The intercept column keeps lr: its curvature is c^2 mean(sigma') <= 1/16
(c = 0.5), lr h up to 4 at rounds of 2,000 and 10 at 5,000 (epsilon 1;
4-7 measured on hashed rows);
capping it cost plain hashed rows at epsilon 1 0.578 / 0.603 / 0.605 ->
0.570 / 0.575 / 0.581 (seeds 0-2; the averaged iterates absorb its
oscillation there), and with it kept the plain rows' accuracy at epsilon 1
is main's on every seed.

Privacy. h_j is a function of the released prefix sums (through g_t, g_{t-1})
and of the iterates theta_{t-1}, theta_{t-2}, which are themselves
post-processing of earlier releases; the gate's bound is a function of the
mechanism's public noise schedule and b. So lr_j, and theta_t, remain
post-processing of G_1..G_t with public constants, and the gradients of round
t+1 are still taken at a point fixed by G_1..G_t: the sensitivity argument
of :mod:`._momentum` (leaf sensitivity 2 L, adaptive inputs) is unchanged
and the rule costs no privacy. No row is read outside the leaf.

State: four (k, d) arrays (the previous gradient and iterate, num, den).
The numpy lines (:meth:`CurvatureCap.rates`, the reference) replace them
each round; the stream's compiled post-processing from 2^14 coordinates
(:func:`~skdpol.online._momentum_kernel.momentum_step_capped`: the same
operations in the same order, the same bits) writes them in place while no
checkpoint shares them (``_owned``, as the stream's iterates).
"""

import numpy as np

from ._momentum_kernel import momentum_step_capped

DECAY = 0.9  # the secant's least squares forget older rounds at this rate
GATE = 4.0  # a term counts where |dg| > GATE x the public bound on its noise std

__all__ = ["CurvatureCap", "DECAY", "GATE"]


class CurvatureCap:
    """The secant state of one stream (module notes); ``kappa`` the cap on
    the estimated lr_j h_j, ``shape`` the stream's (k, d)."""

    _owned = False  # (unpickled: the kernel's first round copies the arrays)

    def __init__(self, kappa, shape):
        self.kappa = float(kappa)
        self._previous_g = self._previous_theta = None  # g_{t-1}, theta_{t-2}
        self._num = np.zeros(shape)
        self._den = np.zeros(shape)

    def __copy__(self):
        # a stream's checkpoint: both sides share the arrays from here on, so
        # neither may write them in place (the kernel's next round copies)
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        self._owned = clone._owned = False
        return clone

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_owned", None)
        return state

    def rates(self, lr, g, theta, tree, t, rows, intercept):
        """Round t's learning rates (lr, or a (k, d) array) from its released
        mean gradient ``g`` at ``theta`` (= theta_{t-1}), the numpy lines (the
        reference of :func:`~._momentum_kernel.momentum_step_capped`);
        replaces this state's arrays, never writes them."""
        previous_g, previous_theta = self._previous_g, self._previous_theta
        self._previous_g, self._previous_theta, self._owned = g, theta, False
        if previous_g is None:
            return lr
        dg = g - previous_g
        dtheta = theta - previous_theta
        term = dg * dtheta
        gate = GATE * _noise_bound(tree, t, rows)
        if gate > 0.0:  # the noise gate (module notes)
            term = np.where(np.abs(dg) > gate, term, 0.0)
        num = DECAY * self._num
        num += term
        den = DECAY * self._den
        den += dtheta * dtheta
        self._num, self._den = num, den
        # kappa / h_j = kappa den_j / num_j where num_j > 0 (h_j > 0)
        positive = num > 0.0
        if intercept:
            positive[:, -1] = False  # the intercept keeps lr (module notes)
        kd = self.kappa * den
        return np.where(positive, np.minimum(lr, kd / np.where(positive, num, 1.0)), lr)

    def kernel_step(self, released, last, rows, alpha, momentum, lr, keep, rho, velocity,
                    theta, average, tree, t, intercept):
        """The round's post-processing with the cap in one compiled pass
        (:func:`~._momentum_kernel.momentum_step_capped`, the same bits as
        :meth:`rates` and the stream's numpy lines), writing the stream's
        ``velocity``, ``theta`` and ``average`` (owned by the caller) and this
        state's arrays in place (copied first where a checkpoint shares them)."""
        has_previous = self._previous_g is not None
        if not self._owned:
            if has_previous:
                self._previous_g = self._previous_g.copy()
                self._previous_theta = self._previous_theta.copy()
            else:
                self._previous_g = np.empty_like(theta)
                self._previous_theta = np.empty_like(theta)
            self._num, self._den = self._num.copy(), self._den.copy()
            self._owned = True
        gate = GATE * _noise_bound(tree, t, rows) if has_previous else 0.0
        momentum_step_capped(released, last, rows, alpha, momentum, lr, keep, rho, velocity,
                             theta, average, self._previous_g, self._previous_theta,
                             self._num, self._den, has_previous, DECAY, gate, self.kappa,
                             bool(intercept))


def _noise_bound(tree, t, rows):
    """A public bound on the noise std of (G_t - 2 G_{t-1} + G_{t-2}) / rows:
    (s_t + 2 s_{t-1} + s_{t-2}) / rows, s the prefix noise std (0 at
    epsilon = inf). An epoch mechanism knows only its current epoch's times:
    there the largest std it gives stands for the others."""
    times = [t, max(t - 1, 0), max(t - 2, 0)]
    try:
        s = np.asarray(tree.noise_std_at(times), dtype=float)
    except ValueError:
        s = np.full(3, float(np.max(tree.noise_std_at([t]))))
    return float(s[0] + 2.0 * s[1] + s[2]) / rows

"""A BLT's step as one compiled loop (:func:`skdpol.utils.kernel`).

Why. ``BLTPrefixSum._add_one`` is ~15 numpy operations over vectors of
``dim`` (and (B, dim) buffers): clip, divide, the encoder's products and
sum, rint, the noise, the decoder's, the release and the exact total, one
pass over memory each. A wide classifier's stream (2^17 + 1 coordinates)
spent ~0.65 ms a step on them with one buffer, ~2 ms with four (a horizon
past 64 rounds, and every open-ended stream's BLT epochs); the loops below
read every input once and write every output once (~0.15 and ~0.8 ms).

Bit for bit. Each output coordinate is computed by the same IEEE operations,
in the same order and on the same operands, as the numpy path it replaces
(``_blt._add_one``, kept as the reference: ``_blt._KERNEL_WIDTH``):

* the clip ``minimum(maximum(x, -b), b)``: numpy's maximum returns its first
  operand when it is greater or NaN, else its second (a tie returns the
  second operand: the sign numpy gives a pair of zeros), minimum likewise;
  a NaN leaf stays NaN, infinities are clipped;
* the one-buffer grid step takes the buffer's product for its sum (as
  ``_add_one`` does under ``_ONE_BUFFER_PRODUCT``); every other sum over
  the buffers is ``add.reduce``'s over axis 0 of the (B, dim) products: for
  each coordinate, from +0.0, the rows added in order, ((0.0 + p_0) + p_1)
  + ... (axis 0 is not the contiguous one: no pairwise summation; the +0.0
  start turns a sum of -0.0's into +0.0, which the tests pin);
* every other sum is taken as numpy takes it (a + b where numpy adds b to
  a: IEEE addition is commutative bit for bit anyway); ``rint`` rounds half
  to even in both (LLVM's ``rint`` in the default rounding mode), and no
  product is fused into a multiply-add (numba compiles without fastmath).

The coefficients are passed as floats (one buffer) or tuples of floats
(read from ``_per_buffer``'s arrays, equal along a row): loaded from arrays,
which the outputs might alias, they were reloaded every coordinate. numba
compiles a summing kernel once per tuple length (B = 4 by default). With
four buffers the loop reads 12 arrays and writes 10, too many pairs for
LLVM's runtime alias checks, so it is not vectorised (~0.75 ms at 2^17 + 1
against numpy's ~2.1); a blocked variant (the sums of 512 coordinates at a
time in scratch arrays, each inner loop over two or three arrays) measured
1.4-2.5 ms and was dropped.

In place. Measured at 2^17 + 1 coordinates (the loop alone): with four fresh
outputs a step took ~1 ms (250-370 page faults a step: the blocks freed the
step before were not reused untouched), writing into existing arrays ~0.35
ms, and in place ~0.15 ms (separate output arrays, which might alias the
inputs as far as the compiler knows, keep the loop from being vectorised).
So the buffers and the exact total (where kept: ``_blt._EXACT_TOTAL``) are written in place, the caller making
sure they are the stream's own (``BLTPrefixSum._owned``: no checkpoint
shares them; else it copies them first), and the release, which
``shared_release`` hands out uncopied, goes into a fresh array every step.
"""

import numpy as np

from ..utils import kernel

__all__ = ["compiled_step", "grid_step", "grid_sum_step", "float_step"]

_NO_NOISE = np.zeros(0)
_NO_TOTAL = np.zeros(0)  # a BLT without its exact total: the kernels skip it


def compiled_step(stream, x, product):
    """``BLTPrefixSum._add_one`` compiled: ``stream``'s step on the leaf ``x``
    (dim,) through :func:`grid_step` (one buffer, its sum taken as its
    product: ``product``, ``_blt._ONE_BUFFER_PRODUCT``), :func:`grid_sum_step`
    (the grid path's sums over the buffers) or :func:`float_step`; False
    (nothing done) where none is the numpy step (a grid BLT taking products
    with one buffer on one side and several on the other: none has).

    The noise is drawn as there: a row of the pool a grid step, one normal
    vector a float one. The buffers and the exact total (where the BLT
    keeps one: ``_blt._EXACT_TOTAL``) are written in place: on copies where a checkpoint shares them (``_owned`` false: the
    first step after ``__copy__``), which the stream then owns; the release
    is a fresh array (``shared_release`` hands it out uncopied).
    """
    enc, dec, total = stream._enc, stream._dec, stream._total
    grid = stream._step_size is not None
    one = enc.shape[0] == 1 and dec.shape[0] == 1
    if grid and product and not one and (enc.shape[0] == 1 or dec.shape[0] == 1):
        return False
    if total is None:  # no exact total kept (_blt._EXACT_TOTAL): none written
        total = _NO_TOTAL
    if not stream._owned:
        enc, dec = enc.copy(), dec.copy()
        if total.shape[0]:
            total = total.copy()
    released = np.empty(stream.dim)
    omega, theta, nu, lam = _coefficients(stream)
    if grid:
        pool = stream._pool
        if pool.shape[0] == 0:
            pool = stream._draw_noise()
        stream._pool = pool[1:]
        if one and product:
            grid_step(x, stream.leaf_bound, stream._step_size, pool[0], omega[0], theta[0],
                      nu[0], lam[0], enc[0], dec[0], total, stream._released, released)
        else:
            grid_sum_step(x, stream.leaf_bound, stream._step_size, pool[0], omega, theta, nu,
                          lam, enc, dec, total, stream._released, released)
    else:
        noise = (stream._rng.standard_normal(stream.dim) if stream.noise_multiplier > 0
                 else _NO_NOISE)
        float_step(x, noise, stream.noise_std, omega, theta, nu, lam, enc, dec, total,
                   stream._released, released)
    stream._enc, stream._dec, stream._released = enc, dec, released
    if total.shape[0]:
        stream._total = total
    stream._owned = True
    stream._t += 1
    return True


def _coefficients(stream):
    """The BLT's (omega, theta, nu, lam) as tuples of floats (column 0 of
    ``_per_buffer``'s arrays, equal along a row), read once a stream: public
    constants of its design, and ~1 us of a ~4 us step at d = 55 when
    rebuilt every step."""
    coefficients = stream.__dict__.get("_kernel_coefficients")
    if coefficients is None:
        coefficients = stream._kernel_coefficients = tuple(
            tuple(c[:, 0].tolist()) for c in (stream._omega, stream._theta, stream._nu,
                                              stream._lam))
    return coefficients


@kernel
def grid_step(leaf, bound, step, noise, omega, theta, nu, lam, enc, dec, total, released,
              released_out):
    """One grid-path step of a one-buffer BLT: ``enc``, ``dec`` and ``total``
    in place (the caller owns them), the release into ``released_out``.

    ``leaf`` (dim,) the leaf; ``bound`` its clip; ``step`` the grid g;
    ``noise`` (dim,) the step's integer noise (float64); ``omega``, ``theta``,
    ``nu``, ``lam`` the buffer's coefficients (floats); ``enc`` and ``dec``
    (dim,) the buffers. The buffer's sum is its product
    (``_blt._ONE_BUFFER_PRODUCT``). ``total`` (dim,) the exact sum of the
    leaves, or empty where the BLT keeps none (``_blt._EXACT_TOTAL``).
    """
    lo = -bound
    keep = total.shape[0] > 0
    for i in range(leaf.shape[0]):
        x = leaf[i]
        c = x if (x > lo or x != x) else lo  # maximum(x, -b): NaN propagates
        c = c if (c < bound or c != c) else bound  # minimum(c, b)
        c = c / step  # grid units (g a power of two: exact)
        e = enc[i]
        y = np.rint(omega * e + c)
        y = (y + noise[i]) * step
        enc[i] = theta * e + c
        # the decoder post-processes y: v = nu dec + y
        d = dec[i]
        v = nu * d + y
        dec[i] = lam * d + y
        released_out[i] = v + released[i]
        if keep:
            total[i] = total[i] + x


@kernel
def grid_sum_step(leaf, bound, step, noise, omega, theta, nu, lam, enc, dec, total, released,
                  released_out):
    """One grid-path step of a BLT with the sums over its buffers (several,
    or one where the product is not taken): as :func:`grid_step`, with
    ``omega``, ``theta`` (one float a row of ``enc``), ``nu``, ``lam`` (a row
    of ``dec``) tuples and ``enc``, ``dec`` (buffers, dim).

    Each sum is add.reduce's over axis 0: from +0.0, the rows in order.
    """
    lo = -bound
    keep = total.shape[0] > 0
    n_enc, n_dec = len(omega), len(nu)
    for i in range(leaf.shape[0]):
        x = leaf[i]
        c = x if (x > lo or x != x) else lo  # maximum(x, -b): NaN propagates
        c = c if (c < bound or c != c) else bound  # minimum(c, b)
        c = c / step  # grid units (g a power of two: exact)
        v = 0.0
        for j in range(n_enc):
            v = v + omega[j] * enc[j, i]
        y = np.rint(v + c)
        y = (y + noise[i]) * step
        for j in range(n_enc):
            enc[j, i] = theta[j] * enc[j, i] + c
        # the decoder post-processes y: w = sum_j nu_j dec_j + y
        w = 0.0
        for j in range(n_dec):
            w = w + nu[j] * dec[j, i]
        w = w + y
        for j in range(n_dec):
            dec[j, i] = lam[j] * dec[j, i] + y
        released_out[i] = w + released[i]
        if keep:
            total[i] = total[i] + x


@kernel
def float_step(leaf, noise, std, omega, theta, nu, lam, enc, dec, total, released,
               released_out):
    """One float-path step of a BLT (as :func:`grid_sum_step`, any buffers).

    ``noise`` (dim,) standard normal draws, added as ``noise * std``, or an
    empty array for a step without noise (nothing added: a -0.0 stays). The
    sums over the buffers start from +0.0, as add.reduce's (this path never
    took the product alone).
    """
    noisy = noise.shape[0] > 0
    keep = total.shape[0] > 0
    n_enc, n_dec = len(omega), len(nu)
    for i in range(leaf.shape[0]):
        x = leaf[i]
        y = 0.0
        for j in range(n_enc):
            y = y + omega[j] * enc[j, i]
        y = y + x
        if noisy:
            y = y + noise[i] * std
        for j in range(n_enc):
            enc[j, i] = theta[j] * enc[j, i] + x
        v = 0.0
        for j in range(n_dec):
            v = v + nu[j] * dec[j, i]
        v = v + y
        for j in range(n_dec):
            dec[j, i] = lam[j] * dec[j, i] + y
        released_out[i] = v + released[i]
        if keep:
            total[i] = total[i] + x

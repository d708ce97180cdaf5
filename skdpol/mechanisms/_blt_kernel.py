"""A one-buffer BLT's step as one compiled loop (:func:`skdpol.utils.kernel`).

Why. ``BLTPrefixSum._add_one`` is ~15 numpy operations over vectors of
``dim``: clip, divide, the encoder's product and sum, rint, the noise, the
decoder's, the release and the exact total, one pass over memory each. A
wide classifier's stream (one buffer, 2^17 + 1 coordinates) spent ~0.65 ms
a step on them; the loops below read every input once and write every
output once (~0.15 ms).

Bit for bit. Each output coordinate is computed by the same IEEE operations,
in the same order and on the same operands, as the numpy path it replaces
(``_blt._add_one``, kept as the reference: ``_blt._KERNEL_WIDTH``):

* the clip ``minimum(maximum(x, -b), b)``: numpy's maximum returns its first
  operand when it is greater or NaN, else its second (a tie returns the
  second operand: the sign numpy gives a pair of zeros), minimum likewise;
  a NaN leaf stays NaN, infinities are clipped;
* the grid step takes the buffer's product for its sum (as ``_add_one``
  does under ``_ONE_BUFFER_PRODUCT``); the float step's sums start from
  +0.0 (``add.reduce`` over one row: 0.0 + p, which turns -0.0 into +0.0);
* every other sum is taken as numpy takes it (a + b where numpy adds b to
  a: IEEE addition is commutative bit for bit anyway); ``rint`` rounds half
  to even in both (LLVM's ``rint`` in the default rounding mode), and no
  product is fused into a multiply-add (numba compiles without fastmath).

The coefficients are passed as floats (read from ``_per_buffer``'s arrays,
equal along a row): loaded from arrays, which the outputs might alias, they
were reloaded every coordinate. Several buffers keep the numpy path: a first
compiled loop over (B, dim) buffers (fresh outputs) ran no faster than numpy
at 4,097 coordinates with B = 4, and a wide stream's BLT has one buffer up
to 64 rounds (``skdpol.online.wide_blt_buffers``), so it was not pursued.

In place. Measured at 2^17 + 1 coordinates (the loop alone): with four fresh
outputs a step took ~1 ms (250-370 page faults a step: the blocks freed the
step before were not reused untouched), writing into existing arrays ~0.35
ms, and in place ~0.15 ms (separate output arrays, which might alias the
inputs as far as the compiler knows, keep the loop from being vectorised).
So the buffers and the exact total are written in place, the caller making
sure they are the stream's own (``BLTPrefixSum._owned``: no checkpoint
shares them; else it copies them first), and the release, which
``shared_release`` hands out uncopied, goes into a fresh array every step.
"""

import numpy as np

from ..utils import kernel

__all__ = ["one_buffer_step", "grid_step", "float_step"]

_NO_NOISE = np.zeros(0)


def one_buffer_step(stream, x):
    """``BLTPrefixSum._add_one`` for one buffer: ``stream``'s step on the leaf
    ``x`` (dim,) through :func:`grid_step` or :func:`float_step`.

    The noise is drawn as there: a row of the pool a grid step, one normal
    vector a float one. The buffers and the exact total are written in
    place: on copies where a checkpoint shares them (``_owned`` false: the
    first step after ``__copy__``), which the stream then owns; the release
    is a fresh array (``shared_release`` hands it out uncopied).
    """
    enc, dec, total = stream._enc, stream._dec, stream._total
    if not stream._owned:
        enc, dec, total = enc.copy(), dec.copy(), total.copy()
    released = np.empty(stream.dim)
    # the coefficients as floats (equal along _per_buffer's rows: column 0)
    coefficients = (stream._omega[0, 0], stream._theta[0, 0], stream._nu[0, 0],
                    stream._lam[0, 0])
    if stream._step_size is not None:
        pool = stream._pool
        if pool.shape[0] == 0:
            pool = stream._draw_noise()
        stream._pool = pool[1:]
        grid_step(x, stream.leaf_bound, stream._step_size, pool[0], *coefficients, enc[0],
                  dec[0], total, stream._released, released)
    else:
        noise = (stream._rng.standard_normal(stream.dim) if stream.noise_multiplier > 0
                 else _NO_NOISE)
        float_step(x, noise, stream.noise_std, *coefficients, enc[0], dec[0], total,
                   stream._released, released)
    stream._enc, stream._dec, stream._total, stream._released = enc, dec, total, released
    stream._owned = True
    stream._t += 1


@kernel
def grid_step(leaf, bound, step, noise, omega, theta, nu, lam, enc, dec, total, released,
              released_out):
    """One grid-path step of a one-buffer BLT: ``enc``, ``dec`` and ``total``
    in place (the caller owns them), the release into ``released_out``.

    ``leaf`` (dim,) the leaf; ``bound`` its clip; ``step`` the grid g;
    ``noise`` (dim,) the step's integer noise (float64); ``omega``, ``theta``,
    ``nu``, ``lam`` the buffer's coefficients (floats); ``enc`` and ``dec``
    (dim,) the buffers. The buffer's sum is its product
    (``_blt._ONE_BUFFER_PRODUCT``).
    """
    lo = -bound
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
        total[i] = total[i] + x


@kernel
def float_step(leaf, noise, std, omega, theta, nu, lam, enc, dec, total, released,
               released_out):
    """One float-path step of a one-buffer BLT (as :func:`grid_step`).

    ``noise`` (dim,) standard normal draws, added as ``noise * std``, or an
    empty array for a step without noise (nothing added: a -0.0 stays). The
    sums over the buffer start from +0.0, as add.reduce's (this path never
    took the product alone).
    """
    noisy = noise.shape[0] > 0
    for i in range(leaf.shape[0]):
        x = leaf[i]
        e = enc[i]
        y = (0.0 + omega * e) + x
        if noisy:
            y = y + noise[i] * std
        enc[i] = theta * e + x
        d = dec[i]
        v = (0.0 + nu * d) + y
        dec[i] = lam * d + y
        released_out[i] = v + released[i]
        total[i] = total[i] + x

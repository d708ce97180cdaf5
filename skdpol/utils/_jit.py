"""Compiled kernels for the hot paths, with numba, imported on first use.

Why. A few hot loops (the exact noise sampler's pass, the BLT's step over
2^17 coordinates) are a chain of ~15-20 numpy operations, each a pass over
memory with its own call overhead; one compiled loop does the same
arithmetic, element by element and in the same order, in one pass. numba
compiles without ``fastmath``, so every floating-point operation is the IEEE
operation numpy performs (no reassociation, no fused multiply-add): a kernel
that applies the same operations in the same order gives the same bits,
which the tests pin against the numpy path it replaces.

numba (and the compilation) is paid on a kernel's first call, not at
``import skdpol``; compiled code is cached on disk (``cache=True``: next to
the module, or numba's user cache directory where that is read-only), so a
later process starts with it. Where numba finds no writable place for its
cache (a read-only package and no user cache directory), a kernel is
compiled for the process alone.
"""

import functools

__all__ = ["kernel"]


def kernel(fn):
    """``fn`` compiled by ``numba.njit`` on its first call.

    The plain Python function stays reachable as ``.py_func`` (numba's own
    name for it), for tests that check a kernel line by line on small
    inputs without compiling.
    """
    compiled = None

    @functools.wraps(fn)
    def call(*args):
        nonlocal compiled
        if compiled is None:
            import numba  # ~0.2 s: only where a kernel runs

            try:
                compiled = numba.njit(cache=True, nogil=True)(fn)
            except RuntimeError:  # no writable cache location: compiled for this process only
                compiled = numba.njit(nogil=True)(fn)
        return compiled(*args)

    call.py_func = fn
    return call

"""Nanoseconds per draw of the exact discrete sampler, compiled pass against numpy's.

The wide classifier's noise (``bench_wide.py``'s 2^17-column
``PrivateOnlineLogistic`` at epsilon 1) is one BLT step's 2^17 + 1 discrete
Gaussians at sigma ~ 2^23.6 grid steps, 20 steps a pass over 100,000 rows.
This times ``discrete_noise`` on that many draws (and at a few other scales:
small, split-index, two-word and Laplace plans), CPU time, best of
``--repeats``, with the compiled pass (``_exact_kernel``) and with numpy's
(``_exact._KERNEL = False``: ``decide_squeezed``) interleaved in one process,
and the generator's words alone (``random_raw`` of as many words as the
sampler reads) for reference. Both paths give the same draws (checked here
too, on every row).

    OMP_NUM_THREADS=1 python benchmarks/bench_exact_sampler.py [--repeats 15]
"""

import argparse
import time

from _common import REPO  # noqa: F401  (puts this checkout first on sys.path)

import numpy as np

from skdpol.mechanisms import _exact
from skdpol.mechanisms._discrete import discrete_noise

WIDE = 12981266.978454564  # the 2^17 classifier's BLT step at epsilon 1 (sigma, grid steps)
CASES = [("gaussian", WIDE, 131_073), ("gaussian", 40.0, 131_073),
         ("gaussian", 2.0**27 * 1.1, 131_073), ("gaussian", 2.0**33 * 1.7, 131_073),
         ("laplace", 1e4, 131_073)]


def _draw(noise, scale, n, kernel):
    _exact._KERNEL = kernel
    rng = np.random.Generator(np.random.Philox(key=[7, 9]))
    t = time.process_time()
    out = discrete_noise(rng, n, scale, noise)
    return time.process_time() - t, out, rng


def _words(n):
    bits = np.random.Philox(key=[7, 9])
    t = time.process_time()
    bits.random_raw(n)
    return time.process_time() - t


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    has_kernel = hasattr(_exact, "_KERNEL")
    print(f"{'noise':9} {'scale':>12} {'n':>7} {'numpy ns':>9} {'kernel ns':>9} "
          f"{'speed-up':>8} {'words ns':>9}")
    for noise, scale, n in CASES:
        best = {False: np.inf, True: np.inf}
        words = np.inf
        for _ in range(args.repeats):
            for kernel in ((False, True) if has_kernel else (True,)):
                t, out, rng = _draw(noise, scale, n, kernel)
                best[kernel] = min(best[kernel], t)
                if has_kernel and kernel:  # the same draws and the same words read after
                    _, ref, ref_rng = _draw(noise, scale, n, False)
                    assert out.tobytes() == ref.tobytes()
                    assert np.array_equal(rng.bit_generator.random_raw(4), ref_rng.bit_generator.random_raw(4))
            # the generator's words alone: as many as the sampler read (Philox
            # counts blocks of 4 words)
            used = int(rng.bit_generator.state["state"]["counter"][0]) * 4
            words = min(words, _words(used))
        if not has_kernel:
            best[False] = best[True]
        ns = {k: v / n * 1e9 for k, v in best.items()}
        print(f"{noise:9} {scale:12.4g} {n:7d} {ns[False]:9.2f} {ns[True]:9.2f} "
              f"{ns[False] / ns[True]:8.2f} {words / n * 1e9:9.2f}")
    if has_kernel:
        _exact._KERNEL = True


if __name__ == "__main__":
    main()

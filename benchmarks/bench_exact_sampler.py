"""Nanoseconds per draw of the exact discrete sampler, compiled pass against numpy's.

The wide classifier's noise (``bench_wide.py``'s 2^17-column
``PrivateOnlineLogistic`` at epsilon 1) is one BLT step's 2^17 + 1 discrete
Gaussians at sigma ~ 2^23.6 grid steps, 20 steps a pass over 100,000 rows.
This times ``discrete_noise`` on that many draws (and at a few other scales:
small, split-index, two-word and Laplace plans), CPU time, best of
``--repeats``, with the compiled pass (``_exact_kernel``) and with numpy's
(``_exact._KERNEL = False``: ``decide_squeezed``) in interleaved blocks of
three draws in one process, and the generator's words alone (``random_raw``
of as many words as the sampler reads) for reference. Both paths give the
same draws (checked here too, on every row). The last two columns draw from
SFC64 (the BLT's generator) with the compiled pass reading ``random_raw``'s
words (``_exact_kernel._OWN_WORDS = False``) and generating them itself
(the default; two-word plans read ``random_raw`` either way): the same
draws too. Each draw allocates its output
afresh (as ``discrete_noise`` does for its callers), so page faults on that
memory, when the allocator hands out new pages, count in both paths.

With ``--stream``, also the whole stream: ``bench_wide.py``'s 2^17-column
CSR rows (100,000, chunks of 10,000), ``PrivateOnlineLogistic(epsilon=1,
data_norm=1, horizon=100_000, random_state=0).partial_fit`` against
``SGDClassifier(random_state=0).partial_fit``, CPU seconds, the best of
``--repeats`` interleaved passes with each sampler path (the same models):
numpy's pass, the compiled pass on ``random_raw``'s words and the compiled
pass generating the BLT's SFC64 words.

    OMP_NUM_THREADS=1 python benchmarks/bench_exact_sampler.py [--repeats 15] [--stream]
"""

import argparse
import time
import warnings

from _common import REPO  # noqa: F401  (puts this checkout first on sys.path)

import numpy as np

from skdpol.mechanisms import _exact, _exact_kernel
from skdpol.mechanisms._discrete import discrete_noise

WIDE = 12981266.978454564  # the 2^17 classifier's BLT step at epsilon 1 (sigma, grid steps)
CASES = [("gaussian", WIDE, 131_073), ("gaussian", 40.0, 131_073),
         ("gaussian", 2.0**27 * 1.1, 131_073), ("gaussian", 2.0**33 * 1.7, 131_073),
         ("laplace", 1e4, 131_073)]


def _draw(noise, scale, n, kernel, sfc64=None):
    """kernel: the compiled pass or numpy's (Philox); sfc64 (the compiled pass
    on SFC64): False reads random_raw's words, True generates them."""
    _exact._KERNEL = kernel
    _exact_kernel._OWN_WORDS = bool(sfc64)
    rng = np.random.Generator(np.random.Philox(key=[7, 9]) if sfc64 is None
                              else np.random.SFC64([7, 9]))
    out = discrete_noise(rng, n, scale, noise)
    return out, rng.bit_generator.random_raw(4)  # and where the generator is left


def _best(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def _stream(repeats):
    from bench_wide import make_rows
    from sklearn.linear_model import SGDClassifier

    from skdpol import PrivateOnlineLogistic

    n = 100_000
    X, s = make_rows(n, 2**17, True, np.random.default_rng(0))
    y = (s > 0).astype(int)

    def feed(est):
        for i, lo in enumerate(range(0, n, 10_000)):
            est.partial_fit(X[lo:lo + 10_000], y[lo:lo + 10_000],
                            **({"classes": [0, 1]} if i == 0 else {}))
        return est

    def private(path):
        _exact._KERNEL, _exact_kernel._OWN_WORDS = path != "numpy", path == "own"
        return feed(PrivateOnlineLogistic(epsilon=1.0, data_norm=1.0, horizon=n,
                                          random_state=0))

    paths = ("numpy", "raw", "own")
    coef = [private(path).coef_ for path in paths]
    assert all(np.array_equal(coef[0], c) for c in coef)  # the same model
    best = dict.fromkeys(("sgd",) + paths, np.inf)
    for _ in range(repeats):
        best["sgd"] = min(best["sgd"], _best(lambda: feed(SGDClassifier(random_state=0)), 1))
        for path in paths:
            best[path] = min(best[path], _best(lambda: private(path), 1))
    _exact._KERNEL, _exact_kernel._OWN_WORDS = True, True
    ratio = {path: best["sgd"] / best[path] for path in paths}
    print(f"\nstream (2^17 CSR, epsilon 1): SGDClassifier {best['sgd'] * 1e3:.1f} ms; private "
          f"{best['numpy'] * 1e3:.1f} ms with numpy's pass (ratio {ratio['numpy']:.3f}x), "
          f"{best['raw'] * 1e3:.1f} ms compiled on random_raw's words "
          f"(ratio {ratio['raw']:.3f}x), "
          f"{best['own'] * 1e3:.1f} ms compiled generating SFC64's (ratio {ratio['own']:.3f}x)")


def main():
    warnings.simplefilter("ignore")  # the stream's privacy notices
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--stream", action="store_true")
    args = parser.parse_args()
    has_kernel = hasattr(_exact, "_KERNEL")
    paths = (False, True) if has_kernel else (True,)
    print(f"{'noise':9} {'scale':>12} {'n':>7} {'numpy ns':>9} {'kernel ns':>9} "
          f"{'speed-up':>8} {'words ns':>9} {'sfc64 raw':>9} {'sfc64 own':>9}")
    for noise, scale, n in CASES:
        draws = {kernel: _draw(noise, scale, n, kernel) for kernel in paths}  # (and compiles)
        if has_kernel:  # the same draws, the generator left at the same word
            assert all(np.array_equal(a, b) for a, b in zip(draws[False], draws[True]))
        # the generator's words alone: as many as the sampler read (Philox counts
        # blocks of 4 words)
        rng = np.random.Generator(np.random.Philox(key=[7, 9]))
        discrete_noise(rng, n, scale, noise)
        used = int(rng.bit_generator.state["state"]["counter"][0]) * 4
        sfc = [_draw(noise, scale, n, True, own) for own in (False, True)]
        assert all(np.array_equal(a, b) for a, b in zip(*sfc))
        best = {kernel: np.inf for kernel in paths + ("raw", "own")}
        words = np.inf
        for _ in range(args.repeats):  # blocks of 3 draws per path, interleaved
            for kernel in paths:
                best[kernel] = min(best[kernel],
                                   _best(lambda: _draw(noise, scale, n, kernel), 3))
            for own in ("raw", "own"):
                best[own] = min(best[own], _best(
                    lambda: _draw(noise, scale, n, True, own == "own"), 3))
            words = min(words, _best(lambda: np.random.Philox(key=[7, 9]).random_raw(used), 3))
        ns = {k: v / n * 1e9 for k, v in best.items()}
        ns.setdefault(False, ns[True])
        print(f"{noise:9} {scale:12.4g} {n:7d} {ns[False]:9.2f} {ns[True]:9.2f} "
              f"{ns[False] / ns[True]:8.2f} {words / n * 1e9:9.2f} {ns['raw']:9.2f} "
              f"{ns['own']:9.2f}")
    if has_kernel:
        _exact._KERNEL, _exact_kernel._OWN_WORDS = True, True
        if args.stream:
            _stream(args.repeats)


if __name__ == "__main__":
    main()

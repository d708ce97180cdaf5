"""A simulation of secure aggregation: pairwise additive masks mod 2^64.

Each pair of parties (i, j), i < j, shares a key; from it both expand the
same uniformly random vector r_ij in (Z / 2^64)^d. Party i adds r_ij, party j
subtracts it, so every single message is uniformly distributed (it says
nothing on its own) and the masks cancel in the sum of all messages
(Bonawitz et al. 2017, without their handling of dropped parties).

Integers are summed in two's complement mod 2^64 (numpy's uint64 wraps), so
the unmasked sum is exact as long as the true sum of the parties' integer
vectors lies in int64; :func:`check_headroom` verifies that from public
bounds before the protocol starts. A deployment that uses a smaller modulus
(32 bits, to save bandwidth) needs Kairouz, Liu & Steinke's flattening and
conditional rounding instead.

What is simulated. Here the pairwise keys are derived by the coordinator
process and handed to each party (only the keys of its own pairs). A
deployment must instead have every pair agree on its key without the
coordinator (e.g. Diffie-Hellman over authenticated channels), and must
recover or re-key when a party drops out; otherwise the coordinator could
remove the masks and read each party's message, which carries only a share
of the noise.
"""

import numpy as np


def pairwise_mask(keys, party, size):
    """Party ``party``'s total mask: + r_ij for each j > i, - r_ji for j < i.

    ``keys`` maps the other party's index to the pair's key (a SeedSequence
    entropy value).
    """
    total = np.zeros(size, dtype=np.uint64)
    for other, key in keys.items():
        r = np.random.default_rng(np.random.SeedSequence(key)).bit_generator.random_raw(size)
        r = np.asarray(r, dtype=np.uint64)
        if party < other:
            total += r
        else:
            total -= r
    return total


def secure_sum(messages):
    """The aggregate of the masked messages: their sum mod 2^64, as int64."""
    total = np.zeros_like(messages[0], dtype=np.uint64)
    for message in messages:
        total += message
    return total.view(np.int64)


def check_headroom(n_rows, dim, grid_bound):
    """Refuse a run whose integer sum could wrap (public bounds only).

    ``grid_bound`` bounds one row's gradient norm in grid units; the noise of
    the sum is far below it. 2^52 keeps every value a float64 integer too (rint
    exact), with 2^11 of headroom in int64 for the noise tail.
    """
    if n_rows * grid_bound >= 2.0**52:
        raise ValueError(
            f"secure aggregation of {n_rows} rows of dimension {dim} would overflow "
            "the 64-bit modular sum; use fewer rows per run.")

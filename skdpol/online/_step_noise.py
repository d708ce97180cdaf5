"""The step of the Huber ``ftrl-momentum`` stream against the released noise.

:func:`noise_step_scale` is the one d-, horizon- and noise-dependent term of
the stream's step (issue 32 item 2: wide dense rows), kept apart from the
round rule (:func:`skdpol.online._momentum.momentum_round`) and from the
classifier's losses, which it does not touch.
"""

import math

# the step's noise rule (noise_step_scale): the divisor grows like
# sqrt(1 + (r / NOISE_RATIO_FREE)^2) in r = d nu^2 / n; the step is never cut
# by more than to b / (NOISE_CAP nu R~^2); horizons of fewer than NOISE_MIN_ROUNDS rounds
# (2 / (1 - beta): the heavy ball's transient) take max(1, r T / SHORT_ROUND_RATIO)
# instead (T the planned rounds): left alone unless the noise swamps them
NOISE_RATIO_FREE, NOISE_CAP, NOISE_MIN_ROUNDS = 0.2, 15.0, 40
SHORT_ROUND_RATIO = 20.0


def noise_step_scale(n_features, noise_ratio, horizon_rows, n_rounds, *,
                     base_divisor=50.0):
    """How many times smaller than ``b / (50 R~^2)`` the step of a Huber stream is
    (>= 1), from public quantities only: the width d (``n_features``), the
    noise nu of the last planned release in units of the leaf sensitivity 2 L
    (``noise_ratio``: the mechanism's per-coordinate std at the horizon over
    2 L), the planned rows n (``horizon_rows``; None: open-ended, no rule)
    and the planned rounds (``n_rounds``); ``base_divisor``: the step's
    divisor D = 50 it scales (:data:`skdpol.online._momentum.STEP_DIVISOR`).

    Why (the Huber stream in unit space, rows of norm <= R~, residual bound
    tau, sigma_N = 2 L nu = 2 tau R~ nu the prefix sums' noise per
    coordinate; measurements in docs/benchmarks/wide.md):

    * The iterate carries the released noise of its last steps: its
      prediction error from noise is about eta sigma_N R~, eta = lr / (b (1 -
      beta)) the step per row after momentum, i.e. 2 nu / (D (1 - beta))
      = 40 nu / D residual bounds at step divisor D. At D = 50 and nu = 13
      (epsilon 1, 1,000 rounds) that is ~10 tau: most residuals are clipped,
      so the stream only sees a fraction p ~ D / (40 nu) of the curvature.
    * The averaged iterate's noise is the prefix sums' noise over the
      curvature it saw: per coordinate ~ sigma_N / (p lambda n) with
      lambda ~ R~^2 / d the mean curvature of unit rows, so its error in
      prediction units is ~ tau (d nu / n) / p, which grows like the public
      ratio r = d nu^2 / n times 1 / D.  Measured at D = 50 (R^2 lost to
      the noise): r = 0.17 King County at epsilon 1 (0.000), 0.18 d = 100
      (0.008), 0.45-0.62 (0.03-0.08), 1.8 d = 1,000 at epsilon 1 (0.44),
      7.3 (3.8); wine at epsilon 1 (r = 0.38) loses 0.07 (one pass at
      epsilon = inf 0.259, at epsilon 1 0.190). Holding r / D at its
      harmless value NOISE_RATIO_FREE / 50 (0.2: above King County's and
      d = 100's 0.17-0.18, below wine's 0.38) gives D = 50 r /
      NOISE_RATIO_FREE. Measured with 0.2 against 0.4 (one pass, 20 seeds
      of benchmarks/bench_stream.py's splits, medians): King County at
      epsilon 0.5 0.721 -> 0.737, wine at epsilon 1 0.172 -> 0.179 (means
      0.157 -> 0.177), wine at epsilon 0.5 0.104 -> 0.101, King County at
      epsilon 1 unchanged (0.753); on another wine split (25 % test,
      chunks of 500, 12 seeds) 0.124 -> 0.114. A gain on average, within
      the seeds' spread on wine.
    * Past D ~ NOISE_CAP nu the iterate's noise is within a few tau
      (40 / NOISE_CAP ~ 2.7), p is ~1 and a smaller step only slows the
      learning (its rate is then ~ 1 / D): the cut stops there, unless
      the ratio is so large that even there the noise swamps what the rows
      can teach (r / NOISE_RATIO_FREE past (NOISE_CAP nu / 50)^2 ~ 16, i.e.
      r > ~3: d = 10,000 dense over 20,000 rows, 2^17 hashed columns over
      100,000, where one pass of SGD itself reaches R^2 0.00-0.04): then the
      step keeps shrinking like sqrt(r / NOISE_RATIO_FREE), towards the zero
      model rather than below it. Measured at epsilon 1 (seed 0): 2^17 CSR
      R^2 -0.071 -> 0.074, d = 10,000 -0.291 -> -0.002; d = 1,000 (r = 1.8)
      is not affected.
    * All of this is the steady state. Heavy ball with beta = 0.95 settles
      (underdamped) like beta^(t / 2), over ~2 / (1 - beta) = 40 rounds;
      a stream of fewer rounds is mostly limited by that transient, and a
      smaller step only slows it (measured on 600-1,000 rows of d = 4,
      12-20 rounds, epsilon 0.5: R^2 0.55 -> 0.20 and 0.86 -> 0.50 with
      the cut; 40 rounds: 0.90 -> 0.96). So under NOISE_MIN_ROUNDS rounds
      the steady-state rule is off, but not the noise: a short stream
      learns in T < 40 steps, each on one round's b rows, so the noise
      that counts is that of a round's rows, r T = d nu^2 / b, not that of
      all n rows. Past r T = SHORT_ROUND_RATIO = 20 (r past 20 / T: 1 at
      20 rounds, 3.3 at 6, 0.51 at 39, where the steady state's 0.2 takes
      over) the released noise swamps what the transient can learn, and
      the uncut step published models far below the zero model (R^2 -2.8
      at d = 20 over 1,000 rows in 20 rounds of 50 at epsilon 0.5, r =
      6.5; -7.9 at d = 50, r = 16; -4.7 at d = 20 over 1,950 rows). There
      the divisor grows like r T / SHORT_ROUND_RATIO, uncapped (the step
      heads towards the zero model, from which the stream starts, rather
      than below it). Measured (docs/benchmarks/short_streams.md: 8 seeds
      of two kinds of generated rows, d = 2-50, 300-1,950 rows, epsilon
      0.5 / 1 / 4; ``benchmarks/bench_short_streams.py``): at d = 20 and
      50 the worst median R^2 goes from -15.4 to -0.06, and the stream is
      at or above the zero model on most seeds in 58 of 60 cells (31
      before); d = 2-8 are untouched where r T <= 20 (every stream at
      epsilon 1 and 4) and move by -0.18 to +0.65 at epsilon 0.5 (d = 8
      over 300-1,000 rows lose 0.03-0.18 in 4 of 10 cells, d = 4 at most
      0.02: the cut slows a transient that was still learning; near 40
      rounds they gain). The one short real table of the benchmarks,
      diabetes in ``bench_utility.py`` (353 rows, 8 rounds), loses at
      epsilon 0.5 (r T = 41: R^2 0.076 -> -0.011, its zero model -0.19)
      and is unchanged at 1 and 2. SHORT_ROUND_RATIO 30 / 40 instead of 20
      leave 11 / 16 cells of d = 20-50 below the zero model on most seeds
      (all with a loose label bound), cost d = 2-8 at most 0.09 / 0.03 and
      diabetes 0.05 / 0.00; thresholds on r alone: r / 1 left 5 cells and
      cost d = 2-8 up to 0.35, r / 2 and r / 3 left 14 and 16, r^2 none
      but cost up to 0.60.
    * The two limits join in quadrature: scale = sqrt(1 + (r /
      NOISE_RATIO_FREE)^2), not max(1, r / NOISE_RATIO_FREE) (issue 31's
      bar: one pass at epsilon 1 against ``fit`` at epsilon 0.5). The
      divisor has a noise-free floor (50: how fast the stream learns, set
      at epsilon = inf) and a noise term (50 r / NOISE_RATIO_FREE: the
      averaged iterate's noise held at its harmless level). The maximum of
      the two takes the noise-free step right up to r = NOISE_RATIO_FREE,
      where by construction the noise has already reached that level: near
      the switch both errors are of one size, and the step that balances
      their sum is smaller than either limit's. Their root sum of squares
      keeps each limit where the other is negligible (r << 0.2: 50,
      r >> 0.2: 50 r / 0.2) and takes up to sqrt(2) x smaller steps near
      r = 0.2. No new constant. Measured (docs/benchmarks/momentum_noise_rule.md:
      seeds 100-119, other splits than the acceptance bench's, and a
      validation split carved from the training rows of seeds 0-19; paired
      changes of test R^2, medians, one pass): King County at epsilon 1
      (r = 0.17: the old scale 1, now 1.34) +0.006 / +0.005 (every seed /
      16 of 20 up); wine at epsilon 1 (r = 0.38) +0.001 / -0.000; both at
      epsilon 0.5 and 2 within 0.003 either way; the 200,000-row generated
      stream of benchmarks/bench_momentum_rounds.py (r ~ 0.1, 3 seeds)
      level. The linear sum 1 + r / 0.2 cost wine 0.005-0.009 at epsilon
      1 and 2.

    At r = 0 (any epsilon = inf stream), for an open horizon, or under
    NOISE_MIN_ROUNDS rounds with r T <= SHORT_ROUND_RATIO, the scale is 1 and
    the stream is unchanged (an open stream reads this function at its
    rounds so far instead, from 40 on: :func:`open_rule_rounds`);
    where the cap binds (d = 1,000 at epsilon 1, r = 1.8) it is unchanged too.

    Privacy: the scale is a function of d, n, the rounds, epsilon, delta and
    the mechanism (all public), computed before any row is read; the step
    lr = b / (D R~^2 scale) only post-processes the released prefix sums
    (:mod:`skdpol.online._momentum` notes), so the leaf sensitivity 2 L and
    the cost are unchanged.

    Examples
    --------
    >>> round(noise_step_scale(20, 12.4, 17_290, 173), 2)  # King County at epsilon 1
    1.34
    >>> round(noise_step_scale(1001, 13.5, 100_000, 1000), 2)  # d = 1,000
    4.05
    >>> round(noise_step_scale(21, 17.65, 1_000, 20), 2)  # d = 20, 20 rounds, epsilon 0.5
    6.54
    >>> noise_step_scale(5, 9.2, 1_000, 20)  # d = 4, 20 rounds, epsilon 1: r T = 8.5
    1.0
    """
    if horizon_rows is None or not noise_ratio > 0:
        return 1.0
    ratio = n_features * noise_ratio**2 / horizon_rows
    if n_rounds < NOISE_MIN_ROUNDS:  # the transient (the docstring's "steady state")
        return max(1.0, ratio * n_rounds / SHORT_ROUND_RATIO)
    # the noise-free divisor (1) and the noise's (r / NOISE_RATIO_FREE) in
    # quadrature (the docstring's last point): each where the other is small
    cut = math.hypot(1.0, ratio / NOISE_RATIO_FREE)
    # the cap NOISE_CAP nu / D, but never below sqrt(r / NOISE_RATIO_FREE): far
    # past it (the noise swamps what the rows can teach) the step keeps shrinking
    cap = max(NOISE_CAP * noise_ratio / base_divisor, math.sqrt(ratio / NOISE_RATIO_FREE))
    return max(1.0, min(cut, cap))


# an open stream re-reads the rule at every round below OPEN_REFRESH_ROUNDS,
# then OPEN_REFRESH_ROUNDS / 4 times per doubling of its rounds (refresh_open_step)
OPEN_REFRESH_ROUNDS = 64


def open_rule_rounds(n_rounds):
    """The horizon, in rounds, at which an open stream (``horizon=None``) reads
    :func:`noise_step_scale` after ``n_rounds`` rounds: max(n_rounds,
    NOISE_MIN_ROUNDS).

    Why. With a known horizon T the Huber stream's step is cut by the rule
    at the planned ratio r = d nu_T^2 / (T b) (nu_T the noise of the last
    release in units of 2 L). An open stream has no T, but at round t it
    knows the same public quantities for the stream so far: its rounds t,
    its rows t b and the open mechanism's noise at t
    (:meth:`~skdpol.mechanisms.OpenBLTPrefixSum.noise_std_at`, a function of
    the epochs' design and t only). Round t takes the step the rule gives a
    stream planned to end there, r_t = d nu_t^2 / (t b): a time-varying step
    that starts small (few rows, r_t large) and grows as the rows pile up
    (r_t ~ 1 / t). Before NOISE_MIN_ROUNDS rounds it takes the rule of a
    NOISE_MIN_ROUNDS-round stream (nu and rows at round 40): a planned
    stream that short is left alone (the heavy ball's transient), but an
    open stream cannot know it will stop there, and switching from the full
    step to the cut at round 40 was worse than either on King County
    (docs/benchmarks/open_horizon.md); the floor keeps the step from
    starting near zero (at round 1, r_1 is 40x r_40) on short streams.

    >>> open_rule_rounds(1), open_rule_rounds(39), open_rule_rounds(173)
    (40, 40, 173)
    """
    return max(int(n_rounds), NOISE_MIN_ROUNDS)


def refresh_open_step(t):
    """Whether round ``t`` (1, 2, ...) of an open stream re-reads its step:
    every round below OPEN_REFRESH_ROUNDS = 64, then every 2^(k - 4) rounds
    between 2^k and 2^(k + 1) (16 refreshes per doubling: t grows by at
    most 1 / 16 between two, so r_t ~ 1 / t and the scale move by no more
    than ~6 %). Reading the noise of a new round costs ~0.1 ms (the BLT's
    closed form), about half a round of 100 rows at d = 90: read at every
    round it took ~10-20 % of the 200,000-row generated stream (2,000
    rounds); the schedule reads it 143 times there (the first 40 are one
    value, cached: the rule of 40 rounds). A function of t only (public).

    >>> [t for t in range(60, 100) if refresh_open_step(t)]
    [60, 61, 62, 63, 64, 68, 72, 76, 80, 84, 88, 92, 96]
    >>> sum(refresh_open_step(t) for t in range(1, 2_001))
    143
    """
    return t < OPEN_REFRESH_ROUNDS or t % (1 << (t.bit_length() - 5)) == 0


# the exponent p of capped_momentum's rule, 1 - beta = (1 - momentum) x
# (stable_rows s / b)^p: p = 1 holds the step after momentum at the noise
# rule's; 2 measured at or above 1 on every stream tried (seed 0: 2^13,
# horizon 300,000, epsilon 4 / 8 / 16: R^2 0.931 / 0.979 / 0.992 against
# 0.928 / 0.975 / 0.984; 1,000,000 rows at epsilon 1 0.936 against 0.935;
# 2^17, epsilon 8, horizon 100,000 / 300,000: 0.152 / 0.378 against 0.142 /
# 0.325; epsilon 4 at 300,000 0.264 against 0.257; epsilon 1 at 1,000,000
# 0.299 against 0.296), closer to 0.995's at epsilon 8 on 2^17 (0.181 /
# 0.399) and still far from it where that failed (0.171, 0.287, -0.563)
CAPPED_MOMENTUM_POWER = 2.0


def capped_momentum(momentum, stable_momentum, stable_rows, step_rows, scale, noisy):
    """Heavy ball's momentum where the stability cap ``stable_rows`` binds
    (``step_rows`` / ``scale`` > ``stable_rows``; a wide regressor's stream,
    :data:`~skdpol.online._registry.WIDE_REGRESSOR_MOMENTUM`): the cap holds lr
    at that of ``stable_rows`` rows, and the momentum grows instead, up to
    ``stable_momentum``. With noise (``noisy``) it grows only as the cap
    binds harder: 1 - beta = (1 - momentum) (stable_rows scale /
    step_rows)^p (p = ``CAPPED_MOMENTUM_POWER`` = 2), ``momentum`` at the
    cap's edge (continuous with the rule below it) and ``stable_momentum``
    only far past it (b / s >= 190 sqrt(10) ~ 600 rows for 0.95 / 0.995 /
    190). At p = 1 the step a row gets after momentum, lr / (b (1 - beta)),
    would stay the noise rule's, (step_rows / scale) / (b (1 - momentum)),
    whose balance was derived for ``momentum`` (the iterate carries eta
    sigma_N R~ of noise, eta that step: :func:`noise_step_scale`); p = 2
    lets it grow like the cap's excess b / (190 s), and measured at or above
    p = 1 on every stream tried (the constant's notes). Without noise there
    is nothing to amplify: ``stable_momentum``.

    Why. With ``stable_momentum`` = 0.995 as soon as the cap bound, a
    known-horizon wide regressor stream whose narrow rounds grew past the
    cap (300-1,000 rows from 300,000 rows on) carried 10x the noise of the
    rule's 0.95 (its 1 / (1 - beta) = 200 rounds against 20) and fell as its
    horizon grew: at 2^13 columns, epsilon 4, horizon 300,000 (rounds of
    300, scale 1.43) R^2 0.171 against 0.626 at 100,000; epsilon 1,
    1,000,000 rows (rounds of 1,000, scale 4.05) 0.287
    (docs/benchmarks/open_wide.md, "The regressor"); here 0.931 and 0.936.
    The cost: streams far from converged, which 0.995's bigger step helped
    (2^17 at epsilon 8: horizon 100,000 0.152 / 0.166 / 0.211 against
    0.181 / 0.192 / 0.239, seeds 0-2; 300,000 0.378 / 0.380 / 0.412 against
    0.399 / 0.396 / 0.420; the open stream at 300,000 rows 0.272 / 0.282 /
    0.326 against 0.340 / 0.345 / 0.382). A function of public numbers (b,
    the rule's scale, the constants, whether the mechanism adds noise):
    post-processing.

    >>> round(capped_momentum(0.95, 0.995, 190, 300, 1.43, True), 3)
    0.959
    >>> capped_momentum(0.95, 0.995, 190, 4096, 1.0, True), capped_momentum(
    ...     0.95, 0.995, 190, 300, 1.0, False)
    (0.995, 0.995)
    """
    if not noisy:
        return float(stable_momentum)
    held = 1.0 - (1.0 - momentum) * (stable_rows * scale / step_rows) ** CAPPED_MOMENTUM_POWER
    return float(min(stable_momentum, max(momentum, held)))

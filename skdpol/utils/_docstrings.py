"""Parameter text shared by the estimators, written once and substituted."""

_SHARED = {
    "epsilon": """epsilon : float, default=1.0
        Privacy budget for the whole stream (every model published by every
        call). ``numpy.inf`` disables the noise: a non-private reference.""",
    "delta": """delta : float, default=1e-5
        Probability with which the epsilon bound may fail; must be in [0, 1)
        and should be well below 1 / n_samples. ``delta=0`` switches to
        pure-DP (L2-Laplace) noise.""",
    "data_norm": """data_norm : float or None, default=None
        Every row is clipped to this L2 norm before it is used, so the
        sensitivity holds for any input. None reads it off the first batch
        and emits :class:`~skdpol.PrivacyLeakWarning`: the bound then depends
        on the data and the guarantee no longer covers it.""",
    "data_norm_kernel": """data_norm : float or None, default=None
        The scale of the rows: the kernel is computed on x / data_norm, so
        ``gamma`` is unit-free (a public bound on the row norms is the
        natural choice). None reads the largest row norm off the first batch
        and emits :class:`~skdpol.PrivacyLeakWarning`.""",
    "y_bound": """y_bound : float or None, default=None
        Labels are clipped to ``[-y_bound, y_bound]``. None reads it off the
        first batch, with :class:`~skdpol.PrivacyLeakWarning`.""",
    "horizon": """horizon : int or None, default=None
        Planned number of rows of the stream. The noise is calibrated so
        that the stream up to ``horizon`` rows costs (epsilon, delta); a call
        that would pass it raises :class:`~skdpol.BudgetExhaustedError` and
        changes nothing. None plans for an unbounded stream (level-dependent
        noise keeps the total cost within the budget for any length, at the
        price of more noise).""",
    "batch_size": """batch_size : int or "auto", default="auto"
        Rows per round of ``partial_fit``. ``"auto"``: the first call's row
        count (a public number), so a stream read in chunks of equal size
        publishes one round per chunk -- the most accurate choice for
        chunked streams (``batch_size_`` holds the value used). In the
        linear estimators, the gradient algorithms cut it into even rounds of
        at most 512 rows, and ``"ftrl-momentum"`` (the regressor's default
        stream) takes rounds of 100 rows (50 when ``horizon`` is below
        10,000; past 100,000 rows, ceil(horizon / 1,000) rows, at most
        1,000, each round with the step of a round of 100), whatever the
        chunks; the classifier's ``"ftrl-momentum"`` on more than 1,000
        features, ceil(n_features / 64) rows if more, at most ``horizon`` /
        50 (each round costs O(n_features) work and noise; the user guide's
        "Wide rows").
        1 is the seeds' per-row round. Rows of an incomplete round wait, exactly and
        unpublished, until the round completes (``n_samples_waiting_``
        counts them; a release that has learned from no row warns); the
        call that reaches ``horizon``, or :meth:`flush`, learns them as a
        final round. ``fit`` always uses every row.""",
    "stream_counts": """n_samples_learned_ : int
        Rows the published model has learned (in rounds learned by its
        release; every row after ``fit``, ``flush()`` or the call that
        reaches ``horizon``).
    n_samples_waiting_ : int
        Rows seen and not yet in the published model: rows of an incomplete
        round (exactly held, unpublished, curator state) and, with
        ``release_every`` > 1, rows learned since the last release.
        ``n_samples_learned_ + n_samples_waiting_ == n_samples_seen_``; all
        three counts are public under replace-one neighbours.
    batch_size_ : int
        Rows per round of the live stream (``release_every`` times the
        round ``batch_size`` gives); not set by ``fit``.""",
    "release_every": """release_every : int, default=1
        Publish a model on every ``release_every``-th ``partial_fit`` call
        (and at ``horizon`` or :meth:`flush`) instead of on every call. The
        stream still learns on every call (the rows go into their rounds);
        between releases ``coef_``, ``intercept_``, ``predict`` and
        ``privacy_spent_`` stay those of the last release, and no new cost is
        stated. Fewer releases mean less noise: each round is
        ``release_every`` times larger (``batch_size_``), so the prefix sums
        run over ``release_every`` times fewer rounds for the same rows, at
        the same sensitivity. Fixed when a stream starts.""",
    "noise_calibration": """noise_calibration : {"tight", "paper"}, default="tight"
        ``"tight"`` calibrates the noise exactly with dp-accounting;
        ``"paper"`` uses the seed's own formula, for side-by-side
        reproduction (``privacy_spent_`` still reports its true cost).""",
    "noise_sampler": """noise_sampler : {"discrete", "float"}, default="discrete"
        How the noise is drawn. ``"discrete"`` (the default): every noisy
        value is rounded to a fine grid and gets exact discrete Gaussian
        (zCDP-accounted) or discrete Laplace noise drawn without floating
        point, so releases are grid points whose low-order bits carry
        nothing (docs/security.md). It costs 6-11% more noise at the same
        budget (0.1% for the grid, the rest because the discrete Gaussian is
        accounted through Renyi DP). ``"float"``: numpy's floating-point
        Gaussian and L2-Laplace samplers, an explicit opt-in: their
        low-order bits can leak the value they perturb (Mironov 2012; on
        the default classifier 1-7% of first releases ruled the neighbour
        out with certainty, an effective delta about 1000x the claim).""",
    "mechanism": """mechanism : {"auto", "tree", "blt"}, default="auto"
        How a stream's prefix sums are released: a buffered linear Toeplitz
        (BLT) matrix factorisation (:class:`~skdpol.mechanisms.BLTPrefixSum`;
        with ``horizon=None``, BLT epochs of 2^20, 2^21, ... rounds,
        :class:`~skdpol.mechanisms.OpenBLTPrefixSum`), or the binary tree of
        the seeds. The BLT needs ``delta > 0`` and adds 2.2-2.7x less noise
        to each prefix sum over 10^4 to 10^6 rounds at the same budget
        (docs/benchmarks/prefix_sums.md). ``"auto"``: the BLT when
        ``delta > 0`` and ``noise_calibration="tight"``, else the tree; for
        the classifier's ``"ftrl-momentum"`` on more than 1,000 features the
        tree also at ``epsilon=inf`` (no noise: the tree's O(d) update is the
        cheaper) and wherever its noise is within 1.25x of the BLT's for the
        planned rounds. Fixed when a stream starts.""",
    "fit_intercept": """fit_intercept : bool, default=True
        Learn an intercept through a constant column equal to ``data_norm``
        (the clipped row then has norm at most ``sqrt(2) * data_norm``).""",
    "ledger": """ledger : PrivacyLedger, str, path-like or None, default=None
        Record the cost of every release in this :class:`~skdpol.PrivacyLedger`
        (or the ledger file at this path), and refuse a call that would pass
        its budget with :class:`~skdpol.BudgetExhaustedError` before any row
        is read. A stream is one entry, its latest cumulative cost.""",
    "random_state": """random_state : int, RandomState instance or None, default=None
        Seeds the noise. Use None (fresh OS entropy) for real releases: anyone
        who knows the seed can regenerate the noise and subtract it. An int
        makes runs reproducible (tests, reproduction of the seeds).""",
}


def inject_docstring(**extra):
    """Fill ``{name}`` fields of a docstring from the shared parameter text."""

    def decorate(obj):
        obj.__doc__ = obj.__doc__.format(**_SHARED, **extra)
        return obj

    return decorate

"""PrivateSubmodularSelector: private online submodular minimisation (seed 001)."""

import math
import os
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import _num_features, _num_samples, check_is_fitted, validate_data

from ..accounting import PrivacySpent, epsilon_spent
from ..mechanisms import NoiseSpec
from ..mechanisms import prefix_sum_event, resolve_mechanism
from ..submodular import ConcaveMassCost, SubmodularPFTAL
from ..ledger import PrivacyLedger
from ..ledger import HEAD, check_budget, record_release
from ..utils import StreamMixin, run_transaction
from ..utils import is_seeded
from ._public import PublicSubmodularSelector

_BUILT_IN = {"concave": ConcaveMassCost}


class PrivateSubmodularSelector(StreamMixin, SelectorMixin, BaseEstimator):
    """Differentially private online submodular minimisation over the columns.

    Each row (or round of ``batch_size`` rows) is one round of seed 001's
    game: the selector publishes a set S_t of columns, then learns the
    round's submodular cost f_t (full information) or only f_t(S_t)
    (bandit). It runs private Follow-the-Approximate-Leader over the cube
    [0, 1]^n on the Lovasz extensions (:class:`skdpol.submodular.SubmodularPFTAL`),
    with the subgradient sums in a tree of private prefix sums, and publishes
    S_t by threshold rounding of the private point x_t.

    Parameters
    ----------
    n_items : int or None, default=None
        Size of the ground set; None takes the number of columns. Needed
        before any data for :meth:`ask` / :meth:`tell` use.
    cost : "concave", a built-in cost object or callable, default="concave"
        The round's cost ``cost(masks, row) -> values`` (masks boolean
        (k, n), one value per mask). ``"concave"`` is
        :class:`skdpol.submodular.ConcaveMassCost`: f(S; r) =
        0.5 sqrt(|S|) - sum_{i in S} clip(r_i, -1, 1) -- pick the columns
        whose row values are high, at a price with diminishing returns; it
        works on any numeric row. Any callable must be submodular in S.
    cost_bound : float or None, default=None
        Costs are clipped to [-cost_bound, cost_bound]. None uses the
        built-in cost's own bound; a callable needs it.
    feedback : {"full", "bandit"}, default="full"
    epsilon : float, default=1.0
    delta : float, default=1e-5
        ``delta=0`` switches the tree to pure-DP L2-Laplace nodes.
    alpha : float, default=0.05
        Strong convexity of the surrogate (alpha / 2) ||x||^2; the step is
        1 / (alpha t).
    mu : float, default=0.1
        Bandit exploration in (0, 1]: with a built-in cost, the probability
        that a visitor is shown one uniformly drawn item; with a callable,
        the weight of uniform exploration over the chain sets (seed 001).
    batch_size : int, default=1
        Rows (visitors) per round. Under bandit feedback each visitor of a
        round plays their own set, drawn from the round's published point.
    horizon : int or None, default=None
        Planned number of rounds (rows when ``batch_size=1``).
    noise_sampler : {"discrete", "float"}, default="discrete"
        See :class:`skdpol.PrivateOnlineRegressor`.
    mechanism : {"auto", "tree", "blt"}, default="auto"
        How the stream's gradient sums are released: a BLT matrix
        factorisation (``"auto"`` when ``delta > 0``; BLT epochs when
        ``horizon=None``) or the seeds' binary tree (``"auto"`` with
        ``delta=0``). See :class:`skdpol.PrivateOnlineRegressor`.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise and the rounding coins; None (OS entropy) for real
        releases.
    ledger : PrivacyLedger, str, path-like or None, default=None
        Record the cost of every release in this :class:`~skdpol.PrivacyLedger`
        (or the ledger file at this path), and refuse a call that would pass
        its budget with :class:`~skdpol.BudgetExhaustedError` before any row
        is read. A stream is one entry, its latest cumulative cost.

    Attributes
    ----------
    support_ : ndarray of bool of shape (n_items,)
        The published set for the coming round.
    x_ : ndarray of shape (n_items,)
        The published fractional point it was rounded from.
    n_features_in_ : int
    n_samples_seen_ : int
        Rounds learned.
    privacy_spent_ : skdpol.accounting.PrivacySpent

    Notes
    -----
    Replace-one neighbours: one round's cost (one row) replaced. Every cost
    value is clipped to ``cost_bound``; a full-information leaf (the
    round's Lovasz subgradient) then has L2 norm <= 2 sqrt(2) cost_bound for
    any submodular cost (and is clipped to it), or, for the built-in costs,
    the row's part of it moves by at most 2 sqrt(n) (the public part is
    identical for neighbours); a bandit visitor's estimate has norm <= n
    row_bound / mu for a built-in cost (singleton exploration; the public
    part is exact), <= 2 cost_bound (n + 1) / mu for a callable (seed 001's
    chain estimator), and a round's leaf is the mean over its b visitors
    (sensitivity twice the norm over b). The tree's event is the cost of
    every published point and set.
    The tree's exact sums and the generator are curator state in
    underscore attributes: the pickle of a live selector is as sensitive as
    the data; ``public_model()`` is the shareable release.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol import PrivateSubmodularSelector
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(0.0, 1.0, size=(4000, 6)) + [1, 1, -1, -1, 0.5, -1]
    >>> sel = PrivateSubmodularSelector(epsilon=1.0, horizon=4000, random_state=0)
    >>> sel = sel.fit(X)
    >>> sel.get_support().tolist()
    [True, True, False, False, True, False]
    >>> sel.privacy_spent_.epsilon <= 1.0
    True
    """

    _parameter_constraints = {
        "n_items": [Interval(Integral, 1, None, closed="left"), None],
        "cost": [StrOptions(set(_BUILT_IN)), callable],
        "cost_bound": [Interval(Real, 0, None, closed="neither"), None],
        "feedback": [StrOptions({"full", "bandit"})],
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "mu": [Interval(Real, 0, 1, closed="right")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "horizon": [Interval(Integral, 1, None, closed="left"), None],
        "noise_sampler": [StrOptions({"float", "discrete"})],
        "mechanism": [StrOptions({"auto", "tree", "blt"})],
        "random_state": ["random_state"],
        "ledger": [PrivacyLedger, str, os.PathLike, None],
    }

    def __init__(self, *, n_items=None, cost="concave", cost_bound=None, feedback="full",
                 epsilon=1.0, delta=1e-5, alpha=0.05, mu=0.1, batch_size=1, horizon=None,
                 noise_sampler="discrete", mechanism="auto", random_state=None, ledger=None):
        self.n_items = n_items
        self.cost = cost
        self.cost_bound = cost_bound
        self.feedback = feedback
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.mu = mu
        self.batch_size = batch_size
        self.horizon = horizon
        self.noise_sampler = noise_sampler
        self.mechanism = mechanism
        self.random_state = random_state
        self.ledger = ledger

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.target_tags.required = False
        return tags

    # ----------------------------------------------------------- set-up
    def _cost_object(self):
        return _BUILT_IN[self.cost]() if isinstance(self.cost, str) else self.cost

    def _start(self, n_items, live=False, one_release=False):
        self._algo = self._new_algo(n_items, live, one_release)
        self.n_features_in_ = n_items
        self.n_samples_seen_ = 0
        self._asked = False
        self._publish()

    def _new_algo(self, n_items, live=False, one_release=False, rng=None):
        """A new stream's :class:`SubmodularPFTAL` over ``n_items`` items, from
        public quantities. ``rng=None`` starts the estimator's stream (its
        generator derived); a declared cost passes a throw-away generator and
        changes nothing."""
        cost = self._cost_object()
        if self.cost_bound is None and not hasattr(cost, "bound"):
            raise ValueError("cost_bound is required for a cost without a bound(n) method.")
        noise = "laplace" if self.delta == 0 and not math.isinf(self.epsilon) else "gaussian"
        mechanism = resolve_mechanism(self.mechanism, noise)
        base = NoiseSpec(noise, self.noise_sampler)
        spec = NoiseSpec.calibrated(
            self.epsilon, self.delta, family=noise, sampler=self.noise_sampler,
            make_event=lambda m: prefix_sum_event(mechanism, horizon=self.horizon,
                                                  noise=base.with_multiplier(m)))
        if rng is None:
            rng = self._begin_stream(one_release=one_release)
        return SubmodularPFTAL(
            n_items=n_items, cost=cost, cost_bound=self.cost_bound, alpha=self.alpha,
            noise=spec, feedback=self.feedback, mu=self.mu,
            batch_size=self.batch_size, horizon=self.horizon, rng=rng,
            mechanism=mechanism,
            # live full-information rounds bring opaque callables: the range bound
            leaf_bound="range" if live and self.feedback == "full" else "auto")

    def _publish(self):
        self.x_ = self._algo.x.copy()
        self.support_ = self._algo.selected.copy()
        if math.isinf(self.epsilon):
            eps, how = math.inf, "none (epsilon=inf)"
        else:
            eps, how = epsilon_spent(self._algo.event(), self.delta)
        self.privacy_spent_ = PrivacySpent(epsilon=float(eps), delta=float(self.delta),
                                           accountant=how, releases=self._algo.n_rounds,
                                           seeded=is_seeded(self.random_state))

    def _declared_event(self, method, args):
        """(event, ledger head) a ``partial_fit``, ``fit`` or ``tell`` will
        record, from public counts (the rounds so far, the rows waiting, the
        call's rows; a tell is one visitor): the ledger checks its budget
        with it. A call that starts a stream (a first ``partial_fit``,
        ``fit``) states a new stream's cost (its algorithm built from public
        quantities with a throw-away generator, fed nothing) on a new ledger
        branch. Raises what the real call would (changed terms, a bad
        ``n_items``); None for a call the real one refuses (no rows, the
        horizon)."""
        name = getattr(method, "__name__", None)
        if name not in ("_learn", "_tell", "_fit"):
            return None
        algo = None if name == "_fit" else self.__dict__.get("_algo")
        n_rows = 1 if name == "_tell" else _num_samples(args[0])
        if n_rows < 1:
            return None
        head, waiting = None, 0
        if algo is None:
            if name == "_tell":
                return None
            n_items = _num_features(args[0])
            if self.n_items is not None and self.n_items != n_items:
                return None  # the real call refuses it
            algo = self._new_algo(n_items, rng=np.random.default_rng(0))
        else:
            self._continue_stream()
            head = self.__dict__.get(HEAD)
            waiting = self.n_samples_seen_ - algo.n_rounds * algo.batch_size
        if name != "_tell":
            algo.check_room(n_rows)
        rounds = algo.n_rounds + (waiting + n_rows) // algo.batch_size
        if algo.horizon is not None and rounds > algo.horizon:
            return None  # the real call refuses it (the horizon)
        return algo.event(rounds), head

    def _transaction(self, method, *args):
        # with a ledger budget, the call's cost is checked before any row is read
        check_budget(self, method, args)
        return run_transaction(self, method, *args)

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def public_model(self):
        """The shareable release: ``support_``, ``x_`` and ``privacy_spent_`` only.

        Returns
        -------
        model : PublicSubmodularSelector
        """
        check_is_fitted(self, "support_")
        return PublicSubmodularSelector._from_release(self)

    # ----------------------------------------------------------- learning
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Play one round per row (``batch_size`` rows a round) and publish.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_items)
            Row t is round t's data, read only through ``cost(masks, row)``.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._transaction(self._learn, X)
        return self

    def _learn(self, X, one_release=False):
        first_call = not hasattr(self, "_algo")
        if not first_call:
            self._continue_stream()  # a stream's terms are fixed when it starts
        X = validate_data(self, X, reset=first_call, dtype=np.float64)
        if first_call:
            if self.n_items is not None and self.n_items != X.shape[1]:
                raise ValueError(f"X has {X.shape[1]} columns but n_items={self.n_items}.")
            self._start(X.shape[1], one_release=one_release)
        self._algo.check_room(X.shape[0])
        self._algo.learn(X)
        self.n_samples_seen_ += X.shape[0]
        self._asked = False
        self._publish()
        record_release(self, self._algo.event())  # last: a refusal undoes the call

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn a fresh stream from all rows of ``X`` (the last set is published).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_items)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._transaction(self._fit, X)
        return self

    def _fit(self, X):
        # inside the transaction: a refused or failed fit keeps the previous release
        for name in ("_algo", "support_", "x_", "n_samples_seen_", "privacy_spent_"):
            self.__dict__.pop(name, None)
        self._learn(X, True)

    # ----------------------------------------------------------- live play
    def ask(self):
        """The set to play now: a boolean mask over the ``n_items`` items.

        Returns
        -------
        mask : ndarray of bool of shape (n_items,)
        """
        if not hasattr(self, "_algo"):
            if self.n_items is None:
                raise ValueError("ask() before any data needs n_items.")
            self._validate_params()
            self._start(self.n_items, live=True)
        self._asked = True
        return self._algo.ask()

    def tell(self, feedback):
        """Learn the round played by the last :meth:`ask`.

        Parameters
        ----------
        feedback : float or callable
            ``feedback="bandit"``: the observed cost of the played set (a
            number). ``feedback="full"``: the visitor's cost as a callable
            ``masks -> values`` (boolean (k, n) to (k,)). With
            ``batch_size=b`` a round is b visitors at one published point
            (full information: one set; bandit: each visitor's own set, the
            next :meth:`ask` answer drawn after every tell): the feedback
            waits until the round's b-th visitor reports, then the round's
            mean is learned and a new point published.

        Returns
        -------
        self : object
        """
        if not getattr(self, "_asked", False):
            raise ValueError("tell() needs a set from ask() first.")
        if self.feedback == "full" and not callable(feedback):
            raise ValueError(
                "feedback='full' needs the round's cost as a callable masks -> values, "
                f"got {type(feedback).__name__}.")
        if self.feedback == "bandit" and callable(feedback):
            raise ValueError("feedback='bandit' takes the played set's cost, a number.")
        if self.feedback == "full" and self._algo.leaf_bound != "range":
            raise ValueError(
                "this stream was started by partial_fit, calibrated to the built-in "
                "cost's row-only sensitivity; a cost callable needs a stream started by ask().")
        self._transaction(self._tell, feedback)
        return self

    def _tell(self, feedback):
        self._continue_stream()
        self._algo.tell(feedback)
        self.n_samples_seen_ += 1
        self._asked = False
        self._publish()
        record_release(self, self._algo.event())  # last: a refusal undoes the call

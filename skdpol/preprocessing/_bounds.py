"""Private ranges: each column's range from private quantiles, and schemas that use them.

:class:`PrivateRangeEstimator` releases, for every column, a low and a high
quantile by the exponential mechanism on a public grid over a very wide
public search interval, on a transformed scale
(:mod:`skdpol.mechanisms._quantile`: utility, sensitivity 1 under
replace-one neighbours, exact sampler). :func:`privatise_schema` runs it on
the columns (and label) whose schema range is ``"private"`` and returns a
public-range schema for :func:`skdpol.preprocessing.from_schema` together
with the dp-accounting event of the estimate, to be composed with the model's.

Budget split. ``epsilon`` is the estimator's whole cost. With
``accounting="pure"`` each of the 2 d quantiles (d columns) runs at
epsilon / (2 d), and the composed pure-DP event is epsilon-DP. With
``accounting="zcdp"`` each runs at sqrt(8 rho / (2 d)), rho the largest zCDP
budget that dp-accounting's RDP conversion turns into (epsilon, delta): the
composition is rho-zCDP (bounded range; the mechanism's notes), hence
(epsilon, delta)-DP, with per-quantile epsilons about twice the pure split's
at d = 10 and delta = 1e-5.

Quantiles the budget cannot resolve. The mechanism's rank error is about
2 (ln(K) + ln(1 / beta)) / epsilon_q rows (K candidate cells, failure
probability beta): below that rank, the empty part of the search interval
(all its candidates have count 0, or n) outweighs the data and the estimate
lands anywhere in it, e.g. at -1e9. With ``adaptive=True`` (default) each
quantile is moved inwards to at least that rank, ``q_lo' = max(q_lo, r_min /
n)`` and ``q_hi' = min(q_hi, 1 - r_min / n)`` with beta = 0.05 / (2 d) (all
2 d quantiles resolved with probability 0.95) and n the
number of rows (public under replace-one neighbours), never past the median:
a public rule of public quantities, so it costs nothing. The range then
clips more rows, instead of failing.

Widening back out (``widen="normal"``, default). A quantile moved inwards
clips about that share of the rows at each end: at 30% of epsilon 1 over
King County's 36 quantiles (15,000 rows) the rule moves 1% / 99% to about
12% / 88%, and a quarter of every column and of the regression label is
clipped (R^2 0.70 against 0.76 public; ``docs/benchmarks/private_bounds.md``).
The range is then read off the normal law through the two released cells,
on the transformed scale: with ``a`` the low cell's lower edge and ``b`` the
high cell's upper edge, estimates of the used quantiles u_lo, u_hi,
sigma = (b - a) / (z(u_hi) - z(u_lo)), mu = a - sigma z(u_lo), and the range
is [mu + sigma z(q_lo), mu + sigma z(q_hi)] for the asked q_lo, q_hi (z the
standard normal quantile), never narrower than [a, b], within the search
interval. Two cells about the median say little of the tails (and z(u_hi) -
z(u_lo) tends to 0 there), so the used spread is taken as at least that of
the 40% and 60% (sigma's denominator at least z(0.6) - z(0.4), and mu
centred on (a + b) / 2): the range is at most 9.2 times [a, b] for
1% / 99%. On King County all private the rule moves the quantiles to
28% / 72% at 10% of epsilon 1 and to 10% / 90% at 30%; widened, both stay
within 0.003 R^2 of the public ranges (below 10%, about 5%, the quantiles
meet at the median and no rule recovers a range: R^2 0.09 widened, 0.01
not). It is post-processing of the released cells with public quantities
(the quantiles, the search interval): it costs nothing, and the statement
(``event_``) is the same with or without it. The normal law is an
assumption on utility only: money and areas on a log scale are near it;
where a column is not (a point mass at 0, a bounded grade), the widened
range is wider than the rows' [1%, 99%] -- it compresses the column within
[-1, 1] -- or clips what the released cells clipped, never more.

Default search interval. [-1e9, 1e9] through ``signed_log1p`` ([0, 1e9]
through ``log1p``, [1e-9, 1e9] through ``log``): every quantity tables carry
in their usual units (money in any currency, areas, counts, years, ages)
lies well inside, and on the log scale the grid of 2^16 steps has a relative
resolution of 0.06% (a step of 0.00063 in signed_log1p), whatever the
column's magnitude. The interval's width costs resolution only: the rank
error depends on the number of candidates, not on the width (measured in
``docs/benchmarks/private_bounds.md``). Give a tighter ``search_range`` when
one is known (latitudes: [-90, 90] with ``transform="none"``).
"""

import copy
import dataclasses
import math
import warnings
from numbers import Integral, Real

import numpy as np
from dp_accounting import dp_event
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ..accounting import PrivacySpent, epsilon_spent, zcdp_rho_for_budget
from ..mechanisms import (
    exponential_mechanism,
    quantile_distances,
    quantile_event,
    target_rank,
)
from ..utils import run_transaction
from ..utils import is_seeded, stream_rng
from ..utils import user_stacklevel
from ._schema import _forward, _inverse, read_schema

DEFAULT_SEARCH = {"none": (-1e9, 1e9), "signed_log1p": (-1e9, 1e9), "log1p": (0.0, 1e9),
                  "log": (1e-9, 1e9)}
DEFAULT_BINS = 2**16
DEFAULT_SHARE = 0.1  # share of a model's total epsilon spent on private ranges
_BETA = 0.05  # failure probability of the adaptive rule, over all quantiles of a fit
_MIN_SPREAD = 2 * 0.2533471031357997  # z(0.6) - z(0.4): the widening's cap (module notes)


def _search_interval(search_range, transforms):
    """Per column (lo, hi) in original units, checked against each transform."""
    d = len(transforms)
    if search_range is None:
        pairs = [DEFAULT_SEARCH[t] for t in transforms]
    else:
        arr = np.asarray(search_range, dtype=object)
        if arr.shape == (2,):
            pairs = [tuple(search_range)] * d
        elif arr.shape == (d, 2):
            pairs = [tuple(p) for p in search_range]
        else:
            raise ValueError(f"search_range must be (lo, hi) or one (lo, hi) per column ({d}), "
                             f"got {search_range!r}.")
    out = []
    for (lo, hi), t in zip(pairs, transforms):
        if not (isinstance(lo, Real) and isinstance(hi, Real) and math.isfinite(lo)
                and math.isfinite(hi) and lo < hi):
            raise ValueError(f"search_range must have finite lo < hi, got {(lo, hi)!r}.")
        if (t == "log" and lo <= 0) or (t == "log1p" and lo <= -1):
            raise ValueError(f"search_range: transform {t!r} needs lo > "
                             f"{0 if t == 'log' else -1}, got {lo!r}.")
        out.append((float(lo), float(hi)))
    return out


def _widen_normal(edges, used, wanted, t_lo, t_hi):
    """The ``wanted`` quantiles of the normal law whose ``used`` quantiles are ``edges``
    (on the transformed scale), never narrower than ``edges``, within [t_lo, t_hi].

    The used quantiles' spread is taken as at least that of the 40% and 60%
    (``_MIN_SPREAD``): two cells about the median say little of the tails, and the
    cap keeps the widening finite (at most 9.2 times for 1% / 99%).
    """
    from statistics import NormalDist

    z = NormalDist().inv_cdf
    (a, b), (u_lo, u_hi), (w_lo, w_hi) = edges, used, wanted
    if not (0.0 < u_lo < u_hi < 1.0):
        return edges  # an open end was used: nothing to read the spread from
    sigma = (b - a) / max(z(u_hi) - z(u_lo), _MIN_SPREAD)
    mu = (a + b) / 2 - sigma * (z(u_lo) + z(u_hi)) / 2
    lo = mu + sigma * z(w_lo) if w_lo > 0 else t_lo
    hi = mu + sigma * z(w_hi) if w_hi < 1 else t_hi
    return np.array([max(min(lo, a), t_lo), min(max(hi, b), t_hi)])


class PrivateRangeEstimator(BaseEstimator):
    """Each column's range from two private quantiles (exponential mechanism).

    ``fit`` releases, for every column, the ``quantiles`` (low, high) of its
    non-missing values by the exponential mechanism over the ``bins`` cells
    of a public grid spanning ``search_range`` on the ``transform`` scale,
    sampled exactly (:func:`skdpol.mechanisms.exponential_mechanism`); the
    low cell's lower edge and the high cell's upper edge, mapped back to
    the column's units, are ``range_``. Missing values
    (NaN) are ignored: they count as neither below nor above.

    Parameters
    ----------
    epsilon : float, default=0.1
        Total privacy budget of ``fit`` (all columns, both quantiles).
    quantiles : (float, float), default=(0.01, 0.99)
        The low and high quantile, 0 <= low < high <= 1.
    search_range : (lo, hi), list of (lo, hi) or None, default=None
        Public search interval per column, in the column's units. None:
        [-1e9, 1e9] (``log1p``: [0, 1e9]; ``log``: [1e-9, 1e9]); why in the
        module notes. Values outside are counted at its ends.
    transform : str or list of str, default="signed_log1p"
        Scale of the search grid (``none``, ``log``, ``log1p``,
        ``signed_log1p``), one for all columns or one per column.
    bins : int, default=65536
        Grid cells per column (the candidates).
    adaptive : bool, default=True
        Move a quantile inwards to the rank the budget can resolve
        (module notes), with a ``UserWarning`` saying so (it depends on the
        parameters and the row count only); the quantiles used are
        ``quantiles_``.
    widen : {"normal", "none"}, default="normal"
        When the adaptive rule moved the quantiles, widen each range to the
        asked ``quantiles`` of the normal law through the released cells on
        the transformed scale (module notes; post-processing, free), or
        keep the released cells (``"none"``).
    accounting : {"pure", "zcdp", "auto"}, default="pure"
        How the cost is stated: pure epsilon-DP (each quantile at
        epsilon / (2 d)), or zCDP by bounded range (each quantile at the
        epsilon whose composition is (epsilon, delta)-DP; needs delta > 0),
        or ``"auto"``: whichever gives each quantile more (pure below about
        ln(1 / delta) / 2 quantiles, 6 at delta = 1e-5; pure when delta = 0).
    delta : float, default=0.0
        With ``accounting="zcdp"``: the delta of the budget.
    random_state : int, RandomState instance or None, default=None
        Seeds the mechanism. None (OS entropy) for real releases: anyone
        who knows the seed can replay the draws.

    Attributes
    ----------
    range_ : ndarray of shape (n_features, 2)
        The estimated (lo, hi) of each column, in its units; lo < hi.
    quantiles_ : ndarray of shape (n_features, 2)
        The quantiles estimated (after the adaptive rule; ``range_`` is
        widened from them to ``quantiles`` when ``widen="normal"``).
    epsilon_per_quantile_ : float
    accounting_ : str
        The statement used, ``"pure"`` or ``"zcdp"``.
    event_ : dp_accounting.DpEvent
        The cost of ``fit``, to be composed with the model's.
    privacy_spent_ : skdpol.accounting.PrivacySpent
    n_features_in_ : int
    feature_names_in_ : ndarray
        Only when X has string column names.

    Notes
    -----
    **Neighbours.** Data sets differing in one row, replaced (a value may
    be replaced by a missing one). Each quantile is the exponential
    mechanism with a utility of sensitivity 1 (derived in
    :mod:`skdpol.mechanisms._quantile`), so epsilon-DP at its epsilon and
    (epsilon^2 / 8)-zCDP; the 2 d runs compose (dp-accounting). ``range_``
    is post-processing of the selected cells (a high cell below the low
    one is read as the low one; the widening uses the cells' edges and
    public quantities only). The fitted estimator
    keeps no curator state (its generator is dropped after the release).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.preprocessing import PrivateRangeEstimator
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.normal(40, 10, 20_000), rng.lognormal(10, 1, 20_000)])
    >>> est = PrivateRangeEstimator(epsilon=1.0, random_state=0).fit(X)
    >>> est.range_.round(-1).tolist()  # the rows' 1% and 99%: (16.6, 63.1), (2100, 236900)
    [[20.0, 60.0], [2100.0, 226040.0]]
    >>> est.quantiles_[0].tolist(), round(est.epsilon_per_quantile_, 3)  # 1 / (2 x 2 columns)
    ([0.01, 0.99], 0.25)
    >>> est.privacy_spent_.epsilon
    1.0
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "quantiles": [tuple, list],
        "search_range": [tuple, list, None],
        "transform": [StrOptions({"none", "log", "log1p", "signed_log1p"}), list, tuple],
        "bins": [Interval(Integral, 1, 2**24, closed="both")],
        "adaptive": ["boolean"],
        "widen": [StrOptions({"normal", "none"})],
        "accounting": [StrOptions({"pure", "zcdp", "auto"})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, epsilon=0.1, *, quantiles=(0.01, 0.99), search_range=None,
                 transform="signed_log1p", bins=DEFAULT_BINS, adaptive=True,
                 widen="normal", accounting="pure", delta=0.0, random_state=None):
        self.epsilon = epsilon
        self.quantiles = quantiles
        self.search_range = search_range
        self.transform = transform
        self.bins = bins
        self.adaptive = adaptive
        self.widen = widen
        self.accounting = accounting
        self.delta = delta
        self.random_state = random_state

    def _check_terms(self, d):
        """Rules across parameters, checked before any row is read."""
        if not math.isfinite(self.epsilon):
            raise ValueError(f"epsilon must be finite, got {self.epsilon!r}.")
        try:
            q_lo, q_hi = (float(q) for q in self.quantiles)
        except (TypeError, ValueError):
            raise ValueError(f"quantiles must be (low, high), got {self.quantiles!r}.") from None
        if not 0.0 <= q_lo < q_hi <= 1.0:
            raise ValueError(f"quantiles must satisfy 0 <= low < high <= 1, "
                             f"got {self.quantiles!r}.")
        transforms = ([self.transform] * d if isinstance(self.transform, str)
                      else list(self.transform))
        if len(transforms) != d or any(t not in DEFAULT_SEARCH for t in transforms):
            raise ValueError(f"transform must be one of {sorted(DEFAULT_SEARCH)} or one per "
                             f"column ({d}), got {self.transform!r}.")
        if self.accounting == "zcdp" and self.delta <= 0:
            raise ValueError("accounting='zcdp' needs delta > 0 (a zCDP guarantee is "
                             "(epsilon, delta)-DP only for delta > 0).")
        return (q_lo, q_hi), transforms, _search_interval(self.search_range, transforms)

    def _quantile_epsilon(self, runs):
        """(epsilon per quantile, the statement used): "auto" takes whichever of
        the pure and the zCDP statements lets each quantile spend more (pure
        for a few quantiles, zCDP from about ln(1 / delta) / 2 of them on)."""
        pure = self.epsilon / runs
        if self.accounting == "pure" or (self.accounting == "auto" and self.delta == 0):
            return pure, "pure"
        rho = zcdp_rho_for_budget(float(self.epsilon), float(self.delta))
        zcdp = math.sqrt(8.0 * rho / runs)
        if self.accounting == "auto" and pure >= zcdp:
            return pure, "pure"
        return zcdp, "zcdp"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the private range of every column (one release).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Missing values (NaN) are ignored; infinite values count at the
            search interval's ends.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        run_transaction(self, self._fit, X)
        return self

    def _fit(self, X):
        X = validate_data(self, X, reset=True, dtype=np.float64, ensure_all_finite=False)
        n, d = X.shape
        (q_lo, q_hi), transforms, search = self._check_terms(d)
        runs = 2 * d
        eps_q, accounting = self._quantile_epsilon(runs)
        if self.adaptive:
            # beta split over the 2 d quantiles: all hold together with probability 1 - beta
            r_min = 2.0 * (math.log(self.bins) + math.log(runs / _BETA)) / eps_q
            q_lo = min(max(q_lo, r_min / n), 0.5)
            q_hi = max(min(q_hi, 1.0 - r_min / n), 0.5)
            if q_lo >= q_hi:  # both at the median: the low one a rank below
                q_lo = max(0.0, q_hi - 1.0 / n)
            if (q_lo, q_hi) != (float(self.quantiles[0]), float(self.quantiles[1])):
                # public quantities only (n, epsilon, bins, d): the warning reveals nothing
                warnings.warn(
                    f"epsilon {eps_q:.3g} per quantile resolves ranks to about {r_min:.0f} "
                    f"of the {n} rows: quantiles moved from {tuple(self.quantiles)} to "
                    f"({q_lo:.3g}, {q_hi:.3g}). Give the ranges more budget, or fewer "
                    "columns a private range.", UserWarning, stacklevel=user_stacklevel())
        rng = stream_rng(self.random_state, 0)
        ranges = np.empty((d, 2))
        wanted = tuple(float(q) for q in self.quantiles)
        for j, ((lo, hi), t) in enumerate(zip(search, transforms)):
            ranges[j] = self._column_range(X[:, j], lo, hi, t, (q_lo, q_hi), eps_q, rng,
                                           wanted)
        # one event per run, composed by dp-accounting (SelfComposed: equal runs)
        event = dp_event.SelfComposedDpEvent(quantile_event(eps_q, accounting), runs)
        self.range_ = ranges
        self.accounting_ = accounting
        self.quantiles_ = np.tile([q_lo, q_hi], (d, 1))
        self.epsilon_per_quantile_ = float(eps_q)
        self.event_ = event
        eps, how = epsilon_spent(event, float(self.delta))
        self.privacy_spent_ = PrivacySpent(
            epsilon=float(eps), delta=float(self.delta), accountant=how, releases=1,
            seeded=is_seeded(self.random_state))
        return self

    def _column_range(self, column, lo, hi, t, qs, eps_q, rng, wanted):
        t_lo, t_hi = _forward(np.float64(lo), t), _forward(np.float64(hi), t)
        grid = np.linspace(t_lo, t_hi, self.bins + 1)  # public edges of the candidate cells
        values = column[~np.isnan(column)]
        values = np.sort(_forward(np.clip(values, lo, hi), t))
        picks = [exponential_mechanism(
            quantile_distances(values, grid, target_rank(q, values.size)), eps_q, rng)
            for q in qs]
        # the low cell's lower edge, the high cell's upper edge (post-processing; lo < hi)
        k_lo, k_hi = picks
        edges = grid[[k_lo, max(k_lo, k_hi) + 1]]
        if self.widen == "normal" and tuple(qs) != wanted:
            edges = _widen_normal(edges, qs, wanted, t_lo, t_hi)
        return _inverse(edges, t)


@dataclasses.dataclass(frozen=True)
class PrivateSchema:
    """What :func:`privatise_schema` returns.

    Attributes
    ----------
    schema : dict
        The schema with every ``"private"`` range replaced by its estimate:
        public-range, ready for :func:`skdpol.preprocessing.from_schema`.
    event : dp_accounting.DpEvent
        The estimate's cost; compose it with the model's event
        (``skdpol.ledger`` composes recorded events the same way).
    privacy_spent : skdpol.accounting.PrivacySpent or None
        The estimate's (epsilon, delta); None when no range was private.
    ranges : dict
        ``{column: [lo, hi]}`` for each estimated range (the label's too).
    model_epsilon : float
        What is left of ``epsilon`` for the model, ``epsilon -
        privacy_spent.epsilon`` (both at the same delta).
    """

    schema: dict
    event: object
    privacy_spent: object
    ranges: dict
    model_epsilon: float


def privatise_schema(schema, X, epsilon, *, y=None, share=DEFAULT_SHARE, quantiles=(0.01, 0.99),
                     bins=DEFAULT_BINS, adaptive=True, widen="normal", accounting="auto",
                     delta=1e-5, random_state=None):
    """Replace every ``"private"`` range of a schema by a private estimate from the rows.

    The columns (and the regression label) whose ``range`` is ``"private"``
    get theirs from one :class:`PrivateRangeEstimator` fitted on their
    values, at ``share * epsilon`` split evenly over them; the rest of the
    schema is kept as it is. A private column may give a public ``search``
    interval ``[lo, hi]`` in its units (default: [-1e9, 1e9], [0, 1e9] for
    ``log1p``, [1e-9, 1e9] for ``log``). The search runs on the column's
    ``transform`` (``signed_log1p`` when it has none and gives no
    ``search``; its own ``none`` scale when it gives one).

    Parameters
    ----------
    schema : dict or str or path-like
        As for :func:`skdpol.preprocessing.from_schema`, where a numeric
        column's or the label's ``range`` may be ``"private"``.
    X : pandas.DataFrame
        The rows, with (at least) the private columns by name.
    epsilon : float
        The total budget of the bounds and the model together.
    y : array-like or None, default=None
        The label, if its range is private and ``X`` does not hold it.
    share : float, default=0.1
        The share of ``epsilon`` spent on the ranges (0 < share < 1). At
        10%, Adult and credit default with every numeric range private
        stayed within 0.01 AUC of their public ranges at epsilon 1 and 2
        (0.025 for credit at 0.5), and larger shares cost the model more
        than the ranges gained; many private columns want 20-40% (credit
        default, 20 ranges: AUC 0.748 at 10% of epsilon 1, 0.760 at 40%,
        0.761 public; King County, 18 ranges with the label: R^2 0.762 at
        10%, 0.764 at 40%, 0.771 public, with the normal widening).
        ``docs/benchmarks/private_bounds.md``.
    accounting : {"auto", "zcdp", "pure"}, default="auto"
        How the ranges' cost (``share * epsilon`` at ``delta``) is stated
        (:class:`PrivateRangeEstimator`): ``"auto"`` takes pure DP for a few
        quantiles and zCDP (bounded range) from about six on, where it
        gives each quantile about twice the pure split's epsilon at ten
        columns. The ranges and the model then cost at most ``epsilon`` at
        ``delta`` together by basic composition; the ledger's
        dp-accounting composition is tighter (two zCDP statements: rho
        adds, and the conversion to epsilon is concave in rho, so below
        the sum).
    delta : float, default=1e-5
        The delta the ranges' epsilon is stated at (zCDP); use the model's
        (0 for a pure-DP model: then the statement is pure).
    quantiles, bins, adaptive, widen, random_state
        As for :class:`PrivateRangeEstimator`.

    Returns
    -------
    PrivateSchema
        ``schema`` (public ranges), ``event``, ``privacy_spent``,
        ``ranges``, ``model_epsilon``.

    Raises
    ------
    ValueError
        Naming the column, for a bad spec; naming the parameter otherwise.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skdpol.preprocessing import from_schema, privatise_schema
    >>> rng = np.random.default_rng(0)
    >>> rows = pd.DataFrame({"age": rng.normal(40, 12, 20_000).round(),
    ...                      "income": rng.lognormal(10, 1, 20_000)})
    >>> out = privatise_schema(
    ...     {"columns": {"age": {"type": "numeric", "range": "private"},
    ...                  "income": {"type": "numeric", "range": "private",
    ...                             "transform": "log1p"}}},
    ...     rows, epsilon=1.0, random_state=0)
    >>> # 0.1 over 4 quantiles: the adaptive rule moved them to 5% / 95%, and each range is
    >>> # widened back to 1% / 99% of a normal law (rows: age 12-68, income 2100-226000)
    >>> {c: np.round(r, -1).tolist() for c, r in out.ranges.items()}
    {'age': [20.0, 70.0], 'income': [1920.0, 224110.0]}
    >>> out.privacy_spent.epsilon, out.model_epsilon
    (0.1, 0.9)
    >>> pre = from_schema(out.schema)  # a public-range schema now
    """
    if isinstance(schema, dict):
        schema = copy.deepcopy(schema)
    elif isinstance(schema, (str, bytes)) or hasattr(schema, "__fspath__"):
        import json
        import os
        with open(os.fspath(schema), encoding="utf-8") as f:
            schema = json.load(f)
    if not isinstance(schema, dict) or not isinstance(schema.get("columns"), dict):
        raise ValueError("a schema is a dict with 'columns': {name: {...}} (and 'label').")
    if not (isinstance(epsilon, Real) and 0 < epsilon < math.inf):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}.")
    if not (isinstance(share, Real) and 0 < share < 1):
        raise ValueError(f"share must be in (0, 1), got {share!r}.")
    specs = dict(schema["columns"])
    label = schema.get("label")
    if isinstance(label, dict) and label.get("range") == "private":
        specs[label.get("name")] = label
    private = [c for c, s in specs.items() if isinstance(s, dict) and s.get("range") == "private"]
    for name in private:
        spec = specs[name]
        if name != (label or {}).get("name") and spec.get("type") != "numeric":
            raise ValueError(f"column {name!r}: only a numeric column's range can be 'private'.")
        if spec.get("transform", "none") not in DEFAULT_SEARCH:
            raise ValueError(f"column {name!r}: 'transform' must be one of "
                             f"{sorted(DEFAULT_SEARCH)}, got {spec.get('transform')!r}.")
    if not private:
        return PrivateSchema(read_schema(schema), dp_event.NoOpDpEvent(), None, {},
                             float(epsilon))
    transforms, searches = [], []
    for name in private:
        spec = specs[name]
        t = spec.get("transform", "none")
        search = spec.get("search")
        transforms.append(t if t != "none" or search is not None else "signed_log1p")
        searches.append(tuple(search) if search is not None else DEFAULT_SEARCH[transforms[-1]])
        try:
            _search_interval([searches[-1]], [transforms[-1]])
        except ValueError as exc:
            raise ValueError(f"column {name!r}: 'search' {exc}") from None
    columns = []
    for name in private:
        if label is not None and name == label.get("name") and y is not None:
            columns.append(np.asarray(y, dtype=np.float64).reshape(-1))
        elif hasattr(X, "columns") and name in X.columns:
            columns.append(np.asarray(X[name], dtype=np.float64))
        else:
            raise ValueError(f"column {name!r}: its range is 'private' but X has no such "
                             "column (pass the label as y).")
    estimator = PrivateRangeEstimator(
        epsilon=share * epsilon, quantiles=quantiles, search_range=searches,
        transform=transforms, bins=bins, adaptive=adaptive, widen=widen, accounting=accounting,
        delta=delta, random_state=random_state).fit(np.column_stack(columns))
    ranges = {}
    for name, (lo, hi) in zip(private, estimator.range_.tolist()):
        spec = specs[name]
        spec["range"] = [lo, hi]
        spec.pop("search", None)
        ranges[name] = [lo, hi]
    public = read_schema(schema)  # the estimates pass the public checks
    spent = estimator.privacy_spent_
    return PrivateSchema(public, estimator.event_, spent, ranges,
                         float(epsilon) - spent.epsilon)

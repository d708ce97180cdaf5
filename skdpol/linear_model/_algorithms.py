"""Building the algorithm behind an estimator's ``algorithm`` parameter.

The estimator shells (:mod:`._base`) keep bounds, transactions, accounting
and tags; this mixin turns their public parameters into the noise (family
and mechanism) and the gradient-family algorithm (igd, giga, ftal, ftrl,
mi-ogd, noisy-gd; :func:`skdpol.online.make_stream` and
:func:`skdpol.online.fit_once`) of a stream (:mod:`._streams`). Whatever depends
on the algorithm's name (defaults, loss, round size, which combinations are
refused) is read from the registry, :data:`skdpol.online._registry.ALGORITHMS`.
"""

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ..losses import LogisticLoss, MultinomialLoss, SquaredLoss
from ..losses import HuberLoss
from ..mechanisms import NoiseSpec, family_for
from ..mechanisms import prefix_noise_ratio, resolve_mechanism
from ..online import fit_once, fit_once_event, make_stream
from ..online import (ALGORITHMS, AUTO, ONE_ROUND_FIT, REGRESSOR, SUFFICIENT_STATISTIC,
                     algorithm_names, auto_stream)
from ..online import ROUND_ROWS, momentum_round, momentum_step_rows
from ..online import (WIDE_CURVATURE_CAP, WIDE_STEP_DIVISOR, wide_blt_buffers, wide_mechanism,
                      wide_round, wide_stream)
from ..online import WIDE_REGRESSOR_MOMENTUM, WIDE_REGRESSOR_STABLE_ROWS, wide_regressor_round
from ..utils import stack_rows, zero_rows_like

# the gradient family's largest round with batch_size="auto" (rows): a round is
# one gradient step; 512 was the measured best fixed size on the generated
# streams (docs/benchmarks/logistic.md)
GRADIENT_ROUND = 512

# the widest rows a sufficient-statistic algorithm ("ftl", "ls") is built for:
# its state holds d x d float64 sums (and the prefix-sum mechanism's buffers
# of them, several copies), so one d x d matrix of more than 2 GB
# (d > 16,384 columns, the intercept included) means tens of GB in all. Above
# it the estimator says so instead of failing in numpy with a MemoryError.
MAX_SUFFICIENT_STATISTIC_BYTES = 2**31


def check_width(algorithm, n_columns):
    """Refuse a d x d (sufficient-statistic) ``algorithm`` on ``n_columns``
    columns (features plus the intercept) whose d x d sums would not fit in
    memory; the first-order streams are O(d)."""
    if ALGORITHMS[algorithm].kind != SUFFICIENT_STATISTIC:
        return
    gb = 8 * n_columns ** 2 / 2**30
    if 8 * n_columns ** 2 > MAX_SUFFICIENT_STATISTIC_BYTES:
        raise ValueError(
            f"algorithm={algorithm!r} keeps d x d sums: with n_features={n_columns} "
            f"(the intercept included) one of them is {gb:,.0f} GB, and its state holds "
            "several. Use algorithm=\"ftrl-momentum\" or \"ftrl\" (state linear in "
            "n_features) for rows this wide.")


def algorithm_constraint(estimator):
    """``_parameter_constraints["algorithm"]`` of an estimator kind, from the registry."""
    return [StrOptions(set(algorithm_names(estimator)))]


def check_combination(spec, *, stream, horizon, delta, calibration, feedback):
    """Refuse the parameter combinations algorithm ``spec`` does not define.

    ``stream``: a ``partial_fit`` stream (``fit`` releases once, so it needs
    no horizon). The one place these rules are written.
    """
    if calibration == "paper":
        if spec.paper is not None:
            raise ValueError(
                f"noise_calibration='paper' is not defined for algorithm="
                f"{spec.name!r}: {spec.paper}."
            )
        if stream and horizon is None:  # fit releases once: no horizon
            raise ValueError("noise_calibration='paper' needs a finite horizon.")
        if delta == 0 and not spec.paper_pure_dp:
            raise ValueError("noise_calibration='paper' needs delta > 0.")
    if spec.needs_delta and delta == 0:
        raise ValueError(
            f"algorithm={spec.name!r} needs delta > 0: its steps compose like sqrt(K) "
            "only under Gaussian noise."
        )
    if feedback == "bandit" and spec.bandit is False:
        raise ValueError(
            f"feedback='bandit' is only defined for algorithm='mi-ogd', "
            f"not {spec.name!r}."
        )


class AlgorithmBuilderMixin:
    """The noise and the gradient-family algorithm of a linear estimator.

    ``_kind`` ("regressor" or "classifier") selects the estimator's entries
    of the registry."""

    # ----------------------------------------------------------- noise
    @property
    def _noise(self):
        # pure DP needs Laplace noise; epsilon=inf draws no noise at all
        return family_for(self.epsilon, self.delta)

    @property
    def _noise_spec(self):
        """The noise's family and sampler (multiplier 0: each algorithm's
        calibration sets its own with :meth:`NoiseSpec.with_multiplier`)."""
        return NoiseSpec(self._noise, self.noise_sampler)

    @property
    def _mechanism(self):
        """The prefix sums' release, ``mechanism="auto"`` made concrete."""
        return resolve_mechanism(getattr(self, "mechanism", "tree"), self._noise,
                                 self.noise_calibration)

    def _stream_mechanism(self, batch_size):
        """A stream's mechanism for rounds of ``batch_size`` rows: :attr:`_mechanism`,
        except that a wide stream's "auto" takes the tree where its noise is
        comparable (:func:`~skdpol.online._registry.wide_mechanism`: at
        epsilon = inf, or few planned rounds). Public quantities only."""
        mechanism = self._mechanism
        if (mechanism == "blt" and getattr(self, "mechanism", "tree") == "auto"
                and self._wide(stream=True)):
            return wide_mechanism(self.epsilon, self._rounds(batch_size), prefix_noise_ratio)
        return mechanism

    def _wide(self, stream):
        """Whether the (stream or fit) algorithm takes the wide rules on rows
        of ``n_features_in_`` features (:func:`~skdpol.online._registry.wide_stream`)."""
        return wide_stream(self._kind, self.__dict__.get("n_features_in_"),
                           self._algorithm_for(stream))

    # ----------------------------------------------------------- the registry
    def _algorithm_for(self, stream):
        """The algorithm behind ``algorithm``: ``"auto"`` is the registry's
        :data:`~skdpol.online._registry.AUTO` for the estimator (for ``fit``,
        the one-release choice, or the pure-DP / paper one); recorded as
        ``algorithm_``. Public parameters only."""
        if self.algorithm != "auto":
            return self.algorithm
        _, one_release, pure_or_paper, _ = AUTO[self._kind]
        pure_or_paper_terms = self.delta == 0 or self.noise_calibration == "paper"
        if stream:  # also by the public width of the rows (unknown before the first chunk)
            return auto_stream(self._kind, self.__dict__.get("n_features_in_"),
                               self.noise_calibration, pure=self.delta == 0,
                               horizon=self.horizon)
        return pure_or_paper if pure_or_paper_terms else one_release

    def _check_algorithm(self, stream=True):
        check_combination(ALGORITHMS[self._algorithm_for(stream)], stream=stream,
                          horizon=self.horizon, delta=self.delta,
                          calibration=self.noise_calibration, feedback=self.feedback)

    def _alpha_for(self, algorithm):
        """``alpha``, or the estimator's default for ``algorithm`` when None."""
        if self.alpha is not None:
            return self.alpha
        return ALGORITHMS[algorithm].default_alpha(self._kind, self.horizon)

    def _loss(self, algorithm, n_classes=None):
        """The estimator's loss for ``algorithm`` (the registry's name of it);
        a classifier's over ``n_classes`` labels (default: ``classes_``)."""
        name = ALGORITHMS[algorithm].loss[self._kind]
        if name == "squared":
            return SquaredLoss(1.0)
        if name == "huber":  # noisy GD's Huber loss clips residuals at residual_bound
            return HuberLoss(self.residual_bound)
        if n_classes is None:
            n_classes = self.classes_.size
        return LogisticLoss() if n_classes == 2 else MultinomialLoss(n_classes)

    def _auto_round(self, n_rows):
        """Rows per round of ``batch_size="auto"`` for a first call of
        ``n_rows``: the registry's rule for the stream's algorithm. "call":
        one round per call (PQFTL: a leaf of the tree, the fewest levels;
        noisy GD takes its steps inside a round); "row": per-row rounds
        (IGD's squared-loss step bound holds for one row a round, and
        MI-OGD's steps on the squared loss are tuned for them); "momentum":
        100 rows, 50 below a horizon of 10,000 rows
        (:func:`~skdpol.online._momentum.momentum_round`); an int: that many
        rows (the regressor's "ftrl": 20, its step is capped); otherwise the
        gradient family's: a round is one gradient step, so the call is cut
        into even rounds of at most GRADIENT_ROUND rows (the measured best
        fixed size) rather than one."""
        rule = ALGORITHMS[self._algorithm_for(stream=True)].auto_round.get(self._kind)
        if rule == "call":
            return n_rows
        if rule == "row":
            return 1
        if rule == "momentum":
            return self._momentum_rows(self.horizon, stream=True)
        if isinstance(rule, int):  # a fixed round (the regressor's "ftrl")
            return rule
        n_rounds = -(-n_rows // GRADIENT_ROUND)
        return -(-n_rows // n_rounds)

    def _momentum_rows(self, horizon_rows, stream):
        """Rows per automatic round of "ftrl-momentum" over ``horizon_rows``
        (a stream's horizon, or ``fit``'s rows): the narrow rule for the
        estimator's kind (:func:`~skdpol.online._momentum.momentum_round`),
        and on wide rows at least the registry's wide rounds
        (:func:`~skdpol.online._registry.wide_round` for the classifier,
        :func:`~skdpol.online._registry.wide_regressor_round`), growing with d."""
        regressor = self._kind == REGRESSOR
        rows = momentum_round(horizon_rows, classifier=not regressor)
        if self._wide(stream):
            rule = wide_regressor_round if regressor else wide_round
            rows = max(rows, rule(self.n_features_in_, horizon_rows, self.epsilon))
        return rows

    # ----------------------------------------------------------- gradient family
    def _publish_mi(self, stream):
        spec = ALGORITHMS.get(self.algorithm)
        if spec is not None and spec.mutual_information and stream.algorithm is not None:
            self.mutual_information_bound_ = stream.algorithm.mutual_information_bound()
        else:
            self.__dict__.pop("mutual_information_bound_", None)

    def _algorithm_params(self, units, loss, n_columns, batch_size, stream, rounds=None):
        """The public terms of the (stream or fit) algorithm; ``rounds``: its
        planned rounds (a wide stream's BLT buffers read them)."""
        algorithm = self._algorithm_for(stream)
        alpha = self._alpha_for(algorithm)
        # noisy-gd is unconstrained (alpha may be 0 there): no ball to bound
        radius = loss.optimum_radius(alpha) if alpha > 0 else float("inf")
        params = dict(loss=loss, n_features=n_columns, radius=radius, alpha=alpha,
                      row_bound=units.row_bound, batch_size=batch_size,
                      epsilon=self.epsilon, delta=self.delta, noise=self._noise_spec,
                      calibration=self.noise_calibration, feedback=self.feedback,
                      intercept=units.intercept)
        momentum = ALGORITHMS[algorithm].family == "momentum"
        regressor = self._kind == REGRESSOR
        wide = self._wide(stream)
        if momentum and regressor and not wide:
            # the regressor's stream centres its rows privately where the
            # public rule allows (skdpol.online._centred); not on wide rows:
            # the hold needs ~sqrt(d) x more rows (the released mean's noise
            # norm grows like sqrt(d)), so past a few thousand columns the
            # rule centres only at large epsilon, and there a round's centred
            # rows are dense (CSR rounds made dense: b x d floats)
            params["centre"] = True
        if wide:  # a wide "ftrl-momentum" stream (registry): its rounds grow with d,
            # one BLT buffer over short horizons (registry: wide_blt_buffers)
            params["blt_buffers"] = wide_blt_buffers(rounds)
            if regressor:
                # the per-row step b / (50 s R~^2), capped for heavy ball's
                # stability, with more momentum where the cap binds (registry)
                params["stable_rows"] = WIDE_REGRESSOR_STABLE_ROWS
                params["stable_momentum"] = WIDE_REGRESSOR_MOMENTUM
            else:  # the classifier's own step (no step_rows cap)
                params["step_divisor"] = WIDE_STEP_DIVISOR
                # capped per coordinate from the releases (online._curvature)
                params["curvature_cap"] = WIDE_CURVATURE_CAP
        elif momentum and self.batch_size == "auto":
            # the automatic rounds of a horizon past 100,000 rows take the
            # step of rounds of 100 (of release_every x 100 in a stream), the
            # classifier's that of 600 (its losses' curvature is a quarter)
            release_every = getattr(self, "release_every", 1) if stream else 1
            params["step_rows"] = momentum_step_rows(release_every, classifier=not regressor)
            if release_every > 1:
                # release_every k rounds take k rounds' step, lr lambda up to 2k
                # (3k for the classifier): capped after the noise scale at that
                # of one round of the rule, as a set batch_size is (below).
                # Rows near one direction diverged without the cap: R^2 -2 to
                # -270 at epsilon = inf (docs/benchmarks/release_every.md)
                params["stable_rows"] = momentum_step_rows(1, classifier=not regressor)
        elif momentum and regressor:
            # a set batch_size: heavy ball's step b / (50 s R~^2) (s the noise
            # rule's scale) is stable only up to b / s ~ 195 rows (_momentum
            # notes, "Its cap"), so it is capped at that of ROUND_ROWS rows
            # after the scale: on friedman1 (50,000 rows, epsilon = inf) rounds
            # of 5,000 gave R^2 -90 and of 1,000 0.10 uncapped; at epsilon 1
            # the noise rule's s already kept them stable (0.71), and still does
            params["stable_rows"] = ROUND_ROWS
        return params

    def _start_gradient_stream(self, stream, loss, n_columns):
        """Build ``stream``'s gradient-family algorithm
        (:func:`skdpol.online.make_stream`)."""
        stream.algorithm = self._gradient_algorithm(stream.units, loss, n_columns,
                                                    stream.batch_size, self._rng)

    def _gradient_algorithm(self, units, loss, n_columns, batch_size, rng):
        """A new stream's gradient-family algorithm, from public quantities
        (a declared cost builds one with a throw-away ``rng``)."""
        # mechanism: the prefix sums' release of ftal / ftrl (the others have none)
        return make_stream(
            self._algorithm_for(stream=True),
            **self._algorithm_params(units, loss, n_columns, batch_size, True,
                                     self._rounds(batch_size)),
            horizon=self._rounds(batch_size), rng=rng,
            mechanism=self._stream_mechanism(batch_size))

    def _fit_gradient_batch(self, n_rows, batch_size):
        """(rows per round, padded rows) of ``fit``'s gradient-family release."""
        spec = ALGORITHMS[self._algorithm_for(stream=False)]
        if spec.family in ONE_ROUND_FIT:
            batch_size = n_rows  # one round of every row
        elif spec.auto_round.get(self._kind) == "momentum" and self.batch_size == "auto":
            batch_size = self._momentum_rows(n_rows, stream=False)  # the stream's, over all rows
        elif (spec.fit_release(self._kind) == "stream" and self.batch_size == "auto"
              and isinstance(spec.auto_round.get(self._kind), int)):
            batch_size = spec.auto_round[self._kind]  # the stream's fixed rounds
        return batch_size, n_rows + (-n_rows % batch_size)

    def _fit_gradient_event(self, units, loss, n_rows, n_columns, batch_size):
        """The event :meth:`_fit_gradient` states for ``n_rows`` rows of
        ``n_columns`` (intercept included), from public quantities only
        (:func:`skdpol.online.fit_once_event`)."""
        batch_size, padded = self._fit_gradient_batch(n_rows, batch_size)
        algorithm = self._algorithm_for(stream=False)
        return fit_once_event(
            algorithm, padded,
            **self._algorithm_params(units, loss, n_columns, batch_size, False,
                                     padded // batch_size),
            rng=np.random.default_rng(0), mechanism=self._mechanism,
            one_release=ALGORITHMS[algorithm].fit_release(self._kind))

    def _fit_gradient(self, stream, loss, Xa, ya, batch_size):
        """``fit``'s one release of the gradient family
        (:func:`skdpol.online.fit_once`); a stream it ran stays ``stream``'s
        algorithm (MI-OGD's bound reads it)."""
        algorithm = self._algorithm_for(stream=False)
        batch_size = self._fit_gradient_batch(Xa.shape[0], batch_size)[0]
        # pad the last round with zero rows (label 0): a zero row has a zero
        # gradient under every loss here and belongs to no one, so the
        # sensitivity of a round is unchanged and no real row is left out
        extra = -Xa.shape[0] % batch_size
        if extra:
            Xa = stack_rows([Xa, zero_rows_like(Xa, extra)])  # CSR rows stay CSR
            ya = np.concatenate([ya, np.zeros(extra)])
        W, event, ran = fit_once(
            algorithm, Xa, ya,
            **self._algorithm_params(stream.units, loss, Xa.shape[1], batch_size, False,
                                     Xa.shape[0] // batch_size),
            rng=self._rng, mechanism=self._mechanism,
            one_release=ALGORITHMS[algorithm].fit_release(self._kind))
        if ran is not None:
            stream.algorithm = ran
        return W, event

"""Building the algorithm behind an estimator's ``algorithm`` parameter.

The estimator shells (:mod:`._base`) keep bounds, transactions, accounting
and tags; this mixin turns their public parameters into the noise (family
and mechanism) and the gradient-family algorithm (igd, giga, ftal, ftrl,
mi-ogd, noisy-gd; :func:`skdpol.online.make_stream` and
:func:`skdpol.online.fit_once`), and feeds and records it.
"""

import numpy as np

from ..mechanisms import NoiseSpec, family_for
from ..mechanisms._prefix import resolve_mechanism
from ..online import fit_once, make_stream


class AlgorithmBuilderMixin:
    """The noise and the gradient-family algorithm of a linear estimator."""

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

    # ----------------------------------------------------------- gradient family
    def _algorithm_for(self, stream):
        """The algorithm behind ``algorithm`` (``"auto"`` is resolved by the
        estimator's ``_auto_algorithm``); recorded as ``algorithm_``."""
        if self.algorithm != "auto":
            return self.algorithm
        return self._auto_algorithm(stream)

    def _publish_mi(self):
        if self.algorithm == "mi-ogd" and hasattr(self, "_algo"):
            self.mutual_information_bound_ = self._algo.mutual_information_bound()
        else:
            self.__dict__.pop("mutual_information_bound_", None)

    def _check_gradient_params(self, stream=True):
        algorithm = self._algorithm_for(stream)
        if self.noise_calibration == "paper":
            if algorithm in ("mi-ogd", "noisy-gd"):
                reason = ("seed 000 states a mutual-information bound, not a noise formula"
                          if algorithm == "mi-ogd" else "it is not a seed algorithm")
                raise ValueError(
                    f"noise_calibration='paper' is not defined for algorithm="
                    f"{algorithm!r}: {reason}."
                )
            if stream and self.horizon is None:  # fit releases once: no horizon
                raise ValueError("noise_calibration='paper' needs a finite horizon.")
            if self.delta == 0 and algorithm not in ("ftal", "ftrl"):
                raise ValueError("noise_calibration='paper' needs delta > 0.")
        if algorithm == "noisy-gd" and self.delta == 0:
            raise ValueError(
                "algorithm='noisy-gd' needs delta > 0: its steps compose like sqrt(K) "
                "only under Gaussian noise."
            )
        if self.feedback == "bandit" and algorithm != "mi-ogd":
            raise ValueError(
                f"feedback='bandit' is only defined for algorithm='mi-ogd', "
                f"not {algorithm!r}."
            )

    def _alpha_for(self, algorithm):
        """``alpha``, or the estimator's default for ``algorithm`` when None."""
        return self.alpha if self.alpha is not None else self._default_alpha(algorithm)

    def _algorithm_params(self, loss, n_columns, batch_size, stream):
        alpha = self._alpha_for(self._algorithm_for(stream))
        # noisy-gd is unconstrained (alpha may be 0 there): no ball to bound
        radius = loss.optimum_radius(alpha) if alpha > 0 else float("inf")
        return dict(loss=loss, n_features=n_columns, radius=radius, alpha=alpha,
                    row_bound=self._units.row_bound, batch_size=batch_size,
                    epsilon=self.epsilon, delta=self.delta, noise=self._noise_spec,
                    calibration=self.noise_calibration, feedback=self.feedback)

    def _start_gradient_stream(self, loss, n_columns):
        # mechanism: the prefix sums' release of ftal / ftrl (the others have none)
        self._algo = make_stream(self._algorithm_for(stream=True),
                                 **self._algorithm_params(loss, n_columns, self.batch_size_, True),
                                 horizon=self._rounds(), rng=self._rng,
                                 mechanism=self._mechanism)

    def _learn_gradient(self, Xa, ya, trace, algo=None, **scales):
        """Feed a stream's algorithm (``self._algo`` by default): every one
        (RoundBuffer subclasses, POCP, PQFTL) takes ``learn(X, y, trace)`` and
        returns, with ``trace``, the (n, k, d) models published before each row.
        ``scales`` (PQFTL's ``row_scale``, ``label_scale``) go to ``learn``."""
        algo = self._algo if algo is None else algo
        algo.check_room(Xa.shape[0])  # all checks done: from here on, mutate
        models = algo.learn(Xa, ya, trace=trace, **scales)
        self._releases += Xa.shape[0] if trace else 1
        return models

    def _record_algorithm(self, n_rows, algo):
        """Publish a stream algorithm's current model and cost after ``n_rows`` more rows."""
        self._record_stream(n_rows, algo.published, algo.event(), algo.n_rows_used)

    def _fit_gradient(self, loss, Xa, ya, batch_size):
        if self._algorithm_for(stream=False) == "noisy-gd":
            batch_size = Xa.shape[0]  # one round of every row
        # pad the last round with zero rows (label 0): a zero row has a zero
        # gradient under every loss here and belongs to no one, so the
        # sensitivity of a round is unchanged and no real row is left out
        extra = -Xa.shape[0] % batch_size
        if extra:
            Xa = np.vstack([Xa, np.zeros((extra, Xa.shape[1]))])
            ya = np.concatenate([ya, np.zeros(extra)])
        W, event, stream = fit_once(self._algorithm_for(stream=False), Xa, ya,
                                    **self._algorithm_params(loss, Xa.shape[1], batch_size, False),
                                    rng=self._rng)
        if stream is not None:
            self._algo = stream
        return W, event

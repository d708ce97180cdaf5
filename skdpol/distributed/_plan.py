"""The public plan of MultiPartyPrivateSGD's protocols: rounds, step sizes,
sensitivity, noise and the cost, from public quantities only (parameters,
shapes, the parties' row counts, the classes). The declared cost a ledger
checks before a row is read is the plan's event."""

import math
from types import SimpleNamespace

import numpy as np
from sklearn.utils.validation import _num_features, _num_samples

from ..losses import LogisticLoss, MultinomialLoss, SquaredLoss
from ..mechanisms import grid_sensitivity, grid_step
from ..online import MAX_STEPS, gradient_schedule
from . import _accounting
from ._inputs import _is_dask
from ._party import PartyTerms
from ._secagg import check_headroom

# rounds of the seed's schedules when n_rounds="auto"
DEFAULT_ROUNDS = 20
# alpha=None, per loss: measured on Adult (4 parties, epsilon 1, n_rounds="auto",
# benchmarks/bench_distributed.py): 1e-2 / 1e-3 / 1e-4 gave 76.6 / 84.1 / 85.3 %
# under secure aggregation. The squared loss's gradient bound grows like
# 1 / sqrt(alpha) (the ball's radius), so it keeps a larger one.
DEFAULT_ALPHA = {"log_loss": 1e-4, "squared_error": 1e-2}


class ProtocolPlanMixin:
    """The plan of a fit and the party terms it sets (:class:`MultiPartyPrivateSGD`)."""

    def _plan(self, n_rows, sizes, loss, n_features):
        """The protocol's public terms for parties of ``sizes`` rows of
        ``n_features``: rounds, step sizes, sensitivity, noise and the cost
        (``event``). Every one is a function of public quantities (parameters,
        shapes, the parties' row counts and the loss's classes), never of a
        row or a bound read off the data: the declared cost is the plan's."""
        alpha = self.alpha if self.alpha is not None else DEFAULT_ALPHA[self.loss]
        k = loss.n_outputs
        p = n_features + int(self.fit_intercept)
        dim = k * p
        R = math.sqrt(2.0) if self.fit_intercept else 1.0
        B = loss.optimum_radius(alpha)
        lip = loss.lipschitz(R, B)  # ||grad l(theta; d)|| <= lip on the ball
        private = not math.isinf(self.epsilon)
        schedule = self._schedule()
        n_rounds, lr = self._rounds_and_rate(n_rows, len(sizes), loss, R, B, schedule, alpha)
        grid_terms = None
        if self.protocol == "sgd2":
            sensitivity = 2.0 * lip  # one party's gradient sum, replace-one
            mult = self._sgd2_multiplier(n_rounds) if private else 0.0
            event, noise_var, grid_terms = self._sgd2_noise(sensitivity, mult, len(sizes), dim,
                                                            n_rows, n_rounds)
        else:
            sensitivity = 2.0 * n_rows * lip  # n grad of the drawn row, replace-one
            mult = self._sgd1_multiplier(sizes) if private else 0.0
            event = _accounting.sgd1_event(mult, sizes)  # covers every party
            noise_var = (mult * sensitivity) ** 2
        return SimpleNamespace(alpha=alpha, k=k, p=p, dim=dim, R=R, B=B, lip=lip,
                               private=private, schedule=schedule, n_rounds=n_rounds, lr=lr,
                               sensitivity=sensitivity, mult=mult, event=event,
                               noise_var=noise_var, grid_terms=grid_terms)

    def _declared_event(self, method, args):
        """(event, None) a ``fit`` will record (a new ledger branch), from
        public quantities only (:meth:`_plan`: the parties' row counts, the
        features, the classes). None for dask input, whose blocks' sizes are
        known once computed (its release checks the budget), and for a call
        the real one refuses."""
        if getattr(method, "__name__", None) != "_fit":
            return None
        X, y, parties, classes = args
        if _is_dask(X) or _is_dask(y):
            return None
        self._check_combination()
        n_rows = _num_samples(X)
        if parties is None:
            sizes = [n_rows]
        else:
            sizes = np.unique(np.asarray(parties).ravel(), return_counts=True)[1].tolist()
        if n_rows < 1 or sum(sizes) != n_rows:
            return None  # the real call refuses it
        labels = None
        if self.loss == "log_loss":  # classes=None: the label set read off y, as fit does
            labels = np.unique(np.asarray(np.unique(y) if classes is None else classes))
        return self._plan(n_rows, sizes, _loss(labels is not None, labels),
                          _num_features(X)).event, None

    def _party_terms(self, plan, loss, data_norm, y_bound, labels):
        """What every party is told: the loss, the bounds and the noise."""
        if self.protocol != "sgd2":
            return PartyTerms(loss, data_norm, y_bound, labels, self.fit_intercept,
                              plan.sensitivity, plan.mult, self.noise_sampler, "local")
        base = dict(loss=loss, data_norm=data_norm, y_bound=y_bound, classes=labels,
                    fit_intercept=self.fit_intercept, sensitivity=plan.sensitivity,
                    multiplier=plan.mult, sampler=self.noise_sampler,
                    trust_model=self.trust_model)
        if plan.grid_terms is None:
            return PartyTerms(**base)
        step, share = plan.grid_terms
        return PartyTerms(**base, grid_step=step, share_scale=share)

    def _schedule(self):
        if self.step_schedule == "auto":
            return "nesterov" if self.protocol == "sgd2" else "strongly-convex"
        if self.step_schedule == "nesterov" and self.protocol == "sgd1":
            raise ValueError("step_schedule='nesterov' is for protocol='sgd2' (full "
                             "gradients); use 'strongly-convex' or 'lipschitz' with 'sgd1'.")
        return self.step_schedule

    def _rounds_and_rate(self, n_rows, n_parties, loss, R, B, schedule, alpha):
        """SGD2's rounds and (nesterov) step size on the mean gradient.

        ``n_rounds="auto"``: the project's noisy-GD schedule
        (:func:`skdpol.online.gradient_schedule`, public quantities only),
        for the noise the coordinator's sum carries: the central noise under
        secure aggregation, sqrt(m) times it under the local model (which
        the schedule sees as n / sqrt(m) rows).
        """
        if self.protocol == "sgd1":
            return n_rows**2, None
        n_eff = n_rows if self.trust_model == "secure-aggregation" else n_rows / math.sqrt(
            n_parties)
        if math.isinf(self.epsilon):
            auto_rounds, lr = MAX_STEPS, 1.0 / (loss.smoothness(R) + alpha)
        else:
            auto_rounds, lr = gradient_schedule(max(n_eff, 1.0), self.epsilon, self.delta,
                                                _OnBall(loss, B), R, alpha=alpha)
        if self.n_rounds != "auto":
            return int(self.n_rounds), 1.0 / (loss.smoothness(R) + alpha)
        return auto_rounds if schedule == "nesterov" else DEFAULT_ROUNDS, lr

    def _sgd2_multiplier(self, n_rounds):
        sampler = self.noise_sampler
        if self.noise_calibration == "paper":
            return _accounting.paper_sgd2_multiplier(self.epsilon, self.delta, n_rounds)
        return _accounting.calibrate_sgd2(self.epsilon, self.delta, n_rounds, sampler)

    def _sgd1_multiplier(self, sizes):
        if self.noise_calibration == "paper":
            return _accounting.paper_sgd1_multiplier(self.epsilon, self.delta, sum(sizes))
        return _accounting.calibrate_sgd1(self.epsilon, self.delta, sizes)

    def _sgd2_noise(self, sensitivity, mult, n_parties, dim, n_rows, n_rounds):
        """SGD2's event to report, the summed noise's variance and, under
        secure aggregation, the parties' (grid step, share scale)."""
        if self.trust_model == "local":
            event = _accounting.sgd2_event(mult, n_rounds, self.noise_sampler)
            return event, n_parties * (mult * sensitivity) ** 2, None
        step = grid_step(sensitivity, dim)
        shift = grid_sensitivity(sensitivity, dim, step)  # rounding included, grid units
        check_headroom(n_rows, dim, shift)
        share = mult * shift / math.sqrt(n_parties) if mult > 0 else 0.0
        if mult > 0:
            rho = _accounting.secure_sum_rho(shift, share, n_parties, dim)
            event = _accounting.secure_sum_event(rho, n_rounds)
        else:
            event = None
        return event, (mult * shift * step) ** 2, (step, share)


def _loss(classifier, labels):
    """The protocol's loss: logistic (binary or multinomial over ``labels``) or squared."""
    if classifier:
        return LogisticLoss() if labels.size == 2 else MultinomialLoss(labels.size)
    return SquaredLoss(1.0)


class _OnBall:
    """A loss seen on the ball of radius B: gradient_schedule reads the
    gradient bound at radius inf, which the squared loss only has on a ball."""

    def __init__(self, loss, radius):
        self.loss, self.radius = loss, radius

    def lipschitz(self, row_bound, radius):
        return self.loss.lipschitz(row_bound, min(radius, self.radius))

    def smoothness(self, row_bound):
        return self.loss.smoothness(row_bound)

"""MultiPartyPrivateSGD: seed 004's SGD1 and SGD2, in this process or on Dask."""

import math
import os
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..accounting import PrivacySpent, epsilon_spent
from ..exceptions import PrivacyLeakWarning
from ..linear_model import make_rng, warn_delta
from ..linear_model import (
    PublicLinearClassifier,
    PublicLinearRegressor,
    _decision,
    _predict,
    _proba,
)
from ..losses import LogisticLoss  # noqa: F401  (tests build party terms from here)
from ..online import MOMENTUM
from ..mechanisms import grid_step  # noqa: F401  (tests read the grid from here)
from ..ledger import PrivacyLedger
from ..ledger import HEAD, check_budget, check_planned_release, record_release
from ..utils import run_transaction
from ..utils import ACCEPT_SPARSE, csr_rows
from ..utils import is_seeded
from ..utils import user_stacklevel
from . import _accounting
from ._inputs import PartyInputsMixin, _is_dask
from ._parties import payload_bytes
from ._plan import ProtocolPlanMixin, _loss
from ._secagg import secure_sum


def _receive(messages):
    """Everything the coordinator gets from the parties passes here (one list
    per round for SGD2, one message per step for SGD1). The identity; tests
    wrap it to inspect the coordinator's view."""
    return messages


class MultiPartyPrivateSGD(PartyInputsMixin, ProtocolPlanMixin, BaseEstimator):
    """Private gradient descent over data split between parties (seed 004).

    Parties A_1..A_m each hold some of the rows; a coordinator B combines
    what they send and publishes the model. Two protocols:

    * ``"sgd2"`` (default): ``n_rounds`` rounds; in each, every party sends
      the sum of its rows' gradients at the current model plus noise, and
      the coordinator takes one projected gradient step on the sum.
    * ``"sgd1"``: n^2 steps on a public schedule: party k answers n n_k of
      them, in a random order, each time n times the gradient of one of its
      n_k rows drawn uniformly, plus noise. Who answers is seen by all, so
      only the draw within the party amplifies privacy. A round trip per
      step: for small n.

    ``trust_model`` says who must be trusted and who adds which noise:

    * ``"local"``: each party adds the *full* noise to every message, so
      each message is (epsilon, delta)-DP on its own. The guarantee holds
      against the coordinator (SGD1: see ``coordinator_epsilon_``) and
      against any coalition of the other parties. The sum the coordinator
      uses carries m times the variance a central model would need.
    * ``"secure-aggregation"`` (SGD2 only): each party puts its sum on a
      common grid and adds one *share* of distributed discrete Gaussian
      noise (variance 1/m of the total; Kairouz, Liu & Steinke 2021), then
      masks it with pairwise masks that cancel in the sum; the coordinator
      only learns the sum, which carries the full noise, so the model is as
      accurate as a central one. The guarantee holds against the
      coordinator *if* the aggregation is secure (here it is simulated:
      see :mod:`skdpol.distributed._secagg` and the user guide), and a
      coalition of parties that pools its shares removes their part of the
      noise (a coalition of c parties leaves (m - c) / m of the variance).

    Parameters
    ----------
    protocol : {"sgd2", "sgd1"}, default="sgd2"
    trust_model : {"local", "secure-aggregation"}, default="local"
    loss : {"squared_error", "log_loss"}, default="squared_error"
        ``"log_loss"``: binary logistic or, for three classes or more, the
        multinomial loss (``predict_proba`` is then available).
    epsilon : float, default=1.0
    delta : float, default=1e-5
        Must be > 0 (Gaussian noise). Choose it well below 1 / n.
    data_norm : float or None, default=None
        Rows are clipped to this L2 norm on each party's machine before any
        gradient. None reads it off the data (a leak: warns with
        :class:`~skdpol.PrivacyLeakWarning`).
    y_bound : float or None, default=None
        Labels are clipped to [-y_bound, y_bound] (``"squared_error"``
        only). None reads it off the data (a leak: warns).
    alpha : float or None, default=None
        L2 penalty per row in unit space (rows divided by ``data_norm``):
        the strong convexity Delta of the per-row loss. It also fixes the
        ball the model is projected onto (radius sqrt(2 l(0) / alpha), which
        holds the penalised optimum) and so, for the squared loss, the
        gradient bound. None: 1e-4 for ``"log_loss"`` and 1e-2 for
        ``"squared_error"`` (measured; see ``docs/distributed.md``).
    n_rounds : int or "auto", default="auto"
        SGD2's rounds T (SGD1 always runs n^2 steps). ``"auto"``: with the
        ``"nesterov"`` schedule, the rounds of the project's noisy gradient
        descent (:func:`skdpol.online.gradient_schedule`: from n, the
        bounds and the budget, for the noise the coordinator's sum
        carries); 20 with the seed's schedules.
    step_schedule : {"auto", "nesterov", "strongly-convex", "lipschitz"}, \
default="auto"
        ``"auto"``: ``"nesterov"`` for SGD2, ``"strongly-convex"`` for SGD1.
        ``"nesterov"`` (SGD2 only): the coordinator applies Nesterov momentum
        0.9 with the step of :func:`skdpol.online.gradient_schedule` (the
        central ``PrivateOnlineLogistic.fit``'s update; not in the seed,
        post-processing of the same messages). ``"strongly-convex"``: eta(t) = 1 / (alpha n t) (seed 004's schedule
        under Delta-strong convexity). ``"lipschitz"``: the seed's equation
        (4), eta(t) = ||C|| / sqrt(t (n^2 L^2 + p sigma^2)) with ||C|| the
        diameter of the ball, L the per-row Lipschitz constant and p sigma^2
        the summed noise's variance. Both are capped at 1 / (n beta), beta
        the objective's smoothness per row: gradient descent's stable step,
        which the seed's schedules exceed in the first rounds.
    noise_calibration : {"tight", "paper"}, default="tight"
        ``"tight"``: the smallest noise whose releases dp-accounting finds
        (epsilon, delta)-DP. ``"paper"``: seed 004's formulas (SGD2: each
        round (eps / sqrt(T log(1/delta)), delta / T)-DP by the classical
        Gaussian mechanism, then strong composition; SGD1: its equation
        (3)). ``privacy_spent_`` always reports the dp-accounting figure.
    noise_sampler : {"discrete", "float"}, default="discrete"
        ``"discrete"``: exact discrete Gaussian noise (the hardened path),
        required by secure aggregation (integers mod 2^64). ``"float"``:
        floating-point Gaussian noise, required by SGD1 (its amplification
        by sampling is accounted for continuous Gaussian noise only).
    fit_intercept : bool, default=True
    random_state : int, RandomState instance or None, default=None
        None: every party draws its noise from fresh OS entropy on its own
        machine, so no one else can regenerate it -- the only choice for a
        deployment. An int makes runs reproducible: the coordinator then
        derives each party's noise key from it and *can* regenerate and
        subtract the noise (``privacy_spent_.seeded`` is True).
    ledger : PrivacyLedger, str, path-like or None, default=None
        Record the fit's cost in this :class:`~skdpol.PrivacyLedger` (or the
        ledger file at this path), and refuse a fit that would pass its
        budget with :class:`~skdpol.BudgetExhaustedError` before any row is
        read (for dask input whose shape is not known in advance, the check
        happens when the model is released, and a refusal discards it).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_classes, n_features)
        (shape (1, n_features) for binary ``"log_loss"``).
    intercept_ : float or ndarray of shape (n_classes,)
    classes_ : ndarray of shape (n_classes,)
        ``"log_loss"`` only.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_samples_seen_ : int
    n_parties_ : int
    n_rounds_ : int
        SGD2's rounds (``n_rounds`` resolved); SGD1's steps, n^2.
    step_schedule_ : str
        ``step_schedule`` resolved.
    noise_multiplier_ : float
        Noise standard deviation over the replace-one sensitivity: of each
        message (local), or of the secure sum (secure aggregation).
    sensitivity_ : float
        Replace-one L2 sensitivity of a party's gradient sum (SGD2) or of a
        step's message (SGD1), in unit space.
    bytes_per_round_ : float
        Pickled bytes a round moves between coordinator and parties (model
        and keys out, messages back); for SGD1, per step. The public terms
        (loss, bounds, noise scale) are sent to each worker once per fit.
    privacy_spent_ : skdpol.accounting.PrivacySpent
        The guarantee of everything the coordinator receives and publishes,
        and of who sent each message. SGD1: for the worst party's rows, not
        against whoever knows the row draws (the coordinator).
    coordinator_epsilon_ : float
        SGD1: the epsilon (at ``delta``) against the coordinator, who knows
        the draws (no amplification: the most-drawn row's releases
        composed). SGD2: equal to ``privacy_spent_.epsilon``.

    Notes
    -----
    **Sensitivity.** A row lives in one party. In unit space rows have norm
    <= R (1, or sqrt(2) with the intercept column) and the model lies in a
    ball of radius B, so a row's gradient has norm <= L =
    ``loss.lipschitz(R, B)`` (R for the logistic loss, sqrt(2) R for the
    multinomial one, R (R B + 1) for the squared loss with labels in
    [-1, 1]). Replacing the row moves its party's gradient sum by <= 2 L and
    no other party's message: SGD2's sensitivity is 2 L per round. SGD1's
    message n grad l(theta; d) moves by <= 2 n L when the drawn row is the
    replaced one. The penalty alpha n theta is added by the coordinator (it
    holds no data). Accounting (SGD1's derivation for an observer who sees
    which party answers): :mod:`skdpol.distributed._accounting`.

    **What each party learns.** The models theta_k broadcast each round
    (public anyway: they are the release), its own key material, and under
    secure aggregation the keys of its own pairs. **What the coordinator
    learns.** The parties' messages (local) or only their sum (secure
    aggregation, if it is secure), the row counts of the parties (public),
    and for SGD1 which row each step drew: SGD1's amplification by sampling
    within the party holds against everyone else, *not* against the
    coordinator; ``coordinator_epsilon_`` gives the guarantee against it
    (the drawn counts composed without amplification).

    **Curator state.** The coordinator's generator (draws, seeds, mask keys
    of the simulation) is never stored on the fitted estimator; its pickle
    holds the release only.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.distributed import MultiPartyPrivateSGD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4_000, 3))
    >>> y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    >>> parties = np.repeat([0, 1, 2, 3], 1_000)     # who holds which row
    >>> clf = MultiPartyPrivateSGD(loss="log_loss", epsilon=1.0, data_norm=4.0,
    ...                            random_state=0)
    >>> clf = clf.fit(X, y, parties=parties, classes=[0, 1])
    >>> clf.n_parties_
    4
    >>> bool(clf.score(X, y) > 0.9), clf.privacy_spent_.epsilon <= 1.0
    (True, True)
    """

    _parameter_constraints = {
        "protocol": [StrOptions({"sgd2", "sgd1"})],
        "trust_model": [StrOptions({"local", "secure-aggregation"})],
        "loss": [StrOptions({"squared_error", "log_loss"})],
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "data_norm": [Interval(Real, 0, None, closed="neither"), None],
        "y_bound": [Interval(Real, 0, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="neither"), None],
        "n_rounds": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "step_schedule": [StrOptions({"auto", "nesterov", "strongly-convex", "lipschitz"})],
        "noise_calibration": [StrOptions({"tight", "paper"})],
        "noise_sampler": [StrOptions({"float", "discrete"})],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
        "ledger": [PrivacyLedger, str, os.PathLike, None],
    }

    def __init__(self, *, protocol="sgd2", trust_model="local", loss="squared_error",
                 epsilon=1.0, delta=1e-5, data_norm=None, y_bound=None, alpha=None,
                 n_rounds="auto", step_schedule="auto", noise_calibration="tight",
                 noise_sampler="discrete", fit_intercept=True, random_state=None, ledger=None):
        self.protocol = protocol
        self.trust_model = trust_model
        self.loss = loss
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.y_bound = y_bound
        self.alpha = alpha
        self.n_rounds = n_rounds
        self.step_schedule = step_schedule
        self.noise_calibration = noise_calibration
        self.noise_sampler = noise_sampler
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger

    # ----------------------------------------------------------- tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.loss == "log_loss":
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags(poor_score=True)
            tags.regressor_tags = None
        else:
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags(poor_score=True)
            tags.classifier_tags = None
        tags.input_tags.sparse = True  # in-process parties: CSR rows (utils._sparse)
        return tags

    # ----------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, parties=None, classes=None):
        """Run the protocol over the parties' rows and publish one model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or a dask array /
            dask dataframe whose row blocks (partitions) are the parties
        y : array-like of shape (n_samples,), or a dask array / series with
            the same blocks
        parties : array-like of shape (n_samples,), default=None
            Numpy input only: the party holding each row (any labels). None
            means one party holds every row.
        classes : array-like, default=None
            ``"log_loss"``: the label set (public). None reads it off ``y``
            (a leak: warns).

        Returns
        -------
        self : object
        """
        # with a ledger budget, the cost is checked before any row is read
        check_budget(self, self._fit, (X, y, parties, classes))
        run_transaction(self, self._fit, X, y, parties, classes)
        return self

    def _check_combination(self):
        if self.protocol == "sgd1" and self.trust_model != "local":
            raise ValueError("protocol='sgd1' sends one party's message per step: only "
                             "trust_model='local' applies (nothing to aggregate).")
        if self.protocol == "sgd1" and self.noise_sampler != "float":
            raise ValueError("protocol='sgd1' needs noise_sampler='float': its amplification "
                             "by sampling is accounted (dp-accounting) for continuous "
                             "Gaussian noise only.")
        if self.trust_model == "secure-aggregation" and self.noise_sampler != "discrete":
            raise ValueError("trust_model='secure-aggregation' needs noise_sampler='discrete': "
                             "shares are summed as integers (mod 2^64).")

    def _fit(self, X, y, parties, classes):
        self._check_combination()
        # every fit is a new release of its own: never a continuation of the
        # previous fit's ledger entry (which would replace, not add, its cost)
        self.__dict__.pop(HEAD, None)
        classifier = self.loss == "log_loss"
        if _is_dask(X) or _is_dask(y):
            if parties is not None:
                raise ValueError("parties must be None for dask input: its row blocks "
                                 "are the parties.")
            runner, names = self._dask_runner(X, y)
            for name in ("n_features_in_", "feature_names_in_"):
                self.__dict__.pop(name, None)
            if names is not None:
                self.feature_names_in_ = names
        else:
            runner = self._numpy_runner(X, y, parties, classifier)
        try:
            self._run(runner, classes, classifier)
        finally:
            runner.close()

    # ----------------------------------------------------------- protocol
    def _run(self, runner, classes, classifier):
        summaries, n_rows = self._summaries(runner, classes, classifier)
        data_norm, y_bound, labels, inferred = self._bounds(summaries, classes, classifier)
        sizes = [s["n_rows"] for s in summaries]
        warn_delta(self.delta, n_rows)
        loss = _loss(classifier, labels)
        plan = self._plan(n_rows, sizes, loss, self.n_features_in_)
        # dask input declares no cost up front (the parties' row counts are
        # its blocks' lengths, known once counted): the budget is checked
        # here, after the counts and before any noisy message is made
        check_planned_release(self, plan.event)
        self._alpha = alpha = plan.alpha
        k, dim, B, lip, private = plan.k, plan.dim, plan.B, plan.lip, plan.private
        R, schedule, n_rounds, lr = plan.R, plan.schedule, plan.n_rounds, plan.lr
        sensitivity, mult, event_spent = plan.sensitivity, plan.mult, plan.event
        noise_var = plan.noise_var
        p = plan.p
        rng = make_rng(self.random_state)
        seeded = is_seeded(self.random_state)
        root = int.from_bytes(rng.bytes(32), "little")
        terms = self._party_terms(plan, loss, data_norm, y_bound, labels)

        def step(t):
            # per-row smoothness plus alpha bounds the curvature of the mean
            # objective: 1 / (n beta) is the stable step on the sum
            cap = 1.0 / (n_rows * (loss.smoothness(R) + alpha))
            if schedule == "strongly-convex":
                eta = 1.0 / (alpha * n_rows * t)
            else:
                lip_a = lip + alpha * B
                eta = 2.0 * B / math.sqrt(t * (n_rows**2 * lip_a**2 + dim * noise_var))
            return min(eta, cap)

        W = np.zeros((k, p))
        if self.protocol == "sgd2":
            momentum = MOMENTUM if schedule == "nesterov" else 0.0
            if schedule == "nesterov":
                def step(t):  # noqa: F811 -- the mean-gradient step of gradient_schedule
                    return lr / n_rows
            W, per_round = self._sgd2_loop(runner, W, terms, step, n_rows, B, root, seeded,
                                           len(sizes), n_rounds, momentum)
            spent_eps, method = (epsilon_spent(event_spent, self.delta) if private
                                 else (math.inf, "none (epsilon=inf)"))
            coordinator_eps = spent_eps
        else:
            W, per_round, max_hits = self._sgd1_loop(runner, W, terms, step, sizes, B, rng,
                                                     root, seeded)
            if private:
                spent_eps = _accounting.sgd1_epsilon(mult, sizes, self.delta)
                method = "rdp (worst party, sampled without replacement within it)"
                coordinator_eps = epsilon_spent(
                    _accounting.sgd2_event(mult, max(max_hits, 1), "float"), self.delta)[0]
            else:
                spent_eps, method, coordinator_eps = math.inf, "none (epsilon=inf)", math.inf

        if private and spent_eps > self.epsilon * (1 + 1e-9):
            warnings.warn(
                f"noise_calibration={self.noise_calibration!r} has spent epsilon="
                f"{spent_eps:.4g} > epsilon={self.epsilon} (dp-accounting).",
                PrivacyLeakWarning, stacklevel=user_stacklevel())
        self._publish(W, data_norm, y_bound, labels)
        self.n_samples_seen_ = n_rows
        self.n_parties_ = len(sizes)
        self.n_rounds_ = int(n_rounds)
        self.step_schedule_ = schedule
        self.noise_multiplier_ = float(mult)
        self.sensitivity_ = float(sensitivity)
        self.bytes_per_round_ = float(per_round)
        self.coordinator_epsilon_ = float(coordinator_eps)
        self.privacy_spent_ = PrivacySpent(
            epsilon=float(spent_eps), delta=float(self.delta), accountant=method,
            bounds_trusted=not inferred, releases=1, inferred=inferred, seeded=seeded)
        record_release(self, event_spent)  # last: a refusal undoes the fit

    def _keys(self, root, seeded, tag, *index):
        # a party's noise key: derived by the coordinator only in seeded runs;
        # None makes the party draw OS entropy on its own machine
        if not seeded:
            return None
        return np.random.SeedSequence(root, spawn_key=(tag, *index)).generate_state(8)

    def _sgd2_loop(self, runner, W, terms, step, n_rows, B, root, seeded, n_parties,
                   n_rounds, momentum):
        secure = self.trust_model == "secure-aggregation"
        sent = received = 0
        V = np.zeros_like(W)
        for t in range(1, n_rounds + 1):
            # the model broadcast is the look-ahead point (W itself without
            # momentum); everything here is post-processing of the messages
            ahead = _project(W + momentum * V, B)
            keys = [self._keys(root, seeded, 0, t, i) for i in range(n_parties)]
            masks = [{} for _ in range(n_parties)]
            if secure:  # simulation: the coordinator deals the pairwise keys
                for i in range(n_parties):
                    for j in range(i + 1, n_parties):
                        key = np.random.SeedSequence(root, spawn_key=(1, t, i, j)).generate_state(8)
                        masks[i][j] = masks[j][i] = key
            messages = _receive(runner.sgd2(ahead, terms, keys, masks))
            if t == 1:
                sent = sum(payload_bytes((ahead, keys[i], masks[i])) for i in range(n_parties))
                received = sum(payload_bytes(m) for m in messages)
            if secure:
                total = secure_sum(messages).astype(np.float64) * terms.grid_step
            else:
                total = np.sum(messages, axis=0)
            grad = total.reshape(W.shape) + n_rows * self._alpha * ahead
            # Nesterov (momentum 0: projected gradient descent, the seed's
            # update); the velocity is the projected move actually made
            moved = _project(W + momentum * V - step(t) * grad, B)
            V, W = moved - W, moved
        return W, sent + received

    def _sgd1_loop(self, runner, W, terms, step, sizes, B, rng, root, seeded):
        # the public schedule: party k answers n n_k of the n^2 steps in a random
        # order (seen by all), each on a row drawn among its own (_accounting)
        n_rows, starts = sum(sizes), np.cumsum([0] + sizes[:-1])
        owners = rng.permutation(np.repeat(np.arange(len(sizes)), _accounting.sgd1_turns(sizes)))
        rows = rng.integers(0, np.asarray(sizes)[owners])  # the coordinator's draws
        per_step = 0
        for t, (row, party) in enumerate(zip(rows, owners), start=1):
            key = self._keys(root, seeded, 2, t)
            message = _receive(runner.sgd1(int(party), int(row), W, n_rows, terms, key))
            if t == 1:
                per_step = payload_bytes((int(row), W, key)) + payload_bytes(message)
            grad = message.reshape(W.shape) + n_rows * self._alpha * W
            W = _project(W - step(t) * grad, B)
        max_hits = int(np.bincount(starts[owners] + rows, minlength=n_rows).max())
        return W, per_step, max_hits

    def _publish(self, W, data_norm, y_bound, labels):
        d = W.shape[1] - int(self.fit_intercept)
        coef = W[:, :d] / data_norm
        intercept = W[:, d].copy() if self.fit_intercept else np.zeros(W.shape[0])
        if labels is not None:
            self.classes_ = labels
            self.coef_, self.intercept_ = coef, intercept
        else:
            self.__dict__.pop("classes_", None)
            self.coef_, self.intercept_ = coef[0] * y_bound, float(intercept[0] * y_bound)

    # ----------------------------------------------------------- predict
    def _validated(self, X):
        check_is_fitted(self, "coef_")
        return csr_rows(validate_data(self, X, reset=False, dtype=np.float64,
                                      accept_sparse=ACCEPT_SPARSE))

    def _is_classifier(self):
        return self.loss == "log_loss"

    @available_if(_is_classifier)
    def decision_function(self, X):
        """Margins (one column for two classes)."""
        return _decision(self._validated(X), self.coef_, self.intercept_)

    @available_if(_is_classifier)
    def predict_proba(self, X):
        """Class probabilities of the published model."""
        return _proba(self.decision_function(X))

    def predict(self, X):
        """Labels (``"log_loss"``) or values (``"squared_error"``)."""
        if self.loss == "log_loss":
            check_is_fitted(self, "classes_")
            return _predict(self.decision_function(X), self.classes_)
        X = self._validated(X)
        return X @ self.coef_ + self.intercept_

    def score(self, X, y, sample_weight=None):
        """Accuracy (``"log_loss"``) or R^2 (``"squared_error"``)."""
        metric = accuracy_score if self.loss == "log_loss" else r2_score
        return metric(y, self.predict(X), sample_weight=sample_weight)

    def public_model(self):
        """The shareable release: parameters, ``privacy_spent_``, nothing else."""
        check_is_fitted(self, "coef_")
        if self.loss == "log_loss":
            return PublicLinearClassifier._from_release(self)
        return PublicLinearRegressor._from_release(self)


def _project(W, radius):
    norm = np.linalg.norm(W)
    return W if norm <= radius else W * (radius / norm)

"""The checks of :class:`~skdpol.model_selection.PrivateHyperparameterSearch`
on its estimator and its grid (public: they read no data)."""

from sklearn.base import clone, is_classifier, is_regressor
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline

from ..pipeline import refuse_unless_public

# what the search sets on every run: a grid may not vary them
_RESERVED = ("epsilon", "delta", "random_state", "ledger")


class _SearchChecks:
    """The search's estimator and grid checks (a mixin of the search)."""

    # ----------------------------------------------------------- checks (public)
    def _final(self, estimator=None):
        estimator = self.estimator if estimator is None else estimator
        if isinstance(estimator, Pipeline):
            return estimator.steps[-1][0], estimator.steps[-1][1]
        return None, estimator

    def _check_estimator(self):
        name, final = self._final()
        params = final.get_params(deep=False) if hasattr(final, "get_params") else {}
        if not (type(final).__module__.startswith("skdpol.")
                and {"epsilon", "delta", "ledger"} <= set(params)
                and (is_classifier(final) or is_regressor(final))):
            raise ValueError(
                "PrivateHyperparameterSearch needs a skdpol classifier or regressor (or a "
                "Pipeline ending in one) with epsilon, delta and ledger parameters; got "
                f"{type(final).__name__}.")
        if isinstance(self.estimator, Pipeline):
            refuse_unless_public(self.estimator.steps[:-1], "the Pipeline's earlier steps are "
                                 "fitted on the training rows of every run")
        for obj in [final] + ([s for _, s in self.estimator.steps[:-1]]
                              if isinstance(self.estimator, Pipeline) else []):
            if hasattr(obj, "get_params") and obj.get_params(deep=False).get("ledger") is not None:
                raise ValueError(
                    f"{type(obj).__name__} has its own ledger: give the ledger to "
                    "PrivateHyperparameterSearch (ledger=...), which records the whole "
                    "search as one entry; the runs record nothing themselves.")
        return name, final

    def _grid(self, name, final):
        grid = self.param_distributions
        for point in [grid] if isinstance(grid, dict) else grid:
            if not isinstance(point, dict):
                raise TypeError("param_distributions must be a dict or a list of dicts.")
            for key, values in point.items():
                param = key.rsplit("__", 1)[-1]
                if param in _RESERVED or (param == "y_bound" and is_regressor(final)):
                    what = ("the search sets it on every run from its own epsilon and "
                            "delta" if param in ("epsilon", "delta") else
                            "the score is clipped to one public y_bound" if param == "y_bound"
                            else "the search sets it")
                    raise ValueError(
                        f"param_distributions may not vary {key!r}: {what}. Remove it "
                        "(the search's epsilon is the budget of the whole search).")
                if not hasattr(values, "__len__") or isinstance(values, str):
                    raise TypeError(
                        f"param_distributions[{key!r}] must be a list of values (a grid "
                        "point is drawn uniformly): the search bounds every candidate's "
                        "cost, so a continuous distribution is not supported.")
        candidates = list(ParameterGrid(grid))
        if not candidates:
            raise ValueError("param_distributions holds no candidate.")
        valid = set(self.estimator.get_params(deep=True))
        for point in candidates:
            for key in point:
                if key not in valid:
                    raise ValueError(f"invalid parameter {key!r} for {type(self.estimator).__name__}.")
            if isinstance(self.estimator, Pipeline):  # every point, not the drawn ones (K)
                refuse_unless_public(clone(self.estimator).set_params(**point).steps[:-1],
                                     f"the grid point {point}")
        return candidates

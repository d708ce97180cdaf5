"""Fit parameters of a search, routed the way ``GridSearchCV`` routes them.

``search.fit(X, y, logistic__classes=[0, 1])`` over a Pipeline whose final
step is named ``logistic`` means what it means to ``GridSearchCV``: the
final step's ``fit`` gets ``classes=[0, 1]``. The final step of a private
search accepts only ``classes`` (the public label set; a per-row parameter
such as ``sample_weight`` would change the fit's sensitivity). Parameters
of earlier steps go to their ``fit`` as in ``Pipeline.fit``; those with
one value per row are cut to the training rows (as ``GridSearchCV`` cuts
them to each fold).
"""

from sklearn.pipeline import Pipeline
from sklearn.utils.validation import _check_method_params


def route_fit_params(estimator, classes, fit_params):
    """(classes, params of the earlier steps) from ``fit``'s arguments.

    Raises TypeError for a parameter the final estimator's ``fit`` does not
    take, ValueError for a name that is not ``<step>__<param>`` of the
    Pipeline or for ``classes`` given twice.
    """
    if not fit_params:
        return classes, {}
    if not isinstance(estimator, Pipeline):
        key = next(iter(fit_params))
        raise TypeError(f"{type(estimator).__name__}.fit got an unexpected keyword argument "
                        f"{key!r} (a private search passes only classes).")
    names = [name for name, _ in estimator.steps]
    final = names[-1]
    earlier = {}
    for key, value in fit_params.items():
        step, sep, param = key.partition("__")
        if not sep or step not in names:
            raise ValueError(
                f"Pipeline.fit does not accept the {key} parameter: name it "
                f"<step>__<parameter>, the step one of {names}.")
        if step != final:
            earlier[key] = value
        elif param != "classes":
            raise TypeError(
                f"{type(estimator.steps[-1][1]).__name__}.fit got an unexpected keyword "
                f"argument {param!r} (routed from {key!r}; a private search passes only "
                "classes to the final step).")
        elif classes is not None:
            raise ValueError(f"classes given twice: as classes and as {key}.")
        else:
            classes = value
    return classes, earlier


def training_params(X, params, train_idx):
    """``params`` with the per-row ones cut to the training rows."""
    return _check_method_params(X, params, indices=train_idx) if params else {}

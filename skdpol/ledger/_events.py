"""``DpEvent`` <-> JSON, so that a recorded release can be rebuilt and composed.

dp-accounting's events are attrs classes of ``dp_accounting.dp_event``; an
event becomes ``{"type": class name, field: value, ...}``, nested events
recursively. Only classes of that module are rebuilt, so a ledger file
cannot make the reader instantiate anything else. Infinite parameters (a
release without noise: ``rho=inf``) are written as JSON ``Infinity``, which
Python's json reads back.
"""

import json
import math
from numbers import Integral, Real

import attr
import numpy as np
from dp_accounting import dp_event


def _encode(value):
    if isinstance(value, dp_event.DpEvent):
        return event_to_dict(value)
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot serialise {type(value).__name__} in a DpEvent.")


def event_to_dict(event):
    """A JSON-able dict of ``event`` (a dp-accounting ``DpEvent``)."""
    cls = type(event)
    if not (attr.has(cls) and getattr(dp_event, cls.__name__, None) is cls):
        raise TypeError(f"not a dp_accounting.dp_event event: {event!r}")
    out = {"type": cls.__name__}
    for field in attr.fields(cls):
        out[field.name] = _encode(getattr(event, field.name))
    return out


def _decode(value):
    if isinstance(value, dict):
        return event_from_dict(value)
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def event_from_dict(data):
    """The ``DpEvent`` that :func:`event_to_dict` wrote."""
    name = data.get("type")
    cls = getattr(dp_event, str(name), None)
    if not (isinstance(cls, type) and issubclass(cls, dp_event.DpEvent) and attr.has(cls)):
        raise ValueError(f"unknown DpEvent type {name!r} in the ledger.")
    return cls(**{k: _decode(v) for k, v in data.items() if k != "type"})


def dumps(event):
    """``event`` as a JSON string."""
    return json.dumps(event_to_dict(event), sort_keys=True)


def loads(text):
    """The ``DpEvent`` of a JSON string written by :func:`dumps`."""
    return event_from_dict(json.loads(text))


def params_json(params):
    """Estimator parameters as JSON; what JSON cannot hold is kept as its repr."""

    def default(value):
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
        return repr(value)

    clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in params.items()}
    return json.dumps(clean, sort_keys=True, default=default)

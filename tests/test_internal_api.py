"""The declared internal API: no module reaches into another subpackage's
private modules.

A subpackage's user API is its ``__all__``; what its siblings may use besides
is its ``_internal`` tuple, re-exported by its ``__init__``. A sibling imports
either from the package (``from ..online import ALGORITHMS``), never from a
private module (``from ..online._registry import ALGORITHMS``). Read from the
source with ``ast``: nothing is imported to find the imports.
"""

import ast
import importlib
from pathlib import Path

import pytest

import skdpol

ROOT = Path(skdpol.__file__).parent
SUBPACKAGES = sorted(p.parent.name for p in ROOT.glob("*/__init__.py"))


def _imports():
    """(file, line, target module parts, imported names) of every relative
    ``from ... import`` in the package."""
    for path in sorted(ROOT.rglob("*.py")):
        package = ["skdpol", *path.relative_to(ROOT).parts[:-1]]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                base = package[:len(package) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                yield path, node.lineno, target, [a.name for a in node.names]


def _sibling(path, target):
    """The subpackage ``target`` lies in, when ``path`` is outside it (else None)."""
    if len(target) < 2 or target[1] not in SUBPACKAGES:
        return None
    inside = path.relative_to(ROOT).parts
    return None if len(inside) > 1 and inside[0] == target[1] else target[1]


def test_no_module_reaches_into_a_siblings_private_module():
    reaching = [f"{path.relative_to(ROOT.parent)}:{line}: from {'.'.join(target)}"
                for path, line, target, _ in _imports()
                if _sibling(path, target) and any(p.startswith("_") for p in target[2:])]
    assert not reaching, ("import these names from the subpackage (declared in its "
                          "_internal) instead:\n" + "\n".join(reaching))


def test_what_siblings_import_is_declared():
    undeclared = []
    for path, line, target, names in _imports():
        sub = _sibling(path, target)
        if sub is None or len(target) != 2:
            continue
        package = importlib.import_module(f"skdpol.{sub}")
        declared = set(getattr(package, "__all__", ())) | set(getattr(package, "_internal", ()))
        for name in names:
            is_module = (ROOT / sub / f"{name}.py").exists() or (ROOT / sub / name).is_dir()
            if name not in declared and not is_module:
                undeclared.append(f"{path.relative_to(ROOT.parent)}:{line}: {sub}.{name}")
    assert not undeclared, ("add these names to the subpackage's _internal (or __all__):\n"
                            + "\n".join(undeclared))


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_the_declared_names_exist(sub):
    package = importlib.import_module(f"skdpol.{sub}")
    internal = getattr(package, "_internal", ())
    assert isinstance(internal, tuple)
    assert [name for name in internal if not hasattr(package, name)] == []


def test_the_check_sees_a_reach_into_a_private_module(tmp_path):
    # the rule itself: a private module of another subpackage is caught, the
    # package and a module's own subpackage are not
    path = ROOT / "linear_model" / "_base.py"
    assert _sibling(path, ["skdpol", "online", "_registry"]) == "online"
    assert _sibling(path, ["skdpol", "linear_model", "_units"]) is None
    assert _sibling(ROOT / "_fit_command.py", ["skdpol", "ledger", "_hook"]) == "ledger"

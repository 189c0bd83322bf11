"""A package's public names loaded on first use (PEP 562), so that importing it costs little: ``webmem`` and
``webmem.service`` name many things that need SQLAlchemy, pydantic or the whole library underneath."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str], public: Sequence[str]) -> tuple[
        Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name of ``homes`` is read from its module (a path
    relative to the package, ``.core.models``) the first time it is asked for, then kept; a submodule is
    imported when asked for; ``__dir__`` lists the package's names and ``public``."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is not None:
            value = namespace[name] = getattr(importlib.import_module(home, package), name)
            return value
        if not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__

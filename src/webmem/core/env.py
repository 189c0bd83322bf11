"""Numbers read from environment variables (limits and timeouts that a deployment tunes), checked."""

from __future__ import annotations

import math
import os

from .errors import InvalidInput


def env_number(name: str, default: float, *, whole: bool = False, above: float | None = None,
               at_least: float | None = None, at_most: float | None = None) -> float:
    """``$name`` as a number within the bounds given, ``default`` when unset or blank; InvalidInput names
    the variable when it is not one."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(int(text)) if whole else float(text)
    except ValueError:
        raise InvalidInput(f"{name}: expected {'a whole number' if whole else 'a number'}, got {text!r}") from None
    if math.isnan(value) or (above is not None and value <= above) or (at_least is not None and value < at_least) \
            or (at_most is not None and value > at_most):
        bounds = [f"more than {above:g}" if above is not None else "", f"at least {at_least:g}" if at_least is not None
                  else "", f"at most {at_most:g}" if at_most is not None else ""]
        raise InvalidInput(f"{name}: expected {' and '.join(bound for bound in bounds if bound)}, got {text!r}")
    return value

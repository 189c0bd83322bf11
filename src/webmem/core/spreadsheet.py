"""CSV cells that a spreadsheet cannot run: text that would start a formula is prefixed with a quote.

A page text such as ``=HYPERLINK("http://evil.example", "Click")`` written to a CSV cell becomes a live
formula when the file is opened in a spreadsheet (CSV injection). OWASP's rule is applied: a text cell
that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a leading ``'``.
"""

from __future__ import annotations

from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet shows as text (non-text values are left as they are)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row: dict[str, Any], *, raw: bool = False) -> dict[str, Any]:
    """Every cell of ``row`` through :func:`safe_cell`, unless ``raw``."""
    return row if raw else {key: safe_cell(value) for key, value in row.items()}

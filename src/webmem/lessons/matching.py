"""Which stored lessons speak to a failure: the error must show the lesson's pattern (the command alone
is never enough), a lesson about the failed command ranks first, and a lesson about a site is only for
that site."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core.urls import domain_matches, site_of
from .learning import command_name, error_forms

RECALL_LIMIT = 3


def lessons_for_error(rows: Iterable[Any], command: str, error: str, site: str | None) -> list[str]:
    """The ids of the lessons for a failed command, best first: about this command first, then about this
    site, then the most used. A lesson about one site outranks the same advice for everywhere, which is
    then left out.
    """
    name = command_name(command) or ""
    forms = error_forms(error)
    fitting = [
        row for row in rows
        if row.error_pattern and any(row.error_pattern in form for form in forms)
        and applies_on(row.domain, site)
    ]
    fitting.sort(key=lambda row: (row.failed_command != name, row.domain is None, -row.use_count,
                                  row.source == "seed", row.lesson_id))
    chosen: list[str] = []
    seen: set[tuple[str | None, str | None]] = set()
    for row in fitting:
        failure = (row.failed_command, row.error_pattern)
        if failure in seen:
            continue
        seen.add(failure)
        chosen.append(row.lesson_id)
    return chosen


def applies_on(scope: str | None, site: str | None) -> bool:
    """Whether a lesson about ``scope`` (None: everywhere) may be given on ``site`` (None: unknown)."""
    return scope is None or (site is not None and domain_matches(scope, site))


def distinct_sites(domains: Iterable[str]) -> set[str]:
    """The registrable sites among domain keys: three ports of localhost are one site."""
    return {site_of(domain) for domain in domains}

"""Site changes: when a page no longer has what memory remembers of it, say so and stop trusting the old memory.

A replay that finds a remembered target gone (or present with another role) although every earlier
run found it there reports the step as ``stale``. That is evidence that the site changed: it is kept
as a ``site_changed`` fact on the page (its path), with the time and the evidence; the selectors of the
elements the remembered run used on that page are marked stale (withheld until they work again), and
the trajectories recorded on that page before the change are no longer replayed, and are given as a
reference only with a warning, until a run after the change succeeds there and is remembered instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import Connection

from .core.errors import InvalidInput
from .core.models import Fact, ReplayReport, Trajectory
from .core.text import clean_for_prompt
from .core.urls import check_url, domain_of, page_path
from .knowledge import AppKnowledge
from .selectors import SelectorCache
from .store.scope import Scope
from .trajectories.plans import changed_after

SITE_CHANGED = "site_changed"


class SiteChanges:
    """Records site changes and answers which remembered runs they made stale."""

    def __init__(self, scope: Scope, knowledge: AppKnowledge, selectors: SelectorCache) -> None:
        self._scope = scope
        self._ns = scope.namespace
        self._knowledge = knowledge
        self._selectors = selectors

    def record(self, url: str, evidence: str, *, elements: Iterable[str] = (), run_id: str | None = None) -> Fact:
        """Record that the page at ``url`` changed, with ``evidence`` (what was found missing), and mark
        the selectors of ``elements`` (identities such as ``button "Search"``) on its domain stale."""
        url = check_url(url)
        if not isinstance(evidence, str) or not evidence.strip():
            raise InvalidInput("evidence: expected a non-empty string saying what changed")
        if isinstance(elements, str):
            raise InvalidInput("elements: expected a list of element identities, not one string")
        domain = domain_of(url)
        with self._scope.store.write():
            fact = self._knowledge.record_fact(domain, SITE_CHANGED, page_path(url), clean_for_prompt(evidence, 900),
                                               run_id=run_id)
            marked = self._selectors.mark_stale(domain, list(elements), since=fact.last_seen)
        self._scope.emit("site_changed", run_id=run_id, domain=domain, page=fact.key, evidence=fact.value,
                         stale_selectors=marked)
        return fact

    def record_replay(self, report: ReplayReport, trajectory: Trajectory | None, *, run_id: str | None = None) -> int:
        """Record the site changes a replay's ``stale`` steps give evidence of (the selectors of the
        trajectory's elements on a changed page go stale, except those the replay just found); returns
        how many pages changed."""
        pages: dict[tuple[str, str], tuple[str, list[str]]] = {}  # (domain, path) -> a URL of it, evidence
        for step in report.steps:
            if step.status == "stale" and step.url is not None:
                _, evidence = pages.setdefault((domain_of(step.url), page_path(step.url)), (step.url, []))
                evidence.append(f"{step.target or step.action}: {step.reason or 'gone'}")
        found = {step.target for step in report.steps if step.status in ("hit", "healed")}
        for (domain, page), (url, evidence) in pages.items():
            used = [s.target for s in (trajectory.steps if trajectory else []) if s.target and s.target not in found
                    and s.url and domain_of(s.url) == domain and page_path(s.url) == page]
            self.record(url, f"replay of {report.trajectory_id} found: " + "; ".join(evidence),
                        elements=used, run_id=run_id)
        return len(pages)

    def pages(self, conn: Connection, domain: str) -> dict[str, datetime]:
        """When each changed page of ``domain`` last changed (its path -> time), read in ``conn``'s transaction."""
        return changed_pages(self._knowledge.facts(domain, type=SITE_CHANGED, min_confidence=0.0))

    def stale_since(self, conn: Connection, trajectory: Trajectory, *,
                    known: Sequence[Fact] | None = None) -> datetime | None:
        """When a page the trajectory went through changed after it was recorded (None if none did).
        ``known``: the facts of the trajectory's domain already read (every confidence)."""
        return changed_after(trajectory, self.pages(conn, trajectory.domain) if known is None else changed_pages(known))


def changed_pages(known: Sequence[Fact]) -> dict[str, datetime]:
    """When each changed page of a domain last changed (its path -> time), from the domain's facts."""
    pages: dict[str, datetime] = {}
    for fact in known:
        if fact.type == SITE_CHANGED and (fact.key not in pages or fact.last_seen > pages[fact.key]):
            pages[fact.key] = fact.last_seen
    return pages

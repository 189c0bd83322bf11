"""The selector cache: element identities mapped to selectors that worked, ranked by successes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Text, bindparam, case, func, or_, select, update

from .core.clock import utcnow
from .core.errors import InvalidInput
from .core.events import Event
from .core.models import SelectorEntry, positive_int, validated
from .core.records import stored_record
from .core.text import clean_for_prompt
from .core.urls import check_domain
from .store.engine import retried
from .store.prepared import Prepared, Read
from .store.schema import selectors
from .store.scope import Scope
from .store.statements import dialect_insert
from .store.types import UTCDateTime

PROMPT_LIMIT = 20
MAX_ELEMENT_LENGTH = 200  # longer identities are not cached: they make poor keys


def is_cacheable(element: str) -> bool:
    return 0 < len(element) <= MAX_ELEMENT_LENGTH
_ENTRY_COLUMNS = [column for column in selectors.c if column.name != "namespace"]
_ENTRY_NAMES = [column.name for column in _ENTRY_COLUMNS]
_BEST_OF_DOMAIN = Prepared(
    select(*_ENTRY_COLUMNS)
    .where(selectors.c.namespace == bindparam("ns"), selectors.c.domain == bindparam("domain"),
           or_(selectors.c.stale_since.is_(None), selectors.c.last_used > selectors.c.stale_since))
    .order_by(selectors.c.success_count.desc(), selectors.c.last_used.desc(), selectors.c.element)
    .limit(bindparam("limit"))
)


def counting_success(statement: Any, slot: str) -> Any:
    """``statement``, an INSERT of an entry in its dialect, made to count one more success of the existing
    entry instead (its ``slot`` selector replaced), returning what an existing entry changes."""
    return statement.on_conflict_do_update(
        index_elements=["namespace", "domain", "element"],
        set_={"success_count": selectors.c.success_count + 1, "last_used": statement.excluded.last_used,
              slot: statement.excluded[slot]},
    ).returning(*(selectors.c[name] for name in _COUNTED))


def _count_success(slot: str) -> Prepared:
    """Insert an entry, or count one more success of the existing one (its ``slot`` selector replaced)."""
    return Prepared(lambda dialect: counting_success(dialect_insert(dialect)(selectors).values(
        {column.name: bindparam(column.name) for column in selectors.c if column.name != "stale_since"}
    ), slot))


@dataclass(frozen=True)
class StepSelector:
    """A recorded step's selector to count: which of the entry's selectors it is (``slot``) and the entry's row."""

    slot: str
    row: dict[str, Any]


_MERGE_ENTRY = Prepared(update(selectors).where(
    *(selectors.c[name] == bindparam(name) for name in ("namespace", "domain", "element"))
).values(
    success_count=case((selectors.c.success_count < bindparam("success_count"), bindparam("success_count")),
                       else_=selectors.c.success_count),
    stable_selector=func.coalesce(selectors.c.stable_selector, bindparam("stable_selector", type_=Text)),
    last_ref=func.coalesce(selectors.c.last_ref, bindparam("last_ref", type_=selectors.c.last_ref.type)),
    last_used=case((selectors.c.last_used < bindparam("last_used", type_=UTCDateTime), bindparam("last_used", type_=UTCDateTime)), else_=selectors.c.last_used),
))
_INSERT_ENTRY = Prepared(selectors.insert())  # every column, each a parameter of its own name
_COUNTED = ("success_count", "stable_selector", "last_ref", "stale_since")  # what an existing entry changes
_COUNT_SUCCESS = {slot: _count_success(slot) for slot in ("last_ref", "stable_selector")}


def is_ref(selector: str) -> bool:
    """A selector starting with ``@`` is a snapshot ref, valid for one page state only."""
    return selector.startswith("@")


class SelectorCache:
    """Remembers which selector reached which element (``button "Search"``) on each domain."""

    def __init__(self, scope: Scope) -> None:
        self._scope = scope
        self._ns = scope.namespace

    @retried
    def record(self, domain: str, element: str, selector: str, *, run_id: str | None = None) -> SelectorEntry:
        """Count one success of ``selector`` for ``element``; a ref is kept apart from stable selectors."""
        if not isinstance(selector, str) or not selector.strip():
            raise InvalidInput(f"selector: expected a non-empty string, got {selector!r}")
        selector = self._scope.redact(selector.strip()) or ""
        element = self._scope.redact(element) if isinstance(element, str) else element
        now = utcnow()
        slot = "last_ref" if is_ref(selector) else "stable_selector"
        entry = validated(
            SelectorEntry,
            domain=check_domain(domain),
            element=element,
            success_count=1,
            last_used=now,
            **{slot: selector},
        )
        row = {"namespace": self._ns, **entry.model_dump(exclude={"stale_since"})}
        with self._scope.store.write() as conn:
            counted = _COUNT_SUCCESS[slot].first(conn, row)
        stored = entry.model_copy(update=dict(zip(_COUNTED, counted)))
        self._scope.emit(
            "selector_recorded", run_id=run_id, domain=stored.domain, element=stored.element,
            selector=selector, success_count=stored.success_count,
        )
        return stored

    def step_selector(self, domain: str, element: str, selector: str) -> StepSelector | None:
        """What counting a recorded step's selector writes (``Run.record_step``: the step is validated and
        redacted, ``domain`` is a domain key); None for a step whose element or ref cannot be a key (empty,
        longer than 200 characters): its step is stored all the same, not cached."""
        element, selector = element.strip(), selector.strip()
        slot = "last_ref" if is_ref(selector) else "stable_selector"
        if not is_cacheable(element) or not selector or slot == "last_ref" and len(selector) > MAX_ELEMENT_LENGTH:
            return None
        return StepSelector(slot, {"namespace": self._ns, "domain": domain, "element": element, "success_count": 1,
                                   "last_used": utcnow(), "stable_selector": None, "last_ref": None, slot: selector})

    def count_step(self, counting: StepSelector) -> int:
        """Count one success of a recorded step's selector, inside the step's write; returns the entry's count."""
        with self._scope.store.write() as conn:
            counted = _COUNT_SUCCESS[counting.slot].first(conn, counting.row)
        return int(counted[0]) if counted else 1

    @staticmethod
    def counted_event(counting: StepSelector, success_count: int, *, run_id: str) -> Event:
        """The event that tells a recorded step's selector was counted (``webmem.step_writes`` counts it with
        the step), for :meth:`webmem.store.scope.Scope.emit_all`."""
        row = counting.row
        return "selector_recorded", run_id, {"domain": row["domain"], "element": row["element"],
                                             "selector": row[counting.slot], "success_count": success_count}

    def import_entry(self, entry: SelectorEntry) -> str:
        """Store an entry as it is; an existing one keeps the larger count and fills in what it lacks.

        Returns ``"added"`` or ``"merged"``.
        """
        if not isinstance(entry, SelectorEntry):
            raise InvalidInput("entry: expected a webmem.SelectorEntry")
        row = {"namespace": self._ns, **entry.model_dump()}
        with self._scope.store.write() as conn:
            merged = _MERGE_ENTRY.rowcount(conn, row)
            if not merged:
                _INSERT_ENTRY.execute(conn, row).close()
        return "merged" if merged else "added"

    def mark_stale(self, domain: str, elements: Sequence[str], *, since: datetime) -> int:
        """Withhold the selectors of ``elements`` on ``domain`` that last worked before ``since`` (the site
        changed under them) until one works again (a success after ``since`` lifts it); returns how many
        were marked."""
        elements = [self._scope.redact(element) for element in elements if isinstance(element, str)]
        if not elements:
            return 0
        with self._scope.store.write() as conn:
            return int(conn.execute(update(selectors).where(
                selectors.c.namespace == self._ns, selectors.c.domain == check_domain(domain),
                selectors.c.element.in_(sorted(set(elements))), selectors.c.last_used < since,
            ).values(stale_since=since)).rowcount)

    def list(self, domain: str, *, limit: int = PROMPT_LIMIT) -> list[SelectorEntry]:  # noqa: A003
        """The most successful entries of a domain, most successes first (stale ones withheld)."""
        positive_int(limit, field="limit")
        params = {"ns": self._ns, "domain": check_domain(domain), "limit": limit}
        with self._scope.store.read() as conn:
            return [_entry(row) for row in _BEST_OF_DOMAIN.rows(conn, params)]

    def context_reads(self, domain: str) -> list[Read]:
        """The read a run's context makes here (:meth:`format_for_prompt`), to be read ahead."""
        return [(_BEST_OF_DOMAIN, {"ns": self._ns, "domain": check_domain(domain), "limit": PROMPT_LIMIT})]

    def domains(self) -> list[str]:
        """Every domain with selectors in this namespace."""
        with self._scope.store.read() as conn:
            return sorted(conn.execute(
                select(selectors.c.domain).where(selectors.c.namespace == self._ns).distinct()
            ).scalars())

    def format_for_prompt(self, domain: str, limit: int = PROMPT_LIMIT) -> str:
        """One line per known element: identity, stable selector, last ref and success count."""
        lines = []
        for entry in self.list(domain, limit=limit):
            reach = [f"selector {clean_for_prompt(entry.stable_selector, 200)}"] if entry.stable_selector else []
            if entry.last_ref:
                reach.append(f"ref {clean_for_prompt(entry.last_ref, 40)}")
            times = "success" if entry.success_count == 1 else "successes"
            lines.append(
                f"- {clean_for_prompt(entry.element, 160)} -> {', '.join(reach)} ({entry.success_count} {times})"
            )
        return "\n".join(lines)


def _entry(row: Any) -> SelectorEntry:
    return stored_record(SelectorEntry, _ENTRY_NAMES, row)

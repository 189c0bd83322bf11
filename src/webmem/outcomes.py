"""What memory gave each run, and how the run ended: the gate that keeps memory from making an agent worse.

A run notes the advice it was given (the reference trajectory, the lessons recalled for it) and the
parts of its context that were included. When it finishes, each piece of advice counts a run given
it and whether it succeeded. Advice whose followers keep failing is demoted (no longer replayed) and
then withheld; a replay that handed over before doing anything (the recording did not apply) is no
failure of its recording. Per site, a part of the context (known selectors, the reference, tips...) whose runs
succeed measurably less often than runs without it is turned off there, with an event saying why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Table, bindparam, select, update

from .core.clock import utcnow
from .core.errors import TrajectoryNotFound
from .core.models import ReplayReport, Trajectory
from .store.prepared import Prepared, Read
from .store.schema import advice_items, advice_parts
from .store.scope import Scope
from .store.statements import dialect_insert

if TYPE_CHECKING:
    from .memory import Memory

GATED_PARTS = (
    "session_history", "site_tips", "episode_advice", "reference_trajectory", "app_knowledge", "known_selectors",
)
DEMOTE_AFTER_FAILURES = 2
WITHHOLD_AFTER_FAILURES = 4
PART_MIN_RUNS = 5  # runs with and runs without a part before it may be judged
PART_MARGIN = 0.25  # how much lower the success rate with a part must be to turn it off


def _count_item_statement(dialect: str) -> Any:
    """Count a run given the item (its status as it was before comes back, with the new counts)."""
    statement = dialect_insert(dialect)(advice_items).values(
        namespace=bindparam("namespace"), kind=bindparam("kind"), item=bindparam("item"), given=1,
        successes=bindparam("successes"), status="given", updated_at=bindparam("updated_at"),
    )
    return statement.on_conflict_do_update(
        index_elements=["namespace", "kind", "item"],
        set_={"given": advice_items.c.given + 1, "successes": advice_items.c.successes + statement.excluded.successes,
              "updated_at": statement.excluded.updated_at},
    ).returning(advice_items.c.given, advice_items.c.successes, advice_items.c.status)


def _count_parts_statement(dialect: str) -> Any:
    """Count a run with or without each gated part, one row per part; parts turned off are left alone
    (nothing comes back for them)."""
    counters = ("given", "given_successes", "absent", "absent_successes")
    statement = dialect_insert(dialect)(advice_parts).values([
        {"namespace": bindparam("namespace"), "site": bindparam("site"), "part": bindparam(f"part_{number}"),
         **{name: bindparam(f"{name}_{number}") for name in counters}, "updated_at": bindparam("updated_at")}
        for number in range(len(GATED_PARTS))
    ])
    return statement.on_conflict_do_update(
        index_elements=["namespace", "site", "part"],
        set_={**{name: advice_parts.c[name] + statement.excluded[name] for name in counters},
              "updated_at": statement.excluded.updated_at},
        where=advice_parts.c.off_reason.is_(None),
    ).returning(advice_parts.c.part, *(advice_parts.c[name] for name in counters))


def _key_of(table: Table, *names: str) -> list[Any]:
    return [table.c[name] == bindparam(name) for name in names]


_COUNT_ITEM = Prepared(_count_item_statement)
_SET_ITEM_STATUS = Prepared(update(advice_items).where(*_key_of(advice_items, "namespace", "kind", "item"))
                            .values(status=bindparam("status")))
_COUNT_PARTS = Prepared(_count_parts_statement)
_TURN_PART_OFF = Prepared(update(advice_parts).where(*_key_of(advice_parts, "namespace", "site", "part"))
                          .values(off_reason=bindparam("off_reason")))
_ITEM_STATUS = Prepared(select(advice_items.c.status).where(*_key_of(advice_items, "kind", "item"),
                                                            advice_items.c.namespace == bindparam("ns")))
_PARTS_OFF = Prepared(select(advice_parts.c.part, advice_parts.c.off_reason).where(
    advice_parts.c.namespace == bindparam("ns"), advice_parts.c.site == bindparam("site"),
    advice_parts.c.off_reason.is_not(None),
))


@dataclass
class GivenAdvice:
    """What one run was given so far: parts of its context that were included, and pieces of advice."""

    parts: set[str] = field(default_factory=set)
    items: set[tuple[str, str]] = field(default_factory=set)

    def note_parts(self, included: Iterable[str]) -> None:
        self.parts.update(name for name in included if name in GATED_PARTS)

    def note(self, kind: str, item_ids: Iterable[str]) -> None:
        self.items.update((kind, item_id) for item_id in item_ids)


@dataclass(frozen=True)
class AdviceRecord:
    """How the runs that were given one piece of advice ended."""

    kind: str
    item: str
    given: int
    successes: int
    status: str  # given, demoted or withheld

    @property
    def failures(self) -> int:
        return self.given - self.successes


#: Replayed actions that only look around: they change nothing a run is judged by.
_LOOKING = re.compile(r'^(link|tab|treeitem|menuitem) "')
_PASSIVE_ACTIONS = frozenset({"goto", "wait", "scroll", "hover"})


def replay_acted(report: ReplayReport) -> bool:
    """Whether a replay did anything a run is judged by before it ended: a step it replayed (hit or healed)
    that typed, chose, checked, pressed or clicked something other than a link or tab. A replay that handed
    over before that found the recording does not apply to this instance; it did not fail."""
    return report.outcome != "handed_over" or any(
        step.status in ("hit", "healed") and step.action not in _PASSIVE_ACTIONS
        and not (step.action == "click" and _LOOKING.match(step.target or ""))
        for step in report.steps)


def learn_from_replay(mem: Memory, replay: ReplayReport, given: GivenAdvice, *, run_id: str, success: bool) -> None:
    """What a finished run's replay teaches (inside the run's finishing transaction): its task shape's replay
    gate; the advice gate counts the replayed recording only when the replay acted (one that handed over
    before acting found the recording does not apply to this instance, which is no failure of it); and a
    step found stale is evidence that the site changed."""
    mem.trajectories.record_replay(replay, run_id=run_id, success=success)
    if replay_acted(replay):
        given.note("reference", [replay.trajectory_id])
    else:
        given.items.discard(("reference", replay.trajectory_id))
    if any(step.status == "stale" for step in replay.steps):
        try:
            trajectory: Trajectory | None = mem.trajectories.get(replay.trajectory_id)
        except TrajectoryNotFound:  # forgotten since the replay started
            trajectory = None
        mem.site_changes.record_replay(replay, trajectory, run_id=run_id)


def status_for(given: int, successes: int) -> str:
    """Demoted after 2 failed runs when failures outnumber successes; withheld after 4 when they are
    more than twice the successes."""
    failures = given - successes
    if failures >= WITHHOLD_AFTER_FAILURES and failures > 2 * successes:
        return "withheld"
    if failures >= DEMOTE_AFTER_FAILURES and failures > successes:
        return "demoted"
    return "given"


def part_verdict(given: int, given_successes: int, absent: int, absent_successes: int) -> str | None:
    """Why a part should be turned off on a site, or None while the evidence does not say so."""
    if given < PART_MIN_RUNS or absent < PART_MIN_RUNS:
        return None
    with_part, without = given_successes / given, absent_successes / absent
    if with_part + PART_MARGIN > without:
        return None
    return (f"runs given it succeeded {given_successes} of {given} times ({with_part:.0%}), "
            f"runs without it {absent_successes} of {absent} ({without:.0%})")


class AdviceOutcomes:
    """The outcome gate of one namespace."""

    def __init__(self, scope: Scope) -> None:
        self._scope = scope
        self._ns = scope.namespace

    def record(self, conn: Connection, *, site: str, given: GivenAdvice, success: bool, run_id: str) -> None:
        """Count a finished run against what it was given (inside the caller's write transaction)."""
        now = utcnow()
        for kind, item in sorted(given.items):
            self._count_item(conn, kind, item, success, run_id, now)
        self._count_parts(conn, site, given.parts, success, run_id, now)

    def _count_item(self, conn: Connection, kind: str, item: str, success: bool, run_id: str, now: datetime) -> None:
        key = {"namespace": self._ns, "kind": kind, "item": item}
        given, successes, before = _COUNT_ITEM.first(conn, {**key, "successes": int(success), "updated_at": now})
        status = status_for(given, successes)
        if status != before:
            _SET_ITEM_STATUS.execute(conn, {**key, "status": status}).close()
            event = "advice_restored" if status == "given" else f"advice_{status}"
            self._scope.emit(event, run_id=run_id, kind=kind, item=item, given=given, successes=successes)

    def _count_parts(
        self, conn: Connection, site: str, given: set[str], success: bool, run_id: str, now: datetime
    ) -> None:
        """Count the run with or without each gated part (one statement); turn off the parts the counts condemn."""
        params: dict[str, Any] = {"namespace": self._ns, "site": site, "updated_at": now}
        for number, part in enumerate(GATED_PARTS):
            was_given = part in given
            params.update({f"part_{number}": part, f"given_{number}": int(was_given),
                           f"given_successes_{number}": int(was_given and success),
                           f"absent_{number}": int(not was_given),
                           f"absent_successes_{number}": int(not was_given and success)})
        # parts turned off do not come back: nothing more to learn from runs that never get them
        for part, *counts in sorted(_COUNT_PARTS.rows(conn, params), key=lambda row: GATED_PARTS.index(row[0])):
            reason = part_verdict(*counts)
            if reason:
                _TURN_PART_OFF.execute(conn, {"namespace": self._ns, "site": site, "part": part,
                                              "off_reason": reason}).close()
                self._scope.emit("advice_part_off", run_id=run_id, site=site, part=part, reason=reason)

    def held_back(self, conn: Connection, kind: str, item_ids: Iterable[str], *, demoted_too: bool = False) -> set[str]:
        """Which of these pieces of advice are withheld (or, with ``demoted_too``, demoted as well)."""
        wanted = list(dict.fromkeys(item_ids))
        if not wanted:
            return set()
        statuses = ("withheld", "demoted") if demoted_too else ("withheld",)
        return {item for item in wanted
                if _ITEM_STATUS.scalar(conn, {"ns": self._ns, "kind": kind, "item": item}) in statuses}

    def context_reads(self, site: str) -> list[Read]:
        """The read of :meth:`parts_off`, to be read ahead."""
        return [(_PARTS_OFF, {"ns": self._ns, "site": site})]

    def parts_off(self, conn: Connection, site: str) -> dict[str, str]:
        """The parts turned off on ``site``, each with the reason."""
        return dict(_PARTS_OFF.rows(conn, {"ns": self._ns, "site": site}))

    def items(self) -> list[AdviceRecord]:
        """Every piece of advice given so far, the most failed first."""
        with self._scope.store.read() as conn:
            rows = conn.execute(select(advice_items).where(advice_items.c.namespace == self._ns)).all()
        found = [AdviceRecord(row.kind, row.item, row.given, row.successes, row.status) for row in rows]
        return sorted(found, key=lambda record: (-record.failures, record.kind, record.item))


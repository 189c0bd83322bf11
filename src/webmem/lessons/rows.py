"""How lessons are kept in the tables: one namespace's rows, their links to sites and runs, and the
rule for when two lessons are the same lesson."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, and_, bindparam, insert, or_, select

from ..core.models import Lesson
from ..store.prepared import Prepared
from ..store.schema import lesson_domains, lesson_runs, lessons
from ..store.statements import insert_ignoring_duplicates

LESSON_COLUMNS = [column for column in lessons.c if column.name != "namespace"]


def assembled(rows: Sequence[dict[str, Any]], sites: Sequence[Any], runs: Sequence[Any]) -> list[Lesson]:
    """Lessons from their rows (as dicts), the (lesson_id, domain) rows of their sites and the
    (lesson_id, role, run_id) rows of their runs, each in order."""
    domains: dict[str, list[str]] = {row["lesson_id"]: [] for row in rows}
    for lesson_id, domain in sites:
        domains[lesson_id].append(domain)
    linked: dict[tuple[str, str], list[str]] = {}
    for lesson_id, role, run_id in runs:
        linked.setdefault((lesson_id, role), []).append(run_id)
    return [
        Lesson.model_validate({
            **{key: value for key, value in row.items() if key != "lesson_id"},
            "id": row["lesson_id"],
            "triggered_domains": domains[row["lesson_id"]],
            "learned_from": linked.get((row["lesson_id"], "learned"), []),
            "recalled_in": linked.get((row["lesson_id"], "recalled"), []),
        })
        for row in rows
    ]


class PreparedLessons:
    """A lesson query run often (``condition`` and ``order`` with ``bindparam("ns")`` and, when ``limited``,
    ``bindparam("limit")``): its three statements, the lessons, their sites and their runs, prepared once."""

    def __init__(self, condition: Any, order: Sequence[Any], *, limited: bool = False) -> None:
        chosen = select(lessons.c.lesson_id).where(condition).order_by(*order)
        main = select(*LESSON_COLUMNS).where(condition).order_by(*order)
        if limited:
            chosen, main = chosen.limit(bindparam("limit")), main.limit(bindparam("limit"))
        self._lessons = Prepared(main)
        self._sites = Prepared(
            select(lesson_domains.c.lesson_id, lesson_domains.c.domain)
            .where(lesson_domains.c.namespace == bindparam("ns"), lesson_domains.c.lesson_id.in_(chosen))
            .order_by(lesson_domains.c.first_seen, lesson_domains.c.domain))
        self._runs = Prepared(
            select(lesson_runs.c.lesson_id, lesson_runs.c.role, lesson_runs.c.run_id)
            .where(lesson_runs.c.namespace == bindparam("ns"), lesson_runs.c.lesson_id.in_(chosen))
            .order_by(lesson_runs.c.at, lesson_runs.c.run_id))

    def load(self, conn: Connection, params: dict[str, Any]) -> list[Lesson]:
        rows = self._lessons.named_rows(conn, params)
        if not rows:
            return []
        return assembled([row._asdict() for row in rows], self._sites.rows(conn, params), self._runs.rows(conn, params))


@lru_cache(maxsize=None)
def lessons_by_ids(count: int) -> PreparedLessons:
    """``count`` lessons by their ids (bound as ``i0``, ``i1``...): the few a recall gives, read often."""
    return PreparedLessons(and_(lessons.c.namespace == bindparam("ns"),
                                lessons.c.lesson_id.in_([bindparam(f"i{number}") for number in range(count)])),
                           [lessons.c.created_at, lessons.c.lesson_id])


class LessonRows:
    """Reads and links the lesson rows of one namespace (inside the caller's transaction)."""

    def __init__(self, namespace: str) -> None:
        self.ns = namespace

    def key(self, lesson_id: str) -> Any:
        return and_(lessons.c.namespace == self.ns, lessons.c.lesson_id == lesson_id)

    def ids(self, lesson_ids: Sequence[str]) -> Any:
        return and_(lessons.c.namespace == self.ns, lessons.c.lesson_id.in_(list(lesson_ids)))

    def insert(self, conn: Connection, item: Lesson) -> None:
        conn.execute(insert(lessons).values(namespace=self.ns, lesson_id=item.id, **columns_of(item)))

    def stored_as(self, conn: Connection, candidate: Lesson) -> tuple[str, bool]:
        """The id of ``candidate``'s equivalent and True, or ``candidate`` inserted: its id and False."""
        existing = self.equivalent(conn, candidate)
        if existing is not None:
            return existing, True
        self.insert(conn, candidate)
        return candidate.id, False

    def equivalent(self, conn: Connection, candidate: Lesson) -> str | None:
        """The stored lesson that ``candidate`` is another sighting of, if any.

        Lessons about a failure are the same when they have the same command and error pattern and
        are about the same site; a lesson that already holds everywhere (no site) absorbs a sighting
        on any site. Advice without a failure is the same when category, site and text are.
        """
        if candidate.failed_command is None and candidate.error_pattern is None:
            condition = and_(
                lessons.c.namespace == self.ns,
                lessons.c.failed_command.is_(None),
                lessons.c.error_pattern.is_(None),
                lessons.c.category == candidate.category,
                lessons.c.domain.is_not_distinct_from(candidate.domain),
                lessons.c.lesson == candidate.lesson,
            )
        else:
            scope = lessons.c.domain.is_(None)
            if candidate.domain is not None:
                scope = or_(scope, lessons.c.domain == candidate.domain)
            condition = and_(
                lessons.c.namespace == self.ns,
                lessons.c.failed_command.is_not_distinct_from(candidate.failed_command),
                lessons.c.error_pattern.is_not_distinct_from(candidate.error_pattern),
                scope,
            )
        # The lesson for everywhere first: it is the one a sighting counts towards.
        query = select(lessons.c.lesson_id).where(condition).order_by(lessons.c.domain.is_not(None),
                                                                       lessons.c.created_at, lessons.c.lesson_id)
        return conn.execute(query).scalars().first()

    def link(
        self, conn: Connection, lesson_ids: Sequence[str], domains: Sequence[str], run_id: str | None,
        *, role: str, now: datetime,
    ) -> None:
        insert_ignoring_duplicates(conn, lesson_domains, [
            {"namespace": self.ns, "lesson_id": lesson_id, "domain": domain, "first_seen": now}
            for lesson_id in lesson_ids for domain in domains
        ])
        if run_id is not None:
            insert_ignoring_duplicates(conn, lesson_runs, [
                {"namespace": self.ns, "lesson_id": lesson_id, "run_id": run_id, "role": role, "at": now}
                for lesson_id in lesson_ids
            ])

    def load(
        self, conn: Connection, condition: Any, *, order: Sequence[Any] | None = None, limit: int | None = None
    ) -> list[Lesson]:
        query = select(*LESSON_COLUMNS).where(condition)
        query = query.order_by(*(order or [lessons.c.created_at, lessons.c.lesson_id]))
        if limit is not None:
            query = query.limit(limit)
        rows = conn.execute(query).all()
        if not rows:
            return []
        ids = [row.lesson_id for row in rows]
        sites = conn.execute(
            select(lesson_domains.c.lesson_id, lesson_domains.c.domain)
            .where(lesson_domains.c.namespace == self.ns, lesson_domains.c.lesson_id.in_(ids))
            .order_by(lesson_domains.c.first_seen, lesson_domains.c.domain)
        ).all()
        runs = conn.execute(
            select(lesson_runs.c.lesson_id, lesson_runs.c.role, lesson_runs.c.run_id)
            .where(lesson_runs.c.namespace == self.ns, lesson_runs.c.lesson_id.in_(ids))
            .order_by(lesson_runs.c.at, lesson_runs.c.run_id)
        ).all()
        return assembled([row._asdict() for row in rows], sites, runs)

    def sightings(self, conn: Connection, failed_command: str | None, pattern: str | None) -> list[Lesson]:
        """Every learned lesson about this failure, on any site."""
        return self.load(conn, and_(
            lessons.c.namespace == self.ns,
            lessons.c.source == "learned",
            lessons.c.failed_command.is_not_distinct_from(failed_command),
            lessons.c.error_pattern.is_not_distinct_from(pattern),
        ))


def columns_of(item: Lesson) -> dict[str, Any]:
    """The lesson's own columns (its links to domains and runs live in other tables)."""
    return item.model_dump(exclude={"id", "triggered_domains", "learned_from", "recalled_in"})

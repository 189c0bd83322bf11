"""Lessons: two tiers of advice learned from failures and recoveries.

Tier 1 (tool fallbacks and best practices) goes into every system prompt. Tier 2 is recalled
when it matters: on an error that matches a lesson's command or error pattern, or on entering
a site a lesson is about. Recalls count, lessons that recur across sites are promoted to tier 1,
advice that keeps failing is demoted, and stale learned lessons are pruned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, bindparam, case, delete, func, insert, not_, select, update

from ..core.clock import as_utc, new_id, utcnow
from ..core.errors import InvalidInput
from ..core.models import LESSON_CATEGORIES, Lesson, Step, positive_int, validated
from ..core.text import clean_for_prompt
from ..core.urls import check_domain, domain_matches
from ..store.engine import retried
from ..store.schema import lesson_domains, lesson_runs, lessons, namespace_state
from ..store.scope import Scope
from ..store.statements import insert_ignoring_duplicates, lock_rows, serialize_on
from .learning import command_name, extract_lessons, matchable_text, plain_text

TIER1_CATEGORIES = ("tool_fallback", "best_practice")
TIER1_LIMIT = 10
RECALL_LIMIT = 3
COMMAND_SCORE = 2
PATTERN_SCORE = 3
PROMOTE_USES = 5
PROMOTE_DOMAINS = 3
PRUNE_AFTER_DAYS = 90
KEEP_USES = 5  # lessons used this often are never pruned
ERROR_SNIPPET = 120
SYSTEM_PROMPT_HEADING = "## Lessons from experience"

SEED_LESSONS = (
    ("If fill does not work on a field, click the field to focus it, then type the text.",
     "tool_fallback", "fill", "too many arguments"),
    ("After typing into a search box, press Enter to submit rather than clicking the submit button: "
     "suggestion lists often cover that button.", "best_practice", "click", "intercepts pointer"),
    ("When an overlay, banner or popup blocks an element, press Escape to dismiss it before using the page "
     "behind it.", "best_practice", None, "intercepts pointer"),
)

_active = not_(
    and_(
        lessons.c.source == "learned",
        lessons.c.unhelpful_count >= 3,
        lessons.c.helpful_count <= lessons.c.unhelpful_count,
    )
)
_LESSON_COLUMNS = [column for column in lessons.c if column.name != "namespace"]
_SITE_LESSONS = (
    select(lessons.c.lesson_id, lessons.c.domain)
    .where(lessons.c.namespace == bindparam("ns"), lessons.c.domain.is_not(None), _active)
    .order_by(lessons.c.use_count.desc(), lessons.c.created_at, lessons.c.lesson_id)
)


@dataclass(frozen=True)
class ImportReport:
    added: int
    merged: int


class LessonStore:
    """The lessons of one namespace."""

    def __init__(self, scope: Scope) -> None:
        self._scope = scope
        self._ns = scope.namespace

    def open(self, *, prune: bool = True) -> None:
        """Seed a namespace the first time it is opened, and prune stale lessons (unless ``prune`` is False)."""
        with self._scope.store.read() as conn:
            seeded = conn.execute(
                select(namespace_state.c.lessons_seeded_at).where(namespace_state.c.namespace == self._ns)
            ).scalar_one_or_none()
        if seeded is None:
            self._seed()
        if prune:
            self.prune()

    @retried
    def record(
        self,
        lesson: str,
        category: str,
        failed_command: str | None = None,
        error_pattern: str | None = None,
        domain: str | None = None,
        source: str = "learned",
        *,
        triggered_domains: Iterable[str] = (),
        run_id: str | None = None,
    ) -> Lesson:
        """Store a lesson, or count it again when an equivalent one exists.

        Equivalent: the same (failed_command, error_pattern); when both are empty, the same
        (category, domain, lesson text).
        """
        now = utcnow()
        candidate = validated(
            Lesson,
            id=new_id("lesson"),
            lesson=plain_text(lesson, 500) if isinstance(lesson, str) else lesson,
            category=category,
            failed_command=_normal_command(failed_command),
            error_pattern=_normal_pattern(error_pattern),
            domain=check_domain(domain) if domain is not None else None,
            use_count=1,
            created_at=now,
            last_used=now,
            source=source,
        )
        if not candidate.lesson:
            raise InvalidInput("lesson: the advice text is empty once markup is removed")
        domains = [check_domain(name, field="triggered_domains") for name in triggered_domains]
        with self._scope.store.write() as conn:
            serialize_on(conn, f"webmem.lessons.{self._ns}")
            existing = conn.execute(select(lessons.c.lesson_id).where(self._same_lesson(candidate))).scalars().first()
            if existing is None:
                conn.execute(insert(lessons).values(namespace=self._ns, lesson_id=candidate.id, **_columns(candidate)))
                lesson_id = candidate.id
            else:
                lesson_id = existing
                conn.execute(
                    update(lessons).where(self._key(lesson_id))
                    .values(use_count=lessons.c.use_count + 1, last_used=now)
                )
            self._link(conn, [lesson_id], domains, run_id, role="learned", now=now)
            stored = self._load(conn, self._key(lesson_id))[0]
            # Events are sent once the transaction commits, in this order: the record, then any promotion.
            if existing is None:
                self._scope.emit(
                    "lesson_recorded", run_id=run_id, lesson=stored.lesson, category=stored.category,
                    failed_command=stored.failed_command, error_pattern=stored.error_pattern,
                )
            else:
                self._scope.emit(
                    "lesson_deduplicated", run_id=run_id, lesson=stored.lesson, new_use_count=stored.use_count
                )
            self._promote(conn, [lesson_id])
            stored = self._load(conn, self._key(lesson_id))[0]  # as promoted, if it was
        return stored

    def tier1(self, max_items: int = TIER1_LIMIT, *, run_id: str | None = None) -> list[Lesson]:
        """Tool fallbacks and best practices, most used first, seeds first at equal use."""
        positive_int(max_items, field="max_items")
        seeds_first = case((lessons.c.source == "seed", 0), else_=1)
        with self._scope.store.read() as conn:
            chosen = self._load(
                conn,
                and_(lessons.c.namespace == self._ns, lessons.c.category.in_(TIER1_CATEGORIES), _active),
                order=[lessons.c.use_count.desc(), seeds_first, lessons.c.created_at, lessons.c.lesson_id],
                limit=min(max_items, TIER1_LIMIT),
            )
        self._scope.emit("tier1_loaded", run_id=run_id, count=len(chosen), lessons=[item.lesson for item in chosen])
        return chosen

    def system_prompt_section(self, *, run_id: str | None = None) -> str:
        """Tier 1 as a system-prompt section; empty string when there is none."""
        chosen = self.tier1(run_id=run_id)
        if not chosen:
            return ""
        lines = [SYSTEM_PROMPT_HEADING, "", "Earlier runs taught these lessons; follow them."]
        lines += [f"- {clean_for_prompt(item.lesson, 500)}" for item in chosen]
        return "\n".join(lines)

    @retried
    def recall_on_error(
        self, command: str, error: str, *, domain: str | None = None, run_id: str | None = None
    ) -> list[Lesson]:
        """Up to three lessons for a failed command: +2 for the same command, +3 for the error pattern.

        Lessons about one site are only recalled on that site (when ``domain`` is given).
        """
        site = check_domain(domain) if domain is not None else None
        now = utcnow()
        with self._scope.store.write() as conn:
            recalled = self._use(conn, self._matching_error(conn, command, error, site), site, run_id, now)
        self._scope.emit(
            "error_recall", run_id=run_id, command=command, error_snippet=error[:ERROR_SNIPPET],
            matched=len(recalled), lessons=[item.lesson for item in recalled],
        )
        return recalled

    def peek_error(self, command: str, error: str, *, domain: str | None = None) -> list[Lesson]:
        """The lessons :meth:`recall_on_error` would recall, without counting a use (for inspection)."""
        site = check_domain(domain) if domain is not None else None
        with self._scope.store.read() as conn:
            ids = self._matching_error(conn, command, error, site)
            found = {item.id: item for item in self._load(conn, self._ids(ids))} if ids else {}
        return [found[lesson_id] for lesson_id in ids]

    def _matching_error(self, conn: Connection, command: str, error: str, site: str | None) -> list[str]:
        if not isinstance(command, str) or not isinstance(error, str):
            raise InvalidInput("command and error: expected strings")
        name = command_name(command) or ""
        # A pattern may name something inside markup (an element id) or be a first line stored without markup:
        # look for it in the error as it is and as patterns are stored.
        forms = (error.lower(), matchable_text(error))
        pool = conn.execute(select(*_LESSON_COLUMNS).where(lessons.c.namespace == self._ns, _active)).all()
        scored = []
        for row in pool:
            if row.domain is not None and (site is None or not domain_matches(row.domain, site)):
                continue
            score = (COMMAND_SCORE if row.failed_command and row.failed_command == name else 0) + (
                PATTERN_SCORE if row.error_pattern and any(row.error_pattern in form for form in forms) else 0
            )
            if score > 0:
                scored.append((-score, -row.use_count, row.source != "seed", row.lesson_id))
        scored.sort()
        return [key[-1] for key in scored[:RECALL_LIMIT]]

    @retried
    def recall_on_domain(self, domain: str, *, run_id: str | None = None) -> list[Lesson]:
        """Up to three lessons about this site or a parent domain, most used first."""
        site = check_domain(domain)
        now = utcnow()
        with self._scope.store.read() as conn:
            known = bool(self._about_site(conn, site))
        recalled = []
        if known:  # most sites have no lessons: no write transaction for them
            with self._scope.store.write() as conn:
                recalled = self._use(conn, self._about_site(conn, site), site, run_id, now)
        self._scope.emit(
            "domain_recall", run_id=run_id, domain=site, matched=len(recalled),
            lessons=[item.lesson for item in recalled],
        )
        return recalled

    def peek_domain(self, domain: str) -> list[Lesson]:
        """The lessons :meth:`recall_on_domain` would recall, without counting a use (for previews)."""
        site = check_domain(domain)
        with self._scope.store.read() as conn:
            ids = self._about_site(conn, site)
            found = {item.id: item for item in self._load(conn, self._ids(ids))} if ids else {}
        return [found[lesson_id] for lesson_id in ids]

    def _about_site(self, conn: Connection, site: str) -> list[str]:
        pool = conn.execute(_SITE_LESSONS, {"ns": self._ns}).all()
        return [row.lesson_id for row in pool if domain_matches(row.domain, site)][:RECALL_LIMIT]

    @retried
    def extract_from_steps(self, steps: Sequence[Step], *, run_id: str | None = None) -> list[Lesson]:
        """Learn from every failed step directly followed by a different step that worked."""
        if isinstance(steps, str | bytes) or not all(isinstance(step, Step) for step in steps):
            raise InvalidInput("steps: expected a list of webmem.Step records")
        with self._scope.store.write():
            return [
                self.record(
                    found.lesson, "error_recovery", found.failed_command, found.error_pattern,
                    triggered_domains=[found.triggered_domain] if found.triggered_domain else [], run_id=run_id,
                )
                for found in extract_lessons(steps)
            ]

    @retried
    def rate(self, lesson_ids: Sequence[str], *, helpful: bool, run_id: str | None = None) -> None:
        """Count whether recalled advice helped; learned advice that keeps failing is demoted."""
        if not lesson_ids:
            return
        column = lessons.c.helpful_count if helpful else lessons.c.unhelpful_count
        with self._scope.store.write() as conn:
            lock_rows(conn, lessons, self._ids(lesson_ids))
            before = {item.id: item.demoted for item in self._load(conn, self._ids(lesson_ids))}
            conn.execute(update(lessons).where(self._ids(lesson_ids)).values({column: column + 1}))
            after = self._load(conn, self._ids(lesson_ids))
        for item in after:
            if item.demoted and not before.get(item.id, True):
                self._scope.emit(
                    "lesson_demoted", run_id=run_id, lesson=item.lesson, helpful=item.helpful_count,
                    unhelpful=item.unhelpful_count,
                )

    def prune(self, *, now: datetime | None = None) -> int:
        """Remove learned lessons unused for 90 days and used fewer than five times; seeds stay."""
        cutoff = (as_utc(now) if now else utcnow()) - timedelta(days=PRUNE_AFTER_DAYS)
        stale = and_(
            lessons.c.namespace == self._ns,
            lessons.c.source == "learned",
            lessons.c.last_used < cutoff,
            lessons.c.use_count < KEEP_USES,
        )
        with self._scope.store.write() as conn:
            pruned = int(conn.execute(delete(lessons).where(stale)).rowcount)
            remaining = conn.execute(
                select(func.count()).select_from(lessons).where(lessons.c.namespace == self._ns)
            ).scalar_one()
        if pruned:
            self._scope.emit("lessons_pruned", pruned_count=pruned, remaining_count=remaining)
        return pruned

    def get(self, lesson_id: str) -> Lesson:
        """The lesson with this id; ``NotFound`` when there is none in the namespace."""
        with self._scope.store.read() as conn:
            found = self._load(conn, self._key(lesson_id))
        if not found:
            raise InvalidInput(f"lesson_id: no lesson {lesson_id!r} in namespace {self._ns!r}")
        return found[0]

    def import_file(self, path: Any) -> ImportReport:
        """Import a lesson file (``{"version": 1, "lessons": [...]}``); nothing changes if any entry is bad."""
        from .files import read_lesson_file

        report = self.import_lessons(read_lesson_file(path))
        self._scope.emit("lessons_imported", path=str(path), added=report.added, merged=report.merged)
        return report

    def import_lessons(self, entries: Sequence[Lesson]) -> ImportReport:
        """Store lessons as they are, or merge each into its equivalent (max counts, union of domains)."""
        if not all(isinstance(entry, Lesson) for entry in entries):
            raise InvalidInput("lessons: expected a list of webmem.Lesson records")
        added = merged = 0
        with self._scope.store.write() as conn:
            for entry in entries:
                if self._merge_imported(conn, entry):
                    merged += 1
                else:
                    added += 1
        return ImportReport(added=added, merged=merged)

    def list(self, category: str | None = None, domain: str | None = None) -> list[Lesson]:  # noqa: A003
        """Every lesson, tier 1 first, then most used first."""
        condition = lessons.c.namespace == self._ns
        if category is not None:
            if category not in LESSON_CATEGORIES:
                raise InvalidInput(f"category: {category!r} is not one of {', '.join(LESSON_CATEGORIES)}")
            condition = and_(condition, lessons.c.category == category)
        with self._scope.store.read() as conn:
            found = self._load(conn, condition, order=[lessons.c.use_count.desc(), lessons.c.lesson_id])
        if domain is not None:
            site = check_domain(domain)
            found = [item for item in found if item.domain and domain_matches(item.domain, site)]
        return sorted(found, key=lambda item: item.tier)

    # -- internals ---------------------------------------------------------------------------

    def _seed(self) -> None:
        now = utcnow()
        with self._scope.store.write() as conn:
            insert_ignoring_duplicates(conn, namespace_state, [{"namespace": self._ns, "lessons_seeded_at": None}])
            claimed = conn.execute(
                update(namespace_state)
                .where(namespace_state.c.namespace == self._ns, namespace_state.c.lessons_seeded_at.is_(None))
                .values(lessons_seeded_at=now)
            ).rowcount
            if not claimed:  # another process seeded this namespace first
                return
            for text, category, failed, pattern in SEED_LESSONS:
                seed = Lesson(
                    id=new_id("lesson"), lesson=text, category=category, failed_command=failed,
                    error_pattern=pattern, use_count=0, created_at=now, last_used=now, source="seed",
                )
                if conn.execute(select(lessons.c.lesson_id).where(self._same_lesson(seed))).first() is None:
                    conn.execute(insert(lessons).values(namespace=self._ns, lesson_id=seed.id, **_columns(seed)))

    def _use(
        self, conn: Connection, ids: list[str], site: str | None, run_id: str | None, now: datetime
    ) -> list[Lesson]:
        """Count a recall atomically: use_count, last_used, triggered domain, provenance."""
        if not ids:
            return []
        lock_rows(conn, lessons, self._ids(ids))
        conn.execute(update(lessons).where(self._ids(ids)).values(use_count=lessons.c.use_count + 1, last_used=now))
        self._link(conn, ids, [site] if site else [], run_id, role="recalled", now=now)
        self._promote(conn, ids)
        fresh = {item.id: item for item in self._load(conn, self._ids(ids))}
        return [fresh[lesson_id] for lesson_id in ids]

    def _promote(self, conn: Connection, lesson_ids: Sequence[str]) -> None:
        """error_recovery lessons for any site, used 5+ times on 3+ sites, become best practices."""
        for item in self._load(conn, self._ids(lesson_ids)):
            if (
                item.category == "error_recovery" and item.domain is None and not item.demoted
                and item.use_count >= PROMOTE_USES and len(item.triggered_domains) >= PROMOTE_DOMAINS
            ):
                changed = conn.execute(
                    update(lessons)
                    .where(self._key(item.id), lessons.c.category == "error_recovery")
                    .values(category="best_practice")
                ).rowcount
                if changed:
                    self._scope.emit(
                        "lesson_promoted", lesson=item.lesson, use_count=item.use_count,
                        triggered_domains=item.triggered_domains,
                    )

    def _link(
        self, conn: Connection, lesson_ids: Sequence[str], domains: Sequence[str], run_id: str | None,
        *, role: str, now: datetime,
    ) -> None:
        insert_ignoring_duplicates(conn, lesson_domains, [
            {"namespace": self._ns, "lesson_id": lesson_id, "domain": domain, "first_seen": now}
            for lesson_id in lesson_ids for domain in domains
        ])
        if run_id is not None:
            insert_ignoring_duplicates(conn, lesson_runs, [
                {"namespace": self._ns, "lesson_id": lesson_id, "run_id": run_id, "role": role, "at": now}
                for lesson_id in lesson_ids
            ])

    def _merge_imported(self, conn: Connection, entry: Lesson) -> bool:
        """Insert an imported lesson, or merge it into its equivalent (max counts, union of domains)."""
        serialize_on(conn, f"webmem.lessons.{self._ns}")
        existing = conn.execute(select(lessons.c.lesson_id).where(self._same_lesson(entry))).scalars().first()
        if existing is None:
            conn.execute(insert(lessons).values(namespace=self._ns, lesson_id=entry.id, **_columns(entry)))
            lesson_id = entry.id
        else:
            lesson_id = existing
            conn.execute(update(lessons).where(self._key(existing)).values(
                use_count=case((lessons.c.use_count < entry.use_count, entry.use_count), else_=lessons.c.use_count),
                last_used=case((lessons.c.last_used < entry.last_used, entry.last_used), else_=lessons.c.last_used),
            ))
        self._link(conn, [lesson_id], entry.triggered_domains, None, role="learned", now=entry.last_used)
        self._promote(conn, [lesson_id])
        return existing is not None

    def _same_lesson(self, candidate: Lesson) -> Any:
        if candidate.failed_command is None and candidate.error_pattern is None:
            return and_(
                lessons.c.namespace == self._ns,
                lessons.c.failed_command.is_(None),
                lessons.c.error_pattern.is_(None),
                lessons.c.category == candidate.category,
                lessons.c.domain.is_not_distinct_from(candidate.domain),
                lessons.c.lesson == candidate.lesson,
            )
        return and_(
            lessons.c.namespace == self._ns,
            lessons.c.failed_command.is_not_distinct_from(candidate.failed_command),
            lessons.c.error_pattern.is_not_distinct_from(candidate.error_pattern),
        )

    def _key(self, lesson_id: str) -> Any:
        return and_(lessons.c.namespace == self._ns, lessons.c.lesson_id == lesson_id)

    def _ids(self, lesson_ids: Sequence[str]) -> Any:
        return and_(lessons.c.namespace == self._ns, lessons.c.lesson_id.in_(list(lesson_ids)))

    def _load(
        self, conn: Connection, condition: Any, *, order: Sequence[Any] | None = None, limit: int | None = None
    ) -> list[Lesson]:
        query = select(*_LESSON_COLUMNS).where(condition)
        query = query.order_by(*(order or [lessons.c.created_at, lessons.c.lesson_id]))
        if limit is not None:
            query = query.limit(limit)
        rows = conn.execute(query).all()
        if not rows:
            return []
        ids = [row.lesson_id for row in rows]
        domains: dict[str, list[str]] = {lesson_id: [] for lesson_id in ids}
        for row in conn.execute(
            select(lesson_domains.c.lesson_id, lesson_domains.c.domain)
            .where(lesson_domains.c.namespace == self._ns, lesson_domains.c.lesson_id.in_(ids))
            .order_by(lesson_domains.c.first_seen, lesson_domains.c.domain)
        ):
            domains[row.lesson_id].append(row.domain)
        runs: dict[tuple[str, str], list[str]] = {}
        for row in conn.execute(
            select(lesson_runs.c.lesson_id, lesson_runs.c.role, lesson_runs.c.run_id)
            .where(lesson_runs.c.namespace == self._ns, lesson_runs.c.lesson_id.in_(ids))
            .order_by(lesson_runs.c.at, lesson_runs.c.run_id)
        ):
            runs.setdefault((row.lesson_id, row.role), []).append(row.run_id)
        return [
            Lesson.model_validate({
                **{key: value for key, value in row._mapping.items() if key != "lesson_id"},
                "id": row.lesson_id,
                "triggered_domains": domains[row.lesson_id],
                "learned_from": runs.get((row.lesson_id, "learned"), []),
                "recalled_in": runs.get((row.lesson_id, "recalled"), []),
            })
            for row in rows
        ]


def _normal_command(command: object) -> object:
    if command is None or not isinstance(command, str):
        return command
    return command_name(command)


def _normal_pattern(pattern: object) -> object:
    if pattern is None or not isinstance(pattern, str):
        return pattern
    return plain_text(pattern.lower(), 200) or None



def _columns(item: Lesson) -> dict[str, Any]:
    """The lesson's own columns (its links to domains and runs live in other tables)."""
    return item.model_dump(exclude={"id", "triggered_domains", "learned_from", "recalled_in"})

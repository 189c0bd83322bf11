"""Lessons: two tiers of advice learned from failures and recoveries.

Tier 1 (tool fallbacks and best practices) goes into every system prompt. Tier 2 is recalled
when it matters: on an error that shows a lesson's error pattern, or on entering a site a lesson
is about. A lesson learned on one site is about that site until it has been learned on three
distinct sites; then a general lesson holds everywhere, and one used often enough is promoted to
tier 1. Advice that keeps failing when followed is demoted; stale learned lessons are pruned.
Built-in lessons are labelled as such and can be turned off (``Memory.open(seed_lessons=False)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, and_, bindparam, case, delete, func, not_, or_, select, union_all, update

from ..core.clock import as_utc, new_id, utcnow
from ..core.errors import InvalidInput, StoreReadOnly
from ..core.models import LESSON_CATEGORIES, Lesson, Step, positive_int, validated
from ..core.text import clean_for_prompt
from ..core.urls import check_domain, domain_matches, scopes_on, site_of
from ..store.engine import retried
from ..store.prepared import Prepared, Read
from ..store.schema import lessons
from ..store.scope import Scope
from ..store.statements import lock_rows, serialize_on
from .learning import LearnedLesson, command_name, extract_lessons, plain_text
from .matching import RECALL_LIMIT, distinct_sites, lessons_for_error
from .rows import LESSON_COLUMNS, LessonRows, PreparedLessons, lessons_by_ids
from .seeds import seed_if_new

TIER1_CATEGORIES = ("tool_fallback", "best_practice")
TIER1_LIMIT = 10
PROMOTE_USES = 5
PROMOTE_DOMAINS = 3  # distinct sites (registrable domains), for both generalising and promoting
PRUNE_AFTER_DAYS = 90
KEEP_USES = 5  # lessons used this often are never pruned
ERROR_SNIPPET = 120
SYSTEM_PROMPT_HEADING = "## Lessons from experience"
BUILT_IN_HEADING = "## Browsing tips"  # when no lesson was learned yet: nothing to call experience
LEARNED_INTRO = "Earlier runs taught these lessons; follow them."
BUILT_IN_INTRO = "Built-in defaults (general browsing advice, not learned from your runs):"

_active = not_(
    and_(
        lessons.c.source == "learned",
        lessons.c.unhelpful_count >= 3,
        lessons.c.helpful_count <= lessons.c.unhelpful_count,
    )
)


@lru_cache(maxsize=None)
def _site_lessons(scopes: int) -> Prepared:
    """The active lessons about one of ``scopes`` domains (bound as ``d0``, ``d1``...), most used first."""
    return Prepared(
        select(lessons.c.lesson_id, lessons.c.domain)
        .where(lessons.c.namespace == bindparam("ns"),
               lessons.c.domain.in_([bindparam(f"d{number}") for number in range(scopes)]), _active)
        .order_by(lessons.c.use_count.desc(), lessons.c.created_at, lessons.c.lesson_id)
    )


def _tier1(with_seeds: bool) -> PreparedLessons:
    visible = _active if with_seeds else and_(_active, lessons.c.source != "seed")
    return PreparedLessons(
        and_(lessons.c.namespace == bindparam("ns"), or_(*(lessons.c.category == name for name in TIER1_CATEGORIES)),
             visible),
        [lessons.c.use_count.desc(), case((lessons.c.source == "seed", 0), else_=1), lessons.c.created_at,
         lessons.c.lesson_id],
        limited=True,
    )


_TIER1 = {with_seeds: _tier1(with_seeds) for with_seeds in (True, False)}


@dataclass(frozen=True)
class ImportReport:
    added: int
    merged: int


class LessonStore:
    """The lessons of one namespace.

    ``seed_lessons``: True adds the built-in lessons the first time a namespace is opened and shows
    them; False adds none and hides any added before; None adds none and shows those already there
    (what tools that only look use).
    """

    def __init__(
        self, scope: Scope, *, seed_lessons: bool | None = True,
        withheld: Callable[[Connection, list[str]], set[str]] | None = None,
    ) -> None:
        self._scope = scope
        self._withheld = withheld
        self._ns = scope.namespace
        self._rows = LessonRows(scope.namespace)
        self._seed_lessons = seed_lessons
        self._visible = _active if seed_lessons is not False else and_(_active, lessons.c.source != "seed")

    def open(self, *, prune: bool = True) -> None:
        """Seed a namespace the first time it is opened, and prune stale lessons (unless ``prune`` is False).
        Both are left to a later open while the database takes no writes (a standby): reading needs neither."""
        with suppress(StoreReadOnly):
            if self._seed_lessons:
                seed_if_new(self._scope.store, self._rows)
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
        recovery: str | None = None,
    ) -> Lesson:
        """Store a lesson, or count it again when an equivalent one exists.

        Equivalent: the same (failed_command, error_pattern) for the same site or for everywhere;
        when both are empty, the same (category, domain, lesson text). ``recovery`` is what the
        lesson tells the agent to do instead (``check``, ``press Enter``): a recalled tip counts as
        helpful only when the next step did that and worked.
        """
        now = utcnow()
        redact = self._scope.redact  # before normalising: a pattern is lowercased, its secret would not be found
        lesson, failed_command, error_pattern, recovery = (
            redact(text) if isinstance(text, str) else text for text in (lesson, failed_command, error_pattern, recovery))
        candidate = validated(
            Lesson,
            id=new_id("lesson"),
            lesson=plain_text(lesson, 500) if isinstance(lesson, str) else lesson,
            category=category,
            failed_command=_normal_command(failed_command),
            error_pattern=_normal_pattern(error_pattern),
            domain=check_domain(domain) if domain is not None else None,
            recovery=plain_text(recovery, 100) or None if isinstance(recovery, str) else recovery,
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
            lesson_id = self._count(conn, candidate, domains, run_id, now)
            stored = self._rows.load(conn, self._rows.key(lesson_id))[0]
        return stored

    def _count(
        self, conn: Connection, candidate: Lesson, domains: Sequence[str], run_id: str | None, now: datetime
    ) -> str:
        """Insert ``candidate`` or count its equivalent; events go out after commit: the record, then any
        promotion."""
        lesson_id, existed = self._rows.stored_as(conn, candidate)
        if existed:
            conn.execute(
                update(lessons).where(self._rows.key(lesson_id))
                .values(use_count=lessons.c.use_count + 1, last_used=now)
            )
        self._rows.link(conn, [lesson_id], domains, run_id, role="learned", now=now)
        stored = self._rows.load(conn, self._rows.key(lesson_id))[0]
        if not existed:
            self._scope.emit(
                "lesson_recorded", run_id=run_id, lesson=stored.lesson, category=stored.category,
                failed_command=stored.failed_command, error_pattern=stored.error_pattern, domain=stored.domain,
            )
        else:
            self._scope.emit(
                "lesson_deduplicated", run_id=run_id, lesson=stored.lesson, new_use_count=stored.use_count
            )
        self._promote(conn, [lesson_id])
        return lesson_id

    def tier1(self, max_items: int = TIER1_LIMIT, *, run_id: str | None = None) -> list[Lesson]:
        """Tool fallbacks and best practices, most used first, seeds first at equal use."""
        positive_int(max_items, field="max_items")
        with self._scope.store.read() as conn:
            chosen = _TIER1[self._seed_lessons is not False].load(
                conn, {"ns": self._ns, "limit": min(max_items, TIER1_LIMIT)})
        self._scope.emit("tier1_loaded", run_id=run_id, count=len(chosen), lessons=[item.lesson for item in chosen])
        return chosen

    def system_prompt_section(self, *, run_id: str | None = None) -> str:
        """Tier 1 as a system-prompt section, learned lessons apart from built-in ones; '' when there is none."""
        return system_prompt_text(self.tier1(run_id=run_id))

    @retried
    def recall_on_error(
        self, command: str, error: str, *, domain: str | None = None, run_id: str | None = None
    ) -> list[Lesson]:
        """Up to three lessons whose error pattern the error shows (and whose command it is, when they
        name one). Lessons about one site are only recalled on that site (when ``domain`` is given).
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
            return self._in_order(conn, self._matching_error(conn, command, error, site))

    def _matching_error(self, conn: Connection, command: str, error: str, site: str | None) -> list[str]:
        if not isinstance(command, str) or not isinstance(error, str):
            raise InvalidInput("command and error: expected strings")
        visible = select(*LESSON_COLUMNS).where(lessons.c.namespace == self._ns, self._visible)
        everywhere = visible.where(lessons.c.domain.is_(None))  # a lesson about a site is only for that site
        pool = conn.execute(everywhere if site is None else union_all(
            everywhere, visible.where(lessons.c.domain.in_(scopes_on(site))))).all()
        return self._not_held_back(conn, lessons_for_error(pool, command, error, site))[:RECALL_LIMIT]

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
            return self._in_order(conn, self._about_site(conn, site))

    def site_read(self, domain: str) -> Read:
        """The first read of :meth:`recall_on_domain` (and :meth:`peek_domain`), to be read ahead."""
        scopes = {f"d{number}": scope for number, scope in enumerate(scopes_on(check_domain(domain)))}
        return _site_lessons(len(scopes)), {"ns": self._ns, **scopes}

    def _about_site(self, conn: Connection, site: str) -> list[str]:
        statement, params = self.site_read(site)
        pool = statement.rows(conn, params)
        about = [lesson_id for lesson_id, domain in pool if domain_matches(domain, site)]
        return self._not_held_back(conn, about)[:RECALL_LIMIT]

    def _not_held_back(self, conn: Connection, ids: list[str]) -> list[str]:
        """Leave out lessons the outcome gate withholds (``withheld``: runs given them kept failing)."""
        withheld = self._withheld(conn, ids) if self._withheld is not None and ids else set()
        return [lesson_id for lesson_id in ids if lesson_id not in withheld]

    def _in_order(self, conn: Connection, ids: list[str]) -> list[Lesson]:
        if not ids:
            return []
        unique = {f"i{number}": lesson_id for number, lesson_id in enumerate(dict.fromkeys(ids))}
        found = {item.id: item for item in lessons_by_ids(len(unique)).load(conn, {"ns": self._ns, **unique})}
        return [found[lesson_id] for lesson_id in ids]

    @retried
    def extract_from_steps(self, steps: Sequence[Step], *, run_id: str | None = None) -> list[Lesson]:
        """Learn from every failed step directly followed by a different step that worked.

        The lesson is about the site it happened on; once the same failure and recovery have been
        learned on three distinct sites, a general lesson (naming roles, not one site's elements)
        holds everywhere.
        """
        if isinstance(steps, str | bytes) or not all(isinstance(step, Step) for step in steps):
            raise InvalidInput("steps: expected a list of webmem.Step records")
        learned: list[Lesson] = []
        found_lessons = extract_lessons(steps)
        if not found_lessons:
            return learned
        with self._scope.store.write() as conn:
            serialize_on(conn, f"webmem.lessons.{self._ns}")
            for found in found_lessons:
                lesson_id = self._learn(conn, found, run_id)
                learned.append(self._rows.load(conn, self._rows.key(lesson_id))[0])
        return learned

    def _learn(self, conn: Connection, found: LearnedLesson, run_id: str | None) -> str:
        now = utcnow()
        site = site_of(found.triggered_domain) if found.triggered_domain else None
        domains = [found.triggered_domain] if found.triggered_domain else []
        candidate = Lesson(
            id=new_id("lesson"), lesson=found.lesson, category="error_recovery", failed_command=found.failed_command,
            error_pattern=found.error_pattern, domain=site, recovery=found.recovery, use_count=1,
            created_at=now, last_used=now,
        )
        lesson_id = self._count(conn, candidate, domains, run_id, now)
        if site is not None:
            self._generalise(conn, found, run_id, now)
        return lesson_id

    def _generalise(self, conn: Connection, found: LearnedLesson, run_id: str | None, now: datetime) -> None:
        """Once one failure and recovery were learned on three distinct sites, keep a lesson for everywhere."""
        sightings = self._rows.sightings(conn, found.failed_command, found.error_pattern)
        if any(item.domain is None for item in sightings):
            return
        domains = sorted({domain for item in sightings for domain in item.triggered_domains})
        sites = distinct_sites(domains)
        if len(sites) < PROMOTE_DOMAINS:
            return
        general = Lesson(
            id=new_id("lesson"), lesson=found.general_lesson, category="error_recovery",
            failed_command=found.failed_command, error_pattern=found.error_pattern, recovery=found.recovery,
            use_count=sum(item.use_count for item in sightings), created_at=now, last_used=now,
        )
        self._rows.insert(conn, general)
        self._rows.link(conn, [general.id], domains, run_id, role="learned", now=now)
        self._scope.emit("lesson_generalised", run_id=run_id, lesson=general.lesson, sites=sorted(sites))
        self._promote(conn, [general.id])

    @retried
    def rate(self, lesson_ids: Sequence[str], *, helpful: bool, run_id: str | None = None) -> None:
        """Count whether recalled advice helped; learned advice that keeps failing is demoted."""
        if not lesson_ids:
            return
        column = lessons.c.helpful_count if helpful else lessons.c.unhelpful_count
        with self._scope.store.write() as conn:
            lock_rows(conn, lessons, self._rows.ids(lesson_ids))
            before = {item.id: item.demoted for item in self._rows.load(conn, self._rows.ids(lesson_ids))}
            conn.execute(update(lessons).where(self._rows.ids(lesson_ids)).values({column: column + 1}))
            after = self._rows.load(conn, self._rows.ids(lesson_ids))
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
        with self._scope.store.read() as conn:  # most opens find none: no write, no wait for another writer
            if conn.execute(select(lessons.c.lesson_id).where(stale).limit(1)).first() is None:
                return 0
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
            found = self._rows.load(conn, self._rows.key(lesson_id))
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
        entries = [entry.model_copy(update={  # domain keys as every lookup spells them (lower case, no scheme)
            "domain": check_domain(entry.domain) if entry.domain is not None else None,
            "triggered_domains": [check_domain(name, field="triggered_domains") for name in entry.triggered_domains],
        }) for entry in entries]
        added = merged = 0
        with self._scope.store.write() as conn:
            for entry in entries:
                if self._merge_imported(conn, entry):
                    merged += 1
                else:
                    added += 1
        return ImportReport(added=added, merged=merged)

    def list(self, category: str | None = None, domain: str | None = None) -> list[Lesson]:  # noqa: A003
        """Every lesson, tier 1 first, then most used first (built-in ones only when they are in use)."""
        condition = lessons.c.namespace == self._ns
        if self._seed_lessons is False:
            condition = and_(condition, lessons.c.source != "seed")
        if category is not None:
            if category not in LESSON_CATEGORIES:
                raise InvalidInput(f"category: {category!r} is not one of {', '.join(LESSON_CATEGORIES)}")
            condition = and_(condition, lessons.c.category == category)
        with self._scope.store.read() as conn:
            found = self._rows.load(conn, condition, order=[lessons.c.use_count.desc(), lessons.c.lesson_id])
        if domain is not None:
            site = check_domain(domain)
            found = [item for item in found if item.domain and domain_matches(item.domain, site)]
        return sorted(found, key=lambda item: item.tier)

    # -- internals ---------------------------------------------------------------------------

    def _use(
        self, conn: Connection, ids: list[str], site: str | None, run_id: str | None, now: datetime
    ) -> list[Lesson]:
        """Count a recall atomically: use_count, last_used, triggered domain, provenance."""
        if not ids:
            return []
        lock_rows(conn, lessons, self._rows.ids(ids))
        conn.execute(
            update(lessons).where(self._rows.ids(ids)).values(use_count=lessons.c.use_count + 1, last_used=now)
        )
        self._rows.link(conn, ids, [site] if site else [], run_id, role="recalled", now=now)
        used = self._in_order(conn, ids)
        promoted = self._promote(conn, ids, loaded=used)
        return [item.model_copy(update={"category": "best_practice"}) if item.id in promoted else item for item in used]

    def _promote(
        self, conn: Connection, lesson_ids: Sequence[str], *, loaded: Sequence[Lesson] | None = None,
    ) -> set[str]:
        """error_recovery lessons for everywhere, used 5+ times on 3+ distinct sites, become best practices;
        returns the ids promoted. ``loaded``: the lessons as this transaction reads them now, when read already."""
        promoted: set[str] = set()
        for item in loaded if loaded is not None else self._rows.load(conn, self._rows.ids(lesson_ids)):
            if (
                item.category == "error_recovery" and item.domain is None and not item.demoted
                and item.use_count >= PROMOTE_USES and len(distinct_sites(item.triggered_domains)) >= PROMOTE_DOMAINS
            ):
                changed = conn.execute(
                    update(lessons)
                    .where(self._rows.key(item.id), lessons.c.category == "error_recovery")
                    .values(category="best_practice")
                ).rowcount
                if changed:
                    promoted.add(item.id)
                    self._scope.emit(
                        "lesson_promoted", lesson=item.lesson, use_count=item.use_count,
                        triggered_domains=item.triggered_domains,
                    )
        return promoted

    def _merge_imported(self, conn: Connection, entry: Lesson) -> bool:
        """Insert an imported lesson, or merge it into its equivalent (max counts, union of domains)."""
        serialize_on(conn, f"webmem.lessons.{self._ns}")
        lesson_id, existed = self._rows.stored_as(conn, entry)
        if existed:
            conn.execute(update(lessons).where(self._rows.key(lesson_id)).values(
                use_count=case((lessons.c.use_count < entry.use_count, entry.use_count), else_=lessons.c.use_count),
                last_used=case((lessons.c.last_used < entry.last_used, entry.last_used), else_=lessons.c.last_used),
            ))
        self._rows.link(conn, [lesson_id], entry.triggered_domains, None, role="learned", now=entry.last_used)
        self._promote(conn, [lesson_id])
        return existed


def _normal_command(command: object) -> object:
    if command is None or not isinstance(command, str):
        return command
    return command_name(command)


def _normal_pattern(pattern: object) -> object:
    if pattern is None or not isinstance(pattern, str):
        return pattern
    return plain_text(pattern.lower(), 200) or None


def system_prompt_text(chosen: Sequence[Lesson]) -> str:
    """Tier-1 lessons as a system-prompt section, learned ones apart from built-in ones; '' for none."""
    if not chosen:
        return ""
    learned = any(item.source != "seed" for item in chosen)
    lines = [SYSTEM_PROMPT_HEADING if learned else BUILT_IN_HEADING]
    for intro, group in ((LEARNED_INTRO, [item for item in chosen if item.source != "seed"]),
                         (BUILT_IN_INTRO, [item for item in chosen if item.source == "seed"])):
        if group:
            lines += ["", intro, *(f"- {clean_for_prompt(item.lesson, 500)}" for item in group)]
    return "\n".join(lines)

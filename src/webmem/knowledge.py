"""App knowledge: facts about each domain with confidence scores, and the rolling session history."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Text, and_, bindparam, case, delete, func, select, update
from sqlalchemy.dialects import postgresql

from .core.clock import as_utc, new_id, utcnow
from .core.errors import InvalidInput
from .core.models import FACT_TYPES, Fact, Session, Step, validated
from .core.records import stored_record
from .core.text import clean_for_prompt
from .core.urls import check_domain, check_url
from .store.engine import retried
from .store.prepared import Prepared, Read
from .store.schema import facts, sessions
from .store.scope import Scope
from .store.statements import dialect_insert, serialize_on
from .store.types import UTCDateTime

NEW_FACT_CONFIDENCE = 0.6
BOOST_RATE = 0.2  # a confirmation closes this share of the gap to 1
CONFLICT_FACTOR = 0.5
PRUNE_BELOW = 0.1
PROMPT_MIN_CONFIDENCE = 0.5
MAX_SESSIONS = 5
FULL_SESSIONS = 2  # the newest sessions are shown in full, older ones on one line
SHORT_OUTCOME = 80
_FACT_COLUMNS = [column for column in facts.c if column.name not in ("pk", "namespace")]
_SESSION_COLUMNS = [column for column in sessions.c if column.name not in ("pk", "namespace")]
_FACT_NAMES = [column.name for column in _FACT_COLUMNS]
_FACT_KEY_POSITIONS = [_FACT_NAMES.index(name) for name in ("type", "key", "value")]
_SESSION_NAMES = [{"session_id": "id", "recorded_at": "timestamp"}.get(column.name, column.name)
                  for column in _SESSION_COLUMNS]
_FACTS_QUERY = (
    select(*_FACT_COLUMNS)
    .where(facts.c.namespace == bindparam("ns"), facts.c.domain == bindparam("domain"),
           facts.c.confidence >= bindparam("confidence"))
    .order_by(facts.c.confidence.desc(), facts.c.last_seen.desc(), facts.c.pk)
)
_FACTS = Prepared(_FACTS_QUERY)
_FACTS_OF_TYPE = Prepared(_FACTS_QUERY.where(facts.c.type == bindparam("type")))
_LAST_SESSIONS = Prepared(
    select(*_SESSION_COLUMNS)
    .where(sessions.c.namespace == bindparam("ns"), sessions.c.domain == bindparam("domain"))
    .order_by(sessions.c.recorded_at.desc(), sessions.c.pk.desc())
    .limit(MAX_SESSIONS)
)


def _fact_key(*, same_value: bool) -> list[Any]:
    names = ("namespace", "domain", "type", "key")
    return [*(facts.c[name] == bindparam(name) for name in names),
            facts.c.value == bindparam("value") if same_value else facts.c.value != bindparam("value")]


def _boosted(confidence: Any) -> Any:
    return confidence + (1 - confidence) * BOOST_RATE


def _learn_fact_statement(dialect: str) -> Any:
    statement = dialect_insert(dialect)(facts).values(
        {column.name: bindparam(column.name) for column in facts.c if column.name != "pk"}
    )
    return statement.on_conflict_do_update(
        index_elements=["namespace", "domain", "type", "key", "value"],
        set_={"confidence": _boosted(facts.c.confidence), "sources": facts.c.sources + 1,
              "last_seen": statement.excluded.last_seen},
    ).returning(*_FACT_COLUMNS)


_BOOST_FACT = Prepared(update(facts).where(*_fact_key(same_value=True)).values(
    confidence=_boosted(facts.c.confidence), sources=facts.c.sources + 1, last_seen=bindparam("last_seen"),
).returning(*_FACT_COLUMNS))


def _boost_facts_statement(dialect: str) -> Any:
    """PostgreSQL: :data:`_BOOST_FACT` for several facts of a domain at once (their types, keys and values as
    arrays of one length)."""
    given = func.unnest(*(bindparam(f"{name}s", type_=postgresql.ARRAY(Text)) for name in ("type", "key", "value"))) \
        .table_valued("type", "key", "value").render_derived(name="given")
    return update(facts).where(
        facts.c.namespace == bindparam("namespace"), facts.c.domain == bindparam("domain"),
        facts.c.type == given.c.type, facts.c.key == given.c.key, facts.c.value == given.c.value,
    ).values(
        confidence=_boosted(facts.c.confidence), sources=facts.c.sources + 1, last_seen=bindparam("last_seen"),
    ).returning(*_FACT_COLUMNS)


_BOOST_FACTS = Prepared(_boost_facts_statement)
_DECAY_OTHER_VALUES = Prepared(update(facts).where(*_fact_key(same_value=False)).values(
    confidence=facts.c.confidence * CONFLICT_FACTOR,
))
_LEARN_FACT = Prepared(_learn_fact_statement)
_PRUNE_DOMAIN = Prepared(delete(facts).where(
    facts.c.namespace == bindparam("namespace"), facts.c.domain == bindparam("domain"), facts.c.confidence < PRUNE_BELOW,
))
_MERGE_FACT = Prepared(update(facts).where(*_fact_key(same_value=True)).values(
    confidence=case((facts.c.confidence < bindparam("confidence"), bindparam("confidence")), else_=facts.c.confidence),
    sources=facts.c.sources + bindparam("sources"),
    last_seen=case((facts.c.last_seen < bindparam("last_seen", type_=UTCDateTime), bindparam("last_seen", type_=UTCDateTime)), else_=facts.c.last_seen),
))
_INSERT_FACT = Prepared(facts.insert().values(
    {column.name: bindparam(column.name) for column in facts.c if column.name != "pk"}
))
_SESSION_EXISTS = Prepared(select(sessions.c.pk).where(
    *(sessions.c[name] == bindparam(name) for name in ("namespace", "domain", "session_id", "recorded_at"))
))


def _add_session_statement(dialect: str) -> Any:
    """The session's row. On PostgreSQL the domain's advisory lock (``lock_key``) is taken by the same statement
    before the row is written: one round trip where the lock and the insert took two (see record_session)."""
    columns = [column for column in sessions.c if column.name != "pk"]
    if dialect != "postgresql":
        return sessions.insert().values({column.name: bindparam(column.name) for column in columns})
    locked = select(func.pg_advisory_xact_lock(func.hashtext(bindparam("lock_key", type_=Text))).label("locked"))
    return sessions.insert().from_select(
        [column.name for column in columns],
        select(*(bindparam(column.name, type_=column.type) for column in columns)).select_from(
            locked.subquery("domain_lock")))


_ADD_SESSION = Prepared(_add_session_statement)
_SESSIONS_OF_DOMAIN = (sessions.c.namespace == bindparam("namespace"), sessions.c.domain == bindparam("domain"))
_KEEP_NEWEST_SESSIONS = Prepared(delete(sessions).where(*_SESSIONS_OF_DOMAIN, sessions.c.pk.not_in(
    select(sessions.c.pk).where(*_SESSIONS_OF_DOMAIN)
    .order_by(sessions.c.recorded_at.desc(), sessions.c.pk.desc()).limit(MAX_SESSIONS).scalar_subquery()
)))


class AppKnowledge:
    """Domain-scoped facts (timing, selector, pattern, quirk) and the last sessions per domain."""

    def __init__(self, scope: Scope) -> None:
        self._scope = scope
        self._ns = scope.namespace

    def record_fact(self, domain: str, type: str, key: str, value: str, *, run_id: str | None = None) -> Fact:  # noqa: A002
        """Confirm a fact (confidence rises towards 1) or learn it; contradicted values lose half.

        The update happens in the database, so two processes confirming the same fact both count.
        """
        return self.record_facts(domain, [{"type": type, "key": key, "value": value}], run_id=run_id)[0]

    @retried
    def record_facts(
        self, domain: str, items: Iterable[Mapping[str, str]], *, run_id: str | None = None
    ) -> list[Fact]:
        """Record several facts (mappings with type, key and value) in one transaction."""
        if isinstance(items, Mapping | str):
            raise InvalidInput("facts: expected a list of {type, key, value} mappings")
        now = utcnow()
        domain = check_domain(domain)
        learned = [self._fact_to_learn(domain, item, now) for item in items]
        if not learned:
            return []
        changes = []
        with self._scope.store.write() as conn:
            # Writers of one domain's facts take turns, so that exactly one of them learns a new value (and
            # decays the others) while the rest confirm it (PostgreSQL; SQLite writers already do).
            serialize_on(conn, f"webmem.facts.{self._ns}.{domain}")
            boosted_at_once = self._boost_at_once(conn, domain, learned, now)
            for fact in learned:
                key = {"namespace": self._ns, "domain": domain, "type": fact.type, "key": fact.key,
                       "value": fact.value}
                row = boosted_at_once.get((fact.type, fact.key, fact.value)) if boosted_at_once is not None \
                    else _BOOST_FACT.first(conn, {**key, "last_seen": now})
                boosted, decayed = row is not None, 0
                if row is None:
                    decayed = _DECAY_OTHER_VALUES.rowcount(conn, key)
                    # Another writer may have learned the same value meanwhile: then it is a confirmation.
                    row = _LEARN_FACT.first(conn, {"namespace": self._ns, **fact.model_dump()})
                changes.append((_fact(row), boosted, decayed))
            # only a decay lowers a confidence: without one, nothing fell below the threshold
            pruned = _PRUNE_DOMAIN.rowcount(conn, {"namespace": self._ns, "domain": domain}) \
                if any(decayed for _, _, decayed in changes) else 0
        for stored, boosted, decayed in changes:
            self._scope.emit(
                "fact_boosted" if boosted else "fact_recorded", run_id=run_id, domain=stored.domain, type=stored.type,
                key=stored.key, value=stored.value, confidence=round(stored.confidence, 4), sources=stored.sources,
            )
            if decayed:
                self._scope.emit("fact_decayed", run_id=run_id, domain=stored.domain, type=stored.type,
                                 key=stored.key, conflicting=decayed)
        if pruned:
            self._scope.emit("facts_pruned", run_id=run_id, domain=domain, count=pruned)
        return [stored for stored, _, _ in changes]

    def _boost_at_once(
        self, conn: Connection, domain: str, learned: Sequence[Fact], now: datetime
    ) -> dict[tuple[str, str, str], tuple[Any, ...]] | None:
        """On PostgreSQL, the known facts among ``learned`` confirmed in one statement (one round trip instead of
        one per fact): their rows, by type, key and value. None where they are confirmed one by one: on SQLite
        (no round trips), and when two of them share a type and key (the order of confirming one and
        learning the other changes the confidences)."""
        if conn.dialect.name != "postgresql" or len(learned) < 2 or \
                len({(fact.type, fact.key) for fact in learned}) < len(learned):
            return None
        rows = _BOOST_FACTS.rows(conn, {
            "namespace": self._ns, "domain": domain, "last_seen": now, "types": [fact.type for fact in learned],
            "keys": [fact.key for fact in learned], "values": [fact.value for fact in learned]})
        return {tuple(row[index] for index in _FACT_KEY_POSITIONS): row for row in rows}

    def _fact_to_learn(self, domain: str, item: Mapping[str, str], now: datetime) -> Fact:
        if not isinstance(item, Mapping) or set(item) - {"type", "key", "value"}:
            raise InvalidInput(f"facts: each fact is a mapping with type, key and value, got {item!r}"[:300])
        key, value = item.get("key", ""), item.get("value", "")
        return validated(
            Fact, domain=domain, type=item.get("type", ""),
            key=self._scope.redact(key) if isinstance(key, str) else key,
            value=self._scope.redact(value) if isinstance(value, str) else value,
            confidence=NEW_FACT_CONFIDENCE, sources=1, first_seen=now, last_seen=now,
        )

    def import_fact(self, fact: Fact) -> str:
        """Store a fact as it is; the same (type, key, value) again is merged: highest confidence,
        sources added, latest last_seen. Returns ``"added"`` or ``"merged"``.
        """
        if not isinstance(fact, Fact):
            raise InvalidInput("fact: expected a webmem.Fact")
        fact = fact.model_copy(update={"key": self._scope.redact(fact.key), "value": self._scope.redact(fact.value)})
        row = {"namespace": self._ns, **fact.model_dump()}
        with self._scope.store.write() as conn:
            merged = _MERGE_FACT.rowcount(conn, row)
            if not merged:
                _INSERT_FACT.execute(conn, row).close()
        return "merged" if merged else "added"

    def import_session(self, session: Session) -> bool:
        """Store a session as it is; False when the same session at the same time is already here."""
        if not isinstance(session, Session):
            raise InvalidInput("session: expected a webmem.Session")
        with self._scope.store.write() as conn:
            if _SESSION_EXISTS.first(conn, {"namespace": self._ns, "domain": session.domain,
                                             "session_id": session.id, "recorded_at": session.timestamp}):
                return False
            self.record_session(
                session.domain, goal=session.goal, outcome=session.outcome, success=session.success,
                final_url=session.final_url, turns_used=session.turns_used, duration_ms=session.duration_ms,
                session_id=session.id, run_id=session.run_id, timestamp=session.timestamp,
            )
        return True

    def facts(self, domain: str, type: str | None = None, min_confidence: float = 0.3) -> list[Fact]:  # noqa: A002
        """Facts of a domain at or above ``min_confidence``, highest confidence first."""
        params = {"ns": self._ns, "domain": check_domain(domain)}
        if type is not None:
            params["type"] = _check_type(type)
        if isinstance(min_confidence, bool) or not isinstance(min_confidence, int | float):
            raise InvalidInput(f"min_confidence: expected a number, got {min_confidence!r}")
        params["confidence"] = min_confidence
        with self._scope.store.read() as conn:
            return [_fact(row) for row in (_FACTS_OF_TYPE if type is not None else _FACTS).rows(conn, params)]

    def context_reads(self, domain: str) -> list[Read]:
        """The reads a run's context makes here (the domain's facts and sessions), to be read ahead."""
        params = {"ns": self._ns, "domain": check_domain(domain)}
        return [(_FACTS, {**params, "confidence": 0.0}), (_LAST_SESSIONS, params)]

    def domains(self) -> list[str]:
        """Every domain with facts or sessions in this namespace."""
        with self._scope.store.read() as conn:
            found = set(conn.execute(select(facts.c.domain).where(facts.c.namespace == self._ns).distinct()).scalars())
            found |= set(conn.execute(
                select(sessions.c.domain).where(sessions.c.namespace == self._ns).distinct()
            ).scalars())
        return sorted(found)

    def format_for_prompt(self, domain: str, *, known: Sequence[Fact] | None = None) -> str:
        """Facts at or above 0.5 grouped by type, highest confidence first; '' when there are none.
        ``known``: the domain's facts already read (``facts(domain, min_confidence=0)``)."""
        known = self.facts(domain, min_confidence=PROMPT_MIN_CONFIDENCE) if known is None else [
            fact for fact in known if fact.confidence >= PROMPT_MIN_CONFIDENCE]
        blocks = []
        for fact_type in FACT_TYPES:
            of_type = [fact for fact in known if fact.type == fact_type]
            if of_type:
                lines = [f"{fact_type.capitalize()}:"]
                lines += [
                    f"  - {clean_for_prompt(f.key, 80)}: {clean_for_prompt(f.value, 240)} "
                    f"(confidence {f.confidence:.2f})"
                    for f in of_type
                ]
                blocks.append("\n".join(lines))
        return "\n".join(blocks)

    @retried
    def record_session(
        self,
        domain: str,
        *,
        goal: str,
        outcome: str,
        success: bool,
        final_url: str | None = None,
        turns_used: int = 0,
        duration_ms: int = 0,
        session_id: str | None = None,
        run_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> Session:
        """Add a finished run to the domain's history; only the newest five are kept."""
        session = validated(
            Session,
            id=session_id if session_id is not None else new_id("session"),
            domain=check_domain(domain),
            goal=self._scope.redact(goal) if isinstance(goal, str) else goal,
            outcome=self._scope.redact(outcome) if isinstance(outcome, str) else outcome,
            success=success,
            final_url=self._scope.redact(check_url(final_url, field="final_url")) if final_url else None,
            timestamp=as_utc(timestamp) if timestamp else utcnow(),
            turns_used=turns_used,
            duration_ms=duration_ms,
            run_id=run_id,
        )
        values = session.model_dump(exclude={"id", "timestamp"})
        with self._scope.store.write() as conn:
            # Writers on one domain take turns (the insert takes serialize_on's lock itself on PostgreSQL), or each
            # would keep five of what it sees, six together.
            _ADD_SESSION.execute(conn, {
                "namespace": self._ns, "session_id": session.id, "recorded_at": session.timestamp, **values,
                "lock_key": f"webmem.sessions.{self._ns}.{session.domain}",
            }).close()
            _KEEP_NEWEST_SESSIONS.execute(conn, {"namespace": self._ns, "domain": session.domain}).close()
        self._scope.emit(
            "session_recorded", run_id=run_id, domain=session.domain, session_id=session.id,
            success=session.success, turns_used=session.turns_used,
        )
        return session

    def sessions(self, domain: str) -> list[Session]:
        """The domain's last sessions, newest first."""
        with self._scope.store.read() as conn:
            rows = _LAST_SESSIONS.rows(conn, {"ns": self._ns, "domain": check_domain(domain)})
            return [_session(row) for row in rows]

    def format_sessions(self, domain: str, *, hide: Callable[[str, str], str] | None = None) -> str:
        """The two newest sessions in full, older ones on one line each; '' when there are none.

        ``hide(session_goal, text)``, when given, rewrites what each session says (its goal, outcome and
        final URL), e.g. to hide the values of an earlier instruction from a run given another one.
        """
        lines: list[str] = []
        for number, session in enumerate(self.sessions(domain), start=1):
            goal, outcome, final_url = session.goal, session.outcome, session.final_url
            if hide is not None:
                goal, outcome = hide(session.goal, goal), hide(session.goal, outcome)
                final_url = hide(session.goal, final_url) if final_url else final_url
            verdict = "succeeded" if session.success else "failed"
            when = f"{session.timestamp:%Y-%m-%d %H:%M} UTC"
            if number <= FULL_SESSIONS:
                lines.append(
                    f"{number}. [{verdict}] {when}, {session.turns_used} turns, "
                    f"{session.duration_ms / 1000:.1f}s (session {session.id})"
                )
                lines.append(f"   Goal: {clean_for_prompt(goal, 300)}")
                lines.append(f"   Outcome: {clean_for_prompt(outcome, 500)}")
                if final_url:
                    lines.append(f"   Final URL: {clean_for_prompt(final_url, 300)}")
            else:
                lines.append(f"{number}. [{verdict}] {when}: {clean_for_prompt(goal, 120)} -> "
                             f"{clean_for_prompt(outcome, SHORT_OUTCOME)}")
        return "\n".join(lines)

    def prune(self, domain: str | None = None) -> int:
        """Delete facts below 0.1 confidence (in one domain, or everywhere); returns how many."""
        with self._scope.store.write() as conn:
            pruned = self._prune(conn, check_domain(domain) if domain is not None else None)
        if pruned:
            self._scope.emit("facts_pruned", domain=domain, count=pruned)
        return pruned

    def _prune(self, conn: Any, domain: str | None) -> int:
        condition = and_(facts.c.namespace == self._ns, facts.c.confidence < PRUNE_BELOW)
        if domain is not None:
            condition = and_(condition, facts.c.domain == domain)
        return int(conn.execute(delete(facts).where(condition)).rowcount)



def _check_type(fact_type: object) -> str:
    if fact_type not in FACT_TYPES:
        raise InvalidInput(f"type: {fact_type!r} is not one of {', '.join(FACT_TYPES)}")
    return str(fact_type)


def _fact(row: Any) -> Fact:
    return stored_record(Fact, _FACT_NAMES, row)


def _session(row: Any) -> Session:
    return stored_record(Session, _SESSION_NAMES, row)


def derived_facts(steps: list[Step]) -> list[dict[str, str]]:
    """Facts a successful run teaches about its domain: how long it took and how it began."""
    learned = [{"type": "pattern", "key": "typical-steps", "value": f"{len(steps)} steps"}]
    first = next((step for step in steps if step.ok and step.action not in ("goto", "navigate", "wait", "scroll")), None)
    if first is not None and (first.target or first.selector):
        learned.append({
            "type": "pattern", "key": "first-meaningful-action",
            "value": clean_for_prompt(f"{first.action} {first.target or first.selector}", 300),
        })
    return learned

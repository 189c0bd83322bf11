"""Named, recorded, transactional schema migrations, applied in order when a store opens.

Each migration runs in its own transaction together with the row that records it, so a
crash leaves the database either before or after the migration, never halfway. The table
definitions inside a migration are frozen copies of the shape at that point: never edit a
migration that has shipped, add a new one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Connection,
    Float,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    select,
    text,
)

from ..core.clock import utcnow
from ..core.errors import InvalidInput, SchemaTooNew, StoreCorrupt
from .later_migrations import (
    act_words,
    advice_outcomes,
    element_signals,
    field_options,
    goal_index,
    lesson_scopes,
    namespace_policy,
    replay_outcomes,
    run_owners,
    site_changes,
    snapshots_apart,
)
from .schema import migrations_table
from .types import UTCDateTime

if TYPE_CHECKING:
    from .engine import Store


@dataclass(frozen=True)
class Migration:
    name: str
    apply: Callable[[Connection], None]


@dataclass(frozen=True)
class MigrationState:
    name: str
    applied_at: datetime | None

    @property
    def applied(self) -> bool:
        return self.applied_at is not None


def _initial_tables(conn: Connection) -> None:
    md = MetaData()
    Table(
        "runs", md,
        Column("namespace", String(200), primary_key=True),
        Column("run_id", String(200), primary_key=True),
        Column("session_id", String(200)),
        Column("parent_run_id", String(200)),
        Column("status", String(32), nullable=False),
        Column("goal", Text, nullable=False),
        Column("domain", String(200), nullable=False),
        Column("start_url", Text, nullable=False),
        Column("final_url", Text),
        Column("current_url", Text),
        Column("started_at", UTCDateTime, nullable=False),
        Column("updated_at", UTCDateTime, nullable=False),
        Column("completed_at", UTCDateTime),
        Column("success", Boolean),
        Column("summary", Text),
        Column("result", Text),
        Column("reason", Text),
        Column("artifact_paths", JSON, nullable=False),
        Column("turn_count", Integer, nullable=False),
        Column("model", String(200)),
    )
    Table(
        "run_steps", md,
        Column("namespace", String(200), primary_key=True),
        Column("run_id", String(200), primary_key=True),
        Column("seq", Integer, primary_key=True),
        Column("url", Text),
        Column("action", String(200), nullable=False),
        Column("target", Text),
        Column("selector", Text),
        Column("value", Text),
        Column("ok", Boolean, nullable=False),
        Column("verified", Boolean),
        Column("error", Text),
        Column("expected_effect", Text),
        Column("snapshot_hash", String(200)),
        Column("duration_ms", Integer),
        Column("recorded_at", UTCDateTime, nullable=False),
        ForeignKeyConstraint(["namespace", "run_id"], ["runs.namespace", "runs.run_id"], ondelete="CASCADE"),
    )
    Table(
        "trajectories", md,
        Column("namespace", String(200), primary_key=True),
        Column("trajectory_id", String(200), primary_key=True),
        Column("run_id", String(200)),
        Column("goal", Text, nullable=False),
        Column("origin", String(200), nullable=False),
        Column("domain", String(200), nullable=False),
        Column("success", Boolean, nullable=False),
        Column("duration_ms", Integer, nullable=False),
        Column("model", String(200)),
        Column("created_at", UTCDateTime, nullable=False),
        Column("steps", JSON, nullable=False),
    )
    Table(
        "sessions", md,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("namespace", String(200), nullable=False),
        Column("domain", String(200), nullable=False),
        Column("session_id", String(200), nullable=False),
        Column("run_id", String(200)),
        Column("goal", Text, nullable=False),
        Column("outcome", Text, nullable=False),
        Column("success", Boolean, nullable=False),
        Column("final_url", Text),
        Column("recorded_at", UTCDateTime, nullable=False),
        Column("turns_used", Integer, nullable=False),
        Column("duration_ms", Integer, nullable=False),
    )
    Table(
        "facts", md,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("namespace", String(200), nullable=False),
        Column("domain", String(200), nullable=False),
        Column("type", String(32), nullable=False),
        Column("key", String(200), nullable=False),
        Column("value", String(1000), nullable=False),
        Column("confidence", Float, nullable=False),
        Column("sources", Integer, nullable=False),
        Column("first_seen", UTCDateTime, nullable=False),
        Column("last_seen", UTCDateTime, nullable=False),
        UniqueConstraint("namespace", "domain", "type", "key", "value", name="uq_facts_identity"),
    )
    Table(
        "selectors", md,
        Column("namespace", String(200), primary_key=True),
        Column("domain", String(200), primary_key=True),
        Column("element", String(200), primary_key=True),
        Column("stable_selector", Text),
        Column("last_ref", String(200)),
        Column("success_count", Integer, nullable=False),
        Column("last_used", UTCDateTime, nullable=False),
    )
    md.create_all(conn)


_LOOKUP_INDEXES = {
    "ix_runs_recent": "runs (namespace, started_at)",
    "ix_runs_domain": "runs (namespace, domain, started_at)",
    "ix_runs_session": "runs (namespace, session_id)",
    "ix_runs_parent": "runs (namespace, parent_run_id)",
    "ix_trajectories_origin": "trajectories (namespace, origin, created_at)",
    "ix_sessions_domain": "sessions (namespace, domain, recorded_at)",
    "ix_facts_domain": "facts (namespace, domain, type, key)",
}


def _lookup_indexes(conn: Connection) -> None:
    for name, target in _LOOKUP_INDEXES.items():
        conn.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {target}"))


def _lesson_tables(conn: Connection) -> None:
    md = MetaData()
    Table(
        "namespace_state", md,
        Column("namespace", String(200), primary_key=True),
        Column("lessons_seeded_at", UTCDateTime),
    )
    lessons = Table(
        "lessons", md,
        Column("namespace", String(200), primary_key=True),
        Column("lesson_id", String(200), primary_key=True),
        Column("lesson", Text, nullable=False),
        Column("category", String(32), nullable=False),
        Column("failed_command", String(200)),
        Column("error_pattern", String(200)),
        Column("domain", String(200)),
        Column("use_count", Integer, nullable=False),
        Column("helpful_count", Integer, nullable=False),
        Column("unhelpful_count", Integer, nullable=False),
        Column("source", String(32), nullable=False),
        Column("created_at", UTCDateTime, nullable=False),
        Column("last_used", UTCDateTime, nullable=False),
    )
    def owner() -> ForeignKeyConstraint:
        return ForeignKeyConstraint(
            ["namespace", "lesson_id"], [lessons.c.namespace, lessons.c.lesson_id], ondelete="CASCADE"
        )

    Table(
        "lesson_domains", md,
        Column("namespace", String(200), primary_key=True),
        Column("lesson_id", String(200), primary_key=True),
        Column("domain", String(200), primary_key=True),
        Column("first_seen", UTCDateTime, nullable=False),
        owner(),
    )
    Table(
        "lesson_runs", md,
        Column("namespace", String(200), primary_key=True),
        Column("lesson_id", String(200), primary_key=True),
        Column("run_id", String(200), primary_key=True),
        Column("role", String(32), primary_key=True),
        Column("at", UTCDateTime, nullable=False),
        owner(),
    )
    md.create_all(conn)
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_lessons_category ON lessons (namespace, category, use_count)"))


def _episode_tables(conn: Connection) -> None:
    md = MetaData()
    Table(
        "episode_sessions", md,
        Column("namespace", String(200), primary_key=True),
        Column("session_id", String(200), primary_key=True),
        Column("last_rep", Integer, nullable=False),
        Column("created_at", UTCDateTime, nullable=False),
        Column("updated_at", UTCDateTime, nullable=False),
    )
    Table(
        "episode_entries", md,
        Column("entry_id", Integer, primary_key=True, autoincrement=True),
        Column("namespace", String(200), nullable=False),
        Column("session_id", String(200), nullable=False),
        Column("rep", Integer, nullable=False),
        Column("step_num", Integer, nullable=False),
        Column("step_id", String(200)),
        Column("run_id", String(200)),
        Column("env_pre", JSON, nullable=False),
        Column("env_post", JSON),
        Column("internal_state", Text, nullable=False),
        Column("think", Text),
        Column("internal_state_embedding", JSON, nullable=False),
        Column("embedder", String(200), nullable=False),
        Column("action", Text, nullable=False),
        Column("action_element_text", Text, nullable=False),
        Column("outcome", String(32), nullable=False),
        Column("outcome_reason", Text),
        Column("correction", Text),
        Column("task_incomplete", Text),
        Column("grade_confidence", Float),
        Column("created_at", UTCDateTime, nullable=False),
        UniqueConstraint("namespace", "session_id", "rep", "step_num", name="uq_episode_step"),
    )
    md.create_all(conn)


def _working_memory_tables(conn: Connection) -> None:
    md = MetaData()
    Table(
        "patterns", md,
        Column("namespace", String(200), primary_key=True),
        Column("pattern_id", String(200), primary_key=True),
        Column("domain", String(200), nullable=False),
        Column("description", Text, nullable=False),
        Column("pattern_type", String(32), nullable=False),
        Column("steps", JSON, nullable=False),
        Column("fingerprint", String(64), nullable=False),
        Column("success_count", Integer, nullable=False),
        Column("failure_count", Integer, nullable=False),
        Column("created_at", UTCDateTime, nullable=False),
        Column("last_used", UTCDateTime, nullable=False),
        UniqueConstraint("namespace", "domain", "fingerprint", name="uq_pattern_steps"),
    )
    Table(
        "working_entries", md,
        Column("namespace", String(200), primary_key=True),
        Column("run_id", String(200), primary_key=True),
        Column("entry_id", Integer, primary_key=True),
        Column("entry", JSON, nullable=False),
        Column("evicted", Boolean, nullable=False),
        Column("recorded_at", UTCDateTime, nullable=False),
    )
    Table(
        "working_state", md,
        Column("namespace", String(200), primary_key=True),
        Column("run_id", String(200), primary_key=True),
        Column("state", JSON, nullable=False),
        Column("updated_at", UTCDateTime, nullable=False),
    )
    md.create_all(conn)


NAMESPACED_TABLES = (
    "runs", "run_steps", "trajectories", "sessions", "facts", "selectors", "namespace_state", "lessons",
    "lesson_domains", "lesson_runs", "episode_sessions", "episode_entries", "patterns", "working_entries",
    "working_state",
)


def _row_level_security(conn: Connection) -> None:
    """PostgreSQL only: every namespaced table shows and accepts only rows of the session's namespace
    (``webmem.namespace``, set by the store at the start of each transaction). Owners are bound too.
    """
    if conn.dialect.name != "postgresql":
        return
    for table in NAMESPACED_TABLES:
        namespace_policy(conn, table)


def _wide_durations(conn: Connection) -> None:
    """PostgreSQL only: durations in milliseconds as 64-bit integers. A 32-bit INTEGER ends at 24.8
    days, which a resumed or long-lived run passes; SQLite's INTEGER is 64-bit already.
    """
    if conn.dialect.name != "postgresql":
        return
    for table in ("run_steps", "trajectories", "sessions"):
        conn.execute(text(f"ALTER TABLE {table} ALTER COLUMN duration_ms TYPE BIGINT"))


def _replay_templates(conn: Connection) -> None:
    """A trajectory's goal template and slotted steps, for replaying it on a new goal of the same shape."""
    conn.execute(text("ALTER TABLE trajectories ADD COLUMN goal_template TEXT"))
    conn.execute(text("ALTER TABLE trajectories ADD COLUMN replay_steps JSON"))


MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_initial", _initial_tables),
    Migration("0002_lookup_indexes", _lookup_indexes),
    Migration("0003_lessons", _lesson_tables),
    Migration("0004_episodes", _episode_tables),
    Migration("0005_working_memory", _working_memory_tables),
    Migration("0006_row_level_security", _row_level_security),
    Migration("0007_wide_durations", _wide_durations),
    Migration("0008_replay_templates", _replay_templates),
    Migration("0009_goal_index", goal_index),
    Migration("0010_replay_outcomes", replay_outcomes),
    Migration("0011_advice_outcomes", advice_outcomes),
    Migration("0012_site_changes", site_changes),
    Migration("0013_lesson_scopes", lesson_scopes),
    Migration("0014_snapshots_apart", snapshots_apart),
    Migration("0015_element_signals", element_signals),
    Migration("0016_run_owners", run_owners),
    Migration("0017_act_words", act_words),
    Migration("0018_field_options", field_options),
)


#: The PostgreSQL advisory lock that each migration's transaction holds ("webmem" in ASCII).
MIGRATION_LOCK_KEY = 0x7765626D656D


def _known_names() -> list[str]:
    return [migration.name for migration in MIGRATIONS]


def _applied(conn: Connection) -> dict[str, datetime]:
    if not inspect(conn).has_table(migrations_table.name):
        return {}
    rows = conn.execute(select(migrations_table.c.name, migrations_table.c.applied_at))
    return {row.name: row.applied_at for row in rows}


def check_not_newer(applied: dict[str, datetime]) -> None:
    known = _known_names()
    unknown = sorted(set(applied) - set(known))
    # damage, not a newer webmem: a number of ours with another name, or one of ours missing (a newer webmem
    # applies every migration of ours before its own)
    if unknown and (any(name[:4] <= known[-1][:4] for name in unknown) or not set(known) <= set(applied)):
        raise StoreCorrupt(f"the database records migrations webmem never wrote ({', '.join(map(repr, unknown))})")
    if unknown:
        raise SchemaTooNew(
            f"the database has migrations this webmem does not know ({', '.join(unknown)}); "
            "it was written by a newer webmem: upgrade webmem to open it"
        )


def migration_states(conn: Connection) -> list[MigrationState]:
    """Every known migration with when it was applied (None when pending)."""
    applied = _applied(conn)
    check_not_newer(applied)
    return [MigrationState(name, applied.get(name)) for name in _known_names()]


def apply_migrations(store: Store, *, target: str | None = None) -> list[str]:
    """Apply pending migrations in order, each in its own write transaction; returns their names.

    With ``target``, stop after that migration (used to build older databases in tests).
    """
    names = _known_names()
    if target is not None and target not in names:
        raise InvalidInput(f"target: unknown migration {target!r} (known: {', '.join(names)})")
    wanted = names if target is None else names[: names.index(target) + 1]
    with store.read() as conn:
        applied = _applied(conn)
    check_not_newer(applied)
    done: list[str] = []
    for migration in MIGRATIONS:
        if migration.name not in wanted or migration.name in applied:
            continue
        with store.write() as conn:
            if conn.dialect.name == "postgresql":  # processes opening a new database together take turns
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
            if migration.name in _applied(conn):  # another process got there first
                continue
            migrations_table.create(conn, checkfirst=True)
            migration.apply(conn)
            conn.execute(migrations_table.insert().values(name=migration.name, applied_at=utcnow()))
        done.append(migration.name)
    return done

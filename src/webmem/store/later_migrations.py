"""The schema migrations from 0009 on (recall's goal index, advice outcomes, site changes, lessons looked up
by their site, snapshots apart from their origin's counters), with the PostgreSQL row-level-security policy
that the tables they add share.

:mod:`.migrations` lists them in order and applies them; the same rules hold: a migration that has
shipped is never edited.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Connection, Integer, MetaData, String, Table, Text, text

from .types import UTCDateTime


def namespace_policy(conn: Connection, table: str) -> None:
    """PostgreSQL: the table shows and accepts only rows of the session's namespace, owners included."""
    conn.execute(text(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY"))
    conn.execute(text(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY"))
    conn.execute(text(
        f"CREATE POLICY webmem_namespace ON {table} "
        "USING (namespace = current_setting('webmem.namespace', true)) "
        "WITH CHECK (namespace = current_setting('webmem.namespace', true))"
    ))


def goal_index(conn: Connection) -> None:
    """What recall needs without reading a trajectory's steps: the goal's signature, the step counts,
    the goal's vector, and per origin a version that tells processes holding goals in memory what
    changed. Existing trajectories get them when their namespace is next opened (on PostgreSQL a
    migration sees only its own namespace's rows).
    """
    big = "BIGINT" if conn.dialect.name == "postgresql" else "INTEGER"
    blob = "BYTEA" if conn.dialect.name == "postgresql" else "BLOB"
    for column, kind in (("goal_signature", "TEXT"), ("origin_seq", big), ("step_count", "INTEGER"),
                         ("verified_steps", "INTEGER"), ("goal_vector", blob), ("goal_vector_model", "VARCHAR(200)")):
        conn.execute(text(f"ALTER TABLE trajectories ADD COLUMN {column} {kind}"))
    Table(
        "trajectory_origins", MetaData(),
        Column("namespace", String(200), primary_key=True),
        Column("origin", String(200), primary_key=True),
        Column("version", BigInteger, nullable=False),
        Column("removals", BigInteger, nullable=False),
        Column("snapshot", Text),
        Column("snapshot_seq", BigInteger),
        Column("snapshot_removals", BigInteger),
    ).create(conn)
    conn.execute(text("CREATE INDEX ix_trajectories_origin_seq ON trajectories (namespace, origin, origin_seq)"))
    if conn.dialect.name == "postgresql":
        namespace_policy(conn, "trajectory_origins")


def replay_outcomes(conn: Connection) -> None:
    """What a replay needs to tell elements with one role and name apart, what became of each run's
    replay, and per task shape how its replays went (so that failing replays stop being tried)."""
    conn.execute(text("ALTER TABLE run_steps ADD COLUMN target_index INTEGER"))
    conn.execute(text("ALTER TABLE run_steps ADD COLUMN target_count INTEGER"))
    conn.execute(text("ALTER TABLE runs ADD COLUMN replay JSON"))
    Table(
        "replay_gates", MetaData(),
        Column("namespace", String(200), primary_key=True),
        Column("origin", String(200), primary_key=True),
        Column("shape", String(200), primary_key=True),
        Column("successes", Integer, nullable=False),
        Column("failures", Integer, nullable=False),
        Column("stop_step", Integer),
        Column("updated_at", UTCDateTime, nullable=False),
    ).create(conn)
    if conn.dialect.name == "postgresql":
        namespace_policy(conn, "replay_gates")


def advice_outcomes(conn: Connection) -> None:
    """What a lesson tells the agent to do instead (so that following it can be told from ignoring it),
    and how runs ended that were given a piece of advice or a part of the context."""
    conn.execute(text("ALTER TABLE lessons ADD COLUMN recovery VARCHAR(200)"))
    Table(
        "advice_items", MetaData(),
        Column("namespace", String(200), primary_key=True),
        Column("kind", String(32), primary_key=True),
        Column("item", String(200), primary_key=True),
        Column("given", Integer, nullable=False),
        Column("successes", Integer, nullable=False),
        Column("status", String(32), nullable=False),
        Column("updated_at", UTCDateTime, nullable=False),
    ).create(conn)
    Table(
        "advice_parts", MetaData(),
        Column("namespace", String(200), primary_key=True),
        Column("site", String(200), primary_key=True),
        Column("part", String(32), primary_key=True),
        Column("given", Integer, nullable=False),
        Column("given_successes", Integer, nullable=False),
        Column("absent", Integer, nullable=False),
        Column("absent_successes", Integer, nullable=False),
        Column("off_reason", Text),
        Column("updated_at", UTCDateTime, nullable=False),
    ).create(conn)
    if conn.dialect.name == "postgresql":
        namespace_policy(conn, "advice_items")
        namespace_policy(conn, "advice_parts")


def site_changes(conn: Connection) -> None:
    """The label beside an unnamed field (replay finds reordered fields by it), and when a selector went stale."""
    conn.execute(text("ALTER TABLE run_steps ADD COLUMN label VARCHAR(200)"))
    timestamp = UTCDateTime().impl.compile(dialect=conn.dialect)
    conn.execute(text(f"ALTER TABLE selectors ADD COLUMN stale_since {timestamp}"))


def lesson_scopes(conn: Connection) -> None:
    """Lessons found by their site's domain (and its parent domains), and by their failure, instead of a scan
    of every lesson: recall on a page or an error reads only the lessons about that site, and recording a
    lesson finds its equivalents by the failed command and error pattern."""
    conn.execute(text("UPDATE lessons SET domain = lower(domain) WHERE domain <> lower(domain)"))  # imported as given
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_lessons_domain ON lessons (namespace, domain)"))
    conn.execute(text(
        "CREATE INDEX IF NOT EXISTS ix_lessons_failure ON lessons (namespace, failed_command, error_pattern)"))


def snapshots_apart(conn: Connection) -> None:
    """Each origin's goal snapshot in a table of its own: a save raises the origin's version without rewriting
    the snapshot (SQLite rewrote its whole overflow chain, up to megabytes, on every save). On PostgreSQL a
    migration sees only its own namespace's snapshots; the other namespaces' are made anew by later saves."""
    Table(
        "trajectory_snapshots", MetaData(),
        Column("namespace", String(200), primary_key=True),
        Column("origin", String(200), primary_key=True),
        Column("snapshot", Text, nullable=False),
    ).create(conn)
    conn.execute(text("INSERT INTO trajectory_snapshots (namespace, origin, snapshot)"
                      " SELECT namespace, origin, snapshot FROM trajectory_origins WHERE snapshot IS NOT NULL"))
    conn.execute(text("UPDATE trajectory_origins SET snapshot = NULL WHERE snapshot IS NOT NULL"))
    if conn.dialect.name == "postgresql":
        namespace_policy(conn, "trajectory_snapshots")


def element_signals(conn: Connection) -> None:
    """The signals a step's target was known by (its label, row header, name attribute, options...): replay
    finds a field with no accessible name by them. Steps recorded before keep replaying as they did."""
    conn.execute(text("ALTER TABLE run_steps ADD COLUMN element JSON"))


def run_owners(conn: Connection) -> None:
    """The process that last acted on a running run: a run whose process was killed is abandoned at once for a
    process of the same machine, not after a timeout. Runs started before stay abandoned by the timeout only."""
    conn.execute(text("ALTER TABLE runs ADD COLUMN owner TEXT"))


def act_words(conn: Connection) -> None:
    """Words a site's recordings showed to name one act (``trajectories.acts``). Learned from trajectories saved
    from now on."""
    Table(
        "act_words", MetaData(),
        Column("namespace", String(200), primary_key=True),
        Column("origin", String(200), primary_key=True),
        Column("word", String(200), primary_key=True),
        Column("act", String(200), primary_key=True),
        Column("trajectory_id", String(200), nullable=False),
        Column("other_id", String(200), nullable=False),
        Column("created_at", UTCDateTime, nullable=False),
    ).create(conn)
    if conn.dialect.name == "postgresql":
        namespace_policy(conn, "act_words")


def field_options(conn: Connection) -> None:
    """Options a page offered in a field where a run chose the value its goal named (``trajectories.field_options``).
    Learned from trajectories saved from now on."""
    Table(
        "field_options", MetaData(),
        Column("namespace", String(200), primary_key=True),
        Column("origin", String(200), primary_key=True),
        Column("offered", String(200), primary_key=True),
        Column("chosen", String(200), primary_key=True),
        Column("trajectory_id", String(200), primary_key=True),
        Column("field_label", String(200), nullable=False),
        Column("task", Text, nullable=False),
        Column("created_at", UTCDateTime, nullable=False),
    ).create(conn)
    if conn.dialect.name == "postgresql":
        namespace_policy(conn, "field_options")

"""The current shape of every table, used by the queries of all components.

Migrations in ``migrations.py`` build this shape step by step; a test checks that a
migrated database and this module agree.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKeyConstraint,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from .types import UTCDateTime

metadata = MetaData()

NAME = 200  # ids, namespaces, domains, element identities
SHORT = 32  # statuses, kinds

migrations_table = Table(
    "webmem_migrations",
    metadata,
    Column("name", String(NAME), primary_key=True),
    Column("applied_at", UTCDateTime, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("run_id", String(NAME), primary_key=True),
    Column("session_id", String(NAME)),
    Column("parent_run_id", String(NAME)),
    Column("status", String(SHORT), nullable=False),
    Column("goal", Text, nullable=False),
    Column("domain", String(NAME), nullable=False),
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
    Column("model", String(NAME)),
    Column("replay", JSON),
    Column("owner", Text),  # the process that last acted on the run (core.processes): never shown, never exported
)

run_steps = Table(
    "run_steps",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("run_id", String(NAME), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("url", Text),
    Column("action", String(NAME), nullable=False),
    Column("target", Text),
    Column("selector", Text),
    Column("value", Text),
    Column("ok", Boolean, nullable=False),
    Column("verified", Boolean),
    Column("error", Text),
    Column("expected_effect", Text),
    Column("snapshot_hash", String(NAME)),
    Column("duration_ms", BigInteger),
    Column("recorded_at", UTCDateTime, nullable=False),
    Column("target_index", Integer),
    Column("target_count", Integer),
    Column("label", String(NAME)),
    Column("element", JSON),
    ForeignKeyConstraint(["namespace", "run_id"], ["runs.namespace", "runs.run_id"], ondelete="CASCADE"),
)

trajectories = Table(
    "trajectories",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("trajectory_id", String(NAME), primary_key=True),
    Column("run_id", String(NAME)),
    Column("goal", Text, nullable=False),
    Column("origin", String(NAME), nullable=False),
    Column("domain", String(NAME), nullable=False),
    Column("success", Boolean, nullable=False),
    Column("duration_ms", BigInteger, nullable=False),
    Column("model", String(NAME)),
    Column("created_at", UTCDateTime, nullable=False),
    Column("steps", JSON, nullable=False),
    Column("goal_template", Text),
    Column("replay_steps", JSON),
    Column("goal_signature", Text),
    Column("origin_seq", BigInteger),
    Column("step_count", Integer),
    Column("verified_steps", Integer),
    Column("goal_vector", LargeBinary),
    Column("goal_vector_model", String(NAME)),
)

#: One row per origin with trajectories: ``version`` grows with every trajectory saved there (each
#: trajectory keeps the version it was saved under as ``origin_seq``), ``removals`` with every delete.
#: A process holding an origin's goals in memory compares the two to know what changed.
trajectory_origins = Table(
    "trajectory_origins",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("origin", String(NAME), primary_key=True),
    Column("version", BigInteger, nullable=False),
    Column("removals", BigInteger, nullable=False),
    Column("snapshot", Text),  # no longer written (0014 moved it to trajectory_snapshots; SQLite before 3.35
    #                            cannot drop a column)
    Column("snapshot_seq", BigInteger),  # the version and removals the origin's snapshot is valid for
    Column("snapshot_removals", BigInteger),
)

#: An origin's goal index as JSON (trajectories.held), apart from the origin's counters: every save raises
#: those, and SQLite rewrites a whole row on any update, a long text's overflow pages included.
trajectory_snapshots = Table(
    "trajectory_snapshots",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("origin", String(NAME), primary_key=True),
    Column("snapshot", Text, nullable=False),
)

#: How replays of one task shape on an origin went (``shape``: the goal template, or the goal of a
#: trajectory without one): a replay that failed stops the next ones before the step where it failed
#: (``stop_step``), and repeated failures stop replaying the shape at all.
replay_gates = Table(
    "replay_gates",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("origin", String(NAME), primary_key=True),
    Column("shape", String(NAME), primary_key=True),  # a hash of the template or goal
    Column("successes", Integer, nullable=False),
    Column("failures", Integer, nullable=False),
    Column("stop_step", Integer),
    Column("updated_at", UTCDateTime, nullable=False),
)

#: Words a site's recordings showed to name one act: two goals one word apart ("Archive the note {1}", "Hide the
#: note {1}") whose runs did the same steps. ``word`` sorts before ``act``; each row names the two trajectories.
act_words = Table(
    "act_words",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("origin", String(NAME), primary_key=True),
    Column("word", String(NAME), primary_key=True),
    Column("act", String(NAME), primary_key=True),
    Column("trajectory_id", String(NAME), nullable=False),
    Column("other_id", String(NAME), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

#: Options a page offered in a field where a run chose the value its goal named ("Pending" beside the "Complete" of
#: "Show the completed orders"): each is a value of that task too. ``chosen`` is the chosen one as the goal said it,
#: ``task`` the run's goal template (or its goal).
field_options = Table(
    "field_options",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("origin", String(NAME), primary_key=True),
    Column("offered", String(NAME), primary_key=True),
    Column("chosen", String(NAME), primary_key=True),
    Column("trajectory_id", String(NAME), primary_key=True),
    Column("field_label", String(NAME), nullable=False),
    Column("task", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

advice_items = Table(
    "advice_items",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("kind", String(SHORT), primary_key=True),  # reference (a trajectory) or lesson
    Column("item", String(NAME), primary_key=True),
    Column("given", Integer, nullable=False),
    Column("successes", Integer, nullable=False),
    Column("status", String(SHORT), nullable=False),  # given, demoted or withheld
    Column("updated_at", UTCDateTime, nullable=False),
)

advice_parts = Table(
    "advice_parts",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("site", String(NAME), primary_key=True),
    Column("part", String(SHORT), primary_key=True),
    Column("given", Integer, nullable=False),
    Column("given_successes", Integer, nullable=False),
    Column("absent", Integer, nullable=False),
    Column("absent_successes", Integer, nullable=False),
    Column("off_reason", Text),
    Column("updated_at", UTCDateTime, nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("namespace", String(NAME), nullable=False),
    Column("domain", String(NAME), nullable=False),
    Column("session_id", String(NAME), nullable=False),
    Column("run_id", String(NAME)),
    Column("goal", Text, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("success", Boolean, nullable=False),
    Column("final_url", Text),
    Column("recorded_at", UTCDateTime, nullable=False),
    Column("turns_used", Integer, nullable=False),
    Column("duration_ms", BigInteger, nullable=False),
)

facts = Table(
    "facts",
    metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("namespace", String(NAME), nullable=False),
    Column("domain", String(NAME), nullable=False),
    Column("type", String(SHORT), nullable=False),
    Column("key", String(NAME), nullable=False),
    Column("value", String(1000), nullable=False),
    Column("confidence", Float, nullable=False),
    Column("sources", Integer, nullable=False),
    Column("first_seen", UTCDateTime, nullable=False),
    Column("last_seen", UTCDateTime, nullable=False),
    UniqueConstraint("namespace", "domain", "type", "key", "value", name="uq_facts_identity"),
)

selectors = Table(
    "selectors",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("domain", String(NAME), primary_key=True),
    Column("element", String(NAME), primary_key=True),
    Column("stable_selector", Text),
    Column("last_ref", String(NAME)),
    Column("success_count", Integer, nullable=False),
    Column("last_used", UTCDateTime, nullable=False),
    Column("stale_since", UTCDateTime),
)

namespace_state = Table(
    "namespace_state",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("lessons_seeded_at", UTCDateTime),
)

lessons = Table(
    "lessons",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("lesson_id", String(NAME), primary_key=True),
    Column("lesson", Text, nullable=False),
    Column("category", String(SHORT), nullable=False),
    Column("failed_command", String(NAME)),
    Column("error_pattern", String(NAME)),
    Column("domain", String(NAME)),
    Column("recovery", String(NAME)),
    Column("use_count", Integer, nullable=False),
    Column("helpful_count", Integer, nullable=False),
    Column("unhelpful_count", Integer, nullable=False),
    Column("source", String(SHORT), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_used", UTCDateTime, nullable=False),
)

lesson_domains = Table(
    "lesson_domains",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("lesson_id", String(NAME), primary_key=True),
    Column("domain", String(NAME), primary_key=True),
    Column("first_seen", UTCDateTime, nullable=False),
    ForeignKeyConstraint(
        ["namespace", "lesson_id"], ["lessons.namespace", "lessons.lesson_id"], ondelete="CASCADE"
    ),
)

lesson_runs = Table(
    "lesson_runs",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("lesson_id", String(NAME), primary_key=True),
    Column("run_id", String(NAME), primary_key=True),
    Column("role", String(SHORT), primary_key=True),
    Column("at", UTCDateTime, nullable=False),
    ForeignKeyConstraint(
        ["namespace", "lesson_id"], ["lessons.namespace", "lessons.lesson_id"], ondelete="CASCADE"
    ),
)

episode_sessions = Table(
    "episode_sessions",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("session_id", String(NAME), primary_key=True),
    Column("last_rep", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

episode_entries = Table(
    "episode_entries",
    metadata,
    Column("entry_id", Integer, primary_key=True, autoincrement=True),
    Column("namespace", String(NAME), nullable=False),
    Column("session_id", String(NAME), nullable=False),
    Column("rep", Integer, nullable=False),
    Column("step_num", Integer, nullable=False),
    Column("step_id", String(NAME)),
    Column("run_id", String(NAME)),
    Column("env_pre", JSON, nullable=False),
    Column("env_post", JSON),
    Column("internal_state", Text, nullable=False),
    Column("think", Text),
    Column("internal_state_embedding", JSON, nullable=False),
    Column("embedder", String(NAME), nullable=False),
    Column("action", Text, nullable=False),
    Column("action_element_text", Text, nullable=False),
    Column("outcome", String(SHORT), nullable=False),
    Column("outcome_reason", Text),
    Column("correction", Text),
    Column("task_incomplete", Text),
    Column("grade_confidence", Float),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("namespace", "session_id", "rep", "step_num", name="uq_episode_step"),
)

patterns = Table(
    "patterns",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("pattern_id", String(NAME), primary_key=True),
    Column("domain", String(NAME), nullable=False),
    Column("description", Text, nullable=False),
    Column("pattern_type", String(SHORT), nullable=False),
    Column("steps", JSON, nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("success_count", Integer, nullable=False),
    Column("failure_count", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_used", UTCDateTime, nullable=False),
    UniqueConstraint("namespace", "domain", "fingerprint", name="uq_pattern_steps"),
)

working_entries = Table(
    "working_entries",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("run_id", String(NAME), primary_key=True),
    Column("entry_id", Integer, primary_key=True),
    Column("entry", JSON, nullable=False),
    Column("evicted", Boolean, nullable=False),
    Column("recorded_at", UTCDateTime, nullable=False),
)

working_state = Table(
    "working_state",
    metadata,
    Column("namespace", String(NAME), primary_key=True),
    Column("run_id", String(NAME), primary_key=True),
    Column("state", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

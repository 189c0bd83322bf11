"""The built-in lessons a namespace starts with: general browsing advice, never learned from its runs."""

from __future__ import annotations

from sqlalchemy import Connection, select, update

from ..core.clock import new_id, utcnow
from ..core.models import Lesson
from ..store.engine import Store
from ..store.schema import namespace_state
from ..store.statements import insert_ignoring_duplicates
from .rows import LessonRows

# (advice, category, failed command, error pattern, what to do instead)
SEED_LESSONS = (
    ("If fill does not work on a field, click the field to focus it, then type the text.",
     "tool_fallback", "fill", "too many arguments", "click"),
    ("After typing into a search box, press Enter to submit rather than clicking the submit button: "
     "suggestion lists often cover that button.", "best_practice", "click", "intercepts pointer", "press Enter"),
    ("When an overlay, banner or popup blocks an element, press Escape to dismiss it before using the page "
     "behind it.", "best_practice", None, "intercepts pointer", "press Escape"),
)


def is_seeded(conn: Connection, namespace: str) -> bool:
    return conn.execute(
        select(namespace_state.c.lessons_seeded_at).where(namespace_state.c.namespace == namespace)
    ).scalar_one_or_none() is not None


def seed_namespace(conn: Connection, rows: LessonRows) -> None:
    """Add the built-in lessons to a namespace once (the first process to claim it does)."""
    now = utcnow()
    insert_ignoring_duplicates(conn, namespace_state, [{"namespace": rows.ns, "lessons_seeded_at": None}])
    claimed = conn.execute(
        update(namespace_state)
        .where(namespace_state.c.namespace == rows.ns, namespace_state.c.lessons_seeded_at.is_(None))
        .values(lessons_seeded_at=now)
    ).rowcount
    if not claimed:  # another process seeded this namespace first
        return
    for text, category, failed, pattern, recovery in SEED_LESSONS:
        seed = Lesson(
            id=new_id("lesson"), lesson=text, category=category, failed_command=failed, error_pattern=pattern,
            recovery=recovery, use_count=0, created_at=now, last_used=now, source="seed",
        )
        rows.stored_as(conn, seed)


def seed_if_new(store: Store, rows: LessonRows) -> None:
    """Seed the namespace in a write only when a read finds it not seeded yet (most opens write nothing)."""
    with store.read() as conn:
        if is_seeded(conn, rows.ns):
            return
    with store.write() as conn:
        seed_namespace(conn, rows)

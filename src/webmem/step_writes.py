"""Writing a recorded step: its secrets become placeholders, its run moves on, the step is appended after the
run's last, and the selector that reached its target is counted.

On SQLite (and inside a transaction the caller opened) these are the components' own statements in one write
transaction. On PostgreSQL otherwise they are one statement that is its own transaction: one round trip to the
server instead of five (BEGIN, three statements, COMMIT).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import bindparam, select
from sqlalchemy.dialects import postgresql

from .core.elements import redacted_signals
from .core.errors import StoreError
from .core.models import Step
from .core.redaction import MIN_SECRET_LENGTH, names_password_field
from .runs import ADVANCE_RUN, appending_step
from .selectors import StepSelector, counting_success
from .store.prepared import Prepared
from .store.schema import run_steps, runs, selectors
from .trajectories.slots import goal_value_reference

if TYPE_CHECKING:
    from .core.redaction import SecretRegistry
    from .memory import Memory

UNIQUE_VIOLATION = "23505"  # PostgreSQL's SQLSTATE


def _write_alone(counting: str | None) -> Prepared:
    """The run moved on, the step appended after its last and, with ``counting`` (the selector's slot), its
    selector counted (parameters ``selector_<column>``), in one statement; it returns the step's position and
    the selector's count, or no row when the run is not running. Two steps of one run written at once can
    reach for the same position: the second then fails on the primary key (its whole statement undone), and
    :func:`write_step` writes it again in a transaction that waits for the run's row."""
    advanced = ADVANCE_RUN.returning(runs.c.run_id).cte("advanced")
    appended = appending_step(advanced).returning(run_steps.c.seq).cte("appended")
    figures = [appended.c.seq]
    if counting is not None:
        columns = [column for column in selectors.c if column.name != "stale_since"]
        entry = postgresql.insert(selectors).from_select(
            [column.name for column in columns],
            select(*(bindparam(f"selector_{column.name}", type_=column.type) for column in columns))
            .select_from(appended))
        counted = counting_success(entry, counting).cte("counted")
        figures.append(select(counted.c.success_count).scalar_subquery())
    return Prepared(select(*figures))


_WRITE_ALONE = {counting: _write_alone(counting) for counting in (None, "last_ref", "stable_selector")}


def write_step(mem: Memory, run_id: str, step: Step, counting: StepSelector | None) -> tuple[int, int | None]:
    """Store ``step`` as the next of run ``run_id`` and count ``counting``; returns the step's 1-based position
    and the selector's success count (None without ``counting``). RunNotFound or RunClosed when the run is not
    running."""
    store = mem.store
    if store.runs_alone():
        params = mem.runs.step_params(run_id, step)
        if counting is not None:
            params.update({f"selector_{name}": value for name, value in counting.row.items()})
        try:
            with store.write_alone() as conn:
                row = _WRITE_ALONE[counting.slot if counting is not None else None].first(conn, params)
        except StoreError as exc:
            if getattr(getattr(exc.__cause__, "orig", None), "sqlstate", None) != UNIQUE_VIOLATION:
                raise
            # another step of the run took the position at the same moment: take turns on the run's row
        else:
            if row is None:
                mem.runs.refuse_step(run_id)
            return int(row[0]), (int(row[1]) if counting is not None else None)
    with store.write():
        seq = mem.runs.add_step(run_id, step)
        return seq, (mem.selectors.count_step(counting) if counting is not None else None)


def redacted_step(raw: Step, secrets: SecretRegistry, *, goal: str, secret: bool) -> Step:
    """``raw`` as it may be stored: a value typed into a password field (or marked ``secret``) is registered
    and becomes its placeholder (or, typed from the goal's own words, a reference to which of the goal's values
    it was), and every registered secret in its texts and its element's signals becomes its placeholder."""
    registered = raw.value is not None and (raw.value in secrets or secrets.stands_for_one(raw.value))
    if raw.value is not None and not registered and len(raw.value) >= MIN_SECRET_LENGTH \
            and (secret or names_password_field(raw.target, raw.selector)) \
            and goal_value_reference(goal, raw.value) is None:  # one the goal gives stays its slot
        secrets.add(raw.value, name="password")  # from now on redacted wherever it appears: errors, URLs, pages
    value = secrets.redact_typed_value(raw.value, target=raw.target, selector=raw.selector, secret=secret)
    if value != raw.value and raw.value is not None and not registered:
        # a secret typed from the goal's own words: keep which of the goal's values it was, for replay
        value = goal_value_reference(goal, raw.value) or value
    redacted = {name: secrets.redact(getattr(raw, name))
                for name in ("url", "target", "selector", "error", "expected_effect", "label")}
    redacted["value"] = value
    if raw.element is not None and len(secrets):
        redacted["element"] = redacted_signals(raw.element, secrets.redact)
    changed = {name: text for name, text in redacted.items() if text != getattr(raw, name)}
    return raw.model_copy(update=changed) if changed else raw

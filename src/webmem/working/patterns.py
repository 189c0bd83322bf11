"""Long-term patterns: multi-step procedures learned per domain (a login flow, a search), with
``{placeholders}`` for the values, and a success record that decides which ones are kept.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, StringConstraints
from sqlalchemy import Float, case, cast, delete, func, select, update

from ..core.clock import new_id, utcnow
from ..core.errors import InvalidInput, NotFound
from ..core.models import Count, Id, Name, Record, Step, validated
from ..core.text import clean_for_prompt
from ..core.urls import check_domain, domain_matches
from ..store.engine import retried
from ..store.schema import patterns
from ..store.scope import Scope
from ..store.statements import serialize_on

MAX_PATTERNS = 100
KEEP_SHARE = 0.8  # pruning keeps the strongest 80% of the maximum
_PLACEHOLDER = re.compile(r"^\{[A-Za-z_][A-Za-z0-9_]*\}$")  # a value that is a placeholder, whole
_SLUG = re.compile(r"[^a-z0-9]+")
_PLACEHOLDER_IN_TEXT = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.]*\}")
_COLUMNS = [column for column in patterns.c if column.name not in ("namespace", "fingerprint")]


class Pattern(Record):
    """A procedure that worked on a domain."""

    id: Id
    domain: Name
    description: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
    pattern_type: Annotated[str, StringConstraints(pattern=r"^[a-z_]{1,32}$")]
    steps: Annotated[list[dict[str, str | None]], Field(min_length=1, max_length=100)]
    success_count: Count = 0
    failure_count: Count = 0
    created_at: datetime
    last_used: datetime

    @property
    def success_rate(self) -> float:
        """Successful uses over all uses (0.0 for a pattern not used yet)."""
        total = self.success_count + self.failure_count
        return self.success_count / total if total else 0.0


@dataclass
class LearnedPattern:
    """A pattern as seed 002 writes one (its ``LearnedPattern``), to hand to ``learn_pattern``; webmem keeps it
    as a :class:`Pattern` under ``pattern_id``, so ``record_usage(pattern_id, ...)`` finds it."""

    pattern_id: str
    domain: str
    description: str
    pattern_type: str
    steps: list[dict[str, Any]]
    success_count: int = 0
    failure_count: int = 0
    last_used: float = field(default_factory=time.time)

    @property
    def success_rate(self) -> float:
        """Successful uses over all uses (0.0 for a pattern not used yet)."""
        total = self.success_count + self.failure_count
        return self.success_count / total if total else 0.0


@dataclass(frozen=True)
class PatternDraft:
    description: str
    pattern_type: str
    steps: list[dict[str, str | None]]


class PatternStore:
    """Patterns of one namespace, at most ``max_patterns`` of them."""

    def __init__(self, scope: Scope, *, max_patterns: int = MAX_PATTERNS) -> None:
        self._scope = scope
        self._ns = scope.namespace
        self.max_patterns = max_patterns

    @retried
    def learn_pattern(
        self, domain: str | LearnedPattern, description: str | None = None, pattern_type: str | None = None,
        steps: Sequence[Mapping[str, Any]] | None = None, *, run_id: str | None = None,
    ) -> Pattern:
        """Store a pattern; the same steps on the same domain are the same pattern (returned as is, under the
        id it was first learned with). The seed's form, ``learn_pattern(LearnedPattern(pattern_id=...))``,
        keeps the caller's id and counts (an id another pattern holds is refused)."""
        given = domain if isinstance(domain, LearnedPattern) else None
        if given is not None:
            domain, description, pattern_type, steps = given.domain, given.description, given.pattern_type, given.steps
        now = utcnow()
        pattern = validated(
            Pattern, id=given.pattern_id if given else new_id("pattern"), domain=check_domain(domain),
            description=self._scope.redact(description) if isinstance(description, str) else description,
            pattern_type=pattern_type, steps=_check_steps(steps, self._scope), created_at=now, last_used=now,
            success_count=given.success_count if given else 0, failure_count=given.failure_count if given else 0,
        )
        fingerprint = _fingerprint(pattern.steps)
        with self._scope.store.write() as conn:
            serialize_on(conn, f"webmem.patterns.{self._ns}")
            if given is not None and conn.execute(
                select(patterns.c.domain, patterns.c.fingerprint).where(self._mine(), patterns.c.pattern_id == pattern.id)
            ).first() not in (None, (pattern.domain, fingerprint)):
                raise InvalidInput(f"pattern_id: {pattern.id!r} is the id of another pattern in namespace {self._ns!r}")
            existing = conn.execute(
                select(*_COLUMNS).where(self._mine(), patterns.c.domain == pattern.domain,
                                        patterns.c.fingerprint == fingerprint)
            ).first()
            if existing is not None:
                return _pattern(existing)
            conn.execute(patterns.insert().values(
                namespace=self._ns, pattern_id=pattern.id, fingerprint=fingerprint,
                **pattern.model_dump(exclude={"id"}),
            ))
            pruned = self._prune(conn)
        self._scope.emit("pattern_learned", run_id=run_id, pattern_id=pattern.id, domain=pattern.domain,
                         pattern_type=pattern.pattern_type, steps=len(pattern.steps))
        if pruned:
            self._scope.emit("patterns_pruned", count=pruned)
        return pattern

    def get_patterns_for_domain(self, domain: str) -> list[Pattern]:
        """Patterns of this domain or a parent domain, best success rate first, then most recent."""
        site = check_domain(domain)
        with self._scope.store.read() as conn:
            rows = conn.execute(select(*_COLUMNS).where(self._mine())).all()
        found = [_pattern(row) for row in rows if domain_matches(row.domain, site)]
        return sorted(found, key=lambda p: (-p.success_rate, -p.last_used.timestamp(), p.id))

    def remove_pattern(self, pattern_id: str) -> None:
        """Forget one pattern (``NotFound`` when the namespace has no such pattern)."""
        with self._scope.store.write() as conn:
            removed = conn.execute(delete(patterns).where(self._mine(), patterns.c.pattern_id == pattern_id)).rowcount
        if not removed:
            raise NotFound(f"pattern_id: no pattern {pattern_id!r} in namespace {self._ns!r}")
        self._scope.emit("pattern_removed", pattern_id=pattern_id)

    @retried
    def record_usage(self, pattern_id: str, success: bool) -> Pattern:
        """Count one use of a pattern, atomically in the database."""
        if not isinstance(success, bool):
            raise InvalidInput(f"success: expected True or False, got {success!r}")
        column = patterns.c.success_count if success else patterns.c.failure_count
        with self._scope.store.write() as conn:
            changed = conn.execute(
                update(patterns).where(self._mine(), patterns.c.pattern_id == pattern_id)
                .values({column: column + 1, patterns.c.last_used: utcnow()})
            ).rowcount
            if not changed:
                raise NotFound(f"pattern_id: no pattern {pattern_id!r} in namespace {self._ns!r}")
            return _pattern(conn.execute(select(*_COLUMNS).where(self._mine(), patterns.c.pattern_id == pattern_id)).one())

    def format_for_prompt(self, domain: str, limit: int = 5) -> str:
        """The domain's best patterns as prompt text (KNOWN PATTERNS)."""
        lines = []
        for pattern in self.get_patterns_for_domain(domain)[:limit]:
            steps = " -> ".join(_describe(step) for step in pattern.steps)
            slots = placeholders(pattern.steps)
            lines.append(
                f"- {clean_for_prompt(pattern.description, 200)} [{pattern.pattern_type}, "
                f"{pattern.success_rate:.0%} of {pattern.success_count + pattern.failure_count} uses]: "
                f"{clean_for_prompt(steps, 600)}" + (f" (fill in: {', '.join(slots)})" if slots else "")
            )
        return "\n".join(lines)

    def prune(self) -> int:
        """Over the namespace's maximum, remove the weakest patterns down to 80% of it; returns how many went."""
        with self._scope.store.write() as conn:
            return self._prune(conn)

    def _prune(self, conn: Any) -> int:
        """Over the maximum, drop the weakest patterns by (success rate, last used) down to 80% of it."""
        count = conn.execute(select(func.count()).select_from(patterns).where(self._mine())).scalar_one()
        if count <= self.max_patterns:
            return 0
        uses = patterns.c.success_count + patterns.c.failure_count
        rate = case((uses > 0, cast(patterns.c.success_count, Float) / uses), else_=0.0)
        weakest = conn.execute(
            select(patterns.c.pattern_id).where(self._mine())
            .order_by(rate, patterns.c.last_used, patterns.c.pattern_id)
            .limit(count - int(self.max_patterns * KEEP_SHARE))
        ).scalars().all()
        conn.execute(delete(patterns).where(self._mine(), patterns.c.pattern_id.in_(weakest)))
        return len(weakest)

    def _mine(self) -> Any:
        return patterns.c.namespace == self._ns


def derive_pattern(goal: str, steps: Sequence[Step]) -> PatternDraft | None:
    """A pattern from a successful run whose typed values came from the goal or from secrets.

    Those values become placeholders named after the field (``{search_products}``); secret values
    are placeholders already. Runs without such a value teach no pattern.
    """
    lowered_goal = goal.casefold()
    generalised = False
    derived: list[dict[str, str | None]] = []
    for step in steps:
        if not step.ok:
            continue
        value = step.value
        if value is not None and (_PLACEHOLDER.match(value) or _in_goal(value, lowered_goal)):
            if not _PLACEHOLDER.match(value):
                value = "{" + (_slug(step.target or step.selector or "value")) + "}"
            generalised = True
        derived.append({"tool": step.action, "target": step.target, "selector": step.selector, "value": value})
    if not generalised or not derived:
        return None
    values = [step["value"] or "" for step in derived]
    if "{password}" in values:
        kind = "login_flow"
    elif any(step["tool"] in ("fill", "type") for step in derived):
        kind = "search" if any("search" in (step["target"] or "").lower() for step in derived) else "form_fill"
    else:
        kind = "navigation"
    description = f"{kind.replace('_', ' ')}: " + " -> ".join(_describe(step) for step in derived[:6])
    return PatternDraft(description=clean_for_prompt(description, 500), pattern_type=kind, steps=derived[:100])


def _in_goal(value: str, lowered_goal: str) -> bool:
    """Whether a typed value is a word or phrase of the goal: not empty, not merely inside a word of it."""
    phrase = value.strip().casefold()
    return bool(phrase) and re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", lowered_goal) is not None


def _describe(step: Mapping[str, Any]) -> str:
    """``tool target value key=value...``: every parameter, whatever key carries it (``text``, ``url``,
    ``query``...), so that a placeholder such as ``{email}`` is never lost."""
    shown_as_target = "target" if step.get("target") else "selector"
    words = [str(step.get("tool") or ""), str(step.get(shown_as_target) or "")]
    if step.get("value"):
        words.append(str(step["value"]))
    words += [f"{key}={value}" for key, value in step.items()
              if value and key not in ("tool", "value", shown_as_target)]
    return " ".join(word for word in words if word)


def placeholders(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``{name}`` placeholders of a pattern's steps, in order, each once."""
    found = (match.group(0) for step in steps for value in step.values() if isinstance(value, str)
             for match in _PLACEHOLDER_IN_TEXT.finditer(value))
    return list(dict.fromkeys(found))


def _slug(text: str) -> str:
    name = text.split('"')[1] if text.count('"') >= 2 else text
    return (_SLUG.sub("_", name.lower()).strip("_") or "value")[:40]


def _check_steps(steps: object, scope: Scope) -> list[dict[str, str | None]]:
    if isinstance(steps, str | bytes | Mapping) or not isinstance(steps, Sequence):
        raise InvalidInput("steps: expected a list of step mappings")
    checked = []
    for number, step in enumerate(steps):
        if not isinstance(step, Mapping) or not all(isinstance(key, str) for key in step):
            raise InvalidInput(f"steps.{number}: expected a mapping with string keys")
        if not all(value is None or isinstance(value, str | int | float | bool) for value in step.values()):
            raise InvalidInput(f"steps.{number}: values must be strings, numbers, true/false or None")
        if any(isinstance(value, float) and not math.isfinite(value) for value in step.values()):
            raise InvalidInput(f"steps.{number}: a number must be finite")
        # numbers and true/false are kept as their JSON text ("500", "true"), as a step's parameters are shown
        checked.append({key: scope.redact(value if value is None or isinstance(value, str) else json.dumps(value))
                        for key, value in step.items()})
    return checked


def _fingerprint(steps: list[dict[str, str | None]]) -> str:
    return hashlib.sha256(json.dumps(steps, sort_keys=True).encode("utf-8")).hexdigest()


def _pattern(row: Any) -> Pattern:
    data = dict(row._mapping)
    data["id"] = data.pop("pattern_id")
    return Pattern.model_validate(data)

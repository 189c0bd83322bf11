"""Graded episodes: every step with the page before and after, graded afterwards, and retrieved on
later repetitions of the same task as REPEAT/AVOID advice.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Connection, and_, func, select, update

from ..core.clock import utcnow
from ..core.embeddings import Embedder, HashingEmbedder, check_embedder, cosine
from ..core.errors import InvalidInput
from ..core.episode_records import EnvironmentState, EpisodeEntry, GradingResult, RetrievedMemory
from ..core.models import describe_validation_error, validated_value
from ..core.models import Id as SessionId
from ..core.redaction import SecretRegistry
from ..store.schema import episode_entries, episode_sessions
from ..store.scope import Scope
from ..store.statements import serialize_on
from .aria import keys_iou

ENV_THRESHOLD = 0.7
ENV_TOP_K = 10
ENV_WEIGHT = 0.65
STATE_WEIGHT = 0.35
RETRIEVE_LIMIT = 2
_ENTRY_COLUMNS = [column for column in episode_entries.c if column.name != "namespace"]
_CALL = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)\)\s*$", re.S)


@dataclass
class PendingStep:
    """A step recorded by ``record_step_start`` and not yet persisted."""

    step_num: int
    env_pre: EnvironmentState
    internal_state: str
    action: str
    action_element_text: str
    think: str | None = None
    step_id: str | None = None
    env_post: EnvironmentState | None = None
    run_id: str | None = None


@dataclass
class Episode:
    """One repetition (rep) of a session: its pending steps and where numbering continues."""

    session_id: str
    rep: int
    next_step: int = 1
    pending: list[PendingStep] = field(default_factory=list)


class EpisodeStore:
    """Episodes of one namespace. ``init_episode`` makes an episode current; the step and grade
    methods act on the current episode.
    """

    def __init__(
        self,
        scope: Scope,
        *,
        embedder: Embedder | None = None,
        env_threshold: float = ENV_THRESHOLD,
        env_top_k: int = ENV_TOP_K,
        env_weight: float = ENV_WEIGHT,
        limit: int = RETRIEVE_LIMIT,
    ) -> None:
        self._scope = scope
        self._ns = scope.namespace
        self.embedder = check_embedder(embedder) if embedder is not None else HashingEmbedder()
        self.env_threshold = env_threshold
        self.env_top_k = env_top_k
        self.env_weight = env_weight
        self.limit = limit
        self.current: Episode | None = None

    def init_episode(self, session_id: str, rep: int | None = None) -> Episode:
        """Start the next rep of a session (reps count from 1), or resume ``rep`` if it exists."""
        session = validated_value(SessionId, session_id, field="session_id")
        if rep is not None and (isinstance(rep, bool) or not isinstance(rep, int) or rep < 1):
            raise InvalidInput(f"rep: expected a positive integer, got {rep!r}")
        now = utcnow()
        with self._scope.store.write() as conn:
            serialize_on(conn, f"webmem.episodes.{self._ns}.{session}")
            last = conn.execute(
                select(episode_sessions.c.last_rep).where(self._session(session))
            ).scalar_one_or_none()
            if last is None:
                conn.execute(episode_sessions.insert().values(
                    namespace=self._ns, session_id=session, last_rep=0, created_at=now, updated_at=now
                ))
                last = 0
            if rep is not None and rep > last + 1:
                raise InvalidInput(f"rep: session {session!r} has {last} reps; the next one is {last + 1}, not {rep}")
            chosen = rep if rep is not None else last + 1
            if chosen > last:
                conn.execute(update(episode_sessions).where(self._session(session)).values(
                    last_rep=episode_sessions.c.last_rep + 1, updated_at=now
                ))
            done = conn.execute(
                select(func.coalesce(func.max(episode_entries.c.step_num), 0)).where(
                    self._session(session, table=episode_entries), episode_entries.c.rep == chosen
                )
            ).scalar_one()
        self.current = Episode(session_id=session, rep=chosen, next_step=int(done) + 1)
        self._scope.emit("episode_started", session_id=session, rep=chosen, resumed=chosen <= last)
        return self.current

    def record_step_start(
        self,
        env_pre: EnvironmentState | Mapping[str, Any],
        internal_state: str,
        action: str,
        action_element_text: str,
        think: str | None = None,
        step_id: str | None = None,
        *,
        run_id: str | None = None,
        episode: Episode | None = None,
    ) -> PendingStep:
        """Note an action about to be taken, with the page it was taken on and the agent's state."""
        episode = self._require_episode(episode)
        redact = self._scope.secrets.redact
        step = PendingStep(
            step_num=episode.next_step,
            env_pre=redact_environment(_environment(env_pre, "env_pre"), self._scope.secrets),
            internal_state=redact(_text(internal_state, "internal_state", 10_000)) or "",
            action=redact(_text(action, "action", 1000, required=True)) or "",
            action_element_text=redact(_text(action_element_text, "action_element_text", 1000)) or "",
            think=redact(_text(think, "think", 10_000)) if think is not None else None,
            step_id=validated_value(SessionId, step_id, field="step_id") if step_id is not None else None,
            run_id=run_id,
        )
        if step.step_id and any(other.step_id == step.step_id for other in episode.pending):
            raise InvalidInput(f"step_id: {step.step_id!r} is already used in this episode")
        episode.next_step += 1
        episode.pending.append(step)
        return step

    def record_step_end(self, step: PendingStep, env_post: EnvironmentState | Mapping[str, Any]) -> PendingStep:
        """Attach the page the action led to."""
        if not isinstance(step, PendingStep):
            raise InvalidInput("step: expected the PendingStep that record_step_start returned")
        step.env_post = redact_environment(_environment(env_post, "env_post"), self._scope.secrets)
        return step

    def persist_memories(self, *, episode: Episode | None = None) -> list[EpisodeEntry]:
        """Store the pending steps of the current episode as entries (outcome pending)."""
        episode = self._require_episode(episode)
        if not episode.pending:
            return []
        vectors = self.embedder.embed([step.internal_state for step in episode.pending])
        now = utcnow()
        rows = [
            {
                "namespace": self._ns, "session_id": episode.session_id, "rep": episode.rep,
                "step_num": step.step_num, "step_id": step.step_id, "run_id": step.run_id,
                "env_pre": step.env_pre.model_dump(mode="json"),
                "env_post": step.env_post.model_dump(mode="json") if step.env_post else None,
                "internal_state": step.internal_state, "think": step.think,
                "internal_state_embedding": vector, "embedder": self.embedder.name,
                "action": step.action, "action_element_text": step.action_element_text,
                "outcome": "pending", "created_at": now,
            }
            for step, vector in zip(episode.pending, vectors, strict=True)
        ]
        numbers = [step.step_num for step in episode.pending]
        with self._scope.store.write() as conn:
            self._check_step_ids(conn, episode)
            conn.execute(episode_entries.insert(), rows)
            stored = self._entries(conn, self._rep(episode), episode_entries.c.step_num.in_(numbers))
        episode.pending.clear()
        self._scope.emit("memories_persisted", session_id=episode.session_id, rep=episode.rep, count=len(stored))
        return stored

    def add_grades_to_memories(
        self, grading: GradingResult | Mapping[str, Any], *, episode: Episode | None = None
    ) -> list[EpisodeEntry]:
        """Apply a grader's verdict to the current episode's entries; all grades apply or none do."""
        episode = self._require_episode(episode)
        result = _grading(grading)
        with self._scope.store.write() as conn:
            entries = self._entries(conn, self._rep(episode))
            by_id = {entry.step_id: entry for entry in entries if entry.step_id}
            by_number = {entry.step_num: entry for entry in entries}
            targets = []
            for number, grade in enumerate(result.step_grades):
                entry = by_id.get(grade.step_id) if grade.step_id else by_number.get(grade.step_number or -1)
                if entry is None:
                    named = f"step_id {grade.step_id!r}" if grade.step_id else f"step_number {grade.step_number}"
                    raise InvalidInput(
                        f"step_grades.{number}: {named} is not a step of session {episode.session_id!r} "
                        f"rep {episode.rep}"
                    )
                targets.append((entry, grade))
            explanation = self._scope.redact(result.overall_explanation)  # secrets stay placeholders here too
            incomplete = None if result.task_completed else (explanation or "task not completed")
            for entry, grade in targets:
                conn.execute(
                    update(episode_entries).where(episode_entries.c.entry_id == entry.id).values(
                        outcome="success" if grade.is_correct else "failure",
                        grade_confidence=grade.confidence,
                        outcome_reason=self._scope.redact(grade.explanation) or None,
                        correction=self._scope.redact(grade.correction),
                    )
                )
            conn.execute(update(episode_entries).where(self._rep(episode)).values(task_incomplete=incomplete))
            graded = self._entries(conn, self._rep(episode))
        self._scope.emit(
            "memories_graded", session_id=episode.session_id, rep=episode.rep, grades=len(targets),
            task_completed=result.task_completed,
        )
        return graded

    def retrieve_memories(
        self, env: EnvironmentState | Mapping[str, Any], internal_state: str, *, episode: Episode | None = None
    ) -> list[RetrievedMemory]:
        """REPEAT/AVOID advice from graded steps of earlier reps of this session (never in rep 1)."""
        current = self._require_episode(episode)
        page = _environment(env, "env")
        if not isinstance(internal_state, str):
            raise InvalidInput(f"internal_state: expected a string, got {type(internal_state).__name__}")
        if current.rep == 1:
            return []
        current_keys = page.element_keys()
        with self._scope.store.read() as conn:
            # Pages first, as stored JSON: only the entries close enough are loaded in full.
            pages = conn.execute(
                select(episode_entries.c.entry_id, episode_entries.c.env_pre).where(
                    self._session(current.session_id, table=episode_entries),
                    episode_entries.c.rep < current.rep,
                    episode_entries.c.outcome.in_(("success", "failure")),
                )
            ).all()
            similar = [(keys_iou(current_keys, _stored_keys(row.env_pre)), row.entry_id) for row in pages]
            similar = sorted((pair for pair in similar if pair[0] >= self.env_threshold), key=lambda p: (-p[0], -p[1]))
            similar = similar[: self.env_top_k]
            loaded = {entry.id: entry for entry in self._entries(
                conn, episode_entries.c.entry_id.in_([entry_id for _, entry_id in similar])
            )} if similar else {}
        near = [(similarity, loaded[entry_id]) for similarity, entry_id in similar]
        if not near:
            return self._retrieved(current, [])
        state_vector = self.embedder.embed([internal_state])[0]
        ranked = []
        for env_similarity, entry in near:
            vector = entry.internal_state_embedding
            if entry.embedder != self.embedder.name:
                vector = self.embedder.embed([entry.internal_state])[0]
            state_similarity = cosine(state_vector, vector)
            score = self.env_weight * env_similarity + (1 - self.env_weight) * state_similarity
            ranked.append(RetrievedMemory(
                entry=entry, environment_similarity=env_similarity, state_similarity=state_similarity, score=score,
            ))
        ranked.sort(key=lambda memory: (-memory.score, -memory.entry.id))
        return self._retrieved(current, _pick(_distinct_actions(ranked), self.limit))

    def load_all_memories_for_session(self, session_id: str) -> list[EpisodeEntry]:
        """Every stored entry of a session, by rep and step."""
        session = validated_value(SessionId, session_id, field="session_id")
        with self._scope.store.read() as conn:
            return self._entries(conn, self._session(session, table=episode_entries))

    def reembed(self) -> int:
        """Embed again every entry made by another embedder; returns how many changed."""
        with self._scope.store.read() as conn:
            stale = conn.execute(
                select(episode_entries.c.entry_id, episode_entries.c.internal_state).where(
                    episode_entries.c.namespace == self._ns, episode_entries.c.embedder != self.embedder.name
                )
            ).all()
        if not stale:
            return 0
        vectors = self.embedder.embed([row.internal_state for row in stale])
        with self._scope.store.write() as conn:
            for row, vector in zip(stale, vectors, strict=True):
                conn.execute(update(episode_entries).where(episode_entries.c.entry_id == row.entry_id).values(
                    internal_state_embedding=vector, embedder=self.embedder.name
                ))
        self._scope.emit("memories_reembedded", count=len(stale), embedder=self.embedder.name)
        return len(stale)

    def import_entries(self, entries: Sequence[EpisodeEntry]) -> int:
        """Store entries as they are (new ids); an entry whose session, rep and step are here is skipped."""
        if not all(isinstance(entry, EpisodeEntry) for entry in entries):
            raise InvalidInput("entries: expected a list of webmem.EpisodeEntry records")
        added = 0
        now = utcnow()
        with self._scope.store.write() as conn:
            for entry in entries:
                if conn.execute(select(episode_entries.c.entry_id).where(
                    self._session(entry.session_id, table=episode_entries), episode_entries.c.rep == entry.rep,
                    episode_entries.c.step_num == entry.step_num,
                )).first() is not None:
                    continue
                row = entry.model_dump(mode="json", exclude={"id", "created_at"})
                conn.execute(episode_entries.insert().values(namespace=self._ns, created_at=entry.created_at, **row))
                last = conn.execute(select(episode_sessions.c.last_rep).where(
                    self._session(entry.session_id))).scalar_one_or_none()
                if last is None:
                    conn.execute(episode_sessions.insert().values(
                        namespace=self._ns, session_id=entry.session_id, last_rep=entry.rep, created_at=now,
                        updated_at=now))
                elif last < entry.rep:
                    conn.execute(update(episode_sessions).where(self._session(entry.session_id)).values(
                        last_rep=entry.rep, updated_at=now))
                added += 1
        return added

    def sessions(self) -> list[str]:
        """Every episode session id of this namespace."""
        with self._scope.store.read() as conn:
            return sorted(conn.execute(select(episode_sessions.c.session_id).where(
                episode_sessions.c.namespace == self._ns)).scalars())

    # -- internals ---------------------------------------------------------------------------

    def _retrieved(self, episode: Episode, chosen: list[RetrievedMemory]) -> list[RetrievedMemory]:
        self._scope.emit(
            "memories_retrieved", session_id=episode.session_id, rep=episode.rep, count=len(chosen),
            advice=[f"{memory.advice} {memory.entry.action}" for memory in chosen],
        )
        return chosen

    def _check_step_ids(self, conn: Connection, episode: Episode) -> None:
        ids = [step.step_id for step in episode.pending if step.step_id]
        if not ids:
            return
        taken = conn.execute(
            select(episode_entries.c.step_id).where(self._rep(episode), episode_entries.c.step_id.in_(ids))
        ).scalars().all()
        if taken:
            raise InvalidInput(f"step_id: {taken[0]!r} is already stored in this episode")

    def _require_episode(self, episode: Episode | None = None) -> Episode:
        if episode is not None:
            if not isinstance(episode, Episode):
                raise InvalidInput("episode: expected an Episode returned by init_episode")
            return episode
        if self.current is None:
            raise InvalidInput("no current episode: call init_episode(session_id) first")
        return self.current

    def _session(self, session_id: str, *, table: Any = episode_sessions) -> Any:
        return and_(table.c.namespace == self._ns, table.c.session_id == session_id)

    def _rep(self, episode: Episode) -> Any:
        return and_(self._session(episode.session_id, table=episode_entries), episode_entries.c.rep == episode.rep)

    def _entries(self, conn: Connection, *conditions: Any) -> list[EpisodeEntry]:
        rows = conn.execute(
            select(*_ENTRY_COLUMNS).where(*conditions)
            .order_by(episode_entries.c.rep, episode_entries.c.step_num)
        )
        return [_entry(row) for row in rows]


def _stored_keys(env: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    return frozenset((element.get("role", ""), element.get("name", "")) for element in env.get("elements", []))


def redact_environment(env: EnvironmentState, secrets: SecretRegistry) -> EnvironmentState:
    """The state with registered secrets replaced and password fields' values as placeholders."""
    elements = [
        element.model_copy(update={
            "name": secrets.redact(element.name) or "",
            "value": secrets.redact_typed_value(
                element.value, target=f'{element.role} "{element.name}"', selector=None, secret=False
            ),
        })
        for element in env.elements
    ]
    return env.model_copy(update={
        "url": secrets.redact(env.url), "title": secrets.redact(env.title) or "", "elements": elements,
    })


def action_signature(action: str) -> tuple[str, str | None, str | None]:
    """(type, target, value) of an action string such as ``fill('12', 'hello')``."""
    match = _CALL.match(action)
    if match is None:
        return (action.strip(), None, None)
    try:
        arguments = ast.literal_eval(f"({match.group(2)},)") if match.group(2).strip() else ()
    except (ValueError, SyntaxError):
        return (match.group(1), match.group(2).strip(), None)
    values = [str(argument) for argument in arguments]
    return (match.group(1), values[0] if values else None, ", ".join(values[1:]) or None)


def _distinct_actions(ranked: list[RetrievedMemory]) -> list[RetrievedMemory]:
    seen: set[tuple[str, str | None, str | None]] = set()
    distinct = []
    for memory in ranked:
        signature = action_signature(memory.entry.action)
        if signature not in seen:
            seen.add(signature)
            distinct.append(memory)
    return distinct


def _pick(ranked: list[RetrievedMemory], limit: int) -> list[RetrievedMemory]:
    """The best ``limit``, with one AVOID and one REPEAT among them when both kinds exist."""
    chosen = ranked[:limit]
    if limit >= 2:
        for kind in ("failure", "success"):
            if not any(memory.entry.outcome == kind for memory in chosen):
                best = next((memory for memory in ranked if memory.entry.outcome == kind), None)
                if best is not None:
                    chosen[-1] = best
        chosen.sort(key=lambda memory: (-memory.score, -memory.entry.id))
    return chosen


def _environment(value: EnvironmentState | Mapping[str, Any], name: str) -> EnvironmentState:
    if isinstance(value, EnvironmentState):
        return value
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{name}: expected an EnvironmentState or a mapping with url, title and elements")
    try:
        return EnvironmentState.model_validate(dict(value), strict=False)
    except ValidationError as exc:
        raise InvalidInput(f"{name}.{describe_validation_error(exc)}") from None


def _grading(value: GradingResult | Mapping[str, Any]) -> GradingResult:
    if isinstance(value, GradingResult):
        result = value
    elif isinstance(value, Mapping):
        try:
            result = GradingResult.model_validate(dict(value))
        except ValidationError as exc:
            raise InvalidInput(f"grading: {describe_validation_error(exc)}") from None
    else:
        raise InvalidInput("grading: expected a GradingResult or a mapping")
    for number, grade in enumerate(result.step_grades):
        if grade.step_id is None and grade.step_number is None:
            raise InvalidInput(f"grading: step_grades.{number} names no step (give step_id or step_number)")
    return result


def _text(value: object, name: str, limit: int, *, required: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name}: expected a string, got {type(value).__name__}")
    if required and not value.strip():
        raise InvalidInput(f"{name}: must not be empty")
    if len(value) > limit:
        raise InvalidInput(f"{name}: {len(value)} characters is more than the maximum {limit}")
    return value


def _entry(row: Any) -> EpisodeEntry:
    data = dict(row._mapping)
    data["id"] = data.pop("entry_id")
    data["env_pre"] = EnvironmentState.model_validate(data["env_pre"])
    data["env_post"] = EnvironmentState.model_validate(data["env_post"]) if data["env_post"] else None
    return EpisodeEntry.model_validate(data)

"""A run in progress: where the memory's triggers fire (context, record_step, finish)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .context import Reference, context_reads, find_reference, memory_parts
from .core.clock import utcnow
from .core.elements import element_key
from .core.episode_records import EnvironmentState
from .core.errors import InvalidInput, MemoryDisabled, RunClosed
from .core.models import (
    ElementSignals,
    Fact,
    Lesson,
    ReplayReport,
    RunManifest,
    Step,
    validated,
)
from .core.pack import ContextPack, ContextPart, check_budget
from .core.text import clean_for_prompt
from .core.urls import check_url, domain_of, origin_of, site_of
from .episodes.export import export_memories
from .episodes.store import Episode
from .lessons.feedback import TipFeedback
from .outcomes import GivenAdvice
from .run_learning import learn_from_run
from .step_writes import redacted_step, write_step
from .store.prepared import reading_ahead
from .working.memory import AgentMemory

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from .memory import Memory

DEFAULT_BUDGET_TOKENS = 2000
MAX_ERROR_CHARS = 4000


class Run:
    """One execution of an agent. Get one from :meth:`webmem.Memory.start_run`.

    Use it as a context manager to have it finished as failed when the block raises (or ends
    without :meth:`finish`).
    """

    def __init__(
        self, memory: Memory, manifest: RunManifest, *, episode: Episode | None = None, preview: bool = False
    ) -> None:
        self._memory = memory
        self._preview = preview
        self._manifest = manifest
        self.episode = episode
        self._working: AgentMemory | None = None
        self._references: dict[str, Reference] = {}
        self._closed = manifest.status != "running"
        self._site: str | None = None
        self._site_tips: list[Lesson] = []
        self._last_failure: tuple[str, str, list[Lesson]] | None = None
        self._feedback = TipFeedback()
        self._given = GivenAdvice()
        self._parts_off: dict[str, dict[str, str]] = {}  # per site, read once per run
        self._handover: ReplayReport | None = None

    @property
    def id(self) -> str:
        """The run's id (``run_...``)."""
        return self._manifest.run_id

    @property
    def domain(self) -> str:
        """The domain of the run's start URL."""
        return self._manifest.domain

    @property
    def goal(self) -> str:
        """What the agent was asked to do."""
        return self._manifest.goal

    @property
    def session_id(self) -> str | None:
        """The session the run belongs to (shared by a run and the runs that resume it)."""
        return self._manifest.session_id

    @property
    def finished(self) -> bool:
        """True once ``finish`` was called (or the run was found finished)."""
        return self._closed

    @property
    def manifest(self) -> RunManifest:
        """The run's manifest as stored now."""
        if self._memory.enabled:
            self._manifest = self._memory.runs.get(self.id)
        return self._manifest

    @property
    def working(self) -> AgentMemory:
        """The run's in-run working memory (history, scratch pad, extractions...), persisted as it goes.

        For a resumed handle (``mem.get_run``) it is loaded as last written. Once used, its parts
        join the run's context under the same budget.
        """
        if not self._memory.enabled:
            raise MemoryDisabled("working memory is not kept when memory is disabled")
        if self._working is None:
            self._working = AgentMemory.load(
                self._memory.scope, self.id, patterns=self._memory.patterns, counter=self._memory.token_counter,
                goal=self.goal, start_url=self._manifest.start_url, **self._memory.working_options.for_agent_memory(),
            )
        return self._working

    @property
    def steps(self) -> list[Step]:
        """The steps recorded so far, in order (as stored: secrets are placeholders)."""
        return self._memory.runs.steps(self.id) if self._memory.enabled else []

    def context(
        self,
        url: str | None = None,
        *,
        budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        env: EnvironmentState | Mapping[str, Any] | None = None,
        internal_state: str | None = None,
        extra_parts: Iterable[ContextPart] = (),
    ) -> ContextPack:
        """The memory's context for the next LLM turn, fitted into ``budget_tokens``.

        ``url`` is the page the agent is on; without it, the run's start URL (or ``env``'s url) is
        used. In an episode run, ``env`` (the page's elements) and ``internal_state`` bring back
        REPEAT/AVOID advice from earlier reps. ``extra_parts`` are the caller's own parts, fitted
        under the same budget by their priorities.
        """
        extra = list(extra_parts)
        if not all(isinstance(part, ContextPart) for part in extra):
            raise InvalidInput("extra_parts: expected webmem.ContextPart objects")
        budget = check_budget(budget_tokens)
        if url is None and isinstance(env, EnvironmentState):
            url = env.url
        page = check_url(url, field="url") if url is not None else self._manifest.start_url
        if not self._memory.enabled:
            return ContextPack.assemble([], budget)
        mem = self._memory
        domain = domain_of(page)
        reads = context_reads(mem, page, site=self._site, parts_off=self._parts_off, references=self._references)
        with mem.store.read() as conn, reading_ahead(conn, reads):  # one read (a domain's lessons counted apart)
            if domain != self._site:
                self.on_domain(page)
            known = mem.knowledge.facts(domain, min_confidence=0.0)  # read once: the reference's and the part's
            reference = self._reference(origin_of(page), known)
            parts = memory_parts(
                mem, goal=self.goal, domain=domain, reference=reference, last_failure=self._last_failure,
                site_tips=self._site_tips, episode_advice=self._episode_advice(env, internal_state),
                parts_off=self._parts_off_on(conn, site_of(domain)), known=known, handover=self._handover,
            )
            if self._working is not None:
                parts += self._working.context_parts(domain)
            parts += extra
            pack = ContextPack.assemble(parts, budget, counter=mem.token_counter)
            self._note_given(pack, reference)
            mem.scope.emit(  # told with the read's own events (the match's), in one write
                "context_built", run_id=self.id, domain=domain, budget_tokens=budget, tokens=pack.tokens,
                parts=[part.to_dict() for part in pack.report],
            )
        self._last_failure = None  # an error is news for the next turn only
        return pack

    def record_step(
        self,
        *,
        action: str,
        target: str | None = None,
        selector: str | None = None,
        value: str | None = None,
        url: str | None = None,
        ok: bool = True,
        verified: bool | None = None,
        error: str | None = None,
        expected_effect: str | None = None,
        snapshot_hash: str | None = None,
        duration_ms: int | float | None = None,
        secret: bool = False,
        target_index: int | None = None,
        target_count: int | None = None,
        label: str | None = None,
        element: ElementSignals | Mapping[str, Any] | None = None,
        env_pre: EnvironmentState | Mapping[str, Any] | None = None,
        env_post: EnvironmentState | Mapping[str, Any] | None = None,
        internal_state: str | None = None,
        think: str | None = None,
    ) -> Step:
        """Record what one action did. A value typed into a password field, or equal to a registered
        secret, is stored as a placeholder such as ``{password}``.

        ``action`` is the command as your agent names it (``goto``, ``click``, ``fill``, ``type``, ``press``,
        ``select``, ``check``, ``scroll``, ``wait``...; replay performs these). ``target`` is the element as a
        person reads it, role then quoted name (``button "Search"``, ``textbox "Email"``, ``link "Pricing"``:
        Playwright's accessibility snapshot gives both); ``selector`` is how it was reached (``#go``,
        ``role=button[name="Search"]``); ``url`` the page the action ran on. ``ok`` says whether the action
        itself ran (no exception); ``verified`` whether its effect was checked and seen (the page changed as
        expected): replay trusts verified steps most. Call :meth:`on_domain` when the agent lands on a new
        site (``context(url=...)`` does it for you) and :meth:`on_error` after a failed action, so that the
        next context carries the lessons that match.

        When several elements of the page had the target's role and name, ``target_index`` (from 1,
        in page order) and ``target_count`` say which one was acted on, and ``label`` is the text read
        beside a target without a name of its own: replay needs them. ``element`` is how a person knows the
        target besides its role and name (:class:`~webmem.ElementSignals`: its label, row header, ``name``
        attribute, options...; never its value): replay finds the element by those signals together.
        In an episode run the step is also stored as an episode entry, with the page before and
        after (``env_pre``/``env_post``) and the agent's ``internal_state`` and ``think``.
        """
        self._check_open()
        if not isinstance(secret, bool):
            raise InvalidInput(f"secret: expected True or False, got {secret!r}")
        if isinstance(error, str) and len(error) > MAX_ERROR_CHARS:
            error = error[:MAX_ERROR_CHARS]
        if isinstance(duration_ms, float):
            if not math.isfinite(duration_ms):
                raise InvalidInput(f"duration_ms: expected a finite number of milliseconds, got {duration_ms!r}")
            duration_ms = round(duration_ms)
        raw = validated(
            Step, action=action, url=check_url(url) if url is not None else None, target=target,
            selector=selector, value=value, ok=ok, verified=verified, error=error,
            expected_effect=expected_effect, snapshot_hash=snapshot_hash, duration_ms=duration_ms,
            target_index=target_index, target_count=target_count, label=label,
            element=dict(element) if isinstance(element, Mapping) else element,
        )
        step = redacted_step(raw, self._memory.secrets, goal=self.goal, secret=secret)
        if not self._memory.enabled:
            return step
        mem = self._memory
        counting = mem.selectors.step_selector(domain_of(step.url) if step.url else self.domain, element_key(
            step.target, step.element), step.selector) if step.ok and step.target and step.selector else None
        if self.episode is None:
            seq, success_count = mem.store.retrying(lambda: write_step(mem, self.id, step, counting))
        else:  # an episode step is also staged in memory: run that once, and let a conflict go up
            with mem.store.write():
                seq, success_count = write_step(mem, self.id, step, counting)
                self._record_episode_step(step, seq, env_pre, env_post, internal_state, think)
        told = [("step_recorded", self.id, {"seq": seq, "action": step.action, "target": step.target, "ok": step.ok})]
        if counting is not None:
            told.insert(0, mem.selectors.counted_event(counting, success_count or 1, run_id=self.id))
        mem.scope.emit_all(told)
        helpful, unhelpful = self._feedback.judge(step)
        if helpful:
            mem.lessons.rate(helpful, helpful=True, run_id=self.id)
        if unhelpful:
            mem.lessons.rate(unhelpful, helpful=False, run_id=self.id)
        return step

    def on_error(self, command: str, error: str) -> list[Lesson]:
        """A command failed: recall the lessons that match; the next context shows them after the error."""
        if not isinstance(command, str) or not command.strip():
            raise InvalidInput(f"command: expected a non-empty string, got {command!r}")
        if not isinstance(error, str):
            raise InvalidInput(f"error: expected a string, got {type(error).__name__}")
        if not self._memory.enabled:
            return []
        # The failed step is stored cut and redacted (record_step): use the error in that form.
        stored_error = self._memory.secrets.redact(error[:MAX_ERROR_CHARS]) or ""
        tips = self._memory.lessons.recall_on_error(
            command, stored_error, domain=self._site or self.domain, run_id=self.id
        )
        self._last_failure = (self._memory.secrets.redact(command) or command, stored_error, tips)
        self._feedback.recalled(tips, command, stored_error)
        return tips

    def on_handover(self, report: ReplayReport) -> None:
        """Tell the run that its replay handed over to the agent (``report``): from the next context on,
        where the replay stopped and why takes the place of the reference trajectory."""
        if not isinstance(report, ReplayReport) or report.outcome != "handed_over":
            raise InvalidInput("report: expected the webmem.ReplayReport of a replay that handed over")
        self._handover = report

    def on_domain(self, url: str) -> list[Lesson]:
        """The agent entered a page: when its domain is new to this run, recall the lessons about that site.

        The tips stay in the context for as long as the run stays on the domain.
        """
        domain = domain_of(url)
        if not self._memory.enabled:
            return []
        if domain != self._site:
            self._site = domain
            lessons = self._memory.lessons
            self._site_tips = lessons.peek_domain(domain) if self._preview else lessons.recall_on_domain(
                domain, run_id=self.id
            )
        return list(self._site_tips)

    def system_prompt(self) -> str:
        """The tier-1 lessons as a system-prompt section ('' when there are none or memory is off)."""
        if not self._memory.enabled:
            return ""
        return self._memory.lessons.system_prompt_section(run_id=self.id)

    def update(
        self,
        *,
        current_url: str | None = None,
        turn_count: int | None = None,
        artifact_paths: Iterable[str] | None = None,
    ) -> RunManifest:
        """Report progress: the page the agent is on, the turns used, artifacts written."""
        self._check_open()
        if isinstance(artifact_paths, str | bytes):
            raise InvalidInput("artifact_paths: expected a list of paths, got a single string")
        paths = list(artifact_paths) if artifact_paths is not None else None
        if not self._memory.enabled:
            changes: dict[str, Any] = {"updated_at": utcnow()}
            if current_url is not None:
                changes["current_url"] = check_url(current_url, field="current_url")
            if turn_count is not None:
                changes["turn_count"] = turn_count
            if paths is not None:
                changes["artifact_paths"] = [*self._manifest.artifact_paths, *paths]
            self._manifest = validated(RunManifest, **{**self._manifest.model_dump(), **changes})
            return self._manifest
        self._manifest = self._memory.runs.update(
            self.id, current_url=current_url, turn_count=turn_count, artifact_paths=paths
        )
        return self._manifest

    def finish(
        self,
        *,
        success: bool,
        outcome: str | None = None,
        final_url: str | None = None,
        facts: Iterable[Mapping[str, str]] | None = None,
        model: str | None = None,
        replay: ReplayReport | None = None,
    ) -> RunManifest:
        """End the run and learn from it, in one transaction; calling it again changes nothing.

        Writes the manifest, the session on the run's domain, the trajectory (successful runs
        with steps only), the facts derived from the steps and any ``facts`` given
        (mappings of type, key and value). ``replay`` says what became of the replay the run
        started with (``find_replay``'s plan): it is kept with the run, and a replay that failed
        makes later replays of the same task shape hand over earlier, or stop.
        """
        if not isinstance(success, bool):
            raise InvalidInput(f"success: expected True or False, got {success!r}")
        if replay is not None and not isinstance(replay, ReplayReport):
            raise InvalidInput("replay: expected a webmem.ReplayReport")
        if self._closed:
            return self.manifest
        summary = outcome if outcome is not None else ("Goal achieved" if success else "Failed")
        if not isinstance(summary, str):
            raise InvalidInput(f"outcome: expected a string, got {type(summary).__name__}")
        final = check_url(final_url, field="final_url") if final_url is not None else None
        fact_items = _check_facts(facts)
        if not self._memory.enabled:
            self._closed = True
            now = utcnow()
            self._manifest = validated(RunManifest, **{
                **self._manifest.model_dump(), "status": "completed" if success else "failed",
                "success": success, "summary": summary, "final_url": final, "completed_at": now,
                "updated_at": now, "result": summary if success else None, "reason": None if success else summary,
                "replay": replay,
            })
            return self._manifest
        self._manifest = self._memory.store.retrying(
            lambda: learn_from_run(self._memory, self.id, self.domain, self._given, success=success, summary=summary,
                                   final_url=final, facts=fact_items, model=model, replay=replay)
        )
        self._closed = True
        return self._manifest

    def _record_episode_step(
        self, step: Step, seq: int, env_pre: EnvironmentState | Mapping[str, Any] | None,
        env_post: EnvironmentState | Mapping[str, Any] | None, internal_state: str | None, think: str | None,
    ) -> None:
        episodes = self._memory.episodes
        # the stored manifest, not self._manifest: earlier steps of this run have moved current_url on
        page = step.url or self._memory.runs.get(self.id).current_url or self._manifest.start_url
        arguments = [argument for argument in (step.target or step.selector, step.value) if argument is not None]
        pending = episodes.record_step_start(
            env_pre if env_pre is not None else {"url": page},
            internal_state if internal_state is not None else self.goal,
            f"{step.action}({', '.join(repr(argument) for argument in arguments)})",
            step.target or step.selector or "",
            think=think,
            step_id=f"{self.id}.{seq}",
            run_id=self.id,
            episode=self.episode,
        )
        if env_post is not None:
            episodes.record_step_end(pending, env_post)
        episodes.persist_memories(episode=self.episode)

    def _episode_advice(self, env: EnvironmentState | Mapping[str, Any] | None, internal_state: str | None) -> str:
        if self.episode is None or env is None:
            return ""
        memories = self._memory.episodes.retrieve_memories(env, internal_state or self.goal, episode=self.episode)
        return export_memories(memories, "prompt")

    def _parts_off_on(self, conn: Connection, site: str) -> dict[str, str]:
        """The parts the outcome gate turned off on ``site`` (they change only when runs finish)."""
        if site not in self._parts_off:
            self._parts_off[site] = self._memory.outcomes.parts_off(conn, site)
        return self._parts_off[site]

    def _note_given(self, pack: ContextPack, reference: Reference) -> None:
        """Remember what this turn gave the agent, for the outcome gate when the run finishes."""
        included = {part.name for part in pack.report if part.status in ("included", "truncated")}
        self._given.note_parts(included)
        if "reference_trajectory" in included and reference.report.best is not None and reference.text:
            self._given.note("reference", [reference.report.best.id])
        if "site_tips" in included:
            self._given.note("lesson", [tip.id for tip in self._site_tips])
        if "last_error" in included and self._last_failure is not None:
            self._given.note("lesson", [tip.id for tip in self._last_failure[2]])

    def _reference(self, origin: str, known: list[Fact]) -> Reference:
        if origin not in self._references:
            self._references[origin] = find_reference(self._memory, goal=self.goal, origin=origin, run_id=self.id,
                                                      known=known)
        return self._references[origin]

    def _check_open(self) -> None:
        if self._closed:
            raise RunClosed(f"run {self.id} is finished; start a new run (or resume this one) to record more")

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._closed:
            return
        if exc is not None:
            self.finish(success=False, outcome=clean_for_prompt(f"{exc_type.__name__}: {exc}", 1000) if exc_type else None)
        else:
            self.finish(success=False, outcome="The run ended without calling finish()")

    def __repr__(self) -> str:
        return f"Run(id={self.id!r}, domain={self.domain!r}, goal={self.goal!r})"


def _check_facts(facts: Iterable[Mapping[str, str]] | None) -> list[Mapping[str, str]]:
    if facts is None:
        return []
    if isinstance(facts, Mapping | str):
        raise InvalidInput("facts: expected a list of {type, key, value} mappings")
    return list(facts)

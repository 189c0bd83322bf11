"""The service layer: the operations that the MCP server and the HTTP API expose, over one memory.

Every surface that serves agents over a protocol calls this class and nothing below it, so that the
same call is checked, answered and refused the same way whichever protocol carried it. It keeps the
handles of the runs in progress (a run's recalled tips and site tips live in its handle) and finds a
run again by id after a restart.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..core.errors import InvalidInput
from ..core.models import Lesson, ReplayReport
from ..core.pack import check_budget
from ..core.urls import check_domain, check_url, origin_of
from ..core.vocabulary import DEFAULT_MATCH_LIMIT
from ..lessons.store import system_prompt_text
from ..memory import Memory
from ..run import DEFAULT_BUDGET_TOKENS, Run
from ..trajectories.plans import ReplayPlan
from . import overview
from .models import (
    FinishedRun,
    Lessons,
    LessonView,
    OriginWording,
    RecordedStep,
    ReplayOffer,
    RunContext,
    RunDetail,
    RunList,
    SiteFacts,
    SiteSelectors,
    SiteWording,
    SkillCall,
    SkillList,
    StartedRun,
    TrajectoryCandidate,
    TrajectorySearch,
)
from .overview import SiteHistory, Sites, TrajectoryList
from .tool_calls import replay_offer

#: Runs whose handles are kept between calls; an older one is found again in the store when needed.
MAX_OPEN_RUNS = 256
START_BUDGET_TOKENS = 1500
DEFAULT_LIST_LIMIT = 20
#: The candidates a trajectory search lists unless asked for every one (``all``).
MAX_LIST_LIMIT = 1000
#: The actions an agent may report: those a replay plan performs (each with its Playwright MCP tool, see
#: ``tool_calls.TOOLS``) and scrolling. The Python API takes any action; a protocol's client is told these.
AGENT_ACTIONS: tuple[str, ...] = (
    "goto", "click", "fill", "type", "select", "check", "uncheck", "press", "hover", "scroll", "wait", "back",
)


class MemoryService:
    """The operations of a memory for agents that reach it through a protocol (MCP, HTTP).

    Thread-safe: calls on one run are serialised, calls on different runs go side by side.
    """

    def __init__(self, memory: Memory) -> None:
        if not isinstance(memory, Memory) or not memory.enabled:
            raise InvalidInput("memory: expected an enabled webmem.Memory")
        self.memory = memory
        self._handles: OrderedDict[str, Run] = OrderedDict()
        self._plans: dict[str, ReplayPlan] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    # -- runs -----------------------------------------------------------------------------------

    def start_run(self, goal: str, start_url: str, *, session_id: str | None = None,
                  resume_run_id: str | None = None) -> StartedRun:
        """Start a run (or resume one): its tier-1 lessons, the first context, and a replay plan if one fits."""
        mem = self.memory
        if resume_run_id is not None:
            if session_id is not None:
                raise InvalidInput("session_id: a resumed run keeps the session of the run it resumes")
            return self._started(mem.resume_run(_text(resume_run_id, "resume_run_id"), goal=goal))
        return self._started(mem.start_run(goal=goal, start_url=start_url, session_id=session_id))

    def resume_run(self, run_id: str, *, goal: str | None = None) -> StartedRun:
        """A run that continues ``run_id``: same session, starting where it ended."""
        return self._started(self.memory.resume_run(_text(run_id, "run_id"), goal=goal))

    def fork_run(self, run_id: str, *, goal: str) -> StartedRun:
        """A run in a new session that branches off where ``run_id`` ended."""
        return self._started(self.memory.fork_run(_text(run_id, "run_id"), goal=goal))

    def _started(self, run: Run) -> StartedRun:
        mem = self.memory
        self._keep(run)
        with self._lock(run.id):
            lessons = mem.lessons.tier1(run_id=run.id)
            system_prompt = system_prompt_text(lessons)  # the text run.system_prompt() gives, from one read
            start_url = run.manifest.start_url
            pack = run.context(url=start_url, budget_tokens=START_BUDGET_TOKENS)
            lookup = mem.trajectories.search_replay(run.goal, origin_of(start_url), run_id=run.id)
            if lookup.plan is not None:
                self._plans[run.id] = lookup.plan
        return StartedRun(
            run_id=run.id, session_id=run.session_id, goal=run.goal, domain=run.domain,
            system_prompt=system_prompt, lessons=[lesson.lesson for lesson in lessons],
            context=pack.text, context_tokens=pack.tokens,
            replay=replay_offer(lookup.plan) if lookup.plan is not None else None,
            replay_unavailable=None if lookup.plan is not None else lookup.reason,
        )

    def record_step(
        self, run_id: str, *, action: str, target: str | None = None, selector: str | None = None,
        value: str | None = None, url: str | None = None, ok: bool = True, error: str | None = None,
        secret: bool = False, **details: Any,
    ) -> RecordedStep:
        """Record what one action did, as an agent reports it; a failed one recalls the lessons its error
        matches. The action is one of :data:`AGENT_ACTIONS`: any other is refused, and nothing is stored."""
        return self.record_observed_step(run_id, action=agent_action(action), target=target, selector=selector,
                                         value=value, url=url, ok=ok, error=error, secret=secret, **details)

    def record_observed_step(
        self, run_id: str, *, action: str, target: str | None = None, selector: str | None = None,
        value: str | None = None, url: str | None = None, ok: bool = True, error: str | None = None,
        secret: bool = False, **details: Any,
    ) -> RecordedStep:
        """Record a step that webmem saw done (the recording proxy's browser tool calls), whose action is
        named after the tool that was called (drag, upload, evaluate...): any action is kept."""
        if not isinstance(ok, bool):
            raise InvalidInput(f"ok: expected true or false, got {ok!r}")
        with self._run(run_id) as run:
            step = run.record_step(action=action, target=target, selector=selector, value=value, url=url, ok=ok,
                                   error=error, secret=secret, **details)
            tips: list[Lesson] = []
            if not ok:
                command = " ".join(part for part in (step.action, step.target or step.selector) if part)
                tips = run.on_error(command, step.error or "failed")
        return RecordedStep(run_id=run.id, step=step, tips=[tip.lesson for tip in tips])

    def get_context(self, run_id: str, *, url: str | None = None,
                    budget_tokens: int | None = None) -> RunContext:
        """The memory's context for the run's next turn on ``url`` (default: where the run is)."""
        budget = check_budget(budget_tokens if budget_tokens is not None else DEFAULT_BUDGET_TOKENS)
        with self._run(run_id) as run:
            if url is not None:
                page = check_url(url, field="url")
            else:
                manifest = run.manifest  # as stored now: another process may have moved the run on
                page = manifest.current_url or manifest.start_url
            pack = run.context(url=page, budget_tokens=budget)
        return RunContext(run_id=run.id, url=page, text=pack.text, tokens=pack.tokens, budget_tokens=budget,
                          parts=[part.to_dict() for part in pack.report])

    def finish_run(self, run_id: str, *, success: bool, outcome: str | None = None, final_url: str | None = None,
                   replay: ReplayReport | None = None) -> FinishedRun:
        """End the run and learn from it; finishing a finished run changes nothing."""
        with self._run(run_id, open_only=False) as run:
            manifest = run.finish(success=success, outcome=outcome, final_url=final_url, replay=replay)
            steps = len(run.steps)
        with self._guard:
            self._handles.pop(run.id, None)
            self._plans.pop(run.id, None)
        return FinishedRun(run=manifest, steps=steps)

    def replay_plan(self, run_id: str) -> ReplayOffer | None:
        """The replay offered when the run started, if one was."""
        plan = self.plan(run_id)
        return replay_offer(plan) if plan is not None else None

    def plan(self, run_id: str) -> ReplayPlan | None:
        """The replay plan found for the run when it started (None when none fitted)."""
        with self._run(run_id):
            return self._plans.get(_text(run_id, "run_id"))

    def list_runs(self, *, domain: str | None = None, session_id: str | None = None, status: str | None = None,
                  limit: int = DEFAULT_LIST_LIMIT) -> RunList:
        """Runs newest first, filtered by domain, session and status."""
        return RunList(runs=self.memory.runs.list(domain=domain, session_id=session_id, status=status,
                                                  limit=_limit(limit)))

    def get_run(self, run_id: str) -> RunDetail:
        """A run's manifest and its steps as stored."""
        runs = self.memory.runs
        manifest = runs.get(_text(run_id, "run_id"))
        return RunDetail(run=manifest, steps=runs.steps(manifest.run_id))

    # -- what was learned -----------------------------------------------------------------------

    def recall_lessons(self, *, error: str | None = None, command: str | None = None,
                       domain: str | None = None) -> Lessons:
        """Lessons for an error (with the command that failed), else for a site, else the tier-1 lessons.
        Reads only: nothing is counted as recalled."""
        lessons = self.memory.lessons
        site = check_domain(domain) if domain is not None else None
        if error is not None or command is not None:
            if error is None or command is None:
                raise InvalidInput("error and command go together: give the command that failed and its error")
            found = lessons.peek_error(_text(command, "command"), _text(error, "error", empty=True), domain=site)
        elif site is not None:
            found = lessons.peek_domain(site)
        else:
            found = lessons.tier1()
        return Lessons(lessons=[lesson_view(lesson) for lesson in found])

    def search_trajectories(self, goal: str, url: str, *, limit: int = DEFAULT_MATCH_LIMIT,
                            all: bool = False) -> TrajectorySearch:
        """The stored successful runs on ``url``'s origin closest to ``goal``, the reference a run would get,
        and the replay plan that fits, if one does. The ``limit`` closest come from the pruned ranking (only the
        goals that can compete are scored); ``all`` scores and explains every candidate instead (``limit`` is then
        not used), which costs more as the origin's runs grow. ``scored`` says how many candidates there were."""
        every = _flag(all, "all")
        size = _limit(limit)
        origin = origin_of(url)
        mem = self.memory
        report = mem.trajectories.match(goal, origin=origin, limit=None if every else size)
        offer, unavailable = self.replay_for(goal, url)
        best = report.best
        return TrajectorySearch(
            goal=report.goal, origin=report.origin, best=best.id if best else None, reason=report.reason,
            scored=report.scored, set_aside=report.set_aside, values_read=report.values_read,
            reference=mem.trajectories.format_reference(best, goal=mem.scope.redact(goal)) if best else "",
            candidates=[
                TrajectoryCandidate(trajectory_id=c.trajectory.id, goal=c.trajectory.goal, similarity=c.similarity,
                                    score=c.score, eligible=c.eligible, reason=c.reason, why=c.why)
                for c in report.candidates
            ],
            replay=offer, replay_unavailable=unavailable,
        )

    def replay_for(self, goal: str, url: str) -> tuple[ReplayOffer | None, str | None]:
        """The replay plan that fits ``goal`` on ``url``'s origin, or why none does."""
        lookup = self.memory.trajectories.search_replay(goal, origin_of(url))
        return (replay_offer(lookup.plan), None) if lookup.plan is not None else (None, lookup.reason)

    def site_facts(self, domain: str) -> SiteFacts:
        site = check_domain(domain)
        return SiteFacts(domain=site, facts=self.memory.knowledge.facts(site))

    def site_selectors(self, domain: str) -> SiteSelectors:
        site = check_domain(domain)
        return SiteSelectors(domain=site, selectors=self.memory.selectors.list(site))

    def site_wording(self, domain: str) -> SiteWording:
        """What the recordings of each origin of ``domain`` taught about how its tasks may be worded: the words
        that name one act there, and the options that are values of a task."""
        site = check_domain(domain)
        found = self.memory.trajectories
        return SiteWording(domain=site, origins=[
            OriginWording(origin=origin, acts=found.learned_acts(origin), options=found.field_options(origin))
            for origin in found.origins(site)])

    def tier1_lessons(self) -> Lessons:
        return Lessons(lessons=[lesson_view(lesson) for lesson in self.memory.lessons.tier1()])

    def list_lessons(self, *, category: str | None = None, domain: str | None = None) -> Lessons:
        """Every lesson, tier 1 first, filtered by category and site."""
        return Lessons(lessons=[lesson_view(lesson) for lesson in self.memory.lessons.list(category, domain)])

    def stats(self) -> dict[str, Any]:
        """Record counts per kind, the database's size and its backend ("sqlite" or "postgresql"); not where the
        database lives, which is the server's business."""
        found = self.memory.stats()
        del found["location"]
        return {**found, "backend": self.memory.store.dialect}

    def list_skills(self, site: str) -> SkillList:
        """The skills of ``site`` (a URL, an origin or a domain), most trusted first."""
        return SkillList(site=_text(site, "site"), skills=self.memory.skills.list(site))

    def plan_skill(self, skill_id: str, parameters: Mapping[str, Any], *, site: str | None = None) -> SkillCall:
        """A call of a skill (by id, or by name on ``site``) with ``parameters``, as a replay plan."""
        skills = self.memory.skills
        skill = skills.get(_text(skill_id, "skill_id"), site)
        plan = skills.plan(skill, parameters)
        return SkillCall(skill=skill, goal=skills.goal(skill, parameters), replay=replay_offer(plan))

    def sites(self) -> Sites:
        """Every site the memory has runs on, with its counts."""
        return overview.sites(self.memory)

    def site_history(self, domain: str) -> SiteHistory:
        """A site's figures per day: runs, success rate, steps per run, replay rate."""
        return overview.site_history(self.memory, check_domain(domain))

    def list_trajectories(self, *, domain: str | None = None, limit: int = 50) -> TrajectoryList:
        return overview.trajectory_list(self.memory, domain=domain, limit=_limit(limit))

    def lineage(self, run_id: str) -> RunList:
        """The run and its ancestors, oldest first."""
        return RunList(runs=self.memory.runs.lineage(_text(run_id, "run_id")))

    def close(self) -> None:
        self.memory.close()

    # -- handles --------------------------------------------------------------------------------

    @contextmanager
    def _run(self, run_id: object, *, open_only: bool = True) -> Iterator[Run]:
        """The run's handle, held for this call alone (kept from its start, else found in the store)."""
        key = _text(run_id, "run_id")
        with self._lock(key):
            with self._guard:
                run = self._handles.get(key)
                if run is not None:
                    self._handles.move_to_end(key)
            if run is None:
                run = self.memory.get_run(key)  # RunNotFound names the id
                if open_only and not run.finished:
                    self._keep(run)
            yield run

    def _keep(self, run: Run) -> None:
        with self._guard:
            self._handles[run.id] = run
            self._handles.move_to_end(run.id)
            while len(self._handles) > MAX_OPEN_RUNS:
                gone, _ = self._handles.popitem(last=False)
                self._plans.pop(gone, None)
                self._locks.pop(gone, None)

    def _lock(self, run_id: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(run_id, threading.RLock())


def lesson_view(lesson: Lesson) -> LessonView:
    return LessonView(
        id=lesson.id, lesson=lesson.lesson, category=lesson.category, domain=lesson.domain,
        failed_command=lesson.failed_command, error_pattern=lesson.error_pattern, source=lesson.source,
        use_count=lesson.use_count, helpful_count=lesson.helpful_count, unhelpful_count=lesson.unhelpful_count,
    )


def agent_action(action: object) -> str:
    """``action`` if it is one of :data:`AGENT_ACTIONS` (around spaces aside), else InvalidInput listing them."""
    name = _text(action, "action")
    if name.strip() not in AGENT_ACTIONS:
        raise InvalidInput(f"action: unknown action {name!r}; valid actions: {', '.join(AGENT_ACTIONS)}")
    return name


def _text(value: object, field: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise InvalidInput(f"{field}: expected a non-empty string, got {value!r}")
    return value


def _flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{field}: expected true or false, got {value!r}")
    return value


def _limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidInput(f"limit: expected a whole number from 1 to {MAX_LIST_LIMIT}, got {limit!r}")
    return limit


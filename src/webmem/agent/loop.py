"""The agent loop: observe -> decide -> execute -> verify -> record, with the memory's triggers wired in."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.errors import InvalidInput, NotFound, PolicyError
from ..core.models import ReplayReport, positive_int
from ..core.pack import ContextPart
from ..core.redaction import names_password_field
from ..core.text import clean_for_prompt
from ..core.urls import check_url, domain_of, origin_of
from .actions import SKILL, Action
from .execute import Execution, element_ref, perform, reaches, shown_count, signals_of
from .observation import Element, Observation, observe

try:
    from playwright.sync_api import Error as PlaywrightError
except ImportError:  # the agent needs Playwright; importing this module without it stays possible
    PlaywrightError = RuntimeError  # type: ignore[misc,assignment]
from .policy import Policy, PolicyStats, StepOutcome, Turn
from .replay import DEFAULT_WAIT_MS as LOOK_AGAIN_MS
from .replay import LOOKING_AGAIN, ReplayPolicy
from .results import AgentResult, Environment, EnvironmentOutcome
from .skill_calls import AfterSkill, OfferedSkills, SkillReplay

if TYPE_CHECKING:
    from ..memory import Memory
    from ..run import Run
    from ..trajectories.plans import ReplayPlan

DEFAULT_MAX_TURNS = 20
DEFAULT_MAX_ERRORS = 3
DEFAULT_MAX_REPEATS = 3
DEFAULT_ACTION_TIMEOUT_MS = 3000
MAX_HINTS_CHARS = 4000
PRIORITY_HINTS = 65  # below loop warnings and the user's context, above the last error
UNGUARDED_REPEATS = frozenset({"scroll", "wait"})  # scrolling on is progress; the turn budget bounds it


class Agent:
    """A browser agent on a Playwright page, with webmem as its memory.

    Each turn it looks at the page, asks ``policy`` (or the memory's replay of a matching earlier run)
    for one action, executes and verifies it, and records it in the run. ``memory=None`` runs without
    memory (no context, no replay, nothing recorded). The run ends on the policy's ``finish``, on the
    environment's verdict, or on a guardrail: ``max_turns`` turns, the same action on the same target
    ``max_repeats`` times, or ``max_errors`` failed actions.

    A policy that calls skills (``calls_skills``, the LLM policy) is offered the skills of the page's site: a call
    replays the skill's plan with its values, then gives the page back to the policy. ``replay=False`` turns off
    both the replay a run starts with and skill calls; ``replay_at_start=False`` turns off only the former: the
    policy decides from the first turn, and may still call skills.
    """

    def __init__(
        self,
        page: Any,
        *,
        policy: Policy,
        memory: Memory | None = None,
        environment: Environment | None = None,
        replay: bool = True,
        replay_at_start: bool = True,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_errors: int = DEFAULT_MAX_ERRORS,
        max_repeats: int = DEFAULT_MAX_REPEATS,
        budget_tokens: int = 2000,
        action_timeout_ms: int = DEFAULT_ACTION_TIMEOUT_MS,
        model: str | None = None,
    ) -> None:
        if not callable(getattr(policy, "decide", None)):
            raise InvalidInput(f"policy: expected an object with decide(turn), got {type(policy).__name__}")
        self.page = page
        self.policy = policy
        self.memory = memory if memory is not None and memory.enabled else None
        self.environment = environment
        self.replay = replay
        self.replay_at_start = replay_at_start
        self.max_turns = positive_int(max_turns, field="max_turns")
        self.max_errors = positive_int(max_errors, field="max_errors")
        self.max_repeats = positive_int(max_repeats, field="max_repeats")
        self.budget_tokens = positive_int(budget_tokens, field="budget_tokens")
        self.action_timeout_ms = positive_int(action_timeout_ms, field="action_timeout_ms")
        self.model = model

    def run(
        self,
        goal: str,
        url: str | None = None,
        *,
        session_id: str | None = None,
        run: Run | None = None,
        hints: str = "",
    ) -> AgentResult:
        """Pursue ``goal``, starting at ``url`` (or on the page as it is). ``run`` continues a run
        started elsewhere (a resumed or forked one); otherwise the agent starts its own. ``hints``
        (text, such as a suite's hints) join each turn's context under the same token budget."""
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: expected a non-empty string")
        started = time.perf_counter()
        if url is not None:
            start_url = check_url(url, field="url")
            try:
                self.page.goto(start_url)
            except PlaywrightError as exc:
                if run is not None:
                    run.finish(success=False, outcome=f"could not open {start_url}")
                reason = f"could not open {start_url}: {_first_line(str(exc))}"
                return AgentResult(goal=goal, success=False, reason=reason, run_id=run.id if run else None,
                                   duration_ms=round((time.perf_counter() - started) * 1000))
        if run is None and self.memory is not None:
            run = self.memory.start_run(goal=goal, start_url=self.page.url, session_id=session_id, model=self.model)
        session = _Session(self, goal, run, hints)
        result = session.drive()
        result.duration_ms = round((time.perf_counter() - started) * 1000)
        return result


class _Session:
    """One pass of the loop (kept apart from Agent so that an Agent can run many goals)."""

    def __init__(self, agent: Agent, goal: str, run: Run | None, hints: str) -> None:
        self.agent = agent
        self.goal = goal
        self.run = run
        self.hints = clean_for_prompt(hints, MAX_HINTS_CHARS) if hints else ""
        self.history: list[StepOutcome] = []
        self.repeats: Counter[tuple[str, str, str]] = Counter()
        self.errors = 0
        self.context_tokens = 0
        self.memory_hits = 0
        self.domain: str | None = None
        self.last_error: str | None = None
        self.before = agent.policy.stats.snapshot()
        self.policy: Policy = agent.policy
        self.replay: ReplayPolicy | None = None
        self.fresh_start = False  # whether the repeat counts were reset when the replay handed over
        self.system_prompt: str | None = None
        self.replay_miss: str | None = None  # why the memory offered no replay
        self.looked_again = False  # whether a run that claimed its task done looked once more for the task's end
        self.skills = OfferedSkills(agent.memory if agent.replay else None, agent.policy)
        self.skill_call: SkillReplay | None = None  # the last call of a skill whose plan was made
        self.skill_calls: list[SkillReplay | None] = []  # every call, in order (None: one that could not be planned)

    def drive(self) -> AgentResult:
        agent = self.agent
        agent.policy.start(self.goal)
        page = agent.page
        memory = agent.memory
        if memory is not None and not agent.replay:
            self.replay_miss = "replay is turned off (Agent(replay=False))"
        elif memory is not None and not agent.replay_at_start:
            self.replay_miss = "the replay a run starts with is turned off (Agent(replay_at_start=False))"
        elif memory is not None and self.run is not None:
            lookup = memory.trajectories.search_replay(self.goal, origin_of(page.url), run_id=self.run.id)
            plan, self.replay_miss = lookup.plan, lookup.reason
            if plan is not None:
                self.replay = self._replay_policy(plan, agent.policy, lookup.others)
                self.policy = self.replay
                self.memory_hits += 1
        for number in range(1, agent.max_turns + 1):
            try:
                observation = observe(page)
            except PlaywrightError as exc:
                return self._end(False, f"the page could not be read: {_first_line(str(exc))}", number, None)
            turn = self._turn(number, observation)
            chosen = self._choose(turn, observation, number)
            if isinstance(chosen, AgentResult):
                return chosen
            action, from_replay = chosen
            if action.kind == SKILL:
                continue  # a call that could not be planned: its error is in the history
            if action.kind == "finish":
                outcome = self._environment_outcome() if not action.success else self._outcome_after_a_look()
                success = outcome.success if outcome is not None else bool(action.success)
                why = action.reason or ("replay finished" if from_replay else "the policy finished")
                if agent.environment is not None and outcome is None and success:
                    # the environment has the last word: a claimed success it does not confirm is a failure
                    success, why = False, f"{why}, but the environment did not confirm success"
                return self._end(success, why, number, observation, answer=action.answer, outcome=outcome)
            execution = perform(page, action, observation, timeout_ms=agent.action_timeout_ms)
            outcome = self._environment_outcome()
            if outcome is not None and outcome.success and execution.ok:
                execution = replace(execution, verified=True, expected_effect="task completed")
            self._record(action, execution, observation)
            after = execution.observation or observation
            if outcome is not None:
                return self._end(outcome.success, outcome.detail or "the environment ended the task", number, after,
                                 outcome=outcome)
            if not execution.ok and not from_replay:  # a replayed step that fails hands over instead
                self.errors += 1
                if (ended := self._out_of_errors(number, after)) is not None:
                    return ended
        return self._end(False, f"stopped: turn budget of {agent.max_turns} turns used up", agent.max_turns, None)

    def _out_of_errors(self, number: int, observation: Observation) -> AgentResult | None:
        if self.errors < self.agent.max_errors:
            return None
        return self._end(False, f"stopped: {self.errors} actions failed (error budget {self.agent.max_errors})",
                         number, observation)

    def _replay_policy(self, plan: ReplayPlan, fallback: Policy, others: Sequence[ReplayPlan] = ()) -> ReplayPolicy:
        page, memory = self.agent.page, self.agent.memory
        return ReplayPolicy(plan, fallback, locate=lambda selector, role, name: element_ref(page, selector, role, name),
                            reaches=lambda selector, ref: reaches(page, selector, ref),
                            shown=lambda text: shown_count(page, text),
                            secrets=memory.secrets if memory is not None else None,
                            identify=lambda ref: signals_of(page, ref), others=others)

    def _driving(self) -> ReplayPolicy | None:
        """The replay choosing the actions now (the run's, or a skill call's), if one is."""
        policy = self.policy
        return policy if isinstance(policy, ReplayPolicy) and policy.active else None

    def _choose(self, turn: Turn, observation: Observation, number: int) -> tuple[Action, bool] | AgentResult:
        """The next action and whether the replay chose it, or the end of the run. An action chosen
        ``max_repeats`` times ends the run, and so does a replay that finishes before the environment
        says the task is over, unless a fallback policy can go on: the replay hands over instead, and
        the fallback's repeats are counted from then on."""
        while True:
            try:
                action = self.policy.decide(turn)
            except PolicyError as exc:
                return self._end(False, f"the policy failed: {exc}", number, observation)
            replay = self._driving()  # it chose the action
            if action.kind == "finish" and replay is not None and self.skill_call is not None \
                    and replay is self.skill_call.replay:
                turn = self._handed_back(turn)  # the skill's steps are done: the policy goes on with the goal
                continue
            if action.kind == "finish" and replay is not None and self.agent.environment is not None \
                    and self._outcome_after_a_look() is None:
                replay.hand_over(f"replayed all {replay.position} steps, but the task is not over")
                continue
            if action.kind == "finish" or action.kind in UNGUARDED_REPEATS:
                return action, replay is not None
            if self.replay is not None and replay is None and not self.fresh_start:
                self.repeats.clear()  # the policy that took over judges the page afresh: the plan's repeats are not its own
                self.fresh_start = True
            key = repeat_key(action, observation)
            if self.repeats[key] + 1 < self.agent.max_repeats:
                self.repeats[key] += 1
                if action.kind != SKILL:
                    return action, replay is not None
                called = self._call_skill(action, turn, observation, number)
                if called is None or isinstance(called, AgentResult):
                    return called if called is not None else (action, False)
                turn = called
                continue
            said = f"the same action ({clean_for_prompt(action.describe(), 200)}) was chosen {self.agent.max_repeats} times"
            if replay is None:
                return self._end(False, f"stopped: {said}", number, observation)
            replay.hand_over(f"step {replay.position}: {said}")

    def _call_skill(self, action: Action, turn: Turn, observation: Observation,
                    number: int) -> Turn | AgentResult | None:
        """Start the skill ``action`` calls: its plan replayed from this turn on (the turn, with the call in its
        history), or, when it cannot be planned, a failed step whose error the policy reads next turn (None; the
        run's end when the error budget is spent)."""
        try:
            plan = self.skills.plan(action)
        except (InvalidInput, NotFound) as exc:
            self.last_error, error = f"skill {action.skill.name}: {exc}", str(exc)  # type: ignore[union-attr]
            self.history.append(StepOutcome(action=action, ok=False, verified=None, error=error, url=observation.url))
            self.skill_calls.append(None)
            if self.run is not None:
                self.run.on_error(action.describe(), error)
            self.errors += 1
            return self._out_of_errors(number, observation)
        self.history.append(StepOutcome(action=action, ok=True, verified=None, url=observation.url,
                                        effect=f"replaying its {len(plan.steps)} recorded steps"))
        replay = self._replay_policy(plan, AfterSkill(self.agent.policy, self._handed_back))
        self.skill_call = SkillReplay(action, replay, len(self.history) - 1, Counter(self.repeats))
        self.skill_calls.append(self.skill_call)
        self.policy = replay
        self.memory_hits += 1
        return replace(turn, history=tuple(self.history))

    def _handed_back(self, turn: Turn) -> Turn:
        """The skill call's replay gave the page back (its steps done, or handed over): its entry in the history
        says how it went, the run learns where a replay that handed over stopped, and the policy decides again."""
        call = self.skill_call
        if call is None or call.ended:
            return turn
        error = call.end(self.history)
        self.repeats = call.repeats
        self.policy = self.agent.policy
        if error is not None:
            self.last_error = error
            if self.run is not None:
                self.run.on_handover(call.report(False, "", None))
        return self._turn(turn.number, turn.observation)  # the run's context now says where a hand-over stopped

    def _turn(self, number: int, observation: Observation) -> Turn:
        context = system_prompt = ""
        known: tuple = ()
        run = self.run
        domain = domain_of(observation.url) if observation.url.startswith(("http://", "https://")) else None
        if run is not None and domain is not None:
            if domain != self.domain:
                tips = run.on_domain(observation.url)
                self.memory_hits += 1 if tips else 0
                self.domain = domain
            episode_env = observation.environment() if run.episode is not None else None
            extra = [ContextPart("hints", "", PRIORITY_HINTS, self.hints)] if self.hints else []
            pack = run.context(url=observation.url, budget_tokens=self.agent.budget_tokens, env=episode_env,
                               extra_parts=extra)
            context = pack.text
            self.context_tokens += pack.tokens
            if self.system_prompt is None:  # a system prompt is set once per run
                self.system_prompt = run.system_prompt()
            system_prompt = self.system_prompt
            known = tuple(self.agent.memory.selectors.list(domain)) if self.agent.memory else ()
            if number == 1 and "reference_trajectory" in pack.included:
                self.memory_hits += 1
        elif self.hints:
            context = self.hints
        return Turn(goal=self.goal, observation=observation, number=number, context=context,
                    system_prompt=system_prompt, history=tuple(self.history), known_selectors=known,
                    last_error=self.last_error, skills=self.skills.on(observation.url))

    def _record(self, action: Action, execution: Execution, observation: Observation) -> None:
        element = execution.element
        target = element.identity if element is not None else (action.target.identity if action.target else None)
        memory = self.agent.memory
        if action.value and not action.secret and action.kind in ("fill", "type") and (
            names_password_field(target, execution.selector, element.label if element else None)
            or (memory is not None and action.value in memory.secrets)
        ):
            action = replace(action, secret=True)  # shown as {secret} in every later prompt, log and result
        self.history.append(StepOutcome(action=action, ok=execution.ok, verified=execution.verified,
                                        error=execution.error, effect=execution.expected_effect, url=observation.url))
        self.last_error = execution.error
        run = self.run
        if run is None or action.extra.get(LOOKING_AGAIN):
            return
        url = observation.url if observation.url.startswith(("http://", "https://")) else None
        after = execution.observation
        index, count = target_evidence(element, observation)
        label = element.label if element is not None and not element.name and element.label else None
        run.record_step(
            action=action.kind, target=target, selector=execution.selector, value=action.value, url=url,
            target_index=index, target_count=count, label=label, element=execution.signals,
            ok=execution.ok, verified=execution.verified, error=execution.error,
            expected_effect=execution.expected_effect, snapshot_hash=observation.fingerprint,
            duration_ms=execution.duration_ms, secret=action.secret,
            env_pre=observation.environment() if run.episode is not None else None,
            env_post=after.environment() if run.episode is not None and after is not None else None,
        )
        if not execution.ok:
            run.on_error(action.describe(), execution.error or "failed")

    def _outcome_after_a_look(self) -> EnvironmentOutcome | None:
        """The environment's verdict on a run that claims its task done; when it has none yet, it is looked
        for once more (once per run) after a short wait: the last action's page may still be loading."""
        outcome = self._environment_outcome()
        if outcome is None and self.agent.environment is not None and not self.looked_again:
            self.looked_again = True
            self.agent.page.wait_for_timeout(LOOK_AGAIN_MS)
            outcome = self._environment_outcome()
        return outcome

    def _environment_outcome(self) -> EnvironmentOutcome | None:
        environment = self.agent.environment
        return environment.outcome(self.agent.page) if environment is not None else None

    def _end(
        self, success: bool, reason: str, turns: int, observation: Observation | None, *, answer: str | None = None,
        outcome: EnvironmentOutcome | None = None,
    ) -> AgentResult:
        spent: PolicyStats = self.agent.policy.stats.since(self.before)
        replay = self._replay_report(success, reason, spent)
        url = observation.url if observation is not None else self.agent.page.url
        final_url = url if url.startswith(("http://", "https://")) else None
        if self.run is not None:
            self.run.update(turn_count=turns, **({"current_url": final_url} if final_url else {}))
            summary = clean_for_prompt(answer if success and answer else reason, 1000)
            self.run.finish(success=success, outcome=summary, final_url=final_url, replay=replay)
        return AgentResult(
            goal=self.goal, success=success, reason=reason, run_id=self.run.id if self.run else None, answer=answer,
            turns=turns, steps=sum(done.action.kind != SKILL for done in self.history), decisions=spent.decisions,
            llm_calls=spent.llm_calls, prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens,
            replayed=replay is not None and replay.outcome == "replayed",
            replay_fallback=replay is not None and replay.outcome == "handed_over",
            replay_trajectory_id=replay.trajectory_id if replay else None,
            handover_reason=replay.reason if replay is not None and replay.outcome == "handed_over" else None,
            replay_outcome=replay.outcome if replay else None, replay_step=replay.step if replay else None,
            replay_reason=replay.reason if replay else None, replay_steps=list(replay.steps) if replay else [],
            replay_offered=self.replay is not None, replay_miss_reason=self.replay_miss,
            skill_calls=[call.outcome(success) if call is not None else "refused" for call in self.skill_calls],
            context_tokens=self.context_tokens, memory_hits=self.memory_hits, final_url=final_url,
            reward=outcome.reward if outcome is not None else None, history=list(self.history),
        )

    def _replay_report(self, success: bool, reason: str, spent: PolicyStats) -> ReplayReport | None:
        """What became of the last skill call's replay, if a skill was called; else of the replay this run
        started with, if it started one."""
        if self.skill_call is not None:
            return self.skill_call.report(success, reason, self.history[-1] if self.history else None)
        replay = self.replay
        if replay is None:
            return None
        trajectory_id = replay.plan.trajectory_id
        steps = replay.step_report(self.history[-1] if self.history else None)
        if replay.handed_over:
            return ReplayReport(outcome="handed_over", trajectory_id=trajectory_id, step=replay.handover_step,
                                reason=clean_for_prompt(replay.handover_reason or "", 2000), steps=steps)
        if success and spent.decisions == 0:
            return ReplayReport(outcome="replayed", trajectory_id=trajectory_id, step=replay.position, steps=steps)
        return ReplayReport(outcome="replay_failed", trajectory_id=trajectory_id, step=max(replay.position, 1),
                            reason=clean_for_prompt(reason, 2000), steps=steps)


def repeat_key(action: Action, observation: Observation) -> tuple[str, str, str]:
    """What makes two actions "the same" for the repeated-action guard: the action's signature, with the
    element's place among the page's elements of the same role and name when there are several (pasting
    into three unnamed text boxes is three actions, not one repeated)."""
    kind, where, value = action.signature
    element = observation.by_ref(action.target.ref) if action.target is not None and action.target.ref else None
    if element is not None:
        index, _ = target_evidence(element, observation)
        where = element.identity + (f" #{index}" if index is not None else "")
    return kind, where, value


def target_evidence(element: Element | None, observation: Observation) -> tuple[int | None, int | None]:
    """Which of the page's elements with ``element``'s role and name it is (from 1), and how many there
    are; (None, None) when it is the only one."""
    if element is None:
        return None, None
    same = observation.find(element.role, element.name)
    if len(same) < 2 or element not in same:
        return None, None
    return same.index(element) + 1, len(same)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), text.strip())[:500]

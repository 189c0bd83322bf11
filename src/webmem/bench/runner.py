"""run_benchmark: webmem's agent on MiniWoB++ tasks in headless Chromium, without memory and with it."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import InvalidInput
from .miniwob import DEFAULT_TASKS, TaskPage, available_tasks, close_matches, episode_seed, read_state, serve_miniwob
from .results import BenchReport, EpisodeRecord, settle_replay

#: In a ``memory_dir``: the port its memories' task server had, used again by a later run by default.
PORT_FILE = "bench-port"

__all__ = [
    "MEMORY_CHOICES", "POLICIES", "RECORDING", "RECORDING_SEED_OFFSET", "BenchProgress", "MiniWobEnvironment", "check_tasks", "policy_factory", "run_benchmark",
]

POLICIES = ("heuristic", "llm")
#: off: cold only; on: warm only; both: cold, then warm on the same seeds.
MEMORY_CHOICES = {"off": ("cold",), "on": ("warm",), "both": ("cold", "warm")}
#: The mode of the episodes in which another policy records the warm memory (``memory_from``), and
#: how far their seed is from the measured episodes' (other instances of the same tasks).
RECORDING = "recording"
RECORDING_SEED_OFFSET = 1000
PAGE_TIMEOUT_MS = 10_000


class MiniWobEnvironment:
    """The agent's environment signal: the task's own verdict once its episode has ended."""

    def outcome(self, page: Any) -> Any:
        from ..agent import EnvironmentOutcome

        state = read_state(page)
        if state is None:
            return EnvironmentOutcome(success=False, reward=None, detail="left the task page")
        if not state.done:
            return None
        detail = f"reward {state.reward}" + (f" ({state.reason})" if state.reason else "")
        return EnvironmentOutcome(success=state.success, reward=state.reward, detail=detail)


@dataclass(frozen=True)
class BenchProgress:
    """Sent before each episode (``record`` None) and after it (``record`` set, ``done`` counting it)."""

    done: int
    total: int
    mode: str
    task: str
    record: EpisodeRecord | None = None


def run_benchmark(
    tasks: Sequence[str] | None = None,
    *,
    episodes: int = 10,
    policy: str | Callable[[], Any] = "heuristic",
    memory: str = "both",
    memory_dir: str | Path | None = None,
    shared_memory: bool = False,
    seed: int = 0,
    max_turns: int = 12,
    port: int = 0,
    headless: bool = True,
    on_progress: Callable[[BenchProgress], None] | None = None,
    memory_from: str | Callable[[], Any] | None = None,
    replay: bool = True,
    replay_at_start: bool = True,
) -> BenchReport:
    """Run ``episodes`` seeded episodes of each task, cold and/or warm, and return what they measured.

    ``policy`` is ``"heuristic"``, ``"llm"`` (configured from ``WEBMEM_LLM_*``), or a callable that
    returns a new policy; each mode gets its own. In warm mode each task gets a memory of its own,
    kept in ``memory_dir/<task>`` (default: a fresh temporary directory per task, removed afterwards);
    with ``shared_memory`` one memory, ``memory_dir`` itself, serves every task, so tasks can help or
    hurt each other. Episode ``i`` of a task has the seed ``episode_seed(seed, task, i)``: the same in
    cold and warm mode, different for every other task and episode.

    ``memory_from`` (a policy as ``policy`` is) measures memory that another agent recorded: first that
    policy runs the tasks warm on other instances (seed ``seed + RECORDING_SEED_OFFSET``, mode
    ``recording``), into the memory the warm episodes then use; ``policy`` runs cold and on that memory.

    ``replay`` and ``replay_at_start`` are the agent's options of the same names for ``policy``'s episodes (the
    recording's keep both on): ``replay=False`` turns off the memory's replay and skill calls,
    ``replay_at_start=False`` only the replay a run starts with (an LLM policy may still call the site's skills).

    Raises :class:`ImportError` when ``miniwob`` is missing, :class:`InvalidInput` for unknown tasks or options.
    """
    chosen = check_tasks(DEFAULT_TASKS if tasks is None else tasks)
    if memory not in MEMORY_CHOICES:
        raise InvalidInput(f"memory: {memory!r} is not one of {', '.join(MEMORY_CHOICES)}")
    if episodes < 1:
        raise InvalidInput(f"episodes: expected at least 1, got {episodes}")
    if max_turns < 1:
        raise InvalidInput(f"max_turns: expected at least 1, got {max_turns}")
    make_policy = policy_factory(policy)
    modes = MEMORY_CHOICES[memory]
    policies = {mode: make_policy() for mode in modes}  # before the browser starts: a bad setting fails at once
    if memory_from is not None:
        if "warm" not in modes:
            raise InvalidInput("memory_from: the memory another policy records is for warm episodes; "
                               "memory 'off' runs none")
        modes = (RECORDING, *modes)
        policies[RECORDING] = policy_factory(memory_from)()
    report = BenchReport(
        tasks=chosen, modes=modes, episodes_per_task=episodes, policy=_policy_name(policy),
        seed=seed, max_turns=max_turns, memory_dir=None if memory_dir is None else str(memory_dir),
        shared_memory=shared_memory, memory_from=None if memory_from is None else _policy_name(memory_from),
    )
    plan = _Plan(report, policies, memory_dir=memory_dir, port=port, headless=headless,
                 on_progress=on_progress or (lambda progress: None),
                 agent_options={"replay": replay, "replay_at_start": replay_at_start})
    return _in_own_thread(plan.run)


def _policy_name(policy: str | Callable[[], Any]) -> str:
    return policy if isinstance(policy, str) else getattr(policy, "__name__", "custom")


def check_tasks(names: Sequence[str]) -> tuple[str, ...]:
    """The task names, in order and without repeats; ``all`` stands for every task."""
    known = available_tasks()
    if list(names) == ["all"]:
        return known
    unknown = [name for name in names if name not in known]
    if unknown:
        hints = [f"{name!r} (did you mean {', '.join(close_matches(name, known))}?)"
                 if close_matches(name, known) else repr(name) for name in unknown]
        raise InvalidInput(f"tasks: no MiniWoB++ task {', '.join(hints)}")
    if not names:
        raise InvalidInput("tasks: no task given")
    return tuple(dict.fromkeys(names))


def policy_factory(policy: str | Callable[[], Any]) -> Callable[[], Any]:
    if callable(policy):
        return policy
    if policy == "heuristic":
        from ..agent.heuristic import HeuristicPolicy

        return HeuristicPolicy
    if policy == "llm":
        from ..agent.llm import LLMPolicy

        return LLMPolicy
    raise InvalidInput(f"policy: {policy!r} is not one of {', '.join(POLICIES)}")


class _Plan:
    def __init__(self, report: BenchReport, policies: dict[str, Any], *, memory_dir: str | Path | None,
                 port: int, headless: bool, on_progress: Callable[[BenchProgress], None],
                 agent_options: dict[str, bool]) -> None:
        self.report = report
        self.agent_options = agent_options
        self.policies = policies
        self.memory_dir = memory_dir
        self.port = port
        self.headless = headless
        self.on_progress = on_progress
        self.records: list[EpisodeRecord] = []
        self.total = len(report.tasks) * len(report.modes) * report.episodes_per_task

    def run(self) -> BenchReport:
        started = time.perf_counter()
        port = self.port or recorded_port(self.memory_dir)
        with ExitStack() as stack:
            if self.memory_dir is None and RECORDING in self.report.modes:  # the recording must outlive its phase
                self.memory_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="webmem-bench-"))
            self._run_modes(port)
        return replace(self.report, records=tuple(self.records), duration_ms=(time.perf_counter() - started) * 1000)

    def _run_modes(self, port: int) -> None:
        from playwright.sync_api import sync_playwright

        from ..agent.browser import launch_chromium

        with serve_miniwob(port=port) as base_url, sync_playwright() as playwright:
            keep_port(self.memory_dir, base_url)
            browser = launch_chromium(playwright, headless=self.headless)
            try:
                for mode in self.report.modes:
                    if mode != "cold" and self.report.shared_memory:
                        with self._memory(None) as memory:
                            for task in self.report.tasks:
                                self._task(browser, base_url, mode, task, memory)
                        continue
                    for task in self.report.tasks:
                        if mode == "cold":
                            self._task(browser, base_url, mode, task, None)
                            continue
                        with self._memory(task) as memory:
                            self._task(browser, base_url, mode, task, memory)
            finally:
                browser.close()

    @contextmanager
    def _memory(self, task: str | None) -> Iterator[Any]:
        """The warm memory of ``task`` (``memory_dir/<task>``), or with ``task`` None the shared one
        (``memory_dir``); a fresh temporary directory when no ``memory_dir`` was given."""
        from ..memory import Memory

        if self.memory_dir is not None:
            directory = Path(self.memory_dir) if task is None else Path(self.memory_dir) / task
            with Memory.open(directory) as memory:
                yield memory
            return
        prefix = "webmem-bench-" if task is None else f"webmem-bench-{task}-"
        with tempfile.TemporaryDirectory(prefix=prefix) as directory, Memory.open(Path(directory)) as memory:
            yield memory

    def _task(self, browser: Any, base_url: str, mode: str, task: str, memory: Any) -> None:
        policy = self.policies[mode]
        context = browser.new_context()
        try:
            page = context.new_page()
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            task_page = TaskPage(page, base_url, task)
            task_page.load()
            for index in range(self.report.episodes_per_task):
                self.on_progress(BenchProgress(len(self.records), self.total, mode, task))
                record = self._episode(task_page, mode, index, memory, policy)
                self.records.append(record)
                self.on_progress(BenchProgress(len(self.records), self.total, mode, task, record))
        finally:
            context.close()

    def _episode(self, task_page: TaskPage, mode: str, index: int, memory: Any, policy: Any) -> EpisodeRecord:
        from ..agent import Agent

        base = self.report.seed + (RECORDING_SEED_OFFSET if mode == RECORDING else 0)
        seed = episode_seed(base, task_page.task, index)
        utterance = task_page.start(seed)
        options = self.agent_options if mode != RECORDING else {}
        agent = Agent(task_page.page, memory=memory, policy=policy, environment=MiniWobEnvironment(),
                      max_turns=self.report.max_turns, **options)
        began = time.perf_counter()
        timed_out = _timeouts(policy)
        result = agent.run(utterance, url=None)
        wall_ms = (time.perf_counter() - began) * 1000
        state = task_page.finish()
        called = list(getattr(result, "skill_calls", ()))
        outcome, step, why = settle_replay(*_agent_replay(result), success=state.success, task_reason=state.reason)
        return EpisodeRecord(
            task=task_page.task, episode=index, seed=seed, mode=mode, success=state.success,
            reward=state.reward, utterance=utterance, decisions=result.decisions, llm_calls=result.llm_calls,
            prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
            steps=result.steps, turns=result.turns, wall_ms=round(wall_ms, 1),
            agent_success=result.success, partial=state.partial, context_tokens=result.context_tokens,
            reason=result.reason or state.reason or "", run_id=result.run_id, replayed=outcome == "replayed",
            replay_fallback=outcome == "handed_over", replay_outcome=outcome, replay_step=step, replay_reason=why,
            replay_miss_reason=getattr(result, "replay_miss_reason", None), timeouts=_timeouts(policy) - timed_out,
            skill_calls=len(called), skill_calls_done=called.count("done"),
            skill_calls_handed_over=called.count("handed_over"),
        )


def recorded_port(memory_dir: str | Path | None) -> int:
    """The port the task server had when the memories in ``memory_dir`` were recorded (their origin
    names it, so a later run must serve the tasks there to find them); 0 when none was kept."""
    marker = Path(memory_dir) / PORT_FILE if memory_dir is not None else None
    if marker is None or not marker.is_file():
        return 0
    text = marker.read_text(encoding="utf-8").strip()
    return int(text) if text.isdigit() and 0 < int(text) < 65536 else 0


def keep_port(memory_dir: str | Path | None, base_url: str) -> None:
    """Remember in ``memory_dir`` the port the tasks are served on (see :func:`recorded_port`)."""
    if memory_dir is None:
        return
    port = urlsplit(base_url).port
    Path(memory_dir).mkdir(parents=True, exist_ok=True)
    (Path(memory_dir) / PORT_FILE).write_text(f"{port}\n", encoding="utf-8")


def _timeouts(policy: Any) -> int:
    """The requests of ``policy`` that timed out so far (an LLM policy counts them in ``stats.extra``)."""
    stats = getattr(policy, "stats", None)
    return int((getattr(stats, "extra", None) or {}).get("timeouts", 0))


def _agent_replay(result: Any) -> tuple[str | None, int | None, str | None]:
    """The agent's ``(replay_outcome, replay_step, replay_reason)``; from its older fields (a replay
    started when it names a trajectory) for an agent that does not set ``replay_outcome``."""
    outcome = getattr(result, "replay_outcome", None)
    if outcome is not None:
        reason = getattr(result, "replay_reason", None)
        if reason is None and outcome == "handed_over":
            reason = result.handover_reason
        return outcome, getattr(result, "replay_step", None), reason
    if getattr(result, "replay_trajectory_id", None) is None and not (result.replayed or result.replay_fallback):
        return None, None, None
    if result.replay_fallback:
        return "handed_over", None, result.handover_reason
    return ("replayed" if result.replayed else "replay_failed"), None, result.reason


def _in_own_thread(work: Callable[[], BenchReport]) -> BenchReport:
    """Run ``work`` in a new thread: Playwright's sync API refuses to start inside another one's loop,
    and the caller's thread may already be driving a browser."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["report"] = work()
        except BaseException as exc:  # handed to the caller's thread, re-raised there
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="webmem-bench", daemon=True)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["report"]

"""``webmem run``: the reference browser agent on a live page, or on a suite of cases."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..core.errors import InvalidInput
from ..core.locations import resolve_directory
from .output import console, emit_json, json_option, table

if TYPE_CHECKING:
    from ..memory import Memory
    from ..agent import AgentResult, Policy
    from ..agent.suite import Case, CaseResult
    from . import Settings


@click.command("run")
@click.option("--goal", help="What the agent should achieve.")
@click.option("--url", help="The page to start on.")
@click.option("--cases", "cases_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Run a suite: a JSON list of {goal, url, name?, success?: {text?, url_contains?}, max_turns?}.")
@click.option("--memory-isolation", type=click.Choice(["per-run", "shared"]), default="shared", show_default=True,
              help="With --cases: one memory for the suite (shared) or a fresh one per case (per-run).")
@click.option("--session-id", help="Session to record the run in.")
@click.option("--resume-run", "resume_run", metavar="RUN_ID", help="Continue a run: its session, from its final URL.")
@click.option("--fork-run", "fork_run", metavar="RUN_ID", help="Branch off a run in a new session (needs --goal).")
@click.option("--no-memory", is_flag=True, help="Run without memory: no context, no replay, nothing recorded.")
@click.option("--memory-dir", "local_memory_dir", type=click.Path(file_okay=False, path_type=str),
              help="Memory directory (overrides the global --memory-dir).")
@click.option("--trace-scoring", is_flag=True, help="Rank reference trajectories by recency, speed and verification too.")
@click.option("--trace-ttl-days", type=click.FloatRange(min=0, min_open=True), default=30, show_default=True,
              help="Ignore trajectories older than this.")
@click.option("--policy", "policy_name", type=click.Choice(["heuristic", "llm"]), default="heuristic",
              show_default=True, help="Who decides: the rule-based baseline, or an LLM (WEBMEM_LLM_* settings).")
@click.option("--model", help="With --policy llm: the model (default: $WEBMEM_LLM_MODEL).")
@click.option("--no-replay", is_flag=True, help="Never replay a remembered run; always ask the policy.")
@click.option("--no-replay-at-start", is_flag=True,
              help="Do not begin by replaying a remembered run: the policy decides from the first turn (an LLM "
                   "may still call the site's skills).")
@click.option("--max-turns", type=click.IntRange(min=1, max=500), default=20, show_default=True,
              help="Turn budget per run.")
@click.option("--headed", is_flag=True, help="Show the browser window (needs a display).")
@json_option
@click.pass_obj
def run_command(settings: Settings, goal: str | None, url: str | None, cases_file: Path | None,
                memory_isolation: str, session_id: str | None, resume_run: str | None, fork_run: str | None,
                no_memory: bool, local_memory_dir: str | None, trace_scoring: bool, trace_ttl_days: float,
                policy_name: str, model: str | None, no_replay: bool, no_replay_at_start: bool, max_turns: int,
                headed: bool, json_: bool) -> None:
    """Run the browser agent on a live page (or a suite of cases), with webmem as its memory."""
    _check_options(goal, url, cases_file, resume_run, fork_run, no_memory)
    if headed and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise click.UsageError("--headed needs a display (neither DISPLAY nor WAYLAND_DISPLAY is set)")
    memory_dir = local_memory_dir or settings.memory_dir
    # An agent run is a library user's run: stale lessons are pruned on open, as Memory.open does by default.
    options = {"enabled": not no_memory, "trace_scoring": trace_scoring, "trace_ttl_days": trace_ttl_days,
               "prune_lessons": True}
    policy = _policy(policy_name, model)
    replay = {"replay": not no_replay, "replay_at_start": not no_replay_at_start}
    with _browser_page(headed) as page:
        if cases_file is not None:
            _run_suite(page, policy, cases_file, settings, memory_dir, memory_isolation, options,
                       max_turns=max_turns, replay=replay, json_=json_)
            return
        with settings.memory(create=True, memory_dir=memory_dir, **options) as mem:
            result = _run_one(page, policy, mem, goal, url, session_id, resume_run, fork_run,
                              max_turns=max_turns, replay=replay)
    _show_result(result, json_)
    if not result.success:
        raise SystemExit(1)


def _check_options(goal: str | None, url: str | None, cases_file: Path | None, resume_run: str | None,
                   fork_run: str | None, no_memory: bool) -> None:
    if cases_file is not None:
        if goal or url or resume_run or fork_run:
            raise click.UsageError("--cases runs the suite's own goals: drop --goal, --url, --resume-run, --fork-run")
        return
    if resume_run and fork_run:
        raise click.UsageError("give --resume-run or --fork-run, not both")
    if (resume_run or fork_run) and no_memory:
        raise click.UsageError("--resume-run and --fork-run need the memory: drop --no-memory")
    if fork_run and not goal:
        raise click.UsageError("--fork-run needs --goal (the new branch's goal)")
    if resume_run and url:
        raise click.UsageError("--resume-run starts at the run's final URL: drop --url")
    if not resume_run and not fork_run and not (goal and url):
        raise click.UsageError("give --goal and --url (or --cases, --resume-run, --fork-run)")


def _policy(name: str, model: str | None) -> Policy:
    if name == "llm":
        from ..agent.llm import LLMPolicy

        return LLMPolicy(model=model)
    from ..agent.heuristic import HeuristicPolicy

    return HeuristicPolicy()


@contextmanager
def _browser_page(headed: bool) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise click.ClickException("The agent needs: pip install 'webmem[agent]' (and a Chromium)") from None
    from ..agent.browser import launch_chromium

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright, headless=not headed)
        try:
            page = browser.new_page()
            page.set_default_timeout(15_000)
            yield page
        finally:
            browser.close()


def _run_one(page: Any, policy: Policy, mem: Memory, goal: str | None, url: str | None, session_id: str | None,
             resume_run: str | None, fork_run: str | None, *, max_turns: int,
             replay: dict[str, bool]) -> AgentResult:
    from ..agent import Agent

    agent = Agent(page, memory=mem, policy=policy, max_turns=max_turns, **replay)
    if resume_run:
        run = mem.resume_run(resume_run, goal=goal)
        return agent.run(run.goal, url=run.manifest.start_url, run=run)
    if fork_run:
        run = mem.fork_run(fork_run, goal=goal or "")
        return agent.run(run.goal, url=run.manifest.start_url, run=run)
    assert goal is not None and url is not None
    return agent.run(goal, url=url, session_id=session_id)


def _run_suite(page: Any, policy: Policy, cases_file: Path, settings: Settings, memory_dir: str | None,
               isolation: str, options: dict[str, Any], *, max_turns: int, replay: dict[str, bool],
               json_: bool) -> None:
    from ..agent import Agent
    from ..agent.suite import SuiteLog, load_cases, run_suite, suite_name

    cases = load_cases(cases_file)
    home = resolve_directory(memory_dir)
    log = SuiteLog(home, cases_file.name)
    screen = console()

    with ExitStack() as stack:
        shared = stack.enter_context(settings.memory(create=True, memory_dir=memory_dir, **options)) \
            if isolation == "shared" else None

        def run_case(case: Case, hints: str) -> AgentResult:
            with ExitStack() as per_case:
                mem = shared
                if mem is None:
                    fresh = per_case.enter_context(tempfile.TemporaryDirectory(prefix="webmem-case-"))
                    mem = per_case.enter_context(settings.memory(create=True, memory_dir=fresh, **options))
                agent = Agent(page, memory=mem, policy=policy, environment=case.success,
                              max_turns=case.max_turns or max_turns, **replay)
                return agent.run(case.goal, url=case.url, hints=hints)

        def on_case(number: int, total: int, result: CaseResult) -> None:
            mark = "pass" if result.success else "FAIL"
            click.echo(f"[{number}/{total}] {mark} {result.name}: {result.turns} turns, "
                       f"{result.duration_ms / 1000:.1f}s - {result.reason}", err=True)

        try:
            summary = run_suite(cases, run_case, suite=suite_name(cases_file), isolation=isolation,
                                max_turns=max_turns, log=log, on_case=on_case)
        except InvalidInput as exc:
            raise click.ClickException(str(exc)) from exc
    data = summary.to_dict()
    if json_:
        emit_json(data)
        return
    table(("case", "result", "turns", "seconds", "memory hits", "reason"),
          ((r.name, "pass" if r.success else "FAIL", r.turns, f"{r.duration_ms / 1000:.1f}", r.memory_hits, r.reason)
           for r in summary.results), title=f"Suite {summary.suite}: {data['passed']}/{data['cases']} passed")
    screen.print(f"Pass rate {data['pass_rate']:.0%}, mean turns {data['mean_turns']}, memory hits "
                 f"{data['memory_hits']}. Summary and hints in {log.directory}", markup=False)
    for hint in summary.hints:
        screen.print(f"hint: {hint}", markup=False)


def _show_result(result: AgentResult, json_: bool) -> None:
    if json_:
        emit_json(result.to_dict())
        return
    screen = console()
    verdict = "succeeded" if result.success else "failed"
    screen.print(f"Run {result.run_id or '(no memory)'} {verdict} in {result.turns} turns "
                 f"({result.duration_ms / 1000:.1f}s): {result.reason}", markup=False)
    if result.replay_trajectory_id:
        how = "replayed alone" if result.replayed else f"replay handed over ({result.handover_reason})"
        screen.print(f"Replay of {result.replay_trajectory_id}: {how}", markup=False)
    elif result.replay_miss_reason:
        screen.print(f"No replay: {result.replay_miss_reason}", markup=False)
    if result.answer:
        screen.print(f"Answer: {result.answer}", markup=False)
    if not result.history:
        return
    table(("#", "action", "ok", "verified", "error"),
          ((n, o.action.describe(), "yes" if o.ok else "no", {True: "yes", False: "no"}.get(o.verified, "-"),
            (o.error or "")[:80]) for n, o in enumerate(result.history, start=1)))


COMMANDS = [run_command]

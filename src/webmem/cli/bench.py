"""``webmem bench``: measure webmem's agent on public benchmarks, without memory and with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..core.errors import InvalidInput
from .output import COUNT, console, emit_json, refuse_to_overwrite, table


@click.group("bench", context_settings={"help_option_names": ["-h", "--help"]})
def bench() -> None:
    """Benchmark the browser agent, cold (no memory) against warm (learning memory)."""


@bench.command("miniwob")
@click.option("--tasks", "task_list", metavar="NAMES",
              help="Comma-separated MiniWoB++ tasks, or 'all' (default: a set of simple tasks).")
@click.option("--episodes", type=COUNT, default=10, show_default=True, help="Episodes per task.")
@click.option("--policy", type=click.Choice(["heuristic", "llm"]), default="heuristic", show_default=True,
              help="Who decides each action (llm: configured by WEBMEM_LLM_BASE_URL, _MODEL, _API_KEY).")
@click.option("--memory", type=click.Choice(["off", "on", "both"]), default="both", show_default=True,
              help="off: cold only; on: warm only; both: cold, then warm on the same seeds.")
@click.option("--memory-from", type=click.Choice(["heuristic", "llm"]),
              help="First record the warm memory with this policy, on other instances of the tasks (seed + 1000); "
                   "then --policy runs cold and on that memory (another agent's memory, measured in one command).")
@click.option("--memory-dir", "bench_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the warm runs' memories here, one sub-directory per task (default: temporary "
                   "directories, removed after); an earlier run's directory is used again, whatever its policy.")
@click.option("--shared-memory", is_flag=True,
              help="Warm: one memory shared by every task (kept in --memory-dir itself), instead of one per task.")
@click.option("--seed", type=int, default=0, show_default=True, help="Base seed of the episodes.")
@click.option("--max-turns", type=COUNT, default=12, show_default=True, help="Turns per episode.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=0,
              help="Port of the local task server (default: the one a reused --memory-dir was recorded on, "
                   "else any free one).")
@click.option("--headed", is_flag=True, help="Show the browser window.")
@click.option("--json", "json_", is_flag=True, help="Print the report as JSON (only data on stdout).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a self-contained HTML report to this file.")
@click.option("--force", is_flag=True, help="Overwrite the -o file when it exists.")
def miniwob(task_list: str | None, episodes: int, policy: str, memory: str, memory_from: str | None,
            bench_dir: Path | None, shared_memory: bool, seed: int, max_turns: int, port: int, headed: bool,
            json_: bool, output: Path | None, force: bool) -> None:
    """Run the agent on MiniWoB++ tasks in headless Chromium and compare cold with warm."""
    refuse_to_overwrite(output, force)
    from ..bench import (
        DEFAULT_TASKS,
        check_tasks,
        comparison,
        memory_label,
        render_html,
        replay_notes,
        run_benchmark,
    )

    names = DEFAULT_TASKS if task_list is None else [name.strip() for name in task_list.split(",") if name.strip()]
    try:
        tasks = check_tasks(names)
        with _ProgressBar() as on_progress:
            report = run_benchmark(tasks, episodes=episodes, policy=policy, memory=memory, memory_dir=bench_dir,
                                   shared_memory=shared_memory, seed=seed, max_turns=max_turns, port=port,
                                   headless=not headed, on_progress=on_progress, memory_from=memory_from)
    except ImportError as exc:
        raise click.ClickException(str(exc)) from None
    except _playwright_error() as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise click.ClickException(f"the browser failed during the benchmark: {first_line}") from None
    except InvalidInput as exc:
        for field, option in (("tasks:", "'--tasks'"), ("memory_from:", "'--memory-from'")):
            if str(exc).startswith(field):
                raise click.BadParameter(str(exc).removeprefix(field).strip(), param_hint=option) from None
        raise
    if output is not None:
        output.write_text(render_html(report), encoding="utf-8")
    if json_:
        emit_json(report.to_dict())
        return
    columns, rows = comparison(report)
    table(columns, rows, title=f"MiniWoB++, {report.policy} policy, {report.episodes_per_task} episodes per task, "
                               f"{memory_label(report)}", no_wrap=("task",))
    screen = console()
    for note in replay_notes(report):
        screen.print(note, markup=False)
    screen.print(f"{len(report.records)} episodes in {report.duration_ms / 1000:.1f}s", markup=False)
    if report.memory_dir and "warm" in report.modes:
        where = report.memory_dir if report.shared_memory else f"{Path(report.memory_dir) / '<task>'}"
        screen.print(f"Warm memory kept in {where}", markup=False)
    if output is not None:
        screen.print(f"HTML report written to {output}", markup=False)


def _playwright_error() -> type[Exception]:
    try:
        from playwright.sync_api import Error as PlaywrightError
    except ImportError:
        return ImportError  # already handled above: no browser error can come without Playwright
    return PlaywrightError


class _ProgressBar:
    """A bar on stderr that counts episodes; the benchmark calls it from its own thread."""

    def __init__(self) -> None:
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=Console(stderr=True), transient=True)
        self.task: Any = None

    def __enter__(self) -> Any:
        return self.update

    def update(self, progress: Any) -> None:
        if self.task is None:
            self.bar.start()
            self.task = self.bar.add_task("", total=progress.total)
        self.bar.update(self.task, completed=progress.done, description=f"{progress.mode} {progress.task}")

    def __exit__(self, *exc_info: object) -> None:
        if self.task is not None:
            self.bar.stop()


COMMANDS = [bench]

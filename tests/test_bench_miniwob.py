"""The MiniWoB++ benchmark: its task server, seeded episodes in real Chromium, the report and the command."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from webmem.bench import (
    BenchReport,
    EpisodeRecord,
    MiniWobEnvironment,
    TaskPage,
    comparison,
    decision_curve,
    render_html,
    serve_miniwob,
    summarize,
)
from webmem.cli import cli


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serve_miniwob() as url:
        yield url


@pytest.fixture
def click_button(page: Any, base_url: str) -> TaskPage:
    task = TaskPage(page, base_url, "click-button")
    task.load()
    return task


def test_server_serves_a_task_then_stops() -> None:
    with serve_miniwob() as url:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}miniwob/click-button.html", timeout=5) as response:
            assert response.status == 200 and b"../core/core.js" in response.read()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}miniwob/click-button.html", timeout=2)


def test_task_pages_are_served_as_utf_8(base_url: str, page: Any) -> None:
    with urllib.request.urlopen(f"{base_url}miniwob/unicode-test.html", timeout=5) as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    task = TaskPage(page, base_url, "unicode-test")
    task.load()
    assert "Ã" not in page.inner_text("body")  # UTF-8 read as Latin-1 turns "Ö" into "Ã–"


def test_same_seed_same_instruction(click_button: TaskPage) -> None:
    first = click_button.start("7-0")
    assert first.startswith("Click on the")
    assert click_button.start("7-0") == first
    others = {click_button.start(f"7-{index}") for index in range(1, 6)}
    assert others - {first}


def test_outcome_follows_the_task_verdict(click_button: TaskPage) -> None:
    environment = MiniWobEnvironment()
    page = click_button.page
    for seed in ("1", "2"):
        instruction = click_button.start(seed)
        assert environment.outcome(page) is None
        wanted = re.search(r'"(.+)"', instruction).group(1)  # type: ignore[union-attr]
        page.locator("#area button", has_text=re.compile(f"^{re.escape(wanted)}$")).first.click()
        outcome = environment.outcome(page)
        assert outcome is not None and outcome.success and outcome.reward == 1.0
        assert click_button.finish().success

    for seed in range(3, 30):  # some problems have a single button: find one with a wrong one
        instruction = click_button.start(str(seed))
        wanted = re.search(r'"(.+)"', instruction).group(1)  # type: ignore[union-attr]
        wrong = page.locator("#area button").filter(has_not_text=re.compile(f"^{re.escape(wanted)}$"))
        if wrong.count():
            break
    wrong.first.click()
    outcome = environment.outcome(page)
    assert outcome is not None and not outcome.success and outcome.reward == -1.0


def test_an_unfinished_episode_ends_as_a_failure(click_button: TaskPage) -> None:
    click_button.start("4")
    state = click_button.finish()
    assert state.done and not state.success and state.reason == "agent stopped"
    assert click_button.state() is not None and click_button.state().done  # type: ignore[union-attr]
    assert click_button.start("5")  # the next episode starts from the cover screen


def record(task: str, episode: int, mode: str, *, success: bool, decisions: int, **more: Any) -> EpisodeRecord:
    return EpisodeRecord(task=task, episode=episode, seed=f"0-{episode}", mode=mode, success=success,
                         reward=1.0 if success else -1.0, decisions=decisions, **more)


HANDMADE = (
    record("click-button", 0, "cold", success=True, decisions=2, llm_calls=2, prompt_tokens=100),
    record("click-button", 1, "cold", success=False, decisions=4, llm_calls=4),
    record("enter-text", 0, "cold", success=True, decisions=3),
    record("enter-text", 1, "cold", success=True, decisions=5),
    record("click-button", 0, "warm", success=True, decisions=2, context_tokens=0),
    record("click-button", 1, "warm", success=True, decisions=0, replayed=True, context_tokens=120),
    record("enter-text", 0, "warm", success=False, decisions=3, context_tokens=40),
    record("enter-text", 1, "warm", success=True, decisions=1, replay_fallback=True, context_tokens=200),
)


def handmade_report() -> BenchReport:
    return BenchReport(tasks=("click-button", "enter-text"), modes=("cold", "warm"), episodes_per_task=2,
                       policy="heuristic", seed=0, max_turns=12, records=HANDMADE)


def test_aggregates_of_handmade_records() -> None:
    report = handmade_report()
    cold, warm = report.summary("cold"), report.summary("warm")
    assert cold is not None and warm is not None
    assert (cold.success_rate, warm.success_rate) == (0.75, 0.75)
    assert cold.decisions == 3.5 and warm.decisions == 1.5
    assert cold.llm_calls == 1.5 and cold.tokens == 25
    assert (warm.replayed, warm.replay_rate, warm.replay_fallbacks) == (1, 0.25, 1)
    assert warm.context_tokens == 90
    assert report.summary("warm", "click-button").success_rate == 1.0  # type: ignore[union-attr]
    assert report.summary("cold", "nosuch") is None and summarize([]) is None
    assert decision_curve(HANDMADE, "cold") == [2.5, 4.5]
    assert decision_curve(HANDMADE, "warm") == [2.5, 0.5]


def test_report_as_data_and_table() -> None:
    data = json.loads(json.dumps(handmade_report().to_dict()))
    assert data["settings"]["episodes_per_task"] == 2
    assert data["cold"]["overall"]["success_rate"] == 0.75
    assert data["warm"]["tasks"]["enter-text"]["replay_fallbacks"] == 1
    assert len(data["warm"]["episodes"]) == 4 and data["cold"]["episodes"][0]["tokens"] == 100
    columns, rows = comparison(handmade_report())
    assert columns[0] == "task" and "warm replayed" in columns
    assert [row[0] for row in rows] == ["click-button", "enter-text", "overall"]
    assert rows[-1][1] == "75% (3/4)"


def test_html_report_is_self_contained_and_escaped() -> None:
    report = handmade_report()
    sneaky = EpisodeRecord(task="<script>alert(1)</script>", episode=0, seed="0-0", mode="cold",
                           success=True, reward=1.0)
    report = BenchReport(tasks=(*report.tasks, sneaky.task), modes=report.modes, episodes_per_task=2,
                         policy="heuristic", seed=0, max_turns=12, records=(*HANDMADE, sneaky))
    page = render_html(report)
    assert page.count("<svg") == 2 and "<polyline" in page and "<rect" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)
    assert "<script" not in page and "&lt;script&gt;" in page


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["bench", "miniwob", *args], catch_exceptions=False)


def test_unknown_task_is_a_usage_error() -> None:
    result = invoke("--tasks", "nosuch-task")
    assert result.exit_code == 2
    assert "nosuch-task" in result.stderr and "Traceback" not in result.stderr


def test_close_names_are_suggested() -> None:
    result = invoke("--tasks", "click-buton")
    assert result.exit_code == 2 and "click-button" in result.stderr


def test_benchmark_end_to_end(tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    result = invoke("--tasks", "click-button,enter-text", "--episodes", "3", "--json", "-o", str(html))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["settings"]["tasks"] == ["click-button", "enter-text"]
    for mode in ("cold", "warm"):
        section = data[mode]
        assert set(section["tasks"]) == {"click-button", "enter-text"}
        assert len(section["episodes"]) == 6 and len(section["decision_curve"]) == 3
        for field in ("success_rate", "decisions", "llm_calls", "steps", "wall_ms", "replay_rate",
                      "replay_fallbacks", "context_tokens"):
            assert field in section["overall"]
        episode = section["episodes"][0]
        for field in ("task", "episode", "seed", "mode", "success", "reward", "decisions", "llm_calls", "tokens",
                      "steps", "wall_ms", "replayed", "replay_fallback", "context_tokens", "reason"):
            assert field in episode
    cold_seeds = [(e["task"], e["seed"], e["utterance"]) for e in data["cold"]["episodes"]]
    assert cold_seeds == [(e["task"], e["seed"], e["utterance"]) for e in data["warm"]["episodes"]]
    assert "<svg" in html.read_text(encoding="utf-8")

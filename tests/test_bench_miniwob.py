"""The MiniWoB++ benchmark: its task server, seeded episodes in real Chromium, the report and the command."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

import webmem.bench
from webmem import InvalidInput, Memory
from webmem.bench import (
    BenchReport,
    EpisodeRecord,
    EpisodeState,
    MiniWobEnvironment,
    TaskPage,
    comparison,
    decision_curve,
    episode_seed,
    reason_group,
    render_html,
    replay_notes,
    run_benchmark,
    serve_miniwob,
    summarize,
)
from webmem.bench.results import repeated_instances, settle_replay, top_reasons
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


def record(task: str, episode: int, mode: str, *, success: bool, decisions: int = 0, **more: Any) -> EpisodeRecord:
    """A hand-made record; ``replay_outcome`` sets ``replayed`` and ``replay_fallback`` as the runner does."""
    outcome = more.get("replay_outcome")
    more.setdefault("reward", 1.0 if success else -1.0)
    return EpisodeRecord(task=task, episode=episode, seed=episode_seed(0, task, episode), mode=mode,
                         success=success, decisions=decisions, replayed=outcome == "replayed",
                         replay_fallback=outcome == "handed_over", **more)


HANDMADE = (
    record("click-button", 0, "cold", success=True, decisions=2, llm_calls=2, prompt_tokens=100),
    record("click-button", 1, "cold", success=False, decisions=4, llm_calls=4),
    record("enter-text", 0, "cold", success=True, decisions=3),
    record("enter-text", 1, "cold", success=True, decisions=5),
    record("click-button", 0, "warm", success=True, decisions=2, context_tokens=0),
    record("click-button", 1, "warm", success=True, decisions=0, replay_outcome="replayed", replay_step=1,
           context_tokens=120),
    record("enter-text", 0, "warm", success=False, decisions=3, context_tokens=40),
    record("enter-text", 1, "warm", success=True, decisions=1, replay_outcome="handed_over", replay_step=2,
           replay_reason='step 2: textbox "Name" is not on the page', context_tokens=200),
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
    assert data["settings"]["episodes_per_task"] == 2 and data["settings"]["shared_memory"] is False
    assert data["cold"]["overall"]["success_rate"] == 0.75
    assert data["warm"]["tasks"]["enter-text"]["replay_fallbacks"] == 1
    assert data["warm"]["tasks"]["enter-text"]["handed_over"] == 1
    assert data["warm"]["overall"]["handover_reasons"] == [['textbox "…" is not on the page', 1]]
    for name in ("partials", "handed_over", "replay_failed", "replay_candidates", "replay_rate_of_candidates",
                 "repeated", "replay_rate_of_repeated"):
        assert name in data["warm"]["overall"]
    assert len(data["warm"]["episodes"]) == 4 and data["cold"]["episodes"][0]["tokens"] == 100
    handed = data["warm"]["episodes"][3]
    assert (handed["replay_outcome"], handed["replay_step"], handed["partial"]) == ("handed_over", 2, False)
    assert handed["seed"] == "0-enter-text-1" and handed["replay_reason"].startswith("step 2:")
    columns, rows = comparison(handmade_report())
    assert columns[0] == "task" and "warm replayed" in columns
    assert [row[0] for row in rows] == ["click-button", "enter-text", "overall"]
    assert rows[-1][1] == "75% (3/4)"
    overall = dict(zip(columns, rows[-1]))
    assert overall["warm replayed"] == "25% (1/4)" and overall["warm handed over"] == "1"
    assert overall["warm replay failed"] == "0" and overall["cold partial"] == overall["warm partial"] == "0"


def test_a_report_is_rebuilt_from_its_json() -> None:
    report = replace(handmade_report(), records=(*HANDMADE, *OUTCOMES), shared_memory=True, extra={"note": "x"})
    data = json.loads(json.dumps(report.to_dict()))
    rebuilt = BenchReport.from_dict(data)
    assert rebuilt.records == report.records and rebuilt.shared_memory and rebuilt.extra == {"note": "x"}
    assert rebuilt.summary("warm") == report.summary("warm")
    assert rebuilt.to_dict() == data


def test_success_needs_the_full_reward() -> None:
    full, half, wrong = (EpisodeState(done=True, reward=reward) for reward in (1.0, 0.5, -1.0))
    assert full.success and not full.partial
    assert half.partial and not half.success  # partial credit is not a success
    assert not wrong.success and not wrong.partial
    assert not EpisodeState(done=True, reward=0.0).partial
    assert not EpisodeState(done=False, reward=1.0).success and not EpisodeState(done=False, reward=0.5).partial


class _FakePage:
    def __init__(self, done: bool, reward: float, reason: str | None = None) -> None:
        self.state = [done, reward, reason]

    def evaluate(self, script: str) -> list[Any]:
        return self.state


def test_the_agent_is_not_told_partial_credit_is_success() -> None:
    outcome = MiniWobEnvironment().outcome(_FakePage(True, 0.5, "half right"))
    assert outcome is not None and not outcome.success and outcome.reward == 0.5
    assert MiniWobEnvironment().outcome(_FakePage(True, 1.0)).success  # type: ignore[union-attr]


def test_partial_credit_is_counted_apart() -> None:
    records = (record("t", 0, "cold", success=True), record("t", 1, "cold", success=False, reward=0.5, partial=True),
               record("t", 2, "cold", success=False))
    found = summarize(records)
    assert found is not None and (found.successes, found.partials) == (1, 1) and found.success_rate == 1 / 3
    report = BenchReport(tasks=("t",), modes=("cold",), episodes_per_task=3, policy="heuristic", seed=0,
                         max_turns=12, records=records)
    columns, rows = comparison(report)
    assert dict(zip(columns, rows[0]))["cold partial"] == "1" and rows[0][1] == "33% (1/3)"
    assert "warm replayed" not in columns and replay_notes(report) == []


OUTCOMES = (
    record("a", 0, "warm", success=True, decisions=3, utterance="Click OK"),
    record("a", 1, "warm", success=True, utterance="Click OK", replay_outcome="replayed", replay_step=2),
    record("a", 2, "warm", success=True, utterance="Click Cancel", replay_outcome="replayed", replay_step=2),
    record("a", 3, "warm", success=True, decisions=2, utterance="Click OK", replay_outcome="handed_over",
           replay_step=2, replay_reason='step 2: button "OK" is not on the page'),
    record("a", 4, "warm", success=False, utterance="Click Cancel", replay_outcome="replay_failed", replay_step=3,
           replay_reason="the task did not give its full reward (reward -1)"),
    record("b", 0, "warm", success=False, decisions=1, utterance="Click OK", replay_outcome="handed_over",
           replay_step=1, replay_reason='step 1: button "Cancel" is not on the page'),
    record("b", 1, "warm", success=True, decisions=1, utterance="Type x", replay_outcome="handed_over",
           replay_step=4, replay_reason="step 4 failed: Timeout 5000ms exceeded.\nCall log: ..."),
)


def test_each_replay_outcome_is_counted() -> None:
    found = summarize(OUTCOMES)
    assert found is not None
    assert (found.replayed, found.handed_over, found.replay_failed) == (2, 3, 1)
    assert found.replay_fallbacks == found.handed_over
    assert found.replay_candidates == 6  # every episode but the first, which had no replay
    assert found.replay_rate_of_candidates == 2 / 6 and found.replay_rate == 2 / 7
    task_b = summarize(record for record in OUTCOMES if record.task == "b")
    assert task_b is not None and (task_b.replayed, task_b.handed_over, task_b.replay_rate_of_candidates) == (0, 2, 0)
    assert summarize(HANDMADE[:4]).replay_rate_of_candidates == 0  # type: ignore[union-attr]  (no candidate)


def test_repeated_instances_are_counted_per_task_and_mode() -> None:
    found = summarize(OUTCOMES)
    assert found is not None
    # a1 and a3 repeat a0's "Click OK"; a4 repeats a2's "Click Cancel"; b0 is task b's first "Click OK"
    assert (found.repeated, found.repeated_replayed) == (3, 1) and found.replay_rate_of_repeated == 1 / 3
    assert repeated_instances(OUTCOMES) == [False, True, False, True, True, False, False]
    backwards = list(reversed(OUTCOMES))  # "earlier" is the episode index, not the order of the list
    assert repeated_instances(backwards) == list(reversed(repeated_instances(OUTCOMES)))
    other_mode = replace(OUTCOMES[0], mode="cold", episode=0)
    assert repeated_instances([other_mode, replace(OUTCOMES[1], episode=1)]) == [False, False]
    unsaid = [record("c", 0, "warm", success=True), record("c", 1, "warm", success=True)]
    assert repeated_instances(unsaid) == [False, False]  # no instruction: never a repeat
    assert summarize(unsaid).replay_rate_of_repeated == 0  # type: ignore[union-attr]


def test_hand_over_reasons_group_by_cause() -> None:
    assert reason_group('step 3: button "Next" is not on the page') == 'button "…" is not on the page'
    assert reason_group("step 12: the page has a link named 'Next', not a button") == \
        reason_group("step 1: the page has a link named 'Back', not a button")
    assert reason_group("step 2 failed: Timeout 5000ms exceeded.\nCall log: x") == "failed: Timeout 5000ms exceeded."
    assert reason_group("step 4 (fill) cannot be replayed safely") == "(fill) cannot be replayed safely"
    assert reason_group("step 1 failed: can't click") == "failed: can't click"  # an apostrophe is no quote
    over = "replayed all N steps, but the task is not over"
    assert reason_group("replayed all 3 steps, but the task is not over") == over
    assert reason_group("replayed all 12 steps, but the task is not over") == over
    assert reason_group("step 2: 3 elements are button \"OK\" and the earlier run did not say which one") == \
        'N elements are button "…" and the earlier run did not say which one'
    assert reason_group(None) == reason_group("") == "(no reason given)"
    assert top_reasons(OUTCOMES) == (('button "…" is not on the page', 2), ("failed: Timeout 5000ms exceeded.", 1))
    assert top_reasons(OUTCOMES, limit=1) == (('button "…" is not on the page', 2),)
    assert summarize(OUTCOMES).handover_reasons == top_reasons(OUTCOMES)  # type: ignore[union-attr]


def test_the_task_settles_a_replay_that_did_not_hand_over() -> None:
    assert settle_replay(None, None, None, success=True) == (None, None, None)
    assert settle_replay("handed_over", 2, "why", success=False) == ("handed_over", 2, "why")
    assert settle_replay("replayed", 3, "done", success=True) == ("replayed", 3, "done")
    assert settle_replay("replay_failed", 2, "lost", success=False) == ("replay_failed", 2, "lost")
    outcome, step, why = settle_replay("replayed", 3, "done", success=False, task_reason="reward 0.5")
    assert (outcome, step) == ("replay_failed", 3) and "reward 0.5" in (why or "")
    assert settle_replay("replay_failed", 2, "lost", success=True)[0] == "replayed"


def test_the_runner_reads_the_agent_replay_fields() -> None:
    from webmem.bench.runner import _agent_replay

    def result(**fields: Any) -> SimpleNamespace:
        base = dict(replayed=False, replay_fallback=False, replay_trajectory_id=None, handover_reason=None,
                    reason="done", replay_outcome=None, replay_step=None, replay_reason=None)
        return SimpleNamespace(**{**base, **fields})

    assert _agent_replay(result()) == (None, None, None)
    assert _agent_replay(result(replay_outcome="handed_over", replay_step=2, replay_reason="r")) == \
        ("handed_over", 2, "r")
    assert _agent_replay(result(replay_outcome="handed_over", replay_step=2, handover_reason="h"))[2] == "h"
    # an agent that sets only the older fields
    assert _agent_replay(result(replay_trajectory_id="t", replay_fallback=True, handover_reason="h")) == \
        ("handed_over", None, "h")
    assert _agent_replay(result(replay_trajectory_id="t", replayed=True))[0] == "replayed"
    assert _agent_replay(result(replay_trajectory_id="t", reason="lost"))[0::2] == ("replay_failed", "lost")


def test_seeds_differ_per_task_and_episode() -> None:
    tasks = ("click-button", "click-test", "enter-text")
    seeds = [episode_seed(0, task, index) for task in tasks for index in range(5)]
    assert len(set(seeds)) == len(seeds)
    assert episode_seed(0, "click-test", 2) == episode_seed(0, "click-test", 2)  # cold and warm ask the same
    assert episode_seed(1, "click-test", 2) != episode_seed(0, "click-test", 2)


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


def test_the_command_prints_the_replay_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: dict[str, Any] = {}

    def fake_benchmark(tasks: Any, **options: Any) -> BenchReport:
        asked.update(options)
        return replace(handmade_report(), shared_memory=options["shared_memory"])

    monkeypatch.setattr(webmem.bench, "run_benchmark", fake_benchmark)
    result = invoke("--tasks", "click-button,enter-text", "--episodes", "2")
    assert result.exit_code == 0, result.stderr
    assert asked["shared_memory"] is False
    text = " ".join(result.stdout.split())
    assert "one memory per task" in text
    assert "Replay solved 50% (1/2) of the warm episodes in which a replay started" in text
    assert "Top hand-over reasons: 1× textbox \"…\" is not on the page." in text
    result = invoke("--tasks", "click-button,enter-text", "--episodes", "2", "--shared-memory")
    assert asked["shared_memory"] is True and "one memory shared by every task" in " ".join(result.stdout.split())


def spy_on_memory(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The directories the benchmark opens a memory in, in order."""
    opened: list[Path] = []
    original = Memory.open.__func__  # type: ignore[attr-defined]

    def spying(cls: Any, location: Any = None, **options: Any) -> Any:
        opened.append(Path(location))
        return original(cls, location, **options)

    monkeypatch.setattr(Memory, "open", classmethod(spying))
    return opened


def test_each_task_gets_its_own_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = spy_on_memory(monkeypatch)
    report = run_benchmark(["click-test", "click-button"], episodes=2, memory="on")
    assert [path.name.rsplit("-", 1)[0] for path in opened] == ["webmem-bench-click-test", "webmem-bench-click-button"]
    assert not any(path.exists() for path in opened)  # temporary: removed after
    assert report.shared_memory is False and report.to_dict()["settings"]["shared_memory"] is False
    click_test = report.summary("warm", "click-test")
    assert click_test is not None and click_test.repeated == 1  # its instruction never changes
    seeds = [record.seed for record in report.records]
    assert len(set(seeds)) == len(seeds) == 4


def test_shared_memory_serves_every_task(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    opened = spy_on_memory(monkeypatch)
    shared = tmp_path / "shared"
    result = invoke("--tasks", "click-test,click-button", "--episodes", "1", "--memory", "on", "--shared-memory",
                    "--memory-dir", str(shared), "--json")
    assert result.exit_code == 0, result.stderr
    assert opened == [shared]
    data = json.loads(result.stdout)
    assert data["settings"]["shared_memory"] is True and len(data["warm"]["episodes"]) == 2
    assert not (shared / "click-test").exists() and not (shared / "click-button").exists()


def test_benchmark_end_to_end(tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    kept = tmp_path / "kept"
    result = invoke("--tasks", "click-button,enter-text", "--episodes", "3", "--json", "-o", str(html),
                    "--memory-dir", str(kept))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["settings"]["tasks"] == ["click-button", "enter-text"] and data["settings"]["shared_memory"] is False
    assert sorted(path.name for path in kept.iterdir() if path.is_dir()) == ["click-button", "enter-text"]
    # a later run on new instances finds that memory without being told its port (the memory's origin names it)
    again = invoke("--tasks", "click-button", "--episodes", "1", "--memory", "on", "--seed", "7", "--json",
                   "--memory-dir", str(kept))
    assert again.exit_code == 0, again.stderr
    first = json.loads(again.stdout)["warm"]["episodes"][0]
    assert first["replay_outcome"] == "replayed" and first["decisions"] == 0
    for mode in ("cold", "warm"):
        section = data[mode]
        assert set(section["tasks"]) == {"click-button", "enter-text"}
        assert len(section["episodes"]) == 6 and len(section["decision_curve"]) == 3
        for field in ("success_rate", "decisions", "llm_calls", "steps", "wall_ms", "replay_rate",
                      "replay_fallbacks", "context_tokens", "partials", "handed_over", "replay_failed",
                      "replay_candidates", "replay_rate_of_candidates", "repeated", "replay_rate_of_repeated",
                      "handover_reasons"):
            assert field in section["overall"]
        for episode in section["episodes"]:
            for field in ("task", "episode", "seed", "mode", "success", "reward", "decisions", "llm_calls", "tokens",
                          "steps", "wall_ms", "replayed", "replay_fallback", "context_tokens", "reason", "partial",
                          "replay_outcome", "replay_step", "replay_reason"):
                assert field in episode
            assert episode["replayed"] == (episode["replay_outcome"] == "replayed")
            assert episode["replay_fallback"] == (episode["replay_outcome"] == "handed_over")
            assert episode["success"] == (episode["reward"] >= 1)
        seeds = [e["seed"] for e in section["episodes"]]
        assert len(set(seeds)) == len(seeds) == 6  # distinct across episodes and tasks
    assert all(e["replay_outcome"] is None for e in data["cold"]["episodes"])
    cold_seeds = [(e["task"], e["episode"], e["seed"], e["utterance"]) for e in data["cold"]["episodes"]]
    assert cold_seeds == [(e["task"], e["episode"], e["seed"], e["utterance"]) for e in data["warm"]["episodes"]]
    assert "<svg" in html.read_text(encoding="utf-8")


class GivesUp:
    """A policy that can do nothing: it gives up at its first decision (a model too weak for the task)."""

    name = "gives-up"

    def __init__(self) -> None:
        from webmem.agent import PolicyStats

        self.stats = PolicyStats()

    def start(self, goal: str) -> None:
        pass

    def decide(self, turn: Any) -> Any:
        from webmem.agent import Action

        self.stats.decisions += 1
        return Action(kind="finish", success=False)


def test_memory_recorded_by_another_policy_is_measured_in_one_run(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    report = run_benchmark(["click-link"], episodes=3, policy=GivesUp, memory="both", memory_from="heuristic",
                           memory_dir=kept)
    assert report.modes == ("recording", "cold", "warm") and report.memory_from == "heuristic"
    recording, cold, warm = (report.select(mode) for mode in report.modes)
    assert all(record.success for record in recording)  # the capable policy recorded its runs
    assert not any(record.success for record in cold)  # alone, the weak policy does nothing
    assert [record.success and record.replayed for record in warm] == [True, True, True]
    assert {record.utterance for record in warm}.isdisjoint(record.utterance for record in recording)
    assert [record.seed for record in warm] == [record.seed for record in cold]
    assert not {record.seed for record in recording} & {record.seed for record in warm}  # other instances
    assert (kept / "click-link").is_dir()
    data = report.to_dict()
    assert data["settings"]["memory_from"] == "heuristic" and len(data["recording"]["episodes"]) == 3
    assert BenchReport.from_dict(json.loads(json.dumps(data))).memory_from == "heuristic"
    columns, _ = comparison(report)
    assert "recording success" in columns and "warm replayed" in columns
    with pytest.raises(InvalidInput, match="memory_from"):
        run_benchmark(["click-link"], episodes=1, memory="off", memory_from="heuristic")
    refused = invoke("--tasks", "click-link", "--memory", "off", "--memory-from", "heuristic")
    assert refused.exit_code == 2 and "--memory-from" in refused.stderr and "Traceback" not in refused.stderr


def test_llm_columns_give_prompt_tokens_per_decision_and_timeouts() -> None:
    report = replace(handmade_report(), records=(
        record("click-button", 0, "cold", success=True, decisions=2, llm_calls=2, prompt_tokens=3000),
        record("click-button", 1, "cold", success=False, decisions=2, llm_calls=3, prompt_tokens=1000, timeouts=1),
        record("click-button", 0, "warm", success=True, decisions=1, llm_calls=1, prompt_tokens=2500),
        record("click-button", 1, "warm", success=True, decisions=0, replay_outcome="replayed", replay_step=1),
    ), tasks=("click-button",))
    columns, rows = comparison(report)
    overall = dict(zip(columns, rows[-1]))
    assert overall["cold prompt tokens/decision"] == "1000" and overall["cold timeouts"] == "1"
    assert overall["warm prompt tokens/decision"] == "2500" and overall["warm timeouts"] == "0"
    assert BenchReport.from_dict(json.loads(json.dumps(report.to_dict()))).summary("cold").timeouts == 1

"""Advice that is specific and honest: built-in lessons labelled and optional, read-only tools that never
seed a namespace, patterns that name the distinctive phrase, and sites that are registrable domains."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import rows
from click.testing import CliRunner

import webmem
from webmem.cli import cli
from webmem.core.errors import InvalidInput
from webmem.core.urls import site_of
from webmem.lessons.learning import error_pattern, extract_lessons

SEEDS = 3
OVERLAY_ERROR = "TimeoutError: locator.click: Timeout 5000ms exceeded.\n  - <div> intercepts pointer events"


def learned_step(action: str, url: str, *, ok: bool = True, error: str | None = None, **fields: Any) -> webmem.Step:
    return webmem.Step(action=action, url=url, ok=ok, error=error, **fields)


# --- built-in lessons ------------------------------------------------------------------------------------------


def test_built_in_lessons_are_labelled_apart_from_learned_ones(mem: webmem.Memory) -> None:
    mem.lessons.record("Wait for the results list before reading it.", "best_practice", "click", "results pending")
    section = mem.lessons.system_prompt_section()
    learned, built_in = section.split("Built-in defaults")
    assert learned.startswith("## Lessons from experience\n\nEarlier runs taught these lessons; follow them.\n")
    assert "Wait for the results list" in learned and "press Escape" not in learned
    assert "press Escape" in built_in and "Wait for the results list" not in built_in


def test_seed_lessons_false_adds_none_and_hides_those_added_before(open_memory: Any) -> None:
    with open_memory() as seeded:  # the default: the namespace gets the built-in lessons
        assert len(seeded.lessons.list()) == SEEDS
    with open_memory(seed_lessons=False) as mem:
        assert mem.lessons.list() == [] and mem.lessons.tier1() == []
        assert mem.lessons.system_prompt_section() == ""
        assert mem.lessons.recall_on_error("fill", "too many arguments: expected 2, received 3") == []
        run = mem.start_run(goal="Search", start_url="https://www.google.com/")
        assert run.system_prompt() == ""
        assert rows.count(mem, "lessons") == SEEDS  # hidden, not deleted: the default shows them again
    with open_memory(namespace="fresh", seed_lessons=False) as fresh:
        assert rows.count(fresh, "lessons", "namespace = 'fresh'") == 0
        assert rows.count(fresh, "namespace_state", "namespace = 'fresh'") == 0


def test_seed_lessons_none_adds_none_but_shows_those_there(open_memory: Any) -> None:
    with open_memory():
        pass
    with open_memory(seed_lessons=None) as mem:
        assert len(mem.lessons.list()) == SEEDS
    with open_memory(namespace="other", seed_lessons=None) as other:
        assert other.lessons.list() == []
        assert rows.count(other, "namespace_state", "namespace = 'other'") == 0


@pytest.mark.parametrize("bad", ["yes", 1, 0])
def test_seed_lessons_must_be_true_false_or_none(tmp_path: Path, bad: object) -> None:
    with pytest.raises(InvalidInput, match="seed_lessons"):
        webmem.Memory.open(tmp_path / "memory", seed_lessons=bad)  # type: ignore[arg-type]
    assert not (tmp_path / "memory").exists()


def test_read_only_commands_never_create_or_seed_a_namespace(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    webmem.Memory.open(directory).close()
    runner = CliRunner()
    for command in (["lessons"], ["lessons", "recall", "--domain", "example.com"], ["runs"], ["trajectories"],
                    ["export", "--kind", "lessons", "--format", "prompt"]):
        result = runner.invoke(cli, ["--memory-dir", str(directory), "--namespace", "typo", *command])
        assert result.exit_code == 0, (command, result.output)
    with webmem.Memory.open(directory, seed_lessons=None) as mem:
        assert rows.count(mem, "namespace_state", "namespace = 'typo'") == 0
        assert rows.count(mem, "lessons", "namespace = 'typo'") == 0


def test_the_lessons_command_marks_built_in_lessons(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    webmem.Memory.open(directory).close()
    result = CliRunner().invoke(cli, ["--memory-dir", str(directory), "lessons"], terminal_width=200)
    assert result.exit_code == 0
    assert result.output.count("(built-in)") == SEEDS


# --- patterns and texts ------------------------------------------------------------------------------------------


def test_a_bare_timeout_is_learned_with_its_own_phrase_and_matches_other_durations(mem: webmem.Memory) -> None:
    url = "https://shop.example.com/cart"
    error = "Locator.click: Timeout 1500ms exceeded."
    [lesson] = mem.lessons.extract_from_steps([
        learned_step("click", url, ok=False, error=error, target='checkbox "Agree"'),
        learned_step("check", url, target='checkbox "Agree"'),
    ])
    assert lesson.error_pattern == "locator.click: timeout #ms exceeded."
    assert lesson.lesson == (
        "When click on checkbox \"Agree\" fails with 'Locator.click: Timeout 1500ms exceeded.', try check on it instead."
    )
    assert lesson.recovery == "check"
    later = "Locator.click: Timeout 30000ms exceeded."
    assert [item.id for item in mem.lessons.recall_on_error("click", later, domain="shop.example.com")] == [lesson.id]
    # a timeout of another call is another failure
    assert mem.lessons.recall_on_error("fill", "Locator.fill: Timeout 1500ms exceeded.", domain="shop.example.com") \
        == []


@pytest.mark.parametrize("error", [
    "TimeoutError: Timeout 30000ms exceeded.",
    "Error: net::ERR_CONNECTION_REFUSED at http://localhost:3000/",
    "Locator.click: Timeout 1500ms exceeded.\nCall log:\n  - element is not visible",
])
def test_a_pattern_is_never_a_generic_word(error: str) -> None:
    pattern = error_pattern(error)
    assert pattern not in ("timeout", "net::err", "not visible", "error")
    assert len(pattern) >= 12


def test_a_lesson_names_only_element_identities(mem: webmem.Memory) -> None:
    url = "https://a.example.com/"
    [named, unnamed] = extract_lessons([
        learned_step("click", url, ok=False, error=OVERLAY_ERROR, target='button "Search"'),
        learned_step("press", url, value="Enter", target='textbox "Query"'),
        learned_step("click", url, ok=False, error=OVERLAY_ERROR, target="#search > button.primary"),
        learned_step("press", url, value="Enter", target="e37"),
    ])
    assert named.lesson.startswith('When click on button "Search" fails with')
    assert named.lesson.endswith('try press Enter on textbox "Query" instead.')
    assert named.general_lesson.startswith("When click on a button fails with")
    assert unnamed.lesson.startswith("When click fails with") and unnamed.lesson.endswith("try press Enter instead.")


# --- sites ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("domain", "site"), [
    ("www.example.com", "example.com"),
    ("shop.example.co.uk", "example.co.uk"),
    ("a.b.github.io", "b.github.io"),  # github.io is a public suffix: each user's site is its own
    ("localhost:3000", "localhost"),
    ("app.localhost:5173", "localhost"),
    ("127.0.0.1:8080", "127.0.0.1"),
    ("[::1]:9000", "[::1]"),
    ("EXAMPLE.com", "example.com"),
])
def test_a_site_is_the_registrable_domain(domain: str, site: str) -> None:
    assert site_of(domain) == site


def test_site_of_rejects_what_is_not_a_domain() -> None:
    with pytest.raises(InvalidInput):
        site_of("http://")
    with pytest.raises(InvalidInput):
        site_of("")


def test_a_site_lesson_is_a_tip_on_entering_its_site_only(mem: webmem.Memory) -> None:
    url = "https://shop.example.com/"
    [lesson] = mem.lessons.extract_from_steps([
        learned_step("click", url, ok=False, error=OVERLAY_ERROR, target='button "Buy"'),
        learned_step("press", url, value="Escape"),
    ])
    run = mem.start_run(goal="Buy a lamp", start_url="https://www.example.com/")
    assert lesson.lesson in str(run.context(url="https://www.example.com/lamps"))
    other = mem.start_run(goal="Buy a lamp", start_url="https://www.example.org/")
    assert lesson.lesson not in str(other.context(url="https://www.example.org/"))

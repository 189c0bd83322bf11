"""Hostile input gets a clear error and stores nothing: numbers out of range, arguments that are not UTF-8."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import webmem
from webmem import InvalidInput
from webmem.cli import cli

SHOP = "https://shop.example/"


@pytest.mark.parametrize("duration", [2**70, math.nan, math.inf, -math.inf, 1e300, -1])
def test_a_duration_out_of_range_is_refused_and_nothing_is_stored(mem: webmem.Memory, duration: float) -> None:
    run = mem.start_run(goal="Buy", start_url=SHOP)
    with pytest.raises(InvalidInput, match="duration_ms"):
        run.record_step(action="click", target='button "Buy"', duration_ms=duration)
    assert mem.runs.steps(run.id) == []
    run.record_step(action="click", target='button "Buy"', duration_ms=2**40)  # large, and still fine
    assert [step.duration_ms for step in mem.runs.steps(run.id)] == [2**40]


def test_a_count_out_of_range_is_refused(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Buy", start_url=SHOP)
    with pytest.raises(InvalidInput, match="target_count"):
        run.record_step(action="click", target='button "Buy"', target_count=2**40)
    assert mem.runs.steps(run.id) == []


def test_the_cli_refuses_a_huge_number_and_an_argument_that_is_not_utf_8(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    with webmem.Memory.open(directory) as mem, mem.start_run(goal="Buy", start_url=SHOP):
        pass
    runner = CliRunner()
    huge = runner.invoke(cli, ["--memory-dir", str(directory), "runs", "--limit", str(2**70)])
    assert huge.exit_code == 2 and "--limit" in huge.stderr and isinstance(huge.exception, SystemExit)
    broken = runner.invoke(cli, ["--memory-dir", str(directory), "runs", "tree", "\udcff"])
    assert broken.exit_code == 2 and "is not valid UTF-8" in broken.stderr
    assert isinstance(broken.exception, SystemExit)


DEEP = 200_000


def runs_count(mem: webmem.Memory) -> int:
    return len(mem.runs.list(limit=1000))


@pytest.mark.parametrize("body", [
    '{"webmem_export": 1, "namespace": "default", "runs": ' + "[" * DEEP + "]" * DEEP + "}",
    '{"kind": "runs", "record": ' + "[" * DEEP + "]" * DEEP + "}\n",
    '{"version": 1, "lessons": ' + "[" * DEEP + "]" * DEEP + "}",
])
def test_an_import_nested_too_deep_is_one_clear_error(tmp_path: Path, body: str) -> None:
    from webmem.interop.transfer import import_path

    source = tmp_path / "deep.json"
    source.write_text(body, encoding="utf-8")
    with webmem.Memory.open(tmp_path / "memory") as mem:
        lessons = len(mem.lessons.list())
        with pytest.raises(InvalidInput, match=r"deep\.json.*(nested too deeply|not valid JSON)"):
            import_path(mem, source)
        assert runs_count(mem) == 0 and len(mem.lessons.list()) == lessons
    result = CliRunner().invoke(cli, ["--memory-dir", str(tmp_path / "memory"), "import", str(source)])
    assert result.exit_code == 1 and "deep.json" in result.stderr and "Traceback" not in result.output


def test_an_import_that_is_not_utf_8_is_one_clear_error(tmp_path: Path) -> None:
    from webmem.interop.transfer import import_path

    source = tmp_path / "latin.json"
    source.write_bytes(b'{"webmem_export": 1, "namespace": "default", "runs": [{"goal": "caf\xe9"}]}')
    with webmem.Memory.open(tmp_path / "memory") as mem:
        with pytest.raises(InvalidInput, match=r"latin\.json: not UTF-8 text \(byte 0xe9"):
            import_path(mem, source)
        assert runs_count(mem) == 0


def test_an_agent_memory_file_nested_too_deep_or_not_utf_8_is_a_problem_line(tmp_path: Path) -> None:
    from webmem.interop.transfer import import_path

    layout = tmp_path / ".agent-memory"
    (layout / "agent-runs").mkdir(parents=True)
    (layout / "traj_deep.json").write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
    (layout / "traj_latin.json").write_bytes(b'{"goal": "caf\xe9"}')
    with webmem.Memory.open(tmp_path / "memory") as mem:
        report = import_path(mem, layout)
        assert runs_count(mem) == 0 and len(mem.trajectories.list()) == 0
    problems = " | ".join(report.problems)
    assert "traj_deep.json: JSON nested too deeply to be read" in problems
    assert "traj_latin.json: not UTF-8 text" in problems


def test_a_nul_character_is_refused_never_dropped(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Buy", start_url=SHOP)
    for field, value in (("target", 'button "Bu\x00y"'), ("value", "a\x00b"), ("error", "boom\x00")):
        with pytest.raises(InvalidInput, match=rf"{field}: .*NUL character"):
            run.record_step(action="type", **{"target": 'textbox "Name"', field: value})
    assert mem.runs.steps(run.id) == []
    with pytest.raises(InvalidInput, match="NUL character"):
        mem.start_run(goal="Buy\x00 now", start_url=SHOP)
    mem.trajectories.save(goal="Buy now", start_url=SHOP, steps=[webmem.Step(action="click", target='button "Buy"')])
    for goal in ("Buy\x00 now", "Buy \ud800now"):  # a goal no memory can hold is named, never a traceback
        with pytest.raises(InvalidInput, match=r"goal: a text (holds a NUL character|is not valid Unicode)"):
            mem.trajectories.match(goal, origin=SHOP, limit=1)


def test_a_nul_character_deep_in_an_import_is_reported_at_its_field(mem: webmem.Memory, tmp_path: Path) -> None:
    from webmem.interop.transfer import import_path

    step = {"action": "click", "target": 'button "Bu\u0000y"'}
    trajectory = {"id": "traj_nul", "goal": "Buy", "origin": SHOP.rstrip("/"), "domain": "shop.example",
                  "steps": [{"action": "goto"}, step], "success": True, "duration_ms": 5,
                  "created_at": "2026-01-01T00:00:00+00:00"}
    source = tmp_path / "export.jsonl"
    source.write_text(json.dumps({"kind": "trajectories", "record": trajectory}) + "\n", encoding="utf-8")
    report = import_path(mem, source)
    assert report.problems == ["trajectories.0: steps.1.target: a text holds a NUL character (\\x00), which cannot "
                               "be stored"]
    assert mem.trajectories.list() == []
    with pytest.raises(ValidationError, match=r"target: a text holds a NUL character"):  # a record made directly
        webmem.Step(action="click", target="Bu\x00y")



def test_a_damaged_database_opens_or_says_it_is_damaged_never_another_exception(tmp_path: Path) -> None:
    import random
    import shutil

    source = tmp_path / "source"
    with webmem.Memory.open(source) as mem:
        for number in range(10):
            with mem.start_run(goal=f"Buy item {number}", start_url=SHOP) as run:
                run.record_step(action="click", target='button "Buy"')
    pristine = (source / "memory.db").read_bytes()
    rng = random.Random(27)
    outcomes: dict[str, int] = {}
    for trial in range(40):
        damaged = tmp_path / f"damaged{trial}"
        shutil.copytree(source, damaged)
        data = bytearray(pristine)
        for _ in range(2):  # the schema area: the first pages, where the tables' definitions and the migrations are
            data[rng.randrange(100, 8192)] ^= 1 << rng.randrange(8)
        (damaged / "memory.db").write_bytes(bytes(data))
        try:
            with webmem.Memory.open(damaged) as mem:
                mem.runs.list(limit=5)
                mem.lessons.list()
            outcome = "opened"
        except webmem.WebmemError as exc:
            outcome = type(exc).__name__
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        for command in (["doctor"], ["runs"]):
            result = CliRunner().invoke(cli, ["--memory-dir", str(damaged), *command])
            assert result.exception is None or isinstance(result.exception, SystemExit), (trial, command)
            assert result.exit_code in (0, 1) and "Traceback" not in result.output
    assert outcomes.get("StoreCorrupt", 0) > 0 and outcomes.get("opened", 0) > 0
    assert set(outcomes) <= {"opened", "StoreCorrupt"}, outcomes  # damage is named as damage


# --- generated hostile values through every public write path -----------------------------------------------

HOSTILE = settings(derandomize=True, deadline=None, max_examples=40, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
texts = st.one_of(st.text(max_size=60), st.text(min_size=5_000, max_size=20_000), st.just(""), st.just("\x00"),
                  st.just("\ud800"), st.just("{password}"), st.just("=cmd|' /C calc'!A0"))
anything = st.one_of(texts, st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
                     st.floats(allow_nan=True, allow_infinity=True), st.lists(st.text(max_size=5), max_size=3),
                     st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))


def attempt(call: Any) -> Any:
    """The call's result, or None when it raised a webmem error (any other exception fails the test)."""
    try:
        return call()
    except webmem.WebmemError:
        return None


def integrity(mem: webmem.Memory) -> None:
    with mem.store.read() as conn:
        if mem.store.dialect == "sqlite":
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
        else:  # PostgreSQL checks its own pages; the store must still answer a read of every run
            conn.exec_driver_sql("SELECT count(*) FROM runs").scalar()


@given(action=st.one_of(st.sampled_from(["click", "type", "fill"]), anything),
       target=st.one_of(st.just('button "Buy"'), anything), value=anything, error=anything, duration=anything,
       url=st.one_of(st.just(SHOP + "cart?x=1"), anything))
@HOSTILE
def test_record_step_stores_exactly_or_refuses(mem: webmem.Memory, action: Any, target: Any, value: Any,
                                               error: Any, duration: Any, url: Any) -> None:
    run = mem.start_run(goal="Hostile steps", start_url=SHOP)
    step = attempt(lambda: run.record_step(action=action, target=target, value=value, error=error,
                                           duration_ms=duration, url=url))
    stored = mem.runs.steps(run.id)
    if step is None:
        assert stored == []  # a refused call stored nothing
    else:
        assert stored == [step]
    integrity(mem)


@given(lesson=anything, category=st.one_of(st.just("best_practice"), anything), command=anything, pattern=anything,
       domain=st.one_of(st.just("shop.example"), anything))
@HOSTILE
def test_lessons_record_stores_or_refuses(mem: webmem.Memory, lesson: Any, category: Any, command: Any,
                                          pattern: Any, domain: Any) -> None:
    before = len(mem.lessons.list())
    recorded = attempt(lambda: mem.lessons.record(lesson, category, command, pattern, domain))
    after = mem.lessons.list()
    if recorded is None:
        assert len(after) == before
    else:
        assert any(item.id == recorded.id for item in after)
    integrity(mem)


@given(domain=anything, kind=anything, key=anything, value=anything, element=anything, selector=anything)
@HOSTILE
def test_knowledge_and_selectors_store_or_refuse(mem: webmem.Memory, domain: Any, kind: Any, key: Any,
                                                 value: Any, element: Any, selector: Any) -> None:
    attempt(lambda: mem.knowledge.record_fact(domain, kind, key, value))
    attempt(lambda: mem.selectors.record(domain, element, selector))
    attempt(lambda: mem.knowledge.record_session(domain, goal=key, outcome=value, success=True))
    integrity(mem)


@given(goal=anything, url=anything, session=anything, steps=st.lists(anything, max_size=3))
@HOSTILE
def test_runs_and_trajectories_store_or_refuse(mem: webmem.Memory, goal: Any, url: Any, session: Any,
                                               steps: list[Any]) -> None:
    runs_before = len(mem.runs.list(limit=10_000))
    run = attempt(lambda: mem.start_run(goal=goal, start_url=url, session_id=session))
    assert len(mem.runs.list(limit=10_000)) == runs_before + (run is not None)
    if run is not None:
        attempt(lambda: run.update(current_url=url, artifact_paths=steps))
        attempt(lambda: run.finish(success=True, outcome=goal, final_url=url))
        attempt(lambda: mem.resume_run(run.id, goal=goal))
        attempt(lambda: mem.fork_run(run.id, goal=goal))
    attempt(lambda: mem.trajectories.save(goal=goal, start_url=url, steps=steps))
    attempt(lambda: mem.trajectories.match(goal, origin=url))
    attempt(lambda: mem.trajectories.search_replay(goal, url))
    integrity(mem)


@pytest.fixture
def read_only_memory(tmp_path: Path) -> Any:
    """A memory on a file system mounted read-only (a tmpfs: mounting needs root, which the CI machine is)."""
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a read-only file system needs root")
    mount = tmp_path / "mount"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mount)], check=True)
    try:
        with webmem.Memory.open(mount / "memory") as mem, mem.start_run(goal="Buy", start_url=SHOP):
            pass
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        yield mount / "memory"
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_doctor_says_the_file_system_is_read_only(read_only_memory: Path) -> None:
    result = CliRunner().invoke(cli, ["--memory-dir", str(read_only_memory), "doctor"])
    assert result.exit_code == 1 and "its file system is read-only" in result.stderr
    assert isinstance(result.exception, SystemExit)
    with pytest.raises(webmem.WebmemError, match="file system is read-only"):
        webmem.Memory.open(read_only_memory)


CLI_VALUES = st.one_of(st.text(max_size=40), st.just("\udcff"), st.just("-1"), st.just(str(2**80)), st.just("nan"),
                       st.just("%00"), st.just("../../etc/passwd"), st.just("http://[::1"), st.just("=1+1"))
CLI_SHAPES = [
    lambda x, y: ["runs", "--limit", x], lambda x, y: ["runs", "show", x], lambda x, y: ["runs", "tree", x],
    lambda x, y: ["runs", "--domain", x, "--status", y], lambda x, y: ["trajectories", "match", x, "--url", y],
    lambda x, y: ["trajectories", "explain", x, "--origin", y], lambda x, y: ["context", "--goal", x, "--url", y],
    lambda x, y: ["lessons", "--domain", x], lambda x, y: ["facts", x], lambda x, y: ["selectors", x],
    lambda x, y: ["sessions", x, "--limit", y], lambda x, y: ["episodes", x, "--format", y],
    lambda x, y: ["forget", "lesson", x, "--dry-run"], lambda x, y: ["forget", "run", x, "--dry-run"],
    lambda x, y: ["stats", "--domain", x], lambda x, y: ["export", "--kind", x, "--format", y],
    lambda x, y: ["--namespace", x, "runs"],
]


@pytest.fixture(scope="module")
def cli_memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("cli") / "memory"
    with webmem.Memory.open(directory) as mem, mem.start_run(goal="Buy shoes", start_url=SHOP) as run:
        run.record_step(action="click", target='button "Buy"', url=SHOP)
    return directory


@given(shape=st.sampled_from(range(len(CLI_SHAPES))), first=CLI_VALUES, second=CLI_VALUES)
@HOSTILE
def test_no_cli_argument_ends_in_a_traceback(cli_memory: Path, shape: int, first: str, second: str) -> None:
    before = (cli_memory / "memory.db").read_bytes()
    result = CliRunner().invoke(cli, ["--memory-dir", str(cli_memory), *CLI_SHAPES[shape](first, second)])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        CLI_SHAPES[shape](first, second), result.output[-500:])
    assert result.exit_code in (0, 1, 2)
    if result.exit_code != 0:
        assert "Traceback" not in result.output
    assert (cli_memory / "memory.db").read_bytes() == before  # reading commands and dry runs change nothing


def test_a_damaged_migration_record_is_corruption_not_a_newer_webmem(tmp_path: Path) -> None:
    import sqlite3

    directory = tmp_path / "memory"
    webmem.Memory.open(directory).close()
    with sqlite3.connect(directory / "memory.db") as conn:
        conn.execute("UPDATE webmem_migrations SET name = '0003_lescons' WHERE name = '0003_lessons'")
    with pytest.raises(webmem.StoreCorrupt, match="0003_lescons"):
        webmem.Memory.open(directory)
    with sqlite3.connect(directory / "memory.db") as conn:  # a number past ours, but one of ours is gone: damage too
        conn.execute("UPDATE webmem_migrations SET name = '9003_lessons' WHERE name = '0003_lescons'")
    with pytest.raises(webmem.StoreCorrupt, match="9003_lessons"):
        webmem.Memory.open(directory)
    with sqlite3.connect(directory / "memory.db") as conn:
        conn.execute("UPDATE webmem_migrations SET name = '0003_lessons' WHERE name = '9003_lessons'")
        conn.execute("INSERT INTO webmem_migrations (name, applied_at) VALUES ('9999_future', '2030-01-01 00:00:00')")
    with pytest.raises(webmem.SchemaTooNew, match="9999_future"):
        webmem.Memory.open(directory)


@given(session=anything, goal=anything, action=anything, text=anything, page=st.one_of(
    st.just({"url": SHOP, "title": "Shop", "elements": []}), anything), grades=anything)
@HOSTILE
def test_episodes_store_or_refuse(mem: webmem.Memory, session: Any, goal: Any, action: Any, text: Any,
                                  page: Any, grades: Any) -> None:
    episodes = mem.episodes
    if attempt(lambda: episodes.init_episode(session)) is not None:
        step = attempt(lambda: episodes.record_step_start(page, goal, action, text))
        if step is not None:
            attempt(lambda: episodes.record_step_end(step, page))
        attempt(episodes.persist_memories)
        attempt(lambda: episodes.add_grades_to_memories(grades))
    attempt(lambda: episodes.retrieve_memories(goal, page))
    integrity(mem)


@given(thought=anything, action=anything, key=anything, value=anything, url=anything, domain=anything)
@HOSTILE
def test_working_memory_and_patterns_store_or_refuse(mem: webmem.Memory, thought: Any, action: Any,
                                                     key: Any, value: Any, url: Any, domain: Any) -> None:
    run = mem.start_run(goal="Hostile working memory", start_url=SHOP)
    working = run.working
    attempt(lambda: working.record_cycle(thought, action, url=url))
    attempt(lambda: working.set_scratch(key, value))
    attempt(lambda: working.add_extraction(key, value))
    attempt(lambda: working.store_page_map(url, value))
    attempt(lambda: working.learn_pattern(domain, thought, key, [action]))
    if attempt(lambda: working.init_sitemap_graph(url)) is not None:
        attempt(lambda: working.add_sitemap_links(url, [{"url": value, "text": key}], thought))
        attempt(lambda: working.update_sitemap_visited(url, title=thought, summary=key))
    attempt(lambda: run.context(url=url))
    attempt(lambda: mem.forget.lesson(key, dry_run=True))
    attempt(lambda: mem.forget.fact(domain, key, dry_run=True))
    attempt(lambda: mem.forget.selector(domain, value, dry_run=True))
    integrity(mem)


documents = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts),
                         lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                 st.dictionaries(st.sampled_from(["goal", "steps", "start_url", "id",
                                                                                  "lesson", "domain", "value"]),
                                                                 inner, max_size=4)), max_leaves=12)


@given(records=st.lists(documents, max_size=3), kind=st.sampled_from(["runs", "trajectories", "facts", "lessons",
                                                                       "selectors", "sessions", "episodes"]))
@HOSTILE
def test_an_export_of_any_shape_imports_or_is_refused(tmp_path: Path, records: list[Any], kind: str) -> None:
    import json as json_module

    from webmem.interop.transfer import import_path

    source = tmp_path / "generated.json"
    source.write_text(json_module.dumps({"webmem_export": 1, "namespace": "default", kind: records}),
                      encoding="utf-8")
    with webmem.Memory.open(tmp_path / "memory") as mem:
        report = attempt(lambda: import_path(mem, source))
        assert report is None or isinstance(report.problems, list)
        integrity(mem)

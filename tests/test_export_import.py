"""webmem's own export and import: JSON and JSONL round trips of every kind (lessons and episodes
included) into another namespace, CSV and prompt shapes, detection of the source, dry runs,
records that are refused, secrets, and a Hypothesis round trip of facts, selectors and sessions.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import webmem
from webmem import InvalidInput
from webmem.cli import cli
from webmem.core.models import FACT_TYPES
from webmem.interop.transfer import KINDS, collect, detect, import_path, render

FIXTURES = Path("/work/shared/fixtures")
AGENT_MEMORY = FIXTURES / "agent-memory"
LESSON_FILE = FIXTURES / "lessons-memory.json"
# fields a store makes up itself: episode row ids, and the seed lessons every namespace writes when
# it is first opened (their ids and times; an imported seed merges into them)
GENERATED = {"lessons": ("id",), "episodes": ("id",)}
SEEDED = ("created_at", "last_used")


def on(directory: Path, *args: object) -> Result:
    return CliRunner().invoke(cli, ["--memory-dir", str(directory), *map(str, args)], catch_exceptions=False)


def records(mem: webmem.Memory) -> dict[str, list[str]]:
    """Every record of every kind, as sorted JSON strings without generated fields."""
    found = collect(mem, KINDS)
    def kept(kind: str, record: dict[str, Any]) -> dict[str, Any]:
        left_out = GENERATED.get(kind, ()) + (SEEDED if kind == "lessons" and record["source"] == "seed" else ())
        return {k: v for k, v in record.items() if k not in left_out}

    return {kind: sorted(json.dumps(kept(kind, r.model_dump(mode="json")), sort_keys=True) for r in items)
            for kind, items in found.items()}


def fill(directory: Path) -> None:
    """The fixtures, plus an episode session with graded steps and a run with steps of its own."""
    with webmem.Memory.open(directory) as mem:
        import_path(mem, AGENT_MEMORY)
        import_path(mem, LESSON_FILE)
        episodes = mem.episodes
        page = {"url": "https://support.example.com/tickets", "title": "Tickets",
                "elements": [{"role": "button", "name": "Save", "ref": "e1"},
                             {"role": "textbox", "name": "Password", "ref": "e2", "value": "hunter2-secret"}]}
        for rep in range(2):
            episodes.init_episode("tickets")
            for number in range(3):
                step = episodes.record_step_start(page, f"rep {rep} state {number}", f"click('e{number}')", "Save",
                                                  think="look first")
                episodes.record_step_end(step, page)
            episodes.persist_memories()
            episodes.add_grades_to_memories({"task_completed": rep == 1, "overall_explanation": "graded",
                                             "step_grades": [{"step_number": 1, "is_correct": rep == 1,
                                                              "explanation": "why", "confidence": 0.7}]})


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("export-source") / "memory"
    fill(directory)
    return directory


# --- round trips -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_round_trip_into_another_namespace_keeps_every_record(source: Path, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"memory.{fmt}"
    assert on(source, "export", "--format", fmt, "-o", target).exit_code == 0
    directory = tmp_path / "copy"
    report = json.loads(on(directory, "--namespace", "copy", "import", target, "--json").stdout)
    assert report["problems"] == []
    assert report["added"]["episodes"] == 6 and report["added"]["lessons"] == 6 and report["merged"] == {"lessons": 3}
    with webmem.Memory.open(source, prune_lessons=False) as original, \
            webmem.Memory.open(directory, namespace="copy", prune_lessons=False) as copied:
        expected, found = records(original), records(copied)
        for kind in KINDS:
            assert found[kind] == expected[kind], kind
        assert all(expected[kind] for kind in KINDS)
        [trajectory] = [t for t in copied.trajectories.list() if t.id == "traj_1794308448936_f0npxe"]
        assert [s.value for s in trajectory.steps if s.selector == "@t1122"] == ["{password}"]
    again = json.loads(on(directory, "--namespace", "copy", "import", target, "--json").stdout)
    assert again["added"] == {} and again["problems"] == []  # a second import adds nothing


def test_round_trip_through_the_api_into_the_same_file(source: Path, tmp_path: Path) -> None:
    with webmem.Memory.open(source, prune_lessons=False) as original:
        text = render(original, collect(original, KINDS), "json")
    body = json.loads(text)
    assert body["webmem_export"] == 1 and body["namespace"] == "default" and set(body) == {"webmem_export",
                                                                                           "namespace", *KINDS}
    assert all("internal_state_embedding" in entry for entry in body["episodes"])
    (tmp_path / "export.json").write_text(text, encoding="utf-8")
    with webmem.Memory.open(source, namespace="second", prune_lessons=False) as second:
        report = import_path(second, tmp_path / "export.json")
        assert report.problems == [] and not report.dry_run
        assert render(second, collect(second, ["runs", "trajectories", "facts", "sessions", "selectors"]),
                      "jsonl") == render(second, collect(second, ["runs", "trajectories", "facts", "sessions",
                                                                      "selectors"]), "jsonl")
        with webmem.Memory.open(source, prune_lessons=False) as original:
            for kind in ("runs", "trajectories", "facts", "sessions", "selectors"):
                assert render(second, collect(second, [kind]), "jsonl") == render(
                    original, collect(original, [kind]), "jsonl"), kind


def test_dry_run_reports_what_a_real_import_does_and_stores_nothing(source: Path, tmp_path: Path) -> None:
    target = tmp_path / "export.jsonl"
    assert on(source, "export", "--format", "jsonl", "-o", target).exit_code == 0
    directory = tmp_path / "fresh"
    with webmem.Memory.open(directory) as mem:
        before = records(mem)
        dry = import_path(mem, target, dry_run=True)
        assert records(mem) == before
        real = import_path(mem, target)
    assert dry.dry_run and not real.dry_run
    assert (dry.added, dry.merged, dry.skipped, dry.problems) == (real.added, real.merged, real.skipped, real.problems)


# --- shapes -------------------------------------------------------------------------------------------------------


def test_csv_has_one_row_per_record_and_flat_columns(source: Path) -> None:
    with webmem.Memory.open(source, prune_lessons=False) as mem:
        runs = collect(mem, ["runs"])["runs"]
        rows = list(csv.DictReader(io.StringIO(render(mem, {"runs": runs}, "csv"))))
        assert len(rows) == len(runs)
        assert list(rows[0]) == list(webmem.RecordedRun.model_fields)  # a run's steps are one cell
        by_id = {row["run_id"]: row for row in rows}
        for run in runs:
            assert json.loads(by_id[run.run_id]["artifact_paths"]) == run.artifact_paths  # lists are JSON cells
            assert len(json.loads(by_id[run.run_id]["steps"])) == len(mem.runs.steps(run.run_id))
        with pytest.raises(InvalidInput, match="one kind at a time"):
            render(mem, collect(mem, ["runs", "facts"]), "csv")
        with pytest.raises(InvalidInput, match="lessons and episodes"):
            render(mem, collect(mem, ["facts"]), "prompt")
        with pytest.raises(InvalidInput, match="is not one of"):
            collect(mem, ["gossip"])
        episodes = render(mem, collect(mem, ["episodes"]), "csv")
        assert episodes.splitlines()[0].startswith("id,session_id,rep,step_num") and len(episodes.splitlines()) == 7
        prompt = render(mem, collect(mem, ["episodes"]), "prompt")
        assert prompt.startswith("# Lessons From Previous Attempt") and "REPEAT:" in prompt


def test_exports_carry_no_secret(source: Path) -> None:
    for fmt in ("json", "jsonl"):
        text = on(source, "export", "--format", fmt).stdout
        assert "testpass" not in text and "hunter2-secret" not in text
        assert "{password}" in text


# --- detection and refusals -----------------------------------------------------------------------------------------


def test_detect(tmp_path: Path, source: Path) -> None:
    assert detect(AGENT_MEMORY) == "agent-memory"
    assert detect(LESSON_FILE) == "lessons"
    exported = tmp_path / "x.json"
    exported.write_text(on(source, "export", "--kind", "facts").stdout)
    assert detect(exported) == "webmem"
    lines = tmp_path / "x.jsonl"
    lines.write_text(on(source, "export", "--kind", "facts", "--format", "jsonl").stdout)
    assert detect(lines) == "webmem"
    only_trajectories = tmp_path / "cli-memory"
    only_trajectories.mkdir()
    (only_trajectories / "traj_1794308448936_f0npxe.json").write_text(
        (AGENT_MEMORY / "traj_1794308448936_f0npxe.json").read_text())
    assert detect(only_trajectories) == "agent-memory"  # the bad CLI writes trajectories in the root
    with pytest.raises(InvalidInput, match="does not exist"):
        detect(tmp_path / "missing.json")
    binary = tmp_path / "photo.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    with pytest.raises(InvalidInput, match="is not an .agent-memory directory"):
        detect(binary)


def test_bad_export_files_are_refused_whole(tmp_path: Path) -> None:
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"webmem_export": 2, "namespace": "default", "facts": []}))
    stray = tmp_path / "stray.jsonl"
    stray.write_text('{"kind": "facts", "record": {}}\n{"kind": "secrets", "record": {}}\n')
    with webmem.Memory.open(tmp_path / "memory") as mem:
        with pytest.raises(InvalidInput, match="not a webmem export of version 1"):
            import_path(mem, newer)
        with pytest.raises(InvalidInput, match="line 2 is not a webmem record"):
            import_path(mem, stray)
        assert records(mem)["facts"] == []


def test_invalid_records_are_reported_and_the_rest_imported(tmp_path: Path) -> None:
    stamp = "2026-11-20T10:00:00Z"
    fact = {"type": "quirk", "key": "banner", "value": "A banner covers the footer", "confidence": 0.7, "sources": 1,
            "first_seen": stamp, "last_seen": stamp}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"webmem_export": 1, "namespace": "other", "facts": [
        {**fact, "domain": "shop.example"},
        {**fact, "domain": "../../etc"},
        {**fact, "domain": "/var/lib"},
        {**fact, "domain": ".."},
        {**fact, "domain": "Shop.Example"},
        {**fact, "domain": "shop.example", "confidence": 7},
        {**fact, "domain": "shop.example", "colour": "blue"},
    ], "trajectories": [{"id": "traj_1", "origin": "https://shop.example", "domain": "shop.example", "steps": [],
                         "success": True, "duration_ms": 1, "created_at": stamp}]}))
    directory = tmp_path / "memory"
    result = on(directory, "import", path, "--json")
    report = json.loads(result.stdout)
    assert report["added"] == {"facts": 1}
    problems = report["problems"]
    assert [p.split(":")[0] for p in problems] == ["trajectories.0"] + [f"facts.{n}" for n in range(1, 7)]
    problems = problems[1:] + problems[:1]
    assert "not a domain" in problems[0] and "not a domain" in problems[1]
    assert "empty label" in problems[2] and "expected 'shop.example'" in problems[3]
    assert "confidence" in problems[4] and "colour" in problems[5] and "goal" in problems[6]
    exported = tmp_path / "exported"
    assert on(directory, "export", "--format", "agent-memory", "-o", exported).exit_code == 0
    assert sorted(p.name for p in (exported / "domains").iterdir()) == ["shop.example"]


def test_a_password_in_an_imported_trajectory_is_stored_as_a_placeholder(tmp_path: Path) -> None:
    step = {"action": "type", "url": "https://shop.example/login", "selector": "#pw", "ok": True}
    trajectory = {"goal": "Log in", "origin": "https://shop.example", "domain": "shop.example", "success": True,
                  "duration_ms": 10, "created_at": "2026-11-20T10:00:00Z"}
    path = tmp_path / "login.json"
    path.write_text(json.dumps({"webmem_export": 1, "namespace": "x", "trajectories": [
        {**trajectory, "id": "traj_by_target",
         "steps": [{**step, "target": 'textbox "Password"', "value": "s3cr3t-one"}]},
        {**trajectory, "id": "traj_by_selector",
         "steps": [{**step, "selector": "input[type=password]", "value": "s3cr3t-two"}]},
        {**trajectory, "id": "traj_plain", "steps": [{**step, "target": 'searchbox "Search"', "value": "kettle"}]},
    ]}))
    directory = tmp_path / "memory"
    assert json.loads(on(directory, "import", path, "--json").stdout)["added"] == {"trajectories": 3}
    with webmem.Memory.open(directory) as mem:
        values = {t.id: [s.value for s in t.steps] for t in mem.trajectories.list()}
        assert values == {"traj_by_target": ["{password}"], "traj_by_selector": ["{password}"],
                          "traj_plain": ["kettle"]}
        on_disk = b"".join(p.read_bytes() for p in directory.iterdir() if p.name.startswith("memory.db"))
        assert b"s3cr3t-one" not in on_disk and b"s3cr3t-two" not in on_disk


# --- Hypothesis: facts, selectors and sessions survive export json -> import -------------------------------------

DOMAINS = st.sampled_from(["shop.example", "localhost:5173", "app.example.org:3000", "[::1]:8080",
                           "xn--bcher-kva.example"])
MOMENTS = st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2099, 1, 1), timezones=st.just(UTC))
TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=40).filter(lambda text: text.strip() != "")
STAMP = MOMENTS.map(lambda moment: moment.isoformat().replace("+00:00", "Z"))

FACTS = st.fixed_dictionaries({
    "domain": DOMAINS, "type": st.sampled_from(FACT_TYPES), "key": TEXT, "value": TEXT,
    "confidence": st.floats(min_value=0, max_value=1, allow_nan=False), "sources": st.integers(0, 1000),
    "first_seen": STAMP, "last_seen": STAMP,
})
SELECTORS = st.fixed_dictionaries({
    "domain": DOMAINS, "element": TEXT, "stable_selector": st.none() | TEXT,
    "last_ref": st.none() | st.from_regex(r"@[a-z][0-9a-f]{1,4}(_[0-9])?", fullmatch=True),
    "success_count": st.integers(0, 10_000), "last_used": STAMP,
})
SESSIONS = st.fixed_dictionaries({
    "id": st.from_regex(r"[A-Za-z0-9_.:@-]{1,30}", fullmatch=True), "domain": DOMAINS, "goal": TEXT,
    "outcome": st.text(max_size=60), "success": st.booleans(),
    "final_url": st.none() | st.sampled_from(["https://shop.example/cart?x=1", "http://localhost:5173/board"]),
    "timestamp": STAMP, "turns_used": st.integers(0, 100), "duration_ms": st.integers(0, 10**9),
})
_namespaces = itertools.count()


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(facts=st.lists(FACTS, max_size=6), selectors=st.lists(SELECTORS, max_size=6),
       sessions=st.lists(SESSIONS, max_size=6))
def test_hypothesis_round_trip_of_facts_selectors_and_sessions(
    tmp_path: Path, facts: list[dict[str, Any]], selectors: list[dict[str, Any]], sessions: list[dict[str, Any]]
) -> None:
    number = next(_namespaces)
    written = tmp_path / f"generated-{number}.json"
    written.write_text(json.dumps({"webmem_export": 1, "namespace": "generated", "facts": facts,
                                   "selectors": selectors, "sessions": sessions}), encoding="utf-8")
    directory = tmp_path / "memory"
    kinds = ["facts", "selectors", "sessions"]
    with webmem.Memory.open(directory, namespace=f"a{number}") as first, \
            webmem.Memory.open(directory, namespace=f"b{number}") as second:
        import_path(first, written)  # what webmem accepts of the generated records ...
        exported = tmp_path / f"exported-{number}.json"
        exported.write_text(render(first, collect(first, kinds), "json"), encoding="utf-8")
        report = import_path(second, exported)  # ... comes back whole from its own export
        assert report.problems == []
        original, copied = records(first), records(second)
        for kind in kinds:
            assert copied[kind] == original[kind], kind

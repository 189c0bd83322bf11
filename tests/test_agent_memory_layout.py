"""Import from and export to browser-agent-driver's ``.agent-memory/`` layout: every record of
the fixture, every action of its trajectories, no typed password, malicious trees that import
what is valid and write nothing outside their targets, and round trips that keep every record.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import webmem
from webmem import Step
from webmem.cli import cli
from webmem.interop.agent_memory import export_agent_memory, import_agent_memory
from webmem.interop.transfer import collect

FIXTURES = Path("/work/shared/fixtures")
AGENT_MEMORY = FIXTURES / "agent-memory"
LAYOUT_KINDS = ["runs", "trajectories", "facts", "sessions", "selectors"]
FILL_PASSWORD = "testpass"


def on(directory: Path, *args: object) -> Result:
    return CliRunner().invoke(cli, ["--memory-dir", str(directory), *map(str, args)], catch_exceptions=False)


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def folder_domain(name: str) -> str:
    host, _, port = name.rpartition("_")
    return f"{host}:{port}" if port.isdigit() else name


def trajectory_files(root: Path) -> list[Path]:
    return sorted(root.glob("traj_*.json")) + sorted(root.glob("domains/*/trajectories/traj_*.json"))


def refs_by_domain(root: Path) -> dict[str, dict[str, str]]:
    """@ref -> element identity per domain, from the selectors.json files."""
    return {folder_domain(path.parent.name): {entry["lastRef"]: element
                                              for element, entry in read(path)["entries"].items() if "lastRef" in entry}
            for path in root.glob("domains/*/selectors.json")}


def expected_steps(trajectory: dict[str, Any], refs: dict[str, str]) -> list[tuple[Any, ...]]:
    """(action, selector, target, value) of every action in a layout trajectory, as webmem keeps them:
    a fill is one step per field, per dropdown and per checkbox; a value typed into a password field is
    ``{password}``."""
    found: list[tuple[Any, ...]] = []

    def add(name: str, selector: str | None, value: Any) -> None:
        target = refs.get(selector or "")
        if value is not None and target and "Password" in target:
            value = "{password}"
        found.append((name, selector, target, None if value is None else str(value)))

    for step in trajectory["steps"]:
        action = step["action"]
        name = action["action"]
        if name == "fill":
            for selector, text in action.get("fields", {}).items():
                add("fill", selector, text)
            for selector, choice in action.get("selects", {}).items():
                add("select", selector, choice)
            for selector in action.get("checks", []):
                add("check", selector, None)
        elif name == "scroll":
            add(name, None, " ".join(str(action[key]) for key in ("direction", "amount") if key in action))
        else:
            value = {"type": "text", "press": "key", "select": "value", "navigate": "url", "wait": "ms"}.get(name)
            add(name, action.get("selector"), action.get(value) if value else None)
    return found


def dumps(records: list[Any], *, without: tuple[str, ...] = ()) -> set[str]:
    return {json.dumps({k: v for k, v in r.model_dump(mode="json").items() if k not in without}, sort_keys=True)
            for r in records}


def comparable(mem: webmem.Memory) -> dict[str, set[str]]:
    """The layout's records of a namespace, minus what the layout cannot carry (a fact's first
    sighting: the layout keeps only lastSeen; a trajectory's run id)."""
    records = collect(mem, LAYOUT_KINDS)
    return {
        "runs": dumps(records["runs"]),
        "trajectories": dumps(records["trajectories"], without=("run_id",)),
        "facts": dumps(records["facts"], without=("first_seen",)),
        "sessions": dumps(records["sessions"], without=("run_id",)),
        "selectors": dumps(records["selectors"]),
    }


def tree_state(root: Path) -> dict[str, str]:
    """Every path under root (not following links) -> a hash of its content ('dir' for folders)."""
    state: dict[str, str] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs:
            state[os.path.relpath(os.path.join(folder, name), root)] = "dir"
        for name in files:
            path = Path(folder, name)
            state[os.path.relpath(path, root)] = ("link:" + os.readlink(path)) if path.is_symlink() else \
                hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def files_under(root: Path) -> Iterator[Path]:
    for folder, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            yield Path(folder, name)


# --- the fixture --------------------------------------------------------------------------------------------------


def test_import_keeps_every_record_of_the_fixture(tmp_path: Path) -> None:
    with webmem.Memory.open(tmp_path / "memory") as mem:
        report = import_agent_memory(mem, AGENT_MEMORY)
        knowledge = {folder_domain(p.parent.name): read(p) for p in AGENT_MEMORY.glob("domains/*/knowledge.json")}
        unique_facts = sum(len({(f["type"], f["key"], f["value"]) for f in k["facts"]}) for k in knowledge.values())
        all_facts = sum(len(k["facts"]) for k in knowledge.values())
        assert report.problems == []
        assert dict(report.added) == {
            "runs": len(list((AGENT_MEMORY / "agent-runs").glob("*.json"))),
            "trajectories": len(trajectory_files(AGENT_MEMORY)),
            "facts": unique_facts,
            "sessions": sum(len(k["sessions"]) for k in knowledge.values()),
            "selectors": sum(len(read(p)["entries"]) for p in AGENT_MEMORY.glob("domains/*/selectors.json")),
        }
        assert dict(report.merged) == {"facts": all_facts - unique_facts}  # exact duplicates (FORMATS.md 1.3)
        assert sorted(report.notes) == [
            "hints.json: suite summaries and hints are not memory records; not imported",
            "runs: suite summaries and hints are not memory records; not imported",
        ]
        again = import_agent_memory(mem, AGENT_MEMORY)
        assert dict(again.added) == {} and again.skipped["trajectories"] == report.added["trajectories"]
        # the knowledge file's "domain" is a URL and the folder has the port as _3000 (FORMATS.md 1.3)
        assert {fact.domain for fact in collect(mem, ["facts"])["facts"]} == set(knowledge)
        run = mem.runs.get("fork_1794388850496_1zrt90_1794388851815")
        assert (run.domain, run.session_id, run.parent_run_id) == (
            "localhost:5173", "fork_1794388850496_1zrt90", "run_1794308438923_jg3e7s")


def test_every_action_of_every_fixture_trajectory_becomes_a_step(tmp_path: Path) -> None:
    refs = refs_by_domain(AGENT_MEMORY)
    with webmem.Memory.open(tmp_path / "memory") as mem:
        import_agent_memory(mem, AGENT_MEMORY)
        for path in trajectory_files(AGENT_MEMORY):
            raw = read(path)
            stored = mem.trajectories.get(raw["id"])
            domain = stored.domain
            assert [(s.action, s.selector, s.target, s.value) for s in stored.steps] == expected_steps(
                raw, refs.get(domain, {})), path.name
            assert stored.origin == raw["origin"] and stored.success is raw["success"]
            assert stored.duration_ms == raw["durationMs"] and stored.model == raw["model"]
            assert stored.created_at == datetime.fromisoformat(raw["timestamp"].replace("Z", "+00:00"))
    billing = read(AGENT_MEMORY / "traj_1794560493060_lkw650.json")
    checks = [step for step in expected_steps(billing, refs["app.example.org:3000"]) if step[0] == "check"]
    assert len(checks) == 2  # a fill with only checkboxes: nothing of it may be lost


def test_a_typed_password_never_reaches_the_database(tmp_path: Path) -> None:
    sources = [path for path in trajectory_files(AGENT_MEMORY) if FILL_PASSWORD in path.read_text(encoding="utf-8")]
    assert sources, "the fixture types a password"
    directory = tmp_path / "memory"
    with webmem.Memory.open(directory) as mem:
        import_agent_memory(mem, AGENT_MEMORY)
        for path in sources:
            stored = mem.trajectories.get(read(path)["id"])
            typed = [s for s in stored.steps if s.selector == "@t1122"]
            assert typed and all(s.target == 'textbox "Password"' and s.value == "{password}" for s in typed)
        on_disk = b"".join(path.read_bytes() for path in directory.iterdir() if path.name.startswith("memory.db"))
        assert FILL_PASSWORD.encode() not in on_disk
        export_agent_memory(mem, tmp_path / "exported")
    assert (directory / "memory.db").exists()
    for path in [*directory.iterdir(), *files_under(tmp_path / "exported")]:
        if path.is_file():
            assert FILL_PASSWORD.encode() not in path.read_bytes(), path
    assert FILL_PASSWORD not in on(directory, "export").stdout


# --- a malicious tree ---------------------------------------------------------------------------------------------


def malicious_tree(root: Path) -> Path:
    """The fixture plus what a hostile or broken .agent-memory/ directory can hold."""
    tree = root / "project" / ".agent-memory"
    shutil.copytree(AGENT_MEMORY, tree)
    domains = tree / "domains"
    shop = read(domains / "www.example-shop.com" / "knowledge.json")
    escaped = domains / "..%2f..%2fetc"  # a folder that is a URL-encoded path, not a host
    escaped.mkdir()
    (escaped / "knowledge.json").write_text(json.dumps({**shop, "domain": "https://evil.example/"}))
    (escaped / "selectors.json").write_text((domains / "www.example-shop.com" / "selectors.json").read_text())
    dotted = domains / "_"  # what '..' becomes as a folder name; its file claims the host '..'
    dotted.mkdir()
    (dotted / "knowledge.json").write_text(json.dumps({**shop, "domain": "http://../../etc"}))
    spaced = domains / "bad host!"
    spaced.mkdir()
    (spaced / "selectors.json").write_text((domains / "localhost_5173" / "selectors.json").read_text())
    hidden = domains / ".hidden"
    hidden.mkdir()
    (hidden / "knowledge.json").write_text((domains / "localhost_5173" / "knowledge.json").read_text())
    listed = domains / "broken.example"
    listed.mkdir()
    (listed / "knowledge.json").write_text("[1, 2, 3]")  # valid JSON, not a knowledge file
    promo = (tree / "traj_1794144059416_e93erh.json").read_text(encoding="utf-8")
    (tree / "traj_1799999999999_trunc1.json").write_text(promo[: len(promo) // 2])
    unknown = json.loads(promo)
    unknown["id"] = "traj_1799999999999_unkno1"
    unknown["steps"][0]["screenshot"] = "turn-001.jpg"  # a field this layout version does not have
    (tree / "traj_1799999999999_unkno1.json").write_text(json.dumps(unknown))
    climbing = {**json.loads(promo), "id": "../../../../pwned"}
    (tree / "traj_1799999999999_climb1.json").write_text(json.dumps(climbing))
    no_host = {**json.loads(promo), "id": "traj_1799999999999_nohost", "origin": "http://../../etc"}
    (tree / "traj_1799999999999_nohost.json").write_text(json.dumps(no_host))
    manifest = read(tree / "agent-runs" / "run_1794308438923_jg3e7s.json")
    (tree / "agent-runs" / "escape.json").write_text(json.dumps({**manifest, "runId": "../../../escape"}))
    (tree / "agent-runs" / "dots.json").write_text(json.dumps({**manifest, "runId": ".."}))
    return tree


def test_a_malicious_tree_imports_what_is_valid_and_writes_nothing_outside(tmp_path: Path) -> None:
    tree = malicious_tree(tmp_path)
    memory = tmp_path / "memories" / "agent"
    before = tree_state(tmp_path)
    report = json.loads(on(memory, "import", tree, "--json").stdout)
    after = tree_state(tmp_path)
    written = {path for path in after if path not in before or after[path] != before[path]}
    assert written and all(path == "memories" or path.startswith("memories/agent") for path in written)
    assert all(Path(tmp_path, path).resolve().is_relative_to(tmp_path / "memories") for path in written)
    assert tree_state(tree.parent) == {k.removeprefix("project/"): v for k, v in before.items()
                                       if k.startswith("project/")}
    problems = report["problems"]
    expected = {
        "domains/..%2f..%2fetc/knowledge.json": "the folder name '..%2f..%2fetc' is not a host",
        "domains/..%2f..%2fetc/selectors.json": "the folder name '..%2f..%2fetc' is not a host",
        "domains/_/knowledge.json": "the folder name '_' is not a host",
        "domains/bad host!/selectors.json": "the folder name 'bad host!' is not a host",
        "domains/.hidden/knowledge.json": "has an empty label in its host",
        "domains/broken.example/knowledge.json": "expected 'facts' to be a list",
        "traj_1799999999999_trunc1.json": "not valid JSON",
        "traj_1799999999999_climb1.json": "id: String should match pattern",
        "traj_1799999999999_nohost.json": "has an empty label in its host",
        "agent-runs/escape.json": "run_id: String should match pattern",
    }
    for where, reason in expected.items():
        assert any(p.startswith(f"{where}: ") and reason in p for p in problems), (where, problems)
    assert len(problems) == len(expected)
    assert "traj_1799999999999_unkno1.json: steps.0: unknown fields ignored: screenshot" in report["notes"]
    plain = tmp_path / "plain"
    clean = json.loads(on(plain, "import", AGENT_MEMORY, "--json").stdout)
    assert report["added"] == {**clean["added"], "trajectories": clean["added"]["trajectories"] + 1,
                               "runs": clean["added"]["runs"] + 1}
    assert report["merged"] == clean["merged"]
    domains = json.loads(on(memory, "stats", "--json").stdout)["counts"]
    assert set(domains["facts"]["by_domain"]) == {"www.example-shop.com", "app.example.org:3000", "localhost:5173"}
    assert json.loads(on(memory, "runs", "show", "..", "--json").stdout)["run_id"] == ".."
    assert json.loads(on(memory, "trajectories", "show", "traj_1799999999999_unkno1", "--json").stdout)["steps"]


def test_a_dry_run_of_a_malicious_tree_reports_the_same_and_keeps_nothing(tmp_path: Path) -> None:
    tree = malicious_tree(tmp_path)
    memory = tmp_path / "memory"
    dry = json.loads(on(memory, "import", tree, "--dry-run", "--json").stdout)
    assert dry["dry_run"] is True
    counts = json.loads(on(memory, "stats", "--json").stdout)["counts"]
    assert all(counts[kind]["total"] == 0 for kind in LAYOUT_KINDS)
    real = json.loads(on(memory, "import", tree, "--json").stdout)
    assert {k: v for k, v in dry.items() if k != "dry_run"} == {k: v for k, v in real.items() if k != "dry_run"}


# --- export: only inside its directory ------------------------------------------------------------------------------


def dangerous_export(path: Path) -> Path:
    """Records whose ids and domains are awkward as file names, all valid webmem records."""
    stamp = "2026-11-20T10:00:00Z"
    step = {"action": "click", "url": "http://localhost:5173/", "selector": "#go", "ok": True}

    def trajectory(trajectory_id: str, origin: str = "http://localhost:5173") -> dict[str, Any]:
        return {"id": trajectory_id, "goal": f"Goal of {trajectory_id}", "origin": origin,
                "domain": origin.split("://")[1], "steps": [step], "success": True, "duration_ms": 5,
                "model": "gpt-5.4", "created_at": stamp}

    def run(run_id: str, start: str = "http://localhost:5173/") -> dict[str, Any]:
        return {"run_id": run_id, "status": "completed", "goal": f"Goal of {run_id}",
                "domain": start.split("://")[1].split("/")[0], "start_url": start, "started_at": stamp,
                "updated_at": stamp}

    def fact(domain: str) -> dict[str, Any]:
        return {"domain": domain, "type": "quirk", "key": "k", "value": f"about {domain}", "confidence": 0.7,
                "sources": 1, "first_seen": stamp, "last_seen": stamp}

    path.write_text(json.dumps({
        "webmem_export": 1, "namespace": "default",
        "trajectories": [trajectory(i) for i in ("..", "...", ".hidden", "a.b", "a_b", "x:y@z", "login-flow", "__")]
        + [trajectory("traj_v6", "http://[::1]:8080")],
        "runs": [run(i) for i in ("..", "...", "qa@team_1", "qa.team_1", "run:1")] + [run("v6", "http://[::1]:8080/")],
        "facts": [fact("localhost:5173"), fact("a:1"), fact("a_1"), fact("[::1]:8080")],
    }))
    return path


def test_export_writes_every_file_inside_its_directory(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    report = json.loads(on(memory, "import", dangerous_export(tmp_path / "dangerous.json"), "--json").stdout)
    assert report["problems"] == [] and report["added"] == {"trajectories": 9, "runs": 6, "facts": 4}
    target = tmp_path / "out" / "exported"
    parent_before = sorted(os.listdir(tmp_path / "out")) if (tmp_path / "out").exists() else []
    outside_before = tree_state(tmp_path)
    result = on(memory, "export", "--format", "agent-memory", "-o", target)
    assert result.exit_code == 0
    assert "skipped: domain a_1: its folder domains/a_1 holds a:1 already" in result.stderr
    assert sorted(os.listdir(tmp_path / "out")) == sorted([*parent_before, "exported"])
    changed = {p for p, h in tree_state(tmp_path).items() if outside_before.get(p) != h}
    assert all(p.startswith("out/exported") or p == "out" for p in changed)
    root = target.resolve()
    written = list(files_under(target))
    for path in written:
        assert not path.is_symlink() and path.resolve().is_relative_to(root)
        assert all(part not in ("..", ".") for part in path.relative_to(target).parts)
        assert not path.name.startswith(".")
    # ids that differ only in characters the layout replaces still get a file each
    assert len(list(target.glob("domains/*/trajectories/traj_*.json"))) == 9
    assert len(list((target / "agent-runs").glob("*.json"))) == 6
    back = tmp_path / "back"
    again = json.loads(on(back, "import", target, "--json").stdout)
    assert again["problems"] == []
    assert again["added"] == {"trajectories": 9, "runs": 6, "facts": 3}  # a_1 could not be written
    with webmem.Memory.open(memory) as first, webmem.Memory.open(back) as second:
        assert {t.id for t in first.trajectories.list()} == {t.id for t in second.trajectories.list()}
        assert {r.run_id for r in first.runs.list()} == {r.run_id for r in second.runs.list()}


def test_export_never_follows_a_link_out_of_its_directory(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    assert on(memory, "import", AGENT_MEMORY).exit_code == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    target = tmp_path / "linked"
    target.mkdir()
    (target / "domains").symlink_to(outside, target_is_directory=True)
    result = on(memory, "export", "--format", "agent-memory", "-o", target)
    assert result.exit_code == 1 and "refusing to write outside" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert sorted(os.listdir(outside)) == ["precious.txt"]
    second = tmp_path / "second"
    (second / "agent-runs").mkdir(parents=True)
    (second / "agent-runs" / "run_1794308438923_jg3e7s.json").symlink_to(outside / "precious.txt")
    assert on(memory, "export", "--format", "agent-memory", "-o", second).exit_code == 0
    assert (outside / "precious.txt").read_text() == "keep me"  # the link was replaced, not written through
    assert not (second / "agent-runs" / "run_1794308438923_jg3e7s.json").is_symlink()


# --- round trips ----------------------------------------------------------------------------------------------------


def test_round_trip_fixture_import_export_import(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    with webmem.Memory.open(directory) as first, webmem.Memory.open(directory, namespace="copy") as second:
        import_agent_memory(first, AGENT_MEMORY)
        written = export_agent_memory(first, tmp_path / "exported")
        assert written.problems == []
        report = import_agent_memory(second, tmp_path / "exported")
        assert report.problems == [] and report.notes == []
        assert dict(report.added) == dict(written.added)
        original, copied = comparable(first), comparable(second)
        for kind in LAYOUT_KINDS:
            assert copied[kind] == original[kind], kind
        steps = sum(len(t.steps) for t in second.trajectories.list())
        assert steps == sum(len(t.steps) for t in first.trajectories.list()) > 0
        export_agent_memory(second, tmp_path / "again")

    def normalised(root: Path) -> dict[str, Any]:
        return {str(path.relative_to(root)): {k: v for k, v in read(path).items() if k != "updatedAt"}
                for path in files_under(root)}

    assert normalised(tmp_path / "again") == normalised(tmp_path / "exported")  # a stable fixed point


def test_round_trip_of_records_webmem_made_itself(tmp_path: Path) -> None:
    steps = [
        Step(action="navigate", url="https://shop.example/", value="https://shop.example/account", ok=True),
        Step(action="fill", url="https://shop.example/account", selector="#email", value="sam@example.org",
             ok=True, verified=True, expected_effect="Email is filled"),
        Step(action="select", url="https://shop.example/account", selector="#country", value="NL", ok=True),
        Step(action="check", url="https://shop.example/account", selector="#terms", ok=True),
        Step(action="scroll", url="https://shop.example/account", value="down 600", ok=True),
        Step(action="wait", url="https://shop.example/account", value="1500", ok=True),
        Step(action="press", url="https://shop.example/account", selector="#email", value="Enter", ok=True,
             snapshot_hash="-141011777"),
    ]
    directory = tmp_path / "memory"
    with webmem.Memory.open(directory) as mem, webmem.Memory.open(directory, namespace="copy") as copy:
        mem.trajectories.save(goal="Update my account", start_url="https://shop.example/", steps=steps,
                              model="gpt-5.4", trajectory_id="account-update",
                              created_at=datetime(2026, 11, 20, tzinfo=UTC))
        run = mem.start_run(goal="Check my orders", start_url="https://shop.example:8443/orders",
                            session_id="orders")
        run.finish(success=True, outcome="Three orders")
        mem.knowledge.record_fact("shop.example:8443", "timing", "orders-load", "Orders list takes ~2s")
        export_agent_memory(mem, tmp_path / "exported")
        report = import_agent_memory(copy, tmp_path / "exported")
        assert report.problems == []
        [stored] = [t for t in copy.trajectories.list() if t.id == "account-update"]
        keep = ("action", "url", "selector", "value", "verified", "expected_effect", "snapshot_hash")
        assert [s.model_dump(include=set(keep)) for s in stored.steps] == [
            s.model_dump(include=set(keep)) for s in mem.trajectories.get("account-update").steps]
        # the layout writes JavaScript timestamps: milliseconds
        millis = lambda manifest: {k: v.replace(microsecond=v.microsecond // 1000 * 1000)  # noqa: E731
                                   if isinstance(v, datetime) else v for k, v in manifest.model_dump().items()}
        assert millis(copy.runs.get(run.id)) == millis(mem.runs.get(run.id))
        fact = lambda f: (f.domain, f.type, f.key, f.value, f.confidence)  # noqa: E731
        assert [fact(f) for f in copy.knowledge.facts("shop.example:8443")] == [
            fact(f) for f in mem.knowledge.facts("shop.example:8443")]
        assert copy.knowledge.sessions("shop.example:8443")
        assert [(s.id, s.goal, s.outcome, s.success) for s in copy.knowledge.sessions("shop.example:8443")] == [
            (s.id, s.goal, s.outcome, s.success) for s in mem.knowledge.sessions("shop.example:8443")]
    layout = read(next((tmp_path / "exported").glob("domains/shop.example/trajectories/*.json")))
    assert [step["action"] for step in layout["steps"]][3:6] == [
        {"action": "fill", "fields": {}, "checks": ["#terms"]},
        {"action": "scroll", "direction": "down", "amount": 600},
        {"action": "wait", "ms": 1500},
    ]
    assert layout["steps"][1]["action"] == {"action": "fill", "fields": {"#email": "sam@example.org"}}


def test_export_to_the_layout_reports_what_it_wrote(tmp_path: Path) -> None:
    with webmem.Memory.open(tmp_path / "memory") as mem:
        import_agent_memory(mem, AGENT_MEMORY)
        calls: list[tuple[int, int]] = []
        report = export_agent_memory(mem, tmp_path / "out", progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1] == 3 + 20 + 12  # domains, trajectories, runs
    assert dict(report.added) == {"facts": 26, "sessions": 15, "selectors": 47, "trajectories": 20, "runs": 12}
    for path in (tmp_path / "out").glob("domains/*/knowledge.json"):
        assert read(path)["domain"].endswith("/") and "://" in read(path)["domain"]


@pytest.mark.parametrize("name", ["localhost_5173", "app.example.org_3000", "www.example-shop.com"])
def test_exported_folders_use_the_layouts_names(tmp_path: Path, name: str) -> None:
    with webmem.Memory.open(tmp_path / "memory") as mem:
        import_agent_memory(mem, AGENT_MEMORY)
        export_agent_memory(mem, tmp_path / "out")
    exported = tmp_path / "out" / "domains" / name
    assert sorted(p.name for p in exported.iterdir()) == ["knowledge.json", "selectors.json", "trajectories"]
    original = read(AGENT_MEMORY / "domains" / name / "selectors.json")["entries"]
    assert read(exported / "selectors.json")["entries"] == original


def test_export_never_writes_through_a_planted_temporary_file(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with webmem.Memory.open(memory) as mem:
        mem.knowledge.record_fact("shop.example", "quirk", "cookie banner", "close it first")
    target = tmp_path / "exported"
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched", encoding="utf-8")
    folder = target / "domains" / "shop.example"
    folder.mkdir(parents=True)
    for name in ("knowledge.json.tmp", "knowledge.json.json.tmp", ".knowledge.json.tmp"):
        (folder / name).symlink_to(outside)  # names an older export used for its temporary files
    result = on(memory, "export", "--format", "agent-memory", "-o", target)
    assert result.exit_code == 0, result.stderr
    assert outside.read_text(encoding="utf-8") == "untouched"
    assert json.loads((folder / "knowledge.json").read_text(encoding="utf-8"))
    assert not [path for path in folder.iterdir() if path.name.endswith(".tmp") and not path.is_symlink()]


def test_import_skips_links_that_leave_the_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(AGENT_MEMORY / "domains" / sorted(os.listdir(AGENT_MEMORY / "domains"))[0], elsewhere)
    layout = tmp_path / ".agent-memory"
    (layout / "domains").mkdir(parents=True)
    (layout / "domains" / "evil.example").symlink_to(elsewhere, target_is_directory=True)
    result = on(tmp_path / "memory", "import", layout, "--json")
    report = json.loads(result.stdout)
    assert report["added"] == {} or not any(report["added"].values())
    assert report["problems"] and all("outside the imported folder" in problem for problem in report["problems"])

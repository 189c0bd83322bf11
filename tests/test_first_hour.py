"""What got in a new user's way in the first hour (issue: the first hour of a new user), each fixed or
said where the user meets it."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import webmem
from webmem.cli import cli
from webmem.cli.output import webmem_command

LOCAL = "http://127.0.0.1:5173/"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_runs_show_has_an_error_column_when_a_step_failed(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        failed = mem.start_run(goal="Buy a kettle", start_url=LOCAL)
        failed.record_step(action="click", target='button "Buy"', ok=False, error="Timeout 1500ms exceeded", url=LOCAL)
        failed.finish(success=False)
        fine = mem.start_run(goal="Buy a pan", start_url=LOCAL)
        fine.record_step(action="click", target='button "Buy"', url=LOCAL)
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", "show", failed.id)
    assert code == 0 and "error" in out and "Timeout 1500ms exceeded" in out
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", "show", fine.id)
    assert code == 0 and "error" not in out.split("Steps", 1)[1]


def test_a_domain_asked_without_its_port_gets_a_hint(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        run = mem.start_run(goal="Buy a kettle", start_url=LOCAL)
        run.record_step(action="click", target='button "Buy"', selector="#buy", url=LOCAL)
        run.finish(success=True)
    for command in ("facts", "selectors", "sessions"):
        code, out, _ = invoke("--memory-dir", str(memory_dir), command, "127.0.0.1")
        assert code == 0 and out.startswith(f"No {command} for 127.0.0.1.") and "127.0.0.1:5173" in out, out
        code, out, _ = invoke("--memory-dir", str(memory_dir), command, "elsewhere.example")
        assert out.strip() == f"No {command} for elsewhere.example."


def test_context_names_the_option_given_when_the_url_is_wrong(memory_dir: Path) -> None:
    webmem.Memory.open(memory_dir).close()
    result = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "context", "--goal", "x", "--url", "notaurl"])
    assert result.exit_code == 1 and "url:" in result.stderr and "start_url" not in result.stderr


def test_a_missing_extra_is_a_one_line_error_naming_what_to_install(
    memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # as if webmem[agent] were not installed
    result = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "run", "--policy", "llm", "--goal", "Buy tea",
                                      "--url", "https://shop.example/"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.strip() == "Error: The LLM policy needs: pip install 'webmem[agent]'"


def test_the_demo_says_playwright_is_missing_before_announcing_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "playwright", None)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "playwright" else real_find_spec(name, *args))
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 1 and result.stdout == ""
    assert "pip install 'webmem[browser]'" in result.stderr


def test_the_printed_command_runs_from_the_shell_the_user_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "venv" / "bin" / "webmem"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(script)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the venv's bin is not on it
    assert webmem_command() == str(script)
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
    assert webmem_command() == "webmem"
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "webmem" / "__main__.py")])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert webmem_command() == f"{sys.executable} -m webmem"


def test_an_agent_memory_export_says_what_its_layout_cannot_hold(memory_dir: Path, tmp_path: Path) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        mem.lessons.record("Close the cookie banner before searching", category="best_practice")
        run = mem.start_run(goal="Buy a kettle", start_url=LOCAL)
        run.finish(success=False)
        seeded = len(mem.lessons.list())
    code, _, err = invoke("--memory-dir", str(memory_dir), "export", "--format", "agent-memory", "-o",
                          str(tmp_path / "out"))
    assert code == 0 and f"note: {seeded} lessons not written" in err and "--kind lessons" in err


def test_the_import_report_says_skipped_in_its_table_as_in_its_json(memory_dir: Path, tmp_path: Path) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        mem.start_run(goal="Buy a kettle", start_url=LOCAL).finish(success=False)
    export = tmp_path / "export.json"
    assert invoke("--memory-dir", str(memory_dir), "export", "--kind", "runs", "-o", str(export))[0] == 0
    code, out, _ = invoke("--memory-dir", str(memory_dir), "import", str(export))
    assert code == 0 and "skipped" in out
    code, out, _ = invoke("--memory-dir", str(memory_dir), "import", str(export), "--json")
    assert json.loads(out)["skipped"] == {"runs": 1}


def test_a_run_given_no_session_starts_one_that_every_view_names_alike(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        run = mem.start_run(goal="Buy a kettle", start_url=LOCAL)
        run.finish(success=False, outcome="No kettles")
        session_id = run.session_id
        assert session_id is not None and session_id.startswith("session_")
        assert [item.id for item in mem.knowledge.sessions("127.0.0.1:5173")] == [session_id]
        assert mem.resume_run(run.id).session_id == session_id
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", "--session-id", session_id, "--json")
    assert code == 0 and [row["run_id"] for row in json.loads(out)][-1] == run.id
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", "resume", run.id)
    assert code == 0 and f"session_id: {session_id}" in out


@pytest.mark.parametrize(("url", "hint"), [("about:blank", "the URL the agent opens first"),
                                           ("file:///tmp/page.html", "python -m http.server")])
def test_a_start_page_without_a_host_is_refused_with_what_to_do(memory_dir: Path, url: str, hint: str) -> None:
    with webmem.Memory.open(memory_dir) as mem, pytest.raises(webmem.InvalidInput, match="start_url") as refused:
        mem.start_run(goal="Buy a kettle", start_url=url)
    assert hint in str(refused.value)


def test_importing_webmem_s_own_memory_directory_says_what_it_is(memory_dir: Path) -> None:
    webmem.Memory.open(memory_dir).close()
    result = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "import", str(memory_dir)])
    assert result.exit_code == 1 and "is a webmem memory (it holds memory.db)" in result.stderr
    assert "export -o memory.json" in result.stderr

"""The MCP server: every tool and its errors through a real MCP client, in process, over stdio and over
streamable HTTP (with and without its token)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncrun
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import webmem
from webmem.mcp import build_server
from webmem.service import AGENT_ACTIONS, MemoryService

SITE = "https://news.example.org/"
SECRET = "s3cr3t-Passw0rd"


def with_client(server: Any, scenario: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(server) as client:
            return await scenario(client)

    return asyncrun.run(main)


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error
    return result.content[0].text


def test_every_tool_through_a_client(mem: webmem.Memory) -> None:
    mem.lessons.record("When the Subscribe button is covered, press Escape first.", "tool_fallback",
                       failed_command="click", error_pattern="element is covered by an overlay",
                       domain="news.example.org", recovery="press Escape")
    server = build_server(MemoryService(mem))

    async def scenario(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"webmem_start_run", "webmem_record_step", "webmem_get_context", "webmem_finish_run",
                              "webmem_recall_lessons", "webmem_search_trajectories", "webmem_list_runs",
                              "webmem_get_run", "webmem_list_skills", "webmem_plan_skill"}
        read_only = {name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint}
        assert read_only == {"webmem_get_context", "webmem_recall_lessons", "webmem_search_trajectories",
                             "webmem_list_runs", "webmem_get_run", "webmem_list_skills", "webmem_plan_skill"}
        assert all(tool.output_schema for tool in tools.values())  # typed, structured answers
        started = structured(await client.call_tool("webmem_start_run", {
            "goal": "Subscribe a@b.com to the newsletter", "start_url": SITE}))
        run_id = started["run_id"]
        assert started["lessons"] and started["replay"] is None
        for step in ({"action": "goto", "value": SITE},
                     {"action": "fill", "target": 'textbox "Email"', "value": "a@b.com", "url": SITE},
                     {"action": "click", "target": 'button "Subscribe"', "url": SITE, "ok": False,
                      "error": "Element is covered by an overlay"},
                     {"action": "press", "value": "Escape", "url": SITE},
                     {"action": "click", "target": 'button "Subscribe"', "url": SITE}):
            recorded = structured(await client.call_tool("webmem_record_step", {"run_id": run_id, **step}))
            expected = ["When the Subscribe button is covered, press Escape first."] if step.get("ok") is False else []
            assert recorded["tips"] == expected
        context = structured(await client.call_tool("webmem_get_context", {"run_id": run_id, "budget_tokens": 400}))
        assert context["tokens"] <= 400
        finished = structured(await client.call_tool("webmem_finish_run", {"run_id": run_id, "success": True,
                                                                            "outcome": "Subscribed"}))
        assert finished["run"]["status"] == "completed" and finished["steps"] == 5
        lessons = structured(await client.call_tool("webmem_recall_lessons", {"domain": "news.example.org"}))
        assert any("Escape" in lesson["lesson"] for lesson in lessons["lessons"])
        search = structured(await client.call_tool("webmem_search_trajectories", {
            "goal": "Subscribe c@d.org to the newsletter", "url": SITE}))
        assert search["best"] and search["replay"]["steps"][1]["arguments"]["text"] == "c@d.org"
        runs = structured(await client.call_tool("webmem_list_runs", {"status": "completed"}))
        assert [run["run_id"] for run in runs["runs"]] == [run_id]
        detail = structured(await client.call_tool("webmem_get_run", {"run_id": run_id}))
        assert [step["action"] for step in detail["steps"]] == ["goto", "fill", "click", "press", "click"]
        again = structured(await client.call_tool("webmem_start_run", {
            "goal": "Subscribe c@d.org to the newsletter", "start_url": SITE}))
        assert [call["tool"] for call in again["replay"]["steps"]] == [
            "browser_navigate", "browser_type", "browser_press_key", "browser_click"]

    with_client(server, scenario)


def test_errors_are_tool_errors_named_after_webmem_errors(mem: webmem.Memory) -> None:
    server = build_server(MemoryService(mem))

    async def scenario(client: Client) -> None:
        assert error_text(await client.call_tool("webmem_record_step", {"run_id": "run_nope", "action": "click"})) \
            .endswith("RunNotFound: run_id: no run 'run_nope' in namespace 'default'")
        assert "InvalidInput: start_url" in error_text(await client.call_tool(
            "webmem_start_run", {"goal": "Find a pie", "start_url": "javascript:alert(1)"}))
        assert "goal" in error_text(await client.call_tool("webmem_start_run", {"goal": 5, "start_url": SITE}))
        assert "InvalidInput: goal" in error_text(await client.call_tool(
            "webmem_start_run", {"goal": "  ", "start_url": SITE}))
        run_id = structured(await client.call_tool("webmem_start_run", {"goal": "Find a pie", "start_url": SITE}))[
            "run_id"]
        assert "InvalidInput: budget_tokens" in error_text(await client.call_tool(
            "webmem_get_context", {"run_id": run_id, "budget_tokens": -1}))
        assert "InvalidInput: limit" in error_text(await client.call_tool("webmem_list_runs", {"limit": 10**6}))
        assert "InvalidInput" in error_text(await client.call_tool(
            "webmem_record_step", {"run_id": run_id, "action": "click", "url": "not a url"}))
        assert "InvalidInput: error and command" in error_text(await client.call_tool(
            "webmem_recall_lessons", {"command": "click"}))
        structured(await client.call_tool("webmem_finish_run", {"run_id": run_id, "success": False}))
        assert "RunClosed" in error_text(await client.call_tool(
            "webmem_record_step", {"run_id": run_id, "action": "click"}))
        with pytest.raises(MCPError, match="RunNotFound"):
            await client.read_resource("webmem://runs/run_nope")
        for result in [await client.call_tool("webmem_get_run", {"run_id": "run_nope"})]:
            assert "Traceback" not in error_text(result)

    with_client(server, scenario)
    assert mem.runs.list(status="running") == []


def test_arguments_that_do_not_fit_a_tool_are_refused_as_invalid_input(mem: webmem.Memory) -> None:
    server = build_server(MemoryService(mem))

    async def scenario(client: Client) -> None:
        run_id = structured(await client.call_tool("webmem_start_run", {"goal": "Find a pie", "start_url": SITE}))[
            "run_id"]
        refused: list[tuple[str, dict[str, Any], str]] = [
            ("webmem_start_run", {"start_url": SITE}, "goal: required, but not given"),
            ("webmem_start_run", {"goal": 5, "start_url": SITE}, "goal: expected a string, got 5"),
            ("webmem_record_step", {"run_id": run_id, "action": "click", "ok": "maybe"},
             "ok: expected true or false, got 'maybe'"),
            ("webmem_record_step", {"run_id": run_id, "action": ["click"]}, "action: expected a string, got ['click']"),
            ("webmem_get_context", {"run_id": run_id, "budget_tokens": "lots"},
             "budget_tokens: expected a whole number, got 'lots'"),
            ("webmem_finish_run", {"run_id": run_id}, "success: required, but not given"),
            ("webmem_list_runs", {"limit": "ten"}, "limit: expected a whole number, got 'ten'"),
        ]
        for tool, arguments, problem in refused:
            text = error_text(await client.call_tool(tool, arguments))
            assert text == f"Error executing tool {tool}: InvalidInput: {problem}", text
        detail = structured(await client.call_tool("webmem_get_run", {"run_id": run_id}))
        assert detail["steps"] == [] and detail["run"]["status"] == "running"

    with_client(server, scenario)


def test_an_unknown_action_is_refused_with_the_valid_ones_and_nothing_is_stored(mem: webmem.Memory) -> None:
    server = build_server(MemoryService(mem))

    async def scenario(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert all(action in (tools["webmem_record_step"].description or "") for action in AGENT_ACTIONS)
        run_id = structured(await client.call_tool("webmem_start_run", {"goal": "Find a pie", "start_url": SITE}))[
            "run_id"]
        structured(await client.call_tool("webmem_record_step", {"run_id": run_id, "action": "click",
                                                                  "target": 'link "Pies"', "url": SITE}))
        text = error_text(await client.call_tool("webmem_record_step", {"run_id": run_id, "action": "teleport",
                                                                        "target": 'link "Pies"', "url": SITE}))
        assert text.endswith(f"InvalidInput: action: unknown action 'teleport'; valid actions: "
                             f"{', '.join(AGENT_ACTIONS)}"), text
        detail = structured(await client.call_tool("webmem_get_run", {"run_id": run_id}))
        assert [step["action"] for step in detail["steps"]] == ["click"]

    with_client(server, scenario)


def test_a_search_lists_the_closest_few_unless_asked_for_every_candidate(mem: webmem.Memory) -> None:
    """webmem_search_trajectories answers the closest ``limit`` (default 5) from the pruned ranking; ``all`` scores
    and explains every candidate; ``scored`` says how many there were; a wrong ``all`` is a tool error naming it."""
    step = webmem.Step(action="click", target='button "Subscribe"', url=SITE)
    with mem.store.write():
        for number in range(12):
            mem.trajectories.save(goal=f"Subscribe user{number}@example.org to the newsletter", start_url=SITE,
                                  steps=[step])
    server = build_server(MemoryService(mem))
    asked = {"goal": "Subscribe user3@example.org to the newsletter", "url": SITE}

    async def scenario(client: Client) -> None:
        closest = structured(await client.call_tool("webmem_search_trajectories", asked))
        every = structured(await client.call_tool("webmem_search_trajectories", {**asked, "all": True}))
        assert len(closest["candidates"]) == 5 and closest["scored"] == every["scored"] == len(every["candidates"])
        assert every["scored"] == 12 and all(candidate["why"] for candidate in every["candidates"])
        assert closest["candidates"] == every["candidates"][:5] and closest["best"] == every["best"] is not None
        for wrong in ("maybe", [True], {"all": True}):
            text = error_text(await client.call_tool("webmem_search_trajectories", {**asked, "all": wrong}))
            assert "all" in text and "Traceback" not in text, text
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        properties = tools["webmem_search_trajectories"].input_schema["properties"]
        assert properties["all"]["default"] is False and properties["limit"]["default"] == 5

    with_client(server, scenario)


def test_resources_and_prompt(mem: webmem.Memory) -> None:
    service = MemoryService(mem)
    started = service.start_run("Find a pie", SITE)
    service.record_step(started.run_id, action="click", target='link "Pies"', selector="#pies", url=SITE)
    service.finish_run(started.run_id, success=True)
    server = build_server(service)

    async def scenario(client: Client) -> None:
        listed = {str(resource.uri) for resource in (await client.list_resources()).resources}
        assert listed == {"webmem://runs", "webmem://lessons/tier1"}
        templates = {template.uri_template for template in (await client.list_resource_templates()).resource_templates}
        assert templates == {"webmem://runs/{run_id}", "webmem://sites/{domain}/facts",
                             "webmem://sites/{domain}/selectors", "webmem://sites/{domain}/wording"}

        async def read(uri: str) -> Any:
            return json.loads((await client.read_resource(uri)).contents[0].text)

        assert [run["run_id"] for run in (await read("webmem://runs"))["runs"]] == [started.run_id]
        assert (await read(f"webmem://runs/{started.run_id}"))["steps"][0]["selector"] == "#pies"
        facts = (await read("webmem://sites/news.example.org/facts"))["facts"]
        assert {fact["key"] for fact in facts} >= {"typical-steps"}
        assert (await read("webmem://sites/news.example.org/selectors"))["selectors"][0]["stable_selector"] == "#pies"
        wording = await read("webmem://sites/news.example.org/wording")
        assert wording["domain"] == "news.example.org" and [origin["acts"] for origin in wording["origins"]] == [[]]
        assert (await read("webmem://lessons/tier1"))["lessons"]
        prompt = await client.get_prompt("browse_with_memory", {"goal": "Find a pie", "start_url": SITE})
        text = prompt.messages[0].content.text
        assert "webmem_start_run" in text and '"Find a pie"' in text and "webmem_finish_run" in text

    with_client(server, scenario)


def test_secrets_reach_neither_the_store_nor_the_answers(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir, secrets={"NEWS_TOKEN": SECRET}) as mem:
        server = build_server(MemoryService(mem))

        async def scenario(client: Client) -> list[str]:
            texts: list[str] = []
            run_id = structured(await client.call_tool("webmem_start_run", {
                "goal": "Log in to the newsletter", "start_url": SITE}))["run_id"]
            for arguments in ({"action": "fill", "target": 'textbox "Token"', "value": SECRET, "url": SITE},
                              {"action": "fill", "target": 'textbox "PIN code"', "value": "88442297x", "secret": True},
                              {"action": "click", "target": 'button "Go"', "ok": False,
                               "error": f"Invalid token {SECRET} and pin 88442297x",
                               "url": f"{SITE}?t={SECRET.replace('-', '%2D')}"}):
                result = await client.call_tool("webmem_record_step", {"run_id": run_id, **arguments})
                texts.append(json.dumps(structured(result)))
            texts.append(json.dumps(structured(await client.call_tool("webmem_get_run", {"run_id": run_id}))))
            texts.append(json.dumps(structured(await client.call_tool("webmem_get_context", {"run_id": run_id}))))
            return texts

        answers = with_client(server, scenario)
    for text in answers:
        assert SECRET not in text and "88442297x" not in text
    assert "{NEWS_TOKEN}" in answers[0]
    stored = (memory_dir / "memory.db").read_bytes() + (memory_dir / "events.jsonl").read_bytes()
    assert SECRET.encode() not in stored and b"88442297x" not in stored


def test_the_python_api_and_mcp_store_identical_steps(tmp_path: Path) -> None:
    steps: list[dict[str, Any]] = [
        {"action": "goto", "value": SITE},
        {"action": "fill", "target": 'textbox "Email"', "selector": "#email", "value": "a@b.com", "url": SITE},
        {"action": "fill", "target": 'textbox "Password"', "selector": "#pw", "value": "hunter22", "url": SITE},
        {"action": "click", "target": 'button "Subscribe"', "url": SITE, "ok": False, "error": "Timeout 5000ms"},
        {"action": "click", "target": 'button "Subscribe"', "selector": "button.primary", "url": SITE},
    ]
    goal = "Subscribe a@b.com to the newsletter"
    with webmem.Memory.open(tmp_path / "python") as mem:
        with mem.start_run(goal=goal, start_url=SITE) as run:
            for step in steps:
                run.record_step(**step)
            run.finish(success=True, outcome="Subscribed")
        by_python = mem.runs.steps(run.id)
        python_trajectory = mem.trajectories.list()[0]
    with webmem.Memory.open(tmp_path / "mcp") as mem:
        server = build_server(MemoryService(mem))

        async def scenario(client: Client) -> str:
            run_id = structured(await client.call_tool("webmem_start_run", {"goal": goal, "start_url": SITE}))["run_id"]
            for step in steps:
                structured(await client.call_tool("webmem_record_step", {"run_id": run_id, **step}))
            structured(await client.call_tool("webmem_finish_run", {"run_id": run_id, "success": True,
                                                                     "outcome": "Subscribed"}))
            return run_id

        run_id = with_client(server, scenario)
        by_mcp = mem.runs.steps(run_id)
        mcp_trajectory = mem.trajectories.list()[0]
    assert by_mcp == by_python
    assert by_mcp[2].value == "{password}"
    assert mcp_trajectory.steps == python_trajectory.steps
    assert mcp_trajectory.goal_template == python_trajectory.goal_template


def webmem_command(memory_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "webmem", "--memory-dir", str(memory_dir), "mcp", *args]


def test_the_stdio_server_as_a_subprocess(memory_dir: Path) -> None:
    command = webmem_command(memory_dir)
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))

    async def scenario(client: Client) -> str:
        run_id = structured(await client.call_tool("webmem_start_run", {"goal": "Find a pie", "start_url": SITE}))[
            "run_id"]
        structured(await client.call_tool("webmem_record_step", {"run_id": run_id, "action": "click",
                                                                  "target": 'link "Pies"', "url": SITE}))
        structured(await client.call_tool("webmem_finish_run", {"run_id": run_id, "success": True}))
        return run_id

    run_id = with_client(parameters, scenario)
    with webmem.Memory.open(memory_dir) as mem:
        assert mem.runs.get(run_id).status == "completed"
        assert [step.target for step in mem.runs.steps(run_id)] == ['link "Pies"']


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_http(memory_dir: Path, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(webmem_command(memory_dir, "--port", str(port), *args),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read().decode() if process.stderr else "the server stopped")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process, url
        time.sleep(0.1)
    process.kill()
    raise AssertionError("webmem mcp --port did not start listening within 30 s")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def http_client(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=30)))


async def one_run(client: Client) -> str:
    run_id = structured(await client.call_tool("webmem_start_run", {"goal": "Find a pie", "start_url": SITE}))["run_id"]
    structured(await client.call_tool("webmem_finish_run", {"run_id": run_id, "success": False}))
    return run_id


def test_streamable_http_on_loopback_without_a_token(memory_dir: Path) -> None:
    process, url = start_http(memory_dir)
    try:
        async def main() -> str:
            async with http_client(url, None) as client:
                return await one_run(client)

        run_id = asyncrun.run(main)
    finally:
        stop(process)
    with webmem.Memory.open(memory_dir) as mem:
        assert mem.runs.get(run_id).status == "failed"


def test_streamable_http_with_a_token_refuses_other_requests(memory_dir: Path) -> None:
    process, url = start_http(memory_dir, "--token", "tok-123")
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "tok-123"}):
            answer = httpx2.post(url, json=body, headers={"Accept": "application/json, text/event-stream", **headers})
            assert answer.status_code == 401
            assert answer.json()["error"] == "unauthorized"

        async def main() -> str:
            async with http_client(url, "tok-123") as client:
                return await one_run(client)

        run_id = asyncrun.run(main)
    finally:
        stop(process)
    with webmem.Memory.open(memory_dir) as mem:
        assert mem.runs.get(run_id).goal == "Find a pie"


def test_command_line_refusals(memory_dir: Path) -> None:
    from click.testing import CliRunner

    from webmem.cli import cli

    runner = CliRunner()
    result = runner.invoke(cli, ["--memory-dir", str(memory_dir), "mcp", "--token", "x"])
    assert result.exit_code == 2 and "give --port" in result.output
    result = runner.invoke(cli, ["--memory-dir", str(memory_dir), "mcp", "--secret", "NOT_SET_ANYWHERE"])
    assert result.exit_code == 2 and "NOT_SET_ANYWHERE is not set" in result.output
    bad = memory_dir.parent / "secrets.env"
    bad.write_text("just a line\n")
    result = runner.invoke(cli, ["--memory-dir", str(memory_dir), "mcp", "--secrets-file", str(bad)])
    assert result.exit_code == 1 and "line 1 is not NAME=value" in result.output
    assert not (memory_dir / "memory.db").exists()  # refused before anything was opened


INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}) + "\n"
QUIET_EXIT = f"{sys.executable} -c pass"
LOUD_EXIT = f"{sys.executable} -c \"import sys; print('starting', file=sys.stderr); sys.exit('port 9 is taken')\""


@pytest.mark.parametrize(("browser", "reason"), [
    pytest.param("node /nonexistent/cli.js", "Error: Cannot find module '/nonexistent/cli.js'", id="missing-script",
                 marks=pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")),
    pytest.param("/nonexistent/browser-mcp --headless", "No such file or directory: /nonexistent/browser-mcp",
                 id="not-found"),
    pytest.param(LOUD_EXIT, ": port 9 is taken", id="exits-with-a-reason"),
    pytest.param(QUIET_EXIT, "ended before answering the MCP handshake", id="exits-silently"),
])
def test_a_browser_command_that_cannot_start_is_one_line(memory_dir: Path, browser: str, reason: str) -> None:
    finished = subprocess.run(webmem_command(memory_dir, "--browser", browser), input=INITIALIZE,
                              capture_output=True, text=True, timeout=120)
    lines = finished.stderr.splitlines()
    assert len(lines) == 1, finished.stderr
    shown = shlex.join(shlex.split(browser))  # the command as the shell would read it
    assert f'the browser command "{shown}" could not start: ' in lines[0] and reason in lines[0]
    assert finished.returncode == 1 and finished.stdout == ""


def test_hostile_arguments_are_refused_and_leave_the_store_as_it_was(mem: webmem.Memory) -> None:
    server = build_server(MemoryService(mem))

    async def scenario(client: Client) -> None:
        run_id = structured(await client.call_tool("webmem_start_run", {"goal": "Find a pie", "start_url": SITE}))[
            "run_id"]
        structured(await client.call_tool("webmem_record_step", {"run_id": run_id, "action": "click",
                                                                  "target": 'link "Pies"', "url": SITE}))
        hostile: list[tuple[str, dict[str, Any]]] = [
            ("webmem_start_run", {"goal": "x" * 2_000_000, "start_url": SITE}),
            ("webmem_start_run", {"goal": "Find\x00 a pie", "start_url": SITE}),
            ("webmem_start_run", {"goal": "Find a pie", "start_url": "http://" + "a" * 5000 + ".com/"}),
            ("webmem_record_step", {"run_id": run_id, "action": "click", "value": "a\x00b"}),
            ("webmem_record_step", {"run_id": run_id, "action": "", "target": "x"}),
            ("webmem_record_step", {"run_id": run_id, "action": "click", "url": "file:///etc/passwd"}),
            ("webmem_record_step", {"run_id": "../../etc/passwd", "action": "click"}),
            ("webmem_record_step", {"run_id": run_id, "action": ["click"]}),
            ("webmem_get_context", {"run_id": run_id, "budget_tokens": 10**12}),
            ("webmem_search_trajectories", {"goal": "", "url": SITE}),
            ("webmem_list_runs", {"status": "exploded"}),
            ("webmem_recall_lessons", {"domain": "a/b"}),
            ("nonexistent_tool", {}),
        ]
        for tool, arguments in hostile:
            text = error_text(await client.call_tool(tool, arguments))
            assert "Traceback" not in text and len(text) < 5000, (tool, text[:300])
        detail = structured(await client.call_tool("webmem_get_run", {"run_id": run_id}))
        assert [step["target"] for step in detail["steps"]] == ['link "Pies"']
        assert detail["run"]["status"] == "running"

    with_client(server, scenario)
    assert len(mem.runs.list()) == 1

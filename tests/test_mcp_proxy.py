"""The recording proxy in front of the real Playwright MCP (npm's ``@playwright/mcp``) driving headless
Chromium on a local page: record a run, replay it for a new value with no LLM turn, see a changed page
stop the replay with a clear report; secrets never reach the store or an answer."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shlex
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import asyncrun
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.subscriptions import ToolsListChanged
from mcp.types import ToolListChangedNotification

import webmem
from webmem.agent.browser import find_chromium
from webmem.mcp.proxy import UNFINISHED, build_proxy
from webmem.service import MemoryService

ROOT = Path(__file__).resolve().parent.parent
PLAYWRIGHT_MCP = ROOT / ".cache" / "node" / "node_modules" / "@playwright" / "mcp" / "cli.js"
SITE_DIR = Path(__file__).parent / "sites" / "newsletter"
PASSWORD = "Tr0ub4dor&3-news"


@pytest.fixture
def newsletter(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The newsletter page served on 127.0.0.1 from a copy the test may change."""
    with served(SITE_DIR, tmp_path / "site") as site:
        yield site


@contextmanager
def served(site: Path, root: Path) -> Iterator[tuple[str, Path]]:
    """A copy of ``site`` at ``root``, served on 127.0.0.1 (a port, and so an origin, of its own)."""
    shutil.copytree(site, root)
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", root
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")  # a page the test changes is read anew by the same browser
        super().end_headers()


def browser_command() -> list[str]:
    assert PLAYWRIGHT_MCP.is_file(), f"{PLAYWRIGHT_MCP} is missing: run scripts/setup.sh (it installs @playwright/mcp)"
    command = ["node", str(PLAYWRIGHT_MCP), "--headless", "--isolated", "--no-sandbox", "--timeout-action", "2000"]
    chromium = find_chromium()
    return [*command, "--executable-path", chromium] if chromium else command


class Session:
    """A client of the proxy that keeps every text it was answered."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.texts: list[str] = []

    async def call(self, tool: str, arguments: dict[str, Any] | None = None, *, ok: bool = True) -> Any:
        result = await self.client.call_tool(tool, arguments or {})
        self.texts.extend(item.text for item in result.content if hasattr(item, "text"))
        if result.structured_content is not None:
            self.texts.append(json.dumps(result.structured_content))
        assert result.is_error is not ok, result.content
        return result

    def text(self, result: Any) -> str:
        return "\n".join(item.text for item in result.content if hasattr(item, "text"))


def run_proxy(memory: webmem.Memory, workdir: Path, scenario: Any) -> tuple[Any, list[str]]:
    proxy = build_proxy(MemoryService(memory), browser_command(), cwd=str(workdir), log_level="WARNING")

    async def main() -> tuple[Any, list[str]]:
        async with proxy.connected():
            async with Client(proxy) as client:
                session = Session(client)
                return await scenario(session), session.texts

    return asyncrun.run(main)


def test_record_then_replay_for_a_new_value_then_a_changed_page_stops_it(
    newsletter: tuple[str, Path], memory_dir: Path, tmp_path: Path
) -> None:
    url, root = newsletter

    async def record(session: Session) -> str:
        tools = {tool.name for tool in (await session.client.list_tools()).tools}
        assert {"browser_navigate", "browser_click", "webmem_start_run", "webmem_replay"} <= tools
        assert "webmem_record_step" not in tools  # the proxy records the browser calls itself
        started = (await session.call("webmem_start_run", {
            "goal": "Subscribe a@b.com to the newsletter", "start_url": url})).structured_content
        await session.call("browser_navigate", {"url": url})
        snapshot = session.text(await session.call("browser_snapshot"))
        refs = {name: line.split("[ref=")[1].split("]")[0] for line in snapshot.splitlines()
                for name in ('textbox "Email"', 'textbox "Password"', 'button "Subscribe"') if name in line}
        await session.call("browser_type", {"element": "Email", "target": refs['textbox "Email"'], "text": "a@b.com"})
        await session.call("browser_type", {"element": "Password", "target": refs['textbox "Password"'],
                                            "text": PASSWORD})
        await session.call("browser_click", {"element": "Subscribe", "target": refs['button "Subscribe"']})
        assert "Subscribed a@b.com" in session.text(await session.call("browser_snapshot"))
        await session.call("webmem_finish_run", {"run_id": started["run_id"], "success": True})
        return str(started["run_id"])

    with webmem.Memory.open(memory_dir, secrets={"NEWS_PASSWORD": PASSWORD}) as mem:
        recorded_run, texts = run_proxy(mem, tmp_path, record)
        steps = mem.runs.steps(recorded_run)
    assert [(step.action, step.target, step.value) for step in steps] == [
        ("goto", None, url),
        ("fill", 'textbox "Email"', "a@b.com"),
        ("fill", 'textbox "Password"', "{NEWS_PASSWORD}"),
        ("click", 'button "Subscribe"', None),
    ]
    assert steps[1].selector == 'role=textbox[name="Email"]' and steps[1].url == url

    async def replay(session: Session) -> dict[str, Any]:
        started = (await session.call("webmem_start_run", {
            "goal": "Subscribe c@d.org to the newsletter", "start_url": url})).structured_content
        assert started["replay"] is not None, started["replay_unavailable"]
        result = (await session.call("webmem_replay", {"run_id": started["run_id"]})).structured_content
        assert "Subscribed c@d.org" in session.text(await session.call("browser_snapshot"))
        await session.call("webmem_finish_run", {"run_id": started["run_id"], "success": True})
        return {"run_id": started["run_id"], **result}

    with webmem.Memory.open(memory_dir, secrets={"NEWS_PASSWORD": PASSWORD}) as mem:
        replayed, more = run_proxy(mem, tmp_path, replay)
        texts += more
        assert replayed["outcome"] == "replayed" and replayed["steps_done"] == replayed["steps_total"] == 4
        manifest = mem.runs.get(replayed["run_id"])
        assert manifest.replay is not None and manifest.replay.outcome == "replayed"
        assert [step.value for step in mem.runs.steps(replayed["run_id"])] == [
            url, "c@d.org", "{NEWS_PASSWORD}", None]

    page = root / "index.html"
    page.write_text(page.read_text().replace(">Subscribe</button>", ">Join</button>"))

    async def replay_changed(session: Session) -> dict[str, Any]:
        started = (await session.call("webmem_start_run", {
            "goal": "Subscribe e@f.net to the newsletter", "start_url": url})).structured_content
        result = (await session.call("webmem_replay", {"run_id": started["run_id"]})).structured_content
        snapshot = session.text(await session.call("browser_snapshot"))
        assert 'textbox "Email"' in snapshot and "e@f.net" in snapshot  # steps before the mismatch were done
        return result

    with webmem.Memory.open(memory_dir, secrets={"NEWS_PASSWORD": PASSWORD}) as mem:
        stopped, more = run_proxy(mem, tmp_path, replay_changed)
        texts += more
    assert stopped["outcome"] == "handed_over" and stopped["stopped_at"] == 4 and stopped["steps_done"] == 3
    assert 'button "Subscribe" is not on the page' in stopped["reason"]
    assert "Replay stopped at step 4 of 4" in stopped["summary"] and "take over" in stopped["summary"]
    assert stopped["report"]["steps"][-1]["status"] in ("missed", "stale")

    for text in texts:
        assert PASSWORD not in text
    stored = (memory_dir / "memory.db").read_bytes() + (memory_dir / "events.jsonl").read_bytes()
    assert PASSWORD.encode() not in stored


def test_an_agent_that_never_calls_webmem_is_recorded_and_told_what_memory_knows(
    newsletter: tuple[str, Path], memory_dir: Path, tmp_path: Path
) -> None:
    url, _ = newsletter
    domain = url.split("//")[1].rstrip("/")
    with webmem.Memory.open(memory_dir) as mem:
        earlier = mem.start_run(goal="Read the newsletter page", start_url=url)
        earlier.finish(success=True, outcome="Read it")
        mem.lessons.record("A button that matches no element was renamed: take a snapshot and look for it.",
                           "tool_fallback", failed_command="click", error_pattern="does not match any elements",
                           domain=domain, recovery="snapshot")

        async def browse(session: Session) -> list[str]:
            first = session.text(await session.call("browser_navigate", {"url": url}))
            failed = session.text(await session.call("browser_click", {
                "element": "Unsubscribe", "target": 'getByRole("button", { name: "Unsubscribe" })'}, ok=False))
            return [first, failed]

        (first, failed), _ = run_proxy(mem, tmp_path, browse)
        assert "### Memory" in first and "webmem is recording this session as run" in first
        assert f"What memory knows about {domain}" in first and "Read the newsletter page" in first
        assert "### Memory" in failed and "take a snapshot and look for it" in failed
        auto = [run for run in mem.runs.list() if run.run_id != earlier.id]
        assert len(auto) == 1 and auto[0].status == "failed" and auto[0].summary == UNFINISHED
        assert [(step.action, step.ok) for step in mem.runs.steps(auto[0].run_id)] == [("goto", True), ("click", False)]


def readme_proxy_configurations() -> dict[str, list[str]]:
    """The README's proxy configurations (``--browser`` in the args of ``webmem mcp``), by the browser they run."""
    found: dict[str, list[str]] = {}
    for block in re.findall(r"```json\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S):
        for server in json.loads(block)["mcpServers"].values():
            if "--browser" in server["args"]:
                command = [server["command"], *server["args"]]
                found["chromium" if "--executable-path" in command[-1] else "chrome"] = command
    assert set(found) == {"chrome", "chromium"}, "the README shows the proxy with Chrome and with Linux's Chromium"
    return found


def test_the_readmes_linux_proxy_configuration_runs_as_pasted(newsletter: tuple[str, Path], tmp_path: Path) -> None:
    configurations = readme_proxy_configurations()
    linux = configurations["chromium"]
    browser = shlex.split(linux[-1])
    assert browser[:2] == ["npx", "@playwright/mcp@latest"]
    assert shlex.split(configurations["chrome"][-1]) == [  # the same, less what Linux's Chromium needs
        part for part in browser if part not in ("--browser", "chromium", "--executable-path", "/usr/bin/chromium")]
    assert browser[browser.index("--browser") + 1] == "chromium"
    chromium = browser[browser.index("--executable-path") + 1]
    if not Path(chromium).is_file():
        chromium = find_chromium() or pytest.skip(f"no Chromium at {chromium} nor on PATH")
    # Only what is local changes: npx cannot fetch @playwright/mcp without the network, so the copy that
    # scripts/setup.sh installed runs instead; this interpreter's webmem, a memory in tmp_path, and
    # Chromium where this machine has it when it is not at the README's path.
    assert PLAYWRIGHT_MCP.is_file(), f"{PLAYWRIGHT_MCP} is missing: run scripts/setup.sh (it installs @playwright/mcp)"
    browser = ["node", str(PLAYWRIGHT_MCP), *browser[2:]]
    browser[browser.index("--executable-path") + 1] = chromium
    assert linux[0] == "webmem" and linux[1] == "--memory-dir"
    command = [sys.executable, "-m", "webmem", "--memory-dir", str(tmp_path / "memory"), *linux[3:-1],
               shlex.join(browser)]
    url, _ = newsletter
    parameters = StdioServerParameters(command=command[0], args=command[1:], cwd=str(tmp_path),
                                       env={**os.environ, "SHOP_PASSWORD": "Tr0ub4dor&3-shop"})

    async def scenario() -> str:
        async with Client(parameters) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"browser_navigate", "browser_click", "browser_snapshot", "webmem_start_run"} <= tools
            result = await client.call_tool("browser_navigate", {"url": url})
            text = "\n".join(item.text for item in result.content if hasattr(item, "text"))
            assert not result.is_error, text
            return text

    assert "Page Title: Newsletter" in asyncrun.run(scenario)


HELPDESK_DIR = Path(__file__).parent / "sites" / "helpdesk"
TICKET = 'Create a ticket titled "{}" with priority {}'
PRIORITIES = ["Low", "Normal", "High", "Urgent"]


def test_a_sites_remembered_task_is_a_tool_while_the_browser_is_on_it(
    newsletter: tuple[str, Path], memory_dir: Path, tmp_path: Path
) -> None:
    other_site, _ = newsletter
    changes: list[str] = []
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        nonlocal changed
        if isinstance(message, ToolListChangedNotification):
            changes.append("tools")
            changed.set()

    async def told(session: Session, tool: str, arguments: dict[str, Any]) -> set[str]:
        """Call ``tool``, see the client told that the tools changed, and list them."""
        nonlocal changed
        changed = anyio.Event()
        await session.call(tool, arguments)
        with anyio.fail_after(60):  # the notification comes before the answer: this only guards a hang
            await changed.wait()
        return {tool.name for tool in (await session.client.list_tools()).tools}

    async def create_ticket(session: Session, url: str, title: str, priority: str) -> set[str]:
        """Record the task as an agent does it through the proxy: the tools once its run is finished."""
        started = (await session.call("webmem_start_run", {"goal": TICKET.format(title, priority),
                                                           "start_url": url})).structured_content
        await session.call("browser_navigate", {"url": url})
        snapshot = session.text(await session.call("browser_snapshot"))
        refs = {name: line.split("[ref=")[1].split("]")[0] for line in snapshot.splitlines()
                for name in ('textbox "Summary"', 'combobox "Priority"', 'button "Create ticket"') if name in line}
        await session.call("browser_type", {"element": "Summary", "target": refs['textbox "Summary"'], "text": title})
        await session.call("browser_select_option", {"element": "Priority", "target": refs['combobox "Priority"'],
                                                     "values": [priority]})
        await session.call("browser_click", {"element": "Create ticket", "target": refs['button "Create ticket"']})
        return await told(session, "webmem_finish_run", {"run_id": started["run_id"], "success": True})

    with served(HELPDESK_DIR, tmp_path / "helpdesk") as (url, root), webmem.Memory.open(memory_dir) as mem:
        proxy = build_proxy(MemoryService(mem), browser_command(), cwd=str(tmp_path), log_level="WARNING")

        async def scenario() -> dict[str, Any]:
            async with proxy.connected(), Client(proxy, mode="legacy", message_handler=on_message) as client:
                assert client.server_capabilities.tools.list_changed is True
                session = Session(client)
                assert not any(tool.name.startswith("skill_") for tool in (await client.list_tools()).tools)
                assert "skill_create_ticket" in await create_ticket(session, url, "Printer jam", "High")
                assert "skill_create_ticket" not in await told(session, "browser_navigate", {"url": other_site})
                assert "skill_create_ticket" in await told(session, "browser_navigate", {"url": url})
                tool = next(t for t in (await client.list_tools()).tools if t.name == "skill_create_ticket")
                assert tool.input_schema["required"] == ["summary", "priority"]
                assert tool.input_schema["properties"]["priority"]["enum"] == PRIORITIES
                assert tool.input_schema["properties"]["summary"]["type"] == "string"
                assert "Status: unverified" in (tool.description or "")

                done = (await session.call("skill_create_ticket", {"summary": "Disk full", "priority": "urgent"}))
                assert done.structured_content["outcome"] == "done", done.structured_content
                assert 'Created "Disk full" with priority Urgent' in session.text(done)
                assert 'Created "Disk full" with priority Urgent' in session.text(await session.call("browser_snapshot"))
                refused = session.text(await session.call("skill_create_ticket", {
                    "summary": "Disk full", "priority": "Someday"}, ok=False))
                assert refused == "InvalidInput: priority: 'Someday' is not one of the options: " + ", ".join(PRIORITIES)
                found = (await session.call("webmem_find_skill", {"query": "new tickets"})).structured_content
                assert [skill["name"] for skill in found["skills"]] == ["create_ticket"]

                page = root / "index.html"
                page.write_text(page.read_text().replace(">Create ticket</button>", ">Open ticket</button>"))
                handed = (await session.call("webmem_call_skill", {"skill_id": found["skills"][0]["id"], "parameters": {
                    "summary": "Fan noise", "priority": "Low"}})).structured_content
                assert handed["outcome"] == "handed_over" and handed["stopped_at"] == 4, handed
                assert 'button "Open ticket"' in handed["snapshot"]  # the page as it is, to carry on from
                await session.call("browser_click", {"element": "Open ticket",
                                                     "target": 'getByRole("button", { name: "Open ticket" })'})
                await session.call("webmem_finish_run", {"run_id": handed["run_id"], "success": True})

                async with Client(proxy) as listener, listener.listen(tools_list_changed=True) as events:
                    # a client of the 2026-07-28 protocol is told on its subscription stream
                    assert "skill_create_ticket" not in await told(session, "browser_navigate", {"url": "about:blank"})
                    with anyio.fail_after(60):
                        assert isinstance(await anext(events), ToolsListChanged)
                    assert not any(tool.name.startswith("skill_") for tool in (await listener.list_tools()).tools)
                return {"done": done.structured_content, "handed": handed}

        runs = asyncrun.run(scenario)
        done = mem.runs.get(runs["done"]["run_id"])
        assert done.success is True and done.replay is not None and done.replay.outcome == "replayed"
        assert done.goal == TICKET.format("Disk full", "Urgent")
        handed = mem.runs.get(runs["handed"]["run_id"])
        assert handed.success is True and handed.replay is not None and handed.replay.outcome == "handed_over"
        steps = mem.runs.steps(handed.run_id)
        assert [(step.action, step.ok) for step in steps] == [
            ("goto", True), ("fill", True), ("select", True), ("click", False), ("click", True)]
        assert steps[-1].target == 'button "Open ticket"'  # the replay's steps, then the agent's
        skill = mem.skills.get("create_ticket", url)
        assert skill.status == "verified" and skill.record.replays == 2 and skill.record.handovers == 1
        shown = {(option.option, option.value, option.field) for option in mem.trajectories.field_options(url)}
        assert {(option, "high", "Priority") for option in ("low", "normal", "urgent")} <= shown  # from the snapshot
    assert len(changes) >= 3


FILTERS_DIR = Path(__file__).parent / "sites" / "filters"
#: Each filter: its field, chosen in the select "And", then its value, set in the field that choice added.
BY_PRIORITY = [("Priority", "browser_select_option", 'select[name="0_priority"]')]
BY_OWNER = [("Owner", "browser_type", 'input[name="0_owner"]')]
BY_TYPE_AND_PRIORITY = [("Priority", "browser_select_option", 'select[name="0_priority"]'),
                        ("Type", "browser_select_option", 'select[name="0_type"]')]


def test_a_filters_field_chosen_in_one_select_is_a_skill_of_its_own_and_every_choice_is_kept(
    memory_dir: Path, tmp_path: Path
) -> None:
    """A query page adds a filter's row when its field is chosen in the select "And" (blank again after each
    choice); the row's field is known only by a selector that names the filter's field. Each field is a task
    of its own (the value box of one is not another's), and a second filter's field is no correction of the
    first: the proxy records the page each choice was made on, and a skill's replay the page its plan's step was."""

    async def record(session: Session, url: str, goal: str, filters: list[tuple[str, str, str]],
                     values: list[str]) -> None:
        started = (await session.call("webmem_start_run", {"goal": goal, "start_url": url})).structured_content
        await session.call("browser_navigate", {"url": url})
        for field, _, _ in filters:
            snapshot = session.text(await session.call("browser_snapshot"))
            ref = next(line.split("[ref=")[1].split("]")[0] for line in snapshot.splitlines() if 'combobox "And"' in line)
            await session.call("browser_select_option", {"element": "And", "target": ref, "values": [field]})
        for (field, tool, selector), value in zip(filters, values):
            given = {"values": [value]} if tool == "browser_select_option" else {"text": value}
            await session.call(tool, {"element": f"the {field} filter's value", "target": selector, **given})
        await session.call("browser_click", {"element": "Update", "target": 'getByRole("button", { name: "Update" })'})
        await session.call("webmem_finish_run", {"run_id": started["run_id"], "success": True})

    async def call(session: Session, skill: str, parameters: dict[str, str]) -> str:
        done = (await session.call(skill, parameters)).structured_content
        assert done["outcome"] == "done", done
        return session.text(await session.call("browser_snapshot"))

    with served(FILTERS_DIR, tmp_path / "filters") as (url, _), webmem.Memory.open(memory_dir) as mem:
        async def scenario(session: Session) -> None:
            await record(session, url, "Show the tickets with priority blocker", BY_PRIORITY, ["blocker"])
            await record(session, url, "Show the tickets with owner farah", BY_OWNER, ["farah"])
            await record(session, url, "Show the tickets of type task with priority minor", BY_TYPE_AND_PRIORITY,
                         ["minor", "task"])
            await session.call("browser_navigate", {"url": url})
            assert "Filtered by owner=alice" in await call(session, "skill_tickets_owner", {"owner": "alice"})
            assert "Filtered by priority=major" in await call(session, "skill_tickets_priority", {"priority": "major"})
            for kind, priority in (("defect", "trivial"), ("enhancement", "critical")):
                shown = await call(session, "skill_tickets_type", {"type": kind, "priority": priority})
                assert f"Filtered by priority={priority}, type={kind}" in shown

        run_proxy(mem, tmp_path, scenario)
        templates = {trajectory.goal: trajectory for trajectory in mem.trajectories.list()}
    assert templates["Show the tickets with priority blocker"].goal_template == "Show the tickets with priority {1}"
    assert templates["Show the tickets with owner alice"].goal_template == "Show the tickets with owner {1}"
    for goal in ("Show the tickets of type task with priority minor",  # recorded, then replayed as a skill
                 "Show the tickets of type defect with priority trivial"):
        steps = templates[goal].replay_steps
        assert [step.value for step in steps if step.target == 'combobox "And"'] == ["Priority", "Type"], goal


def test_a_goal_done_by_calling_skills_is_recorded_whole_and_becomes_a_skill_of_its_own(
    memory_dir: Path, tmp_path: Path
) -> None:
    """An agent asked for two tickets calls the ticket skill twice inside its own run: that run holds both calls'
    steps, so its recording replays the whole goal and is a skill of its own."""
    composed = TICKET.format("Disk full", "Urgent") + ", then c" + TICKET.format("Fan noise", "Low")[1:]

    with served(HELPDESK_DIR, tmp_path / "helpdesk") as (url, _), webmem.Memory.open(memory_dir) as mem:
        async def scenario(session: Session) -> str:
            started = (await session.call("webmem_start_run", {"goal": TICKET.format("Printer jam", "High"),
                                                               "start_url": url})).structured_content
            await session.call("browser_navigate", {"url": url})
            snapshot = session.text(await session.call("browser_snapshot"))
            refs = {name: line.split("[ref=")[1].split("]")[0] for line in snapshot.splitlines()
                    for name in ('textbox "Summary"', 'combobox "Priority"', 'button "Create ticket"') if name in line}
            await session.call("browser_type", {"element": "Summary", "target": refs['textbox "Summary"'],
                                                "text": "Printer jam"})
            await session.call("browser_select_option", {"element": "Priority", "target": refs['combobox "Priority"'],
                                                         "values": ["High"]})
            await session.call("browser_click", {"element": "Create ticket", "target": refs['button "Create ticket"']})
            await session.call("webmem_finish_run", {"run_id": started["run_id"], "success": True})
            outer = (await session.call("webmem_start_run", {"goal": composed, "start_url": url})).structured_content
            for summary, priority in (("Disk full", "Urgent"), ("Fan noise", "Low")):
                done = (await session.call("skill_create_ticket", {"summary": summary, "priority": priority}))
                assert done.structured_content["outcome"] == "done", done.structured_content
            await session.call("webmem_finish_run", {"run_id": outer["run_id"], "success": True})
            return outer["run_id"]

        outer_run, _ = run_proxy(mem, tmp_path, scenario)
        steps = mem.runs.steps(outer_run)
        assert [(step.action, step.value) for step in steps if step.action in ("fill", "select")] == [
            ("fill", "Disk full"), ("select", "Urgent"), ("fill", "Fan noise"), ("select", "Low")]
        skills = {skill.name: skill for skill in mem.skills.list(url)}
        whole = next(skill for skill in skills.values() if "then" in skill.template)
        assert [parameter.example for parameter in whole.parameters] == ["Disk full", "Urgent", "Fan noise", "Low"]
        plan = mem.skills.plan(whole, {parameter.name: value for parameter, value in zip(
            whole.parameters, ("Toner low", "Normal", "Jammed tray", "High"))})
        assert [step.value for step in plan.steps if step.action in ("fill", "select")] == [
            "Toner low", "Normal", "Jammed tray", "High"]

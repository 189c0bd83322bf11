"""webmem with browser-use, offline: a real browser-use Agent in headless Chromium on a local page,
driven by a scripted chat model (tests/scripted_chat.py); no network, no real LLM."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncrun
import pytest

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("BROWSER_USE_CLOUD_SYNC", "false")

from browser_use import BrowserProfile, BrowserSession  # noqa: E402
from browser_use.llm.schema import SchemaOptimizer  # noqa: E402
from scripted_chat import ScriptedChat, page_elements  # noqa: E402

import webmem  # noqa: E402
from webmem.agent.browser import find_chromium  # noqa: E402
from webmem.integrations.browser_use import run_with_memory  # noqa: E402
from webmem.integrations.browser_use.chat import MEMORY_CLOSE, MEMORY_OPEN  # noqa: E402
from webmem.interop.transfer import KINDS, collect, render  # noqa: E402

SITE_DIR = Path(__file__).parent / "sites" / "newsletter"
TICKETS_DIR = Path(__file__).parent / "sites" / "tickets"
OWNERS = ("alice", "bob", "carol")
PRIORITIES = ("major", "minor", "critical")
PASSWORD = "Tr0ub4dor&3-news"
SENSITIVE = {"news_password": PASSWORD}
AGENT_OPTIONS = {"use_judge": False, "enable_planning": False, "use_vision": False, "max_failures": 1}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def newsletter(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield from serve(SITE_DIR, tmp_path / "site")


@pytest.fixture
def tickets(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield from serve(TICKETS_DIR, tmp_path / "site")


def serve(site: Path, root: Path) -> Iterator[tuple[str, Path]]:
    shutil.copytree(site, root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", root
    server.shutdown()
    server.server_close()


def browser_session() -> BrowserSession:
    profile = BrowserProfile(executable_path=find_chromium(), headless=True, args=["--no-sandbox", "--disable-gpu"],
                             enable_default_extensions=False, keep_alive=True)
    return BrowserSession(browser_profile=profile)


def subscribe(memory: webmem.Memory, url: str, email: str, llm: ScriptedChat, **options: Any) -> tuple[Any, str]:
    """Run the task (``options``: the agent's, over AGENT_OPTIONS); the page's status line afterwards."""

    async def main() -> tuple[Any, str]:
        session = browser_session()
        try:
            result = await run_with_memory(memory, f"Subscribe {email} to the newsletter", llm=llm, start_url=url,
                                           browser_session=session, sensitive_data=SENSITIVE, max_steps=8,
                                           **{**AGENT_OPTIONS, **options})
            page = await session.get_current_page()
            status = await page.evaluate("() => document.getElementById('result').textContent")
            return result, str(status)
        finally:
            await session.kill()

    return asyncrun.run(main)


def test_record_replay_hand_over_and_heal(newsletter: tuple[str, Path], memory_dir: Path) -> None:
    url, root = newsletter
    with webmem.Memory.open(memory_dir) as mem:
        cold_llm = ScriptedChat()
        cold, status = subscribe(mem, url, "a@b.com", cold_llm)
        assert cold.success and status == "Subscribed a@b.com" and cold.replay is None
        assert cold.llm_calls == cold_llm.calls == 4  # email, password, click, done
        assert all(MEMORY_OPEN in str(messages[-1].content) for messages in cold_llm.messages)
        steps = mem.runs.steps(cold.run_id)
        assert [(step.action, step.target, step.value) for step in steps] == [
            ("goto", None, url), ("fill", 'textbox "Email"', "a@b.com"),
            ("fill", 'textbox "Password"', "{news_password}"), ("click", 'button "Subscribe"', None)]
        assert steps[1].selector == "#email" and steps[3].selector and steps[3].selector.startswith("xpath=")

        warm_llm = ScriptedChat()
        warm, status = subscribe(mem, url, "c@d.org", warm_llm)
        assert warm.success and status == "Subscribed c@d.org"
        assert warm.llm_calls == warm_llm.calls == 0 and warm.replay is not None and warm.replay.outcome == "replayed"

        page = root / "index.html"
        page.write_text(page.read_text().replace(">Subscribe</button>", ">Join</button>"))
        healing_llm = ScriptedChat()
        healed, status = subscribe(mem, url, "e@f.net", healing_llm)
        assert healed.success and status == "Subscribed e@f.net" and healed.final_result == "Subscribed e@f.net"
        assert healed.replay is not None and healed.replay.outcome == "handed_over" and healed.replay.step == 4
        assert 'button "Subscribe" is not on the page' in (healed.replay.reason or "")
        assert healing_llm.calls == 2  # the agent only clicked and finished: the replay had typed both fields
        handed = str(healing_llm.messages[0][-1].content)
        assert "Steps already done" in handed and MEMORY_OPEN in handed
        assert [step.target for step in mem.runs.steps(healed.run_id)][-1] == 'button "Join"'

        next_llm = ScriptedChat()
        again, status = subscribe(mem, url, "g@h.io", next_llm)
        assert again.success and status == "Subscribed g@h.io" and next_llm.calls == 0  # the healed run is replayed
        assert mem.runs.get(again.run_id).replay.outcome == "replayed"

    stored = b"".join((memory_dir / name).read_bytes() for name in ("memory.db", "events.jsonl"))
    assert PASSWORD.encode() not in stored
    with webmem.Memory.open(memory_dir) as mem:
        exported = render(mem, collect(mem, KINDS), "json")
    assert PASSWORD not in exported and "{news_password}" in exported


def test_after_a_hand_over_the_memory_advises_no_step_of_the_abandoned_path(
        newsletter: tuple[str, Path], memory_dir: Path) -> None:
    url, root = newsletter
    with webmem.Memory.open(memory_dir) as mem:
        subscribe(mem, url, "a@b.com", ScriptedChat())
        page = root / "index.html"
        page.write_text(page.read_text().replace(">Subscribe</button>", ">Join</button>"))
        llm = ScriptedChat()
        healed, status = subscribe(mem, url, "e@f.net", llm)
        assert healed.success and status == "Subscribed e@f.net"
        assert healed.replay is not None and healed.replay.outcome == "handed_over" and healed.replay.step == 4
        assert llm.calls == 2
        for messages in llm.messages:
            told = str(messages[-1].content)
            block = told[told.index(MEMORY_OPEN):told.index(MEMORY_CLOSE)]
            assert 'click button "Subscribe"' not in block and "REFERENCE TRAJECTORY" not in block
            assert "REPLAY HANDED OVER" in block and "handed over to you at its step 4" in block
            assert 'button "Subscribe" is not on the page any more' in block
            assert '3. fill textbox "Password"' in block  # done, and said so


def test_a_run_done_by_replay_answers_as_an_agent_would(newsletter: tuple[str, Path], memory_dir: Path) -> None:
    url, _ = newsletter
    with webmem.Memory.open(memory_dir) as mem:
        subscribe(mem, url, "a@b.com", ScriptedChat())
        llm = ScriptedChat()
        warm, status = subscribe(mem, url, "c@d.org", llm)
        assert status == "Subscribed c@d.org" and llm.calls == 0 and warm.replay.outcome == "replayed"
        assert warm.final_result == "Subscribed c@d.org"  # what the page's status line says now
        history = warm.history
        assert history.is_done() and history.is_successful() and history.final_result() == "Subscribed c@d.org"
        assert len(history.history) == 5 and history.urls()[1:] == [url] * 4  # goto, email, password, click; done
        assert mem.runs.get(warm.run_id).summary == "Subscribed c@d.org"


def test_the_judge_gets_no_memory_and_is_no_decision(newsletter: tuple[str, Path], memory_dir: Path) -> None:
    url, _ = newsletter
    with webmem.Memory.open(memory_dir) as mem:
        llm = ScriptedChat()
        result, status = subscribe(mem, url, "a@b.com", llm, use_judge=True)
        assert result.success and status == "Subscribed a@b.com"
        assert llm.kinds == ["step"] * 4 + ["judge"]
        assert result.llm_calls == 4 and result.other_llm_calls == 1
        judged = llm.messages[-1]
        assert "judge" in str(judged[0].content)  # browser-use's own judge prompt
        assert not any(MEMORY_OPEN in str(message.content) for message in judged)
        assert all(MEMORY_OPEN in str(messages[-1].content) for messages in llm.messages[:4])
        assert result.history.judgement()["verdict"] is True


def test_a_failing_llm_is_a_failed_run(newsletter: tuple[str, Path], memory_dir: Path) -> None:
    url, _ = newsletter
    with webmem.Memory.open(memory_dir) as mem:
        result, status = subscribe(mem, url, "a@b.com", ScriptedChat(fail_with="the model endpoint refused"))
        assert not result.success and status == ""
        manifest = mem.runs.get(result.run_id)
        assert manifest.status == "failed" and "did not finish" in (manifest.summary or "")
        assert mem.trajectories.list() == []


def test_webmem_installs_beside_browser_use() -> None:
    import importlib.metadata
    import subprocess
    import sys

    checked = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # webmem[test] with browser-use and mcp
    major, minor = (int(part) for part in importlib.metadata.version("browser-use").split(".")[:2])
    assert (major, minor) >= (0, 13)


def test_browser_use_elements_become_role_name_targets_and_stable_selectors() -> None:
    from webmem.integrations.browser_use.steps import element_role, element_selector, placeholders

    assert element_role("input", {"type": "password"}) == "textbox"
    assert element_role("input", {"type": "checkbox"}) == "checkbox"
    assert element_role("input", {"type": "hidden"}) is None
    assert element_role("a", {"href": "/x"}) == "link" and element_role("a", {}) is None
    assert element_role("div", {"role": "tab selected"}) == "tab"
    assert element_role("select", {"multiple": ""}) == "listbox"
    assert element_selector("input", {"id": "email"}, "html/body/input") == "#email"
    assert element_selector("input", {"id": "9 bad", "name": "q"}, "html/body/input") == 'input[name="q"]'
    assert element_selector("button", {}, "html/body/form/button") == "xpath=/html/body/form/button"
    assert placeholders("<secret>news_password</secret> and <secret>x</secret>") == "{news_password} and {x}"


def record_ticket(mem: webmem.Memory, url: str, title: str, owner: str, priority: str) -> None:
    """A run that created a ticket through the page's form, recorded through webmem's Python API."""
    run = mem.start_run(goal=f'Create a ticket titled "{title}" assigned to {owner} with priority {priority}',
                        start_url=url)
    run.record_step(action="goto", url=url)
    run.record_step(action="fill", target='textbox "Summary"', selector="#summary", value=title, url=url)
    run.record_step(action="select", target='combobox "Owner"', selector="#owner", value=owner, url=url,
                    element=webmem.ElementSignals(label="Owner", options=OWNERS))
    run.record_step(action="select", target='combobox "Priority"', selector="#priority", value=priority, url=url,
                    element=webmem.ElementSignals(label="Priority", options=PRIORITIES))
    run.record_step(action="click", target='button "Create ticket"', url=url)
    run.finish(success=True, outcome=f'Created ticket "{title}"')


def file_ticket(memory: webmem.Memory, url: str, task: str, llm: ScriptedChat, **options: Any) -> tuple[Any, str]:
    """Run ``task`` on the tickets page; the page's status line afterwards."""

    async def main() -> tuple[Any, str]:
        session = browser_session()
        try:
            result = await run_with_memory(memory, task, llm=llm, start_url=url, browser_session=session, max_steps=5,
                                           **{**AGENT_OPTIONS, **options})
            page = await session.get_current_page()
            return result, str(await page.evaluate("() => document.getElementById('result').textContent"))
        finally:
            await session.kill()

    return asyncrun.run(main)


def offered_action(output_format: Any, name: str) -> dict[str, Any] | None:
    """The JSON schema of action ``name`` in the output format browser-use asks the model for, as a model gets it."""
    def find(node: Any) -> dict[str, Any] | None:
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict) and name in node["properties"]:
                return node["properties"][name]
            return next((found for value in node.values() if (found := find(value)) is not None), None)
        if isinstance(node, list):
            return next((found for value in node if (found := find(value)) is not None), None)
        return None

    return find(SchemaOptimizer.create_optimized_json_schema(output_format))


def test_a_sites_skills_are_actions_the_agent_calls_with_its_values_unless_turned_off(
        tickets: tuple[str, Path], memory_dir: Path) -> None:
    url, _ = tickets
    with webmem.Memory.open(memory_dir) as mem:
        record_ticket(mem, url, "Crash on save", "alice", "major")
        record_ticket(mem, url, "Login page slow", "bob", "minor")
        skill = mem.skills.get("create_ticket", url)
        assert skill.status == "unverified"
        llm = ScriptedChat(actions=[
            {"skill_create_ticket": {"summary": "Export fails", "owner": "dave", "priority": "critical"}},
            {"skill_create_ticket": {"summary": "Export fails", "owner": "carol", "priority": "critical"}},
        ])
        result, status = file_ticket(mem, url, "Carol needs a critical ticket about the failing export", llm,
                                     max_failures=3)
        assert status == 'Created ticket "Export fails" for carol (critical)'

        offered = offered_action(llm.formats[0], "skill_create_ticket")
        assert offered is not None and "Does: Create a ticket titled" in offered["description"]
        assert "Status: unverified" in offered["description"]
        parameters = offered["properties"]
        assert list(parameters) == ["summary", "owner", "priority"] and offered["required"] == list(parameters)
        assert parameters["owner"]["enum"] == list(OWNERS) and parameters["priority"]["enum"] == list(PRIORITIES)
        assert parameters["summary"]["type"] == "string" and "enum" not in parameters["summary"]
        assert "skill_create_ticket: A task remembered on" in str(llm.messages[0][-1].content)  # the page's actions

        refused, called, done = (item.result[0] for item in result.history.history[-3:])
        assert "owner: 'dave' is not one of the options: alice, bob, carol" in (refused.error or "")
        assert "owner: 'dave' is not one of the options" in str(llm.messages[1][-1].content)  # the model is told
        assert called.error is None and called.extracted_content == (
            'skill_create_ticket done: Create a ticket titled "Export fails" assigned to carol with priority '
            'critical. The page shows: Created ticket "Export fails" for carol (critical)')
        assert done.is_done and llm.calls == 3 and result.success

        manifest = mem.runs.get(result.run_id)
        assert manifest.replay is not None and manifest.replay == result.replay
        assert manifest.replay.outcome == "replayed" and manifest.replay.trajectory_id == skill.trajectory_id
        assert [(step.action, step.value) for step in mem.runs.steps(result.run_id)] == [
            ("goto", url), ("goto", None), ("fill", "Export fails"), ("select", "carol"), ("select", "critical"),
            ("click", None)]  # the agent's start, then the skill's steps
        assert mem.skills.get("create_ticket", url).status == "verified"  # its replay did a new instance

        unoffered = ScriptedChat(actions=[])
        result, _ = file_ticket(mem, url, "Carol needs a minor ticket about the slow login", unoffered, max_skills=0)
        assert result.success and unoffered.calls == 1
        assert offered_action(unoffered.formats[0], "skill_create_ticket") is None
        assert "skill_" not in str(unoffered.messages[0][-1].content)



def test_a_skill_call_the_page_no_longer_fits_hands_over_at_its_step(
        tickets: tuple[str, Path], memory_dir: Path) -> None:
    url, root = tickets
    with webmem.Memory.open(memory_dir) as mem:
        record_ticket(mem, url, "Crash on save", "alice", "major")
        record_ticket(mem, url, "Login page slow", "bob", "minor")
        page = root / "index.html"
        page.write_text(page.read_text().replace(">Create ticket</button>", ">Submit</button>"))
        llm = ScriptedChat(actions=[
            {"skill_create_ticket": {"summary": "Export fails", "owner": "carol", "priority": "critical"}},
            lambda state: {"click": {"index": next(element["index"] for element in page_elements(state)
                                                   if element["tag"] == "button")}},
        ])
        result, status = file_ticket(mem, url, "Carol needs a critical ticket about the failing export", llm,
                                     max_failures=3)
        assert status == 'Created ticket "Export fails" for carol (critical)' and result.success and llm.calls == 3

        called = result.history.history[-3].result[0]
        assert called.error == 'skill_create_ticket stopped at its step 5 of 5: button "Create ticket" is not on the ' \
                               'page any more'
        assert called.long_term_memory is not None and called.long_term_memory.startswith(
            'skill_create_ticket (Create a ticket titled "Export fails" assigned to carol with priority critical) did '
            '4 of its 5 steps on this page: 1. goto')
        told = str(llm.messages[1][-1].content)
        assert called.error in told and called.long_term_memory in told and "REPLAY HANDED OVER" in told
        assert [(step.action, step.target) for step in mem.runs.steps(result.run_id)] == [
            ("goto", None), ("goto", None), ("fill", 'textbox "Summary"'), ("select", 'combobox "Owner"'),
            ("select", 'combobox "Priority"'), ("click", 'button "Submit"')]  # the agent's start, the skill's, its own
        report = mem.runs.get(result.run_id).replay
        assert report is not None and report.outcome == "handed_over" and report.step == 5
        assert mem.skills.get("create_ticket", url).record.handovers == 1


def test_skill_actions_are_offered_on_their_sites_pages_and_taken_away_after_the_run(memory_dir: Path) -> None:
    from browser_use import Tools

    from webmem.integrations.browser_use import SkillActions

    first, second = "http://127.0.0.1:8000/new", "http://localhost:8001/new"
    with webmem.Memory.open(memory_dir) as mem:
        for site in (first, second):
            record_ticket(mem, site, "Crash on save", "alice", "major")
            record_ticket(mem, site, "Login page slow", "bob", "minor")
        run = mem.start_run(goal="Triage the tickets", start_url=first)
        tools = Tools()
        actions = SkillActions(mem, run, tools)
        assert actions.offer("http://127.0.0.1:8000/list") == ["skill_create_ticket"]
        assert actions.offer(first) == [] and actions.offer("about:blank") == []  # once per site; no site
        assert actions.offer(second) == ["skill_create_ticket_2"]  # the same name on another site
        on_first, on_second = (tools.registry.get_prompt_description(url) for url in (first, second))
        assert "skill_create_ticket: A task remembered on http://127.0.0.1:8000" in on_first
        assert "skill_create_ticket_2" not in on_first and "skill_create_ticket_2: " in on_second
        assert tools.registry.get_prompt_description("https://example.org/") == ""
        assert "skill_create_ticket" not in tools.registry.get_prompt_description()  # not in the system prompt
        actions.remove()
        assert not any(name.startswith("skill_") for name in tools.registry.registry.actions)

        mem.site_changes.record(second, 'button "Create ticket" is gone')
        assert SkillActions(mem, run, Tools()).offer(second) == []  # withdrawn
        assert SkillActions(mem, run, Tools(), max_skills=0).offer(first) == []
        with pytest.raises(webmem.InvalidInput, match="max_skills"):
            SkillActions(mem, run, tools, max_skills=-1)
        run.finish(success=False)

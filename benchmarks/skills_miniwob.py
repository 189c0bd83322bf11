"""MiniWoB++ in ``bench_skills.py``: tasks whose instruction alone determines the steps, done by the agent under
test through the proxy on the ``miniwob`` package's pages served on 127.0.0.1 (``webmem.bench.miniwob``).

The tasks: enter-text, enter-password, login-user (text typed into fields the instruction names), choose-list
(an option of a select) and click-option (a radio named by the instruction): their instruction gives every
value, and the page's elements are the same in every episode, so a recorded run does a new instance. (The
other tasks of ``INSTRUCTION_DETERMINED`` either name their element by a label drawn at random among others,
or need a click-and-type order that the instruction does not fix.)

An episode: the harness seeds the page's random stream (``browser_evaluate``, not counted: it stands for
MiniWoB's own episode seed, so that the episode with skills and the one without get the same problem), the
agent navigates to the task page, looks (a snapshot), clicks START and looks again to read the instruction
(4 calls, with skills and without), then does the task. The reward is read off the page's "Last reward"
(a browser_snapshot of the harness, not counted): above 0 is a success. A recording is begun with
``webmem_start_run(instruction)`` once the instruction shows, so the skill's steps are the task's own.
"""

from __future__ import annotations

import re
from skills_agent import BrowserPolicy, ProxySession, SkillPolicy, text_of

from webmem.agent import Action, Observation, Target

INSTRUCTIONS = {
    "enter-text": r'Enter "(?P<text>.+)" into the text field and press Submit\.',
    "enter-password": r'Enter the password "(?P<password>.+)" into both text fields and press submit\.',
    "login-user": r'Enter the username "(?P<username>.+)" and the password "(?P<password>.+)" into the text fields '
                  r'and press login\.',
    "choose-list": r"Select (?P<item>.+) from the list and click Submit\.",
    "click-option": r"Select (?P<item>.+) and click Submit\.",
}
TASKS = tuple(INSTRUCTIONS)
_START = re.compile(r"\[ref=(?P<ref>[A-Za-z0-9]+)\][^\n]*: START$", re.M)
_REWARD = re.compile(r'Last reward: (?P<reward>-?[0-9.]+)')


class NotYet(Exception):
    pass


def the(seen: Observation, role: str, name: str | None = None, index: int = 0) -> Target:
    found = [item for item in seen.elements if item.role == role and (name is None or item.name == name)]
    if len(found) <= index:
        raise NotYet(f"no {role} {name or ''} #{index + 1} on the page")
    return Target(ref=found[index].ref, role=role, name=found[index].name)


def fill(index: int, key: str):
    return lambda seen, values: Action("fill", the(seen, "textbox", index=index), value=values[key])


def click(role: str, name: str | None = None, key: str | None = None):
    return lambda seen, values: Action("click", the(seen, role, values[key] if key else name))


def select(key: str):
    return lambda seen, values: Action("select", the(seen, "combobox"), value=values[key])


PLANS = {
    "enter-text": (fill(0, "text"), click("button", "Submit")),
    "enter-password": (fill(0, "password"), fill(1, "password"), click("button", "Submit")),
    "login-user": (fill(0, "username"), fill(1, "password"), click("button", "Login")),
    "choose-list": (select("item"), click("button", "Submit")),
    "click-option": (click("radio", key="item"), click("button", "Submit")),
}


class MiniwobTasks:
    """The MiniWoB++ side of the benchmark: episodes numbered per task, the problem drawn from a seed."""

    name = "miniwob"

    def __init__(self, base_url: str, tasks: list[str], recordings: int, instances: int, seed: int) -> None:
        self.base_url = base_url
        self.tasks = tasks
        self.seed = seed
        self.recorded = {task: [(task, f"{seed}-record-{number}") for number in range(recordings)] for task in tasks}
        self.tests = {task: [(task, f"{seed}-test-{number}") for number in range(instances)] for task in tasks}
        self.composed: list = []

    def episodes(self) -> list[tuple[str, str, list[tuple[str, str]]]]:
        return [(task, "new", [item]) for task in self.tasks for item in self.tests[task]]

    def goal(self, parts: list[tuple[str, str]]) -> str:
        return f"{parts[0][0]} (seed {parts[0][1]})"

    async def begin(self, session: ProxySession, task: str, seed: str) -> tuple[str, dict[str, str]]:
        """Seed, navigate, look, click START, look: the instruction and its values."""
        url = f"{self.base_url}miniwob/{task}.html"
        await session.call("browser_navigate", {"url": url})
        await session.call("browser_evaluate", {"function": f"() => Math.seedrandom({seed!r})"}, counted=False)
        seen = await session.observe()
        start = _START.search(seen.snapshot)
        if start is None:
            raise RuntimeError(f"no START on {url}")
        await session.call("browser_click", {"element": "START", "target": start.group("ref")})
        seen = await session.observe()
        for text in seen.texts:
            if found := re.fullmatch(INSTRUCTIONS[task], text.strip()):
                return text.strip(), found.groupdict()
        raise RuntimeError(f"no instruction of {task} on the page: {seen.texts[:5]}")

    async def verdict(self, session: ProxySession) -> tuple[bool, str]:
        result = await session.call("browser_snapshot", counted=False)
        found = _REWARD.search(text_of(result))
        reward = float(found.group("reward")) if found else None
        return bool(reward is not None and reward > 0), f"last reward {reward}"

    async def record(self, session: ProxySession, item: tuple[str, str]) -> dict:
        task, seed = item
        session.new_episode()
        goal, values = await self.begin(session, task, seed)
        started = await session.call("webmem_start_run", {"goal": goal, "start_url": session.page_url},
                                     counted=False)
        why = await BrowserPolicy(session, NotYet).follow(PLANS[task], values)
        success, detail = await self.verdict(session)
        await session.call("webmem_finish_run", {"run_id": started.structured_content["run_id"], "success": success},
                           counted=False)
        return {"app": self.name, "task": task, "phase": "record", "goal": goal, "success": success,
                "detail": why or detail, "effect": None}

    async def without_skills(self, session: ProxySession, parts: list[tuple[str, str]]) -> dict:
        (task, seed), = parts
        calls = session.new_episode()
        goal, values = await self.begin(session, task, seed)
        why = await BrowserPolicy(session, NotYet).follow(PLANS[task], values)
        success, detail = await self.verdict(session)
        return {"success": success, "detail": why or detail, "effect": None, "calls": calls.total, "goal": goal}

    async def with_skills(self, session: ProxySession, parts: list[tuple[str, str]]) -> dict:
        (task, seed), = parts
        calls = session.new_episode()
        goal, values = await self.begin(session, task, seed)
        policy = SkillPolicy(session, BrowserPolicy(session, NotYet))
        episode = await policy.run(goal, None, lambda index: (PLANS[task], values))
        success, detail = await self.verdict(session)
        return {"success": success, "detail": detail, "effect": None, "calls": calls.total, "goal": goal,
                "skill_calls": calls.of("skill_"), "called": episode.called, "by_hand": episode.by_hand,
                "notes": episode.notes, "needed": 1}


__all__ = ["TASKS", "MiniwobTasks"]

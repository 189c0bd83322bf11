"""Trac in ``bench_skills.py``: the replay benchmark's tasks (``tracapp/``), their instances and checks, goals
composed of two ticket tasks on one ticket, and the episodes of the agent under test through the proxy.

A composed goal joins two ticket tasks' goals on one ticket ("Set the priority of the ticket Slow search to
minor, then resolve the ticket Slow search as invalid"), their values those of new instances; it succeeds when
the tickets end as both goals ask and nothing else changed.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from dataclasses import fields, replace
from typing import Any

from skills_agent import BrowserPolicy, ProxySession, SkillPolicy
from trac_app import Ticket
from tracapp.catalog import RECORDINGS, TASKS, TICKET_TASKS, Instance, build_catalog, build_instances
from tracapp.policies import PLANS, NotOnPage
from tracapp.tasks import TicketTaskEnvironment, check_possible, expected_state, read_state

#: The pairs of ticket tasks a composed goal joins, in the order they are asked.
COMPOSED_PAIRS = (("set_priority", "comment"), ("reassign", "comment"), ("comment", "resolve"),
                  ("set_priority", "resolve"), ("reassign", "resolve"))
#: How long an outcome not yet readable (a form still being answered) is waited for.
SETTLE_S = 3.0
_TICKET_LINK = re.compile(r'<td class="id">\s*<a href="[^"]*/ticket/(\d+)"')


class FetchedPage:
    """The final page as the outcome checks read it (its URL, and the tickets a query page lists), fetched
    from Trac by the benchmark: the browser is Playwright MCP's, out of the benchmark's reach."""

    def __init__(self, url: str | None) -> None:
        self.url = url or ""

    def evaluate(self, script: str) -> str:
        return "complete"

    def eval_on_selector_all(self, selector: str, script: str) -> list[str]:
        with urllib.request.urlopen(self.url, timeout=10) as response:
            html = response.read().decode("utf-8", "replace")
        return [f"/ticket/{number}" for number in _TICKET_LINK.findall(html)]


class ComposedEnvironment:
    """The outcome of a composed goal: the tickets as both of its ticket tasks ask, nothing else changed."""

    def __init__(self, app: Any, parts: list[Instance], tickets: list[Ticket]) -> None:
        self.app = app
        self.before = (dict(enumerate(tickets, 1)), {number: () for number in range(1, len(tickets) + 1)})
        rows, comments = dict(self.before[0]), dict(self.before[1])
        for part in parts:
            wanted = expected_state(part, tickets)
            for number, row in wanted[0].items():
                changed = {item.name: getattr(row, item.name) for item in fields(Ticket)
                           if getattr(row, item.name) != getattr(self.before[0][number], item.name)}
                rows[number] = replace(rows[number], **changed)
            for number, added in wanted[1].items():
                comments[number] = comments[number] + added
        self.expected = (rows, comments)

    def outcome(self, page: Any) -> Any:
        from webmem.agent import EnvironmentOutcome

        now = read_state(self.app)
        if now == self.expected:
            return EnvironmentOutcome(success=True, reward=1.0, detail="the ticket is as both goals ask")
        if now != self.before:
            return EnvironmentOutcome(success=False, reward=0.0, detail="the tickets changed, not as asked")
        return None

    def effect(self) -> str:
        now = read_state(self.app)
        return "none" if now == self.before else "as asked" if now == self.expected else "wrong"


def composed_instances(instances: dict[str, list[Instance]], catalog: list[Ticket], count: int) -> list[list[Instance]]:
    """``count`` composed goals, the pairs taking turns: the first task's new instance gives the ticket, the
    second's gives its own values on that ticket; a pair the ticket does not make possible is drawn again."""
    tests = {task: [item for item in items if item.phase == "test"] for task, items in instances.items()}
    found: list[list[Instance]] = []
    offset = 0
    while len(found) < count and offset < 4 * count + 10:
        first_task, second_task = COMPOSED_PAIRS[len(found) % len(COMPOSED_PAIRS)]
        index = (len(found) + offset) % len(tests[first_task])
        first = tests[first_task][index]
        other = tests[second_task][(index + 1) % len(tests[second_task])]
        second = Instance(second_task, "composed", len(found) + 1, {**other.values, "title": first.values["title"]})
        try:
            check_possible(first, catalog)
            check_possible(second, catalog)
        except ValueError:
            offset += 1
            continue
        found.append([Instance(first_task, "composed", len(found) + 1, first.values), second])
    return found


def composed_goal(parts: list[Instance]) -> str:
    first, *rest = (part.goal for part in parts)
    return ", then ".join([first, *(goal[0].lower() + goal[1:] for goal in rest)])


class TracTasks:
    """The Trac side of the benchmark: instances, episodes and their verdicts, on the ``app`` served."""

    name = "trac"

    def __init__(self, app: Any, tasks: list[str], recordings: int, instances: int, composed: int, seed: int) -> None:
        self.app = app
        self.tasks = tasks
        self.catalog = build_catalog(seed)
        drawn = build_instances(seed, self.catalog, instances)
        self.recorded = {task: [item for item in drawn[task] if item.phase == "record"][:min(recordings, RECORDINGS)]
                         for task in tasks}
        self.tests = {task: [item for item in drawn[task] if item.phase == "test"] for task in tasks}
        ticket_tasks = [task for task in tasks if task in TICKET_TASKS]
        self.composed = composed_instances(drawn, self.catalog, composed) if set(ticket_tasks) >= {
            task for pair in COMPOSED_PAIRS for task in pair} else []
        for items in [*self.recorded.values(), *self.tests.values()]:
            for item in items:
                check_possible(item, self.catalog)

    @property
    def start_url(self) -> str:
        return self.app.query_url

    def goal(self, parts: list[Instance]) -> str:
        return composed_goal(parts) if len(parts) > 1 else parts[0].goal

    def environment(self, parts: list[Instance]) -> Any:
        if len(parts) == 1:
            return TicketTaskEnvironment(self.app, parts[0], self.catalog)
        return ComposedEnvironment(self.app, parts, self.catalog)

    async def verdict(self, environment: Any, session: ProxySession) -> tuple[bool, str, str]:
        """(success, detail, effect) once the outcome is readable (``SETTLE_S`` at most)."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            outcome = environment.outcome(FetchedPage(session.page_url))
            if outcome is not None or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.3)
        detail = outcome.detail if outcome is not None else f"nothing done (page {session.page_url})"
        return bool(outcome and outcome.success), detail, environment.effect()

    async def by_hand(self, session: ProxySession, parts: list[Instance]) -> str | None:
        """The task done with the browser tools alone (the "without skills" policy); why it stopped, or None."""
        browser = BrowserPolicy(session, NotOnPage)
        for part in parts:
            await browser.navigate(self.start_url)
            if why := await browser.follow(PLANS[part.task], part.values):
                return why
        return None

    async def record(self, session: ProxySession, instance: Instance) -> dict:
        """A recorded run: the browser policy through the proxy, begun and finished with webmem's tools."""
        self.app.reset(self.catalog)
        environment = self.environment([instance])
        session.new_episode()
        started = await session.call("webmem_start_run", {"goal": instance.goal, "start_url": self.start_url},
                                     counted=False)
        run_id = started.structured_content["run_id"]
        why = await self.by_hand(session, [instance])
        success, detail, effect = await self.verdict(environment, session)
        await session.call("webmem_finish_run", {"run_id": run_id, "success": success}, counted=False)
        return {"app": self.name, "task": instance.task, "phase": "record", "goal": instance.goal,
                "success": success, "detail": why or detail, "effect": effect}

    async def without_skills(self, session: ProxySession, parts: list[Instance]) -> dict:
        self.app.reset(self.catalog)
        environment = self.environment(parts)
        calls = session.new_episode()
        why = await self.by_hand(session, parts)
        success, detail, effect = await self.verdict(environment, session)
        return {"success": success, "detail": why or detail, "effect": effect, "calls": calls.total}

    async def with_skills(self, session: ProxySession, parts: list[Instance]) -> dict:
        self.app.reset(self.catalog)
        environment = self.environment(parts)
        calls = session.new_episode()
        policy = SkillPolicy(session, BrowserPolicy(session, NotOnPage))
        episode = await policy.run(self.goal(parts), self.start_url,
                                   lambda index: (PLANS[parts[index].task], parts[index].values))
        success, detail, effect = await self.verdict(environment, session)
        return {"success": success, "detail": detail, "effect": effect, "calls": calls.total,
                "skill_calls": calls.of("skill_"), "called": episode.called, "by_hand": episode.by_hand,
                "notes": episode.notes, "needed": len(parts)}

    def episodes(self) -> list[tuple[str, str, list[Instance]]]:
        """The new instances, then the composed goals: (task, kind, parts)."""
        found = [(task, "new", [item]) for task in self.tasks for item in self.tests[task]]
        found += [("+".join(part.task for part in parts), "composed", parts) for parts in self.composed]
        return found


__all__ = ["TASKS", "TracTasks"]

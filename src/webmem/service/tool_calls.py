"""A replay plan's steps as Playwright MCP tool calls (``@playwright/mcp``), ready to send.

A target is given as a locator that Playwright MCP accepts in place of a snapshot ref:
``getByRole("button", { name: "Search", exact: true })``, with ``.nth(i)`` when the recorded page had
several such elements. A step that names no element by role and name is given its remembered
selector, with a note: replay by webmem itself never acts on a selector alone.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.models import Step
from ..core.redaction import PLACEHOLDER
from ..trajectories.evidence import TEXT_ROLE, parse_identity
from ..trajectories.plans import ReplayPlan
from .models import PlannedCall, ReplayOffer

#: Actions and the Playwright MCP tools that perform them.
TOOLS = {
    "goto": "browser_navigate", "click": "browser_click", "fill": "browser_type", "type": "browser_type",
    "select": "browser_select_option", "check": "browser_fill_form", "uncheck": "browser_fill_form",
    "press": "browser_press_key", "hover": "browser_hover", "wait": "browser_wait_for", "back": "browser_navigate_back",
}
_ON_ELEMENT = frozenset({"click", "hover", "fill", "type", "select", "check", "uncheck"})
MAX_WAIT_SECONDS = 30


def replay_offer(plan: ReplayPlan) -> ReplayOffer:
    """The plan as an offer: each step with the tool call that performs it."""
    return ReplayOffer(
        trajectory_id=plan.trajectory_id, recorded_goal=plan.trajectory.goal, slots={f"{{{number}}}": value for number, value in plan.slots.items()},
        steps=[planned_call(number, step, plan.unresolved.get(number - 1))
               for number, step in enumerate(plan.steps, start=1)],
        stop_step=plan.stop_step,
    )


def locator(step: Step) -> str | None:
    """The locator of the step's target as Playwright writes it, or its selector, or None."""
    identity = parse_identity(step.target)
    if identity is None:
        return step.selector
    role, name = identity
    if role == TEXT_ROLE:
        found = f"getByText({json.dumps(name)}, {{ exact: true }})"
    else:
        found = f"getByRole({json.dumps(role)}, {{ name: {json.dumps(name)}, exact: true }})"
    if step.target_index is not None and step.target_count is not None:
        found += f".nth({step.target_index - 1})"
    return found


def planned_call(number: int, step: Step, unresolved: str | None = None) -> PlannedCall:
    """Step ``number`` (from 1) of a plan with the tool call that performs it."""
    tool = TOOLS.get(step.action)
    notes = [unresolved] if unresolved else []
    arguments: dict[str, Any] = {}
    where = locator(step)
    element = step.target or step.selector or ""
    if step.action == "goto":
        arguments = {"url": step.value or step.url}
    elif step.action in ("click", "hover"):
        arguments = {"element": element, "target": where}
    elif step.action in ("fill", "type"):
        arguments = {"element": element, "target": where, "text": step.value or ""}
    elif step.action == "select":
        arguments = {"element": element, "target": where, "values": [step.value or ""]}
    elif step.action in ("check", "uncheck"):
        checked = "true" if step.action == "check" else "false"
        arguments = {"fields": [{"name": element, "target": where, "type": "checkbox", "value": checked}]}
    elif step.action == "press":
        arguments = {"key": step.value or "Enter"}
    elif step.action == "back":
        arguments = {}
    elif step.action == "wait":
        seconds = min(MAX_WAIT_SECONDS, max(1, round((step.duration_ms or 1000) / 1000)))
        arguments = {"text": step.value} if step.value else {"time": seconds}
    else:
        notes.append(f"no Playwright MCP tool performs {step.action!r}; Playwright scrolls to an element when acting")
    if step.action in _ON_ELEMENT and where is None:
        tool, arguments = None, {}
        notes.append("the step names no element")
    elif where is not None and where == step.selector and step.target is None:
        notes.append("found by its remembered selector alone: check the element before acting")
    if step.value and PLACEHOLDER.fullmatch(step.value):
        notes.append(f"{step.value} is a secret: type its value yourself")
    return PlannedCall(step=number, action=step.action, target=step.target, value=step.value, url=step.url,
                       tool=tool, arguments=arguments, note="; ".join(notes) or None)

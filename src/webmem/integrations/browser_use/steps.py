"""browser-use's history as webmem steps.

A browser-use step holds the model's actions (``{"click": {"index": 4}}``), their results (an error, or
``is_done``) and the state the actions met: the page's URL and the element each action interacted
with (its tag, attributes, XPath and accessible name). Each action becomes one webmem step in
webmem's vocabulary; its target is the element's role and accessible name, its selector a stable CSS
selector (an id, a name) or else the element's XPath. A value typed from browser-use's
``sensitive_data`` (``<secret>label</secret>``) is kept as the placeholder ``{label}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...core.text import clean_for_prompt
from ...service.drafts import StepDraft
from ...trajectories.evidence import element_identity

#: browser-use's actions and the webmem action each records; those missing here (done, extract, read_file,
#: screenshot, ...) act on nothing on the page and record nothing.
ACTIONS = {
    "navigate": "goto", "go_to_url": "goto", "search": "search", "go_back": "back", "click": "click",
    "click_element_by_index": "click", "input": "fill", "input_text": "fill", "select_dropdown": "select",
    "select_dropdown_option": "select", "send_keys": "press", "scroll": "scroll", "wait": "wait",
    "switch": "tab", "switch_tab": "tab", "close": "tab", "close_tab": "tab", "upload_file": "upload",
    "evaluate": "evaluate", "find_text": "scroll",
}
_SECRET = re.compile(r"<secret>(?P<name>[A-Za-z_][A-Za-z0-9_]{0,40})</secret>")
_INPUT_ROLES = {
    "button": "button", "submit": "button", "reset": "button", "image": "button", "checkbox": "checkbox",
    "radio": "radio", "range": "slider", "number": "spinbutton", "search": "searchbox",
}
_TAG_ROLES = {
    "button": "button", "textarea": "textbox", "option": "option", "img": "img", "li": "listitem",
    "h1": "heading", "h2": "heading", "h3": "heading", "h4": "heading", "h5": "heading", "h6": "heading",
    "summary": "button", "nav": "navigation", "table": "table", "dialog": "dialog",
}
_PLAIN_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,80}$")


@dataclass(frozen=True)
class Outcome:
    """How a browser-use history step ended the task, if it did (the ``done`` action's result)."""

    done: bool = False
    success: bool | None = None
    text: str | None = None


def action_of(action: Any) -> tuple[str, dict[str, Any]]:
    """An ActionModel as (its name, its parameters)."""
    dumped = action.model_dump(exclude_unset=True) if hasattr(action, "model_dump") else dict(action)
    for name, params in dumped.items():
        if params is not None:
            return name, params if isinstance(params, dict) else {}
    return "", {}


def step_drafts(item: Any) -> list[StepDraft]:
    """The webmem steps of one browser-use history item (``AgentHistory``), in order."""
    output = getattr(item, "model_output", None)
    if output is None:
        return []
    state = getattr(item, "state", None)
    url = _web(getattr(state, "url", None))
    elements = list(getattr(state, "interacted_element", None) or [])
    results = list(getattr(item, "result", None) or [])
    drafts: list[StepDraft] = []
    for position, action in enumerate(getattr(output, "action", None) or []):
        name, params = action_of(action)
        kind = ACTIONS.get(name)
        if kind is None:
            continue
        element = elements[position] if position < len(elements) else None
        result = results[position] if position < len(results) else None
        error = getattr(result, "error", None) if result is not None else None
        target, selector = element_target(element)
        drafts.append(StepDraft(
            action=kind, target=target, selector=selector, value=_value(name, params), url=url,
            ok=error is None, error=clean_for_prompt(str(error), 4000) if error else None,
            duration_ms=_wait_ms(name, params),
        ))
    return drafts


def outcome_of(item: Any) -> Outcome:
    for result in getattr(item, "result", None) or []:
        if getattr(result, "is_done", False):
            return Outcome(True, getattr(result, "success", None), getattr(result, "extracted_content", None))
    return Outcome()


def element_target(element: Any) -> tuple[str | None, str | None]:
    """The element's identity (``button "Subscribe"``) and a selector for it, from browser-use's record of it."""
    if element is None:
        return None, None
    attributes: Mapping[str, str] = getattr(element, "attributes", None) or {}
    tag = str(getattr(element, "node_name", "") or "").lower()
    role = element_role(tag, attributes)
    name = " ".join(str(getattr(element, "ax_name", "") or "").split())
    identity = element_identity(role, name) if role and name else None
    return identity, element_selector(tag, attributes, getattr(element, "x_path", None))


def element_role(tag: str, attributes: Mapping[str, str]) -> str | None:
    """The ARIA role of an element: its explicit role, else the one its tag and type imply."""
    explicit = (attributes.get("role") or "").split()
    if explicit:
        return explicit[0].lower()
    if tag == "a":
        return "link" if "href" in attributes else None
    if tag == "input":
        kind = (attributes.get("type") or "text").lower()
        return _INPUT_ROLES.get(kind, "textbox" if kind not in ("hidden", "file", "color") else None)
    if tag == "select":
        return "listbox" if "multiple" in attributes else "combobox"
    return _TAG_ROLES.get(tag)


def element_selector(tag: str, attributes: Mapping[str, str], x_path: object) -> str | None:
    element_id = attributes.get("id") or ""
    if _PLAIN_ID.match(element_id):
        return f"#{element_id}"
    name = attributes.get("name") or ""
    if tag and name and len(name) <= 80 and '"' not in name and "\\" not in name:
        return f'{tag}[name="{name}"]'
    if isinstance(x_path, str) and x_path.strip():
        path = x_path.strip()
        return f"xpath=/{path}" if not path.startswith("/") else f"xpath={path}"
    return None


def placeholders(text: str) -> str:
    """browser-use's ``<secret>label</secret>`` written as webmem's placeholder ``{label}``."""
    return _SECRET.sub(lambda found: "{" + found.group("name") + "}", text)


def _value(name: str, params: Mapping[str, Any]) -> str | None:
    for key in ("text", "url", "keys", "query", "tab_id"):
        value = params.get(key)
        if isinstance(value, str):
            return placeholders(value)
    if name == "scroll":
        return "down" if params.get("down", True) else "up"
    return None


def _wait_ms(name: str, params: Mapping[str, Any]) -> int | None:
    seconds = params.get("seconds")
    if name == "wait" and isinstance(seconds, int | float) and not isinstance(seconds, bool) and 0 <= seconds <= 3600:
        return round(seconds * 1000)
    return None


def _web(url: object) -> str | None:
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None

"""Playwright MCP's tool calls as webmem steps, read from the call and from the text it answered.

Playwright MCP (``@playwright/mcp``) answers an action with sections in markdown: ``### Ran Playwright
code`` (the locator it used, in the language of its ``--codegen`` option), ``### Page`` (the page's URL
after the call), ``### Snapshot`` (the page as an aria snapshot, with ``[ref=eN]`` refs) and, when it
failed, ``### Error``. A step's target is the element's role and accessible name: from the locator
(``getByRole``) when the code gives it, else from the ref in the latest snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.text import clean_for_prompt
from ..episodes.aria import snapshot_fingerprint
from ..service.drafts import StepDraft

#: Tools that act on the page, and the action each records (other tools only look, or set the browser up).
ACTIONS = {
    "browser_navigate": "goto", "browser_navigate_back": "back", "browser_click": "click", "browser_type": "fill",
    "browser_fill_form": "fill", "browser_select_option": "select", "browser_press_key": "press",
    "browser_hover": "hover", "browser_drag": "drag", "browser_wait_for": "wait", "browser_file_upload": "upload",
    "browser_handle_dialog": "dialog", "browser_tabs": "tab", "browser_evaluate": "evaluate",
    "browser_run_code_unsafe": "evaluate", "browser_drop": "drop", "browser_mouse_click_xy": "click",
}
_FIELD_ACTIONS = {"textbox": "fill", "slider": "fill", "combobox": "select", "checkbox": "check", "radio": "check"}
_SECTION = re.compile(r"^### (?P<title>[^\n]+)\n(?P<body>.*?)(?=^### |\Z)", re.M | re.S)
_CODE = re.compile(r"```[a-z]*\n(?P<code>.*?)```", re.S)
_PAGE_URL = re.compile(r"^- Page URL: (?P<url>\S+)", re.M)
_STRING = r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_LOCATOR = re.compile(
    rf"(?P<method>getByRole|get_by_role|getByText|get_by_text|getByLabel|get_by_label|getByPlaceholder|"
    rf"get_by_placeholder|getByTestId|get_by_test_id|locator)\((?P<first>{_STRING})(?P<rest>[^)]*)\)"
)
_NAME_OPTION = re.compile(rf"name(?::\s*|=)(?P<name>{_STRING})")
_SNAPSHOT_LINE = re.compile(
    r'^\s*- (?P<role>[a-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?[^\n]*\[ref=(?P<ref>[a-z0-9]+)\]', re.M
)
_OPTION_LINE = re.compile(r'^(?P<indent>\s*)- option "(?P<name>(?:[^"\\]|\\.)*)"')
_LISTS = ("combobox", "listbox")


@dataclass(frozen=True)
class Answer:
    """The parts of a Playwright MCP answer that recording reads."""

    text: str
    is_error: bool

    def section(self, title: str) -> str | None:
        for found in _SECTION.finditer(self.text):
            if found.group("title").strip().lower() == title.lower():
                return found.group("body")
        return None

    @property
    def code(self) -> str:
        body = self.section("Ran Playwright code") or ""
        found = _CODE.search(body)
        return found.group("code") if found else body

    @property
    def page_url(self) -> str | None:
        found = _PAGE_URL.search(self.text)
        return found.group("url") if found else None

    @property
    def error(self) -> str | None:
        if not self.is_error:
            return None
        body = self.section("Error")
        return clean_for_prompt((body if body is not None else self.text).strip(), 4000) or "failed"

    @property
    def fingerprint(self) -> str | None:
        """The fingerprint of the page the answer shows (its interactive elements), or None when it shows none
        (an action's answer may only link to a file holding the snapshot): a step's ``snapshot_hash``, as the
        reference agent records it."""
        shown = _CODE.search(self.section("Snapshot") or "")
        return snapshot_fingerprint(shown.group("code")) if shown is not None else None

    def refs(self) -> dict[str, str]:
        """Element identities (``button "Search"``) by snapshot ref, from a snapshot in the answer."""
        return snapshot_refs(self.text)


def snapshot_refs(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in _SNAPSHOT_LINE.finditer(text):
        name = line.group("name")
        found[line.group("ref")] = f'{line.group("role")} "{name}"' if name is not None else line.group("role")
    return found


def snapshot_options(text: str) -> dict[str, tuple[str, ...]]:
    """The options of each select in a snapshot (``- option "Low"`` lines under it), by its identity
    (``combobox "Priority"``)."""
    found: dict[str, tuple[str, ...]] = {}
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _SNAPSHOT_LINE.match(line)
        if match is None or match.group("role") not in _LISTS or match.group("name") is None:
            continue
        indent = len(line) - len(line.lstrip())
        options = []
        for child in lines[index + 1:]:
            option = _OPTION_LINE.match(child)
            if option is None or len(option.group("indent")) <= indent:
                if len(child) - len(child.lstrip()) <= indent:
                    break
                continue
            options.append(_unquote(f'"{option.group("name")}"'))
        if options:
            found[f'{match.group("role")} "{match.group("name")}"'] = tuple(options)
    return found


def drafts(tool: str, arguments: Mapping[str, Any], answer: Answer, refs: Mapping[str, str]) -> list[StepDraft]:
    """The steps one call of ``tool`` records (none for a tool that only looks)."""
    action = ACTIONS.get(tool)
    if action is None:
        return []
    located = locators(answer.code)
    if tool == "browser_fill_form":
        fields = arguments.get("fields")
        if not isinstance(fields, Sequence) or isinstance(fields, str):
            return []
        return [_field_draft(field, located[index] if index < len(located) else None, refs)
                for index, field in enumerate(fields) if isinstance(field, Mapping)]
    first = located[0] if located else None
    target, selector = _element(arguments.get("target") or arguments.get("ref") or arguments.get("startTarget"),
                                first, refs)
    value: str | None = None
    duration_ms = None
    if tool == "browser_navigate":
        value = _string(arguments.get("url"))
    elif tool == "browser_type":
        value = _string(arguments.get("text"))
    elif tool == "browser_select_option":
        values = arguments.get("values")
        value = ", ".join(str(item) for item in values) if isinstance(values, list) else None
    elif tool == "browser_press_key":
        value = _string(arguments.get("key"))
    elif tool == "browser_wait_for":
        value = _string(arguments.get("text")) or _string(arguments.get("textGone"))
        seconds = arguments.get("time")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and 0 <= seconds <= 3600:
            duration_ms = round(seconds * 1000)
    elif tool == "browser_handle_dialog":
        value = "accept" if arguments.get("accept") else "dismiss"
    elif tool == "browser_tabs":
        value = _string(arguments.get("action"))
    steps = [StepDraft(action=action, target=target, selector=selector, value=value, duration_ms=duration_ms)]
    if tool == "browser_type" and arguments.get("submit") is True:
        steps.append(StepDraft(action="press", target=target, selector=selector, value="Enter"))
    return steps


@dataclass(frozen=True)
class Located:
    """A locator read from generated code: the element's identity when it says it, and a selector."""

    identity: str | None
    selector: str


def locators(code: str) -> list[Located]:
    """The locators of the code's lines, in order (one per line that has one)."""
    found: list[Located] = []
    for line in code.splitlines():
        match = _LOCATOR.search(line)
        if match is not None:
            found.append(_located(match))
    return found


def _located(match: re.Match[str]) -> Located:
    method = match.group("method").replace("_", "").lower()
    first = _unquote(match.group("first"))
    quoted = first.replace("\\", "\\\\").replace('"', '\\"')
    if method == "getbyrole":
        name_match = _NAME_OPTION.search(match.group("rest"))
        if name_match is None:
            return Located(None, f"role={first}")
        name = _unquote(name_match.group("name"))
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        return Located(f'{first} "{escaped}"', f'role={first}[name="{escaped}"]')
    if method == "getbytext":
        return Located(f'text "{quoted}"', f'text="{quoted}"')
    if method == "getbylabel":
        return Located(None, f'internal:label="{quoted}"i')
    if method == "getbyplaceholder":
        return Located(None, f'internal:attr=[placeholder="{quoted}"i]')
    if method == "getbytestid":
        return Located(None, f'internal:testid=[data-testid="{quoted}"s]')
    return Located(None, first)


def _element(given: object, located: Located | None, refs: Mapping[str, str]) -> tuple[str | None, str | None]:
    identity = located.identity if located is not None else None
    selector = located.selector if located is not None else None
    known = refs.get(given.strip()) if isinstance(given, str) else None
    if identity is None:
        identity = known if known is not None and " " in known else None  # a role alone identifies nothing
    elif known is not None and known != identity and _shortened(identity, known):
        identity = known  # the element's whole name, not the shortest part that told it apart on that page
        role, _, name = known.partition(" ")
        selector = f"role={role}[name={name}s]"
    return identity, selector


def _shortened(located: str, known: str) -> bool:
    """Whether the locator's identity (``link "Export"``) names the snapshot's element (``link "Export to CSV"``)
    by a part of its name only: Playwright's code matches a name without ``exact: true`` as a substring, so
    the part that was unique on the recorded page is another element's name, or none, on a new page."""
    role, _, name = located.partition(" ")
    known_role, _, known_name = known.partition(" ")
    return role == known_role and len(name) < len(known_name) and name[1:-1].casefold() in known_name.casefold()


def _field_draft(field: Mapping[str, Any], located: Located | None, refs: Mapping[str, str]) -> StepDraft:
    kind = field.get("type")
    action = _FIELD_ACTIONS.get(kind, "fill") if isinstance(kind, str) else "fill"
    value = _string(field.get("value"))
    if action == "check" and value is not None and value.strip().lower() == "false":
        action = "uncheck"
    target, selector = _element(field.get("target") or field.get("ref"), located, refs)
    return StepDraft(action=action, target=target, selector=selector, value=None if action in ("check", "uncheck")
                     else value)


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal[1:-1], flags=re.S)

"""Reading Playwright accessibility snapshots (``page.aria_snapshot()``) into interactive elements."""

from __future__ import annotations

import re

from .models import EnvironmentState, PageElement, validated

INTERACTIVE_ROLES = frozenset({
    "button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox", "option",
    "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "slider", "spinbutton", "switch", "treeitem",
})
_LINE = re.compile(r'^\s*-\s+(?P<role>[a-z]+)(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?(?P<rest>[^:]*)(?::\s*(?P<value>.*))?$')
_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")


def parse_aria_snapshot(snapshot: str) -> list[PageElement]:
    """The interactive elements of a snapshot, in page order, with their refs and values when shown."""
    elements = []
    for line in snapshot.splitlines():
        match = _LINE.match(line)
        if match is None or match.group("role") not in INTERACTIVE_ROLES:
            continue
        name = (match.group("name") or "").replace('\\"', '"').replace("\\\\", "\\")
        ref = _REF.search(match.group("rest") or "")
        value = (match.group("value") or "").strip() or None
        elements.append(PageElement(role=match.group("role"), name=name[:1000], ref=ref.group(1) if ref else None,
                                    value=value[:10_000] if value else None))
    return elements


def environment_from_snapshot(url: str, title: str, snapshot: str) -> EnvironmentState:
    """An environment state built from a page's url, title and aria snapshot."""
    return validated(EnvironmentState, url=url, title=title[:1000], elements=parse_aria_snapshot(snapshot))


def element_iou(a: EnvironmentState, b: EnvironmentState) -> float:
    """Intersection over union of two pages' (role, name) element sets; 0.0 when both are empty."""
    left, right = a.element_keys(), b.element_keys()
    union = left | right
    return len(left & right) / len(union) if union else 0.0

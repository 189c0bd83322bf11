"""Reading Playwright accessibility snapshots (``page.aria_snapshot()``) into interactive elements."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

from ..core.episode_records import EnvironmentState, PageElement
from ..core.models import validated

INTERACTIVE_ROLES = frozenset({
    "button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox", "option",
    "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "slider", "spinbutton", "switch", "treeitem",
})
_LINE = re.compile(r'^\s*-\s+(?P<role>[a-z]+)(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?(?P<rest>[^:]*)(?::\s*(?P<value>.*))?$')
# A line Playwright had to quote as YAML (a name with ": ", "#", a leading quote...): '<key>': <value>
_QUOTED_LINE = re.compile(r"^\s*-\s+'(?P<key>(?:[^']|'')*)'(?::\s*(?P<value>.*))?$")
_KEY = re.compile(r'^(?P<role>[a-z]+)(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?(?P<rest>.*)$', re.S)
_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")


def snapshot_line_parts(line: str) -> tuple[re.Match[str], str | None] | None:
    """The role/name/rest match of a snapshot line and its raw value."""
    quoted = _QUOTED_LINE.match(line)
    if quoted is not None:
        key = _KEY.match(quoted.group("key").replace("''", "'"))
        return (key, quoted.group("value")) if key is not None else None
    match = _LINE.match(line)
    return (match, match.group("value")) if match is not None else None


def snapshot_scalar(value: str | None) -> str | None:
    """A YAML scalar as text: quoted values ("a: b", 'it''s') lose their quotes and escapes."""
    text = (value or "").strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = text[1:-1]
        text = decoded if isinstance(decoded, str) else text[1:-1]
    elif len(text) >= 2 and text[0] == text[-1] == "'":
        text = text[1:-1].replace("''", "'")
    return text or None


def parse_aria_snapshot(snapshot: str) -> list[PageElement]:
    """The interactive elements of a snapshot, in page order, with their refs and values when shown."""
    elements = []
    for line in snapshot.splitlines():
        parts = snapshot_line_parts(line)
        if parts is None or parts[0].group("role") not in INTERACTIVE_ROLES:
            continue
        match, raw_value = parts
        name = (match.group("name") or "").replace('\\"', '"').replace("\\\\", "\\")
        ref = _REF.search(match.group("rest") or "")
        value = snapshot_scalar(raw_value)
        elements.append(PageElement(role=match.group("role"), name=name[:1000], ref=ref.group(1) if ref else None,
                                    value=value[:10_000] if value else None))
    return elements


def elements_fingerprint(keys: Iterable[tuple[str, str]]) -> str:
    """A hash of a page's set of interactive (role, name): it changes when they do (a row of fields added)."""
    return hashlib.sha256(repr(sorted(set(keys))).encode()).hexdigest()[:16]


def snapshot_fingerprint(snapshot: str) -> str:
    """:func:`elements_fingerprint` of the interactive elements of a snapshot."""
    return elements_fingerprint((element.role, element.name) for element in parse_aria_snapshot(snapshot))


def environment_from_snapshot(url: str, title: str, snapshot: str) -> EnvironmentState:
    """An environment state built from a page's url, title and aria snapshot."""
    return validated(EnvironmentState, url=url, title=title[:1000], elements=parse_aria_snapshot(snapshot))


def element_iou(a: EnvironmentState, b: EnvironmentState) -> float:
    """Intersection over union of two pages' (role, name) element sets; 0.0 when both are empty."""
    return keys_iou(a.element_keys(), b.element_keys())


def keys_iou(left: frozenset[tuple[str, str]], right: frozenset[tuple[str, str]]) -> float:
    union = left | right
    return len(left & right) / len(union) if union else 0.0

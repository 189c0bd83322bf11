"""observe: what the agent sees of a page (url, title, accessibility snapshot, interactive elements)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..core.episode_records import EnvironmentState, PageElement
from ..core.models import validated
from ..episodes.aria import INTERACTIVE_ROLES, elements_fingerprint, snapshot_line_parts, snapshot_scalar
from .browser import element_identity

MAX_SNAPSHOT_CHARS = 200_000
_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")
_FLAG = re.compile(r"\[(checked|disabled|selected|expanded|pressed)(?:=(\w+))?\]")
#: Nodes whose name is read from what they hold (a cell around a select is named by its chosen option): when
#: they hold more, that name may be the field's value, never a label for the field that follows.
_NAMED_BY_CONTENT = frozenset({"cell", "gridcell", "row", "rowgroup"})
_TEXT_LINE = re.compile(r"^\s*-\s+(?:text|paragraph|generic|heading|cell|label|strong|emphasis|listitem)"
                        r"(?:\s+\"[^\"]*\")?(?:\s+\[[^\]]*\])*:\s*(?P<text>.+)$")


@dataclass(frozen=True)
class Element:
    """An interactive element: its snapshot ref, role, accessible name, and the text just before it
    (``label``: what a person reads next to an unnamed field). ``open``: a tab shown as selected or
    expanded."""

    ref: str | None
    role: str
    name: str
    label: str = ""
    value: str | None = None
    checked: bool | None = None
    disabled: bool = False
    depth: int = 0
    open: bool = False

    @property
    def identity(self) -> str:
        """``role "name"``: how memory names the element across runs."""
        return element_identity(self.role, self.name)

    def describe(self) -> str:
        """The element as one line of the observation shown to the policy."""
        words = [f"[{self.ref}]" if self.ref else "[-]", self.identity]
        if not self.name and self.label:
            words.append(f"(label: {self.label[:80]!r})")
        if self.value:
            words.append(f"value={self.value[:80]!r}")
        if self.checked is not None:
            words.append("checked" if self.checked else "unchecked")
        if self.disabled:
            words.append("disabled")
        return " ".join(words)


@dataclass(frozen=True)
class Observation:
    """One look at the page."""

    url: str
    title: str
    snapshot: str
    elements: tuple[Element, ...]
    texts: tuple[str, ...] = field(default_factory=tuple)

    @property
    def fingerprint(self) -> str:
        """A hash of the set of (role, name) of the page's interactive elements: it changes when they do."""
        return elements_fingerprint((element.role, element.name) for element in self.elements)

    def find(self, role: str | None, name: str | None) -> list[Element]:
        """Elements with this role (any when None) and exactly this name (any when None)."""
        return [
            element for element in self.elements
            if (role is None or element.role == role) and (name is None or element.name == name)
        ]

    def by_ref(self, ref: str) -> Element | None:
        """The element with this snapshot ref, or None."""
        return next((element for element in self.elements if element.ref == ref), None)

    def environment(self) -> EnvironmentState:
        """The page as the memory's episode store keeps it."""
        return validated(EnvironmentState, url=self.url, title=self.title[:1000], elements=[
            PageElement(role=element.role, name=element.name[:1000], ref=element.ref,
                        value=element.value[:10_000] if element.value else None)
            for element in self.elements[:5000]
        ])

    def describe(self, limit: int = 80) -> str:
        """The interactive elements, one per line, for a prompt."""
        lines = [element.describe() for element in self.elements[:limit]]
        if len(self.elements) > limit:
            lines.append(f"... {len(self.elements) - limit} more elements")
        return "\n".join(lines)


def parse_snapshot(snapshot: str) -> tuple[tuple[Element, ...], tuple[str, ...]]:
    """The interactive elements (with the text read just before each) and the text lines of a snapshot."""
    elements: list[Element] = []
    texts: list[str] = []
    last_text = ""
    for line in snapshot[:MAX_SNAPSHOT_CHARS].splitlines():
        parts = snapshot_line_parts(line)
        if parts is not None and parts[0].group("role") in INTERACTIVE_ROLES:
            match, raw_value = parts
            rest = match.group("rest") or ""
            name = (match.group("name") or "").replace('\\"', '"').replace("\\\\", "\\")
            flags = {flag: (state or "true") for flag, state in _FLAG.findall(rest)}
            ref = _REF.search(rest)
            checked = None
            if match.group("role") in ("checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"):
                checked = flags.get("checked") == "true"
            elements.append(Element(
                ref=ref.group(1) if ref else None, role=match.group("role"), name=name[:1000],
                label=last_text[:200], value=snapshot_scalar(raw_value), checked=checked,
                disabled=flags.get("disabled") == "true", depth=(len(line) - len(line.lstrip())) // 2,
                open=flags.get("selected") == "true" or flags.get("expanded") == "true",
            ))
            last_text = ""
            continue
        if parts is not None and parts[0].group("role") not in ("img", "/url") and not (
            parts[0].group("role") in _NAMED_BY_CONTENT and line.rstrip().endswith(":")
        ) and (heading := parts[0].group("name") or snapshot_scalar(parts[1])):
            last_text = heading[:200]  # a row header or caption names the field that follows it
        text = _TEXT_LINE.match(line)
        if text is not None:
            value = snapshot_scalar(text.group("text")) or ""
            if value:
                texts.append(value[:1000])
                last_text = value
    return tuple(elements), tuple(texts)


def observe(page: Any) -> Observation:
    """Look at a Playwright page: its URL, title and ``aria_snapshot(mode="ai")`` with element refs."""
    snapshot = page.aria_snapshot(mode="ai")
    elements, texts = parse_snapshot(snapshot)
    return Observation(url=page.url, title=page.title(), snapshot=snapshot, elements=elements, texts=texts)

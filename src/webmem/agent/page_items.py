"""What the heuristic policy can act on in a page snapshot: interactive elements with their labels,
options and flags, and texts the page marks as clickable."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from ..episodes.aria import INTERACTIVE_ROLES, snapshot_line_parts, snapshot_scalar
from ..trajectories.evidence import TEXT_ROLE
from .actions import Target, text_selector
from .browser import element_identity
from .instructions import salient

_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")


def text_target(text: str) -> Target:
    return Target(role=TEXT_ROLE, name=text, selector=text_selector(text))


@dataclass(frozen=True)
class PageItem:
    """Something on the page to act on: an interactive element, or a text the page marks as clickable."""

    ref: str
    role: str
    name: str
    label: str = ""
    value: str | None = None
    checked: bool | None = None
    selected: bool = False
    disabled: bool = False
    container: bool = False
    options: tuple[tuple[str, bool], ...] = ()
    handle: str = ""
    unique: bool = True

    @property
    def identity(self) -> str:
        return element_identity(self.role, self.name)

    @property
    def words(self) -> list[str]:
        return salient(self.name or self.label) if self.role != "combobox" else []

    def target(self) -> Target:
        if self.role not in INTERACTIVE_ROLES:
            return text_target(self.handle)
        named = self.name and self.unique
        return Target(ref=self.ref, role=self.role, name=self.name) if named else Target(ref=self.ref)


def read_page(snapshot: str, goal: str) -> tuple[list[PageItem], list[str]]:
    """The items of a snapshot (interactive elements with labels, options and flags, and texts the page
    marks as clickable), and its texts other than the instruction."""
    lines = snapshot.splitlines()
    parsed = [snapshot_line_parts(line) for line in lines]
    depths = [len(line) - len(line.lstrip()) for line in lines]
    items: list[PageItem] = []
    texts: list[str] = []
    last_text = ""
    for index, parts in enumerate(parsed):
        if parts is None:
            continue
        (match, raw), end = parts, index + 1
        role, rest, value = match.group("role"), match.group("rest") or "", snapshot_scalar(raw)
        name, ref = (match.group("name") or "").replace('\\"', '"').replace("\\\\", "\\"), _REF.search(rest)
        while end < len(lines) and depths[end] > depths[index]:
            end += 1
        below = [p for p in parsed[index + 1:end] if p is not None]
        inside = any(p[0].group("role") in INTERACTIVE_ROLES for p in below)
        if role in INTERACTIVE_ROLES:
            if ref is not None:
                checked = "[checked" in rest and "[checked=false]" not in rest
                options = [(p[0].group("name") or "", "[selected]" in (p[0].group("rest") or ""))
                           for p in below if p[0].group("role") == "option"]
                label = _sibling_text(parsed, depths, index, -1) or _sibling_text(parsed, depths, index, 1) or last_text
                items.append(PageItem(
                    ref.group(1), role, name, label, value, checked if role in ("checkbox", "radio") else None,
                    "[selected]" in rest, "[disabled" in rest, inside, tuple(options) if role == "combobox" else ()))
                last_text = ""
            continue
        if "[cursor=pointer]" in rest and ref is not None and not inside:
            inner = [text for p in below if (text := snapshot_scalar(p[1]) or p[0].group("name"))]
            if handle := value or name or (inner[0] if inner else ""):
                items.append(PageItem(ref.group(1), "generic", " ".join([handle, *inner[1:3]])[:200], handle=handle))
        text = value if value and role not in ("img", "/url") else name
        if text and text.strip() != goal.strip():
            texts.append(text)
            last_text = last_text if "[cursor=pointer]" in rest else text
    counts = Counter(item.identity for item in items)
    return [item if counts[item.identity] == 1 else replace(item, unique=False) for item in items], texts


def _sibling_text(parsed: list[tuple[re.Match[str], str | None] | None], depths: list[int], index: int,
                  step: int) -> str:
    """The text of the element's nearest sibling before (step -1) or after it (step 1), if that is a text."""
    at = index + step
    while 0 <= at < len(depths) and depths[at] > depths[index]:
        at += step
    if not (0 <= at < len(depths)) or depths[at] != depths[index] or parsed[at] is None:
        return ""
    match, raw = parsed[at]
    return "" if match.group("role") in INTERACTIVE_ROLES else snapshot_scalar(raw) or match.group("name") or ""

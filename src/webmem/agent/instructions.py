"""Reading an instruction: the values it asks to type, the names it asks to click, the roles it names.

The heuristic policy's half that never looks at a page: ``Instruction.read`` parses the goal once;
``match`` and ``field_values`` then set it against what a page shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.terms import NAME_SPELLINGS

if TYPE_CHECKING:
    from .page_items import PageItem

_TOKEN = re.compile(r'"[^"]+"|“[^”]+”|[\w#@/:.\'+-]+')
_WORD = re.compile(r"[\w#@]+")
_NUMBER = re.compile(r"^-?\d[\d.,:/-]*$")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_LOOKUP = re.compile(r"\bvalue (?:of|for) (.+?) (?:into|in|to)\b", re.IGNORECASE)
_PATH = re.compile(r"[^\s>]+(?:\s*>\s*[^\s>.]+)+")
_ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "last": -1}
_TYPE_VERBS = frozenset({"enter", "type", "input", "fill", "write", "put", "paste"})
_CLICK_VERBS = frozenset({"click", "press", "hit", "select", "choose", "check", "tap", "push", "pick", "open",
                          "expand", "close", "find", "switch", "mark", "focus", "navigate", "submit", "use", "search"})
_STOP = (_TYPE_VERBS | _CLICK_VERBS) - {"submit", "search"} | frozenset(
    "a an the on in into to of and or then with by from for at as is it its this that them their these those all "
    "both each any item items word words below above next text field fields box please your you when done "
    "button link widget labeled named called set".split())
ROLE_WORDS = {
    "textbox": ("textbox", "searchbox"), "field": ("textbox", "searchbox"), "input": ("textbox", "searchbox"),
    "text": ("textbox", "searchbox"), "textarea": ("textbox",), "checkbox": ("checkbox",), "radio": ("radio",),
    "button": ("button",), "link": ("link",), "tab": ("tab",), "dropdown": ("combobox",), "result": ("link",),
    "spinner": ("spinbutton",)}


def norm(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))



def salient(text: str) -> list[str]:
    return [word for word in norm(text).split() if word not in _STOP]



def _akin(one: str, other: str) -> bool:
    """The same word, or two words sharing a five-letter stem ("directed", "director")."""
    return one == other or (min(len(one), len(other)) >= 5 and one[:5] == other[:5])



def ordinal_of(word: str) -> int | None:
    word = word.casefold().strip(".,")
    return int(match.group(1)) if (match := _ORDINAL.match(word)) else _ORDINAL_WORDS.get(word)



def same_name(name: str, quoted: str) -> bool:
    return name.strip().casefold() in (quoted.casefold(), *NAME_SPELLINGS.get(quoted.casefold(), ()))


def input_form(text: str) -> str | None:
    """The form a date or time input takes (2014-12-01, 23:20) of a value written for people."""
    if date := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text):
        return f"{date[3]}-{int(date[1]):02d}-{int(date[2]):02d}"
    if time := re.fullmatch(r"(\d{1,2}):(\d{2})\s*([AaPp])[Mm]", text):
        return f"{int(time[1]) % 12 + (12 if time[3] in 'Pp' else 0):02d}:{time[2]}"
    return None


@dataclass(frozen=True)
class _Value:
    """A value to type, with the word naming its field and the field's ordinal when the goal gives them."""

    text: str
    key: str | None = None
    ordinal: int | None = None


@dataclass
class Instruction:
    """What the policy reads from an instruction: values to type, names to click, roles to pick."""

    text: str
    norm: str = ""
    values: list[_Value] = field(default_factory=list)
    names: list[tuple[str, int]] = field(default_factory=list)
    roles: list[tuple[str, int | None, int]] = field(default_factory=list)
    case: Callable[[str], str] = str
    via: frozenset[str] = frozenset()

    @classmethod
    def read(cls, text: str) -> Instruction:
        goal, low = cls(text=text, norm=f" {norm(text)} "), text.casefold()
        goal.case = str.upper if "upper case" in low or "capital" in low else str.lower if "lower case" in low else str
        paths = [[step.strip() for step in path.split(">")] for path in _PATH.findall(text)]
        goal.via = frozenset(step.casefold() for path in paths for step in path[:-1])
        goal.names += [(path[-1], text.find(path[-1])) for path in paths]
        tokens = [(match.group(), match.start()) for match in _TOKEN.finditer(text)]
        words = [token.casefold().strip(".,:;!?'") for token, _ in tokens] + ["", ""]
        mode = "click"
        for index, (token, start) in enumerate(tokens):
            word, after = words[index], words[index + 1]
            if word in _TYPE_VERBS | _CLICK_VERBS:
                mode = "type" if word in _TYPE_VERBS and after not in ROLE_WORDS else "click"
            if token[0] in "\"“" and mode == "type":
                before = [] if words[index - 1] in _TYPE_VERBS | _CLICK_VERBS else words[max(0, index - 3):index]
                key = next((w for w in reversed(before) if w.isalpha() and w not in _STOP), None)
                near = words[index + 1:index + 6]
                near = near[:next((at for at, w in enumerate(near) if w in ("and", "then") or w[:1] == '"'), 5)]
                goal.values.append(_Value(token[1:-1], key, next((n for n in map(ordinal_of, near) if n), None)))
            elif token[0] in "\"“" and token[1:-1].casefold() in ROLE_WORDS:
                goal.roles.append((token[1:-1].casefold(), None, start))
            elif token[0] in "\"“":
                goal.names.append((token[1:-1], start))
            elif word in _TYPE_VERBS | {"select", "set"} and _NUMBER.match(after):
                am_pm = f" {tokens[index + 2][0].strip('.,')}" if words[index + 2] in ("am", "pm") else ""
                goal.values.append(_Value(tokens[index + 1][0].strip(".,") + am_pm))
            elif mode == "click" and word in ROLE_WORDS and '"' not in (words[index - 1][:1] + after[:1]):
                ordinal = next((n for n in map(ordinal_of, reversed(words[max(0, index - 2):index])) if n), None)
                goal.roles.append((word, ordinal, start))
        return goal

    def match(self, name: str) -> tuple[float, int]:
        """How well ``name`` matches what the instruction names (0-100), and where in the instruction."""
        stripped = name.strip()
        for quoted, position in self.names if stripped else ():
            if same_name(stripped, quoted):
                return (100.0 if stripped == quoted else 90.0), position
        phrase = norm(name)
        if any(phrase == norm(value.text) for value in self.values):
            return 0.0, -1
        if phrase and any(word not in _STOP for word in phrase.split()) and (at := self.norm.find(f" {phrase} ")) >= 0:
            return (70.0 if stripped in self.text else 60.0), at
        own = salient(name)
        hits = [next((self.norm.find(f" {word} ") for word in self.norm.split() if _akin(word, mine)), -1)
                for mine in own]
        found = [hit for hit in hits if hit >= 0]
        return (30.0 * len(found) / len(own) + (10.0 if hits[0] >= 0 else 0.0), min(found)) if found else (0.0, -1)

    def field_values(self, fields: list[PageItem], texts: list[str]) -> tuple[dict[int, str], list[str]]:
        """Which value goes into which field (by index in ``fields``), and the values no field takes."""
        values = self.values
        if not values and (lookup := _LOOKUP.search(self.text)):
            wanted = lookup.group(1).strip().casefold()
            values = [_Value(after) for text, after in zip(texts, texts[1:]) if text.strip().casefold() == wanted][:1]
        if not values:
            return self._described_values(fields), []
        plan: dict[int, str] = {}
        spare = []
        for value in values:
            if value.ordinal is not None and value.ordinal <= len(fields):
                matched = [value.ordinal - 1 if value.ordinal > 0 else len(fields) - 1]
            else:
                matched = [at for at, item in enumerate(fields)
                           if value.key and any(_akin(value.key, word) for word in item.words)]
            for index in matched:
                plan.setdefault(index, self.case(value.text))
            spare += [] if matched else [self.case(value.text)]
        for index, item in enumerate(fields):
            if index not in plan and spare and item.role != "combobox" and (
                    not item.value or item.value in (spare[0], input_form(spare[0])) or item.role == "spinbutton"):
                plan[index] = spare.pop(0)
        return plan, spare

    def _described_values(self, fields: list[PageItem]) -> dict[int, str]:
        """Values given without quotes next to a word that labels their field ("directed by Scott")."""
        tokens = [token.strip(".,;:!?\"“”") for token in _TOKEN.findall(self.text)]
        folded = [token.casefold() for token in tokens]
        naming = {at for at, word in enumerate(folded)
                  if any(_akin(word, own) for item in fields for own in item.words)}
        used: set[int] = set()

        def free(at: int, step: int) -> int | None:
            while 0 <= at < len(tokens) and folded[at] in _STOP:
                at += step
            return at if 0 <= at < len(tokens) and at not in naming | used and folded[at] not in _CLICK_VERBS else None

        plan: dict[int, str] = {}
        for index, item in enumerate(fields):
            for at in (at for at in sorted(naming) if any(_akin(folded[at], own) for own in item.words)):
                if (found := free(at + 1, 1)) is not None or (found := free(at - 1, -1)) is not None:
                    plan[index] = tokens[found]
                    used.add(found)
                    break
        rest = sorted((at for at in range(len(tokens)) if free(at, 1) == at),
                      key=lambda at: (not (any(c.isdigit() for c in tokens[at]) or tokens[at][:1].isupper()), at))
        for index, item in enumerate(fields):
            if plan and index not in plan and rest and item.role != "combobox":
                plan[index] = tokens[rest.pop(0)]
        return plan

"""HeuristicPolicy: a rule-based baseline agent that needs no LLM and no network.

It reads the instruction, matches its quoted and salient words to what the page shows, and does the
obvious thing: types values into the fields they belong to, selects and checks what the instruction
names, clicks the named link, button or tab, submits, and explores the rest when it is unsure. It is
a baseline to measure memory and LLM policies against, not an agent to rely on.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..aria import INTERACTIVE_ROLES, snapshot_line_parts, snapshot_scalar
from ..browser import element_identity
from .actions import Action, Target
from .policy import PolicyStats, StepOutcome, Turn

SUGGESTION_WAIT_MS = 500
MENU_WAIT_MS = 400
OPENING = "open the menu on the way to the item"
EXPLORING = "explore: nothing the instruction names is left"
SELECT_ALL, COPY, PASTE = "ControlOrMeta+a", "ControlOrMeta+c", "ControlOrMeta+v"

_TOKEN = re.compile(r'"[^"]+"|“[^”]+”|[\w#@/:.\'+-]+')
_WORD = re.compile(r"[\w#@]+")
_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")
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
_ROLE_WORDS = {
    "textbox": ("textbox", "searchbox"), "field": ("textbox", "searchbox"), "input": ("textbox", "searchbox"),
    "text": ("textbox", "searchbox"), "textarea": ("textbox",), "checkbox": ("checkbox",), "radio": ("radio",),
    "button": ("button",), "link": ("link",), "tab": ("tab",), "dropdown": ("combobox",), "result": ("link",),
    "spinner": ("spinbutton",)}
_SUBMIT_NAMES = ("submit", "ok", "login", "log in", "sign in", "search", "go", "send", "done", "continue",
                 "save", "enter", "confirm", "apply")
_DISMISS_NAMES = ("cancel", "close", "no", "x", "×", "dismiss", "not now", "no thanks", "later")
_SECRET_WORDS = frozenset({"password", "passcode", "passphrase", "pin"})
_PAGER_NAMES = (">", "»", "›", "next")
_SYNONYMS = {"x": ("close", "×", "✕"), "close": ("x", "×", "✕"), "login": ("log in", "sign in")}
_FIELD_ROLES = frozenset({"textbox", "searchbox", "spinbutton", "combobox"})
_CLICK_ROLES = frozenset({"button", "link", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem",
                          "option", "checkbox", "radio", "switch", "generic"})
_WAYFINDING = frozenset({"tab", "link", "generic", "treeitem", "menuitem"})


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def _salient(text: str) -> list[str]:
    return [word for word in _norm(text).split() if word not in _STOP]


def _akin(one: str, other: str) -> bool:
    """The same word, or two words sharing a five-letter stem ("directed", "director")."""
    return one == other or (min(len(one), len(other)) >= 5 and one[:5] == other[:5])


def _ordinal(word: str) -> int | None:
    word = word.casefold().strip(".,")
    return int(match.group(1)) if (match := _ORDINAL.match(word)) else _ORDINAL_WORDS.get(word)


def _same(name: str, quoted: str) -> bool:
    return name.strip().casefold() in (quoted.casefold(), *_SYNONYMS.get(quoted.casefold(), ()))


def _named_like(name: str, names: tuple[str, ...]) -> bool:
    return _norm(name) in names or name.strip().casefold() in names


def _text_target(text: str) -> Target:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return Target(selector=f'internal:text="{escaped}"s >> visible=true >> nth=0')


def _alternate(text: str) -> str | None:
    """The form a date or time input takes (2014-12-01, 23:20) of a value written for people."""
    if date := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text):
        return f"{date[3]}-{int(date[1]):02d}-{int(date[2]):02d}"
    if time := re.fullmatch(r"(\d{1,2}):(\d{2})\s*([AaPp])[Mm]", text):
        return f"{int(time[1]) % 12 + (12 if time[3] in 'Pp' else 0):02d}:{time[2]}"
    return None


@dataclass(frozen=True)
class _Item:
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
        return _salient(self.name or self.label) if self.role != "combobox" else []

    def target(self) -> Target:
        if self.role not in INTERACTIVE_ROLES:
            return _text_target(self.handle)
        named = self.name and self.unique
        return Target(ref=self.ref, role=self.role, name=self.name) if named else Target(ref=self.ref)


@dataclass(frozen=True)
class _Value:
    """A value to type, with the word naming its field and the field's ordinal when the goal gives them."""

    text: str
    key: str | None = None
    ordinal: int | None = None


@dataclass
class _Goal:
    """What the policy reads from an instruction: values to type, names to click, roles to pick."""

    text: str
    norm: str = ""
    values: list[_Value] = field(default_factory=list)
    names: list[tuple[str, int]] = field(default_factory=list)
    roles: list[tuple[str, int | None, int]] = field(default_factory=list)
    case: Callable[[str], str] = str
    via: frozenset[str] = frozenset()

    @classmethod
    def read(cls, text: str) -> _Goal:
        goal, low = cls(text=text, norm=f" {_norm(text)} "), text.casefold()
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
                mode = "type" if word in _TYPE_VERBS and after not in _ROLE_WORDS else "click"
            if token[0] in "\"“" and mode == "type":
                before = [] if words[index - 1] in _TYPE_VERBS | _CLICK_VERBS else words[max(0, index - 3):index]
                key = next((w for w in reversed(before) if w.isalpha() and w not in _STOP), None)
                near = words[index + 1:index + 6]
                near = near[:next((at for at, w in enumerate(near) if w in ("and", "then") or w[:1] == '"'), 5)]
                goal.values.append(_Value(token[1:-1], key, next((n for n in map(_ordinal, near) if n), None)))
            elif token[0] in "\"“" and token[1:-1].casefold() in _ROLE_WORDS:
                goal.roles.append((token[1:-1].casefold(), None, start))
            elif token[0] in "\"“":
                goal.names.append((token[1:-1], start))
            elif word in _TYPE_VERBS | {"select", "set"} and _NUMBER.match(after):
                am_pm = f" {tokens[index + 2][0].strip('.,')}" if words[index + 2] in ("am", "pm") else ""
                goal.values.append(_Value(tokens[index + 1][0].strip(".,") + am_pm))
            elif mode == "click" and word in _ROLE_WORDS and '"' not in (words[index - 1][:1] + after[:1]):
                ordinal = next((n for n in map(_ordinal, reversed(words[max(0, index - 2):index])) if n), None)
                goal.roles.append((word, ordinal, start))
        return goal

    def match(self, name: str) -> tuple[float, int]:
        """How well ``name`` matches what the instruction names (0-100), and where in the instruction."""
        stripped = name.strip()
        for quoted, position in self.names if stripped else ():
            if _same(stripped, quoted):
                return (100.0 if stripped == quoted else 90.0), position
        phrase = _norm(name)
        if any(phrase == _norm(value.text) for value in self.values):
            return 0.0, -1
        if phrase and any(word not in _STOP for word in phrase.split()) and (at := self.norm.find(f" {phrase} ")) >= 0:
            return (70.0 if stripped in self.text else 60.0), at
        own = _salient(name)
        hits = [next((self.norm.find(f" {word} ") for word in self.norm.split() if _akin(word, mine)), -1)
                for mine in own]
        found = [hit for hit in hits if hit >= 0]
        return (30.0 * len(found) / len(own) + (10.0 if hits[0] >= 0 else 0.0), min(found)) if found else (0.0, -1)

    def field_values(self, fields: list[_Item], texts: list[str]) -> tuple[dict[int, str], list[str]]:
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
                    not item.value or item.value in (spare[0], _alternate(spare[0])) or item.role == "spinbutton"):
                plan[index] = spare.pop(0)
        return plan, spare

    def _described_values(self, fields: list[_Item]) -> dict[int, str]:
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


def _read_page(snapshot: str, goal: str) -> tuple[list[_Item], list[str]]:
    """The items of a snapshot (interactive elements with labels, options and flags, and texts the page
    marks as clickable), and its texts other than the instruction."""
    lines = snapshot.splitlines()
    parsed = [snapshot_line_parts(line) for line in lines]
    depths = [len(line) - len(line.lstrip()) for line in lines]
    items: list[_Item] = []
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
                items.append(_Item(
                    ref.group(1), role, name, label, value, checked if role in ("checkbox", "radio") else None,
                    "[selected]" in rest, "[disabled" in rest, inside, tuple(options) if role == "combobox" else ()))
                last_text = ""
            continue
        if "[cursor=pointer]" in rest and ref is not None and not inside:
            inner = [text for p in below if (text := snapshot_scalar(p[1]) or p[0].group("name"))]
            if handle := value or name or (inner[0] if inner else ""):
                items.append(_Item(ref.group(1), "generic", " ".join([handle, *inner[1:3]])[:200], handle=handle))
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


def _key(target: Target | None) -> str:
    if target is None:
        return ""
    return target.identity if target.role and target.name else target.ref or target.selector or ""


class HeuristicPolicy:
    """A rule-based baseline policy: no LLM, no network, decisions from the instruction and the page.

    Each turn it fills the fields the instruction gives values for (dismissing a dialog that disables
    them), selects the options it names, picks a suggestion that fits what it typed, clicks the named
    targets (checkboxes, links, buttons, tabs, texts) in the order the instruction names them, submits
    once the values are in, and finishes. When nothing named is left and the goal does not look done,
    it explores the remaining clickable items in ranked order, never repeating an action on a target.
    The memory's known selectors break ties: an element with more recorded successes ranks higher.
    """

    name = "heuristic"

    def __init__(self) -> None:
        self.stats = PolicyStats()
        self.start("")

    def start(self, goal: str) -> None:
        self._goal = _Goal.read(goal)
        self._texts_tried: set[tuple[str, str]] = set()
        self._per_page = 0
        self._picked: tuple[Target, str] | None = None
        self._items: list[_Item] = []
        self._texts: list[str] = []
        self._history: tuple[StepOutcome, ...] = ()
        self._done: Counter[tuple[str, str, str]] = Counter()
        self._failed: set[tuple[str, str, str]] = set()
        self._known: dict[str, int] = {}

    def decide(self, turn: Turn) -> Action:
        self.stats.decisions += 1
        if self._goal.text != turn.goal:
            self.start(turn.goal)
        self._items, self._texts = _read_page(turn.observation.snapshot, turn.goal)
        self._history = turn.history
        keys = [((step.action.kind, _key(step.action.target), step.action.value or ""), step.ok)
                for step in turn.history]
        self._done, self._failed = Counter(key for key, _ in keys), {key for key, ok in keys if not ok}
        self._known = {entry.element: entry.success_count for entry in turn.known_selectors}
        last = turn.history[-1] if turn.history else None
        if last is not None and last.action.reason == OPENING:
            return Action(kind="wait", wait_ms=MENU_WAIT_MS, reason="let the menu open")
        for rule in (self._copy, self._fill, self._select, self._suggestion, self._text, self._named, self._submit):
            if (action := rule()) is not None:
                return action
        if last is not None and last.ok and last.verified is not False and last.action.reason != EXPLORING \
                and not self._unclicked():
            return Action(kind="finish", success=True, reason="every step the instruction names is done")
        return self._explore() or Action(kind="finish", success=False, reason="nothing left to try")

    def _tried(self, kind: str, item: _Item, value: str = "") -> int:
        return self._done[(kind, _key(item.target()), value)]

    def _unclicked(self) -> list[str]:
        """The quoted names no successful action reached."""
        targets = [step.action.target for step in self._history if step.ok and step.action.target is not None]
        typed = {step.action.value for step in self._history if step.ok and step.action.kind in ("fill", "type")}
        return [quoted for quoted, _ in self._goal.names if quoted not in typed
                and not any(_same(target.name or "", quoted) or target == _text_target(quoted) for target in targets)]

    def _plan(self) -> tuple[list[tuple[_Item, str]], list[str]]:
        fields = [item for item in self._items if item.role in _FIELD_ROLES and not item.options]
        plan, spare = self._goal.field_values(fields, self._texts)
        return [(fields[index], text) for index, text in sorted(plan.items())], spare

    def _pending(self) -> list[tuple[_Item, str]]:
        """Planned values not in their field yet; a field left empty by a fill that worked gets one more
        try, in the form a date or time input takes when there is one."""
        pending = []
        for item, text in self._plan()[0]:
            tries, key = self._tried("fill", item, text), ("fill", _key(item.target()), text)
            if (item.value or "") == text or tries and (item.value or key in self._failed) or tries >= 2:
                continue
            alternate = _alternate(text) if tries else None
            if alternate is None or not self._tried("fill", item, alternate):
                pending.append((item, alternate or text))
        return pending

    def _copy(self) -> Action | None:
        """Copy a field's text and paste it into another field with the keyboard, as a person does."""
        if " copy " not in self._goal.norm or " paste " not in self._goal.norm:
            return None
        fields = [item for item in self._items if item.role in ("textbox", "searchbox")]
        full = [item for item in fields if item.value]
        ordinal = next((number for word in self._goal.text.split() if (number := _ordinal(word))), 1)
        source = full[ordinal - 1 if 0 < ordinal <= len(full) else 0] if full else None
        target = next((item for item in fields if item is not source and not self._tried("press", item, PASTE)
                       and (not item.value or item.value != getattr(source, "value", None))), None)
        for item, key in ((source, SELECT_ALL), (source, COPY), (target, PASTE)):
            if item is None:
                return None
            if not self._tried("press", item, key):
                return Action(kind="press", target=item.target(), value=key, reason="copy and paste the text")
        return None

    def _fill(self) -> Action | None:
        if any(item.disabled for item, _ in self._plan()[0]):
            for item in self._items:
                if item.role == "button" and not item.disabled and _named_like(item.name, _DISMISS_NAMES) \
                        and not self._tried("click", item) and self._goal.match(item.name)[0] < 50:
                    return Action(kind="click", target=item.target(), reason="dismiss what blocks the fields")
        if self._picked is not None:
            (target, text), self._picked = self._picked, None
            if any(item.ref == target.ref and item.value != text for item in self._items):
                return Action(kind="fill", target=target, value=text, reason="the suggestion did not take: type it")
        for item, text in self._pending():
            if not item.disabled:
                return Action(kind="fill", target=item.target(), value=text, reason="the instruction gives this value",
                              secret=any(word in _SECRET_WORDS for word in item.words))
        return None

    def _select(self) -> Action | None:
        for item in (item for item in self._items if item.role == "combobox" and not item.disabled):
            for score, option, chosen in sorted(((self._goal.match(option)[0], option, chosen)
                                                 for option, chosen in item.options if option), reverse=True):
                if score >= 50 and not chosen and not self._tried("select", item, option):
                    return Action(kind="select", target=item.target(), value=option, reason="the goal names it")
        return None

    def _suggestion(self) -> Action | None:
        """After typing, the offered item that fits the instruction's values (an autocomplete list)."""
        acted = [step for step in self._history if step.action.kind not in ("wait", "hover")]
        last = acted[-1].action if acted and acted[-1].ok else None
        if last is None or last.kind not in ("fill", "type") or not last.value or last.target is None:
            return None
        typed, wanted = last.value.casefold(), [value.text.casefold() for value in self._goal.values]
        offers = [item for item in self._items if item.role in ("generic", "option", "menuitem", "link")
                  and typed in item.name.casefold() and not self._tried("click", item)]
        offers.sort(key=lambda item: (-sum(word in item.name.casefold() for word in wanted), len(item.name)))
        if offers and not self._tried("hover", offers[0]):
            return Action(kind="hover", target=offers[0].target(), reason="point at the suggestion")
        if offers:
            self._picked = (last.target, offers[0].handle or offers[0].name)
            return Action(kind="click", target=offers[0].target(), reason="pick the suggestion")
        if self._plan()[1] and not any(step.action.kind == "wait" for step in self._history):
            return Action(kind="wait", wait_ms=SUGGESTION_WAIT_MS, reason="a value is left: wait for suggestions")
        return None

    def _text(self) -> Action | None:
        """A quoted name no element carries but the page shows: click that text (twice at most, each
        time the page shows other texts)."""
        visible = f" {_norm(' '.join(self._texts))} "
        typed = {step.action.value for step in self._history if step.ok and step.action.kind in ("fill", "type")}
        for quoted, _ in self._goal.names:
            if quoted in typed or f" {_norm(quoted)} " not in visible or any(_same(item.name, quoted) for item in self._items):
                continue
            target = _text_target(quoted)
            if (target.selector, visible) not in self._texts_tried and sum(
                    tried == target.selector for tried, _ in self._texts_tried) < 2:
                self._texts_tried.add((target.selector or "", visible))
                return Action(kind="click", target=target, reason="click the named text")
        return None

    def _named(self) -> Action | None:
        """The next item the instruction names, in the order it names them (a submit waits for the values)."""
        goal, pending, wanted = self._goal, bool(self._pending()), []
        for order, item in enumerate(self._items):
            if item.role not in _CLICK_ROLES or item.disabled or item.checked or item.selected or item.container:
                continue
            (score, position), submit = goal.match(item.name), _named_like(item.name, _SUBMIT_NAMES)
            kind = "hover" if item.name.strip().casefold() in goal.via else "click"
            named = score >= 50 or score >= 25 and item.role in _WAYFINDING and not submit
            if named and not self._tried(kind, item) and not (submit and pending):
                wanted.append((submit, position, -score, -self._known.get(item.identity, 0), order, item, kind))
        for word, ordinal, position in goal.roles:
            roles = _ROLE_WORDS[word]
            if (goal.values and set(roles) & _FIELD_ROLES) or word != "result" and any(
                    goal.match(item.name)[0] >= 50 for item in self._items if item.role in roles):
                continue
            same = [item for item in self._items if item.role in roles and not item.disabled and not item.container]
            index = -1 if ordinal == -1 else (ordinal or 1) - 1
            picked = same[index] if -len(same) <= index < len(same) else None
            picked = self._result(ordinal or 1) if word == "result" else picked
            if picked is not None and not self._tried("click", picked) and not picked.checked:
                wanted.append((False, position, -50.0, 0, 0, picked, "click"))
        if not wanted:
            return None
        *_, item, kind = min(wanted, key=lambda entry: entry[:5])
        return Action(kind=kind, target=item.target(), reason="the goal names it" if kind == "click" else OPENING)

    def _result(self, ordinal: int) -> _Item | None:
        """The ordinal-th result of a paged list: on this page, or the link to the page that has it."""
        pagers = [item for item in self._items if item.role == "link" and (
            _norm(item.name).isdigit() or _named_like(item.name, _PAGER_NAMES))]
        results = [item for item in self._items if item.role == "link" and item not in pagers]
        if not results:
            return None
        self._per_page = self._per_page or len(results)
        page = next((int(name) for step in reversed(self._history) if step.ok and step.action.target is not None
                     and (name := _norm(step.action.target.name or "")).isdigit()), 1)
        wanted, index = divmod(ordinal - 1, self._per_page)
        if wanted + 1 == page:
            return results[index] if index < len(results) else None
        return next((item for item in pagers if _norm(item.name) == str(wanted + 1)), None) or next(
            (item for item in pagers if _named_like(item.name, _PAGER_NAMES)), None)

    def _submit(self) -> Action | None:
        """Once values went in since the last submit, the submit-like button (the goal's own first)."""
        for step in reversed(self._history):
            name = step.action.target.name if step.action.target is not None else None
            if step.action.kind == "click" and _named_like(name or "", _SUBMIT_NAMES):
                return None
            if step.action.kind in ("fill", "type", "select", "press") and step.ok:
                break
        else:
            return None
        if self._pending():
            return None
        buttons = [item for item in self._items if item.role in ("button", "generic") and not item.disabled
                   and _named_like(item.name, _SUBMIT_NAMES) and not self._tried("click", item)]
        if buttons:
            best = min(buttons, key=lambda item: (-self._goal.match(item.name)[0], _SUBMIT_NAMES.index(_norm(item.name))
                                                  if _norm(item.name) in _SUBMIT_NAMES else len(_SUBMIT_NAMES)))
            return Action(kind="click", target=best.target(), reason="submit the values")
        texts = (_text_target(text) for text in self._texts if _named_like(text, _SUBMIT_NAMES))
        target = next((target for target in texts if not self._done[("click", _key(target), "")]), None)
        return Action(kind="click", target=target, reason="submit the values") if target else None

    def _explore(self) -> Action | None:
        ranked = []
        for order, item in enumerate(self._items):
            score = self._goal.match(item.name)[0]
            if item.role in _CLICK_ROLES and not (item.disabled or item.checked or item.container) \
                    and not self._tried("click", item) and (score >= 50 or not _named_like(item.name, _SUBMIT_NAMES)):
                ranked.append((-score, item.role not in _WAYFINDING, -self._known.get(item.identity, 0), order, item))
        if not ranked:
            return None
        return Action(kind="click", target=min(ranked, key=lambda entry: entry[:4])[4].target(), reason=EXPLORING)

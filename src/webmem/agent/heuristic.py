"""HeuristicPolicy: a rule-based baseline agent that needs no LLM and no network.

It reads the instruction, matches its quoted and salient words to what the page shows, and does the
obvious thing: types values into the fields they belong to, selects and checks what the instruction
names, clicks the named link, button or tab, submits, and explores the rest when it is unsure. It is
a baseline to measure memory and LLM policies against, not an agent to rely on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..aria import INTERACTIVE_ROLES, _line_parts, _scalar
from ..browser import element_identity
from .actions import Action, Target
from .policy import PolicyStats, StepOutcome, Turn

_TOKEN = re.compile(r'"[^"]+"|“[^”]+”|[\w#@/:.\'+-]+')
_WORD = re.compile(r"[\w#@]+")
_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "last": -1}
_TYPE_VERBS = frozenset({"enter", "type", "input", "fill", "write", "put"})
_CLICK_VERBS = frozenset({"click", "press", "hit", "select", "choose", "check", "tap", "push", "pick", "open",
                          "expand", "close", "find", "switch", "mark", "focus", "navigate", "submit", "use"})
_STOP = frozenset(
    "a an the on in into to of and or then with by from for at as is it its this that them their these those "
    "all both each any one item items word words below above next text field fields box please your you "
    "click press hit select choose check tap push pick open expand close find switch mark focus navigate enter "
    "type input fill write put use when done button link tab widget labeled named called".split()
)
_ROLE_WORDS = {
    "textbox": ("textbox", "searchbox"), "field": ("textbox", "searchbox"), "input": ("textbox", "searchbox"),
    "text": ("textbox", "searchbox"), "textarea": ("textbox",), "checkbox": ("checkbox",), "radio": ("radio",),
    "button": ("button",), "link": ("link",), "tab": ("tab",), "dropdown": ("combobox",), "result": ("link",),
}
_SUBMIT_NAMES = ("submit", "ok", "login", "log in", "sign in", "search", "go", "send", "done", "next", "continue",
                 "save", "enter", "confirm", "apply")
_SYNONYMS = {"x": ("close", "×", "✕", "x"), "close": ("x", "×", "✕"), "ok": ("okay",), "login": ("log in", "sign in")}
_FIELD_ROLES = frozenset({"textbox", "searchbox", "spinbutton"})
_CLICK_ROLES = frozenset({"button", "link", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem",
                          "option", "checkbox", "radio", "switch", "generic"})
_EXPLORE_FIRST = frozenset({"tab", "treeitem", "menuitem", "generic"})


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def _salient(text: str) -> list[str]:
    return [word for word in _norm(text).split() if word not in _STOP]


@dataclass(frozen=True)
class _Item:
    """Something on the page the policy may act on (an interactive element, or a clickable text)."""

    ref: str | None
    role: str
    name: str
    label: str = ""
    value: str | None = None
    checked: bool | None = None
    selected: bool = False
    disabled: bool = False
    options: tuple[tuple[str, bool], ...] = ()
    unique: bool = True

    def target(self) -> Target:
        if self.role in INTERACTIVE_ROLES and self.name and self.unique:
            return Target(ref=self.ref, role=self.role, name=self.name)
        if self.role in INTERACTIVE_ROLES:
            return Target(ref=self.ref)
        return Target(selector=f"aria-ref={self.ref}")

    @property
    def text(self) -> str:
        return f"{self.name} {self.label}".strip()

    @property
    def identity_key(self) -> str:
        return element_identity(self.role, self.name)


@dataclass(frozen=True)
class _Value:
    """A value the instruction asks to type, with the word that names its field and an ordinal field."""

    text: str
    key: str | None
    position: int
    ordinal: int | None = None


@dataclass
class _Goal:
    """What the policy reads from an instruction."""

    text: str
    norm: str = ""
    values: list[_Value] = field(default_factory=list)
    names: list[tuple[str, int]] = field(default_factory=list)
    roles: list[tuple[str, int | None, int]] = field(default_factory=list)
    upper: bool = False
    lower: bool = False

    @classmethod
    def read(cls, text: str) -> _Goal:
        goal = cls(text=text, norm=f" {_norm(text)} ")
        low = text.casefold()
        goal.upper = "upper case" in low or "uppercase" in low or "capital letters" in low
        goal.lower = "lower case" in low or "lowercase" in low
        tokens = [(match.group(), match.start()) for match in _TOKEN.finditer(text)]
        mode = "click"
        for index, (token, start) in enumerate(tokens):
            word = token.casefold().strip(".,:;!?'")
            if word in _TYPE_VERBS:
                mode = "type"
            elif word in _CLICK_VERBS:
                mode = "click"
            if token[0] in "\"“":
                quoted = token[1:-1]
                if mode == "type":
                    goal.values.append(_Value(quoted, goal._key(tokens, index), start, goal._ordinal_after(tokens, index)))
                elif quoted.casefold() in _ROLE_WORDS:
                    goal.roles.append((quoted.casefold(), None, start))
                else:
                    goal.names.append((quoted, start))
            elif mode == "type" and word in _TYPE_VERBS and index + 1 < len(tokens):
                following = tokens[index + 1][0].strip(".,")
                if any(char.isdigit() for char in following) and following[0] not in "\"“":
                    goal.values.append(_Value(following, None, tokens[index + 1][1]))
            elif mode == "click" and word in _ROLE_WORDS:
                before = tokens[index - 2:index]
                ordinal = next((n for n in (_ordinal(t) for t, _ in reversed(before)) if n is not None), None)
                goal.roles.append((word, ordinal, start))
        return goal

    def _key(self, tokens: list[tuple[str, int]], index: int) -> str | None:
        for token, _ in reversed(tokens[max(0, index - 3):index]):
            word = token.casefold().strip(".,:;")
            if word in _TYPE_VERBS or word in _CLICK_VERBS or token[0] in "\"“":
                return None
            if word not in _STOP and word.isalpha():
                return word
        return None

    def _ordinal_after(self, tokens: list[tuple[str, int]], index: int) -> int | None:
        for position in range(index + 1, min(len(tokens), index + 6)):
            word = tokens[position][0].casefold().strip(".,")
            if word in ("and", "then") or tokens[position][0][0] in "\"“":
                return None
            number = _ordinal(word)
            if number is not None:
                return number
        return None

    def match(self, name: str) -> tuple[float, int]:
        """How well ``name`` matches what the instruction names, and where in the instruction."""
        if not name.strip():
            return 0.0, -1
        folded = name.strip().casefold()
        for quoted, position in self.names:
            if name.strip() == quoted:
                return 100.0, position
            if folded == quoted.casefold() or folded in _SYNONYMS.get(quoted.casefold(), ()):
                return 90.0, position
        phrase = _norm(name)
        if phrase and not all(word in _STOP for word in phrase.split()):
            found = self.norm.find(f" {phrase} ")
            if found >= 0:
                return (70.0 if name.strip() in self.text else 60.0), found
        words = _salient(name)
        hits = [self.norm.find(f" {word} ") for word in words]
        hits = [hit for hit in hits if hit >= 0]
        if not hits:
            return 0.0, -1
        first = 15.0 if self.norm.find(f" {words[0]} ") >= 0 else 0.0
        return 40.0 * len(hits) / len(words) + first, min(hits)

    def transform(self, value: str) -> str:
        return value.upper() if self.upper else value.lower() if self.lower else value


def _ordinal(word: str) -> int | None:
    word = word.casefold().strip(".,")
    match = _ORDINAL.match(word)
    return int(match.group(1)) if match else _ORDINAL_WORDS.get(word)


def _read_page(snapshot: str) -> list[_Item]:
    """The items of a snapshot: interactive elements with labels, options and flags, and clickable texts."""
    lines = snapshot.splitlines()
    items: list[_Item] = []
    last_text = ""
    for index, line in enumerate(lines):
        parts = _line_parts(line)
        if parts is None:
            continue
        match, raw = parts
        role, rest = match.group("role"), match.group("rest") or ""
        name = (match.group("name") or "").replace('\\"', '"').replace("\\\\", "\\")
        ref = _REF.search(rest)
        value = _scalar(raw)
        depth = len(line) - len(line.lstrip())
        if role in INTERACTIVE_ROLES:
            if ref is None:
                continue
            options = tuple(_children(lines, index, depth, "option")) if role in ("combobox", "listbox") else ()
            checked = ("[checked]" in rest or "[checked=true]" in rest) if role in ("checkbox", "radio", "switch") else None
            items.append(_Item(ref.group(1), role, name, label=last_text, value=value, checked=checked,
                               selected="[selected]" in rest, disabled="[disabled]" in rest, options=options))
            last_text = ""
        elif "[cursor=pointer]" in rest and ref is not None and not _has_interactive(lines, index, depth):
            text = value or name or " ".join(_texts(lines, index, depth))
            if text:
                items.append(_Item(ref.group(1), "generic", text[:200]))
        else:
            text = value if value and role != "img" else name
            if text and not text.startswith("/"):
                last_text = text
    seen: dict[str, int] = {}
    for item in items:
        seen[item.identity_key] = seen.get(item.identity_key, 0) + 1
    return [item if seen[item.identity_key] == 1 else replace(item, unique=False) for item in items]


def _subtree(lines: list[str], index: int, depth: int) -> list[str]:
    below = []
    for line in lines[index + 1:]:
        if len(line) - len(line.lstrip()) <= depth:
            break
        below.append(line)
    return below


def _children(lines: list[str], index: int, depth: int, role: str) -> list[tuple[str, bool]]:
    found = []
    for line in _subtree(lines, index, depth):
        parts = _line_parts(line)
        if parts is not None and parts[0].group("role") == role:
            found.append(((parts[0].group("name") or ""), "[selected]" in (parts[0].group("rest") or "")))
    return found


def _has_interactive(lines: list[str], index: int, depth: int) -> bool:
    return any((parts := _line_parts(line)) is not None and parts[0].group("role") in INTERACTIVE_ROLES
               for line in _subtree(lines, index, depth))


def _texts(lines: list[str], index: int, depth: int) -> list[str]:
    texts = []
    for line in _subtree(lines, index, depth)[:6]:
        parts = _line_parts(line)
        if parts is not None:
            text = _scalar(parts[1]) or parts[0].group("name")
            if text:
                texts.append(text)
    return texts


def _key(target: Target | None) -> str:
    if target is None:
        return ""
    return target.identity if target.role and target.name else (target.ref or target.selector or "")


class HeuristicPolicy:
    """A rule-based baseline policy: no LLM, no network, decisions from the instruction and the page.

    Each turn it fills the fields the instruction gives values for, selects the options and checks the
    boxes it names, clicks the named targets in the order the instruction names them, submits once
    values are in, and finishes. When nothing named is left and the goal does not look done, it
    explores the remaining clickable items in ranked order, never repeating an action on a target.
    The memory's known selectors break ties: an element with more recorded successes ranks higher.
    """

    name = "heuristic"

    def __init__(self) -> None:
        self.stats = PolicyStats()
        self._goal: _Goal | None = None
        self._done: set[tuple[str, str, str]] = set()
        self._filled: dict[str, str] = {}

    def start(self, goal: str) -> None:
        self._goal = _Goal.read(goal)
        self._done = set()
        self._filled = {}

    def decide(self, turn: Turn) -> Action:
        self.stats.decisions += 1
        if self._goal is None or self._goal.text != turn.goal:
            self.start(turn.goal)
        goal = self._goal
        assert goal is not None
        for outcome in turn.history:
            self._remember(outcome)
        items = _read_page(turn.observation.snapshot)
        known = {entry.element: entry.success_count for entry in turn.known_selectors}
        for step in (self._fill, self._select, self._named):
            action = step(goal, items, known, turn.history)
            if action is not None:
                return action
        if self._planned(goal, turn.history):
            return Action(kind="finish", success=True, reason="every step the instruction names is done")
        action = self._explore(goal, items, known)
        if action is not None:
            return action
        return Action(kind="finish", success=False, reason="nothing left to try")

    def _remember(self, outcome: StepOutcome) -> None:
        action = outcome.action
        self._done.add((action.kind, _key(action.target), action.value or ""))
        if action.kind in ("fill", "type") and outcome.ok and action.target is not None:
            self._filled[_key(action.target)] = action.value or ""

    def _tried(self, kind: str, item: _Item, value: str = "") -> bool:
        return (kind, _key(item.target()), value) in self._done

    def _fill(self, goal: _Goal, items: list[_Item], known: dict[str, int], history: tuple) -> Action | None:
        fields = [item for item in items if item.role in _FIELD_ROLES and not item.disabled]
        if not fields or not goal.values:
            return None
        plan: dict[int, str] = {}
        spare = []
        for value in goal.values:
            matched = [index for index, item in enumerate(fields)
                       if value.key and value.key in _salient(item.text)]
            if value.ordinal is not None and 0 < value.ordinal <= len(fields):
                matched = [value.ordinal - 1]
            elif value.ordinal == -1:
                matched = [len(fields) - 1]
            for index in matched:
                plan.setdefault(index, value.text)
            if not matched:
                spare.append(value.text)
        for index, item in enumerate(fields):
            if index not in plan and spare and not item.value:
                plan[index] = spare.pop(0)
        for index, text in sorted(plan.items()):
            item, text = fields[index], goal.transform(plan[index])
            if item.value == text or self._filled.get(_key(item.target())) == text or self._tried("fill", item, text):
                continue
            return Action(kind="fill", target=item.target(), value=text, reason="the instruction gives this value")
        return None

    def _select(self, goal: _Goal, items: list[_Item], known: dict[str, int], history: tuple) -> Action | None:
        for item in items:
            if item.role != "combobox" or not item.options:
                continue
            scored = sorted(((goal.match(option)[0], option, chosen) for option, chosen in item.options if option),
                            reverse=True)
            if scored and scored[0][0] >= 50 and not scored[0][2] and not self._tried("select", item, scored[0][1]):
                return Action(kind="select", target=item.target(), value=scored[0][1], reason="the instruction names it")
        return None

    def _named(self, goal: _Goal, items: list[_Item], known: dict[str, int], history: tuple) -> Action | None:
        wanted = []
        for item in items:
            if item.role not in _CLICK_ROLES or item.disabled or item.checked or item.selected:
                continue
            score, position = goal.match(item.name)
            if score >= 50 and not self._tried("click", item):
                wanted.append((_is_submit(item.name), position, -score, -known.get(item.identity_key, 0), item))
        for role_word, ordinal, position in goal.roles:
            roles = _ROLE_WORDS[role_word]
            if any(goal.match(item.name)[0] >= 50 for item in items if item.role in roles):
                continue
            same = [item for item in items if item.role in roles and not item.disabled]
            pick = same[ordinal - 1 if ordinal and ordinal > 0 else -1 if ordinal == -1 else 0:] if same else []
            if pick and not self._tried("click", pick[0]) and not pick[0].checked:
                wanted.append((False, position, -50, 0, pick[0]))
        if wanted:
            wanted.sort(key=lambda entry: entry[:4])
            submit, _, _, _, item = wanted[0]
            if not (submit and self._pending_values(goal, items)):
                return Action(kind="click", target=item.target(), reason="the instruction names it")
        if self._typed_since_submit(history):
            buttons = [item for item in items if item.role == "button" and _is_submit(item.name) and not item.disabled]
            buttons.sort(key=lambda item: (-goal.match(item.name)[0], _submit_rank(item.name)))
            if buttons:
                return Action(kind="click", target=buttons[0].target(), reason="submit the values")
        for quoted, _ in goal.names:
            if not any(goal.match(item.name)[0] >= 90 for item in items):
                selector = f'internal:text="{_escape(quoted)}"s >> visible=true >> nth=0'
                action = Action(kind="click", target=Target(selector=selector), reason="the instruction names this text")
                if (action.kind, selector, "") not in self._done:
                    return action
        return None

    def _pending_values(self, goal: _Goal, items: list[_Item]) -> bool:
        return bool(goal.values) and self._fill(goal, items, {}, ()) is not None

    def _typed_since_submit(self, history: tuple[StepOutcome, ...]) -> bool:
        for outcome in reversed(history):
            action = outcome.action
            if action.kind == "click" and action.target is not None and _is_submit(action.target.name or ""):
                return False
            if action.kind in ("fill", "type", "select", "check") and outcome.ok:
                return True
        return False

    def _planned(self, goal: _Goal, history: tuple[StepOutcome, ...]) -> bool:
        if not history or not history[-1].ok:
            return False
        clicked = {outcome.action.target.name for outcome in history
                   if outcome.action.kind == "click" and outcome.ok and outcome.action.target is not None}
        names = {quoted for quoted, _ in goal.names}
        return not names or any(goal.match(name or "")[0] >= 90 for name in clicked)

    def _explore(self, goal: _Goal, items: list[_Item], known: dict[str, int]) -> Action | None:
        ranked = []
        for order, item in enumerate(items):
            if item.role not in _CLICK_ROLES or item.disabled or item.checked or self._tried("click", item):
                continue
            if _is_submit(item.name) and goal.match(item.name)[0] < 50:
                continue
            score = goal.match(item.name)[0]
            ranked.append((-score, item.role not in _EXPLORE_FIRST, -known.get(item.identity_key, 0), order, item))
        if not ranked:
            return None
        item = min(ranked, key=lambda entry: entry[:4])[4]
        return Action(kind="click", target=item.target(), reason="exploring: nothing named is left")


def _is_submit(name: str) -> bool:
    return _norm(name) in _SUBMIT_NAMES


def _submit_rank(name: str) -> int:
    return _SUBMIT_NAMES.index(_norm(name)) if _norm(name) in _SUBMIT_NAMES else len(_SUBMIT_NAMES)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')

"""HeuristicPolicy: a rule-based baseline agent that needs no LLM and no network.

It reads the instruction, matches its quoted and salient words to what the page shows, and does the
obvious thing: types values into the fields they belong to, selects and checks what the instruction
names, clicks the named link, button or tab, submits, and explores the rest when it is unsure. It is
a baseline to measure memory and LLM policies against, not an agent to rely on.
"""

from __future__ import annotations

from collections import Counter

from .actions import REPLAYED, Action, Target
from .instructions import ROLE_WORDS, Instruction, input_form, norm, ordinal_of, same_name
from .page_items import PageItem, read_page, text_target
from .policy import PolicyStats, StepOutcome, Turn

SUGGESTION_WAIT_MS = 500
MENU_WAIT_MS = 400
OPENING = "open the menu on the way to the item"
EXPLORING = "explore: nothing the instruction names is left"
SELECT_ALL, COPY, PASTE = "ControlOrMeta+a", "ControlOrMeta+c", "ControlOrMeta+v"
_SUBMIT_NAMES = ("submit", "ok", "login", "log in", "sign in", "search", "go", "send", "done", "continue",
                 "save", "enter", "confirm", "apply")
_DISMISS_NAMES = ("cancel", "close", "no", "x", "×", "dismiss", "not now", "no thanks", "later")
_SECRET_WORDS = frozenset({"password", "passcode", "passphrase", "pin"})
_PAGER_NAMES = (">", "»", "›", "next")
_FIELD_ROLES = frozenset({"textbox", "searchbox", "spinbutton", "combobox"})
_CLICK_ROLES = frozenset({"button", "link", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem",
                          "option", "checkbox", "radio", "switch", "generic"})
_WAYFINDING = frozenset({"tab", "link", "generic", "treeitem", "menuitem"})


def _named_like(name: str, names: tuple[str, ...]) -> bool:
    return norm(name) in names or name.strip().casefold() in names


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
        """Read a new instruction; forget the previous episode."""
        self._goal = Instruction.read(goal)
        self._texts_tried: set[tuple[str, str]] = set()
        self._per_page = 0
        self._picked: tuple[Target, str] | None = None
        self._items: list[PageItem] = []
        self._texts: list[str] = []
        self._history: tuple[StepOutcome, ...] = ()
        self._done: Counter[tuple[str, str, str]] = Counter()
        self._explored: Counter[tuple[str, str, str]] = Counter()
        self._failed: set[tuple[str, str, str]] = set()
        self._known: dict[str, int] = {}

    def decide(self, turn: Turn) -> Action:
        """The next action for this turn, from the instruction, the page and what was tried."""
        self.stats.decisions += 1
        if self._goal.text != turn.goal:
            self.start(turn.goal)
        self._items, self._texts = read_page(turn.observation.snapshot, turn.goal)
        self._history = turn.history
        keys = [((step.action.kind, _key(step.action.target), step.action.value or ""), step.ok)
                for step in turn.history]
        self._done, self._failed = Counter(key for key, _ in keys), {key for key, ok in keys if not ok}
        # a replay that handed over clicked what the earlier run explored: exploring may click it again
        self._explored = Counter(key for (key, _), step in zip(keys, turn.history) if step.action.reason != REPLAYED)
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

    def _tried(self, kind: str, item: PageItem, value: str = "") -> int:
        return self._done[(kind, _key(item.target()), value)]

    def _unclicked(self) -> list[str]:
        """The quoted names no successful action reached."""
        targets = [step.action.target for step in self._history if step.ok and step.action.target is not None]
        typed = {step.action.value for step in self._history if step.ok and step.action.kind in ("fill", "type")}
        return [quoted for quoted, _ in self._goal.names if quoted not in typed
                and not any(same_name(target.name or "", quoted) or target == text_target(quoted) for target in targets)]

    def _plan(self) -> tuple[list[tuple[PageItem, str]], list[str]]:
        fields = [item for item in self._items if item.role in _FIELD_ROLES and not item.options]
        plan, spare = self._goal.field_values(fields, self._texts)
        return [(fields[index], text) for index, text in sorted(plan.items())], spare

    def _pending(self) -> list[tuple[PageItem, str]]:
        """Planned values not in their field yet; a field left empty by a fill that worked gets one more
        try, in the form a date or time input takes when there is one."""
        pending = []
        for item, text in self._plan()[0]:
            tries, key = self._tried("fill", item, text), ("fill", _key(item.target()), text)
            if (item.value or "") == text or tries and (item.value or key in self._failed) or tries >= 2:
                continue
            alternate = input_form(text) if tries else None
            if alternate is None or not self._tried("fill", item, alternate):
                pending.append((item, alternate or text))
        return pending

    def _copy(self) -> Action | None:
        """Copy a field's text and paste it into another field with the keyboard, as a person does."""
        if " copy " not in self._goal.norm or " paste " not in self._goal.norm:
            return None
        fields = [item for item in self._items if item.role in ("textbox", "searchbox")]
        full = [item for item in fields if item.value]
        ordinal = next((number for word in self._goal.text.split() if (number := ordinal_of(word))), 1)
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
        visible = f" {norm(' '.join(self._texts))} "
        typed = {step.action.value for step in self._history if step.ok and step.action.kind in ("fill", "type")}
        for quoted, _ in self._goal.names:
            if quoted in typed or f" {norm(quoted)} " not in visible or any(same_name(item.name, quoted) for item in self._items):
                continue
            target = text_target(quoted)
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
            roles = ROLE_WORDS[word]
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

    def _result(self, ordinal: int) -> PageItem | None:
        """The ordinal-th result of a paged list: on this page, or the link to the page that has it."""
        pagers = [item for item in self._items if item.role == "link" and (
            norm(item.name).isdigit() or _named_like(item.name, _PAGER_NAMES))]
        results = [item for item in self._items if item.role == "link" and item not in pagers]
        if not results:
            return None
        self._per_page = self._per_page or len(results)
        page = next((int(name) for step in reversed(self._history) if step.ok and step.action.target is not None
                     and (name := norm(step.action.target.name or "")).isdigit()), 1)
        wanted, index = divmod(ordinal - 1, self._per_page)
        if wanted + 1 == page:
            return results[index] if index < len(results) else None
        return next((item for item in pagers if norm(item.name) == str(wanted + 1)), None) or next(
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
            best = min(buttons, key=lambda item: (-self._goal.match(item.name)[0], _SUBMIT_NAMES.index(norm(item.name))
                                                  if norm(item.name) in _SUBMIT_NAMES else len(_SUBMIT_NAMES)))
            return Action(kind="click", target=best.target(), reason="submit the values")
        texts = (text_target(text) for text in self._texts if _named_like(text, _SUBMIT_NAMES))
        target = next((target for target in texts if not self._done[("click", _key(target), "")]), None)
        return Action(kind="click", target=target, reason="submit the values") if target else None

    def _explore(self) -> Action | None:
        ranked = []
        for order, item in enumerate(self._items):
            score = self._goal.match(item.name)[0]
            if item.role in _CLICK_ROLES and not (item.disabled or item.checked or item.container) \
                    and not self._explored[("click", _key(item.target()), "")] and (score >= 50 or not _named_like(item.name, _SUBMIT_NAMES)):
                ranked.append((-score, item.role not in _WAYFINDING, -self._known.get(item.identity, 0), order, item))
        if not ranked:
            return None
        return Action(kind="click", target=min(ranked, key=lambda entry: entry[:4])[4].target(), reason=EXPLORING)

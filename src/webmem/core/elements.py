"""Element identity: the signals by which a person knows an element of a page, and how two identities compare.

A field with no accessible name (a bare ``<select>`` in a table row, a text box after "reassign to") is
still known to a person: by the header of its row, the label tied to it, its ``name`` attribute, the
options it offers, its place in the form. Each of those is a signal; none is the element's current value,
which changes from one instance of a task to the next. Replay, scripts and references compare identities
signal by signal, each weighted by how stable its kind is, and act only when one candidate clearly wins.

Two kinds of signal count differently when they disagree. An element's own signals (its attributes, its
label, its row header) name that element: a different one is evidence against it. Context signals (the
nearest heading, the text just before it, its group, a select's options, its place among fields) describe
where it stands and may hold a task's values (a heading that is an issue's title, a list of today's
choices): they count when they agree and say nothing when they differ.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .models import ElementSignals
from .records import stored_mapping

#: Each signal with its weight and whether a different value counts against a candidate (an own signal).
SIGNALS: dict[str, tuple[float, bool]] = {
    "name": (5.0, True),
    "test_id": (6.0, True),
    "field_name": (5.0, True),
    "label": (5.0, True),
    "dom_id": (4.0, True),
    "row_header": (4.0, True),
    "options": (4.0, False),
    "column_header": (3.0, True),
    "placeholder": (3.0, True),
    "input_type": (3.0, True),
    "title": (2.0, True),
    "tag": (2.0, True),
    "group": (2.0, False),
    "text_before": (2.0, False),
    "heading": (1.0, False),
    "position": (1.0, False),
}
#: The share of a recorded identity's weight a candidate must reach, and its lead over the next candidate.
MIN_SCORE = 0.5
MIN_LEAD = 0.25
#: Option sets this alike are one field's options (an assignee list with a user added is the same list).
OPTIONS_ALIKE = 0.6
OPTIONS_UNLIKE = 0.3
_DIGITS = re.compile(r"\d+")
_CSS_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_EDGE_PUNCTUATION = " \t\n:*.?!()[]"
_UNSET = {name: field.default for name, field in ElementSignals.model_fields.items()}
_EMPTY = ("", None, [], ())


def signal_key(text: str) -> str:
    """A signal's text as identities compare it: "Status:", "status" and "Status *" are one."""
    return " ".join(text.split()).strip(_EDGE_PUNCTUATION).casefold()


@dataclass(frozen=True)
class Comparison:
    """How a candidate's identity compares with a recorded one: a score from -1 to 1 (the agreeing weight
    less the disagreeing, over the weight of the recorded identity's own signals and of the context signals
    that agreed), the signals that agreed (with their text), those that disagreed (with the recorded and the
    found text), and whether the candidate stands at another place among the fields of its kind (``moved``)."""

    score: float
    agreed: tuple[tuple[str, str], ...]
    disagreed: tuple[tuple[str, str, str], ...]
    moved: bool = False
    #: The agreeing weight less the disagreeing (candidates rank by it), and the recorded own signals' weight.
    weight: float = 0.0
    own_weight: float = 0.0

    def describe_differences(self) -> str:
        return "; ".join(f"its {_SPOKEN[kind]} is {found!r}, not {recorded!r}" for kind, recorded, found in self.disagreed)


@dataclass(frozen=True)
class Choice:
    """Which of a page's candidates is the recorded element: ``index`` into the candidates (None when
    none clearly is), its comparison, and why (``reason``). ``tie``: two or more fit about as well."""

    index: int | None
    comparison: Comparison | None
    reason: str
    tie: bool = False
    #: The tied candidates agree and differ on the same signals but their place: signals cannot tell them apart.
    alike: bool = False


def compare(recorded: ElementSignals, recorded_name: str, found: ElementSignals | None, found_name: str) -> Comparison:
    """Compare the identity of a recorded element (its signals and accessible name) with a candidate's."""
    found = found if found is not None else ElementSignals()
    total = agreed_weight = against = own_weight = 0.0
    agreed: list[tuple[str, str]] = []
    disagreed: list[tuple[str, str, str]] = []
    moved = False
    for kind, (weight, own) in SIGNALS.items():
        share, was, now = _agreement(kind, recorded, recorded_name, found, found_name)
        if share is None or (share <= 0 and not own):
            moved = moved or (kind == "position" and share == 0)
            continue
        total += weight
        own_weight += weight if own else 0.0
        if share > 0:
            agreed_weight += weight * share
            agreed.append((kind, was))
        elif share < 0:
            against += weight * -share
            disagreed.append((kind, was, now))
    score = (agreed_weight - against) / total if total else 0.0
    return Comparison(round(score, 4), tuple(agreed), tuple(disagreed), moved, agreed_weight - against, own_weight)


def choose(recorded: ElementSignals, recorded_name: str,
           candidates: Sequence[tuple[str, ElementSignals | None]], *, what: str) -> Choice:
    """The one candidate (accessible name, signals) that is the recorded element, when one clearly wins:
    it reaches :data:`MIN_SCORE` and leads the next by :data:`MIN_LEAD` of the recorded identity's own
    weight. Otherwise none, saying why (``what`` names the element in the reason); ``alike`` when the close
    candidates agree and differ on the same signals, which then cannot tell them apart."""
    if not candidates:
        return Choice(None, None, f"no {what} is on the page")
    compared = [compare(recorded, recorded_name, signals, name) for name, signals in candidates]
    order = sorted(range(len(compared)), key=lambda index: -compared[index].weight)
    best = compared[order[0]]
    scale = max(best.own_weight, 1.0)
    close = [index for index in order if (best.weight - compared[index].weight) / scale < MIN_LEAD]
    alike = len(close) > 1 and len({_signature(compared[index]) for index in close}) == 1
    if len(close) > 1:
        named = "; ".join(f"#{index + 1} ({_verdict(compared[index])})" for index in close[:4])
        return Choice(None, best, f"{len(close)} elements fit {what} about as well: {named}; "
                                  f"which one is meant is not certain", tie=True, alike=alike)
    if best.score < MIN_SCORE:
        seen = list(dict.fromkeys(f"{_SPOKEN[kind]} {found!r}" for index in order[:4]
                                  for kind, _, found in compared[index].disagreed[:1]))
        shown = f"the page's have {', '.join(seen)}" if seen else "too few of its signals agree"
        return Choice(None, best, f"no {what} on the page is the one recorded ({shown})")
    return Choice(order[0], best, _found_by(best))


def describe_element(role: str, name: str, signals: ElementSignals | None) -> str:
    """The element as a person would point at it: ``combobox "" (row "Status", name=status)``."""
    base = f'{role} "{name}"'
    if signals is None:
        return base
    parts = [f'{_SPOKEN[kind]} "{text}"' for kind in ("label", "row_header", "column_header", "placeholder")
             if (text := getattr(signals, kind)) and signal_key(text) != signal_key(name)]
    if signals.field_name:
        parts.append(f"name={signals.field_name}")
    elif signals.dom_id:
        parts.append(f"id={signals.dom_id}")
    if not parts and signals.text_before:
        parts.append(f'after "{signals.text_before}"')
    return f"{base} ({', '.join(parts[:3])})" if parts else base


def element_key(target: str, signals: ElementSignals | None) -> str:
    """The key an element's selectors are kept under: its identity (``button "Go"``), and for one with no
    name the signals that tell it from the page's other unnamed fields (``combobox "" (row "Status")``)."""
    if signals is None or not target.endswith(' ""'):
        return target
    return describe_element(target[:-3], "", signals)


def css_locator(signals: ElementSignals) -> str | None:
    """A CSS selector for an element with no accessible name (a label or a placeholder would have given it
    one), from its stable attributes in the order Playwright's code generator prefers them: its ``name``
    attribute (a numbered one, such as "0_priority", by what does not change), then its ``id``. None when it
    has neither."""
    tag = signals.tag if _CSS_WORD.fullmatch(signals.tag or "") else ""
    if signals.field_name:
        parts = _DIGITS.split(signals.field_name)
        if len(parts) == 1:
            return f"{tag}[name={_quoted(signals.field_name)}]"
        head, tail = parts[0], parts[-1]
        if len(head) + len(tail) >= 3:
            return tag + (f"[name^={_quoted(head)}]" if head else "") + (f"[name$={_quoted(tail)}]" if tail else "")
    if signals.dom_id and _CSS_WORD.fullmatch(signals.dom_id):
        return f"{tag}#{signals.dom_id}"
    return None


#: The element's own signals that are texts naming it (its tag and input type name a kind, not one element).
NAMING_SIGNALS = tuple(kind for kind, (_, own) in SIGNALS.items() if own and kind not in ("name", "tag", "input_type"))
_SELECTOR_TEXT = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
_SELECTOR_NAME = re.compile(r"[#.]([A-Za-z_][\w-]*)|\[[\w-]+[~|^$*]?=([^\]\s]+)\]")


def naming_texts(signals: ElementSignals | None) -> list[str]:
    """The texts an element's own signals name it by (its label, row header, ``name`` attribute...), never
    the text around it (a heading, the text before it), which may hold a task's values."""
    if signals is None:
        return []
    return [text for kind in NAMING_SIGNALS if (text := getattr(signals, kind))]


def selector_names(selector: str | None) -> list[str]:
    """The texts a selector finds its element by: its quoted texts (``[name="0_priority"]``,
    ``internal:label="And"i``), ids, classes and attribute values; not its structure (tags, ``:nth-of-type(2)``)."""
    if not selector:
        return []
    found = [match.group(1) if match.group(1) is not None else match.group(2)
             for match in _SELECTOR_TEXT.finditer(selector)]
    rest = _SELECTOR_TEXT.sub(" ", selector)
    return [*found, *(match.group(1) or match.group(2) for match in _SELECTOR_NAME.finditer(rest))]


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def compact_signals(signals: ElementSignals | None) -> dict[str, object] | None:
    """The signals as stored with a step: only those the element has."""
    if signals is None:
        return None
    return {name: list(value) if name == "options" else value for name, value in signals.__dict__.items()
            if value != _UNSET[name]}


def compact_steps(trajectory: dict[str, Any]) -> dict[str, Any]:
    """A trajectory dumped as JSON with each step's signals compact (only those its element has)."""
    for name in ("steps", "replay_steps"):
        for step in trajectory.get(name) or ():
            if step.get("element"):
                step["element"] = {key: value for key, value in step["element"].items() if value not in _EMPTY}
    return trajectory


def stored_signals(value: object) -> ElementSignals | None:
    """Signals read back from the memory's own JSON (validated when written: not again)."""
    if isinstance(value, ElementSignals) or value is None:
        return value
    if not isinstance(value, dict):
        return None
    data = dict(value)
    if "options" in data:
        data["options"] = tuple(data["options"] or ())
    return stored_mapping(ElementSignals, data)


def redacted_signals(signals: ElementSignals, redact: Callable[[str | None], str | None]) -> ElementSignals:
    """The signals with every text passed through ``redact`` (a secret in a label or an option is no identity)."""
    changes: dict[str, object] = {}
    for name, value in signals:
        if isinstance(value, str) and value and (clean := redact(value)) != value:
            changes[name] = clean or ""
    options = tuple(redact(option) or "" for option in signals.options)
    if options != signals.options:
        changes["options"] = options
    return signals.model_copy(update=changes) if changes else signals


def _agreement(kind: str, recorded: ElementSignals, recorded_name: str, found: ElementSignals,
               found_name: str) -> tuple[float | None, str, str]:
    """How far one signal agrees: 1 (fully), a share, 0 (nothing to say), -1 (it differs); None when the
    recorded identity does not have it."""
    if kind == "name":
        was, now = recorded_name, found_name
    elif kind == "options":
        return _options_agreement(recorded.options, found.options)
    elif kind == "position":
        if recorded.position is None or recorded.of_kind is None or recorded.of_kind < 2:
            return None, "", ""
        same = (found.position, found.of_kind) == (recorded.position, recorded.of_kind)
        return (1.0 if same else 0.0), f"{recorded.position} of {recorded.of_kind}", f"{found.position} of {found.of_kind}"
    else:
        was, now = getattr(recorded, kind), getattr(found, kind)
    recorded_key, found_key = signal_key(was), signal_key(now)
    if not recorded_key:
        return None, "", ""
    if recorded_key == found_key:
        return 1.0, was, now
    if kind in ("field_name", "dom_id") and found_key and _DIGITS.sub("#", recorded_key) == _DIGITS.sub("#", found_key):
        return 0.5, was, now  # "0_priority" and "2_priority": one field of a list whose rows are numbered
    return -1.0, was, now


def _options_agreement(recorded: Sequence[str], found: Sequence[str]) -> tuple[float | None, str, str]:
    was = {signal_key(option) for option in recorded} - {""}
    if not was:
        return None, "", ""
    now = {signal_key(option) for option in found} - {""}
    alike = len(was & now) / len(was | now) if now else 0.0
    shown = f"{len(was)} options", f"{len(now)} options"
    if alike >= OPTIONS_ALIKE:
        return alike, *shown
    return (-1.0 if alike < OPTIONS_UNLIKE else 0.0), *shown


def _signature(comparison: Comparison) -> tuple[object, ...]:
    return (tuple(item for item in comparison.agreed if item[0] != "position"),
            tuple(kind for kind, _, _ in comparison.disagreed))


def _verdict(comparison: Comparison) -> str:
    """What agreed and what did not, for a candidate named in a hand-over."""
    agreed = f"its {_agreeing(comparison)} agree" if comparison.agreed else "nothing agrees"
    return f"{agreed}; {comparison.describe_differences()}" if comparison.disagreed else agreed


def _agreeing(comparison: Comparison) -> str:
    """The strongest agreeing signals, as a person reads them: ``row 'Year:', name attribute 'year'``."""
    telling = [item for item in comparison.agreed if item[0] not in _PLAIN] or list(comparison.agreed)
    shown = [f"{_SPOKEN[kind]} {text!r}" if kind not in _PLAIN else _SPOKEN[kind]
             for kind, text in sorted(telling, key=lambda item: -SIGNALS[item[0]][0])[:3]]
    return ", ".join(shown) or "nothing agrees"


def _found_by(comparison: Comparison) -> str:
    found = f"found by its {_agreeing(comparison)}"
    if comparison.disagreed:
        return f"{found}; {comparison.describe_differences()}"
    return f"{found}: the page put it elsewhere" if comparison.moved else found


#: Signals that say little to a person reading why an element was chosen (shown only when nothing else agreed).
_PLAIN = frozenset({"options", "position", "tag", "input_type", "text_before", "heading"})
_SPOKEN = {
    "name": "name", "test_id": "test id", "field_name": "name attribute", "label": "label", "dom_id": "id",
    "row_header": "row", "options": "options", "column_header": "column", "placeholder": "placeholder",
    "input_type": "input type", "title": "title", "tag": "tag", "group": "group", "text_before": "text before",
    "heading": "heading", "position": "place in its form",
}

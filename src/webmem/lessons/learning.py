"""Learning lessons from a run's steps: a failed step directly followed by a different one that worked.

Everything here is a pure function of the agent's own commands and error messages; page text
never becomes a lesson. Texts are cut to a bounded length and stripped of markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.errors import InvalidInput
from ..core.models import Step
from ..core.text import clean_for_prompt
from ..core.urls import domain_of

KNOWN_COMMANDS = frozenset({
    "goto", "navigate", "go_back", "go_forward", "reload", "click", "dblclick", "fill", "type", "press",
    "select", "check", "uncheck", "hover", "scroll", "wait", "drag", "upload", "snapshot", "tab", "eval",
})
# Causes named inside an error (often in its call log), from the most telling to the least: the first found
# is the lesson's error pattern. A generic symptom such as a timeout is never a pattern on its own.
KNOWN_ERROR_PHRASES = (
    "too many arguments",
    "intercepts pointer events",
    "strict mode violation",
    "element is not visible",
    "element is not enabled",
    "element is not editable",
    "element is not attached",
    "frame was detached",
    "element is outside of the viewport",
    "not a checkbox or radio button",
    "not an <input>, <textarea> or <select> element",
    "target closed",
    "navigation interrupted",
)
_NET_ERROR = re.compile(r"net::err_[a-z_]+")
_DIGITS = re.compile(r"\d+")
_NOT_FOUND = ("not found", "no such element", "no element", "resolved to 0 elements", "unable to find")
MIN_ERROR_LENGTH = 10
ERROR_SNIPPET = 60
PATTERN_LENGTH = 80
LESSON_LENGTH = 500
_CLI_PREFIXES = ("playwright-cli", "playwright")
_TAG = re.compile(r"<[^>]{0,200}>")
_LINK = re.compile(r"\[([^\]]{0,200})\]\([^)]{0,500}\)")
_MARKUP = re.compile(r"[`*#|]+|^\s*>+\s?")


@dataclass(frozen=True)
class LearnedLesson:
    """A failure->recovery pair turned into advice, before it is stored."""

    lesson: str
    failed_command: str
    error_pattern: str
    triggered_domain: str | None
    recovery: str
    #: The same advice without this site's own elements, for when it holds across sites.
    general_lesson: str


def command_name(command: str | None) -> str | None:
    """The tool of a command, lower-cased: ``playwright-cli click e19`` -> ``click``."""
    if not command:
        return None
    words = command.strip().lower().split()
    if words and words[0] in _CLI_PREFIXES:
        words = words[1:]
    return words[0] if words else None


def plain_text(text: str, limit: int) -> str:
    """Text safe to keep as advice: no tags, links or markdown markup, no control characters, bounded."""
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub(" ", text)
    text = _MARKUP.sub(" ", text)
    return clean_for_prompt(text, limit)


def matchable_text(text: str) -> str:
    """Text lower-cased and stripped of markup as error patterns are, uncut: what patterns are matched in."""
    return plain_text(text.lower(), len(text) + 1)


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def is_substantive(error: str) -> bool:
    """Long enough to mean something, and not a plain element-not-found (a wrong ref, not a lesson)."""
    lowered = error.lower()
    return len(error.strip()) >= MIN_ERROR_LENGTH and not any(marker in lowered for marker in _NOT_FOUND)


def error_pattern(error: str) -> str:
    """The distinctive phrase of an error: a known cause found anywhere in it (``intercepts pointer events``,
    ``net::err_name_not_resolved``), else its first line lower-cased with every number as ``#``, cut to 80
    characters (``locator.click: timeout #ms exceeded.``)."""
    lowered = error.lower()
    for phrase in KNOWN_ERROR_PHRASES:
        if phrase in lowered:
            return phrase
    network = _NET_ERROR.search(lowered)
    if network:
        return network.group(0)
    # Cut without an ellipsis, so that the pattern still occurs in the (matchable) error it came from.
    return without_numbers(matchable_text(first_line(lowered)))[:PATTERN_LENGTH].rstrip()


def without_numbers(text: str) -> str:
    """Every run of digits as ``#``: ``timeout 1500ms`` and ``timeout 30000ms`` are the same failure."""
    return _DIGITS.sub("#", text)


def error_forms(error: str) -> tuple[str, ...]:
    """The forms of an error a stored pattern is looked for in: as it is, as patterns are stored (no
    markup), and with numbers as ``#``."""
    plain = matchable_text(error)
    return error.lower(), plain, without_numbers(plain)


def recovery_of(step: Step) -> str:
    """What a recovering step did, as a lesson's advice: its command, with the key for a press."""
    how = command_name(step.action) or step.action
    if how == "press" and step.value and re.fullmatch(r"[A-Za-z0-9+]{1,20}", step.value):
        return f"press {step.value}"
    return how


_ELEMENT = re.compile(r'([a-z]{2,20}) "([^"\n]{0,40})"')


def role_of(target: str | None) -> str | None:
    """The role of a ``role "name"`` target (``button "Search"`` -> ``button``), else None."""
    found = _ELEMENT.fullmatch(target or "")
    return found.group(1) if found else None


def named_element(target: str | None) -> str | None:
    """A target a lesson may name: an element identity ``role "name"`` with a short name. Any other
    target (free text, a selector, a snapshot ref that means nothing in a later run) is left out, so
    that page text never becomes advice beyond a quoted element name."""
    found = _ELEMENT.fullmatch(target or "")
    return f'{found.group(1)} "{plain_text(found.group(2), 40)}"' if found else None


def lesson_text(failed: Step, error: str, recovery: Step, *, general: bool = False) -> str:
    """``When click on checkbox "Agree" fails with '...', try check on it instead.`` A general lesson
    (one that holds across sites) names the element's role, never a site's own element."""
    snippet = plain_text(first_line(error), ERROR_SNIPPET).replace("'", "")
    broken, fixed = command_name(failed.action) or failed.action, recovery_of(recovery)
    if general:
        role = role_of(failed.target)
        where = f" on {'an' if role and role[0] in 'aeiou' else 'a'} {role}" if role else ""
        return plain_text(f"When {broken}{where} fails with '{snippet}', try {fixed}{' on it' if where else ''} "
                          "instead.", LESSON_LENGTH)
    failed_on, recovered_on = named_element(failed.target), named_element(recovery.target)
    where = f" on {failed_on}" if failed_on else ""
    if recovered_on and recovered_on != failed_on:
        instead = f"{fixed} on {recovered_on}"
    else:
        instead = f"{fixed} on it" if failed_on and recovered_on else fixed
    return plain_text(f"When {broken}{where} fails with '{snippet}', try {instead} instead.", LESSON_LENGTH)


def extract_lessons(steps: Sequence[Step]) -> list[LearnedLesson]:
    """Every failed step directly followed by a successful step with a different known command."""
    learned = []
    for failed, recovery in zip(steps, steps[1:], strict=False):
        if failed.ok or not recovery.ok:
            continue
        broken, fixed = command_name(failed.action), command_name(recovery.action)
        if broken not in KNOWN_COMMANDS or fixed not in KNOWN_COMMANDS or broken == fixed:
            continue
        error = failed.error or ""
        if not is_substantive(error):
            continue
        learned.append(
            LearnedLesson(
                lesson=lesson_text(failed, error, recovery),
                failed_command=broken,
                error_pattern=error_pattern(error),
                triggered_domain=_domain_or_none(recovery.url),
                recovery=recovery_of(recovery),
                general_lesson=lesson_text(failed, error, recovery, general=True),
            )
        )
    return learned


def failure_key(command: str, error: str) -> tuple[str | None, str]:
    """What makes two failures 'the same failure': the tool and the error pattern."""
    return command_name(command), error_pattern(error)


def _domain_or_none(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return domain_of(url)
    except InvalidInput:
        return None


_PAGE_URL = re.compile(r"^- Page URL: (\S+)", re.MULTILINE)


def steps_from_actions_log(records: Iterable[dict[str, object]]) -> list[Step]:
    """Steps from the per-run ``actions.jsonl`` records of the lesson agent (executed commands only)."""
    steps = []
    for record in records:
        result = record.get("execution_result")
        command = record.get("command")
        if result not in ("ok", "error") or not isinstance(command, str):
            continue
        name = command_name(command)
        if name is None:
            continue
        words = command.split()
        arguments = " ".join(words[2:] if words[0].lower() in _CLI_PREFIXES else words[1:])
        stdout = str(record.get("stdout") or "")
        page = _PAGE_URL.search(stdout)
        url = page.group(1) if page and page.group(1).startswith(("http://", "https://")) else None
        steps.append(
            Step(
                action=name,
                target=arguments[:1000] or None,
                value=words[-1] if name == "press" and len(words) > 1 else None,
                url=url,
                ok=result == "ok",
                error=str(record.get("stderr") or "")[:10_000] or None,
            )
        )
    return steps

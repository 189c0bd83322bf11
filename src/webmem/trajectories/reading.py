"""A goal read for what identifies its task: what it asks, apart from how the answer must be written and
from politeness.

People who ask for one task word it differently. Some of what they add says nothing about which task
it is, and is set aside before goals are compared (it stays in the goal as stored and shown):
- how the answer must be written: a sentence such as "Return the value as a number (e.g., 10.99) only,
  without currency symbols." or "Answer with the project ID(s).", a clause such as ", formatted as
  YYYY-MM-DD", and an example in brackets ("(e.g., 10.99)");
- politeness and address before the request ("Could you please", "Hey Alexa,", "I'd like you to") and
  after it ("please", "thanks").

The first sentence always stays, however it begins: "Return the book The Measure of Light" is a task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..core.terms import words

#: Words that say a sentence is about the answer's form, not the task: one of them must be in it.
_FORM_WORDS = frozenset("""
answer answers answered value values response output number numbers numeric numerical digit
digits decimal decimals integer integers percentage percent format formatted formatting string strings unit units
currency symbol symbols json csv comma commas separated id ids e.g i.e word words lowercase uppercase capital
capitals plain rounded round precision figure figures
""".split())
#: Words that make a sentence that begins by answering one about the answer's form ("Answer with the price only.").
_ANSWERING_WORDS = frozenset("only just exactly single".split())
#: How a sentence about the answer's form begins (after "please", "and", "then"): by answering ("answer", "return"),
#: or by a rule the answer follows ("use", "do not").
_FORM_OPENING = re.compile(
    r"(?:please\s+|kindly\s+|and\s+|then\s+|also\s+|note:?\s+)*"
    r"(?:(?P<answering>return|answer|respond|reply|provide|give|output|format|express|write|report|state|present|"
    r"round|the\s+answer|your\s+answer|the\s+result|the\s+output|the\s+response|your\s+response)|"
    r"include|use|just|only|do\s+not|don't|make\s+sure|ensure|keep|omit|exclude|separate)\b",
    re.IGNORECASE)
#: What to answer when the task finds nothing: "If there is none, answer 'N/A'", "If none exist, please say None".
_IF_NONE = re.compile(r"if\b[^.?!;]{0,80}?\b(?:none|no\s+\w+|not|nothing|cannot|can't|isn't|aren't|doesn't)\b[^.?!;]{0,80}?"
                      r"[,;]?\s+(?:please\s+|then\s+|just\s+)*(?:answer|say|state|reply|respond|return|write|output|"
                      r"put|give)\b", re.IGNORECASE)
#: A clause that ends a sentence and is about the answer's form: ", formatted as ...", " as a number".
_FORM_CLAUSE = re.compile(
    r"(?:(?:,\s*|\s+and\s+)(?:and\s+)?(?:return(?:ed|ing)?|answer(?:ed|ing)?|giv(?:e|ing|en)|provid(?:e|ed|ing)|"
    r"format(?:ted|ting)?|express(?:ed|ing)?|round(?:ed|ing)?|written|writing|report(?:ed|ing)?)\b[^.?!;]*|"
    r"[,\s]\s*(?:as\s+(?:a|an)\s+(?:number|numeric|integer|decimal|percentage|string|list|json)\b|"
    r"in\s+(?:the\s+)?(?:format|form)\s+(?:of\s+)?(?-i:[\"“'A-Z0-9])|without\s+(?:the\s+|any\s+)?(?:currency|units?|"
    r"symbols?|commas?)\b)[^.?!;]*)\s*(?=[.?!;]?\s*$)",
    re.IGNORECASE)
#: An example or a format in brackets: "(e.g., 10.99)", "(format: YYYY-MM-DD)", "(in USD)".
_FORM_BRACKETS = re.compile(r"\s*\((?:e\.g\.|i\.e\.|eg\b|ie\b|for example|format|such as|in\s+\w+(?=\))|as\s+)[^()]*\)",
                            re.IGNORECASE)
#: Any words in brackets: set aside when they are an example or a format (``_FORM_BRACKETS``), or read as a sentence
#: about the answer's form ("(just the number, no currency sign)").
_BRACKETS = re.compile(r"\s*\(([^()]+)\)")
#: Politeness and address before the request.
_PREAMBLE = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|alexa|siri|assistant)\b[,!]?\s+)*"
    r"(?:(?:please|kindly)\b,?\s+|(?:could|can|would|will)\s+you\s+(?:please\s+|kindly\s+)?(?:help\s+me\s+(?:to\s+)?)?|"
    r"i\s+(?:would\s+like|'d\s+like|’d\s+like|want|need)\s+(?:you\s+)?to\s+(?:please\s+)?|"
    r"help\s+me\s+(?:to\s+)?|go\s+ahead\s+and\s+|(?:i|we)\s+(?:would|'d|’d)\s+(?:appreciate\s+it\s+if\s+you\s+"
    r"(?:could\s+)?)?)+",
    re.IGNORECASE)
#: Politeness after the request: ", please", "thanks", "thank you".
_CLOSING_WORDS = re.compile(r"(?:[,;]?\s+(?:please|thanks|thank\s+you|thx|ty)\b)+\s*([.?!]*)\s*$", re.IGNORECASE)
_POLITE = frozenset(("please", "thanks", "thank", "thx", "ty"))
#: The words without one of which no closing clause is about the answer's form.
_CLAUSE_HINTS = frozenset("""return returned returning answer answered answering give giving given provide provided
providing format formatted formatting express expressed expressing round rounded rounding write writing written report
reported reporting number numeric integer decimal percentage string list json form currency unit units symbol symbols
comma commas""".split())
_SPACING = str.maketrans({char: " " for char in ".,;:!?()[]\"'“”"})
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z(\"“'])")
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”')


@dataclass(frozen=True, slots=True)
class GoalReading:
    """A goal as the matcher reads it: ``text``, what identifies the task, and what was ``set_aside``."""

    goal: str
    text: str
    set_aside: tuple[str, ...] = ()


@lru_cache(maxsize=8192)
def read_goal(goal: str) -> GoalReading:
    """The goal with how its answer must be written and its politeness set aside (see the module)."""
    masked = _masked(goal)
    set_aside: list[str] = []
    sentences = _sentences(goal, masked)
    kept: list[tuple[int, int]] = [sentences[0]]
    for start, end in sentences[1:]:
        if _about_the_answer(masked[start:end]):
            set_aside.append(goal[start:end].strip())
        else:
            kept.append((start, end))
    pieces = []
    for start, end in kept:
        piece, aside = _trimmed(goal[start:end], masked[start:end])
        set_aside += aside
        pieces.append(piece)
    text = " ".join(piece for piece in pieces if piece)
    opening = _PREAMBLE.match(text)
    if opening and _plain_opening(text[opening.end():]):
        set_aside.insert(0, text[:opening.end()].strip())
        text = text[opening.end():]
    closing = _CLOSING_WORDS.search(_masked(text)) if not _said(text).isdisjoint(_POLITE) else None
    if closing and closing.start() > 0:
        set_aside.append(text[closing.start():closing.start(1)].strip(" ,;"))
        text = text[:closing.start()] + closing.group(1)
    text = text.strip()
    if not text or not words(text):
        return GoalReading(goal, goal)
    return GoalReading(goal, text, tuple(part for part in set_aside if part))


def _said(text: str) -> set[str]:
    """The words of a text, in small letters."""
    return set(text.lower().translate(_SPACING).split())


def _plain_opening(text: str) -> bool:
    """Whether a request begins with two plain words (no value among them): only then is its preamble set aside,
    so that how it begins still compares with how others begin ("Can you comment 'Nice!' on ...")."""
    first = text.split(None, 2)[:2]
    return len(first) == 2 and all(word.isalpha() and word.islower() for word in first)


def _masked(text: str) -> str:
    """The text with quoted values blanked (same length), so that nothing inside quotes is read as form."""
    if '"' not in text and "“" not in text:
        return text
    return _QUOTED.sub(lambda found: found.group()[0] + "_" * (len(found.group()) - 2) + found.group()[-1], text)


def _sentences(goal: str, masked: str) -> list[tuple[int, int]]:
    if not any(mark in masked[:-1] for mark in ".?!"):
        return [(0, len(goal))]
    bounds, start = [], 0
    for found in _SENTENCE_END.finditer(masked):
        bounds.append((start, found.start()))
        start = found.end()
    bounds.append((start, len(goal)))
    return bounds


def _about_the_answer(sentence: str) -> bool:
    """Whether a sentence after the first tells how the answer must be written (or what to answer when there is
    nothing to find: "If there is none, answer 'N/A'.")."""
    stripped = sentence.strip()
    if _IF_NONE.match(stripped):
        return True
    opening = _FORM_OPENING.match(stripped)
    if not opening:
        return False
    found = words(stripped.replace("(s)", " s"))[1:]
    return any(word in _FORM_WORDS or (opening.group("answering") and word in _ANSWERING_WORDS) for word in found)


def _trimmed(sentence: str, masked: str) -> tuple[str, list[str]]:
    """A sentence without its brackets and closing clause about the answer's form."""
    aside: list[str] = []
    if "(" not in masked and _said(masked).isdisjoint(_CLAUSE_HINTS):
        return sentence.strip(), aside
    for found in reversed([found for found in _BRACKETS.finditer(masked)
                           if _FORM_BRACKETS.fullmatch(found.group()) or _about_the_answer(found.group(1))]):
        aside.insert(0, sentence[found.start():found.end()].strip())
        sentence = sentence[:found.start()] + sentence[found.end():]
        masked = masked[:found.start()] + masked[found.end():]
    clause = _FORM_CLAUSE.search(masked)
    if clause and clause.start() > 0 and any(word in _FORM_WORDS for word in words(masked[clause.start():])):
        aside.append(sentence[clause.start():].strip(" ,;.?!"))
        ending = sentence.rstrip()[-1:] if sentence.rstrip()[-1:] in ".?!" else ""
        sentence = sentence[:clause.start()].rstrip(" ,;") + ending
    return sentence.strip(), aside

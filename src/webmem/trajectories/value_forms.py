"""Values in their usual forms, read as values: one date, amount or count however it is written.

Two people asking for one task write its values differently: "May 1, 2021", "05/01/2021" and "2021-05-01"
are one date; "$30", "30 dollars" and "USD 30" one amount; "1TB" and "1 TB" one size; "five" and "5" one
count. Each is read as a value of its kind in one spelling (``ValueSpan.value``), so that goals compare their
values, not their spellings, and a spelling's words ("May", "dollars") are not taken for words of the task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .conversions import MONTH, SLASHED_DATE, SPACED_DATE, month_number, read_date

_ISO_DATE = r"\d{4}-\d{1,2}-\d{1,2}"
#: A full date: "May 1, 2021", "1st of May 2021", "05/01/2021", "2021-05-01".
_FULL_DATE = re.compile(rf"(?<![\w/.-])(?:{SPACED_DATE}|{SLASHED_DATE}|{_ISO_DATE})(?![\w/-]|\.\d)")
#: A month and a day, or a month and a year: "May 1st", "1 May", "May 2021", "2021-05".
_MONTH_DAY = re.compile(rf"(?<![\w/.-])(?:(?P<m1>{MONTH})\s(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?"
                        rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s(?:of\s)?(?P<m2>{MONTH}))(?![\w])(?!,?\s\d)",
                        re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"(?<![\w/.-])(?:(?P<m>{MONTH}),?\s(?:of\s)?(?P<y>(?:19|20)\d\d)|(?P<y2>(?:19|20)\d\d)-"
                         rf"(?P<m2>0?[1-9]|1[0-2]))(?![\w-])", re.IGNORECASE)
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CURRENCY_SIGN = r"[$€£¥₹]"
_CURRENCY_WORD = r"(?:dollars?|usd|euros?|eur|pounds?|gbp|bucks|cents?)"
_UNIT = r"(?:tb|gb|mb|kb|kg|lbs?|oz|km|cm|mm|ml|inch(?:es)?|ft|feet|hours?|hrs?|minutes?|mins?|gallons?)"
_ATTACHED_UNIT = r"(?:g|m|l|in|mi|h)"  # a unit read only when written against its number ("5in", not "5 in the list")
#: An amount of money: "$30", "$1,299.99", "30 dollars", "USD 30", "€5".
_AMOUNT = re.compile(rf"(?:{_CURRENCY_SIGN}\s?(?P<a>{_NUMBER})|(?P<b>{_NUMBER})\s?(?:{_CURRENCY_SIGN}|{_CURRENCY_WORD}\b)"
                     rf"|\b(?:usd|eur|gbp)\s?(?P<c>{_NUMBER}))(?![\d,])", re.IGNORECASE)
#: A size with its unit: "1TB", "1 TB", "2.5 kg", "16GB".
_SIZE = re.compile(rf"(?<![\w.,])(?P<n>{_NUMBER})(?:\s?(?P<u>{_UNIT})|(?P<u2>{_ATTACHED_UNIT}))\b", re.IGNORECASE)
_COUNT_WORDS = {word: str(number) for number, word in enumerate(
    "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split()) if word != "_"}
_COUNT_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
                     "ninety": "90", "hundred": "100", "dozen": "12"})
#: Dates said relative to today: "yesterday", "last week", "the past fourteen days".
_RELATIVE = re.compile(r"\b(?:today|yesterday|tomorrow|tonight|(?:last|this|next|past)\s+(?:week|month|year|"
                       r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
                       r"(?:last|past)\s+(?:\d+|" + "|".join(sorted(_COUNT_WORDS.keys() - {"zero", "dozen"})) +
                       r")\s+(?:days|weeks|months|years))\b", re.IGNORECASE)
#: A count written as a word: "two", "twenty" (not "one": "one of the", "the one that").
_COUNT = re.compile(r"\b(?:a\s+)?(" + "|".join(_COUNT_WORDS) + r")\b(?![-'])", re.IGNORECASE)


def count_digits(text: str) -> str | None:
    """The digits of a count written as one word ("five" -> "5", "a dozen" -> "12"), or None."""
    found = _COUNT.fullmatch(" ".join(text.split()))
    return _COUNT_WORDS[found.group(1).lower()] if found else None


_DIGIT = re.compile(r"\d")
_CURRENCY = re.compile(_CURRENCY_SIGN)
#: The words that hint at a value of each kind, as a goal's words are split (``_SPACING``): only then are the
#: patterns of that kind looked for.
_SPACING = str.maketrans({char: " " for char in ".,;:!?()[]\"'/-"})
_MONTH_WORDS = frozenset("""jan january feb february mar march apr april may jun june jul july aug august sep sept
september oct october nov november dec december""".split())
_MONEY_WORDS = frozenset("dollar dollars usd eur euro euros pound pounds gbp buck bucks cent cents".split())
_DAY_WORDS = frozenset(("today", "yesterday", "tomorrow", "tonight"))
_RELATIVE_HINTS = frozenset(("last", "this", "next", "past"))
_PERIODS = frozenset("""day days week weeks month months year years monday tuesday wednesday thursday friday saturday
sunday""".split())


@dataclass(frozen=True, slots=True)
class ValueSpan:
    """A value read in a goal: where it is, its kind ("date", "number") and its one spelling."""

    start: int
    end: int
    kind: str
    value: str
    written: str
    unit: str = ""  # a size's unit, also a word of the task: "the 18 oz beer" and "the 30 oz coke" both name ounces


@lru_cache(maxsize=8192)
def value_spans(goal: str) -> tuple[ValueSpan, ...]:
    """The dates, amounts, sizes and counts a goal writes, in order, none overlapping."""
    found: list[ValueSpan] = []
    lowered = goal.lower()
    said = set(lowered.translate(_SPACING).split())
    named_month = not said.isdisjoint(_MONTH_WORDS)
    if _DIGIT.search(goal):
        if named_month or "/" in goal or "-" in goal:
            found += _dates(goal, named_month)
        if not said.isdisjoint(_MONEY_WORDS) or _CURRENCY.search(goal):
            for match in _AMOUNT.finditer(goal):
                amount = (match.group("a") or match.group("b") or match.group("c")).replace(",", "")
                found.append(_span(goal, match, "number", _plain(amount)))
        for match in _SIZE.finditer(goal):
            unit = (match.group("u") or match.group("u2")).lower()
            found.append(ValueSpan(match.start(), match.end(), "number", _plain(match.group("n").replace(",", ""))
                                   + unit, match.group(), unit))
    if not said.isdisjoint(_DAY_WORDS) or (not said.isdisjoint(_RELATIVE_HINTS) and not said.isdisjoint(_PERIODS)):
        found += [_span(goal, match, "date", " ".join(match.group().lower().split()))
                  for match in _RELATIVE.finditer(goal)]
    if not said.isdisjoint(_COUNT_WORDS):
        found += [_span(goal, match, "number", _COUNT_WORDS[match.group(1).lower()])
                  for match in _COUNT.finditer(goal)]
    return tuple(_apart(found) if len(found) > 1 else found)


def _dates(goal: str, named_month: bool) -> list[ValueSpan]:
    found = []
    for match in _FULL_DATE.finditer(goal):
        date = read_date(match.group())
        if date is not None:
            found.append(_span(goal, match, "date", date.isoformat()))
    for match in _MONTH_YEAR.finditer(goal):
        month = month_number(match.group("m")) if match.group("m") else int(match.group("m2"))
        found.append(_span(goal, match, "date", f"{match.group('y') or match.group('y2')}-{month:02d}"))
    if named_month:
        for match in _MONTH_DAY.finditer(goal):
            month = month_number(match.group("m1") or match.group("m2"))
            day = int(match.group("d1") or match.group("d2"))
            if 1 <= day <= 31:
                found.append(_span(goal, match, "date", f"--{month:02d}-{day:02d}"))
    return found


def _span(goal: str, match: re.Match[str], kind: str, value: str) -> ValueSpan:
    return ValueSpan(match.start(), match.end(), kind, value, goal[match.start():match.end()])


def _apart(spans: list[ValueSpan]) -> list[ValueSpan]:
    """The spans in order, a longer one kept over any it overlaps (a date over the number in it)."""
    kept: list[ValueSpan] = []
    for span in sorted(spans, key=lambda span: (span.start, -(span.end - span.start))):
        if kept and span.start < kept[-1].end:
            continue
        kept.append(span)
    return kept


def _plain(number: str) -> str:
    """A number without a fraction of zeros: "30.00" is 30."""
    whole, dot, fraction = number.partition(".")
    return whole if not dot or not fraction.strip("0") else f"{whole}.{fraction.rstrip('0')}"

"""Conversions: how a value typed into a page can be derived from a value the goal names.

A run whose goal said "11:20 AM" and which typed "11:20" into a 24-hour time field used ``time24``.
Each conversion is a pure function of the goal's text; it returns the text to type, or None when
the goal's text does not read as what the conversion converts. The set is small on purpose: a
typed value is derived from the goal only by a conversion named here.

- ``identity``: the text as it is.
- ``time24``: a 12-hour time ("11:20 AM", "11:20am", "11:20 a.m.", "3 PM") as 24-hour "HH:MM".
- ``iso_date``, ``us_date``, ``us_date_short``: a date ("11/20/2016", "2016-11-20", "Nov 20, 2016",
  "20 November 2016") as "2016-11-20", "11/20/2016" and "11/20/2016" without leading zeros
  ("3/5/2016"). A date written with slashes is read month first, as US goals write it.
- ``number``: a number with its thousands separators dropped ("1,000" -> "1000"); leading zeros are
  kept, since a code such as "007" or a postcode is not a count.
- ``lower``, ``upper``, ``title``: the text's letter case changed ("title" capitalises each word).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping

Conversion = Callable[[str], str | None]

IDENTITY = "identity"

_MERIDIEM = r"(?:[AaPp]\.\s?[Mm]\.|[AaPp]\.?[Mm]\b)"
#: A 12-hour time with its meridiem, as goals write it: "11:20 AM", "11:20am", "9:05 a.m.", "3 PM".
TIME_12H = rf"\d{{1,2}}(?::[0-5]\d)?\s?{_MERIDIEM}"
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
                "october", "november", "december")
#: A month's name or its abbreviation, in any letter case: "May", "Nov.", "september".
MONTH = (r"(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
#: A date written with its month's name and spaces: "Nov 20, 2016", "November 20 2016", "20 Nov 2016".
SPACED_DATE = rf"(?:{MONTH}\s{_DAY},?\s\d{{4}}|{_DAY}\s(?:of\s)?{MONTH},?\s\d{{4}})"
#: A date written with slashes, month first: "11/20/2016", "3/5/2016".
SLASHED_DATE = r"\d{1,2}/\d{1,2}/\d{4}"
#: A number with thousands separators: "1,000", "12,345.67".
GROUPED_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?"

_TIME = re.compile(r"(\d{1,2})(?::([0-5]\d))?\s?([AaPp])\.?\s?[Mm]\.?")
_NAMED_MONTH_FIRST = re.compile(rf"({MONTH})\s(\d{{1,2}})(?:st|nd|rd|th)?,?\s(\d{{4}})")
_NAMED_DAY_FIRST = re.compile(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s(?:of\s)?({MONTH}),?\s(\d{{4}})")
_SLASHED = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


def time24(text: str) -> str | None:
    """"HH:MM" for a 12-hour time: 12:xx AM is 00:xx, 12:xx PM is 12:xx, 1-11 PM add 12."""
    match = _TIME.fullmatch(text.strip())
    if match is None or not 1 <= int(match.group(1)) <= 12:
        return None
    hour = int(match.group(1)) % 12 + (12 if match.group(3) in "Pp" else 0)
    return f"{hour:02d}:{match.group(2) or '00'}"


def read_date(text: str) -> datetime.date | None:
    """The date a goal writes, in any of the spellings the date conversions read; None for anything else."""
    text = text.strip()
    if match := _SLASHED.fullmatch(text):
        month, day, year = match.groups()
    elif match := _ISO.fullmatch(text):
        year, month, day = match.groups()
    elif match := _NAMED_MONTH_FIRST.fullmatch(text):
        month, day, year = str(month_number(match.group(1))), match.group(2), match.group(3)
    elif match := _NAMED_DAY_FIRST.fullmatch(text):
        day, month, year = match.group(1), str(month_number(match.group(2))), match.group(3)
    else:
        return None
    try:
        return datetime.date(int(year), int(month), int(day))
    except ValueError:
        return None


def iso_date(text: str) -> str | None:
    """"2016-11-20": what a date input takes."""
    date = read_date(text)
    return date.isoformat() if date else None


def us_date(text: str) -> str | None:
    """"11/20/2016", month and day with leading zeros ("03/05/2016")."""
    date = read_date(text)
    return f"{date.month:02d}/{date.day:02d}/{date.year:04d}" if date else None


def us_date_short(text: str) -> str | None:
    """"11/20/2016", month and day without leading zeros ("3/5/2016")."""
    date = read_date(text)
    return f"{date.month}/{date.day}/{date.year:04d}" if date else None


def number(text: str) -> str | None:
    """The number without its thousands separators ("1,000" -> "1000"); None for anything else."""
    text = text.strip()
    return text.replace(",", "") if _PLAIN_NUMBER.fullmatch(text) else None


def title(text: str) -> str:
    """Each word with a capital first letter and the rest in small letters."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split(" "))


CONVERSIONS: Mapping[str, Conversion] = {
    IDENTITY: lambda text: text,
    "time24": time24,
    "iso_date": iso_date,
    "us_date": us_date,
    "us_date_short": us_date_short,
    "number": number,
    "lower": str.lower,
    "upper": str.upper,
    "title": title,
}

#: What each conversion that can fail reads, for saying why a value could not be derived.
_READS = {"time24": "a 12-hour time with AM or PM", "iso_date": "a date", "us_date": "a date",
          "us_date_short": "a date", "number": "a number"}


def reproducing(source: str, typed: str) -> list[str]:
    """The conversions other than identity that turn ``source`` into exactly ``typed``, in registry order."""
    return [name for name, convert in CONVERSIONS.items() if name != IDENTITY and convert(source) == typed]


def derive(source: str, names: tuple[str, ...]) -> tuple[str | None, str | None]:
    """The value the conversions ``names`` all give for ``source``, or None and why there is none (a
    conversion is unknown, cannot read ``source``, or the conversions disagree); no names is identity."""
    results: dict[str, str] = {}
    for name in names:
        convert = CONVERSIONS.get(name)
        if convert is None:
            return None, f"{name!r} is not a known conversion"
        result = convert(source)
        if result is None:
            return None, f"{name} cannot read it as {_READS.get(name, 'text')}"
        results[name] = result
    if len(set(results.values())) > 1:
        told = ", ".join(f'{name} -> "{result}"' for name, result in results.items())
        return None, f"conversions disagree ({told})"
    return next(iter(results.values()), source), None


def month_number(name: str) -> int:
    """The number of the month a name or abbreviation names ("Nov." is 11)."""
    stem = name.rstrip(".").lower()[:3]
    return next(index for index, month in enumerate(_MONTH_NAMES, start=1) if month.startswith(stem))

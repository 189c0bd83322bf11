"""The conversions a typed value may be derived by: each reads only what it names, with the edges right."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webmem.trajectories.conversions import (
    CONVERSIONS,
    derive,
    iso_date,
    number,
    reproducing,
    time24,
    title,
    us_date,
    us_date_short,
)


@pytest.mark.parametrize(("twelve", "twenty_four"), [
    ("12:00 AM", "00:00"), ("12:30 AM", "00:30"), ("12:05 PM", "12:05"), ("11:59 PM", "23:59"),
    ("1:00 PM", "13:00"), ("9:05 AM", "09:05"), ("11:20 AM", "11:20"), ("11:20am", "11:20"),
    ("11:20 a.m.", "11:20"), ("11:20 A.M.", "11:20"), ("7:45 p.m.", "19:45"), ("3 PM", "15:00"),
    ("12 am", "00:00"),
])
def test_time24_reads_twelve_hour_times(twelve: str, twenty_four: str) -> None:
    assert time24(twelve) == twenty_four


@pytest.mark.parametrize("text", ["noon", "11:20", "13:00 PM", "0:30 AM", "11:60 AM", "11:5 AM", "AM", ""])
def test_time24_reads_nothing_else(text: str) -> None:
    assert time24(text) is None


@given(st.integers(1, 12), st.integers(0, 59), st.sampled_from(["AM", "PM", "am", "pm", "a.m.", "p.m."]))
def test_time24_agrees_with_the_clock(hour: int, minute: int, meridiem: str) -> None:
    spoken = f"{hour}:{minute:02d} {meridiem}"
    expected = datetime.datetime.strptime(f"{hour}:{minute:02d} {meridiem.replace('.', '').upper()}", "%I:%M %p")
    assert time24(spoken) == expected.strftime("%H:%M")


@pytest.mark.parametrize("written", ["11/20/2016", "2016-11-20", "Nov 20, 2016", "November 20 2016",
                                     "nov. 20th, 2016", "20 Nov 2016", "20th of November, 2016"])
def test_dates_are_read_in_the_spellings_goals_use(written: str) -> None:
    assert iso_date(written) == "2016-11-20"
    assert us_date(written) == us_date_short(written) == "11/20/2016"


def test_date_forms_differ_in_their_leading_zeros() -> None:
    assert (iso_date("3/5/2016"), us_date("3/5/2016"), us_date_short("March 5, 2016")) == (
        "2016-03-05", "03/05/2016", "3/5/2016")
    assert us_date_short("03/05/2016") == "3/5/2016"


@pytest.mark.parametrize("text", ["Feb 30, 2016", "13/01/2016", "20 Nov", "11/20/16", "Smarch 3, 2016", "today"])
def test_a_date_that_is_not_one_is_not_converted(text: str) -> None:
    assert iso_date(text) is us_date(text) is us_date_short(text) is None


def test_numbers_lose_their_thousands_separators_and_keep_their_zeros() -> None:
    assert [number(text) for text in ("1,000", "12,345.67", "-1,000", "250", "007")] == [
        "1000", "12345.67", "-1000", "250", "007"]
    assert [number(text) for text in ("1,00", "10,0000", "1.000,5", "abc", "")] == [None] * 5


def test_letter_case_conversions() -> None:
    assert [CONVERSIONS[name]("smart WATCH") for name in ("identity", "lower", "upper", "title")] == [
        "smart WATCH", "smart watch", "SMART WATCH", "Smart Watch"]
    assert title("o'neil mcDONALD") == "O'neil Mcdonald"


def test_reproducing_lists_every_conversion_but_identity_that_gives_the_typed_value() -> None:
    assert reproducing("11:20 AM", "11:20") == ["time24"]
    assert reproducing("Nov 20, 2016", "11/20/2016") == ["us_date", "us_date_short"]
    assert reproducing("ABC", "abc") == ["lower"]
    assert reproducing("abc", "abc") == ["lower"]  # identity is never listed: it is the plain slot
    assert reproducing("11:20 AM", "11:21") == []


def test_derive_fills_only_what_every_conversion_agrees_on() -> None:
    assert derive("12:21 AM", ("time24",)) == ("00:21", None)
    assert derive("Dec 25, 2016", ("us_date", "us_date_short")) == ("12/25/2016", None)
    assert derive("AbC", ()) == ("AbC", None)
    assert derive("AbC", ("identity", "lower")) == (None, 'conversions disagree (identity -> "AbC", lower -> "abc")')
    assert derive("noon", ("time24",)) == (None, "time24 cannot read it as a 12-hour time with AM or PM")
    assert derive("x", ("lower", "number")) == (None, "number cannot read it as a number")
    assert derive("x", ("rot13",)) == (None, "'rot13' is not a known conversion")

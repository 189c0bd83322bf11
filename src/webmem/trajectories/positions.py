"""Lists of goal positions as an origin's index holds them: parsed from a snapshot's text only when first read."""

from __future__ import annotations

from typing import Any


class PositionLists(dict[str, list[int]]):
    """From a key (a word, a value) to the positions of the goals that have it. A snapshot's lists stay
    text ("3,5,8") until ``get`` first asks for them (a match reads a handful); ``append`` adds to the text."""

    def get(self, key: str, default: Any = None) -> Any:
        found = dict.get(self, key, default)
        if type(found) is str:
            found = self[key] = [int(position) for position in found.split(",")] if found else []
        return found

    def append(self, key: str, position: int) -> None:
        """Add ``position`` to the list of ``key``; a list still in text gets it in text (not parsed for it)."""
        found = dict.get(self, key)
        if found is None:
            self[key] = [position]
        elif type(found) is str:
            self[key] = f"{found},{position}" if found else str(position)
        else:
            found.append(position)

    def packed(self) -> dict[str, str]:
        return {key: found if type(found) is str else ",".join(map(str, found)) for key, found in self.items()}


class NumberedLists:
    """Lists of positions by number (0, 1, ...): a form's or a template's goals. A snapshot holds them as one
    text ("3,5;8;..."), split when first asked for, each list parsed when first asked for."""

    def __init__(self, text: str = "") -> None:
        self._text: str | None = text
        self._lists: list[list[int] | str] = []

    def _split(self) -> list[list[int] | str]:
        if self._text is not None:
            self._lists = list(self._text.split(";")) if self._text else []
            self._text = None
        return self._lists

    def get(self, number: int) -> list[int]:
        lists = self._split()
        if number >= len(lists):
            return []
        found = lists[number]
        if type(found) is str:
            found = lists[number] = [int(position) for position in found.split(",")] if found else []
        return found  # type: ignore[return-value]

    def append(self, number: int, position: int) -> None:
        lists = self._split()
        while len(lists) <= number:
            lists.append([])
        self.get(number).append(position)

    def packed(self) -> str:
        if self._text is not None:
            return self._text
        return ";".join(found if type(found) is str else ",".join(map(str, found)) for found in self._lists)


class NumberRow:
    """A number per goal (its form's, its template's): a snapshot's text, parsed when first read; numbers
    added before that wait beside it (a goal added does not parse the row)."""

    def __init__(self, text: str = "") -> None:
        self._text = text
        self._numbers: list[int] | None = None
        self._added: list[int] = []

    def append(self, number: int) -> None:
        (self._added if self._numbers is None else self._numbers).append(number)

    @property
    def numbers(self) -> list[int]:
        if self._numbers is None:
            self._numbers = [*_numbers(self._text), *self._added]
            self._text, self._added = "", []
        return self._numbers

    def packed(self) -> str:
        return ",".join(map(str, self.numbers))


def _numbers(text: str | None) -> list[int]:
    return [int(number) for number in text.split(",")] if text else []

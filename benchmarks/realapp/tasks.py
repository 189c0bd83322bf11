"""Each task's check of the real outcome: the books table (read with sqlite3) for the tasks that change
it, the page's URL for the tasks that open a page. A check says nothing while the task is not over,
success once the outcome is exactly the asked one, and failure as soon as something else happened
(another book changed, the wrong book or filter opened)."""

from __future__ import annotations

from collections import Counter
from urllib.parse import parse_qs, urlsplit

from webmem.agent import EnvironmentOutcome

from .catalog import Instance
from .server import Book, LibraryApp

CHANGE_PATH = "/admin/library/book/{id}/change/"
LIST_PATH = "/admin/library/book/"


def expected_books(instance: Instance, books: list[Book]) -> list[Book] | None:
    """The books once the task is done, or None for a task that changes none (it opens a page)."""
    values = instance.values
    if instance.task == "edit_year":
        return [Book(book.title, book.author, int(values["year"]), book.genre) if book.title == values["title"]
                else book for book in books]
    if instance.task == "delete":
        return [book for book in books if book.title != values["title"]]
    if instance.task == "add":
        return [*books, Book(values["title"], values["author"], int(values["year"]), values["genre"])]
    return None


def check_possible(instance: Instance, books: list[Book]) -> None:
    """Raise when the data do not make the instance possible (its book missing, or the book to add present)."""
    title = instance.values.get("title")
    count = sum(book.title == title for book in books)
    if instance.task == "add" and count:
        raise ValueError(f"{instance.goal!r}: the catalog already has a book titled {title!r}")
    if instance.task in ("search_open", "edit_year", "delete") and count != 1:
        raise ValueError(f"{instance.goal!r}: the catalog has {count} books titled {title!r}, not one")


def _differences(now: Counter, then: Counter) -> str:
    gone = [book.title for book in (then - now).elements()]
    new = [f"{book.title} ({book.author}, {book.year}, {book.genre})" for book in (now - then).elements()]
    return "; ".join(part for part in (f"gone: {gone}" if gone else "", f"new: {new}" if new else "") if part)


class BookTaskEnvironment:
    """The webmem Environment of one episode: ``books`` is the table as the episode starts."""

    def __init__(self, app: LibraryApp, instance: Instance, books: list[Book]) -> None:
        self.app = app
        self.instance = instance
        self.before = Counter(books)
        expected = expected_books(instance, books)
        self.expected = Counter(expected) if expected is not None else None
        title = instance.values.get("title")
        self.book_id = next((number for number, book in enumerate(books, 1) if book.title == title), None)

    def outcome(self, page) -> EnvironmentOutcome | None:
        now = Counter(book for _, book in self.app.books())
        if self.expected is not None:
            if now == self.expected:
                return EnvironmentOutcome(success=True, reward=1.0, detail="the books are as asked")
            if now != self.before:
                return EnvironmentOutcome(success=False, reward=0.0,
                                          detail=f"the books changed, not as asked: {_differences(now, self.expected)}")
            return None
        if now != self.before:
            return EnvironmentOutcome(success=False, reward=0.0,
                                      detail=f"the books changed: {_differences(now, self.before)}")
        if self.instance.task == "search_open":
            return self._opened(page.url)
        return self._filtered(page.url)

    def _opened(self, url: str) -> EnvironmentOutcome | None:
        """Success on the book's change page reached from the list searched for the term."""
        parts = urlsplit(url)
        if not (parts.path.startswith(LIST_PATH) and parts.path.endswith("/change/")):
            return None
        if parts.path != CHANGE_PATH.format(id=self.book_id):
            return EnvironmentOutcome(success=False, reward=0.0, detail=f"opened another page: {parts.path}")
        filters = parse_qs(parse_qs(parts.query).get("_changelist_filters", [""])[0])
        searched = filters.get("q", [""])[0]
        term = self.instance.values["term"]
        if searched.strip().casefold() != term.casefold():
            return EnvironmentOutcome(success=False, reward=0.0,
                                      detail=f"opened the book from a list searched for {searched!r}, not {term!r}")
        return EnvironmentOutcome(success=True, reward=1.0, detail="opened the book from the search results")

    def _filtered(self, url: str) -> EnvironmentOutcome | None:
        """Success on the book list filtered by the genre alone."""
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        if parts.path != LIST_PATH or "genre__exact" not in query:
            return None
        shown = query["genre__exact"]
        genre = self.instance.values["genre"]
        if shown != [genre] or "q" in query:
            return EnvironmentOutcome(success=False, reward=0.0, detail=f"the list shows {parts.query!r}")
        return EnvironmentOutcome(success=True, reward=1.0, detail=f"the list shows only {genre} books")

"""The books the app starts with, and every task instance, drawn from one seed.

Titles have 2 to 4 words, some with lowercase connectors ("The Measure of Light", "Harbors and
Gardens"); genres are written lowercase in goals. Recorded instances and new (test) instances never
share a value: the catalog's titles are split once into titles that recordings use (three of each
length, one of each length per task) and titles only new instances use; the same holds for the
titles and authors of added books, the years, and the genres of the filter task (new instances
filter by genres that no recording filtered by).
"""

from __future__ import annotations

import random

from realapp_instances import TaskInstance, cycle
from realapp_instances import reused_values as shared_reused_values

from .server import Book

GENRES = ("fiction", "poetry", "history", "science", "travel", "mystery", "drama", "biography")
CONNECTORS = frozenset({"a", "an", "and", "the", "of", "in", "for", "from", "on", "over", "at", "to", "two"})

#: The catalog's titles, ten of each length.
CATALOG_TITLES = (
    "Salt Roads", "Winter Orchard", "Copper Moon", "Paper Lanterns", "Stone Choir",
    "Bright Ruin", "Orchard Street", "Distant Thunder", "Glass Tigers", "Hollow Crown",
    "Harbors and Gardens", "Blue Hour Sonnets", "The Glass Archive", "Iron and Ivy", "The Long Meridian",
    "Echoes in Amber", "Between Two Harbors", "Red Sky Almanac", "Fields and Fences", "Seven Pale Horses",
    "The Measure of Light", "Letters from the North", "Songs of the Tide", "House of Small Fires",
    "Tales of the Lowlands", "Lamps for the Journey", "Island of Lost Clocks", "A Winter in Lisbon",
    "The Weight of Snow", "Notes from a Harbor",
)
#: Titles of books to add: none of them is in the catalog.
NEW_TITLES = (
    "Wild Salt", "Small Hours", "Hollow Bells", "Morning Ledger", "Ember Days",
    "Rivers of Glass", "The Last Lighthouse", "Ash and Honey", "The Patient Tide", "Kites over Lisbon",
    "Ink and Iron", "Notes on a Garden", "A Season of Crows", "The Keeper of Maps", "Songs for the Ferry",
    "Lanterns at the Dusk",
)
CATALOG_AUTHORS = (
    "Ana Ruiz", "Ben Okafor", "Carla Mendes", "David Stone", "Eva Lindqvist", "Farid Haddad", "Grace Kim",
    "Hugo Brandt", "Irene Polo", "Jakob Weiss",
)
#: Authors of books to add (two of them with a lowercase particle).
NEW_AUTHORS = (
    "Mara Quill", "Tomas Reyes", "Ines Alder", "Jonah Pike", "Ruth Calder", "Elif Sahin", "Owen Marsh",
    "Clara Voss", "Niko Berg", "Ada Finch", "Anna de Vries", "Pieter van Dijk", "Sana Malik", "Felix Orr",
)
RECORDINGS = 3
YEARS = range(1950, 2025)

GOALS = {
    "search_open": "Search the books for {term} and open the book {title}",
    "edit_year": "Change the year of the book {title} to {year}",
    "delete": "Delete the book {title}",
    "add": "Add a book titled {title} by {author}, published in {year}, genre {genre}",
    "filter_genre": "Show only the {genre} books",
}
TASKS = tuple(GOALS)
_CATALOG_TASKS = ("search_open", "edit_year", "delete")  # tasks on a book the catalog has


class Instance(TaskInstance):
    """One task instance in the Django admin: ``phase`` "record" (the demonstrator's runs) or "test" (new
    instances)."""

    goals = GOALS


def build_catalog(seed: int) -> list[Book]:
    """The catalog's books (ids 1, 2, ... in this order), with authors, years and genres from ``seed``."""
    chooser = random.Random(f"{seed}:catalog")
    return [Book(title, chooser.choice(CATALOG_AUTHORS), chooser.choice(YEARS), chooser.choice(GENRES))
            for title in CATALOG_TITLES]


def _by_length(titles: tuple[str, ...]) -> dict[int, list[str]]:
    groups: dict[int, list[str]] = {}
    for title in titles:
        groups.setdefault(len(title.split()), []).append(title)
    return groups


def _split_titles(titles: tuple[str, ...], owners: tuple[str, ...], chooser: random.Random
                  ) -> tuple[dict[str, list[str]], list[str]]:
    """One title of each length (2, 3, 4 words) per owner for recording, and the rest for new instances."""
    recorded: dict[str, list[str]] = {owner: [] for owner in owners}
    rest: list[str] = []
    for length, group in sorted(_by_length(titles).items()):
        group = list(group)
        chooser.shuffle(group)
        for owner in owners:
            recorded[owner].append(group.pop())
        rest += group
    for owner in owners:
        chooser.shuffle(recorded[owner])
    return recorded, rest


def _term(title: str, chooser: random.Random, avoid: set[str]) -> str:
    """A word of the title to search for, lowercase: no connector, four letters at least, not in ``avoid``
    (the terms recordings searched for) unless the title has no other."""
    words = [word.lower() for word in title.split()
             if word.isalpha() and len(word) >= 4 and word.lower() not in CONNECTORS]
    return chooser.choice([word for word in words if word not in avoid] or words)


def _years(chooser: random.Random, avoid: set[int], count: int) -> list[int]:
    """``count`` years not in ``avoid``, each used once while there are enough."""
    return cycle([year for year in YEARS if year not in avoid], count, chooser)


def build_instances(seed: int, catalog: list[Book], tests: int) -> dict[str, list[Instance]]:
    """Per task, its recorded instances then its ``tests`` new ones (values repeat only when a pool runs out).

    Every draw has a random stream of its own, so the recordings do not depend on ``tests`` and the
    first new instances are the same whatever ``tests`` is."""
    def stream(*names: str) -> random.Random:
        return random.Random(":".join([str(seed), *names]))

    recorded_titles, test_titles = _split_titles(CATALOG_TITLES, _CATALOG_TASKS, stream("split", "catalog"))
    add_recorded, add_titles = _split_titles(NEW_TITLES, ("add",), stream("split", "new"))
    recorded_years = set(_years(stream("years"), set(), 2 * RECORDINGS))
    year_of = {book.title: book.year for book in catalog}
    recorded_terms: set[str] = set()
    rows: dict[tuple[str, str], list[dict[str, str]]] = {}
    for task in _CATALOG_TASKS:
        for phase, titles in (("record", recorded_titles[task]),
                              ("test", cycle(test_titles, tests, stream(task, "titles")))):
            chooser = stream(task, phase, "values")
            used: set[int] = set()
            rows[task, phase] = []
            for title in titles:
                row = {"title": title}
                if task == "search_open":
                    row["term"] = _term(title, chooser, recorded_terms if phase == "test" else set())
                    if phase == "record":
                        recorded_terms.add(row["term"])
                if task == "edit_year":  # a year recordings use, or one they never use; never the book's own
                    pool = [year for year in YEARS if (year in recorded_years) == (phase == "record")
                            and year != year_of[title]]
                    year = chooser.choice([year for year in pool if year not in used] or pool)
                    used.add(year)
                    row["year"] = str(year)
                rows[task, phase].append(row)
    authors = list(NEW_AUTHORS)
    stream("authors").shuffle(authors)
    add_authors = {"record": authors[:RECORDINGS],
                   "test": cycle(authors[RECORDINGS:], tests, stream("add", "authors"))}
    add_years = {"record": sorted(recorded_years)[:RECORDINGS],
                 "test": _years(stream("add", "years"), recorded_years, tests)}
    add_titles_by_phase = {"record": add_recorded["add"], "test": cycle(add_titles, tests, stream("add", "titles"))}
    for phase in ("record", "test"):
        chooser = stream("add", phase, "genres")
        rows["add", phase] = [{"title": title, "author": author, "year": str(year), "genre": chooser.choice(GENRES)}
                              for title, author, year in zip(add_titles_by_phase[phase], add_authors[phase],
                                                             add_years[phase])]
    genres = list(GENRES)
    stream("genres").shuffle(genres)
    rows["filter_genre", "record"] = [{"genre": genre} for genre in genres[:RECORDINGS]]
    rows["filter_genre", "test"] = [{"genre": genre} for genre in
                                    cycle(genres[RECORDINGS:], tests, stream("filter_genre", "genres"))]
    return {task: [Instance(task, phase, number, values) for phase in ("record", "test")
                   for number, values in enumerate(rows[task, phase], 1)] for task in TASKS}


def reused_values(instances: list[Instance]) -> dict[str, set[str]]:
    """The values (by name) that a new instance shares with a recorded one of the same task; the genre of
    an added book may repeat (there are only eight), any other repeat is reported."""
    return shared_reused_values(instances, repeatable=("add", "genre"))

"""Each task's check of the real outcome: the tickets table and the comments (read with sqlite3) for the
tasks that change a ticket, the query page's URL and the tickets it lists for the tasks that filter. A
check says nothing while the task is not over, success once the outcome is exactly the asked one, and
failure as soon as something else happened (another ticket or field changed, another filter shown).
``effect`` tells, once the episode is over, whether the data changed not as asked (a wrong effect)."""

from __future__ import annotations

from dataclasses import fields, replace
from urllib.parse import parse_qs, urlsplit

from trac_app import Ticket, TracApp

from webmem.agent import EnvironmentOutcome

from .catalog import OPEN_STATUSES, OPEN_TASKS, OWNERS, TICKET_TASKS, Instance

QUERY_PATH = "/query"
#: Arguments of the query page that are not filters.
QUERY_SETTINGS = frozenset({"order", "desc", "col", "group", "groupdesc", "max", "page", "row", "report", "format",
                            "verbose", "update"})

#: The data an episode can change: every ticket by id, and each ticket's comments.
State = tuple[dict[int, Ticket], dict[int, tuple[str, ...]]]


def read_state(app: TracApp) -> State:
    tickets = dict(app.tickets())
    return tickets, {number: tuple(app.comments(number)) for number in tickets}


def ticket_id(instance: Instance, tickets: list[Ticket]) -> int | None:
    """The id of the ticket the instance names (tickets are numbered from 1 in order), or None."""
    title = instance.values.get("title")
    return next((number for number, ticket in enumerate(tickets, 1) if ticket.summary == title), None)


def expected_state(instance: Instance, tickets: list[Ticket]) -> State:
    """The data once the task is done (unchanged for a filter task)."""
    values, number = instance.values, ticket_id(instance, tickets)
    rows = dict(enumerate(tickets, 1))
    comments: dict[int, tuple[str, ...]] = {key: () for key in rows}
    if instance.task == "set_priority":
        rows[number] = replace(rows[number], priority=values["priority"])
    elif instance.task == "resolve":
        rows[number] = replace(rows[number], status="closed", resolution=values["resolution"])
    elif instance.task == "reassign":
        rows[number] = replace(rows[number], owner=values["user"], status="assigned")
    elif instance.task == "comment":
        comments[number] = (values["text"],)
    return rows, comments


def check_possible(instance: Instance, tickets: list[Ticket]) -> None:
    """Raise when the tickets do not make the instance possible (its ticket missing or closed when it must be
    open, the asked value already there, an owner filter that would list another user's tickets)."""
    title = instance.values.get("title")
    if instance.task in TICKET_TASKS:
        found = [ticket for ticket in tickets if ticket.summary == title]
        if len(found) != 1:
            raise ValueError(f"{instance.goal!r}: {len(found)} tickets are titled {title!r}, not one")
        ticket = found[0]
        if instance.task in OPEN_TASKS and ticket.status not in OPEN_STATUSES:
            raise ValueError(f"{instance.goal!r}: the ticket is {ticket.status}")
        if instance.task == "set_priority" and ticket.priority == instance.values["priority"]:
            raise ValueError(f"{instance.goal!r}: the ticket has that priority already")
        if instance.task == "reassign" and ticket.owner == instance.values["user"]:
            raise ValueError(f"{instance.goal!r}: the ticket is owned by that user already")
    if instance.task == "filter_owner":
        user = instance.values["user"]
        if not any(ticket.owner == user for ticket in tickets) or any(
                user in other and user != other for other in OWNERS):
            raise ValueError(f"{instance.goal!r}: {user} owns no ticket, or another owner's name contains it")


def _differences(now: State, then: State) -> str:
    parts = []
    for number in sorted(set(now[0]) | set(then[0])):
        before, after = then[0].get(number), now[0].get(number)
        if before is None or after is None:
            parts.append(f"#{number} {'gone' if after is None else 'new'}")
        elif before != after:
            changed = [f"{item.name}={getattr(after, item.name)!r}" for item in fields(Ticket)
                       if getattr(before, item.name) != getattr(after, item.name)]
            parts.append(f"#{number} {', '.join(changed)}")
        if now[1].get(number, ()) != then[1].get(number, ()):
            parts.append(f"#{number} comments {list(now[1].get(number, ()))!r}")
    return "; ".join(parts)


class TicketTaskEnvironment:
    """The webmem Environment of one episode: ``tickets`` is the table as the episode starts (no comments)."""

    def __init__(self, app: TracApp, instance: Instance, tickets: list[Ticket]) -> None:
        self.app = app
        self.instance = instance
        self.before: State = (dict(enumerate(tickets, 1)), {number: () for number in range(1, len(tickets) + 1)})
        self.expected = expected_state(instance, tickets)

    def outcome(self, page) -> EnvironmentOutcome | None:
        now = read_state(self.app)
        if self.instance.task in TICKET_TASKS:
            if now == self.expected:
                return EnvironmentOutcome(success=True, reward=1.0, detail="the ticket is as asked")
            if now != self.before:
                return EnvironmentOutcome(success=False, reward=0.0, detail="the tickets changed, not as asked: "
                                          f"{_differences(now, self.expected)}")
            return None
        if now != self.before:
            return EnvironmentOutcome(success=False, reward=0.0,
                                      detail=f"the tickets changed: {_differences(now, self.before)}")
        return self._filtered(page)

    def effect(self) -> str:
        """What the episode did to the data: "none", "as asked", or "wrong" (changed, not as asked)."""
        now = read_state(self.app)
        if now == self.before:
            return "none"
        return "as asked" if now == self.expected else "wrong"

    def _asked(self) -> dict[str, str]:
        """The ticket fields the filter task asks for, with their values."""
        values = self.instance.values
        if self.instance.task == "filter_owner":
            return {"owner": values["user"]}
        return {name: values[name] for name in ("priority", "type") if name in values}

    def _filtered(self, page) -> EnvironmentOutcome | None:
        """Success on the query page filtered by exactly the asked fields and values, listing their tickets."""
        parts = urlsplit(page.url)
        query = parse_qs(parts.query, keep_blank_values=True)
        filters = {name: values for name, values in query.items() if name not in QUERY_SETTINGS}
        if parts.path != QUERY_PATH or not filters:
            return None
        asked = self._asked()
        if set(filters) != set(asked) or any(len(shown) != 1 or shown[0] not in _written(name, asked[name])
                                             for name, shown in filters.items()):
            return EnvironmentOutcome(success=False, reward=0.0, detail=f"the query shows {parts.query!r}")
        listed = _listed(page)
        if listed is None:
            return None
        wanted = sorted(number for number, ticket in self.before[0].items()
                        if all(getattr(ticket, name) == value for name, value in asked.items()))
        if listed != wanted:
            return EnvironmentOutcome(success=False, reward=0.0,
                                      detail=f"the query lists tickets {listed}, not {wanted}")
        return EnvironmentOutcome(success=True, reward=1.0, detail=f"the query lists exactly {parts.query!r}")


def _written(name: str, value: str) -> tuple[str, ...]:
    """How the query page's URL may write a filter on ``name`` for ``value``: "is", and for the owner
    "contains" too (the owner filter's default mode; no owner's name contains another's)."""
    return (value, f"~{value}") if name == "owner" else (value,)


def _listed(page) -> list[int] | None:
    """The ids of the tickets the query page lists, or None while the page is loading."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        if page.evaluate("document.readyState") == "loading":
            return None
        links = page.eval_on_selector_all("table.listing.tickets td.id a",
                                          "links => links.map(link => link.getAttribute('href'))")
    except PlaywrightError:
        return None
    return sorted(int(href.rsplit("/", 1)[-1]) for href in links)

"""The errors webmem raises.

Every error is a :class:`WebmemError`; catch that to handle them all::

    WebmemError
    ├── InvalidInput (also a ValueError)    a value given to the API is wrong; the message names it
    ├── NotFound (also a LookupError)
    │   ├── RunNotFound                     no run with that id in this namespace
    │   └── TrajectoryNotFound              no trajectory with that id in this namespace
    ├── RunClosed                           a finished run was asked to record more
    ├── MemoryDisabled                      a component was used on a memory opened with enabled=False
    ├── BrowserUnavailable                  no Chromium to drive (demo, agent), or the browser MCP server
    │                                       of webmem mcp --browser could not start
    ├── PolicyError                         a policy could not decide (an LLM endpoint failed or answered nonsense)
    └── StoreError                          the database cannot be used
        ├── StoreLocked                     another process held the database for too long
        ├── StoreCorrupt                    the file is not a webmem database or is damaged
        └── SchemaTooNew                    the database was written by a newer webmem

Driver errors (sqlite3, SQLAlchemy, pydantic, Playwright) are translated where they
enter the library and chained with ``raise ... from exc``.
"""

from __future__ import annotations


class WebmemError(Exception):
    """Base class of every error raised by webmem."""


class InvalidInput(WebmemError, ValueError):
    """A value given to the API is wrong; the message names the field and the reason."""


class NotFound(WebmemError, LookupError):
    """A record asked for by id does not exist in this namespace."""


class RunNotFound(NotFound):
    """No run with this id exists in this namespace."""


class TrajectoryNotFound(NotFound):
    """No trajectory with this id exists in this namespace."""


class RunClosed(WebmemError):
    """A finished run cannot record more steps or updates."""


class MemoryDisabled(WebmemError):
    """The memory was opened with ``enabled=False``; it neither reads nor writes."""


class BrowserUnavailable(WebmemError):
    """No browser could be launched, or the browser MCP server the proxy starts could not start."""


class PolicyError(WebmemError):
    """A policy could not choose an action: its LLM endpoint failed, or answered with no usable action."""


class StoreError(WebmemError):
    """The database cannot be used."""


class StoreLocked(StoreError):
    """Another process kept the database locked for longer than the busy timeout."""


class StoreReadOnly(StoreError):
    """The database takes no writes (a PostgreSQL standby, or ``default_transaction_read_only``): what only
    reads works, what writes raises this."""


class StoreCorrupt(StoreError):
    """The database file is not a webmem database, or it is damaged."""


class SchemaTooNew(StoreError):
    """The database has migrations this version of webmem does not know."""

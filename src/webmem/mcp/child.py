"""The browser MCP server that the proxy starts as its child: its session, and why it could not start.

The child's stderr is held while it starts: a child that cannot start (a command that is not found, a
script that is missing, a server that exits at once) is reported as one :class:`BrowserUnavailable` that
names the command and the line of its stderr that says why. Once it answers, what it writes to stderr
goes on to the proxy's stderr, as it would without the proxy.
"""

from __future__ import annotations

import collections
import os
import re
import shlex
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Tool

from ..core.errors import BrowserUnavailable

#: The stderr lines kept to say why a child could not start.
KEPT_LINES = 200
MAX_REASON_CHARS = 300
#: How long the proxy waits, after a failed start, for the child's last words on stderr.
LAST_WORDS_SECONDS = 5.0
#: A line that names an error ("Error: Cannot find module ...", "ModuleNotFoundError: ...", "fatal: ..."),
#: preferred to the last line, which is often a version banner or the end of a stack trace.
_ERROR_LINE = re.compile(r"^\s*(?:[\w.]*(?:Error|Exception)|error|fatal|ERROR|FATAL)\b[^:\n]{0,40}:")


class ChildStderr:
    """A pipe for the child's stderr: lines are kept until :meth:`pass_through`, then written to ``stream``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        read_end, write_end = os.pipe()
        self.sink: TextIO = os.fdopen(write_end, "w", encoding="utf-8", errors="replace")
        self._source = os.fdopen(read_end, "rb")
        self._stream = stream
        self._lines: collections.deque[str] = collections.deque(maxlen=KEPT_LINES)
        self._passing = False
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="webmem-browser-stderr", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with self._source:
            for raw in self._source:
                line = raw.decode("utf-8", "replace")
                with self._lock:
                    if self._passing:
                        self._write(line)
                    else:
                        self._lines.append(line)

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stderr
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):  # the proxy's own stderr is gone: nobody is left to read it
            pass

    def pass_through(self) -> None:
        """From now on, write the child's stderr on, the lines held so far first."""
        with self._lock:
            self._passing = True
            held, self._lines = "".join(self._lines), collections.deque(maxlen=KEPT_LINES)
            if held:
                self._write(held)

    def last_words(self) -> str | None:
        """Once the child is gone: the line of its stderr that says why it stopped (None if it wrote none)."""
        self.close()
        self._reader.join(LAST_WORDS_SECONDS)
        with self._lock:
            lines = [line.strip() for line in self._lines if line.strip()]
        if not lines:
            return None
        reason = next((line for line in reversed(lines) if _ERROR_LINE.match(line)), lines[-1])
        return reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 3] + "..."

    def close(self) -> None:
        """Close the proxy's end of the pipe (the reader stops once the child has closed its end too)."""
        if not self.sink.closed:
            self.sink.close()


@asynccontextmanager
async def browser_session(parameters: StdioServerParameters) -> AsyncIterator[tuple[Client, list[Tool]]]:
    """The started browser server and its tools, for as long as the block runs; raises
    :class:`BrowserUnavailable` when it cannot start."""
    stderr = ChildStderr()
    started = False
    try:
        async with Client(stdio_client(parameters, errlog=stderr.sink)) as child:
            tools = list((await child.list_tools()).tools)
            started = True
            stderr.pass_through()
            yield child, tools
    except Exception as exc:
        if started:
            raise
        raise BrowserUnavailable(start_failure(parameters, exc, stderr.last_words())) from None
    finally:
        stderr.close()


def start_failure(parameters: StdioServerParameters, exc: BaseException, last_words: str | None) -> str:
    """One line: the command, and why it could not start."""
    command = shlex.join([parameters.command, *parameters.args])
    missing = _os_error(exc)
    if missing is not None:
        reason = f"{missing.strerror or missing}: {missing.filename or parameters.command}"
    elif last_words is not None:
        reason = last_words
    else:
        reason = "it ended before answering the MCP handshake, and wrote nothing on stderr"
    return f'the browser command "{command}" could not start: {reason}'


def _os_error(exc: BaseException) -> OSError | None:
    """The OSError that spawning the command raised (the SDK may wrap it in exception groups)."""
    if isinstance(exc, OSError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        return next((found for inner in exc.exceptions if (found := _os_error(inner)) is not None), None)
    return None

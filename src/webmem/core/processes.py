"""Which process holds a run: an identity of the running process that another process of the same machine can
check, so that a run whose process was killed is known as abandoned at once rather than after a timeout.

An identity is ``host|boot|pid|start``: the host name, the kernel's boot id (Linux), the process id and the
process's start time in clock ticks since boot (Linux), so that a process id used again by a later process,
or a reboot, does not pass for the process that held the run. Where a part cannot be read it is empty and
that check is skipped; a process of another machine can never be checked, and is taken as alive.
"""

from __future__ import annotations

import os
import socket
import sys
from functools import lru_cache
from pathlib import Path

_SEPARATOR = "|"
_known: tuple[int, str] | None = None  # (pid, identity): a forked child is a process of its own


def this_process() -> str:
    """The identity of the calling process."""
    global _known
    pid = os.getpid()
    if _known is None or _known[0] != pid:
        _known = (pid, _SEPARATOR.join((_machine(), str(pid), _start_ticks(pid))))
    return _known[1]


def has_ended(identity: str | None) -> bool:
    """Whether the process named by ``identity`` is known to have ended: it ran on this machine (same host,
    same boot) and no process has its id now, or the one that has it started at another time. False when
    it cannot be told: no identity, another machine, or a system where processes cannot be looked up."""
    if not identity or sys.platform == "win32":  # os.kill on Windows ends the process it names
        return False
    machine, _, process = identity.rpartition(_SEPARATOR)
    machine, _, pid_text = machine.rpartition(_SEPARATOR)
    if machine != _machine() or not pid_text.isdecimal():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return process != _start_ticks(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # a process of another user has that id
        pass
    except OSError:
        return False
    now = _start_ticks(pid)
    return bool(process and now and now != process)


@lru_cache(maxsize=1)
def _machine() -> str:
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname().replace(_SEPARATOR, '_')}{_SEPARATOR}{boot}"


def _start_ticks(pid: int) -> str:
    """The process's start time since boot (field 22 of ``/proc/<pid>/stat``), or "" where it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()  # the command name (field 2) may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else ""

"""webmem inside other agents: each integration maps its agent's events onto :class:`webmem.Run`."""

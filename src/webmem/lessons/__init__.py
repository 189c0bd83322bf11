"""Lessons: what failures taught, given back in the system prompt, on a matching error or on a site.

``LessonStore`` (``store``) keeps and ranks them; ``learning`` finds a lesson in a failed step
followed by one that worked; ``feedback`` judges whether a recalled tip helped; ``files`` reads
and writes lesson files of the mycompagent ``memory.json`` format.
"""

from .store import ImportReport, LessonStore

__all__ = ["ImportReport", "LessonStore"]

"""What a run's context is made of: the memory's parts for the agent's next turn, ranked by priority.

``Run.context`` gathers the run's state and calls :func:`memory_parts`; the pack
(:mod:`webmem.core.pack`) fits the parts into the token budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.models import Lesson, MatchReport
from .core.pack import ContextPart
from .core.text import clean_for_prompt

if TYPE_CHECKING:
    from .memory import Memory

PRIORITY_LAST_ERROR = 60
PRIORITY_SESSIONS = 50
PRIORITY_SITE_TIPS = 45
PRIORITY_EPISODE_ADVICE = 42
PRIORITY_REFERENCE = 40
PRIORITY_KNOWLEDGE = 30
PRIORITY_SELECTORS = 25
REFERENCE_HEADING = "REFERENCE TRAJECTORY (a similar earlier run succeeded this way: follow these steps or adapt them)"

LastFailure = tuple[str, str, list[Lesson]]


def memory_parts(
    mem: Memory, *, domain: str, reference: MatchReport, last_failure: LastFailure | None,
    site_tips: list[Lesson], episode_advice: str,
) -> list[ContextPart]:
    """The memory's own parts for one turn on ``domain`` (read inside the caller's transaction)."""
    best = reference.best
    return [
        ContextPart("last_error", "", PRIORITY_LAST_ERROR, failure_text(last_failure)),
        ContextPart("site_tips", "", PRIORITY_SITE_TIPS, tips_text("Tips for this site:", site_tips)),
        ContextPart("episode_advice", "", PRIORITY_EPISODE_ADVICE, episode_advice),
        ContextPart("session_history", "SESSION HISTORY", PRIORITY_SESSIONS, mem.knowledge.format_sessions(domain)),
        ContextPart(
            "reference_trajectory", REFERENCE_HEADING, PRIORITY_REFERENCE,
            mem.trajectories.format_reference(best) if best else "",
            detail={"trajectory_id": best.id} if best else {"reason": reference.reason},
        ),
        ContextPart("app_knowledge", "APP KNOWLEDGE", PRIORITY_KNOWLEDGE, mem.knowledge.format_for_prompt(domain)),
        ContextPart("known_selectors", "KNOWN SELECTORS", PRIORITY_SELECTORS, mem.selectors.format_for_prompt(domain)),
    ]


def failure_text(last_failure: LastFailure | None) -> str:
    """The last failed action and its error, with the tips it recalled (news for one turn only)."""
    if last_failure is None:
        return ""
    command, error, tips = last_failure
    text = f"Last action failed: {clean_for_prompt(command, 200)}\n{clean_for_prompt(error, 600)}"
    if tips:
        text += "\n\n" + tips_text("Tips from previous experience:", tips)
    return text


def tips_text(heading: str, tips: list[Lesson]) -> str:
    if not tips:
        return ""
    return "\n".join([heading, *(f"- {clean_for_prompt(tip.lesson, 500)}" for tip in tips)])

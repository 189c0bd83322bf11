"""What a run's context is made of: the memory's parts for the agent's next turn, ranked by priority.

``Run.context`` gathers the run's state and calls :func:`memory_parts`; the pack
(:mod:`webmem.core.pack`) fits the parts into the token budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .core.models import Fact, Lesson, MatchReport, ReplayReport
from .core.pack import ContextPart
from .core.text import clean_for_prompt
from .core.urls import domain_of, origin_of, site_of
from .store.prepared import Read
from .trajectories.reference import STEP_CUT, answers_hidden

if TYPE_CHECKING:
    from .memory import Memory

PRIORITY_LAST_ERROR = 60
PRIORITY_HANDOVER = 58  # above the recent history (55): the replay that just stopped is news
PRIORITY_SESSIONS = 50
PRIORITY_SITE_TIPS = 45
PRIORITY_EPISODE_ADVICE = 42
PRIORITY_REFERENCE = 40
PRIORITY_KNOWLEDGE = 30
PRIORITY_SELECTORS = 25
REFERENCE_HEADING = "REFERENCE TRAJECTORY (a similar earlier run succeeded this way: follow these steps or adapt them)"
HANDOVER_HEADING = "REPLAY HANDED OVER"

BUILT_IN_MARK = " (built-in default)"
SITE_CHANGED_NOTE = "(recorded before the site changed on {when} UTC: check every step against the page)"

LastFailure = tuple[str, str, list[Lesson]]


@dataclass(frozen=True)
class Reference:
    """The reference trajectory a run gets on one origin: how it was chosen, and its text for the run."""

    report: MatchReport
    text: str
    withheld: str | None = None  # why the best trajectory is not given, when the outcome gate holds it back

    @property
    def detail(self) -> dict[str, str]:
        best = self.report.best
        if best is not None and self.withheld is None:
            return {"trajectory_id": best.id}
        return {"reason": self.withheld or self.report.reason}


def find_reference(
    mem: Memory, *, goal: str, origin: str, run_id: str, known: Sequence[Fact] | None = None,
) -> Reference:
    """The best trajectory on ``origin`` for ``goal`` (never the run's own), shown in ``goal``'s values,
    unless runs given it kept failing; one recorded before the site changed says so first (``known``: the
    facts of the origin's domain, already read)."""
    report = mem.trajectories.match(goal, origin=origin, exclude_run_id=run_id, run_id=run_id, limit=1)
    best = report.best
    if best is None:
        return Reference(report, "")
    with mem.store.read() as conn:
        if mem.outcomes.held_back(conn, "reference", [best.id]):
            return Reference(report, "", withheld=f"trajectory {best.id} withheld: runs given it kept failing")
        changed = mem.site_changes.stale_since(conn, best, known=known)
    text = mem.trajectories.format_reference(best, goal=mem.scope.redact(goal))
    if changed is not None:
        text = f"{SITE_CHANGED_NOTE.format(when=changed.strftime('%Y-%m-%d %H:%M'))} {text}"  # on the goal's line
    return Reference(report, text)


def context_reads(
    mem: Memory, page: str, *, site: str | None, parts_off: Mapping[str, object], references: Mapping[str, object],
) -> list[Read]:
    """The reads the run's context on ``page`` makes that depend on nothing read before them (the domain's facts,
    sessions and selectors; unless the run already knows them, the lessons about the site (``site``: the run's
    current one), the parts turned off on it and the first read of the match for the reference): read ahead in
    one round trip where reads are round trips (``webmem.store.prepared.reading_ahead``). None on SQLite, whose
    reads are calls within the process."""
    if mem.store.dialect != "postgresql":
        return []
    domain = domain_of(page)
    reads = [*mem.knowledge.context_reads(domain), *mem.selectors.context_reads(domain)]
    if domain != site:
        reads.append(mem.lessons.site_read(domain))
    if site_of(domain) not in parts_off:
        reads += mem.outcomes.context_reads(site_of(domain))
    return reads if origin_of(page) in references else [*reads, *mem.trajectories.context_reads(origin_of(page))]


def memory_parts(
    mem: Memory, *, goal: str, domain: str, reference: Reference, last_failure: LastFailure | None,
    site_tips: list[Lesson], episode_advice: str, parts_off: Mapping[str, str], known: Sequence[Fact] | None = None,
    handover: ReplayReport | None = None,
) -> list[ContextPart]:
    """The memory's own parts for one turn on ``domain`` (read inside the caller's transaction); the
    reference trajectory is cut by whole steps when it does not fit. A part turned off on this site by
    the outcome gate (``parts_off``: part -> why) is left empty, with the reason in its report. ``known``:
    the domain's facts, already read. Once the run's replay handed over (``handover``), where it stopped
    and why takes the reference's place: the remembered path no longer fits the page from that step on."""
    if handover is not None:
        reference = Reference(reference.report, "", withheld="the run's replay of a remembered run handed over")
    parts = [
        ContextPart("last_error", "", PRIORITY_LAST_ERROR, failure_text(last_failure)),
        ContextPart("replay_handover", HANDOVER_HEADING, PRIORITY_HANDOVER, handover_text(handover)),
        ContextPart("site_tips", "", PRIORITY_SITE_TIPS, tips_text("Tips for this site:", site_tips)),
        ContextPart("episode_advice", "", PRIORITY_EPISODE_ADVICE, episode_advice),
        ContextPart("session_history", "SESSION HISTORY", PRIORITY_SESSIONS,
                    mem.knowledge.format_sessions(domain, hide=answers_hidden(goal))),
        ContextPart(
            "reference_trajectory", REFERENCE_HEADING, PRIORITY_REFERENCE,
            reference.text, by_lines=STEP_CUT, detail=reference.detail,
        ),
        ContextPart("app_knowledge", "APP KNOWLEDGE", PRIORITY_KNOWLEDGE,
                    mem.knowledge.format_for_prompt(domain, known=known)),
        ContextPart("known_selectors", "KNOWN SELECTORS", PRIORITY_SELECTORS, mem.selectors.format_for_prompt(domain)),
    ]
    return [
        replace(part, body="", by_lines=None, detail={"reason": f"turned off on this site: {parts_off[part.name]}"})
        if part.name in parts_off else part
        for part in parts
    ]


def handover_text(handover: ReplayReport | None) -> str:
    """Where the run's replay stopped and why, and the steps it did before; nothing of the remembered
    steps after it, which followed from the one that failed."""
    if handover is None:
        return ""
    done = [step for step in handover.steps if step.status in ("hit", "healed")]
    lines = [f"Memory replayed an earlier run of this task and handed over to you at its step {handover.step}: "
             f"{clean_for_prompt(handover.reason or 'the page did not fit it', 600)}."]
    if done:
        lines.append("Already done on the page (do not repeat):")
        lines += [f"  {step.step}. {clean_for_prompt(' '.join([step.action, step.target or step.url or '']), 200)}"
                  for step in done]
    lines.append("The earlier run's steps from there on no longer fit this page: carry on from the page as it is now.")
    return "\n".join(lines)


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
    return "\n".join([heading, *(f"- {clean_for_prompt(tip.lesson, 500)}{BUILT_IN_MARK if tip.source == 'seed' else ''}"
                               for tip in tips)])

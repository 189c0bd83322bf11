"""A task's summary as seed 002 gives one: the goal, the actions and their outcomes, the pages visited, the pages
explored with their summaries, and the recent successful actions, as plain data and as text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.text import clean_for_prompt

if TYPE_CHECKING:
    from .memory import AgentMemory

RECENT_ACTION_NAMES = 5  # distinct tools of the latest successful actions, in a task summary


def task_summary(memory: AgentMemory, *, visited: set[str]) -> dict[str, Any]:
    """``memory``'s task summary (``visited``: the keys of the pages marked visited), with its ``text``."""
    entries = memory.short_term.entries
    summary = {
        "goal": memory.working.goal,
        "mode": memory.operation_mode,
        "cycles": memory.working.cycle_count,
        "successes": sum(1 for entry in entries if entry.outcome == "success"),
        "failures": sum(1 for entry in entries if entry.outcome == "failure"),
        "pages_visited": len(visited),
        "current_url": memory.current_url(),
        "loop_warnings": memory.short_term.get_loop_warnings(),
        "explored_pages": explored_pages(memory, visited=visited),
        "recent_successful_actions": list(dict.fromkeys(
            entry.tool for entry in reversed(entries) if entry.outcome == "success"))[:RECENT_ACTION_NAMES][::-1],
    }
    return {**summary, "text": task_summary_text(summary)}


def explored_pages(memory: AgentMemory, *, visited: set[str]) -> list[dict[str, Any]]:
    """The pages explored: those the sitemap saw visited, then those whose map was kept with a summary and that
    were visited (marked, or on the navigation path), titled as the navigation saw them."""
    pages = [{"url": page.url, "title": page.title, "summary": page.summary}
             for page in (memory.sitemap.pages() if memory.sitemap else []) if page.visited]
    listed = {memory.page_key(page["url"]) for page in pages}
    navigation = memory.working.navigation
    titles = {memory.page_key(state.url): state.title for state in navigation if state.title}
    seen = visited | {memory.page_key(state.url) for state in navigation}
    for key, item in memory.working.page_maps.items():
        if item["summary"] and key in seen and key not in listed:
            page_map = item["map"]
            named = page_map.get("title") if isinstance(page_map, dict) else None
            pages.append({"url": key, "title": titles.get(key) or (named if isinstance(named, str) else ""),
                          "summary": item["summary"]})
    return pages


def task_summary_text(summary: Mapping[str, Any]) -> str:
    """A task summary (``AgentMemory.get_task_summary``) as the seed prints one."""
    lines = [
        f"Goal: {clean_for_prompt(summary['goal'] or '(none)', 300)}",
        f"Actions: {summary['cycles']} total ({summary['successes']} successful, {summary['failures']} failed)",
        f"Current page: {summary['current_url'] or '(none)'}",
        f"Pages visited: {summary['pages_visited']}",
    ]
    explored = summary["explored_pages"]
    if explored:
        lines += ["", f"Explored pages ({len(explored)} total):"]
        lines += [f"  - {clean_for_prompt(page['title'] or page['url'], 120)}"
                  + (f": {clean_for_prompt(page['summary'], 200)}" if page["summary"] else "") for page in explored]
    if summary["recent_successful_actions"]:
        lines += ["", f"Recent successful actions: {', '.join(summary['recent_successful_actions'])}"]
    return "\n".join(lines)

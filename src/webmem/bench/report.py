"""The benchmark as one self-contained HTML page: the comparison table and two inline SVG plots.

Nothing is loaded from elsewhere (no scripts, stylesheets or fonts), so the file reads offline.
Every piece of text is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from .results import BenchReport, comparison, memory_label, replay_notes

__all__ = ["render_html"]

COLORS = {"cold": "#8a8f98", "warm": "#d9480f", "recording": "#1c7ed6"}
WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 30, 40

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 80rem; padding: 0 1.5rem; color: #222; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3rem 0.6rem; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
tr:last-child td { font-weight: bold; border-top: 2px solid #888; }
svg { overflow: visible; margin-left: 4rem; }
svg text { font-size: 11px; fill: #444; }
.settings { color: #555; }
"""


def render_html(report: BenchReport) -> str:
    """The report as an HTML document."""
    settings = (
        f"policy {report.policy} · {len(report.tasks)} tasks × {report.episodes_per_task} episodes · "
        f"seed {report.seed} · max {report.max_turns} turns · {memory_label(report)} · "
        f"{report.duration_ms / 1000:.1f} s"
    )
    columns, rows = comparison(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>webmem on MiniWoB++</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>webmem on MiniWoB++</h1>",
        f'<p class="settings">{escape(settings)}</p>',
        _table(columns, rows),
        "<p>Success is the task's full reward; partial credit (some reward, less than the full one) is counted "
        "apart and is not a success. Replayed: the memory's replay alone solved the task; handed over: the replay "
        "gave the run to the policy; replay failed: it ran without handing over and the task was not solved.</p>",
        *(f"<p>{escape(note)}</p>" for note in replay_notes(report)),
        "<h2>Decisions per episode</h2>",
        "<p>Policy decisions at each episode of a task, averaged over the tasks.</p>",
        _line_plot({mode: report.curve(mode) for mode in report.modes}),
        "<h2>Success rate per task</h2>",
        _bar_plot(report),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(column)}</th>" for column in columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<div class=\"scroll\"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def _svg(inner: list[str], label: str, height: int = HEIGHT) -> str:
    return (f'<svg width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(label)}">'
            + "".join(inner) + "</svg>")


def _legend(modes: Sequence[str]) -> list[str]:
    items = []
    for number, mode in enumerate(modes):
        x, y = LEFT + number * 90, 4
        items.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{COLORS.get(mode, "#333")}"/>')
        items.append(f'<text x="{x + 14}" y="{y + 9}">{escape(mode)}</text>')
    return items


def _axes(top_value: float, x_label: str, y_label: str, *, percent: bool = False, height: int = HEIGHT) -> list[str]:
    bottom = height - BOTTOM
    items = [
        f'<line x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" stroke="#888"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#888"/>',
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{height - 6}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="12" y="{(TOP + bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 12 {(TOP + bottom) / 2})">{escape(y_label)}</text>',
    ]
    for fraction in (0, 0.5, 1):
        y = bottom - fraction * (bottom - TOP)
        items.append(f'<text x="{LEFT - 4}" y="{y + 4:.1f}" text-anchor="end">{_tick(top_value * fraction, percent)}</text>')
    return items


def _line_plot(curves: dict[str, list[float]]) -> str:
    longest = max((len(values) for values in curves.values()), default=0)
    top_value = math.ceil(max((value for values in curves.values() for value in values), default=0)) or 1
    bottom = HEIGHT - BOTTOM
    span = max(longest - 1, 1)

    def point(index: int, value: float) -> tuple[float, float]:
        return LEFT + index * (WIDTH - LEFT - RIGHT) / span, bottom - value / top_value * (bottom - TOP)

    items = _axes(top_value, "episode", "decisions")
    for index in range(longest):
        x, _ = point(index, 0)
        items.append(f'<text x="{x:.1f}" y="{bottom + 14}" text-anchor="middle">{index}</text>')
    for mode, values in curves.items():
        color = COLORS.get(mode, "#333")
        points = [point(index, value) for index, value in enumerate(values)]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        items.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        items += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"><title>{escape(mode)} episode {index}: '
                  f'{values[index]:.2f}</title></circle>' for index, (x, y) in enumerate(points)]
    items += _legend(list(curves))
    return _svg(items, "decisions per episode, cold and warm")


def _bar_plot(report: BenchReport) -> str:
    height = HEIGHT + 60  # room for task names written at a slant
    bottom = height - BOTTOM - 60
    slot = (WIDTH - LEFT - RIGHT) / max(len(report.tasks), 1)
    bar = min(slot * 0.8 / max(len(report.modes), 1), 36)
    items = _axes(1.0, "", "success rate", percent=True, height=height - 60)
    for number, task in enumerate(report.tasks):
        start = LEFT + number * slot + (slot - bar * len(report.modes)) / 2
        for offset, mode in enumerate(report.modes):
            found = report.summary(mode, task)
            rate = 0.0 if found is None else found.success_rate
            tall = rate * (bottom - TOP)
            items.append(
                f'<rect x="{start + offset * bar:.1f}" y="{bottom - tall:.1f}" width="{bar:.1f}" height="{tall:.1f}" '
                f'fill="{COLORS.get(mode, "#333")}"><title>{escape(task)} {escape(mode)}: {rate:.0%}</title></rect>'
            )
        x = start + bar * len(report.modes) / 2
        items.append(f'<text x="{x:.1f}" y="{bottom + 12}" text-anchor="end" '
                     f'transform="rotate(-40 {x:.1f} {bottom + 12})">{escape(task)}</text>')
    items += _legend(report.modes)
    return _svg(items, "success rate per task, cold and warm", height)


def _tick(value: float, percent: bool) -> str:
    return f"{value:.0%}" if percent else f"{value:.3g}"

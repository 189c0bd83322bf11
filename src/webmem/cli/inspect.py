"""Looking inside: sessions, facts, selectors, trajectories, lessons, episodes, and the context."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..core.vocabulary import DEFAULT_MATCH_LIMIT, FACT_TYPES
from .output import (
    COUNT,
    console,
    emit_json,
    json_option,
    nothing,
    nothing_on,
    short,
    table,
    when,
)

if TYPE_CHECKING:
    from . import Settings


@click.command("sessions")
@click.argument("domain")
@json_option
@click.pass_obj
def sessions(settings: Settings, domain: str, json_: bool) -> None:
    """Show the last sessions on a domain, newest first."""
    with settings.memory() as mem:
        found = mem.knowledge.sessions(domain)
        known = mem.knowledge.domains() if not found else []
    if json_:
        emit_json([session.model_dump(mode="json") for session in found])
    elif not found:
        nothing_on("sessions", domain, known)
    else:
        table(("when (UTC)", "session", "ok", "turns", "goal", "outcome", "final url"),
              ((when(s.timestamp), s.id, "yes" if s.success else "no", s.turns_used, short(s.goal, 50),
                short(s.outcome, 60), s.final_url) for s in found), no_wrap=("when (UTC)", "session"))


@click.command("facts")
@click.argument("domain")
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), help="Only facts of this type.")
@click.option("--min-confidence", type=click.FloatRange(0, 1), default=0.3, show_default=True,
              help="Only facts at least this confident.")
@json_option
@click.pass_obj
def facts(settings: Settings, domain: str, fact_type: str | None, min_confidence: float, json_: bool) -> None:
    """Show what is known about a domain, most confident first."""
    with settings.memory() as mem:
        found = mem.knowledge.facts(domain, type=fact_type, min_confidence=min_confidence)
        known = mem.knowledge.domains() if not found else []
    if json_:
        emit_json([fact.model_dump(mode="json") for fact in found])
    elif not found:
        nothing_on("facts", domain, known)
    else:
        table(("type", "key", "value", "confidence", "sources", "last seen (UTC)"),
              ((f.type, f.key, short(f.value, 80), f"{f.confidence:.2f}", f.sources, when(f.last_seen))
               for f in found))


@click.command("selectors")
@click.argument("domain")
@click.option("--limit", type=COUNT, default=20, show_default=True, help="At most this many.")
@json_option
@click.pass_obj
def selectors(settings: Settings, domain: str, limit: int, json_: bool) -> None:
    """Show the selectors known to work on a domain, most successful first."""
    with settings.memory() as mem:
        found = mem.selectors.list(domain, limit=limit)
        known = mem.selectors.domains() if not found else []
    if json_:
        emit_json([entry.model_dump(mode="json") for entry in found])
    elif not found:
        nothing_on("selectors", domain, known)
    else:
        table(("element", "stable selector", "last ref", "successes", "last used (UTC)"),
              ((e.element, e.stable_selector, e.last_ref, e.success_count, when(e.last_used)) for e in found))


@click.group("trajectories", invoke_without_command=True, subcommand_metavar="[COMMAND] [ARGS]...")
@click.option("--domain", help="Only trajectories of this domain.")
@click.option("--limit", type=COUNT, default=50, show_default=True, help="At most this many.")
@json_option
@click.pass_context
def trajectories(ctx: click.Context, domain: str | None, limit: int, json_: bool) -> None:
    """List stored trajectories, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    with ctx.obj.memory() as mem:
        found = mem.trajectories.list(domain=domain, limit=limit)
    if json_:
        emit_json([t.model_dump(mode="json") for t in found])
    elif not found:
        nothing("trajectories")
    else:
        table(("id", "origin", "ok", "steps", "verified", "goal", "saved (UTC)"),
              ((t.id, t.origin, "yes" if t.success else "no", len(t.steps), f"{t.verification_rate:.0%}",
                short(t.goal, 60), when(t.created_at)) for t in found), no_wrap=("id", "origin"))


@trajectories.command("show")
@click.argument("trajectory_id")
@json_option
@click.pass_obj
def trajectories_show(settings: Settings, trajectory_id: str, json_: bool) -> None:
    """Show one trajectory, as the reference text a run would get."""
    with settings.memory() as mem:
        found = mem.trajectories.get(trajectory_id)
    if json_:
        emit_json(found.model_dump(mode="json"))
        return
    click.echo(f"{found.id} on {found.origin} ({'successful' if found.success else 'failed'}, "
               f"{found.duration_ms / 1000:.1f}s, saved {when(found.created_at)} UTC)")
    from ..trajectories.store import TrajectoryStore

    click.echo(TrajectoryStore.format_reference(found))


@trajectories.command("match")
@click.argument("goal")
@click.option("--url", required=True, help="The page the run would start on.")
@click.option("--trace-scoring", is_flag=True, help="Rank by similarity, recency, speed and verification.")
@click.option("--semantic", type=click.Choice(["wordllama", "glove"]), is_flag=False, flag_value="wordllama",
              help="Also compare the goals' meaning, with WordLlama (the default; needs webmem[semantic]) or GloVe "
                   "(needs webmem[glove]).")
@click.option("--limit", type=COUNT, help=f"Show the closest N candidates.  [default: {DEFAULT_MATCH_LIMIT}]")
@click.option("--all", "every", is_flag=True,
              help="Score and explain every candidate (slower on a site of many runs).")
@json_option
@click.pass_obj
def trajectories_match(
    settings: Settings, goal: str, url: str, trace_scoring: bool, semantic: str | None, limit: int | None, every: bool,
    json_: bool,
) -> None:
    """Show how a goal matches the trajectories of a site: the closest candidates, their scores, the verdict."""
    if every and limit is not None:
        raise click.UsageError("give --limit or --all, not both")
    from ..core.embeddings import GloveEmbedder, WordLlamaEmbedder
    from ..core.urls import origin_of

    embedders = {"wordllama": WordLlamaEmbedder, "glove": GloveEmbedder}
    options = {"goal_embedder": embedders[semantic]()} if semantic else {}
    with settings.memory(**options) as mem:
        report = mem.trajectories.match(goal, origin=origin_of(url), trace_scoring=trace_scoring or None,
                                        limit=None if every else limit or DEFAULT_MATCH_LIMIT)
    if json_:
        emit_json(report.model_dump(mode="json"))
        return
    if report.candidates:
        shown = f"the closest {len(report.candidates)} of {report.scored}" if len(report.candidates) < report.scored \
            else f"{report.scored}"
        table(("trajectory", "goal", "similarity", "score", "eligible", "why"),
              ((c.trajectory.id, c.trajectory.goal, f"{c.similarity:.2f}", f"{c.score:.3f}",
                "yes" if c.eligible else "no", c.why if c.eligible else f"{c.reason}; {c.why}")
               for c in report.candidates),
              title=f"Candidates on {report.origin}: {shown} (threshold {report.threshold:.2f})",
              no_wrap=("trajectory",))
    if report.set_aside:
        click.echo("Set aside (not compared): " + "; ".join(f'"{part}"' for part in report.set_aside))
    if report.values_read:
        click.echo("Values read: " + ", ".join(f'"{value.written}" as {value.kind} {value.value}'
                                                 for value in report.values_read))
    click.echo(report.reason)


@trajectories.command("acts")
@click.option("--origin", "--url", "origin", required=True, help="The site (or a page of it).")
@click.option("--relearn", is_flag=True, help="Learn from all the site's recordings first (those saved before webmem "
                                             "learned acts).")
@json_option
@click.pass_obj
def trajectories_acts(settings: Settings, origin: str, relearn: bool, json_: bool) -> None:
    """Show the words a site's recordings taught to name one act there: two goals a word or short phrase apart
    whose runs did the same steps. A later goal in one is read in the other."""
    with settings.memory() as mem:
        found = mem.trajectories.learned_acts(origin, relearn=relearn)
    if json_:
        emit_json([act.model_dump(mode="json") for act in found])
    elif not found:
        nothing("learned acts")
    else:
        table(("one act", "taught by", "and", "learned (UTC)"),
              ((" = ".join(f'"{word}"' for word in act.words), act.trajectory_id, act.other_id, when(act.learned_at))
               for act in found), no_wrap=("taught by", "and"))


@trajectories.command("options")
@click.option("--origin", "--url", "origin", required=True, help="The site (or a page of it).")
@json_option
@click.pass_obj
def trajectories_options(settings: Settings, origin: str, json_: bool) -> None:
    """Show the options a site's recordings showed to be values of a task: the other options of a field where a
    run chose the value its goal named. A later goal naming one is read with that value."""
    with settings.memory() as mem:
        found = mem.trajectories.field_options(origin)
    if json_:
        emit_json([option.model_dump(mode="json") for option in found])
    elif not found:
        nothing("field options")
    else:
        table(("option", "read as", "field", "of the task", "shown by", "learned (UTC)"),
              ((option.option, option.value, option.field, option.task, option.trajectory_id, when(option.learned_at))
               for option in found), no_wrap=("shown by",))


@trajectories.command("explain")
@click.argument("goal")
@click.option("--origin", "--url", "origin", required=True, help="The site (or a page of it) the run would start on.")
@click.option("--limit", type=COUNT, default=5, show_default=True,
              help="Explain the closest N stored goals besides those that fit.")
@json_option
@click.pass_obj
def trajectories_explain(settings: Settings, goal: str, origin: str, limit: int, json_: bool) -> None:
    """Show whether a goal would be replayed on a site: how it binds each close recorded task's goal
    template, or why it does not (the fixed text that differs, a value of another kind, a value the
    goal does not give), and the verdict."""
    with settings.memory() as mem:
        lookup = mem.trajectories.explain_replay(goal, origin, limit=limit)
    if json_:
        emit_json(lookup.to_dict())
        return
    if lookup.candidates:
        table(("trajectory", "recorded goal", "template", "fits", "how it binds, or why not"),
              ((c.trajectory_id, c.goal, c.template or "(none)", "yes" if c.fits else "no", c.reason)
               for c in lookup.candidates),
              title=f"Recorded tasks on {lookup.origin}", no_wrap=("trajectory",))
    if lookup.plan is not None:
        click.echo(f"Replays {lookup.plan.trajectory_id} ({len(lookup.plan.steps)} steps).")
    else:
        click.echo(f"No replay: {lookup.reason}")


@click.group("lessons", invoke_without_command=True, subcommand_metavar="[COMMAND] [ARGS]...")
@click.option("--tier", type=click.Choice(["1", "2"]), help="Only tier 1 (always shown) or tier 2 (on demand).")
@click.option("--domain", help="Only lessons about this site.")
@json_option
@click.pass_context
def lessons(ctx: click.Context, tier: str | None, domain: str | None, json_: bool) -> None:
    """List lessons: tier 1 first, most used first."""
    if ctx.invoked_subcommand is not None:
        return
    with ctx.obj.memory() as mem:
        found = [item for item in mem.lessons.list(domain=domain) if tier is None or item.tier == int(tier)]
    if json_:
        emit_json([{**item.model_dump(mode="json"), "tier": item.tier, "demoted": item.demoted} for item in found])
    elif not found:
        nothing("lessons")
    else:
        table(("tier", "category", "uses", "helpful", "command", "pattern", "site", "lesson"),
              ((item.tier, item.category + (" (built-in)" if item.source == "seed" else "")
                + (" (demoted)" if item.demoted else ""), item.use_count,
                f"{item.helpful_count}/{item.unhelpful_count}", item.failed_command, short(item.error_pattern, 30),
                item.domain, short(item.lesson, 80)) for item in found))


@lessons.command("recall")
@click.option("--command", "command_name", help="The command that failed.")
@click.option("--error", help="Its error message.")
@click.option("--domain", help="The site (alone: the tips for entering it).")
@json_option
@click.pass_obj
def lessons_recall(settings: Settings, command_name: str | None, error: str | None, domain: str | None,
                   json_: bool) -> None:
    """Show what a run would be told on an error (--command and --error) or on entering a site (--domain).

    Nothing is counted: this only looks.
    """
    if (command_name is None) != (error is None) or (command_name is None and domain is None):
        raise click.UsageError("give --command and --error together, or --domain")
    with settings.memory() as mem:
        if command_name is not None and error is not None:
            found = mem.lessons.peek_error(command_name, error, domain=domain)
        else:
            found = mem.lessons.peek_domain(domain or "")
    if json_:
        emit_json([item.model_dump(mode="json") for item in found])
    elif not found:
        nothing("matching lessons")
    else:
        for item in found:
            click.echo(f"- {item.lesson}")


@click.command("episodes")
@click.argument("session_id")
@click.option("--format", "output", type=click.Choice(["table", "prompt", "csv"]), default="table",
              show_default=True, help="How to show the entries.")
@click.option("--raw-csv", is_flag=True, help="CSV: cells as they are (by default one that would start a "
                                              "spreadsheet formula gets a leading ').")
@json_option
@click.pass_obj
def episodes(settings: Settings, session_id: str, output: str, raw_csv: bool, json_: bool) -> None:
    """Show the graded steps of an episode session, by rep."""
    with settings.memory() as mem:
        found = mem.episodes.load_all_memories_for_session(session_id)
    if json_:
        emit_json([entry.model_dump(mode="json", exclude={"internal_state_embedding"}) for entry in found])
    elif output != "table":
        from ..episodes.export import export_memories

        click.echo(export_memories(found, output, raw_csv=raw_csv), nl=False)
    elif not found:
        nothing("episode entries")
    else:
        table(("rep", "step", "action", "element", "outcome", "reason", "correction"),
              ((e.rep, e.step_num, short(e.action, 40), short(e.action_element_text, 30), e.outcome,
                short(e.outcome_reason, 50), short(e.correction, 50)) for e in found))


@click.command("context")
@click.option("--goal", required=True, help="The goal of the run.")
@click.option("--url", required=True, help="The page it would be on.")
@click.option("--budget", type=COUNT, default=2000, show_default=True, help="Token budget.")
@json_option
@click.pass_obj
def context(settings: Settings, goal: str, url: str, budget: int, json_: bool) -> None:
    """Show the context a new run would get, and the report of what fit the budget."""
    with settings.memory() as mem:
        pack = mem.preview_context(goal=goal, url=url, budget_tokens=budget)
    if json_:
        emit_json(pack.to_dict())
        return
    screen = console()
    screen.print(str(pack) or "(empty: memory has nothing for this goal and page yet)", markup=False, highlight=False)
    screen.print()
    table(("part", "priority", "status", "tokens", "of"),
          ((p.name, p.priority, p.status, p.tokens, p.full_tokens) for p in pack.report),
          title=f"{pack.tokens} of {pack.budget_tokens} tokens")


COMMANDS = [sessions, facts, selectors, trajectories, lessons, episodes, context]

"""``webmem prune``, ``stats``, ``doctor`` and ``migrate``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .output import emit_json, json_option, table

if TYPE_CHECKING:
    from . import Settings


@click.command("prune")
@click.option("--dry-run", is_flag=True, help="Show what would be removed, remove nothing.")
@json_option
@click.pass_obj
def prune(settings: Settings, dry_run: bool, json_: bool) -> None:
    """Remove expired trajectories, stale lessons, weak facts and the weakest patterns."""
    with settings.memory() as mem:
        removed = mem.prune(dry_run=dry_run)
    if json_:
        emit_json({"dry_run": dry_run, "removed": removed})
        return
    table(("kind", "would be removed" if dry_run else "removed"), removed.items())


@click.command("stats")
@json_option
@click.pass_obj
def stats(settings: Settings, json_: bool) -> None:
    """Count records per kind and domain, and show the database's size."""
    with settings.memory() as mem:
        found = mem.stats()
    if json_:
        emit_json(found)
        return
    rows = []
    for kind, counted in found["counts"].items():
        rows.append((kind, "(all)", counted["total"]))
        rows += [(kind, domain, count) for domain, count in sorted(counted.get("by_domain", {}).items())]
    table(("kind", "domain", "records"), rows, title=f"namespace {found['namespace']} in {found['location']}")
    click.echo(f"database {found['database_bytes']} bytes, WAL {found['wal_bytes']} bytes")


@click.command("doctor")
@json_option
@click.pass_obj
def doctor(settings: Settings, json_: bool) -> None:
    """Check integrity, migrations, WAL state and orphaned records; exit 1 when something is wrong."""
    with settings.memory() as mem:
        report = mem.doctor()
    if json_:
        emit_json(report)
    else:
        click.echo(f"integrity: {report['integrity']}")
        click.echo(f"journal mode: {report['journal_mode']} (WAL file {report['wal_bytes']} bytes)")
        click.echo(f"migrations: {len(report['migrations']) - len(report['pending_migrations'])} applied, "
                   f"{len(report['pending_migrations'])} pending")
        for label, count in report["orphans"].items():
            click.echo(f"{label}: {count}")
        click.echo(f"namespaces: {', '.join(report['namespaces']) or '(none)'}")
        if report["abandoned_runs"]:
            click.echo(f"abandoned runs (running, not updated for a while): {len(report['abandoned_runs'])}; "
                       "close them with `webmem runs close RUN_ID`")
        click.echo("ok" if report["ok"] else "problems found")
    if not report["ok"]:
        raise SystemExit(1)


@click.command("migrate")
@click.option("--list", "list_only", is_flag=True, help="List the migrations and when each was applied.")
@json_option
@click.pass_obj
def migrate(settings: Settings, list_only: bool, json_: bool) -> None:
    """Bring the database's schema up to date (opening it does), or list the migrations."""
    with settings.memory(create=not list_only) as mem:
        states = mem.migrations()
    rows = [{"name": s.name, "applied_at": s.applied_at.isoformat() if s.applied_at else None} for s in states]
    if json_:
        emit_json(rows)
    elif list_only:
        table(("migration", "applied at (UTC)"), ((row["name"], row["applied_at"] or "pending") for row in rows))
    else:
        click.echo(f"schema up to date: {len(rows)} migrations applied")


COMMANDS = [prune, stats, doctor, migrate]

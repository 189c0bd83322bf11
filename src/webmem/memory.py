"""The facade: open a memory, start runs, reach its components."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from .core.embeddings import Embedder, check_embedder
from .core.errors import InvalidInput, MemoryDisabled, StoreCorrupt, WebmemError
from .core.events import EVENTS_FILE, EventCallback, EventLog
from .core.locations import (  # noqa: F401 (DEFAULT_DIR, ENV_URL and DATABASE_SCHEMES are kept importable from here)
    DATABASE_SCHEMES,
    DEFAULT_DIR,
    ENV_DIR,
    ENV_URL,
    database_url,
    resolve_directory,
)
from .core.models import Namespace, validated_value
from .core.pack import ContextPack
from .core.redaction import SecretRegistry
from .core.tokens import TokenCounter
from .core.urls import check_url
from .episodes.store import EpisodeStore
from .forgetting import Forgetting
from .knowledge import AppKnowledge
from .lessons.store import LessonStore
from .outcomes import AdviceOutcomes
from .run import Run
from .runs import RunRegistry, new_manifest
from .scripts import script_of
from .selectors import SelectorCache
from .site_changes import SiteChanges
from .skills import Skills
from .store import MigrationState, Store, apply_migrations, migration_states
from .store import inspect as inspect_store
from .store.redacting import redact_parameters
from .store.scope import Scope
from .trajectories.store import TrajectoryStore
from .working.options import WorkingOptions
from .working.patterns import PatternStore

DEFAULT_NAMESPACE = "default"
T = TypeVar("T")


class _OpenedOnly(type):
    """Memories come from ``Memory.open``, which checks its options and brings the schema up to date."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{cls.__name__} objects come from {cls.__name__}.open(location, ...)")


class Memory(metaclass=_OpenedOnly):
    """A persistent memory for browser agents: one SQLite file per directory, or a PostgreSQL database.

    Get one with ``Memory.open(location, ...)`` (see :meth:`open` for every option). Then
    ``start_run`` gives a :class:`~webmem.Run` whose ``context()``, ``record_step()`` and
    ``finish()`` are the agent's loop; the components (``runs``, ``trajectories``, ``knowledge``,
    ``selectors``, ``lessons``, ``episodes``, ``patterns``) read and manage what was learned, and
    ``forget`` deletes what should not have been.
    Everything a memory reads and writes belongs to its namespace. Use it as a context manager,
    or call ``close()``.
    """

    def _setup(
        self,
        *,
        directory: Path | None,
        namespace: str,
        enabled: bool,
        store: Store | None,
        secrets: SecretRegistry,
        events: EventLog,
        trace_scoring: bool,
        trace_ttl_days: float,
        similarity_threshold: float,
        embedder: Embedder | None = None,
        goal_embedder: Embedder | None = None,
        token_counter: TokenCounter | None = None,
        seed_lessons: bool | None = True,
        working_options: WorkingOptions | None = None,
    ) -> None:
        """Internal: ``open`` has checked every option."""
        self.directory = directory
        self.working_options = working_options or WorkingOptions()
        self.token_counter = token_counter or TokenCounter()
        self.namespace = namespace
        self.enabled = enabled
        self.secrets = secrets
        self.events = events
        self._store = store
        self.trace_scoring = trace_scoring
        self.trace_ttl_days = trace_ttl_days
        self.similarity_threshold = similarity_threshold
        self._scope: Scope | None = None
        self._runs: RunRegistry | None = None
        self._trajectories: TrajectoryStore | None = None
        self._knowledge: AppKnowledge | None = None
        self._selectors: SelectorCache | None = None
        self._lessons: LessonStore | None = None
        self._episodes: EpisodeStore | None = None
        self._patterns: PatternStore | None = None
        self._forgetting: Forgetting | None = None
        self._outcomes: AdviceOutcomes | None = None
        self._site_changes: SiteChanges | None = None
        if store is not None:
            scope = Scope(store=store, namespace=namespace, events=events, secrets=secrets)
            self._scope = scope
            self._runs = RunRegistry(scope)
            outcomes = AdviceOutcomes(scope)
            self._outcomes = outcomes
            self._knowledge = AppKnowledge(scope)
            self._selectors = SelectorCache(scope)
            site_changes = SiteChanges(scope, self._knowledge, self._selectors)
            self._site_changes = site_changes
            self._trajectories = TrajectoryStore(
                scope, ttl_days=trace_ttl_days, similarity_threshold=similarity_threshold,
                trace_scoring=trace_scoring, goal_embedder=goal_embedder,
                demoted=lambda conn, ids: outcomes.held_back(conn, "reference", ids, demoted_too=True),
                changed_pages=site_changes.pages,
            )
            self._lessons = LessonStore(
                scope, seed_lessons=seed_lessons, withheld=lambda conn, ids: outcomes.held_back(conn, "lesson", ids)
            )
            self._episodes = EpisodeStore(scope, embedder=embedder)
            self._patterns = PatternStore(scope, max_patterns=self.working_options.long_term_max_patterns)
            self._forgetting = Forgetting(scope, self._trajectories)

    @classmethod
    def open(
        cls,
        location: str | os.PathLike[str] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        enabled: bool = True,
        trace_scoring: bool = False,
        trace_ttl_days: float = 30,
        similarity_threshold: float = 0.5,
        on_event: EventCallback | None = None,
        secrets: Mapping[str, str] | Iterable[str] | None = None,
        embedder: Embedder | None = None,
        goal_embedder: Embedder | None = None,
        tokenizer: Callable[[str], int | Sequence[Any]] | None = None,
        local_dir: str | os.PathLike[str] | None = None,
        prune_lessons: bool = True,
        seed_lessons: bool | None = True,
        working_memory: WorkingOptions | Mapping[str, Any] | None = None,
    ) -> Memory:
        """Open the memory at ``location``, creating it if needed, and bring its schema up to date.

        Args:
            location: a directory (SQLite in ``<dir>/memory.db``, created if missing) or a
                ``postgresql://`` URL (needs ``webmem[postgres]``). Default: ``$WEBMEM_URL`` if
                set, else the directory ``$WEBMEM_DIR``, else ``.agent-memory`` in the working directory.
            namespace: the partition everything is read from and written to (letters, digits,
                ``.``, ``_``, ``-``). One memory can hold many agents or benchmark scenarios apart.
            enabled: with False nothing is read, written or created; runs get an empty context
                (for baseline runs with the same code).
            trace_scoring: rank matching trajectories by recency, speed and verification as well
                as by similarity to the goal (default: similarity alone).
            trace_ttl_days: trajectories older than this are no longer matched and go at
                ``prune()`` (default 30).
            similarity_threshold: how close (0-1) a stored trajectory's goal must be to a new goal
                to be given as its reference (default 0.5).
            on_event: called with each event dict (run started, step recorded, lesson recalled...)
                after it is committed; the same events go to ``<dir>/events.jsonl``.
            secrets: values (or name -> value) never to store: each becomes ``{name}`` wherever it
                would be written, in every encoding a page or server gives it.
            embedder: how episode memories compare agents' internal states (default: a hashing
                embedder with no model; ``SentenceTransformerEmbedder`` for a real one).
            goal_embedder: recognises a reworded goal when too few of its words match a stored
                one (default: None, words alone). ``WordLlamaEmbedder()`` (``webmem[semantic]``)
                is local and small; goals are embedded when saved and again when the embedder's
                name changes.
            tokenizer: text -> token count (or tokens), replacing the built-in estimate when
                contexts are fitted to their budget.
            local_dir: with a PostgreSQL URL, the directory for the event log (default
                ``$WEBMEM_DIR`` if set, else no file).
            prune_lessons: prune stale lessons on open, as the lesson agent does on load; tools
                that only look (or prune with a dry run) pass False.
            seed_lessons: True (default) adds three built-in lessons (general browsing advice,
                labelled as built-in wherever shown) the first time a namespace is opened; False
                adds none and hides any added before; None adds none and shows those already
                there (what tools that only look use: they never create or seed a namespace).
            working_memory: the options of every run's working memory, by the names of seed 002's
                ``AgentMemory``: ``context_window_budget`` (64,000), ``short_term_max_entries`` (50),
                ``long_term_max_patterns`` (100), ``max_extraction_budget_percent`` (0.20),
                ``max_extraction_tokens`` (4,000), ``max_single_extraction_chars`` (8,000).

        Raises:
            InvalidInput: an option is of the wrong type or out of range.
            StoreError: the database cannot be opened (``StoreCorrupt``, ``StoreLocked`` or
                ``SchemaTooNew`` say why).
        """
        counter = TokenCounter(tokenizer=tokenizer)
        working_options = WorkingOptions.of(working_memory)
        url = database_url(location)
        if url is not None:
            chosen = local_dir if local_dir is not None else os.environ.get(ENV_DIR) or None
            directory = resolve_directory(chosen) if chosen is not None else None
        else:
            directory = resolve_directory(location)
        validated_namespace = _check_namespace(namespace)
        for name, flag in (("enabled", enabled), ("trace_scoring", trace_scoring), ("prune_lessons", prune_lessons)):
            if not isinstance(flag, bool):
                raise InvalidInput(f"{name}: expected True or False, got {flag!r}")
        if seed_lessons is not None and not isinstance(seed_lessons, bool):
            raise InvalidInput(f"seed_lessons: expected True, False or None, got {seed_lessons!r}")
        ttl = _check_number("trace_ttl_days", trace_ttl_days, low=0, low_inclusive=False)
        threshold = _check_number("similarity_threshold", similarity_threshold, low=0, high=1)
        if on_event is not None and not callable(on_event):
            raise InvalidInput("on_event: expected a callable that takes one event dict")
        for field, option in (("embedder", embedder), ("goal_embedder", goal_embedder)):
            if option is not None:
                check_embedder(option, field=field)  # before the store is opened, so a refusal leaves nothing open
        registry = SecretRegistry(secrets)
        store = None
        log_path = None
        if enabled:
            if directory is not None:
                if directory.exists() and not directory.is_dir():
                    raise InvalidInput(f"location: {directory} exists and is not a directory")
                directory.mkdir(parents=True, exist_ok=True)
                log_path = directory / EVENTS_FILE
            store = Store.open_postgres(url, namespace=validated_namespace) if url else Store.open_sqlite(directory)
            redact_parameters(store.engine, registry)  # the one point every stored text passes
            try:
                apply_migrations(store)
            except _UNREADABLE as exc:
                store.close()
                if isinstance(exc, WebmemError):
                    raise
                raise _damaged(store.location, exc) from exc
            except BaseException:
                store.close()  # a database we refuse to open is not left open
                raise
        events = EventLog(log_path, namespace=validated_namespace, secrets=registry, callback=on_event)
        memory = cls.__new__(cls)
        memory._setup(
            directory=directory, namespace=validated_namespace, enabled=enabled, store=store, secrets=registry,
            events=events, trace_scoring=trace_scoring, trace_ttl_days=ttl, similarity_threshold=threshold,
            embedder=embedder, goal_embedder=goal_embedder, token_counter=counter, seed_lessons=seed_lessons,
            working_options=working_options,
        )
        if memory._lessons is not None and memory._trajectories is not None:
            try:
                memory._trajectories.index_legacy()
                memory._lessons.open(prune=prune_lessons)
            except _UNREADABLE as exc:
                location = memory.store.location
                memory.close()
                if isinstance(exc, WebmemError):
                    raise
                raise _damaged(location, exc) from exc
            except BaseException:
                memory.close()
                raise
        return memory

    @property
    def store(self) -> Store:
        """Internal: the database this memory reads and writes (``MemoryDisabled`` when disabled)."""
        return self._require(self._store)

    @property
    def scope(self) -> Scope:
        """Internal: the store, namespace, secrets and event log that components share."""
        return self._require(self._scope)

    @property
    def runs(self) -> RunRegistry:
        """The run registry: list, get, resume and fork runs, and their lineage."""
        return self._require(self._runs)

    @property
    def trajectories(self) -> TrajectoryStore:
        """Successful runs' steps: match a goal to them, replay them, list and prune them."""
        return self._require(self._trajectories)

    @property
    def knowledge(self) -> AppKnowledge:
        """Facts about each site with their confidence, and the session history of each site."""
        return self._require(self._knowledge)

    @property
    def selectors(self) -> SelectorCache:
        """Element identities (``button "Search"``) mapped to selectors that worked, per site."""
        return self._require(self._selectors)

    @property
    def lessons(self) -> LessonStore:
        """Lessons learned from failures: record, list, recall, rate, import and prune them."""
        return self._require(self._lessons)

    @property
    def episodes(self) -> EpisodeStore:
        """Graded steps across repetitions of a task, and the REPEAT/AVOID advice made from them."""
        return self._require(self._episodes)

    @property
    def patterns(self) -> PatternStore:
        """Action patterns learned per site from successful runs (shown under KNOWN PATTERNS)."""
        return self._require(self._patterns)

    @property
    def forget(self) -> Forgetting:
        """Delete a lesson, trajectory, fact, selector or session, or a run with what it produced
        (``mem.forget.run(run_id, dry_run=True)`` says what would go)."""
        return self._require(self._forgetting)

    @property
    def outcomes(self) -> AdviceOutcomes:
        """The outcome gate: how runs ended that were given each piece of advice or part of the context;
        advice whose followers keep failing is withheld, a part that lowers success on a site turned off."""
        return self._require(self._outcomes)

    @property
    def skills(self) -> Skills:
        """The sites' remembered tasks as skills: tools with typed parameters any agent may call, each one a goal
        template of a site, trusted by the replays that did new instances of it."""
        self._require(self._site_changes)
        return Skills(self)

    @property
    def site_changes(self) -> SiteChanges:
        """Pages that no longer have what memory remembers of them: recorded from replays that found a
        remembered target gone; what was remembered there before is not replayed until a run succeeds again."""
        return self._require(self._site_changes)

    def start_run(
        self,
        *,
        goal: str,
        start_url: str,
        session_id: str | None = None,
        parent_run_id: str | None = None,
        model: str | None = None,
        episode: str | None = None,
    ) -> Run:
        """Register a new run (status running) and return its handle.

        With ``episode`` (a session id), the run's steps are also recorded as the next rep of
        that episode session, and from rep 2 on its context carries REPEAT/AVOID advice.
        """
        if not self.enabled:
            return Run(self, new_manifest(goal=goal, start_url=start_url, session_id=session_id, parent_run_id=parent_run_id, model=model))
        manifest = self.runs.start(
            goal=goal, start_url=start_url, session_id=session_id, parent_run_id=parent_run_id, model=model
        )
        return Run(self, manifest, episode=self.episodes.init_episode(episode) if episode is not None else None)

    def resume_run(self, run_id: str, *, goal: str | None = None) -> Run:
        """Start a run that continues ``run_id``: same session, starting where it ended."""
        scenario = self.runs.build_resume_scenario(run_id, goal)
        return self.start_run(**scenario.model_dump())

    def fork_run(self, run_id: str, *, goal: str) -> Run:
        """Start a run in a new session that branches off where ``run_id`` ended."""
        scenario = self.runs.build_fork_scenario(run_id, goal)
        return self.start_run(**scenario.model_dump())

    def get_run(self, run_id: str) -> Run:
        """A handle on an existing run, for example to continue recording after a restart."""
        return Run(self, self.runs.get(run_id))

    def script(self, source_id: str, *, lang: str = "python") -> str:
        """A successful run (by its run id, its trajectory's id, or the id of a skill: its newest recording) as a
        runnable Playwright script in ``lang`` (``python``: sync Playwright with a command line; ``typescript``: a
        ``@playwright/test`` spec)."""
        if isinstance(source_id, str) and source_id.startswith("skill_"):
            source_id = self.skills.get(source_id).trajectory_id
        return script_of(self, source_id, lang=lang)

    def preview_context(self, *, goal: str, url: str, budget_tokens: int = 2000) -> ContextPack:
        """The context a new run with this goal would get on this page, without recording anything."""
        run = Run(self, new_manifest(goal=goal, start_url=check_url(url, field="url")), preview=self.enabled)
        return run.context(url=url, budget_tokens=budget_tokens)

    def prune(self, *, dry_run: bool = False) -> dict[str, int]:
        """Remove expired trajectories, stale lessons, weak facts and the weakest patterns.

        With ``dry_run`` nothing changes: the counts say what would go.
        """
        removed: dict[str, int] = {}
        with self.store.write(dry_run=dry_run):
            removed["trajectories"] = self.trajectories.prune()
            removed["lessons"] = self.lessons.prune()
            removed["facts"] = self.knowledge.prune()
            removed["patterns"] = self.patterns.prune()
        return removed

    def stats(self) -> dict[str, Any]:
        """Record counts per kind (and per domain), and the database's size."""
        with self.store.read() as conn:
            counted = inspect_store.counts(conn, self.namespace)
            health = inspect_store.health(conn, self.store.location)
        return {"namespace": self.namespace, "location": self.store.location, "counts": counted,
                "database_bytes": health["database_bytes"], "wal_bytes": health["wal_bytes"]}

    def doctor(self) -> dict[str, Any]:
        """Integrity check, migrations, WAL state, orphaned records; ``ok`` says whether all is well. Runs
        abandoned in this namespace (running, not updated for long) are listed (up to 100), not counted as wrong."""
        with self.store.read() as conn:
            health = inspect_store.health(conn, self.store.location)
            orphaned = inspect_store.orphans(conn, self.namespace)
            states = migration_states(conn)
            names = inspect_store.namespaces(conn)
        pending = [state.name for state in states if not state.applied]
        abandoned = [run.run_id for run in self.runs.abandoned(limit=100)]
        return {
            "ok": health["integrity"] == "ok" and not pending and health["journal_mode"] == "wal",
            "integrity": health["integrity"], "journal_mode": health["journal_mode"],
            "database_bytes": health["database_bytes"], "wal_bytes": health["wal_bytes"],
            "migrations": [{"name": s.name, "applied_at": s.applied_at.isoformat() if s.applied_at else None}
                           for s in states],
            "pending_migrations": pending, "orphans": orphaned, "namespaces": names, "abandoned_runs": abandoned,
        }

    def migrations(self) -> list[MigrationState]:
        """Every known migration and when it was applied."""
        with self.store.read() as conn:
            return migration_states(conn)

    def close(self) -> None:
        """Close the database connections and the event log; the memory can no longer be used (closing twice
        is fine)."""
        if self._store is not None:
            self._store.close()
        self.events.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "" if self.enabled else ", enabled=False"
        return f"Memory({str(self.directory)!r}, namespace={self.namespace!r}{state})"

    def _require(self, component: T | None) -> T:
        if component is None:
            raise MemoryDisabled(
                "this memory was opened with enabled=False: it neither reads nor writes; "
                "open it with enabled=True to use its components"
            )
        return component


def _check_namespace(namespace: object) -> str:
    return validated_value(Namespace, namespace, field="namespace")


def _check_number(
    name: str, value: object, *, low: float, high: float | None = None, low_inclusive: bool = True
) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput(f"{name}: expected a number, got {value!r}")
    if value < low or (value == low and not low_inclusive) or (high is not None and value > high):
        bounds = f"{'>=' if low_inclusive else '>'} {low}" + (f" and <= {high}" if high is not None else "")
        raise InvalidInput(f"{name}: must be {bounds}, got {value!r}")
    return float(value)


#: What reading a damaged file's records raises, besides webmem's own errors (a date that is no date,
#: text that is not UTF-8): such a file is reported as damaged.
_UNREADABLE = (ValueError, TypeError, UnicodeDecodeError, LookupError)


def _damaged(location: str, exc: BaseException) -> StoreCorrupt:
    return StoreCorrupt(f"{location}: its records cannot be read ({type(exc).__name__}: {exc}); the file is damaged")

"""The run registry: one manifest per run, its recorded steps, and resume/fork lineage."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from sqlalchemy import (
    JSON,
    Connection,
    Integer,
    Text,
    and_,
    bindparam,
    case,
    func,
    select,
    update,
)

from ..core.clock import new_id, utcnow
from ..core.elements import compact_signals, stored_signals
from ..core.errors import InvalidInput, RunClosed, RunNotFound
from ..core.models import (
    RecordedRun,
    ReplayReport,
    RunManifest,
    Scenario,
    Step,
    positive_int,
    validated,
)
from ..core.processes import has_ended, this_process
from ..core.records import stored_mapping
from ..core.urls import check_domain, check_url, domain_of
from ..store.engine import retried
from ..store.prepared import Prepared, Read
from ..store.schema import run_steps, runs
from ..store.scope import Scope
from ..store.statements import lock_rows, new_keys
from .liveness import ABANDONED, abandoned_after, shown_status

RUN_STATUSES = ("running", "completed", "failed")
_MANIFEST_COLUMNS = [column for column in runs.c if column.name not in ("namespace", "owner")]
_STEP_COLUMNS = [column for column in run_steps.c if column.name not in ("namespace", "run_id", "seq", "recorded_at")]
_STEP_NAMES = [column.name for column in _STEP_COLUMNS]
_SIGNALS = frozenset({"element"})  # dumped apart, compact
_RUN_KEY = (runs.c.namespace == bindparam("ns"), runs.c.run_id == bindparam("run_id"))
_STEP_KEY = (run_steps.c.namespace == bindparam("ns"), run_steps.c.run_id == bindparam("run_id"))
ADVANCE_RUN = update(runs).where(*_RUN_KEY, runs.c.status == "running").values(
    updated_at=bindparam("now"), turn_count=runs.c.turn_count + 1, owner=bindparam("owner", type_=Text),
    current_url=func.coalesce(bindparam("url", type_=Text), runs.c.current_url),
)
_ADVANCE_RUN = Prepared(ADVANCE_RUN)
_NEXT_SEQ = select(func.coalesce(func.max(run_steps.c.seq), 0) + 1).where(*_STEP_KEY).scalar_subquery()


def appending_step(source: Any = None) -> Any:
    """The step after the run's last, in one statement (its columns as parameters; one row per row of ``source``)."""
    values = select(*(_NEXT_SEQ if column.name == "seq" else bindparam(column.name, type_=column.type)
                      for column in run_steps.c))
    return run_steps.insert().from_select([column.name for column in run_steps.c],
                                          values if source is None else values.select_from(source))


_APPEND_STEP = Prepared(appending_step().returning(run_steps.c.seq))

_RUN_EXISTS = Prepared(select(runs.c.run_id).where(*_RUN_KEY))
_MANIFEST = Prepared(select(*_MANIFEST_COLUMNS).where(*_RUN_KEY))
_INSERT_RUN = Prepared(runs.insert())  # every column, each a parameter of its own name
_MANIFEST_NAMES = [column.name for column in _MANIFEST_COLUMNS]
_STEP_COUNT = select(func.count()).where(run_steps.c.namespace == runs.c.namespace,
                                         run_steps.c.run_id == runs.c.run_id).scalar_subquery()
_COMPLETE = {with_replay: Prepared(update(runs).where(*_RUN_KEY, runs.c.status == "running").values(
    status=bindparam("status"), success=bindparam("success"), summary=bindparam("summary"),
    result=bindparam("result"), reason=bindparam("reason"), completed_at=bindparam("completed_at"),
    updated_at=bindparam("updated_at"),
    final_url=func.coalesce(bindparam("final_url", type_=Text), runs.c.final_url, runs.c.current_url,
                            runs.c.start_url),
    turn_count=func.coalesce(bindparam("turn_count", type_=Integer),
                             case((runs.c.turn_count < _STEP_COUNT, _STEP_COUNT), else_=runs.c.turn_count)),
    **({"replay": bindparam("replay", type_=JSON)} if with_replay else {}),  # else NULL stays NULL, not JSON null
).returning(*_MANIFEST_COLUMNS)) for with_replay in (False, True)}
_INSERT_STEP = Prepared(run_steps.insert())  # every column, each a parameter of its own name
_STEPS_OF_RUN = Prepared(select(*_STEP_COLUMNS).where(*_STEP_KEY).order_by(run_steps.c.seq))


def redacted_report(report: ReplayReport, redact: Callable[[str | None], str | None]) -> ReplayReport:
    """The replay report with every text that came from a page or an error passed through ``redact``."""
    steps = [step.model_copy(update={"target": redact(step.target), "reason": redact(step.reason),
                                     "url": redact(step.url)}) for step in report.steps]
    return report.model_copy(update={"reason": redact(report.reason), "steps": steps})


class RunRegistry:
    """Start, update, complete, list and chain runs within one namespace."""

    def __init__(self, scope: Scope) -> None:
        self._scope = scope
        self._ns = scope.namespace

    @staticmethod
    def generate_run_id() -> str:
        """A new, time-ordered run id."""
        return new_id("run")

    @retried
    def start(
        self,
        *,
        goal: str,
        start_url: str,
        session_id: str | None = None,
        parent_run_id: str | None = None,
        run_id: str | None = None,
        model: str | None = None,
    ) -> RunManifest:
        """Register a run as running (``Memory.start_run`` also gives its handle: use that)."""
        manifest = new_manifest(
            goal=goal, start_url=start_url, session_id=session_id, parent_run_id=parent_run_id, run_id=run_id,
            model=model, redact=self._scope.redact,
        )
        checked = parent_run_id is not None or run_id is not None  # else the insert is the whole write
        with self._scope.store.write() if checked else self._scope.store.write_alone() as conn:
            if parent_run_id is not None:
                self._fetch(conn, parent_run_id, field="parent_run_id")
            if run_id is not None and _RUN_EXISTS.first(conn, {"ns": self._ns, "run_id": run_id}):
                raise InvalidInput(f"run_id: a run {manifest.run_id!r} already exists")
            _INSERT_RUN.execute(conn, {"namespace": self._ns, **manifest.model_dump(), "owner": this_process()}).close()
        self._scope.emit(
            "run_started", run_id=manifest.run_id, goal=manifest.goal, domain=manifest.domain,
            session_id=manifest.session_id, parent_run_id=manifest.parent_run_id,
        )
        return manifest

    def import_manifest(self, manifest: RunManifest) -> bool:
        """Store a manifest as it is (timestamps kept); False when a run with its id is already here."""
        return self.import_manifests([manifest])[0]

    def import_manifests(self, manifests: Sequence[RunManifest]) -> list[bool]:
        """Store manifests as they are (timestamps kept) in one transaction and few statements, with their
        steps when they are :class:`RecordedRun` records; for each, False when a run with its id is already
        here (or came earlier in ``manifests``)."""
        if isinstance(manifests, RunManifest) or not all(isinstance(item, RunManifest) for item in manifests):
            raise InvalidInput("manifest: expected a webmem.RunManifest")
        redact = self._scope.redact
        redacted = [manifest.model_copy(update={
            name: redact(getattr(manifest, name))
            for name in ("goal", "start_url", "final_url", "current_url", "summary", "result", "reason")
        }) for manifest in manifests]
        with self._scope.store.write() as conn:
            added = new_keys(conn, runs.c.run_id, runs.c.namespace == self._ns,
                               [manifest.run_id for manifest in redacted])
            fresh = [manifest for manifest, new in zip(redacted, added) if new]
            _INSERT_RUN.execute_many(conn, [{"namespace": self._ns, **manifest.model_dump(exclude={"steps"}),
                                             "owner": None} for manifest in fresh])
            _INSERT_STEP.execute_many(conn, [
                {**self._imported_step(step), "namespace": self._ns, "run_id": manifest.run_id, "seq": seq,
                 "recorded_at": manifest.updated_at}
                for manifest in fresh if isinstance(manifest, RecordedRun)
                for seq, step in enumerate(manifest.steps, start=1)
            ])
        return added

    def _imported_step(self, step: Step) -> dict[str, Any]:
        """A step as stored: a value typed into a password field becomes its placeholder (the statement
        redacts registered secrets in every text)."""
        value = self._scope.secrets.redact_typed_value(step.value, target=step.target, selector=step.selector,
                                                       secret=False)
        return {**step.model_dump(exclude=_SIGNALS), "element": compact_signals(step.element), "value": value}

    def get(self, run_id: str) -> RunManifest:
        """The manifest of ``run_id``; ``RunNotFound`` when the namespace has no such run."""
        with self._scope.store.read() as conn:
            return self._fetch(conn, run_id)

    def list(
        self,
        *,
        domain: str | None = None,
        session_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> list[RunManifest]:
        """Runs newest first, filtered by any of domain, session id and status: ``running`` are the runs that
        someone may still finish, ``abandoned`` the running ones nobody will (:meth:`abandoned`)."""
        query = select(*_MANIFEST_COLUMNS, runs.c.owner).where(runs.c.namespace == self._ns)
        if domain is not None:
            query = query.where(runs.c.domain == check_domain(domain))
        if session_id is not None:
            query = query.where(runs.c.session_id == _text_filter(session_id, "session_id"))
        if status is not None and status not in (*RUN_STATUSES, ABANDONED):
            raise InvalidInput(f"status: {status!r} is not one of {', '.join((*RUN_STATUSES, ABANDONED))}")
        if status is not None:
            query = query.where(runs.c.status == ("running" if status == ABANDONED else status))
        query = query.order_by(runs.c.started_at.desc(), runs.c.run_id.desc())
        if status in ("running", ABANDONED):  # whether a process ended is known only once its row is read
            found = self._running(query, abandoned=status == ABANDONED)
            return found[:positive_int(limit, field="limit")] if limit is not None else found
        if limit is not None:
            query = query.limit(positive_int(limit, field="limit"))
        with self._scope.store.read() as conn:
            return [_manifest(dict(zip(_MANIFEST_NAMES, row))) for row in conn.execute(query)]

    def _running(self, query: Any, *, abandoned: bool) -> list[RunManifest]:
        cutoff = utcnow() - abandoned_after()
        with self._scope.store.read() as conn:
            rows = conn.execute(query).all()
        return [_manifest(dict(zip(_MANIFEST_NAMES, row))) for row in rows
                if (row.updated_at < cutoff or has_ended(row.owner)) == abandoned]

    def statuses(self, manifests: Sequence[RunManifest]) -> dict[str, str]:
        """Each run's status as people read it (``shown_status``), by run id: ``abandoned`` for a running run
        whose process ended or that nobody updated for :func:`abandoned_after`."""
        running = [manifest.run_id for manifest in manifests if manifest.status == "running"]
        owners: dict[str, str | None] = {}
        if running:
            with self._scope.store.read() as conn:
                owners = dict(conn.execute(select(runs.c.run_id, runs.c.owner).where(
                    runs.c.namespace == self._ns, runs.c.run_id.in_(running))).all())
        now = utcnow()
        return {manifest.run_id: shown_status(manifest, now=now, owner_ended=has_ended(owners.get(manifest.run_id)))
                for manifest in manifests}

    @retried
    def update(
        self,
        run_id: str,
        *,
        current_url: str | None = None,
        turn_count: int | None = None,
        artifact_paths: Sequence[str] | None = None,
    ) -> RunManifest:
        """Record a running run's progress: its page, turns used, artifacts (appended)."""
        values: dict[str, Any] = {"updated_at": utcnow(), "owner": this_process()}
        if current_url is not None:
            values["current_url"] = self._scope.redact(check_url(current_url, field="current_url"))
        if turn_count is not None:
            if isinstance(turn_count, bool) or not isinstance(turn_count, int) or turn_count < 0:
                raise InvalidInput(f"turn_count: expected a non-negative integer, got {turn_count!r}")
            values["turn_count"] = turn_count
        with self._scope.store.write() as conn:
            manifest = self._fetch(conn, run_id, lock=True)
            if artifact_paths is not None:
                added = [self._scope.redact(path) for path in _check_paths(artifact_paths)]
                values["artifact_paths"] = [*manifest.artifact_paths, *added]
            conn.execute(update(runs).where(self._key(run_id)).values(**values))
            return self._fetch(conn, run_id)

    @retried
    def complete(self, run_id: str, *, success: bool, **outcome: Any) -> RunManifest:
        """Mark a running run completed (success) or failed; a finished run is returned unchanged. The
        other keywords (``summary``, ``final_url``, ``turn_count``, ``replay``) are :meth:`finish_running`'s."""
        with self._scope.store.write():
            finished = self.finish_running(run_id, success=success, **outcome)
            return finished if finished is not None else self.get(run_id)

    def finish_running(
        self,
        run_id: str,
        *,
        success: bool,
        summary: str | None = None,
        final_url: str | None = None,
        turn_count: int | None = None,
        replay: ReplayReport | None = None,
    ) -> RunManifest | None:
        """Complete the run if it is running, and return it; None when it was finished already (an unknown
        run is ``RunNotFound``). Its row stays locked until the transaction ends, so a concurrent finish
        of the same run waits, then finds it finished. The final URL defaults to where the run was last
        (then where it started); the turns count at least its steps."""
        if not isinstance(success, bool):
            raise InvalidInput(f"success: expected True or False, got {success!r}")
        now = utcnow()
        summary = self._scope.redact(summary)
        values: dict[str, Any] = {
            "status": "completed" if success else "failed", "success": success, "summary": summary,
            "result": summary if success else None, "reason": None if success else summary,
            "completed_at": now, "updated_at": now, "final_url": None, "turn_count": turn_count,
        }
        if final_url is not None:
            values["final_url"] = self._scope.redact(check_url(final_url, field="final_url"))
        if replay is not None:
            if not isinstance(replay, ReplayReport):
                raise InvalidInput("replay: expected a webmem.ReplayReport")
            values["replay"] = redacted_report(replay, self._scope.redact).model_dump()
        with self._scope.store.write() as conn:
            row = _COMPLETE[replay is not None].first(conn, {"ns": self._ns, "run_id": run_id, **values})
            if row is None:
                self._fetch(conn, run_id)
                return None
            finished = validated(RunManifest, **dict(zip(_MANIFEST_NAMES, row)))
        self._scope.emit(
            "run_finished", run_id=run_id, success=success, status=finished.status,
            summary=finished.summary, turn_count=finished.turn_count,
        )
        return finished

    @retried
    def abandoned(self, *, limit: int | None = None) -> list[RunManifest]:
        """Running runs nobody will finish, oldest update first: the process that last acted on one ended (a
        process of this machine), or nobody updated it for :func:`abandoned_after`."""
        query = select(*_MANIFEST_COLUMNS, runs.c.owner).where(runs.c.namespace == self._ns, runs.c.status == "running")
        found = self._running(query.order_by(runs.c.updated_at, runs.c.run_id), abandoned=True)
        return found[:positive_int(limit, field="limit")] if limit is not None else found

    def step_params(self, run_id: str, step: Step) -> dict[str, Any]:
        """The parameters of :data:`ADVANCE_RUN` and :func:`appending_step` for ``step``, recorded now."""
        now = utcnow()
        return {**step.model_dump(exclude=_SIGNALS), "element": compact_signals(step.element), "ns": self._ns,
                "run_id": run_id,
                "namespace": self._ns, "recorded_at": now, "now": now, "owner": this_process()}

    def add_step(self, run_id: str, step: Step) -> int:
        """Append a step to a running run; returns its 1-based position."""
        params = self.step_params(run_id, step)
        with self._scope.store.write() as conn:
            # the update holds the run's row (PostgreSQL) until commit: steps of one run take turns
            if not _ADVANCE_RUN.rowcount(conn, params):
                self.refuse_step(run_id, conn)
            return int(_APPEND_STEP.scalar(conn, params))

    def refuse_step(self, run_id: str, conn: Connection | None = None) -> NoReturn:
        """Raise why a step was not added: no such run (RunNotFound), or it is finished (RunClosed)."""
        if conn is None:
            with self._scope.store.read() as conn:
                self._fetch(conn, run_id)
        else:
            self._fetch(conn, run_id)
        raise RunClosed(f"run {run_id} is finished; start a new run (or resume this one) to record more")

    def steps_read(self, run_id: str) -> Read:
        """The read of :meth:`steps`, to be read ahead."""
        return _STEPS_OF_RUN, {"ns": self._ns, "run_id": run_id}

    def steps(self, run_id: str) -> list[Step]:
        """The run's recorded steps, in order."""
        with self._scope.store.read() as conn:
            statement, params = self.steps_read(run_id)  # one set of parameters: what was read ahead is taken
            rows = statement.rows(conn, params)
            if not rows:
                self._fetch(conn, run_id)  # RunNotFound, or a run without steps
            return [_stored_step(row) for row in rows]

    def steps_by_run(self) -> dict[str, list[Step]]:
        """Every recorded step of the namespace, per run, in order (one query, for exports)."""
        query = select(run_steps.c.run_id, *_STEP_COLUMNS).where(run_steps.c.namespace == self._ns) \
            .order_by(run_steps.c.run_id, run_steps.c.seq)
        found: dict[str, list[Step]] = {}
        with self._scope.store.read() as conn:
            for run_id, *values in conn.execute(query):
                found.setdefault(run_id, []).append(_stored_step(values))
        return found

    def build_resume_scenario(self, run_id: str, goal: str | None = None) -> Scenario:
        """Continue where a run left off: same session, start at its final URL."""
        parent = self.get(run_id)
        return validated(
            Scenario,
            goal=goal if goal is not None else parent.goal,
            start_url=parent.final_url or parent.current_url or parent.start_url,
            session_id=parent.session_id,
            parent_run_id=parent.run_id,
        )

    def build_fork_scenario(self, run_id: str, goal: str) -> Scenario:
        """Branch off a run into a new session that starts at its final URL."""
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: a fork needs a goal of its own")
        parent = self.get(run_id)
        return validated(
            Scenario,
            goal=goal,
            start_url=parent.final_url or parent.current_url or parent.start_url,
            session_id=new_id("fork"),
            parent_run_id=parent.run_id,
        )

    def lineage(self, run_id: str) -> list[RunManifest]:
        """The run and its ancestors, oldest first; it stops at an ancestor that was forgotten."""
        with self._scope.store.read() as conn:
            chain = [self._fetch(conn, run_id)]
            seen = {run_id}
            current = chain[0].parent_run_id
            while current is not None and current not in seen:
                seen.add(current)
                row = self._row(conn, current)
                if row is None:
                    break
                chain.append(_manifest(row))
                current = chain[-1].parent_run_id
        return chain[::-1]

    def children(self, run_id: str) -> list[RunManifest]:
        """Runs resumed or forked directly from this one, oldest first."""
        with self._scope.store.read() as conn:
            self._fetch(conn, run_id)
            rows = conn.execute(
                select(*_MANIFEST_COLUMNS)
                .where(runs.c.namespace == self._ns, runs.c.parent_run_id == run_id)
                .order_by(runs.c.started_at, runs.c.run_id)
            )
            return [_manifest(row) for row in rows]

    def _key(self, run_id: str) -> Any:
        return and_(runs.c.namespace == self._ns, runs.c.run_id == run_id)

    def _row(self, conn: Connection, run_id: str) -> Any:
        found = _MANIFEST.named_rows(conn, {"ns": self._ns, "run_id": run_id})
        return found[0] if found else None

    def _fetch(self, conn: Connection, run_id: str, *, field: str = "run_id", lock: bool = False) -> RunManifest:
        if not isinstance(run_id, str) or not run_id.strip():
            raise InvalidInput(f"{field}: expected a run id string, got {run_id!r}")
        if lock:
            lock_rows(conn, runs, self._key(run_id))
        row = self._row(conn, run_id)
        if row is None:
            raise RunNotFound(f"{field}: no run {run_id!r} in namespace {self._ns!r}")
        return _manifest(row)


def new_manifest(
    *,
    goal: str,
    start_url: str,
    session_id: str | None = None,
    parent_run_id: str | None = None,
    run_id: str | None = None,
    model: str | None = None,
    redact: Callable[[str | None], str | None] = lambda text: text,
) -> RunManifest:
    """The manifest of a run that starts now (status running), validated. A run given no session starts
    one of its own (``session_...``): the runs that resume it share it, and so does its entry in the site's
    session history."""
    now = utcnow()
    url = check_url(start_url, field="start_url")
    return validated(
        RunManifest,
        run_id=run_id if run_id is not None else RunRegistry.generate_run_id(),
        session_id=session_id if session_id is not None else new_id("session"),
        parent_run_id=parent_run_id,
        status="running",
        goal=redact(goal) if isinstance(goal, str) else goal,
        domain=domain_of(url, field="start_url"),
        start_url=redact(url),
        started_at=now,
        updated_at=now,
        artifact_paths=[],
        turn_count=0,
        model=model,
    )


def _manifest(row: Any) -> RunManifest:
    return RunManifest.model_validate(row if isinstance(row, dict) else row._asdict() if hasattr(row, "_asdict")
                                      else dict(row._mapping))


def _text_filter(value: object, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{field}: expected a non-empty string, got {value!r}")
    return value


def _check_paths(paths: Sequence[str]) -> list[str]:
    if isinstance(paths, str) or not all(isinstance(path, str) and path for path in paths):
        raise InvalidInput("artifact_paths: expected a list of non-empty strings")
    return list(paths)


def _stored_step(row: Sequence[Any]) -> Step:
    """A step read back from its row (its element's signals from their JSON)."""
    data = dict(zip(_STEP_NAMES, row))
    if data["element"] is not None:
        data["element"] = stored_signals(data["element"])
    return stored_mapping(Step, data)

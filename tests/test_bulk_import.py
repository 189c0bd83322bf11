"""Runs and trajectories are imported in batches (few statements for many records): each record is stored
once, what is already here (or came earlier in the batch) is skipped, every trajectory gets its own place
in its origin's goal index, and secrets are redacted as in a one-by-one import; on both backends."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import rows

import webmem
from webmem.interop.transfer import collect, import_path, render

NOW = datetime(2026, 5, 1, tzinfo=UTC)


def trajectory(number: int, origin: str = "https://shop.example") -> webmem.Trajectory:
    return webmem.Trajectory(
        id=f"traj_import_{number}", goal=f"Order {number} boxes of green tea", origin=origin,
        domain=origin.split("//")[1], steps=[
            webmem.Step(action="goto", url=f"{origin}/tea"),
            webmem.Step(action="fill", target='textbox "Quantity"', value=str(number), ok=True),
            webmem.Step(action="click", target='button "Order"', ok=True, verified=True),
        ], success=number % 4 != 0, duration_ms=1200, created_at=NOW,
    )


def test_a_batch_of_trajectories_is_stored_once_each_with_its_own_place_per_origin(mem: webmem.Memory) -> None:
    assert mem.trajectories.import_trajectories([trajectory(1)]) == [True]
    batch = [trajectory(number) for number in range(1, 9)] + [trajectory(3)]  # one stored, one twice
    batch += [trajectory(20 + number, origin="https://books.example") for number in range(3)]
    added = mem.trajectories.import_trajectories(batch)
    assert added == [False, *([True] * 7), False, True, True, True]
    assert rows.count(mem, "trajectories") == 11
    seqs = {origin: sorted(rows.values(mem, "trajectories", "origin_seq", origin=origin))
            for origin in ("https://shop.example", "https://books.example")}
    assert seqs == {"https://shop.example": list(range(1, 9)), "https://books.example": [1, 2, 3]}
    assert rows.value(mem, "trajectory_origins", "version", origin="https://shop.example") == 8
    found = mem.trajectories.match("order 6 boxes of green tea", origin="https://shop.example", now=NOW)
    assert found.best is not None and found.best.id == "traj_import_6"


def test_a_batch_of_manifests_skips_runs_already_here(mem: webmem.Memory) -> None:
    kept = mem.start_run(goal="Buy tea", start_url="https://shop.example/")
    kept.finish(success=True)
    copies = [mem.runs.get(kept.id).model_copy(update={"run_id": f"run_copy_{number}"}) for number in range(3)]
    assert mem.runs.import_manifests([mem.runs.get(kept.id), *copies, copies[0]]) == [False, True, True, True, False]
    assert {run.run_id for run in mem.runs.list()} == {kept.id, "run_copy_0", "run_copy_1", "run_copy_2"}
    with pytest.raises(webmem.InvalidInput, match="RunManifest"):
        mem.runs.import_manifests(["run_x"])  # type: ignore[list-item]


def test_secrets_in_a_batch_are_redacted(mem: webmem.Memory) -> None:
    mem.secrets.add("tea-lover-9876", name="coupon")
    leaky = trajectory(2).model_copy(update={"goal": "Order tea with coupon tea-lover-9876"})
    assert mem.trajectories.import_trajectories([leaky]) == [True]
    assert b"tea-lover-9876" not in rows.stored_bytes(mem)
    assert mem.trajectories.get(leaky.id).goal == "Order tea with coupon {coupon}"


def test_an_export_carries_each_run_with_its_steps_and_the_import_keeps_them(
    mem: webmem.Memory, another_location: str, tmp_path: Path
) -> None:
    run = mem.start_run(goal="Log in and buy tea", start_url="https://shop.example/")
    run.record_step(action="fill", target='textbox "Email"', value="ann@example.com", url="https://shop.example/login")
    run.record_step(action="click", target='button "Log in"', ok=False, error="Timeout 1500ms exceeded")
    run.record_step(action="click", target='button "Sign in"')
    run.finish(success=True)
    export = tmp_path / "export.jsonl"
    export.write_text(render(mem, collect(mem, ["runs"]), "jsonl"), encoding="utf-8")
    record = json.loads(export.read_text().splitlines()[0])["record"]
    assert [step["target"] for step in record["steps"]] == ['textbox "Email"', 'button "Log in"', 'button "Sign in"']
    with webmem.Memory.open(another_location, local_dir=tmp_path / "other") as other:
        report = import_path(other, export)
        assert report.added["runs"] == 1
        assert other.runs.steps(run.id) == mem.runs.steps(run.id)
        assert import_path(other, export).skipped["runs"] == 1 and len(other.runs.steps(run.id)) == 3


def test_a_password_typed_in_an_imported_run_is_stored_as_a_placeholder(mem: webmem.Memory) -> None:
    manifest = webmem.RecordedRun(
        run_id="run_import_login", status="completed", goal="Log in", domain="shop.example",
        start_url="https://shop.example/", started_at=NOW, updated_at=NOW, success=True,
        steps=[webmem.Step(action="fill", target='textbox "Password"', value="correct horse battery")],
    )
    assert mem.runs.import_manifests([manifest]) == [True]
    assert mem.runs.steps("run_import_login")[0].value == "{password}"
    assert b"correct horse battery" not in rows.stored_bytes(mem)

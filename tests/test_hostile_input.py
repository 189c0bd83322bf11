"""Hostile input gets a clear error and stores nothing: numbers out of range, arguments that are not UTF-8."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import webmem
from webmem import InvalidInput
from webmem.cli import cli

SHOP = "https://shop.example/"


@pytest.mark.parametrize("duration", [2**70, math.nan, math.inf, -math.inf, 1e300, -1])
def test_a_duration_out_of_range_is_refused_and_nothing_is_stored(mem: webmem.Memory, duration: float) -> None:
    run = mem.start_run(goal="Buy", start_url=SHOP)
    with pytest.raises(InvalidInput, match="duration_ms"):
        run.record_step(action="click", target='button "Buy"', duration_ms=duration)
    assert mem.runs.steps(run.id) == []
    run.record_step(action="click", target='button "Buy"', duration_ms=2**40)  # large, and still fine
    assert [step.duration_ms for step in mem.runs.steps(run.id)] == [2**40]


def test_a_count_out_of_range_is_refused(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Buy", start_url=SHOP)
    with pytest.raises(InvalidInput, match="target_count"):
        run.record_step(action="click", target='button "Buy"', target_count=2**40)
    assert mem.runs.steps(run.id) == []


def test_the_cli_refuses_a_huge_number_and_an_argument_that_is_not_utf_8(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    with webmem.Memory.open(directory) as mem, mem.start_run(goal="Buy", start_url=SHOP):
        pass
    runner = CliRunner()
    huge = runner.invoke(cli, ["--memory-dir", str(directory), "runs", "--limit", str(2**70)])
    assert huge.exit_code == 2 and "--limit" in huge.stderr and isinstance(huge.exception, SystemExit)
    broken = runner.invoke(cli, ["--memory-dir", str(directory), "runs", "tree", "\udcff"])
    assert broken.exit_code == 2 and "is not valid UTF-8" in broken.stderr
    assert isinstance(broken.exception, SystemExit)

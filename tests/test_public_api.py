"""The public surface: a sorted __all__ whose names all exist, and docs that match the code."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import webmem

ROOT = Path(__file__).resolve().parent.parent


def test_all_is_sorted_and_complete() -> None:
    assert webmem.__all__ == sorted(webmem.__all__)
    for name in webmem.__all__:
        assert hasattr(webmem, name), name


def test_every_error_is_a_webmem_error() -> None:
    errors = [getattr(webmem, name) for name in webmem.__all__ if name.endswith(("Error", "Input", "Found",
              "Closed", "Disabled", "Unavailable", "Locked", "Corrupt", "New"))]
    assert len(errors) == 13
    for error in errors:
        assert issubclass(error, webmem.WebmemError)
    assert issubclass(webmem.InvalidInput, ValueError)
    assert issubclass(webmem.RunNotFound, LookupError)


def test_cli_reference_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "cli.md").read_text() == module.render(), "run python scripts/cli_reference.py"


def test_library_never_prints() -> None:
    offenders = []
    for path in (ROOT / "src" / "webmem").rglob("*.py"):
        if path.name == "cli.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if line.strip().startswith("print("):
                offenders.append(f"{path.name}:{number}")
    assert offenders == []


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run([sys.executable, "-m", "webmem", "--version"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and webmem.__version__ in result.stdout


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    use_it = (ROOT / "README.md").read_text().split("## Use it", 1)[1]  # the first block: test_readme_install
    code = re.search(r"```python\n(.*?)```", use_it, re.S)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(code.group(1), "README.md", "exec"), {})  # noqa: S102 - our own README
    with webmem.Memory.open(tmp_path / ".agent-memory") as mem:
        (lesson,) = mem.lessons.list(category="error_recovery")
        assert lesson.lesson.endswith("try press Escape instead.")
        assert [run.status for run in mem.runs.list()] == ["completed"]
    # the README's shell lines find that run again, worded differently
    match = re.search(r'webmem trajectories match "([^"]+)" --url (\S+)', (ROOT / "README.md").read_text())
    assert match is not None
    with webmem.Memory.open(tmp_path / ".agent-memory") as mem:
        found = mem.trajectories.match(match.group(1), origin=match.group(2)).best
        assert found is not None and found.goal == "Search for smart watch reviews"


def _undocumented(owner: object, names: list[str]) -> list[str]:
    import inspect

    missing = []
    for name in names:
        obj = getattr(owner, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if isinstance(value, staticmethod | classmethod):
                    value = value.__func__
                if isinstance(value, property):
                    value = value.fget
                if not attr.startswith("_") and callable(value) and not (value.__doc__ or "").strip():
                    missing.append(f"{name}.{attr}")
    return missing


@pytest.mark.parametrize("package", ["webmem", "webmem.working", "webmem.agent", "webmem.interop", "webmem.lessons",
                                     "webmem.trajectories", "webmem.episodes"])
def test_every_public_name_says_what_it_is_for(package: str) -> None:
    module = importlib.import_module(package)
    assert _undocumented(module, module.__all__) == []


def test_memory_open_documents_every_parameter_and_the_constructor_is_not_public() -> None:
    import inspect

    doc = inspect.getdoc(webmem.Memory.open) or ""
    for parameter in inspect.signature(webmem.Memory.open).parameters:
        assert f"{parameter}:" in doc, f"Memory.open does not document {parameter}"
    assert "__init__" not in vars(webmem.Memory)
    with pytest.raises(TypeError, match=r"Memory\.open"):
        webmem.Memory()

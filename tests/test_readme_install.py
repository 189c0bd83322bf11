"""A new user's first minute: the built wheel, installed into a brand-new virtual environment with no
extras, runs the README's first Python example as it is written, and the `webmem` command it installs
reads the memory that example left."""

from __future__ import annotations

import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_example() -> str:
    """The README's first Python block, verbatim."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert found is not None, "the README has no Python example"
    return found.group(1)


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv holding only the wheel built from this tree and its required dependencies."""
    where = tmp_path_factory.mktemp("first-minute")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where / "dist"), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = (where / "dist").glob("webmem-*.whl")
    venv.create(where / "venv", with_pip=True)
    python = where / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True,
                   timeout=900)
    return where / "venv"


def test_the_readme_example_runs_verbatim_on_the_bare_wheel(fresh_env: Path, tmp_path: Path) -> None:
    python = fresh_env / "bin" / "python"
    extras = subprocess.run([str(python), "-c", "import playwright"], capture_output=True)
    assert extras.returncode != 0, "the fresh environment has an extra installed: it would hide a missing dependency"
    done = subprocess.run([str(python), "-c", readme_example()], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "REFERENCE TRAJECTORY" in done.stdout and 'fill textbox "Search" "running shoe"' in done.stdout
    assert (tmp_path / ".agent-memory" / "memory.db").is_file()
    listed = subprocess.run([str(fresh_env / "bin" / "webmem"), "runs"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert listed.returncode == 0 and "Search for running shoe reviews" in listed.stdout, listed.stderr

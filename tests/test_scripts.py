"""A remembered run becomes a Playwright script: recorded by the reference agent on local pages, written in
Python, and run with real Playwright and Chromium: it passes on the page it was recorded on, passes with
other parameter values, and fails with a clear assertion on a changed copy of the page."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_agent_loop import ScriptedPolicy
from test_replay_steps import PAGES, fill_movie_form, fill_the_named_box, movie, movies_url, places_url, run

import webmem
from webmem import InvalidInput, TrajectoryNotFound
from webmem.cli import cli
from webmem.demo.server import serve_site

CHROMIUM = os.environ.get("WEBMEM_TEST_CHROMIUM", "/usr/bin/chromium")


def run_script(path: Path, *options: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path), "--browser-path", CHROMIUM, "--no-sandbox", *options],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


def test_a_form_search_becomes_a_script_with_the_goal_s_values_as_parameters(
    open_memory: Any, page: Any, tmp_path: Path
) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        goal, values = movie("comedy", "Ford", "1999")
        result = run(page, mem, movies_url(base, values), goal, ScriptedPolicy(fill_movie_form(values)))
        assert result.success
        text = mem.script(result.run_id)
        assert text == mem.script(mem.trajectories.list()[0].id)  # by the run or by its trajectory
        script = tmp_path / "search.py"
        script.write_text(text, encoding="utf-8")
        assert f"Goal: {goal}" in text and f"run {result.run_id}" in text and "xpath" not in text.lower()
        assert 'def run(page: Page, value_1: str = "comedy"' not in text  # parameters are named by their fields
        assert '"--year", default="1999"' in text and 'labelled(page, "textbox", "Year:")' in text
        passed = run_script(script)
        assert passed.returncode == 0, passed.stderr[-2000:]
        other = run_script(script, "--year", "1966", "--director", "Leone", "--genre", "western")
        assert other.returncode == 0, other.stderr[-2000:]
        module = types.ModuleType("search_script")  # on a page with the fields in another order ...
        exec(compile(text, "search.py", "exec"), module.__dict__)  # noqa: S102 (the script under test)
        module.START_URL = movies_url(base, {"genre": "western", "director": "Leone", "year": "1966"}, order="gdy")
        module.run(page, genre="western", director="Leone", year="1966")
        assert page.evaluate("() => window.verdict") == {"done": True, "reward": 1}  # ... each by its label
        changed = tmp_path / "changed.py"  # the same script on a copy of the page whose button was renamed
        changed.write_text(text.replace(movies_url(base, values), movies_url(base, values, button="Find")),
                           encoding="utf-8")
        failed = run_script(changed)
    assert failed.returncode != 0
    assert "AssertionError" in failed.stderr and 'get_by_role("button", name="Search", exact=True)' in failed.stderr


def test_the_place_a_goal_names_is_a_parameter_of_the_script(open_memory: Any, page: Any, tmp_path: Path) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        goal = 'Enter "apple" into the 2nd textbox and press Submit.'
        result = run(page, mem, places_url(base, "apple", 2), goal, ScriptedPolicy(fill_the_named_box))
        assert result.success
        script = tmp_path / "places.py"
        script.write_text(mem.script(result.run_id), encoding="utf-8")
        text = script.read_text(encoding="utf-8")
        assert '"--textbox-place", default="2nd"' in text and "place(textbox_place, 3)" in text
        assert run_script(script).returncode == 0
        third = run_script(script, "--textbox-place", "3rd", "--textbox", "pear")
        assert third.returncode == 0, third.stderr[-2000:]
        fifth = run_script(script, "--textbox-place", "5th")
    assert fifth.returncode != 0 and "'5th' names no place among the 3" in fifth.stderr


def test_a_secret_becomes_an_environment_variable_never_a_literal(open_memory: Any, page: Any, tmp_path: Path) -> None:
    from test_replay_handover import SIGN_IN_SECRET, sign_in  # the sign-in page of the replay tests

    mem = open_memory(secrets={"password": SIGN_IN_SECRET})
    with serve_site(PAGES) as base:
        result = run(page, mem, f"{base}signin.html", 'Sign in as "ann"', ScriptedPolicy(sign_in))
        assert result.success
        text = mem.script(result.run_id)
        assert SIGN_IN_SECRET not in text and 'secret("WEBMEM_SECRET_PASSWORD")' in text
        assert '"--username", default="ann"' in text
        script = tmp_path / "signin.py"
        script.write_text(text, encoding="utf-8")
        missing = run_script(script)
        assert missing.returncode != 0 and "set WEBMEM_SECRET_PASSWORD" in missing.stderr
        signed = run_script(script, "--username", "bob", env={"WEBMEM_SECRET_PASSWORD": SIGN_IN_SECRET})
    assert signed.returncode == 0, signed.stderr[-2000:]


def test_what_cannot_become_a_script_is_refused_by_name(mem: webmem.Memory, tmp_path: Path) -> None:
    failed = mem.start_run(goal="Buy tea", start_url="https://shop.example/")
    failed.record_step(action="click", target='button "Buy"', ok=False, error="Timeout")
    failed.finish(success=False)
    with pytest.raises(TrajectoryNotFound, match="only a run that succeeded"):
        mem.script(failed.id)
    with pytest.raises(webmem.RunNotFound):
        mem.script("run_nope")
    dragged = mem.start_run(goal="Sort the list", start_url="https://shop.example/")
    dragged.record_step(action="drag", target='listitem "Tea"', verified=True)
    dragged.finish(success=True)
    with pytest.raises(InvalidInput, match="'drag' has no Playwright equivalent"):
        mem.script(dragged.id)
    with pytest.raises(InvalidInput, match="lang"):
        mem.script(dragged.id, lang="ruby")


def test_webmem_script_writes_the_script_or_says_why_not(sqlite_mem: webmem.Memory, memory_dir: Path,
                                                          tmp_path: Path) -> None:
    done = sqlite_mem.start_run(goal="Open the page of a drink", start_url="https://shop.example/")
    done.record_step(action="click", target='link "Tea"', url="https://shop.example/", verified=True)
    done.finish(success=True)
    failed = sqlite_mem.start_run(goal="Buy tea", start_url="https://shop.example/")
    failed.finish(success=False)
    runner = CliRunner()
    target = tmp_path / "tea.spec.ts"
    out = runner.invoke(cli, ["--memory-dir", str(memory_dir), "script", done.id, "--lang", "typescript", "-o", str(target)])
    assert out.exit_code == 0, out.output
    assert "getByRole(\"link\", { name: \"Tea\", exact: true })" in target.read_text(encoding="utf-8")
    again = runner.invoke(cli, ["--memory-dir", str(memory_dir), "script", done.id, "-o", str(target)])
    assert again.exit_code == 2 and "--force" in again.output
    refused = runner.invoke(cli, ["--memory-dir", str(memory_dir), "script", failed.id])
    assert refused.exit_code == 1 and "only a run that succeeded" in refused.output and "Traceback" not in refused.output


PLAYWRIGHT_TEST = Path(__file__).resolve().parent.parent / ".cache" / "node-test" / "node_modules"
TS_CONFIG = """import { defineConfig } from '@playwright/test';
export default defineConfig({
  reporter: 'line', workers: 1, timeout: 60000, outputDir: 'results',
  use: { launchOptions: { executablePath: process.env.WEBMEM_TEST_CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] } },
});
"""


def run_spec(folder: Path, spec: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    assert PLAYWRIGHT_TEST.is_dir(), f"{PLAYWRIGHT_TEST} is missing: run scripts/setup.sh (it installs @playwright/test)"
    (folder / "node_modules").symlink_to(PLAYWRIGHT_TEST) if not (folder / "node_modules").exists() else None
    (folder / "playwright.config.ts").write_text(TS_CONFIG, encoding="utf-8")
    return subprocess.run(["node", str(PLAYWRIGHT_TEST / "playwright" / "cli.js"), "test", spec, "--config",
                           "playwright.config.ts"], cwd=folder, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "WEBMEM_TEST_CHROMIUM": CHROMIUM, **(env or {})})


def test_the_typescript_script_runs_in_playwright_test_with_other_values_and_fails_on_a_changed_page(
    sqlite_mem: webmem.Memory, page: Any, tmp_path: Path
) -> None:
    mem = sqlite_mem
    with serve_site(PAGES) as base:
        goal, values = movie("comedy", "Ford", "1999")
        result = run(page, mem, movies_url(base, values), goal, ScriptedPolicy(fill_movie_form(values)))
        assert result.success
        text = mem.script(result.run_id, lang="typescript")
        assert "import { test, expect, type Locator, type Page } from '@playwright/test';" in text
        (tmp_path / "search.spec.ts").write_text(text, encoding="utf-8")
        passed = run_spec(tmp_path, "search.spec.ts")
        assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-2000:]
        other = run_spec(tmp_path, "search.spec.ts", {"WEBMEM_PARAM_YEAR": "1966", "WEBMEM_PARAM_DIRECTOR": "Leone"})
        assert other.returncode == 0, other.stdout[-3000:]
        changed = text.replace(movies_url(base, values), movies_url(base, values, button="Find"))
        (tmp_path / "changed.spec.ts").write_text(changed, encoding="utf-8")
        failed = run_spec(tmp_path, "changed.spec.ts")
    assert failed.returncode != 0 and "toBeVisible" in failed.stdout and 'name: "Search"' in failed.stdout


def test_a_time_the_goal_gives_in_12_hours_is_converted_by_the_script_in_both_languages(
    sqlite_mem: webmem.Memory, page: Any, tmp_path: Path
) -> None:
    from test_replay_handover import to_24_hours

    mem = sqlite_mem
    with serve_site(PAGES) as base:
        result = run(page, mem, f"{base}time.html?expect=11:20", "Enter 11:20 AM as the time and press Submit",
                     ScriptedPolicy(to_24_hours))
        assert result.success
        text = mem.script(result.run_id)
        params = webmem.scripts.plan_script(mem.trajectories.list()[0]).params
        param = next(param for param in params if param.default == "11:20 AM")
        assert f"time24({param.name})" in text
        head, *rest = param.name.split("_")
        key = head + "".join(word.capitalize() for word in rest)  # the TypeScript spec's name for it
        module = types.ModuleType("time_script")
        exec(compile(text, "time.py", "exec"), module.__dict__)  # noqa: S102 (the script under test)
        for said, typed in (("12:21 AM", "00:21"), ("3:15 PM", "15:15"), ("12:05 PM", "12:05")):
            page.goto("about:blank")
            module.run(page, **{param.name: said})
            assert page.input_value("input") == typed, said
        spec = mem.script(result.run_id, lang="typescript") + (
            "\ntest('3:15 PM is typed as 15:15', async ({ page }) => {\n"
            f"  await run(page, {{ ...params, {key}: '3:15 PM' }});\n"
            "  await expect(page.locator('input')).toHaveValue('15:15');\n});\n")
        (tmp_path / "time.spec.ts").write_text(spec, encoding="utf-8")
        afternoon = run_spec(tmp_path, "time.spec.ts")
    assert afternoon.returncode == 0 and "2 passed" in afternoon.stdout, afternoon.stdout[-3000:]


def test_only_text_that_reads_as_a_label_finds_a_field_by_it() -> None:
    from datetime import UTC, datetime

    from webmem.scripts import script_for

    def trajectory(label: str) -> webmem.Trajectory:
        step = webmem.Step(action="fill", target='textbox ""', value="1999", label=label, verified=True,
                           target_index=2, target_count=3, url="https://shop.example/")
        return webmem.Trajectory(id="traj_1", goal="Search the films", origin="https://shop.example",
                                 domain="shop.example", steps=[step], success=True, duration_ms=10,
                                 created_at=datetime(2026, 11, 25, tzinfo=UTC))

    assert 'labelled(page, "textbox", "Year:")' in script_for(trajectory("Year:"))
    instruction = script_for(trajectory('Enter "1999" into the text field and press Submit.'))
    assert "labelled(" not in instruction and 'get_by_role("textbox", name="", exact=True).nth(1)' in instruction


def test_any_goal_and_field_names_give_a_script_that_compiles(mem: webmem.Memory) -> None:
    import ast

    run_ = mem.start_run(goal='Type "C:\\new\\x" in the Class box, then """ in Page', start_url="https://shop.example/")
    run_.record_step(action="fill", target='textbox "class"', value="C:\\new\\x", url="https://shop.example/",
                     verified=True)
    run_.record_step(action="fill", target='textbox "page"', value='"""', url="https://shop.example/", verified=True)
    run_.finish(success=True)
    text = mem.script(run_.id)
    tree = ast.parse(text)  # backslashes and triple quotes in the goal never break the script
    run_function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "run")
    names = [argument.arg for argument in run_function.args.args]
    assert names[0] == "page" and len(set(names)) == len(names)  # no parameter shadows the page or another
    assert all(name.isidentifier() and name not in ("class", "page") for name in names[1:])


def test_typescript_scripts_read_secrets_and_places_from_the_environment(
    sqlite_mem: webmem.Memory, page: Any, tmp_path: Path
) -> None:
    from test_replay_handover import SIGN_IN_SECRET, sign_in

    mem = sqlite_mem
    mem.secrets.add(SIGN_IN_SECRET, name="password")
    with serve_site(PAGES) as base:
        signed = run(page, mem, f"{base}signin.html", 'Sign in as "ann"', ScriptedPolicy(sign_in))
        placed = run(page, mem, places_url(base, "apple", 2), 'Enter "apple" into the 2nd textbox and press Submit.',
                     ScriptedPolicy(fill_the_named_box))
        assert signed.success and placed.success
        secret_spec = mem.script(signed.run_id, lang="typescript")
        assert SIGN_IN_SECRET not in secret_spec
        (tmp_path / "signin.spec.ts").write_text(secret_spec, encoding="utf-8")
        missing = run_spec(tmp_path, "signin.spec.ts")
        assert missing.returncode != 0 and "set WEBMEM_SECRET_PASSWORD" in missing.stdout
        with_secret = run_spec(tmp_path, "signin.spec.ts", {"WEBMEM_SECRET_PASSWORD": SIGN_IN_SECRET,
                                                            "WEBMEM_PARAM_USERNAME": "bob"})
        assert with_secret.returncode == 0, with_secret.stdout[-3000:]
        place_spec = mem.script(placed.run_id, lang="typescript") + (
            "\ntest('the 3rd box gets pear', async ({ page }) => {\n"
            "  await run(page, { ...params, textboxPlace: '3rd', textbox: 'pear' });\n"
            "  await expect(page.locator('input').nth(2)).toHaveValue('pear');\n"
            "  await expect(page.locator('input').nth(1)).toHaveValue('');\n});\n")
        (tmp_path / "places.spec.ts").write_text(place_spec, encoding="utf-8")
        third = run_spec(tmp_path, "places.spec.ts")
        assert third.returncode == 0 and "2 passed" in third.stdout, third.stdout[-3000:]
        fifth = run_spec(tmp_path, "places.spec.ts", {"WEBMEM_PARAM_TEXTBOX_PLACE": "5th"})
    assert fifth.returncode != 0 and '"5th" names no place among the 3' in fifth.stdout

"""Scripts that choose among elements: a recorded list becomes a list parameter whose steps run once per
value (any number of values, both languages); a name the goal gives finds the page's own spelling of it
("x" is the "×" button) and the first of several elements with it; of two same-named buttons the script
says which one it presses. Recorded by the reference agent on local pages and run with real Playwright
and Chromium."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from test_agent_loop import ScriptedPolicy
from test_replay_steps import PAGES, run
from test_scripts import run_script, run_spec

from webmem.agent import Action, Target, Turn
from webmem.demo.server import serve_site


def choose_url(base: str, want: str, names: str = "ab,cd,ef,gh") -> str:
    return f"{base}choose.html?{urlencode({'names': names, 'want': want})}"


def tick_the_named_boxes(turn: Turn) -> Action:
    """Ticks each box the goal lists ("Select ab, cd and click Submit."), then submits."""
    names = turn.goal.removeprefix("Select ").split(" and click")[0].split(", ")
    for name in names:
        box = turn.observation.find("checkbox", name)[0]
        if not box.checked:
            return Action("check", Target(ref=box.ref))
    return Action("click", Target(role="button", name="Submit"))


def in_process(text: str, page: Any, url: str, **params: str) -> Any:
    """Run the script's ``run`` on ``url`` in this process; the page's verdict."""
    module = types.ModuleType("script_under_test")
    exec(compile(text, "script.py", "exec"), module.__dict__)  # noqa: S102 (the script under test)
    module.START_URL = url
    module.run(page, **params)
    return page.evaluate("() => window.verdict")


def spec_with_verdict(folder: Path, name: str, text: str, recorded: str, url: str, call: str) -> Any:
    """Run the TypeScript script, moved from its ``recorded`` URL to ``url``, with one more test that awaits
    ``call`` and expects the page's verdict to be a success."""
    spec = text.replace(recorded, url) + (
        f"\ntest({name!r}, async ({{ page }}) => {{\n  await {call};\n"
        "  expect(await page.evaluate(() => (window as any).verdict)).toEqual({ done: true, reward: 1 });\n});\n")
    (folder / f"{name}.spec.ts").write_text(spec, encoding="utf-8")
    return run_spec(folder, f"{name}.spec.ts")


def test_a_recorded_list_becomes_a_list_parameter_whose_steps_run_once_per_value(
    sqlite_mem: Any, page: Any, tmp_path: Path
) -> None:
    mem = sqlite_mem
    with serve_site(PAGES) as base:
        result = run(page, mem, choose_url(base, "ab,cd"), "Select ab, cd and click Submit.",
                     ScriptedPolicy(tick_the_named_boxes))
        assert result.success
        text = mem.script(result.run_id)
        assert 'checkbox_names: str = "ab, cd"' in text and "for item in listed(checkbox_names):" in text
        assert "checkbox_names is a list" in text  # the header says so
        for names in ("ab, cd", "ef, gh, ab", "gh", "cd; ef; gh; ab."):
            want = ",".join(value.strip(" .") for value in names.replace(";", ",").split(","))
            assert in_process(text, page, choose_url(base, want), checkbox_names=names) == {"done": True, "reward": 1}
        # one box too many is ticked when the list names one the task does not want: the page's verdict says so
        assert in_process(text, page, choose_url(base, "ab"), checkbox_names="ab, cd")["reward"] == 0
        script = tmp_path / "choose.py"
        script.write_text(text.replace(choose_url(base, "ab,cd"), choose_url(base, "ef,gh,cd")), encoding="utf-8")
        assert run_script(script, "--checkbox-names", "ef, gh, cd").returncode == 0
        missing = run_script(script, "--checkbox-names", "ef, zz")  # a value the page has no box for
        assert missing.returncode != 0 and "AssertionError" in missing.stderr and "zz" in missing.stderr
        typescript = spec_with_verdict(tmp_path, "another-list", mem.script(result.run_id, lang="typescript"),
                                       choose_url(base, "ab,cd"), choose_url(base, "gh,ef,ab"),
                                       "run(page, { ...params, checkboxNames: 'gh, ef, ab' })")
    assert typescript.returncode == 0 and "2 passed" in typescript.stdout, typescript.stdout[-3000:]


def press_the_named_button(turn: Turn) -> Action:
    return Action("click", Target(role="button", name=turn.goal.split('"')[1]))


def dialog_url(base: str, want: str, **page: str) -> str:
    return f"{base}dialog.html?{urlencode({'want': want, **page})}"


def test_a_name_the_goal_gives_finds_the_page_s_spelling_and_the_first_of_several(
    sqlite_mem: Any, page: Any, tmp_path: Path
) -> None:
    mem = sqlite_mem
    with serve_site(PAGES) as base:
        result = run(page, mem, dialog_url(base, "OK"), 'Click the button in the dialog labeled "OK".',
                     ScriptedPolicy(press_the_named_button))
        assert result.success
        text = mem.script(result.run_id)
        assert 'button_name: str = "OK"' in text and "named(button_name)).first" in text
        # "x" is how goals write the close button the page shows as "×"
        assert in_process(text, page, dialog_url(base, "x"), button_name="x") == {"done": True, "reward": 1}
        # two Cancel buttons: the goal names either one, the script presses the first instead of failing
        assert in_process(text, page, dialog_url(base, "Cancel", twice="Cancel"),
                          button_name="cancel") == {"done": True, "reward": 1}
        typescript = spec_with_verdict(tmp_path, "close-for-x", mem.script(result.run_id, lang="typescript"),
                                       dialog_url(base, "OK"), dialog_url(base, "x"),
                                       "run(page, { ...params, buttonName: 'x' })")
        absent = tmp_path / "absent.py"  # a name the page has in no spelling still fails loudly
        absent.write_text(text.replace(dialog_url(base, "OK"), dialog_url(base, "Help")), encoding="utf-8")
        failed = run_script(absent, "--button-name", "Help")
    assert typescript.returncode == 0 and "2 passed" in typescript.stdout, typescript.stdout[-3000:]
    assert failed.returncode != 0 and "AssertionError" in failed.stderr and "Help" in failed.stderr


def delete_the_second(turn: Turn) -> Action:
    return Action("click", Target(ref=turn.observation.find("button", "Delete")[1].ref))


def test_of_two_same_named_buttons_the_script_says_which_one_it_presses(
    sqlite_mem: Any, page: Any, tmp_path: Path
) -> None:
    mem = sqlite_mem
    with serve_site(PAGES) as base:
        url = f"{base}rows.html?{urlencode({'invoices': '1001,1002', 'want': '1002'})}"
        result = run(page, mem, url, 'Delete the invoice "1002"', ScriptedPolicy(delete_the_second))
        assert result.success
        text = mem.script(result.run_id)
        assert "# the 2nd of 2 elements alike, as recorded" in text
        assert 'get_by_role("button", name="Delete", exact=True).nth(1)' in text
        assert in_process(text, page, url) == {"done": True, "reward": 1}
        typescript = mem.script(result.run_id, lang="typescript")
        assert "// place 2 of 2 elements alike, as recorded" in typescript and ".nth(1)" in typescript
        spec = spec_with_verdict(tmp_path, "second-delete", typescript, url, url, "run(page)")
        script = tmp_path / "rows.py"  # on a copy of the page with one row left, there is no 2nd to press
        script.write_text(text.replace(url, url.replace("1001%2C1002", "1002")), encoding="utf-8")
        failed = run_script(script)
    assert spec.returncode == 0 and "2 passed" in spec.stdout, spec.stdout[-3000:]
    assert failed.returncode != 0 and "AssertionError" in failed.stderr and ".nth(1)" in failed.stderr


def test_a_button_whose_centre_another_covers_is_clicked_where_it_shows(
    sqlite_mem: Any, page: Any, tmp_path: Path
) -> None:
    mem = sqlite_mem
    with serve_site(PAGES) as base:
        result = run(page, mem, f"{base}covered.html", 'Click button "ONE"', ScriptedPolicy(press_the_named_button))
        assert result.success
        text = mem.script(result.run_id)
        assert "click(element)" in text
        assert in_process(text, page, f"{base}covered.html?layout=covered") == {"done": True, "reward": 1}
        typescript = spec_with_verdict(tmp_path, "one-under-two", mem.script(result.run_id, lang="typescript"),
                                       f"{base}covered.html", f"{base}covered.html?layout=covered", "run(page)")
    assert typescript.returncode == 0 and "2 passed" in typescript.stdout, typescript.stdout[-3000:]

"""Secrets never reach storage in plain text: not in any table, not in the event log, not in the callback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

import webmem
from webmem.store.schema import metadata

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
TOKEN = "s3cr3t-token"
PASSWORD = "hunter2-Pa55"
PROPERTY = settings(
    derandomize=True, deadline=None, max_examples=60, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def bytes_on_disk(directory: Path) -> dict[str, bytes]:
    """Every file of the memory directory as it is now (memory.db, its -wal and -shm, events.jsonl)."""
    return {path.name: path.read_bytes() for path in directory.iterdir() if path.is_file()}


def assert_nowhere_stored(mem: webmem.Memory, *needles: str) -> None:
    """Not in any file of the memory directory (with SQLite, the database's own files, byte for byte)
    and, with PostgreSQL, not in any text or JSON column of any stored row. The memory must be open.
    """
    assert mem.directory is not None
    files = bytes_on_disk(mem.directory)
    assert "events.jsonl" in files
    if mem.store.dialect == "sqlite":
        assert "memory.db" in files
    else:
        assert "memory.db" not in files
        files["the database's rows"] = rows.dump(mem).encode()
    assert_absent(files, needles)


def assert_nowhere_on_disk(directory: Path, *needles: str) -> None:
    """Not in any file of the memory directory (the database included, when it is SQLite's)."""
    files = bytes_on_disk(directory)
    assert "events.jsonl" in files
    assert_absent(files, needles)


def assert_absent(files: dict[str, bytes], needles: tuple[str, ...]) -> None:
    for name, data in files.items():
        for needle in needles:
            for encoded in (needle.encode("utf-8"), needle.encode("utf-16-le"), needle.encode("utf-16-be")):
                assert encoded not in data, f"{needle!r} found in {name}"


def every_stored_value(mem: webmem.Memory) -> str:
    """All rows of all tables, as one text (JSON columns decoded), to look for secrets through SQL."""
    chunks: list[str] = []
    with mem.store.read() as conn:
        for table in metadata.sorted_tables:
            for row in conn.execute(select(table)):
                chunks.append(json.dumps([str(value) for value in row], ensure_ascii=False))
                chunks.append(json.dumps(list(row._mapping.values()), ensure_ascii=False, default=str))
    return "\n".join(chunks)


def step_values(mem: webmem.Memory, run: webmem.Run) -> list[str | None]:
    return [step.value for step in mem.runs.steps(run.id)]


# --- typed passwords --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "selector", "secret"),
    [
        ('textbox "Password"', None, False),
        ('textbox "Confirm password"', "#confirm", False),
        ("textbox \"PIN\"", None, False),
        (None, "input[type=password]", False),
        ('textbox "Search"', 'input[type="password"]', False),
        ('textbox "Search"', "#q", True),
        (None, None, True),
    ],
)
def test_a_value_typed_into_a_password_field_is_stored_as_a_placeholder(
    mem: webmem.Memory, events: list[dict[str, Any]], target: str | None, selector: str | None, secret: bool
) -> None:
    run = mem.start_run(goal="Log in", start_url=SHOP)
    returned = run.record_step(action="type", target=target, selector=selector, value=PASSWORD, url=SHOP,
                               secret=secret)
    assert returned.value == "{password}"
    assert step_values(mem, run) == ["{password}"]
    run.finish(success=True, outcome="Logged in")
    (trajectory,) = mem.trajectories.list()
    assert [step.value for step in trajectory.steps] == ["{password}"]
    assert "{password}" in mem.trajectories.format_reference(trajectory)
    assert PASSWORD not in every_stored_value(mem)
    assert PASSWORD not in json.dumps(events)
    assert_nowhere_stored(mem, PASSWORD)


def test_an_ordinary_field_keeps_its_value(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Search", start_url=SHOP)
    run.record_step(action="type", target='textbox "Search"', selector="#q", value="smart watch")
    assert step_values(mem, run) == ["smart watch"]


def test_a_registered_secret_typed_into_a_password_field_keeps_its_own_name(mem: webmem.Memory) -> None:
    mem.secrets.add(PASSWORD, name="shop_password")
    run = mem.start_run(goal="Log in", start_url=SHOP)
    run.record_step(action="type", target='textbox "Password"', value=PASSWORD)
    assert step_values(mem, run) == ["{shop_password}"]


# --- registered secrets -----------------------------------------------------------------------


def use_the_secret_everywhere(mem: webmem.Memory) -> webmem.Run:
    """A run that mentions the token in every place a user could put it."""
    run = mem.start_run(goal=f"Log in with token {TOKEN} and read the inbox", start_url=f"{SHOP}?token={TOKEN}")
    run.context()
    run.record_step(action="type", target='textbox "API token"', selector="#token", value=TOKEN,
                    url=f"{SHOP}login?token={TOKEN}", expected_effect=f"the field shows {TOKEN}")
    run.record_step(action="type", target='textbox "Note"', selector="#note", value=f"my token is {TOKEN}!",
                    url=f"{SHOP}login")
    run.record_step(action="click", target=f'button "Use {TOKEN}"', selector=f"[data-token='{TOKEN}']",
                    url=f"{SHOP}inbox?t={TOKEN}", ok=False, error=f"401 Unauthorized for token {TOKEN}")
    run.update(current_url=f"{SHOP}inbox?token={TOKEN}", artifact_paths=[f"shots/{TOKEN}.png"])
    mem.knowledge.record_fact(DOMAIN, "quirk", f"token {TOKEN}", f"the token {TOKEN} expires hourly")
    mem.selectors.record(DOMAIN, f'link "{TOKEN}"', f"#link-{TOKEN}")
    run.finish(
        success=True, outcome=f"Read the inbox using {TOKEN}", final_url=f"{SHOP}inbox?token={TOKEN}",
        facts=[{"type": "timing", "key": "login", "value": f"{TOKEN} login takes 2s"}],
    )
    later = mem.start_run(goal=f"Log in with token {TOKEN} again", start_url=SHOP)
    assert "{api_token}" in str(later.context())
    with pytest.raises(RuntimeError), mem.start_run(goal="Crash", start_url=SHOP):
        raise RuntimeError(f"crashed while typing {TOKEN}")
    return run


def check_the_secret_is_replaced(mem: webmem.Memory, run: webmem.Run, events: list[dict[str, Any]]) -> None:
    manifest = mem.runs.get(run.id)
    assert manifest.goal == "Log in with token {api_token} and read the inbox"
    assert manifest.start_url == f"{SHOP}?token={{api_token}}"
    assert manifest.final_url == f"{SHOP}inbox?token={{api_token}}"
    assert manifest.summary == "Read the inbox using {api_token}"
    assert manifest.artifact_paths == ["shots/{api_token}.png"]
    steps = mem.runs.steps(run.id)
    assert [s.value for s in steps] == ["{api_token}", "my token is {api_token}!", None]
    assert steps[0].url == f"{SHOP}login?token={{api_token}}"
    assert steps[0].expected_effect == "the field shows {api_token}"
    assert steps[2].error == "401 Unauthorized for token {api_token}"
    assert steps[2].target == 'button "Use {api_token}"'
    (session, *_) = [s for s in mem.knowledge.sessions(DOMAIN) if s.run_id == run.id]
    assert (session.goal, session.outcome) == (manifest.goal, manifest.summary)
    assert session.final_url == manifest.final_url
    facts = {(f.key, f.value) for f in mem.knowledge.facts(DOMAIN, min_confidence=0)}
    assert ("token {api_token}", "the token {api_token} expires hourly") in facts
    assert ("login", "{api_token} login takes 2s") in facts
    elements = {(e.element, e.stable_selector) for e in mem.selectors.list(DOMAIN)}
    assert ('link "{api_token}"', "#link-{api_token}") in elements
    (trajectory,) = mem.trajectories.list()
    assert trajectory.goal == manifest.goal
    crashed = mem.runs.list(status="failed")[0]
    assert crashed.reason is not None and "{api_token}" in crashed.reason

    stored = every_stored_value(mem)
    assert TOKEN not in stored and "{api_token}" in stored
    callback = json.dumps(events, ensure_ascii=False)
    assert events and TOKEN not in callback and "{api_token}" in callback
    log = (mem.directory / "events.jsonl").read_text(encoding="utf-8")
    assert TOKEN not in log and "{api_token}" in log
    assert_nowhere_stored(mem, TOKEN)


def test_a_secret_added_to_the_registry_is_replaced_everywhere(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    assert mem.secrets.add(TOKEN, name="api_token") == "{api_token}"
    run = use_the_secret_everywhere(mem)
    check_the_secret_is_replaced(mem, run, events)  # while the database is open: WAL not checkpointed
    mem.close()
    assert mem.directory is not None
    assert_nowhere_on_disk(mem.directory, TOKEN)  # SQLite: the checkpointed file too


def test_a_secret_given_to_open_is_replaced_everywhere(open_memory: Any, memory_dir: Path) -> None:
    events: list[dict[str, Any]] = []
    with open_memory(secrets={"api_token": TOKEN}, on_event=events.append) as mem:
        run = use_the_secret_everywhere(mem)
        check_the_secret_is_replaced(mem, run, events)
    assert_nowhere_on_disk(memory_dir, TOKEN)


def test_components_called_directly_redact_too(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    mem.secrets.add(TOKEN, name="api_token")
    session = mem.knowledge.record_session(
        DOMAIN, goal=f"goal {TOKEN}", outcome=f"outcome {TOKEN}", success=True, final_url=f"{SHOP}?t={TOKEN}"
    )
    assert (session.goal, session.outcome, session.final_url) == (
        "goal {api_token}", "outcome {api_token}", f"{SHOP}?t={{api_token}}"
    )
    saved = mem.trajectories.save(
        goal=f"Use {TOKEN}", start_url=SHOP,
        steps=[webmem.Step(action="type", target='textbox "Token"', value=TOKEN, url=f"{SHOP}?t={TOKEN}",
                           error=f"bad {TOKEN}")],
    )
    (stored,) = mem.trajectories.list()
    assert stored == saved and stored.goal == "Use {api_token}"
    assert (stored.steps[0].value, stored.steps[0].url, stored.steps[0].error) == (
        "{api_token}", f"{SHOP}?t={{api_token}}", "bad {api_token}"
    )
    assert mem.trajectories.match(f"something unrelated {TOKEN}", origin=SHOP).best is None  # event has the goal
    assert mem.knowledge.sessions(DOMAIN)[0] == session
    assert any(e["event"] == "trajectory_missed" and "{api_token}" in e["goal"] for e in events)
    assert TOKEN not in json.dumps(events) and TOKEN not in every_stored_value(mem)
    assert_nowhere_stored(mem, TOKEN)


def test_secrets_given_as_a_list_get_the_generic_placeholder(open_memory: Any, memory_dir: Path) -> None:
    with open_memory(secrets=[TOKEN, PASSWORD]) as mem:
        run = mem.start_run(goal=f"Use {TOKEN}", start_url=SHOP)
        run.record_step(action="type", target='textbox "Token"', value=f"{TOKEN} {PASSWORD}")
        assert step_values(mem, run) == ["{secret} {secret}"]
        assert run.manifest.goal == "Use {secret}"
        assert_nowhere_stored(mem, TOKEN, PASSWORD)
    assert_nowhere_on_disk(memory_dir, TOKEN, PASSWORD)


def test_the_longest_secret_wins_when_secrets_overlap(mem: webmem.Memory) -> None:
    mem.secrets.add("abc-123", name="short")
    mem.secrets.add("abc-123-xyz", name="long")
    run = mem.start_run(goal="overlap abc-123-xyz and abc-123", start_url=SHOP)
    assert run.manifest.goal == "overlap {long} and {short}"


secret_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), exclude_characters="{}"),
    min_size=8, max_size=24,
).filter(lambda s: s.strip() == s and s not in "{api_token}")
free_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="{}"), max_size=40
)


@given(secret=secret_text, before=free_text, after=free_text)
@PROPERTY
def test_redaction_round_trip_property(open_memory: Any, secret: str, before: str, after: str) -> None:
    """Whatever surrounds a registered secret, the stored text hides it and keeps everything else."""
    registry = webmem.SecretRegistry({"api_token": secret})
    placeholder = "{api_token}"
    original = f"{before}{secret}{after}"
    redacted = registry.redact(original)
    assert redacted is not None and secret not in redacted
    assert redacted.replace(placeholder, secret) == original

    with open_memory(secrets={"api_token": secret}) as mem:
        run = mem.start_run(goal=f"goal {original}", start_url=SHOP)
        run.record_step(action="type", target='textbox "Note"', value=original, error=original)
        (step,) = mem.runs.steps(run.id)
        assert step.value == step.error == redacted
        assert run.manifest.goal == f"goal {redacted}".strip()
        assert secret not in json.dumps([run.manifest.model_dump(mode="json"), step.model_dump()], ensure_ascii=False)


# --- bad secrets ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "ab", 12345, None, b"bytes-secret", ["s3cr3t"]])
def test_a_too_short_or_non_string_secret_is_refused(mem: webmem.Memory, open_memory: Any, value: object) -> None:
    with pytest.raises(webmem.InvalidInput, match="secret"):
        mem.secrets.add(value)  # type: ignore[arg-type]
    with pytest.raises(webmem.InvalidInput, match="secret"):
        open_memory(secrets={"api_token": value})
    with pytest.raises(webmem.InvalidInput, match="secret"):
        open_memory(secrets=[value])
    assert len(mem.secrets) == 0


@pytest.mark.parametrize("name", ["", "api token", "{x}", "x" * 42, "1abc", 7])
def test_a_bad_placeholder_name_is_refused(mem: webmem.Memory, name: object) -> None:
    with pytest.raises(webmem.InvalidInput, match="name"):
        mem.secrets.add(TOKEN, name=name)  # type: ignore[arg-type]


def test_secrets_as_a_plain_string_are_refused(open_memory: Any) -> None:
    with pytest.raises(webmem.InvalidInput, match="secrets"):
        open_memory(secrets=TOKEN)


# --- secrets in every form, from every write path (issue 27) ---------------------------------------

FORM_SECRET = "p@ss w0rd!xyz"


def test_a_lesson_recorded_directly_is_redacted(open_memory: Any, memory_dir: Path) -> None:
    with open_memory(secrets={"password": "Hunter2Regd"}) as mem:
        lesson = mem.lessons.record("Always type Hunter2Regd first", "best_practice",
                                    failed_command="fill Hunter2Regd", error_pattern="Rejected Hunter2Regd",
                                    recovery="type Hunter2Regd")
        assert "Hunter2Regd" not in lesson.model_dump_json() and "{password}" in lesson.lesson
        assert "Hunter2Regd" not in mem.lessons.system_prompt_section()
        assert_nowhere_stored(mem, "Hunter2Regd", "hunter2regd")
    assert_nowhere_on_disk(memory_dir, "Hunter2Regd", "hunter2regd")


def test_a_secret_is_found_in_every_form_a_browser_or_server_writes_it(open_memory: Any, memory_dir: Path) -> None:
    import base64
    from urllib.parse import quote, quote_plus

    forms = [quote_plus(FORM_SECRET), quote(FORM_SECRET, safe=""), quote(FORM_SECRET, safe="").lower(),
             "p%40ss+w0rd!xyz", "p@ss%20w0rd%21xyz", "p@ss w0rd!xyz".replace(" ", "&#32;").replace("@", "&#64;"),
             base64.b64encode(FORM_SECRET.encode()).decode()]
    basic = base64.b64encode(f"admin:{FORM_SECRET}".encode()).decode()
    with open_memory(secrets={"password": FORM_SECRET}) as mem:
        run = mem.start_run(goal="Log in", start_url=SHOP)
        run.record_step(action="click", target='button "Log in"', url=f"{SHOP}login?user=ann&pw={forms[0]}&next=/")
        run.record_step(action="click", target='button "Go"', url=f"{SHOP}?pw={forms[3]}", ok=False,
                        error=f"POST body pw={forms[1]}; Authorization: Basic {basic}")
        run.record_step(action="click", target='button "Again"', url=f"{SHOP}?pw={forms[2]}",
                        error=f'{{"password": {json.dumps(FORM_SECRET)}}} then pw={forms[4]}')
        run.record_step(action="click", target='button "Token"', url=f"{SHOP}?t={forms[6]}",
                        error=f"<input value='{html_escape(FORM_SECRET)}'>")
        run.update(current_url=f"{SHOP}account?pw={forms[0]}")
        run.finish(success=True, final_url=f"{SHOP}done?pw={forms[1]}")
        stored = every_stored_value(mem)
        assert "{password}" in stored
        assert_nowhere_stored(mem, FORM_SECRET, *forms[:5], forms[6], basic, html_escape(FORM_SECRET))
    assert_nowhere_on_disk(memory_dir, FORM_SECRET, *forms[:5], forms[6], basic)


def html_escape(text: str) -> str:
    import html

    return html.escape(text)


def test_a_value_marked_secret_is_secret_everywhere_after(mem: webmem.Memory) -> None:
    unmarked = "Zq9-kept-quiet"
    run = mem.start_run(goal="Sign up", start_url=SHOP)
    run.record_step(action="type", target='textbox "Code"', value=unmarked, secret=True)
    run.record_step(action="type", target='textbox "Code"', value=unmarked, ok=False,
                    error=f'fill: Timeout while filling "{unmarked}"')
    run.record_step(action="click", target='button "Next"', url=f"{SHOP}next?code={unmarked.replace('-', '%2D')}")
    run.working.add_extraction("form", {"code": unmarked, "note": f"typed {unmarked}"})
    run.working.record_cycle(f"type {unmarked}", {"tool": "type", "parameters": {"text": unmarked}},
                             observation=f"the box shows {unmarked}")
    run.finish(success=True, final_url=f"{SHOP}done?c={unmarked}")
    assert [step.value for step in mem.runs.steps(run.id)][:2] == ["{password}", "{password}"]
    assert "{password}" in mem.runs.steps(run.id)[1].error
    assert_nowhere_stored(mem, unmarked, unmarked.replace("-", "%2D"))


def test_a_password_typed_from_the_goal_stays_a_slot_of_the_goal(mem: webmem.Memory) -> None:
    run = mem.start_run(goal='Log in as ann with password "Gx7-goal-pw"', start_url=SHOP)
    run.record_step(action="type", target='textbox "Password"', value="Gx7-goal-pw")
    assert mem.runs.steps(run.id)[0].value == "{goal:1}" and "Gx7-goal-pw" not in mem.secrets


def test_no_form_of_either_secret_in_any_file_export_or_cli_output(tmp_path: Path) -> None:
    """One registered value and one value marked secret, raw and encoded, through the write paths; then
    every file, every export format and every listing of the CLI is searched for any form of them."""
    import base64
    from urllib.parse import quote, quote_plus

    from click.testing import CliRunner

    from webmem.cli import cli

    registered, marked = "Reg1stered pw&x", "Mark3d-value!z"
    forms = [form for value in (registered, marked) for form in (
        value, quote_plus(value), quote(value, safe=""), quote(value, safe="").lower(),
        base64.b64encode(value.encode()).decode().rstrip("="), json.dumps(value)[1:-1],
        base64.b64encode(f"ann:{value}".encode()).decode())]
    directory = tmp_path / "memory"
    with webmem.Memory.open(directory, secrets={"password": registered}) as mem:
        run = mem.start_run(goal="Sign up and pay", start_url=SHOP, episode="signup")
        run.record_step(action="type", target='textbox "Code"', value=marked, secret=True, url=SHOP)
        for value in (registered, marked):
            run.record_step(action="click", target='button "Pay"', ok=False, url=f"{SHOP}pay?pw={quote_plus(value)}",
                            error=f"rejected {value} ({quote(value, safe='')}); Basic "
                                  f"{base64.b64encode(f'ann:{value}'.encode()).decode()}")
            run.working.add_extraction("form", {"secret": value})
            mem.lessons.record(f"Never retype {value}", "best_practice", domain="www.example-shop.com")
            mem.knowledge.record_fact("www.example-shop.com", "quirk", "checkout", f"needs {quote_plus(value)}")
        run.finish(success=True, outcome=f"paid with {marked}", final_url=f"{SHOP}done?c={quote(marked, safe='')}")
    assert_nowhere_on_disk(directory, *forms)
    runner = CliRunner()
    outputs = []
    for kind in ("runs", "trajectories", "facts", "sessions", "selectors", "lessons", "episodes"):
        for output in ("json", "jsonl", "csv"):
            outputs.append(runner.invoke(cli, ["--memory-dir", str(directory), "export", "--kind", kind,
                                               "--format", output]).stdout)
    for command in (["runs", "--json"], ["runs", "show", run.id], ["lessons", "--json"], ["stats", "--json"],
                    ["export", "--kind", "lessons", "--format", "prompt"], ["episodes", "signup", "--format", "csv"],
                    ["context", "--goal", "Sign up and pay", "--url", SHOP]):
        outputs.append(runner.invoke(cli, ["--memory-dir", str(directory), *command]).stdout)
    agent_memory = tmp_path / "exported"
    runner.invoke(cli, ["--memory-dir", str(directory), "export", "--format", "agent-memory", "-o", str(agent_memory)])
    outputs += [path.read_text(encoding="utf-8") for path in agent_memory.rglob("*.json")]
    text = "\n".join(outputs)
    assert "{password}" in text
    for form in forms:
        assert form not in text, form


def test_a_write_that_forgets_to_redact_still_stores_no_secret(open_memory: Any) -> None:
    """The store redacts every text it is given (the one point every component's writes pass), so a
    component that does not redact, or one written later, cannot store a secret; ids are left alone."""
    from urllib.parse import quote_plus

    from sqlalchemy import update

    from webmem.store.schema import runs, trajectories

    mem = open_memory(secrets={"password": "Zx9-hidden"})
    run = mem.start_run(goal="Buy", start_url=SHOP)
    run.record_step(action="click", target='button "Buy"')
    run.finish(success=True)
    (saved,) = mem.trajectories.list()
    with mem.store.write() as conn:  # as a careless component would: no redaction of its own
        conn.execute(update(runs).where(runs.c.run_id == run.id).values(
            goal="Buy with Zx9-hidden", summary=f"paid {quote_plus('Zx9-hidden')}"))
        conn.execute(update(trajectories).where(trajectories.c.trajectory_id == saved.id).values(
            steps=[{"action": "type", "value": "Zx9-hidden", "error": "no Zx9-hidden"}]))
    assert mem.runs.get(run.id).goal == "Buy with {password}"
    assert mem.runs.get(run.id).summary == "paid {password}"
    with mem.store.read() as conn:
        steps = conn.execute(select(trajectories.c.steps).where(trajectories.c.trajectory_id == saved.id)).scalar_one()
    assert steps == [{"action": "type", "value": "{password}", "error": "no {password}"}]
    assert "Zx9-hidden" not in every_stored_value(mem)
    assert_nowhere_stored(mem, "Zx9-hidden")



def test_a_secret_of_digits_changes_texts_never_numbers_or_ids(open_memory: Any) -> None:
    mem = open_memory(secrets={"pin": "4821"})
    run = mem.start_run(goal="Pay with pin 4821", start_url=SHOP, session_id="s-4821")
    run.record_step(action="type", target='textbox "PIN"', value="4821", duration_ms=48210)
    run.working.add_extraction("numbers", {"total": 14821.5, "count": 4821, "note": "pin 4821"})
    run.finish(success=True, outcome="paid 4821")
    (step,) = mem.runs.steps(run.id)
    assert (step.value, step.duration_ms) == ("{pin}", 48210)
    assert mem.runs.get(run.id).session_id == "s-4821"  # an identifier, not a text: left alone
    (trajectory,) = mem.trajectories.list()
    assert trajectory.steps[0].duration_ms == 48210 and trajectory.goal == "Pay with pin {pin}"
    from webmem.store.schema import working_state

    with mem.store.read() as conn:
        state = conn.execute(select(working_state.c.state).where(working_state.c.run_id == run.id)).scalar_one()
    assert '"total": 14821.5' in json.dumps(state) and '"count": 4821' in json.dumps(state)  # numbers intact
    assert '"note": "pin {pin}"' in json.dumps(state)

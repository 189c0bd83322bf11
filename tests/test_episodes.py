"""Graded episodes: reps per session, the entry and grading models, grading by step, retrieval of
REPEAT/AVOID advice across reps (IoU filter, top-k, weighted ranking, distinct actions, one of each
kind), runs recording episode steps, and secrets kept out of page states. All on real SQLite files."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import rows
from pydantic import ValidationError

import webmem
from webmem import EnvironmentState, EpisodeEntry, EpisodeStore, HashingEmbedder, InvalidInput, RetrievedMemory
from webmem.core.embeddings import cosine
from webmem.episodes.aria import element_iou
from webmem.episodes.store import ENV_THRESHOLD, ENV_TOP_K, ENV_WEIGHT, RETRIEVE_LIMIT, STATE_WEIGHT, action_signature

TICKETS = "https://support.example.com/tickets"
BASE = [("button", f"Action {i}") for i in range(10)]
QUERY = "change the priority of ticket 4021 to high"
OTHER_STATES = [
    "browse holiday photos from the lake trip",
    "download the quarterly sales spreadsheet",
    "reply to grandma about sunday lunch plans",
    "compare running shoes under fifty dollars",
    "book a dentist appointment next tuesday",
    "rename the vacation album to summer",
    "check the weather forecast for oslo",
    "unsubscribe from the newsletter about gardening",
    "print the boarding pass for flight ab123",
    "order more printer paper for the office",
    "find the recipe for lemon cake",
]


def env(keys: list[tuple[str, str]], *, url: str = TICKETS, title: str = "Tickets") -> dict[str, Any]:
    return {"url": url, "title": title, "elements": [{"role": role, "name": name} for role, name in keys]}


@dataclass
class S:
    """One step to play: page, agent state, action, element text and its grade (None: left ungraded)."""

    page: dict[str, Any]
    state: str
    action: str
    text: str
    ok: bool | None = None
    why: str = ""
    fix: str | None = None
    confidence: float = 1.0


def play_rep(
    store: EpisodeStore, session: str, steps: list[S], *, completed: bool = True, explanation: str = ""
) -> list[EpisodeEntry]:
    """A whole rep: init, record, persist, grade the steps that have a verdict."""
    store.init_episode(session)
    for step in steps:
        pending = store.record_step_start(step.page, step.state, step.action, step.text)
        store.record_step_end(pending, step.page)
    store.persist_memories()
    grades = [
        {"step_number": number, "is_correct": step.ok, "explanation": step.why, "correction": step.fix,
         "confidence": step.confidence}
        for number, step in enumerate(steps, start=1) if step.ok is not None
    ]
    return store.add_grades_to_memories(
        {"task_completed": completed, "overall_explanation": explanation, "step_grades": grades}
    )


def store_for(mem: webmem.Memory, **params: Any) -> EpisodeStore:
    return EpisodeStore(mem.scope, **params)


def expected_score(page: dict[str, Any], entry: EpisodeEntry, query: str, weight: float = 0.65) -> float:
    embedder = HashingEmbedder()
    env_sim = element_iou(EnvironmentState.model_validate(page), entry.env_pre)
    state_sim = cosine(embedder.embed([query])[0], embedder.embed([entry.internal_state])[0])
    return weight * env_sim + (1 - weight) * state_sim


# --- init_episode -------------------------------------------------------------------------------


def test_defaults_are_those_of_the_issue() -> None:
    assert (ENV_THRESHOLD, ENV_TOP_K, ENV_WEIGHT, STATE_WEIGHT, RETRIEVE_LIMIT) == (0.7, 10, 0.65, 0.35, 2)


def test_reps_count_from_one_per_session_and_sessions_are_independent(mem: webmem.Memory) -> None:
    episodes = mem.episodes
    first = episodes.init_episode("s")
    assert (first.session_id, first.rep, first.next_step) == ("s", 1, 1)
    assert episodes.current is first
    assert episodes.init_episode("s").rep == 2
    assert episodes.init_episode("t").rep == 1
    assert episodes.init_episode("s").rep == 3
    assert episodes.init_episode("t").rep == 2


def test_rep_numbers_survive_reopening_the_memory(open_memory: Any) -> None:
    with open_memory() as mem:
        mem.episodes.init_episode("s")
        mem.episodes.init_episode("s")
    with open_memory() as mem:
        assert mem.episodes.init_episode("s").rep == 3


def test_rep_resumes_an_existing_rep_and_step_numbers_continue(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    episodes = mem.episodes
    episodes.init_episode("s")
    for n in range(3):
        episodes.record_step_start(env(BASE), QUERY, f"click('{n}')", f"Action {n}")
    episodes.persist_memories()
    assert episodes.init_episode("s").rep == 2

    resumed = episodes.init_episode("s", rep=1)
    assert (resumed.rep, resumed.next_step) == (1, 4)
    step = episodes.record_step_start(env(BASE), QUERY, "click('9')", "Action 9")
    assert step.step_num == 4
    episodes.persist_memories()
    assert [(e.rep, e.step_num) for e in episodes.load_all_memories_for_session("s")] == [(1, 1), (1, 2), (1, 3), (1, 4)]
    started = [e for e in events if e["event"] == "episode_started"]
    assert [(e["rep"], e["resumed"]) for e in started] == [(1, False), (2, False), (1, True)]
    # resuming did not add a rep; the next one is 3, and rep == last + 1 starts it explicitly
    assert episodes.init_episode("s", rep=3).rep == 3
    assert episodes.init_episode("s", rep=3).rep == 3  # resuming the latest rep does not add one either
    assert episodes.init_episode("s").rep == 4


def test_a_resumed_rep_without_steps_starts_at_step_one(mem: webmem.Memory) -> None:
    mem.episodes.init_episode("s")
    mem.episodes.init_episode("s")
    assert mem.episodes.init_episode("s", rep=1).next_step == 1
    assert mem.episodes.init_episode("fresh", rep=1).rep == 1


@pytest.mark.parametrize("rep", [3, 7])
def test_a_rep_beyond_the_next_one_is_rejected_and_changes_nothing(mem: webmem.Memory, rep: int) -> None:
    mem.episodes.init_episode("s")
    with pytest.raises(InvalidInput, match=rf"^rep: session 's' has 1 reps; the next one is 2, not {rep}$"):
        mem.episodes.init_episode("s", rep=rep)
    with pytest.raises(InvalidInput, match="^rep: .*the next one is 1, not 2$"):
        mem.episodes.init_episode("new", rep=2)
    assert mem.episodes.init_episode("s").rep == 2
    assert mem.episodes.init_episode("new").rep == 1


@pytest.mark.parametrize("rep", [0, -1, True, "2", 1.0])
def test_rep_must_be_a_positive_integer(mem: webmem.Memory, rep: Any) -> None:
    with pytest.raises(InvalidInput, match="^rep: expected a positive integer"):
        mem.episodes.init_episode("s", rep=rep)


@pytest.mark.parametrize("session", ["", "has space", "a/b", 7, None])
def test_session_id_is_validated(mem: webmem.Memory, session: Any) -> None:
    with pytest.raises(InvalidInput, match="^session_id: "):
        mem.episodes.init_episode(session)


def test_steps_need_a_current_episode(mem: webmem.Memory) -> None:
    with pytest.raises(InvalidInput, match="init_episode"):
        mem.episodes.record_step_start(env(BASE), QUERY, "click('1')", "x")
    with pytest.raises(InvalidInput, match="init_episode"):
        mem.episodes.persist_memories()
    with pytest.raises(InvalidInput, match="init_episode"):
        mem.episodes.add_grades_to_memories({"task_completed": True, "step_grades": []})
    with pytest.raises(InvalidInput, match="init_episode"):
        mem.episodes.retrieve_memories(env(BASE), QUERY)


def test_namespaces_are_isolated(open_memory: Any) -> None:
    with open_memory(namespace="team-a") as a, open_memory(namespace="team-b") as b:
        play_rep(a.episodes, "s", [S(env(BASE), QUERY, "click('1')", "Action 1", ok=False, fix="do 2")])
        assert a.episodes.init_episode("s").rep == 2
        assert len(a.episodes.retrieve_memories(env(BASE), QUERY)) == 1

        assert b.episodes.init_episode("s").rep == 1
        assert b.episodes.load_all_memories_for_session("s") == []
        assert b.episodes.init_episode("s").rep == 2
        assert b.episodes.retrieve_memories(env(BASE), QUERY) == []
        assert b.episodes.reembed() == 0
        assert len(a.episodes.load_all_memories_for_session("s")) == 1


# --- entry and grading validation -------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ({"title": "Tickets", "elements": []}, "env_pre.url: Field required"),
        ({"url": ""}, "env_pre.url: String should have at least 1 character"),
        ({"url": "not a url"}, "env_pre.url: Value error, the URL contains whitespace"),
        ({"url": "tickets/4021"}, "env_pre.url: Value error, 'tickets/4021' is not an absolute URL"),
        ({"url": 42}, "env_pre.url: Input should be a valid string"),
        ({"url": TICKETS, "elements": "button Save"}, "env_pre.elements: Input should be a valid list"),
        ({"url": TICKETS, "elements": {"role": "button"}}, "env_pre.elements: Input should be a valid list"),
        ({"url": TICKETS, "elements": [{"name": "Save"}]}, "env_pre.elements.0.role: Field required"),
        ({"url": TICKETS, "elements": [{"role": "button", "name": 3}]}, "env_pre.elements.0.name: Input should be a valid string"),
        ({"url": TICKETS, "title": None}, "env_pre.title: Input should be a valid string"),
        ({"url": TICKETS, "colour": "red"}, "env_pre.colour: Extra inputs are not permitted"),
        ("https://support.example.com/tickets", "env_pre: expected an EnvironmentState or a mapping"),
    ],
)
def test_bad_env_pre_is_rejected_with_the_field_and_the_reason(mem: webmem.Memory, page: Any, message: str) -> None:
    mem.episodes.init_episode("s")
    with pytest.raises(InvalidInput) as caught:
        mem.episodes.record_step_start(page, QUERY, "click('1')", "Save")
    assert str(caught.value).startswith(message)
    assert mem.episodes.current.pending == []
    assert mem.episodes.current.next_step == 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"action": ""}, "action: must not be empty"),
        ({"action": "   "}, "action: must not be empty"),
        ({"action": None}, "action: expected a string, got NoneType"),
        ({"action": "x" * 1001}, "action: 1001 characters is more than the maximum 1000"),
        ({"internal_state": 42}, "internal_state: expected a string, got int"),
        ({"internal_state": ["a"]}, "internal_state: expected a string, got list"),
        ({"internal_state": "x" * 10_001}, "internal_state: 10001 characters is more than the maximum 10000"),
        ({"action_element_text": None}, "action_element_text: expected a string, got NoneType"),
        ({"think": 1.5}, "think: expected a string, got float"),
        ({"step_id": "has space"}, "step_id: String should match pattern"),
        ({"step_id": ""}, "step_id: String should have at least 1 character"),
    ],
)
def test_bad_step_fields_are_rejected_with_the_field_and_the_reason(
    mem: webmem.Memory, changes: dict[str, Any], message: str
) -> None:
    mem.episodes.init_episode("s")
    arguments = {"env_pre": env(BASE), "internal_state": QUERY, "action": "click('1')", "action_element_text": "x",
                 **changes}
    with pytest.raises(InvalidInput) as caught:
        mem.episodes.record_step_start(**arguments)
    assert str(caught.value).startswith(message)
    assert mem.episodes.current.pending == []


def test_bad_env_post_is_rejected_and_needs_the_pending_step(mem: webmem.Memory) -> None:
    mem.episodes.init_episode("s")
    step = mem.episodes.record_step_start(env(BASE), QUERY, "click('1')", "x")
    with pytest.raises(InvalidInput, match="^env_post.url: Field required"):
        mem.episodes.record_step_end(step, {"title": "after"})
    with pytest.raises(InvalidInput, match="^env_post.elements: Input should be a valid list"):
        mem.episodes.record_step_end(step, {"url": TICKETS, "elements": 5})
    with pytest.raises(InvalidInput, match="^step: expected the PendingStep"):
        mem.episodes.record_step_end({"step_num": 1}, env(BASE))  # type: ignore[arg-type]
    assert step.env_post is None


def test_the_entry_model_itself_is_validated() -> None:
    good = {
        "id": 1, "session_id": "s", "env_pre": EnvironmentState(url=TICKETS), "internal_state": "x",
        "internal_state_embedding": [1.0], "embedder": "e", "action": "click('1')", "action_element_text": "x",
        "created_at": datetime(2024, 1, 1, tzinfo=timezone.utc), "step_num": 1, "rep": 1,
    }
    assert EpisodeEntry(**good).outcome == "pending"
    for field, value, reason in [
        ("outcome", "maybe", "outcome: Input should be 'pending', 'success' or 'failure'"),
        ("step_num", 0, "step_num: Input should be greater than or equal to 1"),
        ("grade_confidence", 1.5, "grade_confidence: Input should be less than or equal to 1"),
        ("internal_state", 5, "internal_state: Input should be a valid string"),
        ("surprise", 1, "surprise: Extra inputs are not permitted"),
    ]:
        with pytest.raises(InvalidInput) as caught:
            webmem.core.models.validated(EpisodeEntry, **{**good, field: value})
        assert str(caught.value) == reason
    with pytest.raises(ValidationError):
        EpisodeEntry(**{**good, "env_pre": {"url": ""}})


def recorded_rep(mem: webmem.Memory, *, ids: bool = True) -> list[EpisodeEntry]:
    episodes = mem.episodes
    episodes.init_episode("s")
    for n, name in enumerate(["open", "delete", "select"], start=1):
        episodes.record_step_start(env(BASE), f"state {n}", f"click('{n}')", name, step_id=name if ids else None)
    return episodes.persist_memories()


GOOD_GRADE = {"step_number": 1, "is_correct": True, "explanation": "fine"}


@pytest.mark.parametrize(
    ("grading", "message"),
    [
        ({"task_completed": True, "step_grades": [{**GOOD_GRADE, "confidence": 1.01}]},
         "grading: step_grades.0.confidence: Input should be less than or equal to 1"),
        ({"task_completed": True, "step_grades": [{**GOOD_GRADE, "confidence": -0.1}]},
         "grading: step_grades.0.confidence: Input should be greater than or equal to 0"),
        ({"task_completed": True, "step_grades": [], "verdict": "ok"},
         "grading: verdict: Extra inputs are not permitted"),
        ({"task_completed": True, "step_grades": [{**GOOD_GRADE, "severity": "high"}]},
         "grading: step_grades.0.severity: Extra inputs are not permitted"),
        ({"task_completed": True, "step_grades": [{"step_number": 1}]},
         "grading: step_grades.0.is_correct: Field required"),
        ({"step_grades": []}, "grading: task_completed: Field required"),
        ({"task_completed": True, "completion_confidence": 2, "step_grades": []},
         "grading: completion_confidence: Input should be less than or equal to 1"),
        ({"task_completed": True, "step_grades": [{**GOOD_GRADE, "step_number": 0}]},
         "grading: step_grades.0.step_number: Input should be greater than or equal to 1"),
        ({"task_completed": True, "step_grades": [GOOD_GRADE, {"is_correct": False, "explanation": "?"}]},
         "grading: step_grades.1 names no step (give step_id or step_number)"),
        ("all good", "grading: expected a GradingResult or a mapping"),
    ],
)
def test_bad_gradings_are_rejected_with_the_field_and_nothing_is_applied(
    mem: webmem.Memory, grading: Any, message: str
) -> None:
    before = recorded_rep(mem)
    with pytest.raises(InvalidInput) as caught:
        mem.episodes.add_grades_to_memories(grading)
    assert str(caught.value).startswith(message)
    assert mem.episodes.load_all_memories_for_session("s") == before


# --- persist_memories --------------------------------------------------------------------------


def test_persist_stores_pending_entries_with_embedding_and_page_states(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    episodes = mem.episodes
    episodes.init_episode("s")
    before = env(BASE, title="Ticket 4021")
    after = env([*BASE, ("option", "High")], title="Ticket 4021 - priority")
    step = episodes.record_step_start(before, QUERY, "click('17')", "Priority dropdown", think="open it", step_id="a-1")
    assert step.step_num == 1
    episodes.record_step_end(step, after)
    episodes.record_step_start(before, "second state", "click('18')", "Save button")  # no env_post, no step_id
    stored = episodes.persist_memories()

    assert [e.step_num for e in stored] == [1, 2]
    first, second = stored
    assert (first.session_id, first.rep, first.step_id, first.outcome) == ("s", 1, "a-1", "pending")
    assert (first.action, first.action_element_text, first.think, first.internal_state) == (
        "click('17')", "Priority dropdown", "open it", QUERY)
    assert first.env_pre == EnvironmentState.model_validate(before)
    assert first.env_post == EnvironmentState.model_validate(after)
    assert first.embedder == "hashing-v1-256"
    assert first.internal_state_embedding == HashingEmbedder().embed([QUERY])[0]
    assert (first.outcome_reason, first.correction, first.task_incomplete, first.grade_confidence) == (None,) * 4
    assert first.created_at.tzinfo is not None
    assert (second.step_id, second.env_post, second.think) == (None, None, None)
    assert second.internal_state_embedding == HashingEmbedder().embed(["second state"])[0]

    assert episodes.current.pending == []
    assert episodes.persist_memories() == []
    assert episodes.load_all_memories_for_session("s") == stored
    assert [e["count"] for e in events if e["event"] == "memories_persisted"] == [2]


def test_step_ids_are_unique_within_an_episode(mem: webmem.Memory) -> None:
    episodes = mem.episodes
    episodes.init_episode("s")
    episodes.record_step_start(env(BASE), QUERY, "click('1')", "x", step_id="login")
    with pytest.raises(InvalidInput, match="^step_id: 'login' is already used in this episode$"):
        episodes.record_step_start(env(BASE), QUERY, "click('2')", "y", step_id="login")
    episodes.persist_memories()

    episodes.record_step_start(env(BASE), QUERY, "click('3')", "z", step_id="login")
    with pytest.raises(InvalidInput, match="^step_id: 'login' is already stored in this episode$"):
        episodes.persist_memories()
    assert [e.step_id for e in episodes.load_all_memories_for_session("s")] == ["login"]
    episodes.current.pending.clear()

    episodes.init_episode("s")  # another rep may reuse the id
    episodes.record_step_start(env(BASE), QUERY, "click('1')", "x", step_id="login")
    assert [(e.rep, e.step_id) for e in episodes.persist_memories()] == [(2, "login")]


# --- add_grades_to_memories ---------------------------------------------------------------------


def test_grades_map_by_step_id_and_set_outcome_reason_correction_and_confidence(mem: webmem.Memory) -> None:
    recorded_rep(mem)
    graded = mem.episodes.add_grades_to_memories({
        "task_completed": True,
        "step_grades": [
            {"step_id": "delete", "is_correct": False, "explanation": "wrong button", "correction": "use the dropdown",
             "confidence": 0.72},
            {"step_id": "open", "is_correct": True, "explanation": "opened it", "confidence": 0.85},
        ],
    })
    by_id = {e.step_id: e for e in graded}
    assert (by_id["open"].outcome, by_id["open"].outcome_reason, by_id["open"].correction,
            by_id["open"].grade_confidence) == ("success", "opened it", None, 0.85)
    assert (by_id["delete"].outcome, by_id["delete"].outcome_reason, by_id["delete"].correction,
            by_id["delete"].grade_confidence) == ("failure", "wrong button", "use the dropdown", 0.72)
    assert (by_id["select"].outcome, by_id["select"].grade_confidence) == ("pending", None)
    assert all(e.task_incomplete is None for e in graded)
    assert mem.episodes.load_all_memories_for_session("s") == graded


def test_grades_map_by_step_number_without_step_id(mem: webmem.Memory) -> None:
    recorded_rep(mem, ids=False)
    graded = mem.episodes.add_grades_to_memories({
        "task_completed": True,
        "step_grades": [{"step_number": 3, "is_correct": True}, {"step_number": 2, "is_correct": False}],
    })
    assert [(e.step_num, e.outcome) for e in graded] == [(1, "pending"), (2, "failure"), (3, "success")]
    assert [e.grade_confidence for e in graded] == [None, 1.0, 1.0]  # confidence defaults to 1


def test_step_id_wins_over_step_number(mem: webmem.Memory) -> None:
    recorded_rep(mem)
    graded = mem.episodes.add_grades_to_memories({
        "task_completed": True,
        "step_grades": [{"step_id": "select", "step_number": 1, "is_correct": False}],
    })
    assert [(e.step_id, e.outcome) for e in graded] == [("open", "pending"), ("delete", "pending"), ("select", "failure")]


def test_a_failed_task_marks_every_entry_of_the_rep_incomplete(mem: webmem.Memory) -> None:
    play_rep(mem.episodes, "s", [S(env(BASE), QUERY, "click('1')", "a", ok=True)])
    recorded_rep(mem)  # rep 2 of s
    graded = mem.episodes.add_grades_to_memories({
        "task_completed": False, "overall_explanation": "priority never changed",
        "step_grades": [{"step_id": "open", "is_correct": True}],
    })
    assert [e.task_incomplete for e in graded] == ["priority never changed"] * 3
    rep1 = [e for e in mem.episodes.load_all_memories_for_session("s") if e.rep == 1]
    assert [e.task_incomplete for e in rep1] == [None]
    # without an explanation there is still a reason; a later verdict of success clears it
    graded = mem.episodes.add_grades_to_memories({"task_completed": False, "step_grades": []})
    assert [e.task_incomplete for e in graded] == ["task not completed"] * 3
    graded = mem.episodes.add_grades_to_memories({"task_completed": True, "step_grades": []})
    assert [e.task_incomplete for e in graded] == [None] * 3
    assert [e.outcome for e in graded] == ["success", "pending", "pending"]


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ({"step_id": "nope", "is_correct": True}, "step_grades.1: step_id 'nope' is not a step of session 's' rep 2"),
        ({"step_number": 99, "is_correct": True}, "step_grades.1: step_number 99 is not a step of session 's' rep 2"),
        # step 4 exists only in rep 1: a grade applies to the current rep only
        ({"step_number": 4, "is_correct": True}, "step_grades.1: step_number 4 is not a step of session 's' rep 2"),
    ],
)
def test_a_grade_for_an_unknown_step_names_it_and_applies_nothing(
    mem: webmem.Memory, open_memory: Any, bad: dict[str, Any], named: str
) -> None:
    play_rep(mem.episodes, "s", [S(env(BASE), QUERY, f"click('{n}')", "a") for n in range(4)])
    recorded_rep(mem)
    before = mem.episodes.load_all_memories_for_session("s")
    with pytest.raises(InvalidInput) as caught:
        mem.episodes.add_grades_to_memories({
            "task_completed": False, "overall_explanation": "not done",
            "step_grades": [{"step_id": "open", "is_correct": False, "correction": "x"}, bad,
                            {"step_number": 3, "is_correct": True}],
        })
    assert str(caught.value) == named
    # nothing half-applied: the valid grades before and after the bad one, and the task verdict
    assert mem.episodes.load_all_memories_for_session("s") == before
    with open_memory() as fresh:  # as another process sees the database
        assert fresh.episodes.load_all_memories_for_session("s") == before
        assert all(e.outcome == "pending" and e.task_incomplete is None
                   for e in fresh.episodes.load_all_memories_for_session("s"))


def test_grading_a_step_that_is_still_pending_in_memory_is_an_error(mem: webmem.Memory) -> None:
    mem.episodes.init_episode("s")
    mem.episodes.record_step_start(env(BASE), QUERY, "click('1')", "x", step_id="late")
    with pytest.raises(InvalidInput, match="step_id 'late' is not a step"):
        mem.episodes.add_grades_to_memories({"task_completed": True, "step_grades": [{"step_id": "late", "is_correct": True}]})


# --- retrieval -----------------------------------------------------------------------------------


def test_rep_one_retrieves_nothing_even_with_graded_data(mem: webmem.Memory) -> None:
    play_rep(mem.episodes, "other", [S(env(BASE), QUERY, "click('1')", "a", ok=False, fix="b")])
    play_rep(mem.episodes, "other", [S(env(BASE), QUERY, "click('2')", "b", ok=True)])
    assert mem.episodes.init_episode("s").rep == 1
    assert mem.episodes.retrieve_memories(env(BASE), QUERY) == []
    # the same session's rep 1, resumed after later reps were graded, is still the baseline
    assert mem.episodes.init_episode("other", rep=1).rep == 1
    assert mem.episodes.retrieve_memories(env(BASE), QUERY) == []
    assert len(store_for(mem).retrieve_memories(env(BASE), QUERY, episode=mem.episodes.init_episode("other"))) == 2


def test_retrieval_sees_only_graded_entries_of_earlier_reps_of_the_same_session(mem: webmem.Memory) -> None:
    store = store_for(mem, limit=10)
    page = env(BASE)
    play_rep(store, "s", [
        S(page, QUERY, "click('ok-1')", "a", ok=True, why="worked"),
        S(page, QUERY, "click('bad-1')", "b", ok=False, why="wrong", fix="do a"),
        S(page, QUERY, "click('pending-1')", "c"),  # never graded
    ])
    play_rep(store, "other-session", [S(page, QUERY, "click('other')", "o", ok=True)])
    play_rep(store, "s", [S(page, QUERY, "click('ok-2')", "d", ok=True)])
    play_rep(store, "s", [S(page, QUERY, "click('later-3')", "e", ok=False, fix="x")])

    store.init_episode("s", rep=2)  # resume rep 2: rep 2's own entries and rep 3's are out
    assert {m.entry.action for m in store.retrieve_memories(page, QUERY)} == {"click('ok-1')", "click('bad-1')"}
    # rep 4 sees reps 1 to 3, still not the pending entry nor the other session
    rep4 = store.init_episode("s")
    rep4_step = store.record_step_start(page, QUERY, "click('current-4')", "f")
    store.persist_memories()
    store.add_grades_to_memories({"task_completed": True, "step_grades": [{"step_number": rep4_step.step_num, "is_correct": True}]})
    found = store.retrieve_memories(page, QUERY, episode=rep4)
    assert {m.entry.action for m in found} == {"click('ok-1')", "click('bad-1')", "click('ok-2')", "click('later-3')"}
    assert all(isinstance(m, RetrievedMemory) and m.entry.session_id == "s" and m.entry.rep < 4 for m in found)
    assert {m.advice for m in found} == {"REPEAT", "AVOID"}


def test_retrieval_validates_its_input(mem: webmem.Memory) -> None:
    mem.episodes.init_episode("s")
    with pytest.raises(InvalidInput, match="^env.url: Field required"):
        mem.episodes.retrieve_memories({"title": "x"}, QUERY)
    with pytest.raises(InvalidInput, match="^internal_state: expected a string, got NoneType"):
        mem.episodes.retrieve_memories(env(BASE), None)  # type: ignore[arg-type]


def test_iou_threshold_is_inclusive_at_seven_tenths(mem: webmem.Memory) -> None:
    current = env(BASE)
    at = env(BASE[:7])        # 7 shared of 10: IoU exactly 0.7
    below = env(BASE[:6])     # 6 of 10: 0.6
    above_but_other_roles = env([("link", name) for _, name in BASE])  # same names, other role: 0.0
    assert element_iou(EnvironmentState.model_validate(current), EnvironmentState.model_validate(at)) == 0.7
    assert element_iou(EnvironmentState.model_validate(current), EnvironmentState.model_validate(below)) == 0.6
    assert element_iou(EnvironmentState.model_validate(current),
                       EnvironmentState.model_validate(above_but_other_roles)) == 0.0
    store = store_for(mem, limit=10)
    play_rep(store, "s", [
        S(at, QUERY, "click('at')", "a", ok=True),
        S(below, QUERY, "click('below')", "b", ok=True),
        S(above_but_other_roles, QUERY, "click('roles')", "c", ok=True),
    ])
    store.init_episode("s")
    found = store.retrieve_memories(current, QUERY)
    assert [(m.entry.action, m.environment_similarity) for m in found] == [("click('at')", 0.7)]

    store.env_threshold = 0.6
    assert [m.entry.action for m in store.retrieve_memories(current, QUERY)] == ["click('at')", "click('below')"]
    store.env_threshold = 0.71
    assert store.retrieve_memories(current, QUERY) == []


def test_iou_ignores_refs_values_and_duplicates() -> None:
    a = EnvironmentState.model_validate({"url": TICKETS, "elements": [
        {"role": "button", "name": "Save", "ref": "e1"}, {"role": "textbox", "name": "Title", "value": "one"},
        {"role": "button", "name": "Save", "ref": "e9"},
    ]})
    b = EnvironmentState.model_validate({"url": "https://elsewhere.example/", "elements": [
        {"role": "button", "name": "Save", "ref": "f3"}, {"role": "textbox", "name": "Title", "value": "two"},
    ]})
    assert element_iou(a, b) == 1.0
    assert element_iou(EnvironmentState(url=TICKETS), EnvironmentState(url=TICKETS)) == 0.0


def test_only_the_top_ten_by_environment_are_ranked(mem: webmem.Memory) -> None:
    page = env(BASE)
    near_match = env(BASE[:8])  # IoU 0.8, but the very same agent state as the query
    embedder = HashingEmbedder()
    query_vector = embedder.embed([QUERY])[0]
    assert all(cosine(query_vector, v) < 0.5 for v in embedder.embed(OTHER_STATES))
    store = store_for(mem, limit=20)
    play_rep(store, "s", [
        S(near_match, QUERY, "click('best-state')", "best", ok=True),
        *[S(page, OTHER_STATES[i], f"click('same-page-{i}')", f"p{i}", ok=True) for i in range(10)],
    ])
    store.init_episode("s")
    found = store.retrieve_memories(page, QUERY)
    assert len(found) == 10
    assert "click('best-state')" not in [m.entry.action for m in found]
    assert all(m.environment_similarity == 1.0 for m in found)

    store.env_top_k = 11  # now it is ranked, and its agent state puts it first
    found = store.retrieve_memories(page, QUERY)
    assert len(found) == 11
    assert found[0].entry.action == "click('best-state')"
    assert found[0].score == pytest.approx(0.65 * 0.8 + 0.35 * 1.0)
    store.env_top_k = 3
    assert len(store.retrieve_memories(page, QUERY)) == 3


def test_rank_is_065_environment_plus_035_state_similarity(mem: webmem.Memory) -> None:
    page = env(BASE)
    store = store_for(mem, limit=10)
    entries = play_rep(store, "s", [
        S(page, OTHER_STATES[0], "click('same-page')", "a", ok=True),              # IoU 1.0, other state
        S(env(BASE[:8]), QUERY, "click('same-state')", "b", ok=True),             # IoU 0.8, same state
        S(env(BASE[:9]), "change priority of a ticket", "click('close')", "c", ok=True),  # IoU 0.9, similar
    ])
    store.init_episode("s")
    found = store.retrieve_memories(page, QUERY)
    expected = {e.action: expected_score(page, e, QUERY) for e in entries}
    assert [m.entry.action for m in found] == sorted(expected, key=lambda action: -expected[action])
    for memory in found:
        embedder = HashingEmbedder()
        assert memory.state_similarity == pytest.approx(
            cosine(embedder.embed([QUERY])[0], embedder.embed([memory.entry.internal_state])[0]))
        assert memory.score == pytest.approx(0.65 * memory.environment_similarity + 0.35 * memory.state_similarity)
        assert memory.score == pytest.approx(expected[memory.entry.action])
    assert found[0].entry.action == "click('same-state')"  # 0.87 beats 0.65 + 0.35 * (small cosine)
    assert found[0].score == pytest.approx(0.87)

    store.env_weight = 0.95  # environment dominates: the IoU 1.0 page comes first
    found = store.retrieve_memories(page, QUERY)
    assert [m.entry.action for m in found] == ["click('same-page')", "click('close')", "click('same-state')"]
    assert found[2].score == pytest.approx(0.95 * 0.8 + 0.05 * 1.0)


def test_repeated_action_signatures_are_dropped(mem: webmem.Memory) -> None:
    page = env(BASE)
    store = store_for(mem, limit=10)
    play_rep(store, "s", [
        S(page, QUERY, "click('42')", "Save", ok=True),
        S(env(BASE[:9]), QUERY, 'click("42")', "Save", ok=False, fix="x"),   # same signature, lower score
        S(page, QUERY, "fill('7', 'alpha')", "Title", ok=True),
        S(env(BASE[:8]), QUERY, "fill('7', 'beta')", "Title", ok=True),      # other value: distinct
        S(env(BASE[:8]), QUERY, "fill( '7' , 'alpha' )", "Title", ok=True),  # same as fill('7', 'alpha')
    ])
    store.init_episode("s")
    found = store.retrieve_memories(page, QUERY)
    assert sorted(m.entry.action for m in found) == ["click('42')", "fill('7', 'alpha')", "fill('7', 'beta')"]
    assert all(m.entry.outcome == "success" for m in found)


def test_action_signature() -> None:
    assert action_signature("click('42')") == ("click", "42", None)
    assert action_signature('click("42")') == ("click", "42", None)
    assert action_signature("fill('12', 'hello')") == ("fill", "12", "hello")
    assert action_signature("select_option('3', 'High', 'now')") == ("select_option", "3", "High, now")
    assert action_signature("go_back()") == ("go_back", None, None)
    assert action_signature("  scroll ") == ("scroll", None, None)
    assert action_signature("click(ref=7") == ("click(ref=7", None, None)
    assert action_signature("click(e42)") == ("click", "e42", None)


def test_two_are_returned_preferring_one_avoid_and_one_repeat(mem: webmem.Memory) -> None:
    page = env(BASE)
    store = store_for(mem)
    play_rep(store, "s", [
        S(page, QUERY, "click('s1')", "a", ok=True),               # score 1.0
        S(env(BASE[:9]), QUERY, "click('s2')", "b", ok=True),      # 0.935
        S(env(BASE[:8]), QUERY, "click('f1')", "c", ok=False, fix="d"),  # 0.87
        S(env(BASE[:7]), QUERY, "click('f2')", "e", ok=False),     # 0.805
    ])
    store.init_episode("s")
    found = store.retrieve_memories(page, QUERY)
    assert [(m.advice, m.entry.action) for m in found] == [("REPEAT", "click('s1')"), ("AVOID", "click('f1')")]
    assert [m.score for m in found] == pytest.approx([1.0, 0.87])

    store.limit = 1
    assert [m.entry.action for m in store.retrieve_memories(page, QUERY)] == ["click('s1')"]
    store.limit = 3
    assert [m.entry.action for m in store.retrieve_memories(page, QUERY)] == ["click('s1')", "click('s2')", "click('f1')"]
    store.limit = 4
    assert len(store.retrieve_memories(page, QUERY)) == 4


def test_failures_ranked_first_still_leave_room_for_a_repeat(mem: webmem.Memory) -> None:
    page = env(BASE)
    store = store_for(mem)
    play_rep(store, "s", [
        S(page, QUERY, "click('f1')", "a", ok=False),
        S(env(BASE[:9]), QUERY, "click('f2')", "b", ok=False),
        S(env(BASE[:7]), QUERY, "click('s1')", "c", ok=True),
    ])
    store.init_episode("s")
    assert [(m.advice, m.entry.action) for m in store.retrieve_memories(page, QUERY)] == [
        ("AVOID", "click('f1')"), ("REPEAT", "click('s1')")]


@pytest.mark.parametrize("ok", [True, False])
def test_with_one_kind_only_the_best_two_of_it_are_returned(mem: webmem.Memory, ok: bool) -> None:
    page = env(BASE)
    play_rep(mem.episodes, "s", [
        S(env(BASE[:8]), QUERY, "click('c')", "c", ok=ok),
        S(page, QUERY, "click('a')", "a", ok=ok),
        S(env(BASE[:9]), QUERY, "click('b')", "b", ok=ok),
    ])
    mem.episodes.init_episode("s")
    found = mem.episodes.retrieve_memories(page, QUERY)
    assert [m.entry.action for m in found] == ["click('a')", "click('b')"]
    assert {m.advice for m in found} == {"REPEAT" if ok else "AVOID"}


def test_parameters_given_to_the_constructor_are_honoured(mem: webmem.Memory) -> None:
    page = env(BASE)
    entries = play_rep(mem.episodes, "s", [
        S(page, OTHER_STATES[0], "click('a')", "a", ok=True),  # 0.65 + 0.35 * 0.176
        S(env(BASE[:8]), QUERY, "click('b')", "b", ok=True),   # 0.87
        S(env(BASE[:6]), QUERY, "click('c')", "c", ok=True),   # IoU 0.6: 0.74
        S(env(BASE[:5]), QUERY, "click('d')", "d", ok=False),  # IoU 0.5: 0.675
    ])
    rep2 = mem.episodes.init_episode("s")
    assert [m.entry.action for m in mem.episodes.retrieve_memories(page, QUERY)] == ["click('b')", "click('a')"]

    loose = EpisodeStore(mem.scope, env_threshold=0.5, env_top_k=10, env_weight=0.65, limit=4)
    found = loose.retrieve_memories(page, QUERY, episode=rep2)
    assert [m.entry.action for m in found] == ["click('b')", "click('c')", "click('a')", "click('d')"]
    assert [m.score for m in found] == pytest.approx(
        sorted((expected_score(page, e, QUERY) for e in entries), reverse=True))
    narrow = EpisodeStore(mem.scope, env_threshold=0.5, env_top_k=2, limit=4)
    assert [m.entry.action for m in narrow.retrieve_memories(page, QUERY, episode=rep2)] == ["click('b')", "click('a')"]
    env_only = EpisodeStore(mem.scope, env_weight=1.0, limit=2)
    found = env_only.retrieve_memories(page, QUERY, episode=rep2)
    assert [(m.entry.action, m.score) for m in found] == [("click('a')", 1.0), ("click('b')", 0.8)]


# --- the three-rep session of the issue -----------------------------------------------------------

TICKET_PAGE = env([("link", "Tickets"), ("link", "Reports"), ("combobox", "Priority dropdown"),
                   ("button", "Delete button"), ("button", "Save"), ("textbox", "Comment"), ("button", "Assign")],
                  title="Ticket 4021")
DROPDOWN_OPEN = env([*[(r, n) for r, n in [(e["role"], e["name"]) for e in TICKET_PAGE["elements"]]],
                     ("option", "Low"), ("option", "High")], title="Ticket 4021")
GOAL = "Set the priority of ticket 4021 to High"
FIX = 'Select "High" from the priority dropdown'


def test_three_reps_through_the_episode_store(mem: webmem.Memory) -> None:
    episodes = mem.episodes
    # rep 1: the baseline, nothing to retrieve; the agent deletes instead of changing the priority
    assert episodes.init_episode("tickets").rep == 1
    assert episodes.retrieve_memories(TICKET_PAGE, GOAL) == []
    step = episodes.record_step_start(TICKET_PAGE, GOAL, "click('23')", "Delete button", think="looks like the menu")
    episodes.record_step_end(step, env([("link", "Tickets")], title="Deleted"))
    episodes.persist_memories()
    episodes.add_grades_to_memories({
        "task_completed": False, "completion_confidence": 0.9, "overall_explanation": "The ticket was deleted",
        "step_grades": [{"step_number": 1, "action": "click('23')", "is_correct": False,
                         "explanation": "Wrong action - task was to change priority", "correction": FIX,
                         "confidence": 0.72}],
    })

    # rep 2: an AVOID for the wrong step, with its correction
    assert episodes.init_episode("tickets").rep == 2
    advice = episodes.retrieve_memories(TICKET_PAGE, GOAL)
    assert [(m.advice, m.entry.action, m.entry.correction) for m in advice] == [("AVOID", "click('23')", FIX)]
    assert "Do this instead: " + FIX in webmem.export_memories(advice, "prompt")
    first = episodes.record_step_start(TICKET_PAGE, GOAL, "click('17')", "Priority dropdown")
    episodes.record_step_end(first, DROPDOWN_OPEN)
    second = episodes.record_step_start(DROPDOWN_OPEN, GOAL + " (dropdown open)", "select_option('17', 'High')", "High")
    episodes.record_step_end(second, TICKET_PAGE)
    episodes.persist_memories()
    episodes.add_grades_to_memories({
        "task_completed": True, "step_grades": [
            {"step_number": 1, "is_correct": True, "explanation": "Correctly opened the priority selector",
             "confidence": 0.85},
            {"step_number": 2, "is_correct": True, "explanation": "Chose High"},
        ],
    })

    # rep 3: both kinds
    assert episodes.init_episode("tickets").rep == 3
    advice = episodes.retrieve_memories(TICKET_PAGE, GOAL)
    assert sorted((m.advice, m.entry.action, m.entry.rep) for m in advice) == [
        ("AVOID", "click('23')", 1), ("REPEAT", "click('17')", 2)]
    assert all(m.score == pytest.approx(1.0) for m in advice)
    assert [e.rep for e in episodes.load_all_memories_for_session("tickets")] == [1, 2, 2]


def test_three_reps_through_runs_with_the_episode_advice_part(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    start = TICKET_PAGE["url"]

    run1 = mem.start_run(goal=GOAL, start_url=start, episode="tickets")
    assert run1.episode is not None and (run1.episode.session_id, run1.episode.rep) == ("tickets", 1)
    pack = run1.context(env=TICKET_PAGE, internal_state=GOAL)
    assert (pack.part("episode_advice").priority, pack.part("episode_advice").status) == (42, "empty")
    run1.record_step(action="click", target="Delete button", url=start, env_pre=TICKET_PAGE,
                     env_post=env([("link", "Tickets")]), internal_state=GOAL, think="the menu?")
    [entry] = mem.episodes.load_all_memories_for_session("tickets")
    assert (entry.step_id, entry.run_id, entry.action, entry.action_element_text, entry.think) == (
        f"{run1.id}.1", run1.id, "click('Delete button')", "Delete button", "the menu?")
    mem.episodes.add_grades_to_memories({
        "task_completed": False, "step_grades": [
            {"step_id": f"{run1.id}.1", "is_correct": False, "explanation": "Wrong action - task was to change priority",
             "correction": FIX}],
    }, episode=run1.episode)
    run1.finish(success=False, outcome="deleted the ticket")

    run2 = mem.start_run(goal=GOAL, start_url=start, episode="tickets")
    assert run2.episode is not None and run2.episode.rep == 2
    pack = run2.context(env=TICKET_PAGE, internal_state=GOAL)
    part = pack.part("episode_advice")
    assert (part.priority, part.status) == (42, "included")
    advice = (
        "# Lessons From Previous Attempt\n"
        "These are results from a PREVIOUS attempt at this task.\n"
        "- REPEAT: actions that worked before — do them again now\n"
        "- AVOID: mistakes from before — do NOT repeat them\n"
        "1. AVOID: [/tickets 100%] click: 'Delete button'\n"
        "This failed: Wrong action - task was to change priority\n"
        f"Do this instead: {FIX}"
    )
    assert advice in str(pack)
    assert pack.part("episode_advice").full_tokens > 0
    # without env there is no advice (the page is needed for the environment similarity)
    assert run2.context().part("episode_advice").status == "empty"
    run2.record_step(action="click", target="Priority dropdown", url=start, env_pre=TICKET_PAGE,
                     env_post=DROPDOWN_OPEN, internal_state=GOAL)
    run2.record_step(action="select", target="Priority dropdown", value="High", url=start, env_pre=DROPDOWN_OPEN,
                     env_post=TICKET_PAGE, internal_state=GOAL + " (dropdown open)")
    mem.episodes.add_grades_to_memories({
        "task_completed": True, "step_grades": [
            {"step_number": 1, "is_correct": True, "explanation": "Correctly opened the priority selector"},
            {"step_number": 2, "is_correct": True, "explanation": "Chose High"}],
    }, episode=run2.episode)
    run2.finish(success=True)

    run3 = mem.start_run(goal=GOAL, start_url=start, episode="tickets")
    assert run3.episode is not None and run3.episode.rep == 3
    text = str(run3.context(env=TICKET_PAGE, internal_state=GOAL))
    assert "AVOID: [/tickets 100%] click: 'Delete button'" in text
    assert "REPEAT: [/tickets 100%] click: 'Priority dropdown'" in text
    assert "This worked: Correctly opened the priority selector" in text
    assert f"Do this instead: {FIX}" in text
    retrieved = [e for e in events if e["event"] == "memories_retrieved"]
    assert [(e["rep"], e["count"]) for e in retrieved] == [(2, 1), (3, 2)]  # rep 1 does not even look
    entries = mem.episodes.load_all_memories_for_session("tickets")
    assert [(e.rep, e.step_num, e.action) for e in entries] == [
        (1, 1, "click('Delete button')"), (2, 1, "click('Priority dropdown')"),
        (2, 2, "select('Priority dropdown', 'High')")]


def test_a_run_without_episode_records_no_entries(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=TICKETS)
    assert run.episode is None
    run.record_step(action="click", target="Save", url=TICKETS, env_pre=TICKET_PAGE, internal_state=GOAL)
    assert run.context(env=TICKET_PAGE, internal_state=GOAL).part("episode_advice").status == "empty"
    mem.episodes.init_episode("x")
    with mem.store.read() as conn:
        assert conn.exec_driver_sql("select count(*) from episode_entries").scalar_one() == 0


def test_a_run_step_without_env_records_the_page_url(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=TICKETS, episode="bare")
    run.record_step(action="click", target="Save", url=TICKETS + "/4021")
    run.record_step(action="press", value="Enter")
    entries = mem.episodes.load_all_memories_for_session("bare")
    assert [(e.env_pre.url, e.env_pre.elements, e.internal_state, e.action) for e in entries] == [
        (TICKETS + "/4021", [], GOAL, "click('Save')"), (TICKETS + "/4021", [], GOAL, "press('Enter')")]


# --- secrets ----------------------------------------------------------------------------------------

SECRET = "Hunter2-Correct-Horse"
TYPED = "Tr0ub4dor&3-unregistered"


def login_page(email: str | None = None, password: str | None = None, *, url: str = "https://app.example.com/login") -> dict[str, Any]:
    return {"url": url, "title": "Sign in", "elements": [
        {"role": "textbox", "name": "Email", "value": email},
        {"role": "textbox", "name": "Password", "value": password},
        {"role": "button", "name": "Sign in"},
    ]}


def test_password_values_in_page_states_never_reach_the_database(open_memory: Any, memory_dir: Path) -> None:
    with open_memory(secrets={"password": SECRET}) as mem:
        episodes = mem.episodes
        episodes.init_episode("login")
        # a registered secret anywhere, and an unregistered value in a password textbox
        step = episodes.record_step_start(
            login_page("agent@example.com", SECRET, url=f"https://app.example.com/login?next={SECRET}"),
            f"I will type {SECRET}", f"fill('e12', '{SECRET}')", "Password", think=f"the password is {SECRET}",
        )
        episodes.record_step_end(step, login_page("agent@example.com", TYPED))
        other = episodes.record_step_start(
            {"url": "https://app.example.com/settings", "title": f"Settings {SECRET}", "elements": [
                {"role": "textbox", "name": "New password", "value": TYPED},
                {"role": "textbox", "name": "PIN", "value": "9911-zqx"},
                {"role": "button", "name": f"Show {SECRET}"},
                {"role": "textbox", "name": "Nickname", "value": f"x{SECRET}x"},
            ]},
            "change it", "click('e3')", "Save",
        )
        episodes.record_step_end(other, login_page(TYPED, TYPED))
        stored = episodes.persist_memories()
        episodes.add_grades_to_memories({
            "task_completed": False, "overall_explanation": f"typed {SECRET} in the wrong place",
            "step_grades": [{"step_number": 1, "is_correct": False, "explanation": f"{SECRET} is visible",
                             "correction": f"type {SECRET} into the password field"}],
        })
        first, second = episodes.load_all_memories_for_session("login")
        assert first.env_pre.elements[1].value == "{password}"
        assert first.env_post is not None and first.env_post.elements[1].value == "{password}"
        assert first.env_pre.elements[0].value == "agent@example.com"  # not a password field: kept
        assert first.env_pre.url == "https://app.example.com/login?next={password}"
        assert (first.internal_state, first.think, first.action) == (
            "I will type {password}", "the password is {password}", "fill('e12', '{password}')")
        assert (first.outcome_reason, first.correction, first.task_incomplete) == (
            "{password} is visible", "type {password} into the password field", "typed {password} in the wrong place")
        assert [e.value for e in second.env_pre.elements] == ["{password}", "{password}", None, "x{password}x"]
        assert (second.env_pre.title, second.env_pre.elements[2].name) == ("Settings {password}", "Show {password}")
        assert second.env_post is not None and second.env_post.elements[0].value == TYPED  # an Email box
        assert len(stored) == 2
        # retrieval and its events stay redacted too
        mem.episodes.init_episode("login")
        mem.episodes.retrieve_memories(login_page(), "log in")
        data = rows.stored_bytes(mem)
    assert b"{password}" in data
    assert SECRET.encode() not in data
    assert b"9911-zqx" not in data  # distinct: a bare "9911" turns up in timestamps
    events_file = (memory_dir / "events.jsonl").read_bytes() if (memory_dir / "events.jsonl").exists() else b""
    assert SECRET.encode() not in events_file


def test_typed_password_value_becomes_a_placeholder_without_registration(open_memory: Any) -> None:
    with open_memory() as mem:
        mem.episodes.init_episode("login")
        step = mem.episodes.record_step_start(login_page("me@example.com", None), "log in", "fill('e12')", "Password")
        mem.episodes.record_step_end(step, login_page("me@example.com", TYPED))
        [entry] = mem.episodes.persist_memories()
        assert entry.env_post is not None
        assert [e.value for e in entry.env_post.elements] == ["me@example.com", "{password}", None]
        assert entry.env_pre.elements[1].value is None
        run = mem.start_run(goal="log in", start_url="https://app.example.com/login", episode="login")
        run.record_step(action="fill", target='textbox "Password"', value=TYPED, env_pre=login_page(),
                        env_post=login_page(password=TYPED))
        run_entry = mem.episodes.load_all_memories_for_session("login")[-1]
        assert run_entry.action == "fill('textbox \"Password\"', '{password}')"
        assert run_entry.env_post is not None and run_entry.env_post.elements[1].value == "{password}"
        data = rows.stored_bytes(mem)
    assert b"{password}" in data
    assert TYPED.encode() not in data

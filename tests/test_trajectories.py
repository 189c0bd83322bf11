"""The trajectory store: tokens, Jaccard similarity, matching rules, trace scoring, the reference text."""

from __future__ import annotations

import math
import random
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import webmem
from webmem.core.text import jaccard, word_tokens

SHOP = "https://www.example-shop.com/"
ORIGIN = "https://www.example-shop.com"
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
PROPERTY = settings(derandomize=True, deadline=None, max_examples=200)


def step(action: str = "click", target: str | None = 'button "Search"', **fields: object) -> webmem.Step:
    return webmem.Step(action=action, target=target, **fields)


def save(
    mem: webmem.Memory,
    goal: str,
    *,
    url: str = SHOP,
    age_days: float = 0.0,
    steps: list[webmem.Step] | None = None,
    **fields: object,
) -> webmem.Trajectory:
    return mem.trajectories.save(
        goal=goal,
        start_url=url,
        steps=steps if steps is not None else [step(url=url)],
        created_at=NOW - timedelta(days=age_days),
        **fields,
    )


# --- tokens and similarity -------------------------------------------------------------------


def test_tokens_are_unicode_aware_case_folded_without_punctuation_or_one_letter_words() -> None:
    assert word_tokens("Café Größe!") == {"café", "grösse"}
    assert word_tokens("smart-watch") == {"smart", "watch"}
    assert word_tokens("Find a X, then (Buy) it; I  do.") == {"find", "then", "buy", "it", "do"}
    assert word_tokens("SMART Watch") == word_tokens("smart watch")
    assert word_tokens("snake_case") == {"snake", "case"}
    assert word_tokens("") == frozenset()


@PROPERTY
@given(st.text(max_size=80))
def test_every_token_is_case_folded_at_least_two_chars_and_has_no_punctuation(text: str) -> None:
    for token in word_tokens(text):
        assert len(token) >= 2
        assert token == token.casefold()
        assert not any(unicodedata.category(ch).startswith(("P", "Z", "C", "S")) for ch in token)


@PROPERTY
@given(st.text(alphabet="abcdefgh ABC-,.!", max_size=40), st.text(alphabet="abcdefgh ABC-,.!", max_size=40))
def test_jaccard_is_symmetric_and_between_zero_and_one(a: str, b: str) -> None:
    ta, tb = word_tokens(a), word_tokens(b)
    value = jaccard(ta, tb)
    assert value == jaccard(tb, ta)
    assert 0.0 <= value <= 1.0
    if ta:
        assert jaccard(ta, ta) == 1.0


def test_jaccard_worked_example() -> None:
    # {search, smart, watch, reviews} vs {search, for, smart, watch, deals}: 3 shared of 6 distinct
    goal = word_tokens("Search smart watch reviews")
    other = word_tokens("search for smart-watch deals")
    assert jaccard(goal, other) == 3 / 6
    assert jaccard(frozenset({"aa"}), frozenset({"bb"})) == 0.0
    assert jaccard(frozenset(), frozenset()) == 0.0


# --- which trajectories can match ------------------------------------------------------------


def test_only_the_same_origin_matches(mem: webmem.Memory) -> None:
    saved = save(mem, "search smart watch reviews")
    for other in (
        "http://www.example-shop.com/",
        "https://www.example-shop.com:8443/",
        "https://shop.example-shop.com/",
        "https://example-shop.com/",
    ):
        report = mem.trajectories.match("search smart watch reviews", origin=other, now=NOW)
        assert report.best is None, other
        assert report.candidates == [], other
    for same in ("https://www.example-shop.com/deep/page?q=1", "https://WWW.Example-Shop.com:443"):
        report = mem.trajectories.match("search smart watch reviews", origin=same, now=NOW)
        assert report.best is not None and report.best.id == saved.id, same


def test_a_trajectory_older_than_the_ttl_is_not_matched_one_just_inside_is(open_memory: Any) -> None:
    with open_memory(trace_ttl_days=30) as mem:
        old = save(mem, "search smart watch reviews", age_days=30.01)
        report = mem.trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW)
        assert report.best is None
        (candidate,) = report.candidates
        assert candidate.trajectory.id == old.id
        assert not candidate.eligible
        assert candidate.reason.startswith("expired")

        inside = save(mem, "search smart watch reviews", age_days=29.99)
        report = mem.trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW)
        assert report.best is not None and report.best.id == inside.id


def test_the_ttl_comes_from_memory_open(open_memory: Any) -> None:
    with open_memory(trace_ttl_days=2) as mem:
        save(mem, "search smart watch reviews", age_days=2.5)
        assert mem.trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW).best is None
        fresh = save(mem, "search smart watch reviews", age_days=1.5)
        assert mem.trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW).best == fresh


def test_failed_trajectories_are_never_offered(mem: webmem.Memory) -> None:
    failed = save(mem, "search smart watch reviews", success=False)
    report = mem.trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW)
    assert report.best is None
    assert failed.id not in [c.trajectory.id for c in report.candidates]
    assert mem.trajectories.find_best_match("search smart watch reviews", origin=ORIGIN) is None


def test_a_failed_run_saves_no_trajectory_to_offer(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#s", url=SHOP)
    run.finish(success=False, outcome="gave up")
    later = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    assert later.context().part("reference_trajectory").status == "empty"
    assert mem.trajectories.find_best_match("search smart watch reviews", origin=SHOP) is None


NEAR_THINGS = ("running shoes", "trail running shoes", "smart watch", "desk lamp", "coffee beans", "laptop stand")
NEAR_ENDINGS = ("to my cart", "to my wish list", "to the basket for later")
THE_ONE = "Add the trail running shoes in size 10 to my wish list"


def test_find_best_match_is_the_best_of_every_candidate_among_near_duplicates(mem: webmem.Memory) -> None:
    """find_best_match ranks only the goals that may still win (``match(limit=1)``, never scoring and explaining
    every candidate); on an origin of hundreds of goals that share most of their words it returns what scoring
    every candidate finds: the one goal that is the asked one in its values (not a newer one of another size), a
    newer twin once that one is this run's own, nothing expired, and the same with trace scoring."""
    rng = random.Random(3)
    now = datetime.now(UTC)

    def stored(goal: str, hours_ago: float, run_id: str | None = None) -> webmem.Trajectory:
        return mem.trajectories.save(goal=goal, start_url=SHOP, steps=[step(url=SHOP)], run_id=run_id,
                                     created_at=now - timedelta(hours=hours_ago))

    with mem.store.write():
        for number in range(400):  # newer than the one, and of its form (other sizes) many times over
            goal = f"Add the {rng.choice(NEAR_THINGS)} in size {rng.randrange(5, 13)} {rng.choice(NEAR_ENDINGS)}"
            if goal != THE_ONE:
                stored(goal, 1 + number / 10)
        the_one = stored(THE_ONE, 24 * 10, run_id="run_the_one")
        twin = stored(THE_ONE, 24 * 20)
        stored(THE_ONE, 24 * 45)  # expired (30 days)
    cases = [(THE_ONE, None), (THE_ONE, "run_the_one"), ("add the trail running shoes in size 11 to my cart", None),
             ("Add a desk lamp in size 7 to my basket", None), ("Return the smart watch bought last week", None),
             *((f"Add the {rng.choice(NEAR_THINGS)} in size {rng.randrange(4, 14)} {rng.choice(NEAR_ENDINGS)}", None)
               for _ in range(10))]
    for goal, exclude in cases:
        for trace in (False, True):
            every = mem.trajectories.match(goal, origin=SHOP, exclude_run_id=exclude, trace_scoring=trace)
            assert len(every.candidates) == every.scored > 400  # every candidate scored and explained
            found = mem.trajectories.find_best_match(goal, origin=SHOP, exclude_run_id=exclude, trace_scoring=trace)
            assert (found and found.id) == (every.best and every.best.id), (goal, exclude, trace)
    best = mem.trajectories.find_best_match(THE_ONE, origin=SHOP)
    assert best is not None and best.id == the_one.id
    again = mem.trajectories.find_best_match(THE_ONE, origin=SHOP, exclude_run_id="run_the_one")
    assert again is not None and again.id == twin.id


def test_the_threshold_is_inclusive(open_memory: Any) -> None:
    with open_memory(namespace="probe") as mem:
        save(mem, "alpha beta gamma delta")
        similarity = mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW).candidates[0].similarity
    assert 0 < similarity < 1
    with open_memory(namespace="exact", similarity_threshold=similarity) as mem:
        half = save(mem, "alpha beta gamma delta")
        report = mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW)
        assert report.candidates[0].similarity == similarity
        assert report.best is not None and report.best.id == half.id


def test_similarity_just_below_the_threshold_does_not_match(open_memory: Any) -> None:
    with open_memory(namespace="probe") as mem:
        save(mem, "alpha beta gamma delta")
        similarity = mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW).candidates[0].similarity
    with open_memory(namespace="above", similarity_threshold=min(1.0, similarity + 1e-9)) as mem:
        save(mem, "alpha beta gamma delta")
        report = mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW)
        (candidate,) = report.candidates
        assert candidate.similarity == similarity
        assert not candidate.eligible
        assert "below the threshold" in candidate.reason
        assert report.best is None


def test_the_threshold_comes_from_memory_open(open_memory: Any) -> None:
    with open_memory(similarity_threshold=0.95) as mem:
        save(mem, "alpha beta gamma delta")
        near = mem.trajectories.match("alpha beta gamma", origin=ORIGIN, now=NOW)
        assert 0.5 < near.candidates[0].similarity < 0.95 and near.best is None
        assert near.threshold == 0.95
        assert mem.trajectories.match("alpha beta gamma delta", origin=ORIGIN, now=NOW).best is not None


def test_without_trace_scoring_the_most_similar_wins(mem: webmem.Memory) -> None:
    close = save(mem, "search smart watch reviews", age_days=20, duration_ms=900_000)
    save(mem, "search smart watch deals", age_days=0, duration_ms=1_000,
         steps=[step(url=SHOP, verified=True)])
    report = mem.trajectories.match("search smart watch reviews online", origin=ORIGIN, now=NOW)
    assert not report.trace_scoring
    assert report.best is not None and report.best.id == close.id
    for candidate in report.candidates:
        assert candidate.score == candidate.similarity


def expected_score(similarity: float, age_days: float, duration_ms: int, verification: float) -> float:
    return (
        0.6 * similarity
        + 0.2 * math.exp(-age_days / 14)
        + 0.1 * (1 / (1 + duration_ms / 60_000))
        + 0.1 * verification
    )


def test_trace_scoring_score_follows_the_formula(open_memory: Any) -> None:
    with open_memory(trace_scoring=True) as mem:
        steps = [step(url=SHOP, verified=True), step(url=SHOP, verified=False), step(url=SHOP), step(url=SHOP, verified=True)]
        saved = save(mem, "alpha beta gamma", age_days=7, duration_ms=30_000, steps=steps)
        report = mem.trajectories.match("alpha beta gamma delta", origin=ORIGIN, now=NOW)
        assert report.trace_scoring
        (candidate,) = report.candidates
        assert candidate.trajectory.id == saved.id
        assert 0.5 < candidate.similarity < 1
        assert candidate.recency == pytest.approx(math.exp(-0.5), abs=1e-9)
        assert candidate.speed == pytest.approx(1 / 1.5, abs=1e-12)
        assert candidate.verification_rate == 0.5
        assert candidate.score == pytest.approx(expected_score(candidate.similarity, 7, 30_000, 0.5), abs=1e-9)


def test_trace_scoring_prefers_a_recent_fast_verified_run_over_a_slightly_more_similar_one(
    open_memory: Any,
) -> None:
    def fill(mem: webmem.Memory) -> tuple[webmem.Trajectory, webmem.Trajectory]:
        exact = save(mem, "alpha beta gamma delta", age_days=28, duration_ms=600_000,
                     steps=[step(url=SHOP, verified=False), step(url=SHOP, verified=False)])
        fresh = save(mem, "alpha beta gamma", age_days=0, duration_ms=0,
                     steps=[step(url=SHOP, verified=True), step(url=SHOP, verified=True)])
        return exact, fresh

    with open_memory(namespace="plain") as mem:
        exact, _ = fill(mem)
        assert mem.trajectories.match("alpha beta gamma delta", origin=ORIGIN, now=NOW).best == exact

    with open_memory(namespace="scored", trace_scoring=True) as mem:
        exact, fresh = fill(mem)
        report = mem.trajectories.match("alpha beta gamma delta", origin=ORIGIN, now=NOW)
        by_id = {c.trajectory.id: c for c in report.candidates}
        assert by_id[exact.id].similarity == 1.0 and by_id[fresh.id].similarity < 1.0
        assert by_id[exact.id].score == pytest.approx(expected_score(1.0, 28, 600_000, 0.0), abs=1e-9)
        assert by_id[fresh.id].score == pytest.approx(
            expected_score(by_id[fresh.id].similarity, 0, 0, 1.0), abs=1e-9)
        assert report.best is not None and report.best.id == fresh.id
        # the per-call switch overrides the memory's setting
        assert mem.trajectories.match("alpha beta gamma delta", origin=ORIGIN, now=NOW,
                                      trace_scoring=False).best == exact


def test_the_best_eligible_candidate_wins_not_the_top_ranked_one(open_memory: Any) -> None:
    with open_memory(trace_scoring=True) as mem:
        # below the threshold but fresh, fast and verified: highest blended score
        tempting = save(mem, "alpha beta kilo lima mike", age_days=0, duration_ms=0,
                        steps=[step(url=SHOP, verified=True)])
        # eligible but old, slow and unverified
        eligible = save(mem, "alpha beta gamma delta", age_days=28, duration_ms=600_000,
                        steps=[step(url=SHOP, verified=False)])
        report = mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW)
        by_id = {c.trajectory.id: c for c in report.candidates}
        assert by_id[tempting.id].similarity < report.threshold <= by_id[eligible.id].similarity
        assert by_id[tempting.id].score > by_id[eligible.id].score
        assert not by_id[tempting.id].eligible
        assert by_id[eligible.id].eligible
        assert report.best is not None and report.best.id == eligible.id


def test_the_match_report_explains_every_candidate(mem: webmem.Memory) -> None:
    winner = save(mem, "alpha beta gamma")
    low = save(mem, "alpha kilo lima mike")
    expired = save(mem, "alpha beta gamma", age_days=45)
    own = save(mem, "alpha beta gamma", run_id="run_1_abc")
    report = mem.trajectories.match("alpha beta gamma", origin=ORIGIN, now=NOW, exclude_run_id="run_1_abc")
    by_id = {c.trajectory.id: c for c in report.candidates}
    assert set(by_id) == {winner.id, low.id, expired.id, own.id}
    assert by_id[winner.id].eligible and by_id[winner.id].reason == "eligible"
    assert not by_id[low.id].eligible and "below the threshold" in by_id[low.id].reason
    assert not by_id[expired.id].eligible and "expired" in by_id[expired.id].reason
    assert not by_id[own.id].eligible and "own" in by_id[own.id].reason
    assert report.best is not None and report.best.id == winner.id
    assert winner.id in report.reason
    assert report.threshold == 0.5
    assert report.origin == ORIGIN


def test_no_match_gives_best_none_with_a_reason(mem: webmem.Memory) -> None:
    empty = mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW)
    assert empty.best is None and empty.candidates == []
    assert "no successful trajectory" in empty.reason

    far = save(mem, "kilo lima mike")
    report = mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW)
    assert report.best is None
    assert "no eligible candidate" in report.reason
    assert far.id in report.reason


def test_match_and_miss_are_reported_as_events(mem: webmem.Memory, events: list[dict]) -> None:
    mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW)
    saved = save(mem, "alpha beta")
    mem.trajectories.match("alpha beta", origin=ORIGIN, now=NOW)
    found = [e for e in events if e["event"] in ("trajectory_matched", "trajectory_missed")]
    assert [e["event"] for e in found] == ["trajectory_missed", "trajectory_matched"]
    assert found[1]["trajectory_id"] == saved.id


# --- a run never gets itself -------------------------------------------------------------------


def test_exclude_run_id_leaves_out_that_runs_trajectory(mem: webmem.Memory) -> None:
    save(mem, "alpha beta gamma", run_id="run_1_abc")
    report = mem.trajectories.match("alpha beta gamma", origin=ORIGIN, now=NOW, exclude_run_id="run_1_abc")
    assert report.best is None
    assert mem.trajectories.match("alpha beta gamma", origin=ORIGIN, now=NOW).best is not None
    assert mem.trajectories.find_best_match("alpha beta gamma", origin=ORIGIN, exclude_run_id="run_1_abc") is None


def test_a_finished_run_does_not_get_its_own_trajectory_as_reference(mem: webmem.Memory) -> None:
    other = mem.trajectories.save(
        goal="search smart watch reviews today", start_url=SHOP, steps=[step(url=SHOP)],
        created_at=datetime.now(UTC) - timedelta(days=1),
    )
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP, verified=True)
    run.finish(success=True, outcome="done")
    (own,) = [t for t in mem.trajectories.list() if t.run_id == run.id]

    # the run's own trajectory (similarity 1.0, newest) would win; it must not be offered to itself
    pack = run.context()
    reference = pack.part("reference_trajectory")
    assert reference.status == "included"
    assert reference.detail["trajectory_id"] == other.id
    assert own.id not in str(pack)
    assert "search smart watch reviews today" in str(pack)

    # a new run does get the finished run's trajectory
    later = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    assert later.context().part("reference_trajectory").detail["trajectory_id"] == own.id


# --- the reference text and storage --------------------------------------------------------


def test_format_reference_exact_text(mem: webmem.Memory) -> None:
    saved = mem.trajectories.save(
        goal="Search for smart watch reviews",
        start_url=SHOP,
        steps=[
            webmem.Step(action="click", target='button "Search"', selector="#search-btn",
                        url="https://www.example-shop.com/", verified=True),
            webmem.Step(action="type", target='textbox "Query"', selector="#q", value="smart watch",
                        url="https://www.example-shop.com/", verified=False),
            webmem.Step(action="press", target="Enter", url="https://www.example-shop.com/results"),
        ],
    )
    assert mem.trajectories.format_reference(saved) == (
        "Goal: Search for smart watch reviews\n"
        "Steps (3 that worked):\n"
        '  1. click button "Search" (on https://www.example-shop.com/) [verified]\n'
        '  2. type textbox "Query" "smart watch" (on https://www.example-shop.com/)\n'
        "  3. press Enter (on https://www.example-shop.com/results)"
    )


def test_saved_steps_keep_what_a_replay_needs(mem: webmem.Memory) -> None:
    steps = [
        webmem.Step(action="click", url="https://www.example-shop.com/a", target='button "Search"',
                    selector="#search-btn", value=None, verified=True, expected_effect="results list appears",
                    snapshot_hash="sha256:abc123", duration_ms=120),
        webmem.Step(action="type", url="https://www.example-shop.com/b", target='textbox "Query"',
                    selector="@e7", value="smart watch", verified=False, expected_effect=None,
                    snapshot_hash=None, ok=True),
        webmem.Step(action="scroll", verified=None),
    ]
    saved = mem.trajectories.save(goal="search smart watch", start_url=SHOP, steps=steps,
                                  duration_ms=4321, model="gpt-test", run_id="run_1_abc")
    loaded = mem.trajectories.get(saved.id)
    assert loaded == saved
    assert loaded.steps == steps
    assert loaded.steps[0].expected_effect == "results list appears"
    assert loaded.steps[0].snapshot_hash == "sha256:abc123"
    assert loaded.steps[1].selector == "@e7" and loaded.steps[1].value == "smart watch"
    assert loaded.steps[1].verified is False and loaded.steps[2].verified is None
    assert (loaded.goal, loaded.origin, loaded.domain) == ("search smart watch", ORIGIN, "www.example-shop.com")
    assert (loaded.duration_ms, loaded.model, loaded.run_id, loaded.success) == (4321, "gpt-test", "run_1_abc", True)
    assert loaded.created_at.tzinfo is not None


def test_a_successful_run_saves_its_steps_as_a_trajectory(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP, model="gpt-x")
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP, verified=True,
                    expected_effect="results", snapshot_hash="h1", duration_ms=100)
    run.record_step(action="type", target='textbox "Query"', selector="#q", value="watch", url=SHOP, duration_ms=50)
    run.finish(success=True, outcome="Found 12 reviews")
    (saved,) = mem.trajectories.list()
    assert saved.run_id == run.id and saved.success and saved.model == "gpt-x"
    assert saved.duration_ms == 150
    assert [(s.action, s.target, s.selector, s.value, s.verified, s.expected_effect, s.snapshot_hash)
            for s in saved.steps] == [
        ("click", 'button "Search"', "#search", None, True, "results", "h1"),
        ("type", 'textbox "Query"', "#q", "watch", None, None, None),
    ]


def test_list_filters_by_domain_newest_first(mem: webmem.Memory) -> None:
    older = save(mem, "alpha one", age_days=2)
    newer = save(mem, "alpha two", age_days=1)
    elsewhere = save(mem, "alpha three", url="http://localhost:5173/app")
    assert [t.id for t in mem.trajectories.list(domain="www.example-shop.com")] == [newer.id, older.id]
    assert [t.id for t in mem.trajectories.list(domain="localhost:5173")] == [elsewhere.id]
    assert [t.id for t in mem.trajectories.list(domain=SHOP)] == [newer.id, older.id]
    assert len(mem.trajectories.list()) == 3
    assert mem.trajectories.list(domain="nowhere.example") == []


def test_get_unknown_id_raises_trajectory_not_found(mem: webmem.Memory) -> None:
    with pytest.raises(webmem.TrajectoryNotFound):
        mem.trajectories.get("traj_0000000000000_nope00")


def test_prune_expired_deletes_only_old_trajectories(mem: webmem.Memory) -> None:
    old = save(mem, "alpha old", age_days=31)
    kept = save(mem, "alpha kept", age_days=29)
    assert mem.trajectories.prune(now=NOW) == 1
    assert [t.id for t in mem.trajectories.list()] == [kept.id]
    with pytest.raises(webmem.TrajectoryNotFound):
        mem.trajectories.get(old.id)
    assert mem.trajectories.prune(now=NOW) == 0


def test_bad_input_to_save_and_match(mem: webmem.Memory) -> None:
    with pytest.raises(webmem.InvalidInput):
        mem.trajectories.save(goal="", start_url=SHOP, steps=[])
    with pytest.raises(webmem.InvalidInput):
        mem.trajectories.save(goal="alpha", start_url="not a url", steps=[])
    with pytest.raises(webmem.InvalidInput):
        mem.trajectories.save(goal="alpha", start_url=SHOP, steps=[{"action": "click"}])  # type: ignore[list-item]
    with pytest.raises(webmem.InvalidInput):
        mem.trajectories.match("  ", origin=ORIGIN)
    with pytest.raises(webmem.InvalidInput):
        mem.trajectories.match("alpha", origin="ftp://www.example-shop.com")


def test_a_selection_that_changed_what_the_page_offers_is_not_replaced_by_the_next_one() -> None:
    from webmem.trajectories.plans import replayable

    def select(value: str, page: str | None, target: str = 'combobox "And"') -> webmem.Step:
        return webmem.Step(action="select", target=target, value=value, snapshot_hash=page)

    # choosing in "And" adds a filter row (the page offers more), and the select is ready for the next choice
    adding = [select("Priority", "page-1"), select("Type", "page-2"), select("major", "page-3", 'combobox ""')]
    assert [step.value for step in replayable(adding)] == ["Priority", "Type", "major"]
    # a choice changed on the same page is replaced by the later one
    changing = [select("Priority", "page-1"), select("Type", "page-1")]
    assert [step.value for step in replayable(changing)] == ["Type"]
    assert [step.value for step in replayable([select("Priority", None), select("Type", None)])] == ["Type"]

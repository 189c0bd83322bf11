"""Recall: goals matched whatever their wording, through an index that reaches every trajectory of an
origin, kept right across processes, decoding only the winner."""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import rows
from sqlalchemy import text
from threads import run_together

import webmem
from webmem.core.urls import origin_of
from webmem.store.migrations import apply_migrations
from webmem.trajectories import held as held_module
from webmem.trajectories.conflicts import SHORT_GOAL_TERMS
from webmem.trajectories.form_shapes import LEAST_CAP, FormShapes
from webmem.trajectories.held import OriginGoals, StoredGoal
from webmem.trajectories.index import SNAPSHOT_MIN_GOALS, SNAPSHOT_REFRESH_SHARE, GoalIndex
from webmem.trajectories.key_lines import key_line, read_key_line
from webmem.trajectories.ranking import _own_weights, rank
from webmem.trajectories.recall import decode, signature
from webmem.trajectories.snapshots import checksum, pack, unpack
from webmem.trajectories.slots import goal_values

SHOP = "https://www.example-shop.com/"
ORIGIN = "https://www.example-shop.com"
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def save(mem: webmem.Memory, goal: str, *, steps: list[webmem.Step] | None = None, age_days: float = 0,
         url: str = SHOP) -> webmem.Trajectory:
    return mem.trajectories.save(
        goal=goal, start_url=url, steps=steps or [webmem.Step(action="click", target='button "Go"')],
        created_at=NOW - timedelta(days=age_days),
    )


def best(mem: webmem.Memory, goal: str, origin: str = ORIGIN) -> str | None:
    found = mem.trajectories.match(goal, origin=origin, now=NOW).best
    return found.goal if found else None


# --- wording ---------------------------------------------------------------------------------


def test_plurals_word_order_and_filler_do_not_hide_the_same_task(mem: webmem.Memory) -> None:
    save(mem, "Search for smart watch reviews")
    save(mem, "Track my parcel")
    assert best(mem, "Find reviews of smart watches") == "Search for smart watch reviews"
    assert best(mem, "could you please search for reviews of a smart watch?") == "Search for smart watch reviews"
    assert best(mem, "TRACK MY PARCELS") == "Track my parcel"


def test_unicode_forms_and_case_do_not_hide_the_same_task(mem: webmem.Memory) -> None:
    """Words are compared after Unicode normalisation (NFKC: full-width letters are letters) and case folding
    ("ß" is "ss")."""
    save(mem, "Search for smart watch reviews")
    save(mem, "Compare the größe charts")
    save(mem, "Compare the weight charts")
    assert best(mem, "ＳＥＡＲＣＨ for ｓｍａｒｔ ｗａｔｃｈ reviews") == "Search for smart watch reviews"
    assert best(mem, "compare the grösse charts") == "Compare the größe charts"


def test_values_are_slots_so_other_values_are_the_same_task(mem: webmem.Memory) -> None:
    save(mem, 'Enter "Kasie" into the name field and press Submit')
    save(mem, "Buy 3 apples", steps=[webmem.Step(action="fill", target='spinbutton "Quantity"', value="3"),
                                     webmem.Step(action="click", target='button "apples"')])
    save(mem, "Track the parcel 1Z999")
    assert best(mem, 'Enter "Marguerite Duras" into the name field and press Submit') == (
        'Enter "Kasie" into the name field and press Submit'
    )
    assert best(mem, "Buy 12 pears") == "Buy 3 apples"
    assert best(mem, "Sell 3 apples") is None


def test_emails_dates_urls_and_names_are_slots_too(mem: webmem.Memory) -> None:
    for goal in ("Send the invoice to ann@example.com", "Book a table for 2026-01-02",
                 "Open https://docs.example.org/guide/setup and summarise it", "Phone Marguerite",
                 "Track my parcel"):
        save(mem, goal)
    assert best(mem, "Send the invoice to bob.smith@corp.example.net") == "Send the invoice to ann@example.com"
    assert best(mem, "Book a table for 12/31/2027") == "Book a table for 2026-01-02"
    assert best(mem, "Open https://wiki.example.com/pages/faq.html and summarise it") == (
        "Open https://docs.example.org/guide/setup and summarise it")
    assert best(mem, "Phone Theodosia") == "Phone Marguerite"


def test_a_list_with_values_in_it_is_a_list_of_values_whatever_their_case(mem: webmem.Memory) -> None:
    """"fzzqo" is no word of the task: a list whose items are half values or more holds values only,
    so the same task with another list is found (and a list names no connecting word as a value)."""
    for goal in ("Select fzzqo, NYYyS82 and click Submit.", "Click the Delete button of the first row",
                 "Sort the table by date", "Open the Settings page and click Privacy"):
        save(mem, goal)
    assert best(mem, "Select k9, zzq, key and click Submit.") == "Select fzzqo, NYYyS82 and click Submit."
    assert [value.text for value in goal_values("Select fzzqo, NYYyS82 and click Submit.")] == [
        "fzzqo", "NYYyS82", "Submit"]
    assert [value.text for value in goal_values("Go to Settings, then Privacy")] == ["Settings", "Privacy"]
    # words that go on after a comma are no list: "published" and "genre" stay words of the task
    assert [value.text for value in goal_values("add a book by Ann Carson, published in 2011, genre history")] == [
        "Ann", "Carson", "2011"]


def test_words_that_change_the_meaning_must_agree(mem: webmem.Memory) -> None:
    save(mem, "Buy the cheapest laptop")
    save(mem, "Sort the orders by newest first")
    assert best(mem, "Buy the most expensive laptop") is None
    assert best(mem, "buy the least expensive laptop") == "Buy the cheapest laptop"
    assert best(mem, "Sort the orders by oldest first") is None
    assert best(mem, "sort orders by latest first") == "Sort the orders by newest first"
    assert best(mem, "Buy the laptop with the lowest cost") == "Buy the cheapest laptop"


def searched(thing: str) -> list[webmem.Step]:
    return [webmem.Step(action="fill", target='searchbox "Search"', value=thing),
            webmem.Step(action="press", target='searchbox "Search"', value="Enter")]


def test_a_goal_that_shares_only_the_values_a_stored_goal_was_done_with_is_another_task(mem: webmem.Memory) -> None:
    """The words that filled a stored goal's template say what it was done on, not what was done: a new goal
    naming none of the template's own words, and words of its own instead, is another task, however rare the
    words it shares. One that names nothing else may be the same task."""
    save(mem, "Search for smart watch reviews", steps=searched("smart watch"))
    save(mem, "Search for running shoe reviews", steps=searched("running shoe"))
    for other_task in ("Buy a smart watch", "Compare smart watches"):
        report = mem.trajectories.match(other_task, origin=ORIGIN, now=NOW)
        assert report.best is None
        [closest, *_] = report.candidates
        assert closest.trajectory.goal == "Search for smart watch reviews"
        assert closest.similarity <= 0.35
        assert closest.why == "shares only the words of its values, none of: reviews, search"  # as the goal writes them
    assert best(mem, "Find reviews of smart watches") == "Search for smart watch reviews"
    assert best(mem, "Find smart watches") == "Search for smart watch reviews"  # "find" says nothing of its own
    assert best(mem, "Search for laptop reviews") in ("Search for smart watch reviews", "Search for running shoe reviews")
    # however alike the words around them: a frame of words that name nothing lifts no such goal
    save(mem, "I want you to search for smart watch in the list for me now please", steps=searched("smart watch"),
         url="https://other.example-shop.com/")
    report = mem.trajectories.match("I want you to buy smart watch for me now please",
                                    origin="https://other.example-shop.com", now=NOW)
    assert report.best is None and report.candidates[0].similarity <= 0.35
    assert "shares only the words of its values" in report.candidates[0].why


WISH_LIST = "https://shop.example.com/"


def test_goals_that_begin_and_end_alike_are_one_template_with_other_words_in_its_slots(mem: webmem.Memory) -> None:
    """Two goals that begin with the same two words and end with the same two are one template, whatever fills its
    middle: they score at least the share of their words that begin and end them alike, however few of their
    words they share, and however common on the site the words of the frame are."""
    for goal in ("Add something like what the man is wearing to my wish list.", "Add the pink ones to my wish list.",
                 "Add the one that looks like a wooden log to my wish list.", "How many aqua items are there?",
                 "Buy the cheapest headphones of the brand in the image.", "Rate the blender on this page 5 stars."):
        save(mem, goal, url=WISH_LIST)
    site = "https://shop.example.com"
    report = mem.trajectories.match("Add something like what the girl is holding to my wish list.", origin=site,
                                    now=NOW)
    assert report.best is not None and report.best.goal == "Add something like what the man is wearing to my wish list."
    assert "begins and ends alike (75% of the words" in report.candidates[0].why
    assert best(mem, "Add the one with waves to my wish list.", site) in (
        "Add the pink ones to my wish list.", "Add the one that looks like a wooden log to my wish list.")
    assert best(mem, "How many red digits are there?", site) == "How many aqua items are there?"
    # found through its frame even where the words it shares are too common for the index to read them, and
    # another goal shares rarer ones
    with mem.store.write():
        save(mem, "Draw the waves", url=WISH_LIST)
        for number in range(40):
            save(mem, f"Show the wish list page number {number}", url=WISH_LIST)
    query = "Add the one with waves to my wish list."
    full = mem.trajectories.match(query, origin=site, now=NOW)
    pruned = mem.trajectories.match(query, origin=site, now=NOW, limit=1)
    assert full.best is not None and full.best.goal == "Add the pink ones to my wish list."
    assert pruned.best is not None and pruned.best.id == full.best.id


def test_a_frame_is_compared_by_the_stems_of_its_words(mem: webmem.Memory) -> None:
    """A frame's words are compared by their stems, as terms are: "What colors do ... come in?" begins and ends as
    "What color do ... come in?" does. The report shows the frame as the stored goal writes it."""
    assert signature("What colors do the mini ring trays come in?").frame.startswith("what color do the")
    for goal in ("What colors do the mini ring trays come in?", "What is the price of the pink ones on this page?",
                 "Add the one that looks like a wooden log to my wish list."):
        save(mem, goal, url=WISH_LIST)
    report = mem.trajectories.match("What color do the bars in the bottom left come in?",
                                    origin="https://shop.example.com", now=NOW)
    assert report.best is not None and report.best.goal == "What colors do the mini ring trays come in?"
    assert 'begins and ends alike (60% of the words: "what colors ... come in")' in report.candidates[0].why


def test_the_report_shows_a_word_of_meaning_as_the_goal_wrote_it(mem: webmem.Memory) -> None:
    """The words a candidate does not share are its stems, but a word that says what is done shows as the stored
    goal wrote it ("add"), never as the matcher's own token for it ("!create")."""
    save(mem, "Add the pink ones on this page to my wish list.", url=WISH_LIST)
    report = mem.trajectories.match("Show the pink ones on this page", origin="https://shop.example.com", now=NOW)
    assert "2 of 5 words shared (not: add, list, wish)" in report.candidates[0].why


def test_a_frame_with_a_value_at_an_end_or_a_meaning_of_its_own_makes_no_template(mem: webmem.Memory) -> None:
    """A frame is fixed text: a goal with a value among its first or last two words has none ("Select HF2 and
    click Submit"). Goals that begin and end alike still differ when their words of meaning do (cheapest, most
    expensive) or they give other numbers of inputs in quotes, and a frame that is a small share of two long
    goals' words does not make them one task."""
    assert signature("Select HF2 and click Submit.").frame == signature("Ask Ann to water the garden.").frame == ""
    assert signature("Add the 3 cans to the cart").frame and not signature("Add the cans to cart 3").frame
    assert not signature("Buy the tea").frame  # fewer than four words
    for goal in ("Find the most expensive video game where I can play the scene in the image.",
                 'In the search box type "tea" and press the search button on this page.',
                 "Show me the reviews that mention the battery life of the phone on this page"):
        save(mem, goal, url=WISH_LIST)
    site = "https://shop.example.com"
    report = mem.trajectories.match("Find the cheapest video game where I can play the scene in the image.",
                                    origin=site, now=NOW)
    assert report.best is None and report.candidates[0].why == "different meaning: cheapest, most expensive"
    quoted = mem.trajectories.match('In the search box type "green tea", in the field type "100", and press the search '
                                    "button on this page.", origin=site, now=NOW)
    assert quoted.best is None and quoted.candidates[0].similarity <= 0.35
    long = mem.trajectories.match("Show me the photos uploaded by the people who bought the blender on this page",
                                  origin=site, now=NOW)
    assert long.best is None and "begins and ends alike (40% of the words" in long.candidates[0].why


def test_a_stored_frame_changed_by_hand_is_made_anew_from_the_goal(mem: webmem.Memory) -> None:
    """A stored signature whose frame is not as the matcher writes it is read as no signature: made anew from the
    goal (and written back), never an error."""
    save(mem, "How many aqua items are there?")
    stored = signature("How many aqua items are there?").encode()
    for changed in (stored + "junk", stored.rpartition("|")[0], stored.replace("|", " ")):
        assert decode(changed, None) is None
    worded = signature(HOTTEST).encode()
    for changed in (worded + "  x", worded.replace("take me", "* me"), worded.rpartition("\x1f")[0] + "\x1ftake me"):
        assert decode(changed, None) is None
    assert decode(worded, None) == signature(HOTTEST)
    rows.execute(mem, "UPDATE trajectories SET goal_signature = goal_signature || 'junk'")
    mem.trajectories._index.forget()  # as a new process: the changed signature is read
    assert best(mem, "How many red digits are there?") == "How many aqua items are there?"
    assert decode(rows.value(mem, "trajectories", "goal_signature"), None) == signature("How many aqua items are there?")


HOTTEST = ("Can you take me to the comments section of the hottest post (of all time) in the art forum where the post "
           "is only in black and white?")
MOST_COMMENTED = ("Can you take me to the comments section of the most commented post (of all time) in f/food "
                  "where the food is vegetarian?")
FORUM = "https://forum.example.com/"


def test_long_goals_that_begin_alike_with_most_words_in_order_are_one_template(mem: webmem.Memory) -> None:
    """Two long goals that begin with the same two words and have most of their words in the same order are one
    template with long descriptions in its slots, however few words of meaning they share: they score at least the
    share of their words in that order, and are found so even where the words they share are too common on the
    site for the index to read them."""
    save(mem, HOTTEST, url=FORUM)
    save(mem, "Navigate to the item on this page whose image has exactly 4 books.", url=FORUM)
    site = "https://forum.example.com"
    report = mem.trajectories.match(MOST_COMMENTED, origin=site, now=NOW)
    assert report.best is not None and report.best.goal == HOTTEST
    assert report.candidates[0].similarity >= 0.6
    assert 'of the words in the same order (both begin "take me")' in report.candidates[0].why
    with mem.store.write():
        # shares the query's rarer words; the words it shares with the stored goal become common
        save(mem, "List vegetarian food recipes posted in f/food this week by the most active users", url=FORUM)
        for number in range(40):
            save(mem, f"Take me to the comments section of post number {number} of all time", url=FORUM)
    full = mem.trajectories.match(MOST_COMMENTED, origin=site, now=NOW)
    pruned = mem.trajectories.match(MOST_COMMENTED, origin=site, now=NOW, limit=1)
    assert full.best is not None and full.best.goal == HOTTEST
    assert pruned.best is not None and pruned.best.id == full.best.id


def test_only_long_goals_that_begin_alike_with_fixed_text_are_compared_in_order(mem: webmem.Memory) -> None:
    """A wording is kept for goals of ten words or more whose first two words are no value, and compared only with
    one that begins with the same two words and shares a word of meaning besides them; less than 60% of their words
    in the same order makes no template."""
    assert signature("Select Ferne from the list and click Submit.").wording == ""  # short
    assert signature("Find 3 items on this page that match the colour of the image").wording == ""  # a value begins it
    assert signature(HOTTEST).wording.startswith("take me to the comment section of the hottest post")
    save(mem, HOTTEST, url=FORUM)
    site = "https://forum.example.com"
    other_start = mem.trajectories.match(MOST_COMMENTED.replace("Can you take me", "Bring me"), origin=site, now=NOW)
    assert other_start.best is None and "same order" not in other_start.candidates[0].why
    # 65% of their words in the same order, and no word of meaning shared
    save(mem, "Can you show me the one that is on the left of the page in this picture?", url=FORUM)
    nothing_shared = mem.trajectories.match("Can you give me the one that is at the top of the list in that photo?",
                                            origin=site, now=NOW)
    assert nothing_shared.best is None and "same order" not in nothing_shared.candidates[0].why
    # the one word of meaning they share ("add") opens them both
    save(mem, "Add the one that is on the left of the page in this picture for me", url=FORUM)
    opening_only = mem.trajectories.match("Add the one that is at the top of the box in that photo for me",
                                          origin=site, now=NOW)
    assert opening_only.best is None and "same order" not in opening_only.candidates[0].why
    # 55% of their words in the same order, few words of meaning shared
    unlike = mem.trajectories.match("Can you take me to the newest thread in the cooking forum where the recipe is "
                                    "only for vegans?", origin=site, now=NOW)
    assert unlike.best is None and "same order" not in unlike.candidates[0].why


LOGIN = 'Enter the username "karrie" and the password "AU" into the text fields and press login.'
PASSWORD_TWICE = 'Enter the password "fU" into both text fields and press submit.'
SHOPPING = 'Add "milk", "eggs" and "bread" to the shopping list'


def test_goals_that_give_different_numbers_of_inputs_in_quotes_are_different_tasks(mem: webmem.Memory) -> None:
    """A goal that gives more inputs in quotes than a stored one asks for inputs that task never took: logging in with
    a username and a password is not entering a password twice, however many words they share. A short goal that
    gives fewer may leave one out (``test_a_short_goal_may_leave_out_an_input_in_quotes``). A list of quoted values
    is one input, however long."""
    save(mem, PASSWORD_TWICE)
    save(mem, SHOPPING)
    save(mem, LOGIN, url="https://accounts.example-shop.com/")
    login = 'Enter the username "nathalie" and the password "fzzq" into the text fields and press submit.'
    report = mem.trajectories.match(login, origin=ORIGIN, now=NOW)
    assert report.best is None
    [closest, *_] = report.candidates
    assert closest.trajectory.goal == PASSWORD_TWICE and closest.similarity <= 0.35
    assert "gives 2 inputs in quotes, it gave 1" in closest.why
    accounts = "https://accounts.example-shop.com"
    assert best(mem, 'Enter the username "dannie" and the password "8F" into the text fields and press login.',
                accounts) == LOGIN
    assert best(mem, 'Enter the password "Ny" into both text fields and press submit.') == PASSWORD_TWICE
    assert best(mem, 'Add "apples" and "pears" to the shopping list') == SHOPPING
    assert best(mem, 'Add "rice" to the shopping list') == SHOPPING
    assert decode(signature(login).encode().replace("quoted*2", "quoted*x"), None).kinds == {"quoted*x"}
    rows.execute(mem, "UPDATE trajectories SET goal_signature = replace(goal_signature, 'quoted', 'quoted*x')")
    mem.trajectories._index.forget()  # as a new process: the changed signatures are read, and read as one input
    assert best(mem, 'Add "rice" to the shopping list') == SHOPPING


def test_goals_of_one_wording_with_and_without_a_template_are_each_scored_as_they_are(mem: webmem.Memory) -> None:
    """Goals of one wording rank newest first, but one done with a template the new goal shares only values with
    scores less than the same wording done without: the newest do not stand for the older ones then."""
    save(mem, "Track my parcel")
    save(mem, "Search for smart watch reviews", age_days=4)
    save(mem, "Search for smart watch reviews", age_days=3)
    assert mem.trajectories.match("Compare smart watches", origin=ORIGIN, now=NOW, limit=1).candidates  # held now
    for age in (2, 1, 0):  # added to the goals held
        save(mem, "Search for smart watch reviews", steps=searched("smart watch"), age_days=age)
    [closest] = mem.trajectories.match("Compare smart watches", origin=ORIGIN, now=NOW, limit=1).candidates
    assert closest.trajectory.goal_template is None and closest.similarity > 0.4  # the one done without a template


def test_a_contrast_only_one_long_goal_mentions_in_passing_does_not_split_the_task(mem: webmem.Memory) -> None:
    save(mem, "Is there a red HDMI cable in the shop? If yes, order a single unit with express delivery "
              "and tell me the confirmation code and the delivery date")
    save(mem, "Subscribe to the newsletter")
    assert best(mem, "Does the shop sell a red HDMI cable? If so, order one unit with express delivery and "
                     "give me the confirmation code and delivery date; if not, say so") is not None
    assert best(mem, "Do not subscribe to the newsletter") is None  # in a short goal every word counts


def test_positions_and_directions_are_values_of_the_task(mem: webmem.Memory) -> None:
    save(mem, "Click the first link in the search results")
    save(mem, "Drag the blue square to the left")
    assert best(mem, "Click the third link in the search results") == "Click the first link in the search results"
    assert best(mem, "click the 4th link in the search results") == "Click the first link in the search results"
    assert best(mem, "Drag the blue square up") == "Drag the blue square to the left"


def test_a_word_every_goal_of_the_site_uses_counts_less_than_a_rare_one(mem: webmem.Memory) -> None:
    save(mem, "archive the quarterly invoices")
    for page in ("settings", "reports", "users"):
        save(mem, f"open the dashboard {page}")
    report = mem.trajectories.match("open the dashboard for quarterly invoices", origin=ORIGIN, now=NOW)
    by_goal = {c.trajectory.goal: c.similarity for c in report.candidates}
    # both share two words with the new goal; the rare ones weigh more than the ones every goal uses
    assert by_goal["archive the quarterly invoices"] > by_goal["open the dashboard settings"]
    assert report.best is not None and report.best.goal == "archive the quarterly invoices"


def test_a_form_counts_at_most_as_many_shapes_as_the_median_form_in_weighing_words() -> None:
    """Three tasks done twice and one done forty times (with other values): the often-done task's words weigh as if
    it too were done twice, and so do the words of a site of alike forms; a value still counts every shape."""
    def stored(number: int, goal: str) -> StoredGoal:
        return StoredGoal(f"traj_{number}", goal, None, NOW + timedelta(seconds=number), 0, 1, 1, signature(goal))

    tasks = ["Print the invoice of {}", "Archive the parcel of {}", "Track the order of {}", "Refund the payment of {}"]
    names = ["Ada", "Bea", "Cal", "Dov", "Eli", "Fay", "Gus", "Hal"]
    even, skewed = OriginGoals(), OriginGoals()
    for number, task in enumerate(tasks):
        for name in names[:2]:
            even.add(stored(len(even.records), task.format(name)))
    for number, task in enumerate(tasks):
        for first in (names if number == 0 else names[:2]):
            for second in (names[:5] if number == 0 else [""]):
                skewed.add(stored(len(skewed.records), task.format(first + second.lower())))
    assert skewed.form_shapes.counts[0] == 40 and skewed.form_shapes.cap() == LEAST_CAP
    assert skewed.shape_count == 46 and skewed.spread["invoic"] == 40
    for token in ("invoic", "print", "parcel", "never-seen"):
        assert skewed.weight(token) == pytest.approx(even.weight(token)), token
    assert skewed.weight("=adabea") > even.weight("=ada")  # a value: one shape of 46, not of 8

    def tokens_of(form: int) -> list[str]:
        return ["all", f"form{form}"]

    def fresh(counts: list[int]) -> tuple[int, int, list[int]]:
        made = FormShapes(list(counts))
        return made.cap(), made.uncounted(tokens_of), [made.uncounted(tokens_of, f"form{n}") for n in range(6)]

    made = FormShapes()
    for form in [0, 1, 1, 2, 2, 3, 3, 3, 3, 3, 4]:
        made.add(form, tokens_of)
    assert made.cap() == 2 and made.uncounted(tokens_of) == 3 == made.uncounted(tokens_of, "form3")
    assert made.uncounted(tokens_of, "all") == 3 and made.uncounted(tokens_of, "form2") == 0
    for form in (5, 3, 0, 5, 5, 4, 1, 1, 2, 4, 0):  # counted one at a time, as a snapshot's counts are counted whole
        made.add(form, tokens_of)
        assert (made.cap(), made.uncounted(tokens_of), [made.uncounted(tokens_of, f"form{n}") for n in range(6)]) \
            == fresh(made.counts), made.counts
    assert made.cap() == 3  # most forms now have three or more shapes


def test_different_tasks_on_one_site_stay_apart(mem: webmem.Memory) -> None:
    save(mem, "delete the book Blue Hour Sonnets")
    save(mem, "add a book titled Blue Hour Sonnets by Ann Lee")
    assert best(mem, "delete the book Harbors and Gardens") == "delete the book Blue Hour Sonnets"
    assert best(mem, "change the year of the book Blue Hour Sonnets to 1999") is None


def test_among_goals_of_one_shape_the_one_with_the_same_values_wins(mem: webmem.Memory) -> None:
    save(mem, "Who is the mayor of Paris according to the Paris article?", age_days=1)
    save(mem, "Who is the mayor of Lyon according to the Lyon article?", age_days=2)
    assert best(mem, "According to the Lyon article, who is its mayor?") == (
        "Who is the mayor of Lyon according to the Lyon article?"
    )


def test_a_signature_survives_its_stored_form() -> None:
    sig = signature('Buy 3 "red apples" for ann@example.com, not the cheapest, on 2026-01-02')
    assert decode(sig.encode(), None) == sig
    assert sig.kinds == {"number", "quoted", "email", "date"}
    assert sig.contrasts == {"buy", "cheapest", "not"}
    assert decode("s0\x1fold format", None) is None  # another version: rebuilt, never misread


# --- the report --------------------------------------------------------------------------------


def test_the_report_explains_every_candidate_and_why_the_winner_won(mem: webmem.Memory) -> None:
    won = save(mem, "Search for smart watch reviews")
    save(mem, "Track my parcel")
    save(mem, "Apply the promo code at checkout")
    report = mem.trajectories.match("find smart watch reviews", origin=ORIGIN, now=NOW)
    assert report.scored == 3 and len(report.candidates) == 3
    assert report.best is not None and report.best.id == won.id
    assert report.candidates[0].why.startswith("3 of 3 words shared") or "shared" in report.candidates[0].why
    assert won.id in report.reason and "shared" in report.reason
    assert all(candidate.why for candidate in report.candidates)
    top = mem.trajectories.match("find smart watch reviews", origin=ORIGIN, now=NOW, limit=1)
    assert top.scored == 3 and [c.trajectory.id for c in top.candidates] == [won.id]


def test_the_cli_match_explains_what_it_scored(sqlite_mem: webmem.Memory, memory_dir: Any) -> None:
    from click.testing import CliRunner

    from webmem.cli import cli

    save(sqlite_mem, "Search for smart watch reviews")
    result = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "match", "find watch reviews",
                                      "--url", SHOP], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Search for smart watch reviews" in result.output and "shared" in result.output


# --- the index ---------------------------------------------------------------------------------


def test_every_trajectory_of_an_origin_is_reachable_not_only_the_newest(mem: webmem.Memory) -> None:
    oldest = save(mem, "Export the quarterly invoices as a spreadsheet", age_days=5)
    with mem.store.write():
        for index in range(700):
            save(mem, f"Open the order number {index} details page", age_days=1)
    report = mem.trajectories.match("export quarterly invoices to a spreadsheet", origin=ORIGIN, now=NOW, limit=3)
    assert report.scored == 701
    assert report.best is not None and report.best.id == oldest.id


def test_the_closest_goals_found_through_the_index_are_those_a_full_scan_finds(mem: webmem.Memory) -> None:
    """The index skips goals that cannot beat the ones found (rare words first, common ones only as
    far as they could still matter); whatever it skips, the closest ``limit`` are the full scan's."""
    rng = random.Random(3)
    verbs = ["buy", "sell", "find", "compare", "review", "rate", "open", "export"]
    things = ["smart watch", "running shoes", "desk lamp", "coffee beans", "laptop bag", "phone case"]
    extras = ["cheapest", "most expensive", "for today", "on sale", "", "", "with free delivery"]
    with mem.store.write():
        for index in range(400):
            number = f" #{rng.randrange(50)}" if index % 3 else ""
            save(mem, f"{rng.choice(verbs)} the {rng.choice(things)} {rng.choice(extras)}{number}",
                 age_days=rng.random() * 5)
    for index in range(80):
        number = f" #{rng.randrange(60)}" if index % 2 else ""  # without one, a goal has a frame ("buy the ... today")
        goal = f"{rng.choice(verbs)} the {rng.choice(things)} {rng.choice(extras)}{number}"
        full = mem.trajectories.match(goal, origin=ORIGIN, now=NOW)
        for limit in (1, 3):
            pruned = mem.trajectories.match(goal, origin=ORIGIN, now=NOW, limit=limit)
            assert [(c.similarity, c.score) for c in pruned.candidates] == [
                (c.similarity, c.score) for c in full.candidates[:limit]], goal
            assert (pruned.best and pruned.best.id) == (full.best and full.best.id), goal
    # long goals, compared in order with those that begin alike
    openings, middles = ["Can you", "Please"], ["with the red lid", "in the second row", "that my friend liked", ""]
    with mem.store.write():
        for index in range(200):
            save(mem, f"{rng.choice(openings)} {rng.choice(verbs)} the {rng.choice(things)} {rng.choice(middles)} "
                      f"shown on this page {rng.choice(middles)} for me", url=FORUM, age_days=rng.random() * 5)
    for index in range(40):
        goal = (f"{rng.choice(openings)} {rng.choice(verbs)} the {rng.choice(things)} {rng.choice(middles)} "
                f"that I saw {rng.choice(middles)} on this page")
        full = mem.trajectories.match(goal, origin="https://forum.example.com", now=NOW)
        for limit in (1, 3):
            pruned = mem.trajectories.match(goal, origin="https://forum.example.com", now=NOW, limit=limit)
            assert [(c.similarity, c.score) for c in pruned.candidates] == [
                (c.similarity, c.score) for c in full.candidates[:limit]], goal


def test_a_goal_saved_after_a_match_is_found_by_the_next_match_in_the_same_process(mem: webmem.Memory) -> None:
    """The index held in memory grows with each save: a match that found nothing on the new goal's words
    (and holds what it read of them) finds the goal saved after it, with limit and without."""
    save(mem, "Search for smart watch reviews")
    for limit in (1, None):
        assert mem.trajectories.match("export quarterly invoices", origin=ORIGIN, now=NOW, limit=limit).best is None
    saved = save(mem, "Export the quarterly invoices")
    for limit in (1, None):
        found = mem.trajectories.match("export quarterly invoices", origin=ORIGIN, now=NOW, limit=limit).best
        assert found is not None and found.id == saved.id


def _repeated_task(rng: random.Random, kinds: int = 3) -> tuple[str, list[webmem.Step]]:
    """A goal of one of three tasks (the first ``kinds``) an agent does again and again, with values that recur, and
    its steps."""
    name, city, number = rng.choice(["Ann", "Bob", "Cyd", "Dee"]), rng.choice(["Paris", "Rome", "Oslo"]), rng.randrange(40)
    kind = rng.randrange(kinds)
    if kind == 0:
        return f"Search for order {number} of customer {name}", [
            webmem.Step(action="fill", target='textbox "Order"', value=str(number)),
            webmem.Step(action="click", target='button "Search"')]
    city_step = webmem.Step(action="fill", target='textbox "City"', value=city)
    if kind == 1:
        return f"Book a trip to {city} for {name}", [city_step, webmem.Step(action="fill", target='textbox "Name"',
                                                                             value=name)]
    return f"Book a trip to {city}", [city_step]


def test_a_task_done_many_times_is_ranked_as_a_full_scan_ranks_it(mem: webmem.Memory) -> None:
    """Goals of one task differ only by their values and score alike: of those that agree alike on values
    with the new goal only the newest are scored; whatever is skipped, the closest are the full scan's,
    with runs stored out of the order they were made (an import, two processes saving at once) too."""
    rng = random.Random(5)
    for kinds in (1, 3, 3):  # matches between the saves, and new tasks naming values the first one named
        with mem.store.write():
            for index in range(100):
                goal, steps = _repeated_task(rng, kinds)
                save(mem, goal, steps=steps, age_days=(300 - index) / 100 if index % 7 else rng.random() * 4)
        for _ in range(25):
            goal, _ = _repeated_task(rng)
            full = mem.trajectories.match(goal, origin=ORIGIN, now=NOW)
            for limit in (1, 3):
                pruned = mem.trajectories.match(goal, origin=ORIGIN, now=NOW, limit=limit)
                assert [(c.trajectory.id, c.similarity, c.score) for c in pruned.candidates] == [
                    (c.trajectory.id, c.similarity, c.score) for c in full.candidates[:limit]], goal


def test_a_goal_of_no_words_that_count_is_matched_to_nothing_without_an_error(mem: webmem.Memory) -> None:
    save(mem, "Buy the blue kettle")
    for goal in ("do it", "please", "?!"):
        report = mem.trajectories.match(goal, origin=ORIGIN, now=NOW, limit=1)
        assert report.best is None and report.scored == 1
    save(mem, "Do it for me now")  # no word that counts, but a frame: the same words find it, and say so
    for limit in (1, None):
        report = mem.trajectories.match("do it for me now", origin=ORIGIN, now=NOW, limit=limit)
        assert report.best is not None and report.best.goal == "Do it for me now"
        assert report.candidates[0].why.startswith('begins and ends alike (100% of the words: "do it ... me now")')
    assert mem.trajectories.match("Do that for me now", origin=ORIGIN, now=NOW).best is None


def test_only_the_winner_is_decoded(mem: webmem.Memory) -> None:
    winner = save(mem, "Search for smart watch reviews")
    loser = save(mem, "Search for running shoe reviews")
    # a candidate whose steps could not even be read does not stop the match, since they are never read
    rows.execute(mem, "UPDATE trajectories SET steps = :bad WHERE trajectory_id = :id", bad='"not a step list"',
                 id=loser.id)
    report = mem.trajectories.match("find smart watch reviews", origin=ORIGIN, now=NOW)
    assert report.best is not None and report.best.id == winner.id
    assert {c.trajectory.id for c in report.candidates} == {winner.id, loser.id}
    assert next(c for c in report.candidates if c.trajectory.id == loser.id).trajectory.step_count == 1


def test_a_trajectory_saved_by_another_process_is_found_at_once(open_memory: Any) -> None:
    reader = open_memory()
    writer = open_memory()
    save(reader, "Track my parcel")
    assert best(reader, "search smart watch reviews") is None  # the origin is now held by the reader
    save(writer, "Search for smart watch reviews")
    assert best(reader, "search smart watch reviews") == "Search for smart watch reviews"
    assert best(reader, "track my parcel") == "Track my parcel"


def test_what_a_memory_saves_or_deletes_is_found_or_gone_at_its_next_match_whichever_thread_wrote_it(
    mem: webmem.Memory,
) -> None:
    save(mem, "Track my parcel")
    assert best(mem, "search smart watch reviews") is None  # the origin is held, and found current
    watch = save(mem, "Search for smart watch reviews")  # the same thread: the same connection wrote it
    assert best(mem, "search smart watch reviews") == "Search for smart watch reviews"
    mem.forget.trajectory(watch.id)
    assert best(mem, "search smart watch reviews") is None
    saver = threading.Thread(target=save, args=(mem, "Search for running shoe reviews"))  # its own connection
    saver.start()
    saver.join()
    assert best(mem, "search running shoe reviews") == "Search for running shoe reviews"
    with pytest.raises(RuntimeError), mem.store.write():  # saved, then rolled back: never offered
        save(mem, "Compare coffee bean prices")
        raise RuntimeError("rolled back")
    assert best(mem, "compare coffee bean prices") is None


def traced(mem: webmem.Memory, action: Any) -> tuple[Any, list[str]]:
    """What ``action(conn)`` returns inside a read of SQLite memory ``mem``, and the statements SQLite ran for it."""
    statements: list[str] = []
    with mem.store.read() as conn:
        driver = conn.connection.driver_connection
        driver.set_trace_callback(statements.append)
        try:
            return action(conn), statements
        finally:
            driver.set_trace_callback(None)


def test_threads_matching_and_saving_on_one_origin_together_all_succeed(mem: webmem.Memory) -> None:
    """Goals saved in one thread are added to the origin's goals while others rank them: a reader never sees
    one half added (matches ended in IndexError or TypeError when a thread switch fell inside an add)."""
    words = ["parcel", "order", "invoice", "pizza", "ticket", "flight", "hotel", "refund", "coupon", "basket"]

    def goal(rng: random.Random) -> str:
        return (f"{rng.choice(['Track', 'Open', 'Print', 'Cancel'])} the {rng.choice(words)} {rng.choice(words)} "
                f"of customer {rng.choice(['Ann', 'Bob', 'Cyd'])} {rng.randrange(50)}")

    rng = random.Random(1)
    for _ in range(100):
        save(mem, goal(rng))
    failures: list[BaseException] = []
    done = threading.Event()

    def matching(seed: int) -> None:
        rng = random.Random(seed)
        while not done.is_set():
            try:
                mem.trajectories.match(goal(rng), origin=ORIGIN, limit=1)
                mem.trajectories.search_replay(goal(rng), ORIGIN)
            except BaseException as exc:  # noqa: BLE001  (whatever it is, the test reports it)
                failures.append(exc)
                done.set()

    def saving() -> None:
        rng = random.Random(3)
        try:
            for _ in range(200):
                if done.is_set():
                    return
                save(mem, goal(rng) + " " + "".join(rng.choice("bcdfghklmnprstvz") for _ in range(6)))
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)
        finally:
            done.set()

    run_together([lambda: matching(2), lambda: matching(4), saving])
    assert not failures, repr(failures[0])
    assert mem.trajectories.match("Track the parcel order of customer Ann 3", origin=ORIGIN).scored == 300


def test_a_goal_saved_here_is_held_once_its_save_commits_and_never_read_back(sqlite_mem: webmem.Memory) -> None:
    save(sqlite_mem, "Track my parcel")
    assert best(sqlite_mem, "search smart watch reviews") is None  # the origin is held
    save(sqlite_mem, "Search for smart watch reviews")
    found, statements = traced(sqlite_mem, lambda conn: best(sqlite_mem, "search smart watch reviews"))
    assert found == "Search for smart watch reviews"
    assert statements and not [sql for sql in statements if "origin_seq >" in sql], statements


def test_the_goals_held_stay_within_their_bound_however_they_were_read(sqlite_mem: webmem.Memory) -> None:
    index = GoalIndex(sqlite_mem.namespace, max_goals=8)  # an index of its own: the memory's matches keep theirs
    parcels, pizzas = "https://parcels.example/", "https://pizza.example/"

    def rows_read(origin: str) -> list[str]:
        _, statements = traced(sqlite_mem, lambda conn: index.goals(conn, origin_of(origin)))
        return [sql for sql in statements if sql.startswith("SELECT trajectory_id")]

    for number in range(3):
        save(sqlite_mem, f"Track parcel {number}", url=parcels)
    assert rows_read(parcels)
    for number in range(3, 6):
        save(sqlite_mem, f"Track parcel {number}", url=parcels)
    assert rows_read(parcels)  # the three new goals, on top of those held: six held
    assert not rows_read(parcels)
    for number in range(3):
        save(sqlite_mem, f"Order pizza {number}", url=pizzas)
    assert rows_read(pizzas)  # nine goals: past the bound, the origin used least recently goes
    assert not rows_read(pizzas)
    assert rows_read(parcels)  # read again


def test_a_trajectory_deleted_by_another_process_is_never_offered(open_memory: Any) -> None:
    reader = open_memory()
    writer = open_memory()
    save(writer, "Search for smart watch reviews", age_days=60)
    save(writer, "Track my parcel")
    assert best(reader, "track my parcel") == "Track my parcel"
    old = reader.trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW)
    assert old.best is None and old.candidates[0].reason.startswith("expired")
    assert writer.trajectories.prune(now=NOW) == 1
    report = reader.trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW)
    assert report.scored == 1 and report.candidates[0].trajectory.goal == "Track my parcel"


MANY = SNAPSHOT_MIN_GOALS + 6
ORDERS = [f"Open the order of customer {name} and print its invoice" for name in (
    "Adams Baker Clark Davis Evans Foster Green Harris Irving Jones Kelly Lewis Moore Nolan Owens Parker Quinn "
    "Reed Scott Turner Underwood Vance Walker Young Zimmer"
).split()]


def fill(mem: webmem.Memory) -> list[webmem.Trajectory]:
    with mem.store.write():
        saved = [save(mem, "Export the quarterly invoices as a spreadsheet")]
        saved += [save(mem, ORDERS[index % len(ORDERS)] + f" for week {index}") for index in range(MANY - 1)]
    return saved


def snapshot_of(mem: webmem.Memory) -> Any:
    found = rows.values(mem, "trajectory_snapshots", "snapshot", origin=ORIGIN)
    assert rows.value(mem, "trajectory_origins", "snapshot", origin=ORIGIN) is None  # never in the origin's row
    return found[0] if found else None


def test_an_origin_of_many_goals_keeps_a_snapshot_that_a_new_process_reads_instead_of_the_rows(
    open_memory: Any,
) -> None:
    first = open_memory()
    with first.store.write():
        for index in range(SNAPSHOT_MIN_GOALS - 1):
            save(first, ORDERS[index % len(ORDERS)] + f" for day {index}")
    assert snapshot_of(first) is None  # a small origin is read from its rows
    saved = fill(first)
    assert snapshot_of(first) is not None  # saves keep it at most a sixteenth of the goals behind
    total = MANY + SNAPSHOT_MIN_GOALS - 1
    covered = rows.value(first, "trajectory_origins", "snapshot_seq", origin=ORIGIN)
    assert total - total // SNAPSHOT_REFRESH_SHARE <= covered <= total
    saves_between = []  # not rewritten by every save: once a sixteenth of the goals came after it
    for _ in range(2):
        seen, count = rows.value(first, "trajectory_origins", "snapshot_seq", origin=ORIGIN), 0
        while rows.value(first, "trajectory_origins", "snapshot_seq", origin=ORIGIN) == seen:
            count += 1
            total += 1
            save(first, ORDERS[count % len(ORDERS)] + f" on day {count}")
            assert count <= total // SNAPSHOT_REFRESH_SHARE + 1
        saves_between.append(count)
    assert saves_between[1] >= total // SNAPSHOT_REFRESH_SHARE - 1

    # the rows are not read again: a goal changed behind the snapshot's back still shows as it was
    rows.execute(first, "UPDATE trajectories SET goal = 'changed behind its back' WHERE trajectory_id = :id",
                 id=saved[0].id)
    later = save(open_memory(), "Cancel the subscription of the newsletter")
    reader = open_memory()
    listed = reader.trajectories.match("export the quarterly invoices", origin=ORIGIN, now=NOW, limit=1)
    assert listed.candidates[0].trajectory.goal == saved[0].goal
    report = reader.trajectories.match("cancel my newsletter subscription", origin=ORIGIN, now=NOW)
    assert report.scored == total + 1 and report.best is not None and report.best.id == later.id


def test_a_snapshot_that_holds_every_goal_is_read_without_asking_for_rows(
    sqlite_mem: webmem.Memory, memory_dir: Any,
) -> None:
    fill(sqlite_mem)
    covered, count = rows.value(sqlite_mem, "trajectory_origins", "snapshot_seq", origin=ORIGIN), 0
    while rows.value(sqlite_mem, "trajectory_origins", "snapshot_seq", origin=ORIGIN) == covered:
        count += 1  # until a save brings the snapshot up to date: it then holds every goal
        save(sqlite_mem, ORDERS[count % len(ORDERS)] + f" on day {count}")
    reader = webmem.Memory.open(memory_dir)
    try:
        held, statements = traced(reader, lambda conn: reader.trajectories._held(conn, ORIGIN))
        assert len(held.goals) == MANY + count
        assert any("trajectory_snapshots" in statement for statement in statements)
        assert not any("FROM trajectories " in statement for statement in statements), statements
        save(sqlite_mem, "Cancel the subscription of the newsletter")  # one goal newer than the snapshot
        held, statements = traced(reader, lambda conn: reader.trajectories._held(conn, ORIGIN))
        assert len(held.goals) == MANY + count + 1 and any("FROM trajectories " in s for s in statements)
    finally:
        reader.close()


def test_a_snapshot_older_than_a_deletion_is_never_used(open_memory: Any) -> None:
    first = open_memory()
    fill(first)
    doomed = save(first, "Search for smart watch reviews", age_days=60)
    more = 0
    while doomed.goal not in snapshot_of(first):  # saves bring the snapshot up to date every few goals
        more += 1
        assert more <= MANY // SNAPSHOT_REFRESH_SHARE + 1
        save(first, ORDERS[more] + " again")
    assert open_memory().trajectories.prune(now=NOW) == 1
    report = open_memory().trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW)
    assert doomed.id not in {candidate.trajectory.id for candidate in report.candidates}
    assert report.scored == MANY + more
    # the next save makes the snapshot anew, without the deleted goal
    save(first, "Cancel the subscription of the newsletter")
    assert doomed.goal not in snapshot_of(first) and "newsletter" in snapshot_of(first)
    assert open_memory().trajectories.match("search smart watch reviews", origin=ORIGIN, now=NOW).scored == MANY + more + 1


def test_a_snapshot_kept_in_its_origins_row_before_0014_moves_to_its_own_table_and_is_read(
    open_memory: Any, memory_location: str,
) -> None:
    first = open_memory()
    saved = fill(first)
    snapshot = snapshot_of(first)
    first.close()
    store = rows.open_store(memory_location)
    try:  # the memory as webmem before 0014 left it: the snapshot in the origin's row
        with store.write() as conn:
            conn.execute(text("UPDATE trajectory_origins SET snapshot = :snapshot"), {"snapshot": snapshot})
            conn.execute(text("DROP TABLE trajectory_snapshots"))
            conn.execute(text("DELETE FROM webmem_migrations WHERE name = '0014_snapshots_apart'"))
            conn.execute(text("UPDATE trajectories SET goal = 'changed behind its back' WHERE trajectory_id = :id"),
                         {"id": saved[0].id})
    finally:
        store.close()
    reader = open_memory()
    assert snapshot_of(reader) == snapshot
    report = reader.trajectories.match("export the quarterly invoices", origin=ORIGIN, now=NOW, limit=1)
    assert report.candidates[0].trajectory.goal == saved[0].goal  # read from the moved snapshot, not the rows


@pytest.mark.parametrize("broken", ["not json", '{"format": 1}', '{"format": 99, "records": []}', "[]", "cut",
                                    "altered"])
def test_an_unreadable_snapshot_is_ignored(open_memory: Any, broken: str) -> None:
    first = open_memory()
    saved = fill(first)
    snapshot = snapshot_of(first)
    if broken == "cut":  # a snapshot of this version, cut short
        broken = snapshot[:-40]
    elif broken == "altered":  # of the right length, one goal's line no longer readable (read only when ranked)
        lines = snapshot.split("\n")
        lines = [line.replace("[", "(", 1) if line.startswith('["traj_') else line for line in lines]
        broken = "\n".join(lines)
        assert broken != snapshot and len(broken) == len(snapshot)
    rows.execute(first, "UPDATE trajectory_snapshots SET snapshot = :broken", broken=broken)
    reader = open_memory()
    assert best(reader, "export the quarterly invoices") == saved[0].goal
    assert reader.trajectories.match("export the quarterly invoices", origin=ORIGIN, now=NOW).scored == MANY


def test_a_snapshot_written_before_forms_counted_their_shapes_is_not_read(open_memory: Any) -> None:
    """Without each form's number of shapes, the words of a snapshot's origin cannot be weighed: the origin is read
    from its rows (which show a goal changed behind the snapshot's back)."""
    assert_read_from_rows_with_header(open_memory, lambda header: {
        key: value for key, value in header.items() if key != "form_shapes"})


def assert_read_from_rows_with_header(open_memory: Any, changed: Any) -> None:
    """A snapshot whose header is ``changed`` (a function of the header) is not read: a goal changed behind its back
    shows as its row says."""
    first = open_memory()
    saved = fill(first)
    header, _, rest = snapshot_of(first).partition("\n")[2].partition("\n")  # without its checksum line
    body = json.dumps(changed(json.loads(header)), ensure_ascii=False, separators=(",", ":")) + "\n" + rest
    rows.execute(first, "UPDATE trajectory_snapshots SET snapshot = :old", old=checksum(body) + "\n" + body)
    rows.execute(first, "UPDATE trajectories SET goal = 'changed behind its back' WHERE trajectory_id = :id",
                 id=saved[0].id)
    report = open_memory().trajectories.match("export the quarterly invoices", origin=ORIGIN, now=NOW, limit=1)
    assert report.candidates[0].trajectory.id == saved[0].id
    assert report.candidates[0].trajectory.goal == "changed behind its back"


def test_a_goal_saved_after_a_match_on_an_origin_read_from_its_snapshot_is_found(open_memory: Any) -> None:
    """An origin read from its snapshot holds its words' forms as text, made into masks as matches ask:
    a goal saved after a match in the same process is found by the next, through the masks already made."""
    fill(open_memory())
    reader = open_memory()
    assert snapshot_of(reader) is not None
    assert reader.trajectories.match("archive the yearly receipts", origin=ORIGIN, now=NOW, limit=1).best is None
    saved = save(reader, "Archive the yearly receipts")
    found = reader.trajectories.match("archive the yearly receipts", origin=ORIGIN, now=NOW, limit=1).best
    assert found is not None and found.id == saved.id


def test_the_forms_of_a_word_stay_whole_when_goals_are_added_to_an_origin_read_from_its_snapshot() -> None:
    def stored(number: int, goal: str) -> StoredGoal:
        return StoredGoal(f"traj_{number}", goal, None, NOW, 0, 1, 1, signature(goal))

    held = OriginGoals()
    for number, goal in enumerate(["Open the order of customer Ann", "Print the order list", "Track the parcel"]):
        held.add(stored(number, goal))
    read = unpack(pack(held))
    assert read is not None
    read.add(stored(3, "Cancel the order of customer Bob"))  # new form; "order" and "custom" already had forms
    for found in (held, read):
        for token in ("order", "custom", "cancel", "parcel"):
            assert found.posting_mask(token) == sum(1 << form for form in found.postings.get(token, ())), token
    assert bin(read.posting_mask("order")).count("1") == 3


def test_goals_added_to_an_origin_read_from_its_snapshot_leave_it_as_if_every_goal_had_been_added() -> None:
    """An origin read from a snapshot keeps its ids and shapes as text until asked for them as sets: goals added
    to it (some of a shape it holds, some of a new one) are held exactly as adding them all from the start holds
    them, whether its sets were made before the adds or after some (one at a time, a few or many together)."""
    rng = random.Random(7)
    verbs, things = ["Open", "Print", "Track", "Archive"], ["order", "invoice", "parcel", "receipt", "report"]
    texts = [f"{rng.choice(verbs)} the {rng.choice(things)} {number}" for number in range(60)]
    goals = [StoredGoal(f"traj_{number}", text, None, NOW + timedelta(seconds=number), 0, 1, 1, signature(text))
             for number, text in enumerate(texts)]
    whole = OriginGoals()
    for goal in goals:
        whole.add(goal)
    part = OriginGoals()
    for goal in goals[:40]:
        part.add(goal)
    for way in ("one at a time", "sets asked before", "a few, then many together", "held ones again"):
        read = unpack(pack(part))
        assert read is not None
        if way == "sets asked before":
            assert len(read.ids) == 40 and len(read.shapes) == read.shape_count
        if way.startswith("a few"):
            read.add_new(goals[40:45])
            read.add_new(goals[45:])
        elif way == "held ones again":
            read.add_new(goals[35:50])  # five it holds: not added twice
            read.add_new(goals[48:])
        else:
            for goal in goals[40:]:
                assert not read.holds(goal.id)
                read.add(goal)
                assert read.holds(goal.id)
        assert all(read.holds(goal.id) for goal in goals), way
        assert not read.holds("traj_") and not read.holds("traj_60") and not read.holds("")
        assert read.shape_count == whole.shape_count and read.spread == whole.spread
        assert pack(read) == pack(whole), way
        assert read.ids == whole.ids and read.shapes == whole.shapes


def test_the_forms_naming_a_value_and_their_counts_stay_right_as_goals_are_added() -> None:
    def stored(number: int, goal: str) -> StoredGoal:
        return StoredGoal(f"traj_{number}", goal, None, NOW, 0, 1, 1, signature(goal))

    def forms_naming(found: OriginGoals, value: str) -> list[int]:
        return [found.form_of[position] for position in found.valued.get(value, ())]

    held = OriginGoals()
    for number, goal in enumerate(["Open the order of customer Ann", "Open the order of customer Bob"]):
        held.add(stored(number, goal))
    read = unpack(pack(held))
    assert read is not None
    for found in (held, read):
        assert found.value_mask("ann") == 1 and found.naming("ann", 0, templates=False) == 1  # asked: remembered
        found.add(stored(5, "Open the order of customer Ann"))
        found.add(stored(6, "Print the invoice of Ann"))  # a new form naming the value
        assert found.value_mask("ann") == sum({1 << form for form in forms_naming(found, "ann")}) == 0b11
        assert found.naming("ann", 0, templates=False) == forms_naming(found, "ann").count(0) == 2
        assert found.value_mask("zed") == 0 and "zed" not in found._value_masks


def test_what_an_origin_remembers_of_the_goals_it_was_asked_about_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process matching a stream of new goals (new words, values of their own) keeps no trace of each: the
    weights and masks it remembers are those of stored tokens, and the sums it remembers stay within their bound."""
    monkeypatch.setattr(held_module, "REMEMBERED_BEYOND_GOALS", 5)
    held = OriginGoals()
    for number, goal in enumerate(["Track the parcel 1 of customer Ann", "Order a pizza with olives", "Print the list"]):
        held.add(StoredGoal(f"traj_{number}", goal, None, NOW, 0, 1, 1, signature(goal)))
    rng = random.Random(3)
    for number in range(60):
        word = "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(7))
        goal = f"Track the {word} parcel {number + 100} of customer Zed{number}"
        assert rank(held, signature(goal), goal, limit=1, competing=lambda stored: True)
    assert set(held._weights) <= set(held.spread)
    assert all(held.postings.get(token) for token in held._masks)
    assert len(held._sums) <= 3 + 5 and len(held._value_sums) <= 3 + 5  # three goals held


def test_the_weights_a_form_may_have_to_compete_are_those_its_dice_allows() -> None:
    rng = random.Random(11)
    for _ in range(20_000):
        total, need = rng.uniform(0.5, 60), rng.choice([rng.uniform(-0.5, 1), rng.uniform(0.4, 0.6)])
        common = rng.uniform(0, total)
        if need > 0 and 2 * common < need * (total + common):
            continue  # the whole group is out: never asked
        lightest, heaviest = _own_weights(need, common, total)
        own = rng.choice([rng.uniform(0, 3 * total), lightest, heaviest, common])
        if need <= 0 or 2 * min(common, own) >= need * (total + own):
            assert lightest <= own <= heaviest, (need, common, total, own)
        elif lightest <= own <= heaviest:  # kept by the widening only: within a hair of the bound
            assert 2 * min(common, own) >= need * (total + own) - 1e-9


@pytest.mark.parametrize("old_format", [4, 5, 6])
def test_a_snapshot_of_an_earlier_format_is_not_read(open_memory: Any, old_format: int) -> None:
    """Earlier formats lack what this one indexes (format 6 the token of a text, ``wordings.text_token_of``): the
    origin is read from its rows (which show a goal changed behind the snapshot's back)."""
    assert_read_from_rows_with_header(open_memory, lambda header: {**header, "format": old_format})


def test_signatures_stored_by_another_version_of_the_matcher_are_made_anew_and_written_back(open_memory: Any) -> None:
    """A memory saved by another version of the matcher (an upgrade) holds signatures, and a snapshot, that this one
    does not read: the first match reads the goals from their rows and makes their signatures anew, then writes
    them back with a snapshot made anew, so that no later process parses the goals again."""
    first = open_memory()
    saved = fill(first)
    old = "s0"
    rows.execute(first, "UPDATE trajectories SET goal_signature = :old || substr(goal_signature, 3)", old=old)
    header, _, rest = snapshot_of(first).partition("\n")[2].partition("\n")
    body = json.dumps({**json.loads(header), "signature": old}, ensure_ascii=False, separators=(",", ":")) + "\n" + rest
    rows.execute(first, "UPDATE trajectory_snapshots SET snapshot = :old", old=checksum(body) + "\n" + body)
    assert rows.count(first, "trajectories", "goal_signature LIKE 's0%'") == MANY

    report = open_memory().trajectories.match("export the quarterly invoices", origin=ORIGIN, now=NOW)
    assert report.best is not None and report.best.id == saved[0].id and report.scored == MANY
    stored = rows.values(first, "trajectories", "goal_signature", origin=ORIGIN)
    assert len(stored) == MANY and all(decode(encoded, None) is not None for encoded in stored)
    assert unpack(snapshot_of(first)) is not None  # of this version again
    # a goal changed behind the snapshot's back still shows as it was: the next process reads the snapshot
    rows.execute(first, "UPDATE trajectories SET goal = 'changed behind its back' WHERE trajectory_id = :id",
                 id=saved[0].id)
    listed = open_memory().trajectories.match("export the quarterly invoices", origin=ORIGIN, now=NOW, limit=1)
    assert listed.candidates[0].trajectory.goal == saved[0].goal


def test_processes_writing_back_signatures_while_another_saves_all_succeed(open_memory: Any) -> None:
    """Several processes read origins whose rows are of another version of the matcher (each writes back what
    it made anew, unless a save holds the origin) while another saves on the same origins (a save writes back the
    rows it reads too): none fails, none waits on another for good, and every row ends of this version once read."""
    sites = [f"https://shop{number}.example.com/" for number in range(6)]
    first = open_memory()
    with first.store.write():
        for url in sites:
            for index in range(SNAPSHOT_MIN_GOALS + 4):
                save(first, ORDERS[index % len(ORDERS)] + f" for day {index}", url=url)
    rows.execute(first, "UPDATE trajectories SET goal_signature = 's0' || substr(goal_signature, 3)")
    rows.execute(first, "DELETE FROM trajectory_snapshots")  # as a memory the matcher's version never read
    readers = [open_memory() for _ in range(3)]
    saver = open_memory()
    failures: list[BaseException] = []

    def reading(mem: webmem.Memory, order: list[str]) -> None:
        try:
            for url in order:
                mem.trajectories.match("print the invoice of customer Ann", origin=url, now=NOW, limit=1)
        except BaseException as exc:  # noqa: BLE001  (whatever it is, the test reports it)
            failures.append(exc)

    def saving() -> None:
        try:
            for url in sites:
                save(saver, "Cancel the subscription of the newsletter", url=url)
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)

    run_together([*(lambda mem=mem, shift=shift: reading(mem, sites[shift:] + sites[:shift])
                    for shift, mem in zip((0, 2, 4), readers)), saving])
    assert not failures, repr(failures[0])
    for url in sites:  # what a read left to a later one while a save held its origin is written back now
        report = open_memory().trajectories.match("cancel the newsletter subscription", origin=url, now=NOW)
        assert report.best is not None and report.scored == SNAPSHOT_MIN_GOALS + 5
    assert rows.count(first, "trajectories", "goal_signature LIKE 's0%'") == 0


def _deadlocks(mem: webmem.Memory) -> int:
    """How many deadlocks PostgreSQL broke in this database so far (0 on SQLite)."""
    if mem.store.dialect != "postgresql":
        return 0
    with mem.store.read() as conn:
        return int(conn.execute(text("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"))
                   .scalar_one())


def _stale_goal_after_the_snapshot(first: webmem.Memory) -> Any:
    """A goal saved after the origin's snapshot (read from its row), with a signature of another version of the
    matcher: a match that reads it writes its signature back."""
    fill(first)
    with first.store.write():  # enough goals that a save leaves the snapshot as it is (a sixteenth behind)
        for index in range(2 * MANY):
            save(first, ORDERS[index % len(ORDERS)] + f" for month {index}")
    while rows.value(first, "trajectory_origins", "snapshot_seq", origin=ORIGIN) != \
            rows.value(first, "trajectory_origins", "version", origin=ORIGIN):
        save(first, "Cancel the subscription of the newsletter")  # until the snapshot holds every goal
    late = save(first, "Renew the subscription of customer Ann")  # after the snapshot: read from its row
    rows.execute(first, "UPDATE trajectories SET goal_signature = 's0' || substr(goal_signature, 3)"
                        " WHERE trajectory_id = :id", id=late.id)
    return late


def test_a_match_that_finds_stale_goals_never_waits_for_a_save_holding_their_origin(open_memory: Any) -> None:
    """A match writes back the signatures it made anew once it has answered, but only if it can at once: while a
    save holds the origin (its row on PostgreSQL, the write lock on SQLite) the match answers and leaves them to a
    later read (or to the save, which writes back the stale rows it reads). It never waits for the save (up to a minute on SQLite, then an error), and never deadlocks with it
    when the save writes one of those rows itself (PostgreSQL)."""
    first = open_memory()
    late = _stale_goal_after_the_snapshot(first)
    reader, saver = open_memory(), open_memory()
    deadlocks = _deadlocks(first)
    answered: list[Any] = []

    def reading() -> None:
        try:
            answered.append(reader.trajectories.match("renew the subscription of customer Ann", origin=ORIGIN,
                                                      now=NOW, limit=1))
        except BaseException as exc:  # noqa: BLE001  (whatever it is, the test reports it)
            answered.append(exc)

    thread = threading.Thread(target=reading)
    try:
        with saver.store.write() as conn:
            save(saver, "Print the invoice of customer Cyd")  # holds the origin until the commit
            thread.start()
            thread.join(timeout=20)
            assert not thread.is_alive(), "the match waited for the save"
            conn.execute(text("UPDATE trajectories SET goal_signature = goal_signature WHERE trajectory_id = :id"),
                         {"id": late.id})  # the save writes the row the match left stale
    finally:
        thread.join()
    assert isinstance(answered[0], webmem.MatchReport), repr(answered[0])
    assert answered[0].best is not None and answered[0].best.id == late.id
    reader.trajectories.match("renew the subscription of customer Ann", origin=ORIGIN, now=NOW, limit=1)
    assert decode(rows.value(first, "trajectories", "goal_signature", trajectory_id=late.id), None) is not None
    reader.close()  # a session's counts reach the statistics when it ends
    saver.close()
    time.sleep(0.2)
    assert _deadlocks(first) == deadlocks  # none was broken by ending one side


def test_a_line_of_keys_that_could_be_mistaken_for_json_is_written_as_json() -> None:
    for keys in ('"quoted"\x1eplain', "one\nline break", "plain\x1ekeys", ""):
        line = key_line(keys)
        assert "\n" not in line and read_key_line(line) == keys


def test_memories_from_before_the_index_are_indexed_when_opened(open_memory: Any, memory_location: str) -> None:
    store = rows.open_store(memory_location)
    try:
        apply_migrations(store, target="0008_replay_templates")
        steps = json.dumps([{"action": "click", "target": 'button "Go"', "ok": True, "verified": True}])
        with store.write() as conn:
            for number, goal in enumerate(("Search for smart watch reviews", "Track my parcel")):
                conn.execute(text(
                    "INSERT INTO trajectories (namespace, trajectory_id, goal, origin, domain, success, duration_ms,"
                    " created_at, steps) VALUES ('default', :id, :goal, :origin, 'www.example-shop.com', :ok, 10,"
                    " :at, :steps)"
                ), {"id": f"traj_old{number}", "goal": goal, "origin": ORIGIN, "ok": True, "at": NOW, "steps": steps})
    finally:
        store.close()
    mem = open_memory()
    report = mem.trajectories.match("find smart watch reviews", origin=ORIGIN, now=NOW)
    assert report.best is not None and report.best.id == "traj_old0"
    assert report.candidates[0].trajectory.verification_rate == 1.0
    assert rows.count(mem, "trajectories", "origin_seq IS NULL") == 0
    assert rows.value(mem, "trajectory_origins", "version", origin=ORIGIN) == 2
    assert mem.trajectories.index_legacy() == 0  # done once


def test_replay_tries_runs_in_one_order_whatever_order_they_were_stored_in(open_memory: Any) -> None:
    """Runs are tried for replay in one order (the same goal, then templates that bind it as it stands,
    then the others, each newest first) whether they were stored as they were made or not (an import,
    processes saving at once): the memory that stored them in order reads them without sorting."""
    rng = random.Random(9)
    made = [(*_repeated_task(rng), (300 - index) / 100) for index in range(300)]
    made += [(goal, steps, age + 0.001) for goal, steps, age in made[:40]]  # the same goals again, a moment older
    in_order, shuffled = open_memory(namespace="in-order"), open_memory(namespace="shuffled")
    for memory, runs in ((in_order, sorted(made, key=lambda run: -run[2])), (shuffled, rng.sample(made, len(made)))):
        with memory.store.write():
            for goal, steps, age in runs:
                save(memory, goal, steps=steps, age_days=age)
    for _ in range(40):
        goal, _ = _repeated_task(rng)
        found = [memory.trajectories.search_replay(goal, ORIGIN, now=NOW) for memory in (in_order, shuffled)]
        assert found[0].plan is not None, goal
        tried = [[(c.goal, c.created_at, c.fits, c.reason) for c in lookup.candidates] for lookup in found]
        assert tried[0] == tried[1], goal
        plans = [(lookup.plan.trajectory.goal, lookup.plan.trajectory.created_at, lookup.plan.slots) for lookup in found]
        assert plans[0] == plans[1], goal
        newest_same = max((age for made_goal, _, age in made if made_goal.split() == goal.split()), default=None,
                          key=lambda age: -age)
        if newest_same is not None:  # the same goal done before: the newest such run
            assert found[0].plan.trajectory.created_at == NOW - timedelta(days=newest_same), goal


def test_replay_reaches_past_the_newest_trajectories(mem: webmem.Memory) -> None:
    steps = [webmem.Step(action="fill", target='textbox "Name"', value="Kasie"),
             webmem.Step(action="click", target='button "Submit"')]
    save(mem, 'Enter "Kasie" and press Submit', steps=steps, age_days=3)
    with mem.store.write():
        for index in range(600):
            save(mem, f"Open the order number {index} details page", age_days=1)
    plan = mem.trajectories.find_replay('Enter "Noor" and press Submit', SHOP, now=NOW)
    assert plan is not None and plan.steps[0].value == "Noor"


# --- the semantic stage ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wordllama() -> webmem.WordLlamaEmbedder:
    return webmem.WordLlamaEmbedder()


class Renamed:
    """The same vectors under another model name, as after an upgrade of the embedder."""

    def __init__(self, inner: webmem.WordLlamaEmbedder) -> None:
        self._inner = inner

    name = "wordllama-renamed"

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Any) -> list[list[float]]:
        return self._inner.embed(texts)


KETTLE = "Check whether the blue kettle is in stock and how many days delivery takes"


def test_a_goal_embedder_rescues_rewordings_the_words_miss(open_memory: Any, wordllama: Any) -> None:
    lexical = open_memory()
    semantic = open_memory(goal_embedder=wordllama)
    for mem in (lexical, semantic):
        save(mem, KETTLE)
        save(mem, "Cancel my newsletter subscription")
    reworded = "Is the blue kettle available right now, and how long would shipping take"
    assert best(lexical, reworded) is None
    assert best(semantic, reworded) == KETTLE
    candidate = semantic.trajectories.match(reworded, origin=ORIGIN, now=NOW).candidates[0]
    assert candidate.semantic is not None and "reworded" in candidate.why
    assert best(semantic, "Delete my account") is None


def test_a_short_goal_may_leave_out_an_input_in_quotes(mem: webmem.Memory) -> None:
    """A short goal that gives fewer inputs in quotes than a stored one asks for that task with an input left out
    (a field it does not fill, a clause of the task it does not need); a long goal spells its task out, and one that
    gives another number of inputs than a long stored goal is another task."""
    save(mem, 'Type a city that begins with "Ma" and ends with "id" into the search box.')
    save(mem, LOGIN, url="https://accounts.example-shop.com/")
    found = mem.trajectories.match('Type a city that begins with "Lis" into the search box.', origin=ORIGIN, now=NOW)
    assert found.best is not None and "in quotes" not in found.candidates[0].why
    accounts = "https://accounts.example-shop.com"
    assert best(mem, 'Enter the password "AU" into the text fields and press login.', accounts) == LOGIN
    long = ('Open the settings of the shop and, in the section for the newsletter, write "Weekly deals" as its title '
            'and "Every Monday" as its subtitle, then save the settings and reload the page of the newsletter.')
    save(mem, long)
    fewer = long.replace(' and "Every Monday" as its subtitle', "")
    assert len(signature(fewer).terms) > SHORT_GOAL_TERMS
    report = mem.trajectories.match(fewer, origin=ORIGIN, now=NOW)
    assert report.best is None and "gives 1 input in quotes, it gave 2" in report.candidates[0].why


def test_the_semantic_stage_rescues_no_goal_that_gives_other_inputs_in_quotes(open_memory: Any, wordllama: Any) -> None:
    """Entering a password twice and logging in with a username and a password read alike and share most words, but
    logging in asks for an input that entering a password never took: no rewording brings them together."""
    semantic = open_memory(goal_embedder=wordllama)
    save(semantic, PASSWORD_TWICE)
    asked = 'Enter the username "AU" and the password "Ny" into both text fields and press submit.'
    [candidate] = semantic.trajectories.match(asked, origin=ORIGIN, now=NOW).candidates
    assert candidate.semantic is not None and candidate.semantic >= 0.75 and not candidate.eligible
    assert best(semantic, 'Put the password "US" into both text fields and click submit.') == PASSWORD_TWICE


def test_the_semantic_stage_loads_embeds_and_matches_with_the_network_closed(
    open_memory: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The embedder's weights ship inside its package: loading it and matching with it open no connection."""
    tried: list[Any] = []

    def refused(*args: Any, **kwargs: Any) -> Any:
        tried.append(args)
        raise OSError("the network is closed in this test")

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, refused)
    monkeypatch.setattr(socket, "getaddrinfo", refused)
    monkeypatch.setattr(socket, "create_connection", refused)
    mem = open_memory(goal_embedder=webmem.WordLlamaEmbedder(dimension=128))  # loaded inside the closed network
    save(mem, KETTLE)
    assert best(mem, "Is the blue kettle available right now, and how long would shipping take") == KETTLE
    assert tried == []


def test_goal_vectors_are_stored_and_remade_when_the_model_changes(open_memory: Any, wordllama: Any) -> None:
    first = open_memory(goal_embedder=wordllama)
    saved = save(first, KETTLE)
    assert rows.value(first, "trajectories", "goal_vector_model", trajectory_id=saved.id) == wordllama.name + "|read"
    second = open_memory(goal_embedder=Renamed(wordllama))
    assert best(second, "Is the blue kettle available right now, and how long would shipping take") == KETTLE
    assert rows.value(second, "trajectories", "goal_vector_model", trajectory_id=saved.id) == "wordllama-renamed|read"


def test_a_goal_embedder_that_is_not_one_is_refused_by_name(open_memory: Any) -> None:
    with pytest.raises(webmem.InvalidInput, match="goal_embedder"):
        open_memory(goal_embedder="wordllama")

"""Goals that are texts: a task described in a paragraph, whose first words are often the values of its template."""

from __future__ import annotations

from datetime import UTC, datetime

import webmem
from webmem.trajectories.conflicts import contrast_conflict, other_inputs
from webmem.trajectories.held import OriginGoals, StoredGoal
from webmem.trajectories.ranking import rank
from webmem.trajectories.recall import score, signature
from webmem.trajectories.snapshots import pack, unpack
from webmem.trajectories.wordings import LONG_TEXT_WORDS, in_order_share, word_count

DOCS = "https://docs.example.com/"
ORIGIN = "https://docs.example.com"
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

GIFT = ("My {rel}, {name}, has just {event}. I want to buy {pron} {item} as a gift and need help choosing between "
        "the options: {options}. Create a slide deck that compares them for {use}. The presentation should be "
        "{tone} rather than dry. Begin with a title slide reading \"A Gift for {name}!\" with a photo of {photo} on "
        "the right. Then a slide on what matters most when choosing: {criteria}. Then one slide per option with its "
        "pros and cons, a slide with a comparison table, and a last slide on which one to buy, and why.")
LAPTOP = GIFT.format(
    rel="sister", name="Kathy", event="graduated from high school and starts at the University of Utah in the autumn",
    pron="her", item="a laptop", options="a MacBook Air, a Lenovo Yoga and a Surface Laptop",
    use="a first-year student who writes essays and travels home often", tone="cheerful and encouraging",
    photo="the campus in winter", criteria="battery life for long lectures, weight in a backpack, a keyboard for "
    "essays, and a price a student budget allows")
MIXER = GIFT.format(
    rel="neighbour", name="Tomas", event="opened a bakery on the high street after years of saving", pron="him",
    item="a stand mixer", options="a KitchenAid Artisan, a Kenwood Chef and a Bosch MUM5",
    use="a baker who kneads heavy dough every morning before dawn", tone="practical and down to earth",
    photo="his shop window at sunrise", criteria="motor power with stiff bread dough, bowl size for large batches, "
    "noise in a small kitchen, and spare parts that are easy to find")
BUDGET = ("Build a spreadsheet that tracks the monthly budget of a family of four who are saving for a house. Put the "
          "months in the first column and the income, rent, food, transport and savings in the next ones. Add a row "
          "of totals at the bottom and a chart of savings over the year on a second sheet. Colour every month whose "
          "spending was above its income in red, and write a short note on the first sheet with the three months "
          "that saved well and what the family could change next year.")


def save(mem: webmem.Memory, goal: str) -> webmem.Trajectory:
    return mem.trajectories.save(goal=goal, start_url=DOCS, steps=[webmem.Step(action="click", target='button "New"')],
                                 created_at=NOW)


def test_two_texts_of_one_template_are_one_task_however_they_begin(mem: webmem.Memory) -> None:
    """Two texts (``LONG_TEXT_WORDS`` words or more) that have most of their words in the same order are one task,
    though their first words are values ("My sister, Kathy", "My neighbour, Tomas") and they share too few words of
    meaning to reach the threshold by those; the report says why."""
    assert min(word_count(signature(text).wording) for text in (LAPTOP, MIXER)) >= LONG_TEXT_WORDS
    assert score(signature(MIXER), signature(LAPTOP), MIXER)[0] >= 0.6
    save(mem, LAPTOP)
    save(mem, BUDGET)
    report = mem.trajectories.match(MIXER, origin=ORIGIN, now=NOW)
    assert report.best is not None and report.best.goal == LAPTOP
    assert report.candidates[0].similarity >= 0.6
    assert "of the words in the same order (two texts of" in report.candidates[0].why


def test_a_text_of_another_task_is_not_taken_for_one_and_short_goals_still_begin_alike(mem: webmem.Memory) -> None:
    """A text of another task shares far less of its words in order; a goal shorter than a text is compared in order
    only with one that begins as it does."""
    save(mem, LAPTOP)
    other = mem.trajectories.match(BUDGET, origin=ORIGIN, now=NOW)
    assert other.best is None and "same order" not in other.candidates[0].why
    short = "My sister, Kathy, wants a laptop for her first year at the University of Utah in the autumn."
    reworded = "My neighbour Tomas wants a laptop for his first year at the University of Utah in the autumn."
    assert LONG_TEXT_WORDS > word_count(signature(short).wording) >= 10
    save(mem, short)
    assert "two texts" not in mem.trajectories.match(reworded, origin=ORIGIN, now=NOW).candidates[0].why


def test_words_a_text_says_in_passing_do_not_set_apart_two_texts_of_one_template(mem: webmem.Memory) -> None:
    """In texts of one template, "the cheapest" in one slot and "the most expensive" in the other, or a title in
    quotes only one gives, are what was asked this time, not another task; texts that share less of their wording in
    order, and short goals, still differ on them."""
    laptop = LAPTOP.replace("a price a student budget allows", "the cheapest price a student budget allows")
    mixer = MIXER.replace("a slide with a comparison table", 'a slide with a comparison table titled "Side by side"'
                          ).replace("spare parts that are easy to find", "the most expensive spare parts")
    assert contrast_conflict(signature(mixer), signature(laptop)) == ["cheapest", "priciest"]
    assert other_inputs(signature(mixer), signature(laptop)) == (2, 1)
    save(mem, laptop)
    report = mem.trajectories.match(mixer, origin=ORIGIN, now=NOW)
    assert report.best is not None and report.best.goal == laptop
    assert "different meaning" not in report.candidates[0].why and "in quotes" not in report.candidates[0].why
    assert report.candidates[0].why.endswith("says otherwise in passing: cheapest, most expensive")
    cheapest = BUDGET.replace("three months that saved well", "cheapest three months")
    save(mem, cheapest)
    # the same sentences in another order: most of their words, few of them in the same order
    reordered = " ".join(reversed(cheapest.replace("cheapest", "most expensive").split(". ")))
    assert in_order_share(signature(reordered).wording, signature(cheapest).wording) < 0.6
    other = mem.trajectories.match(reordered, origin=ORIGIN, now=NOW)
    budget = next(candidate for candidate in other.candidates if candidate.trajectory.goal == cheapest)
    assert other.best is None and budget.similarity == 0.0 and budget.why.startswith("different meaning")
    save(mem, "Buy the cheapest laptop for Kathy")
    assert mem.trajectories.match("Buy the most expensive laptop for Kathy", origin=ORIGIN, now=NOW).best is None


MIXER_QUESTION = ("Which stand mixer suits a baker who opened a bakery on the high street and kneads heavy dough "
                  "every morning before dawn: the KitchenAid Artisan, the Kenwood Chef or the Bosch MUM5, with a "
                  "photo of his shop window at sunrise, judged by motor power with stiff bread dough, bowl size for "
                  "large batches, noise in a small kitchen, and spare parts that are easy to find?")


def test_a_text_is_found_by_the_pruned_ranking_as_by_scoring_every_goal() -> None:
    """The pruned ranking reads texts of every opening whose length lets them share enough words in order, beyond a
    goal that shares more of their words and sets the bar, also in an origin read from its snapshot."""
    held = OriginGoals()
    for number, goal in enumerate((LAPTOP, MIXER_QUESTION)):
        held.add(StoredGoal(f"traj_{number}", goal, None, NOW, 0, 1, 1, signature(goal)))
    read = unpack(pack(held))
    assert read is not None
    query = signature(MIXER)
    for origin in (held, read):
        full = rank(origin, query, MIXER, limit=None, competing=lambda stored: True)
        pruned = rank(origin, query, MIXER, limit=1, competing=lambda stored: True)
        assert [item.goal.goal for item in full] == [LAPTOP, MIXER_QUESTION]
        assert 0.5 < full[1].similarity < full[0].similarity
        assert pruned[0].goal.goal == LAPTOP and pruned[0].similarity == full[0].similarity

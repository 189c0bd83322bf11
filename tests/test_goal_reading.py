"""Goals read for what identifies the task: how the answer must be written and politeness set aside, values read
in their usual forms, acts compared as acts; the match report says what it set aside and which values it read."""

from __future__ import annotations

from pathlib import Path

import pytest

import webmem
from webmem.trajectories.binding import bind, bound_spans
from webmem.trajectories.reading import read_goal
from webmem.trajectories.recall import signature
from webmem.trajectories.value_forms import value_spans

SHOP = "http://shop.example.test"
PRICE = "What is the price of the cheapest 1TB SSD?"
FORM = "Return the value as a number (e.g., 10.99) only, without currency symbols."


@pytest.fixture
def mem(tmp_path: Path) -> webmem.Memory:
    memory = webmem.Memory.open(tmp_path / "memory")
    yield memory
    memory.close()


def save(mem: webmem.Memory, goal: str, *steps: webmem.Step) -> webmem.Trajectory:
    return mem.trajectories.save(goal=goal, start_url=SHOP, steps=list(steps) or [
        webmem.Step(action="finish", target="the task")])


def test_a_sentence_on_the_answers_form_is_set_aside_and_reported(mem: webmem.Memory, tmp_path: Path) -> None:
    stored = save(mem, PRICE)
    report = mem.trajectories.match(f"{PRICE} {FORM}", origin=SHOP, limit=1)
    assert report.best is not None and report.best.id == stored.id
    assert report.candidates[0].similarity == 1.0
    assert report.set_aside == [FORM]
    # the other way round: the stored goal said how to answer, the new one does not
    other = webmem.Memory.open(tmp_path / "other")
    try:
        kept = other.trajectories.save(goal=f"{PRICE} Answer with the price only.", start_url=SHOP,
                                       steps=[webmem.Step(action="finish", target="the task")])
        found = other.trajectories.match(PRICE, origin=SHOP, limit=1)
        assert found.best is not None and found.best.id == kept.id and found.candidates[0].similarity == 1.0
        assert found.best.goal.endswith("Answer with the price only.")  # kept with the run
    finally:
        other.close()


@pytest.mark.parametrize("goal, text, aside", [
    ("List the projects I starred. Answer with the project ID(s).", "List the projects I starred.",
     ["Answer with the project ID(s)."]),
    ("Tell me the total revenue in 2022, formatted as a number without commas.", "Tell me the total revenue in 2022.",
     ["formatted as a number without commas"]),
    ("When was the last order placed (format: YYYY-MM-DD)?", "When was the last order placed?", ["(format: YYYY-MM-DD)"]),
    ("How many reviews mention fit? Give just the count as an integer.", "How many reviews mention fit?",
     ["Give just the count as an integer."]),
    ("Could you please forward the email from Bob to Alice?", "forward the email from Bob to Alice?", ["Could you please"]),
    ("Forward the email from Bob to Alice, thanks!", "Forward the email from Bob to Alice!", ["thanks"]),
    ("Go ahead and add the pink case to my wish list", "add the pink case to my wish list", ["Go ahead and"]),
    ("List the orders of May. If there are no such orders, answer N/A.", "List the orders of May.",
     ["If there are no such orders, answer N/A."]),
    ("What is the price of the cheapest laptop (just the number, no currency sign)?",
     "What is the price of the cheapest laptop?", ["(just the number, no currency sign)"]),
    ("Return the price (e.g., 10.99) of the laptop (in USD)", "Return the price of the laptop",
     ["(e.g., 10.99)", "(in USD)"]),
])
def test_what_is_set_aside(goal: str, text: str, aside: list[str]) -> None:
    reading = read_goal(goal)
    assert reading.text == text and list(reading.set_aside) == aside


@pytest.mark.parametrize("goal", [
    "Return the book The Measure of Light",  # the first sentence is the task, however it begins
    'Find Rea\'s email. Reply with "Answer with the number only."',  # quoted text is a value, never form
    "Reply to the email from Bob with the tracking number",
    "Can you comment 'Nice!' on the post?",  # a value right after the preamble: the preamble stays
    "Show products in the format of a grid",  # "in the format of" with no format named
    "Buy the cheapest shoe. If it is not in stock, add it to the wish list.",  # a condition of the task
    "Open the form. Enter the value 5 in the quantity box.",  # a step of the task, though it names a value
    "Search for shoes. Use only the first result.",
    "Add the Nunchuk controller (in any color) to my cart",  # a bracket that says which thing, not how to answer
    "Show the orders of Bob (pending ones only)",
])
def test_what_is_kept(goal: str) -> None:
    assert read_goal(goal).text == goal and read_goal(goal).set_aside == ()


def test_a_template_binds_a_goal_without_its_answer_form() -> None:
    template = "What is the price of {0}?"
    assert bind(template, f"What is the price of the 1TB SSD? {FORM}") == {0: "the 1TB SSD"}
    assert bind(template + " Answer with the price only.", "What is the price of the 1TB SSD?") == {0: "the 1TB SSD"}
    spans = bound_spans(template, "Please, what is the price of X?")
    assert spans is not None and [(span.text, span.start) for span in spans] == [("X", 29)]
    # a template whose set-aside part holds a slot binds only the goal as it is
    assert bind("Find {0}. Round the answer to {1} decimals.", "Find the mean.") is None


def test_a_replay_plan_is_bound_without_the_answer_form(mem: webmem.Memory) -> None:
    save(mem, 'Search for "1TB SSD" and open the first result',
         webmem.Step(action="fill", target='searchbox "Search"', value="1TB SSD"),
         webmem.Step(action="click", target='link "First result"'))
    found = mem.trajectories.search_replay(
        'Search for "2TB HDD" and open the first result. Answer with the product name only.', origin=SHOP)
    assert found.plan is not None, found.reason
    assert [step.value for step in found.plan.steps if step.action == "fill"] == ["2TB HDD"]


@pytest.mark.parametrize("one, other", [
    ("Show orders placed on May 1, 2021", "Show orders placed on 05/01/2021"),
    ("Show orders placed on 2021-05-01", "Show orders placed on the 1st of May 2021"),
    ("Find a coat under $30", "Find a coat under 30 dollars"),
    ("Find a 1TB SSD", "Find a 1 TB SSD"),
    ("Show the last two orders", "Show the last 2 orders"),
])
def test_one_value_in_two_forms_is_one_value(one: str, other: str) -> None:
    first, second = signature(one), signature(other)
    assert first.values == second.values and first.kinds == second.kinds and first.terms == second.terms


def test_the_report_lists_the_values_read(mem: webmem.Memory) -> None:
    save(mem, "Show orders placed on May 1, 2021 under $30")
    report = mem.trajectories.match("Show orders placed on 05/01/2021 under 30 dollars", origin=SHOP, limit=1)
    assert report.best is not None and report.candidates[0].similarity == 1.0
    assert [(value.written, value.kind, value.value) for value in report.values_read] == [
        ("05/01/2021", "date", "2021-05-01"), ("30 dollars", "number", "30")]


def test_values_in_words_and_numbers_and_units() -> None:
    assert [(span.kind, span.value) for span in value_spans("posted yesterday, a dozen eggs, the 18 oz beer")] == [
        ("date", "yesterday"), ("number", "12"), ("number", "18oz")]
    assert value_spans("top 5 in the list") == ()  # "in" is a unit only written against its number
    # a period relative to today, its length in digits or in any count word
    assert [(span.kind, span.value) for span in value_spans("in the past fourteen days, the last 8 weeks")] == [
        ("date", "past fourteen days"), ("date", "last 8 weeks")]
    # a size keeps its unit as a word of the task: two sizes in ounces are one kind of thing
    assert "oz" in signature("Tell me the price of the 18 oz beer").terms


def test_the_last_few_are_the_most_recent_and_not_the_oldest(mem: webmem.Memory) -> None:
    assert signature("Show the last 2 completed orders").contrasts == {"newest"}
    assert signature("Show the 5 most recent orders").contrasts == {"newest"}
    assert signature("Click the last link").contrasts == frozenset()  # a position, not an age
    save(mem, "Show the last 2 completed orders")
    assert mem.trajectories.match("Show the 5 most recent completed orders", origin=SHOP).best is not None
    report = mem.trajectories.match("Show the 5 oldest completed orders", origin=SHOP, limit=1)
    assert report.best is None and report.candidates[0].similarity == 0.0


def test_a_count_in_words_fills_a_slot_that_held_digits_and_is_typed_in_digits(mem: webmem.Memory) -> None:
    save(mem, "Show the last 2 completed orders",
         webmem.Step(action="select", target='combobox "Status"', value="Completed"),
         webmem.Step(action="fill", target='spinbutton "Count"', value="2"),
         webmem.Step(action="click", target='button "Filter"'))
    report = mem.trajectories.match("Show the last five pending orders", origin=SHOP, limit=1)
    assert report.best is not None and report.candidates[0].similarity == 1.0
    found = mem.trajectories.search_replay("Show the last twelve pending orders", origin=SHOP)
    assert found.plan is not None, found.reason
    assert [(step.action, step.value) for step in found.plan.steps[:2]] == [("select", "pending"), ("fill", "12")]
    # a slot that held words keeps the goal's word
    save(mem, "Pick five from the list", webmem.Step(action="click", target='option "five"'))
    found = mem.trajectories.search_replay("Pick seven from the list", origin=SHOP)
    assert found.plan is not None and found.plan.steps[0].target == 'option "seven"', found.reason


@pytest.mark.parametrize("one, other", [
    ("Create an issue titled Crash on start", "Open an issue titled Crash on start"),
    ("How many orders are pending", "Count the orders that are pending"),
    ("Show the page of the cheapest phone", "View the page of the cheapest phone"),
    ("Respond to the email from Bob", "Reply to the e-mail from Bob"),
    ("List all orders of Bob", "Show the orders of Bob"),
    ("Get the customer emails who ordered", "Get the customer email(s) who ordered"),
    ("Add the pink case to my wish list", "Add the pink case to your wishlist"),
    ("What is the minimum cost of a flight to Oslo", "What is the lowest cost of a flight to Oslo"),
    ("Show the least costly laptop", "Show the most affordable laptop"),
    ("Buy the ticket with the costliest price", "Buy the ticket with the most expensive price"),
    ("Show the laptop with the maximum price", "Show the laptop with the highest price"),
    ("Find the quickest route to the airport", "Find the fastest route to the airport"),
    ("Find the closest store to my home", "Find the nearest store to my home"),
    ("Which product has the fewest reviews", "Which product has the least reviews"),
    ("Show the cheapest laptop with at least 16GB RAM", "Show the cheapest laptop with no less than 16GB RAM"),
    ("Show the cheapest laptop with at least 16GB RAM", "Show the cheapest laptop with a minimum of 16GB RAM"),
    ("Show the cheapest laptop with at least 16GB RAM", "Show the cheapest laptop with 16GB RAM or more"),
    ("Find hotels with a rating of at least 4 stars", "Find hotels rated 4 stars or higher"),
    ("Show laptops under $500", "Show laptops for less than $500"),
    ("Show laptops with a maximum price of $500", "Show laptops priced up to $500"),
    ("Which product has the highest number of reviews", "Which product has the most reviews"),
    ("Show the best selling products of 2022", "Show the bestselling products of 2022"),
    ("Tell me the price of the cheapest laptop", "I want to know how much the cheapest laptop costs"),
    ("Create a project called Apollo", "Create a project named Apollo"),
    ("Show posts that do not mention cats", "Show posts that don't mention cats"),
])
def test_one_act_in_two_wordings_is_one_act(one: str, other: str) -> None:
    first, second = signature(one), signature(other)
    assert first.terms == second.terms and first.contrasts == second.contrasts


@pytest.mark.parametrize("one, other", [
    ("Delete the issue titled Crash on start", "Edit the issue titled Crash on start"),
    ("Show the cheapest phone", "Show the most expensive phone"),
    ("Open an issue titled Crash", "Delete the issue titled Crash"),
    ("Find the email by Ann and reply to them with the text \"Hi\".", "Find the email by Ann and forward it to Bo."),
    ("Buy the ticket with the longest duration.", "Buy the ticket with the shortest duration."),
    ("Buy the ticket with the longest duration.", "Buy the ticket with the costliest price."),
    ("Find the tallest building in the city", "Find the shortest building in the city"),
    ("Find the fastest route to the airport", "Find the slowest route to the airport"),
    ("Show the heaviest package in the warehouse", "Show the lightest package in the warehouse"),
    ("Find the closest store to my home", "Find the farthest store from my home"),
    ("Find the laptop with the least RAM", "Find a laptop with at least 16GB RAM"),
    ("Find the product with the most reviews", "Find a product with at most 10 reviews"),
    ("Show laptops under $500", "Show laptops over $500"),
    ("Show laptops with the maximum price", "Show laptops with a maximum price of $500"),
    ("Which product has the most reviews", "Which product has the lowest number of reviews"),
    ("Show posts that mention cats", "Show posts that don't mention cats"),
    ("Show the users who can post", "Show the users who can't post"),
])
def test_contrasts_stay_apart(mem: webmem.Memory, one: str, other: str) -> None:
    save(mem, one)
    assert mem.trajectories.match(other, origin=SHOP, limit=1).best is None


def test_a_contrast_only_the_stored_goal_names_narrows_what_is_asked(mem: webmem.Memory) -> None:
    """What "the shortest flight" did answers "a flight", as a reference: the new goal does not fit its template, so
    it is not replayed. It does not the other way round, nor when the stored goal negates, nor when the new goal picks
    its thing by a kind of value the stored goal never gave."""
    flight = save(mem, "Book the shortest one-way flight from Cincinnati to Lexington.",
                  webmem.Step(action="fill", target='textbox "From"', value="Cincinnati"),
                  webmem.Step(action="fill", target='textbox "To"', value="Lexington"),
                  webmem.Step(action="click", target='button "Sort by duration"'),
                  webmem.Step(action="click", target='button "Book"'))
    wider = "Book a one-way flight from Boston to Denver."
    found = mem.trajectories.match(wider, origin=SHOP, limit=1).best
    assert found is not None and found.id == flight.id
    assert mem.trajectories.search_replay(wider, origin=SHOP).plan is None
    replay = mem.trajectories.search_replay("Book the shortest one-way flight from Boston to Denver.", origin=SHOP)
    assert replay.plan is not None and [step.value for step in replay.plan.steps][:2] == ["Boston", "Denver"]
    newest = save(mem, "Tell me the price of the newest item in the first row.")
    found = mem.trajectories.match("Tell me the price of the item in the first row.", origin=SHOP, limit=1).best
    assert found is not None and found.id == newest.id
    cases = [("Book a one-way flight from Cincinnati to Lexington.",
              "Book the shortest one-way flight from Boston to Denver."),
             ("Show posts that don't mention cats", "Show posts that mention cats"),
             ("Order the most expensive bed and send me the confirmation code.",
              'Order the "Italian Basil Pesto" and send me the confirmation code.')]
    for number, (stored, asked) in enumerate(cases):
        origin = f"http://case{number}.example.test"
        mem.trajectories.save(goal=stored, start_url=origin, steps=[webmem.Step(action="finish", target="the task")])
        report = mem.trajectories.match(asked, origin=origin, limit=None)
        assert report.best is None and report.candidates[0].similarity == 0.0, asked
        assert report.candidates[0].why.startswith("different meaning"), asked


def test_a_bound_is_shown_as_people_write_it(mem: webmem.Memory) -> None:
    """A bound on a number is one word to the matcher, and the report says it in words."""
    save(mem, "Show the cheapest laptop with at most 8GB RAM")
    report = mem.trajectories.match("Show the cheapest laptop with 8GB RAM or more", origin=SHOP, limit=None)
    assert report.best is None and "different meaning: at least, at most" in report.candidates[0].why


def test_a_bound_only_one_goal_gives_does_not_split_the_task(mem: webmem.Memory) -> None:
    """A goal that gives a number with no bound may simply not say it; bounds differ only from each other."""
    hotel = save(mem, "Find a hotel in Paris with at least 4 stars")
    found = mem.trajectories.match("Find a hotel in Paris with 4 stars", origin=SHOP, limit=1).best
    assert found is not None and found.id == hotel.id
    assert mem.trajectories.match("Find a hotel in Paris with at most 4 stars", origin=SHOP, limit=1).best is None


def test_open_before_an_article_leads_to_a_page_and_open_as_a_word_stays() -> None:
    assert "open" not in signature("Open the page of the cheapest phone").terms
    assert "open" in signature("Add the most colorful product from my open tabs to the cart").terms
    assert "list" in signature("Add the phone to my wish list").terms


INBOX = "http://inbox.example.test"
ACTS = {
    "forward": "Find the email by Audrey and forward that email to Orel.",
    "reply": 'Find the email by Audrey and reply to them with the text "Vel quis varius.".',
    "important": "Find the email by Audrey and click the star icon to mark it as important.",
    "delete": "Find the email by Audrey and click the trash icon to delete it.",
}


def test_how_a_page_is_worked_weighs_less_than_what_is_done(mem: webmem.Memory) -> None:
    """"click the trash icon" says how, not what: a goal that leaves it out still finds the task; and the acts of
    one inbox stay apart (a forward never finds a reply through their common opening)."""
    ids = {act: mem.trajectories.save(goal=goal, start_url=INBOX, steps=[
        webmem.Step(action="finish", target="the task")]).id for act, goal in ACTS.items()}
    for goal, act in (("Get rid of Pam's email.", "delete"), ("Throw away the email from Kath", "delete"),
                      ("Locate the email from Sandye and delete it.", "delete"),
                      ("Flag Maribeth's email as important.", "important")):
        found = mem.trajectories.match(goal, origin=INBOX, limit=1).best
        assert found is not None and found.id == ids[act], goal
    elsewhere = "http://no-forward.example.test"
    for act in ("reply", "important", "delete"):
        mem.trajectories.save(goal=ACTS[act], start_url=elsewhere, steps=[webmem.Step(action="finish", target="it")])
    assert mem.trajectories.match("Find the email by Ruby and forward it to Alfi.", origin=elsewhere,
                                  limit=1).best is None


def test_an_act_said_in_its_participles_is_the_act(mem: webmem.Memory) -> None:
    """"needs to be deleted", "forwarding it" name the act that "delete" and "forward" name; forms in -s are nouns as
    often ("the replies", "recent changes") and are not read as acts."""
    assert signature("The email from Maye needs to be deleted.").contrasts == {"delete"}
    assert signature("Keep forwarding the email from Maye").contrasts == {"forward"}
    assert signature("The order was cancelled").contrasts == {"cancel"}
    assert signature("Show the replies to my post").contrasts == frozenset()
    assert signature("The cheapest laptop should be added to the cart").contrasts == {"cheapest", "create"}
    assert signature("The price needs to be changed to $30").contrasts == {"update"}
    # after a determiner or an adverb of time, a participle says a thing's state: a word of the goal, no act
    for goal in ("Show my cancelled orders", "Show the recently added products", "What is the selling price"):
        assert not signature(goal).contrasts & {"cancel", "create", "sell"}, goal
    assert {"cancel", "add", "sell"} & signature("Show my cancelled orders and the selling price").terms == {
        "cancel", "sell"}
    ids = {act: mem.trajectories.save(goal=goal, start_url=INBOX, steps=[
        webmem.Step(action="finish", target="the task")]).id for act, goal in ACTS.items()}
    found = mem.trajectories.match("The email that Emelita sent needs to be deleted.", origin=INBOX, limit=1).best
    assert found is not None and found.id == ids["delete"]


def test_sending_on_a_message_that_is_there_already_forwards_it(mem: webmem.Memory) -> None:
    """"send Lilas's email to Neila", "send Jacky the email from Pooh", "find the e-mail from Linnie and send it to
    Clare" forward a message; sending a message to be written ("an email", "write ... and send it", "a reply") or
    something other than a message, or a text in quotes, does not. "send" stays a word of the goal."""
    for goal in ("Send Lilas's email to Neila.", "send Jacky the email from Pooh",
                 "Find the e-mail from Linnie and send it to Clare.", "I want to send the email I got from Jammie to Bo",
                 "send Nannette's latest email to Kim", "Select email from Buffy and send to Kym",
                 "Search for an email written by Heidie and send that email to Kaia"):
        assert "forward" in signature(goal).contrasts, goal
        assert "send" in signature(goal).terms, goal
    for goal in ("Send an email from my account to Bob", "Send a message to Bob saying hi",
                 "Write an email to Bob and send it", "Send Bob the quarterly report", "Send a new message to Ann",
                 'Locate Janie\'s email and send back "Porta quis eu."', "Send Ann's email a response"):
        assert "forward" not in signature(goal).contrasts, goal
    assert signature("Send a reply to Ann's email").contrasts == {"reply"}
    ids = {act: mem.trajectories.save(goal=goal, start_url=INBOX, steps=[
        webmem.Step(action="finish", target="the task")]).id for act, goal in ACTS.items()}
    for goal in ("Send Lilas's email to Neila.", "Send to Anabel the email from Dasie."):
        found = mem.trajectories.match(goal, origin=INBOX, limit=1).best
        assert found is not None and found.id == ids["forward"], goal


def test_the_age_of_a_thing_picked_by_a_value_does_not_set_two_goals_apart(mem: webmem.Memory) -> None:
    """"the most recent email from Karylin" picks her email as "the email by Audrey" does; without a value of one kind
    in both, or with a position, a one-sided age still sets short goals apart."""
    ids = {act: mem.trajectories.save(goal=goal, start_url=INBOX, steps=[
        webmem.Step(action="finish", target="the task")]).id for act, goal in ACTS.items()}
    for goal, act in (('Please reply "Urna." to the most recent email from Karylin.', "reply"),
                      ("Forward the latest email from Korie to Marget.", "forward")):
        found = mem.trajectories.match(goal, origin=INBOX, limit=1).best
        assert found is not None and found.id == ids[act], goal
    save(mem, "Show the pending orders")
    report = mem.trajectories.match("Show the most recent pending orders", origin=SHOP, limit=1)
    assert report.best is None and report.candidates[0].similarity == 0.0
    save(mem, "What is the name of the latest album by Clipse?")
    report = mem.trajectories.match("What is the name of the first album by Thom Yorke?", origin=SHOP, limit=1)
    assert report.best is None and report.candidates[0].similarity == 0.0


def test_short_goals_that_act_on_other_kinds_of_element_are_other_tasks(mem: webmem.Memory) -> None:
    """"the spinner" is not "the slider", nor "the link" "the button": each names a kind the other does not. A goal
    that names fewer kinds may simply not say them, and a long goal may name one in passing."""
    save(mem, "Select -97 with the slider and hit Submit.")
    report = mem.trajectories.match("Select 5 with the spinner and hit Submit.", origin=SHOP, limit=1)
    assert report.best is None
    assert report.candidates[0].why == "names another kind of element: spinner (it named slider)"
    assert mem.trajectories.match("Select 12 with the slider and hit Submit.", origin=SHOP).best is not None
    save(mem, 'Click on the "Cancel" button.')
    assert mem.trajectories.match('Click the link "sed".', origin=SHOP).best is None
    tabs = save(mem, 'Switch between the tabs to find and click on the link "justo".')
    found = mem.trajectories.match('Switch to the tab with the link "lectus" and click it.', origin=SHOP).best
    assert found is not None and found.id == tabs.id
    long_goal = ("Open the settings page from the menu, find the notification preferences of the account, turn off "
                 "the weekly digest emails and save the changes with the button at the bottom")
    stored = save(mem, long_goal)
    found = mem.trajectories.match(long_goal.replace("from the menu", "from the top tab"), origin=SHOP).best
    assert found is not None and found.id == stored.id

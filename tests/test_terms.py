"""Words as the matcher compares them: stems made right whichever thread asks."""

from __future__ import annotations

import random

import snowballstemmer
from threads import run_together

from webmem.core.terms import stem, written_in


def test_threads_stemming_together_each_get_the_stem_one_thread_alone_gets() -> None:
    """The stemmer keeps the word it works on: two threads stemming at once corrupted each other's word (an
    IndexError, or a wrong stem that a stored goal's signature would keep)."""
    rng = random.Random(7)
    words = ["".join(rng.choice("aeioubcdfglmnrst") for _ in range(rng.randrange(4, 14))) + rng.choice(
        ["ing", "ed", "s", "ies", "ness", "ational", "fully", ""]) for _ in range(3000)]
    alone = snowballstemmer.stemmer("english")
    expected = {word: alone.stemWord(word) for word in words}
    uncached = stem.__wrapped__  # the stemmer itself, past the cache
    wrong: list[str] = []

    def stemming(seed: int) -> None:
        order = words[:]
        random.Random(seed).shuffle(order)
        for word in order:
            try:
                if uncached(word) != expected[word]:
                    wrong.append(word)
            except Exception as exc:  # noqa: BLE001  (whatever it is, the test reports it)
                wrong.append(f"{word}: {exc!r}")

    run_together([lambda seed=seed: stemming(seed) for seed in range(4)])
    assert not wrong, wrong[:5]


def test_a_stem_or_a_contrast_term_is_shown_as_the_goal_writes_it() -> None:
    """A stem shows as the word that gave it, also where another word begins alike ("cart" is no "car") or the stem
    is not the word's beginning ("ugli"); a canonical contrast term as its word or phrase; a kind of value, and a
    term the goal does not give, as they are."""
    goal = "Put the cheapest ugly cart and the red cars in the cart, or add them"
    assert written_in(["car", "ugli", "cheapest", "create", "<number>", "boat"], goal) == [
        "cars", "ugly", "cheapest", "add", "<number>", "boat"]
    assert written_in(["priciest", "car"], "Buy a car", "the most expensive one") == ["most expensive", "car"]

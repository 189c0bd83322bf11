"""How many shapes each form of an origin has, so that a task done many times weighs its words like any other.

A word's weight (:meth:`.held.OriginGoals.weight`) falls with the share of the origin's shapes (token sets with
their values) that have it. A task done for sixty people has sixty shapes of one form (one token set, values
aside): counted as they are, its own words would weigh as little as the words every task of the site says, and the
more often a task is done, the harder its rewordings would be to find. So in weighing words, a form counts at most
as many shapes as the origin's median form has (``cap``), and never fewer than ``LEAST_CAP``: an origin whose forms
have alike numbers of shapes is weighed as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

#: The cap is never below this many shapes (a task done twice, with other values).
LEAST_CAP = 2


class FormShapes:
    """The number of shapes of each form (by form number), and how many of them are beyond the cap, in all and
    among the forms that have each token (``tokens_of`` gives a form's tokens)."""

    def __init__(self, counts: list[int] | None = None) -> None:
        self.counts: list[int] = counts if counts is not None else []
        self._histogram: Counter[int] | None = None  # how many forms have each number of shapes (one or more)
        self._cap: int | None = None
        self._beyond: Counter[str] | None = None  # from each token to the shapes beyond the cap of its forms
        self._total = 0  # the shapes beyond the cap of all forms

    def add(self, form: int, tokens_of: Callable[[int], Iterable[str]]) -> None:
        """One shape more for ``form``."""
        counts = self.counts
        counts.extend([0] * (form + 1 - len(counts)))
        counts[form] += 1
        if self._histogram is not None:
            self._histogram[counts[form] - 1] -= 1
            self._histogram[counts[form]] += 1
        if self._beyond is None or self._cap != self._median_cap():
            self._cap = self._beyond = None
        elif counts[form] > self._cap:
            self._total += 1
            self._beyond.update(tokens_of(form))

    def cap(self) -> int:
        """The most shapes a form counts: as many as the median form has, at least ``LEAST_CAP``."""
        if self._cap is None:
            self._cap = self._median_cap()
        return self._cap

    def _median_cap(self) -> int:
        if self._histogram is None:
            self._histogram = Counter(count for count in self.counts if count)
        del self._histogram[0]
        middle, seen = (sum(self._histogram.values()) - 1) // 2, 0
        for count in sorted(self._histogram):
            seen += self._histogram[count]
            if seen > middle:
                return max(LEAST_CAP, count)
        return LEAST_CAP

    def uncounted(self, tokens_of: Callable[[int], Iterable[str]], token: str | None = None) -> int:
        """The shapes beyond the cap of all forms, or of the forms that have ``token``."""
        beyond = self._beyond
        if beyond is None:  # counted whole, then kept: a thread that reads meanwhile never sees a part
            cap, beyond, total = self.cap(), Counter[str](), 0
            for form, count in enumerate(self.counts):
                if count > cap:
                    total += count - cap
                    for token_of_form in tokens_of(form):
                        beyond[token_of_form] += count - cap
            self._total, self._beyond = total, beyond
        return self._total if token is None else beyond[token]

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
from collections.abc import Callable

#: The cap is never below this many shapes (a task done twice, with other values).
LEAST_CAP = 2


class FormShapes:
    """The number of shapes of each form (by form number), with those beyond the cap."""

    def __init__(self, counts: list[int] | None = None) -> None:
        self.counts: list[int] = counts if counts is not None else []
        self._histogram: Counter[int] | None = None  # how many forms have each number of shapes (one or more)
        self._cap: int | None = None
        self._beyond: dict[int, int] | None = None  # from each form over the cap to its shapes beyond it

    def add(self, form: int) -> None:
        """One shape more for ``form``."""
        counts = self.counts
        counts.extend([0] * (form + 1 - len(counts)))
        counts[form] += 1
        if self._histogram is not None:
            self._histogram[counts[form] - 1] -= 1
            self._histogram[counts[form]] += 1
        if self._cap is not None and self._cap == self._median_cap() and self._beyond is not None:
            if counts[form] > self._cap:
                self._beyond[form] = counts[form] - self._cap
        else:
            self._cap = self._beyond = None

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

    def beyond(self) -> dict[int, int]:
        """From each form with more shapes than the cap to how many more it has."""
        if self._beyond is None:
            cap = self.cap()
            self._beyond = {form: count - cap for form, count in enumerate(self.counts) if count > cap}
        return self._beyond

    def uncounted(self, has_token: Callable[[int], bool] | None = None) -> int:
        """The shapes not counted (beyond the cap) of all forms, or of the forms that ``has_token``."""
        return sum(extra for form, extra in self.beyond().items() if has_token is None or has_token(form))

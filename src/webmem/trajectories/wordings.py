"""Long goals compared by their wordings: all their words in order, each value as ``*`` (``Signature.wording``).

Two long goals (``LONG_GOAL_WORDS`` words or more) that begin with the same two words and share a word of meaning
besides, or two texts (``LONG_TEXT_WORDS`` words or more) however they begin, are one template when ``SKELETON_SHARE``
of their words are in the same order (``in_order_share``). Goals are indexed by the tokens of their wordings: the
first two words and the count (``head_token``), and for a text its count alone (``text_token_of``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from ..core.terms import content_of_words

if TYPE_CHECKING:
    from .recall import Signature

ITEM = " "  # between the words of a wording
FRAME_MARK = "^"  # begins the token of a frame or a wording: never the first character of a word
LONG_GOAL_WORDS = 10  # a goal of this many words or more keeps its wording, compared in order with others'
LONG_TEXT_WORDS = 50  # a goal of this many words or more is a text: compared in order with texts however they begin
SKELETON_SHARE = 0.6  # the share of their words two long goals that begin alike need in the same order to be one task


def head_token(wording: str) -> str:
    """The token of a long goal's wording: its first two words and how many it has (goals that share their first two
    words may share most of their words in order; the count bounds how many)."""
    return head_token_of(opening_of(wording), word_count(wording))


def word_count(wording: str) -> int:
    """How many words a wording has."""
    return wording.count(ITEM) + 1


def head_token_of(opening: str, count: int) -> str:
    """The token of the wordings of ``count`` words that begin with ``opening``, their first two."""
    return f"{FRAME_MARK}{opening.replace(ITEM, '_')}~{count}"


@lru_cache(maxsize=4096)
def opening_of(wording: str) -> str:
    """A wording's first two words."""
    first, second, _ = wording.split(ITEM, 2)
    return first + ITEM + second


@lru_cache(maxsize=4096)
def opening_tokens(wording: str) -> frozenset[str]:
    """The tokens of what a wording's first two words say (their terms and contrasts, as in ``Signature.content``):
    shared by any two goals that begin alike. The wording holds stems: each is taken as a term as it is too, for the
    stem of a stem may be another word."""
    opening = opening_of(wording).split(ITEM)
    terms, contrasts, _ = content_of_words(opening)
    return frozenset(terms).union(opening, ["!" + word for word in contrasts])  # as ``Signature.content``


def text_token_of(count: int) -> str:
    """The token of the texts of ``count`` words (``LONG_TEXT_WORDS`` or more), however they begin."""
    return f"{FRAME_MARK}~{count}"


def same_head(query: Signature, stored: Signature) -> bool:
    """Whether two long goals begin with the same two words and share a word of meaning besides them, or are both
    texts (``LONG_TEXT_WORDS``): then their wordings are compared."""
    if not (query.wording and stored.wording):
        return False
    if both_texts(query, stored):
        return True
    return (opening_of(query.wording) == opening_of(stored.wording)
            and not (query.content & stored.content) <= opening_tokens(query.wording))


def both_texts(query: Signature, stored: Signature) -> bool:
    """Whether two goals are texts of ``LONG_TEXT_WORDS`` words or more."""
    return min(word_count(query.wording), word_count(stored.wording)) >= LONG_TEXT_WORDS


def one_text(query: Signature, stored: Signature) -> bool:
    """Whether two goals are texts with ``SKELETON_SHARE`` of their words in the same order: one template, whatever a
    word of meaning one of them says in passing ("the cheapest", "not") or how many texts in quotes each gives."""
    return (bool(query.wording and stored.wording) and both_texts(query, stored)
            and may_share_in_order(query.wording, stored.wording, SKELETON_SHARE)
            and in_order_share(query.wording, stored.wording) >= SKELETON_SHARE)


@lru_cache(maxsize=8192)
def in_order_share(query: str, stored: str) -> float:
    """The share of two wordings' words they have in the same order: ``2 c / (n + m)`` for ``c`` words in their
    longest common subsequence, of wordings of ``n`` and ``m`` words (computed a word at a time, with the first
    wording's positions of each word as bits of one integer: Hyyrö's bit-parallel LCS)."""
    positions, count = _positions(query)
    other = stored.split(ITEM)
    every = (1 << count) - 1
    unmatched = every
    for word in other:
        matched = unmatched & positions.get(word, 0)
        unmatched = ((unmatched + matched) | (unmatched - matched)) & every
    common = count - unmatched.bit_count()
    return 2 * common / (count + len(other))


@lru_cache(maxsize=64)
def _positions(wording: str) -> tuple[dict[str, int], int]:
    """Where each word of a wording is, as bits of an integer, and how many words it has."""
    positions: dict[str, int] = {}
    words_in_order = wording.split(ITEM)
    for position, word in enumerate(words_in_order):
        positions[word] = positions.get(word, 0) | 1 << position
    return positions, len(words_in_order)


def may_share_in_order(query: str, stored: str, need: float) -> bool:
    """Whether two wordings have enough words for their share in the same order to reach ``need``."""
    count, other_count = word_count(query), word_count(stored)
    return 2 * min(count, other_count) >= need * (count + other_count)

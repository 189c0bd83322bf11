"""How close a new goal is to a stored one: the goal's signature, and the score of two signatures.

A signature splits a goal into what names the task and what names its values:
- ``terms``: stems of the content words (no stop words, no values), which must agree;
- ``kinds``: the kinds of value the goal carries (quoted text, number, name, email, URL, date); quoted text
  with how many inputs the goal gives in quotes when they are several (``quoted*2``): a goal that gives more of
  them than another asks for inputs the other never took, hence is another task (``conflicts.other_inputs``);
- ``values``: the values themselves, normalised, which raise the score when they agree and never
  lower it when they differ ("Buy 3 apples" and "Buy 12 pears" are one task with other values);
- ``contrasts``: words that change the task's meaning ("cheapest", "most expensive", "not"),
  which must agree exactly or the goals are different tasks;
- ``frame``: how the goal begins and ends, every word kept (as its stem) and each value as ``*``: two goals that
  begin with the same two words and end with the same two ("Add something like what the man is wearing to my
  wish list", "Add something like this to my wish list") are one template with other words in its slots, however
  few of their words they share, and score at least the share of their words that begin and end them alike;
- ``wording``: all the words of a long goal (stems) in order, each value as ``*``: two long goals that begin with
  the same two words, share a word of meaning besides them, and have most of their words in the same order
  ("Can you take me to the comments section of the hottest post in the art forum ...", "... of the last post on
  this page ...") are one template too, and score at least that share (``in_order_share``). Two texts
  (``LONG_TEXT_WORDS`` words or more each: a task described in a paragraph) are compared so however they begin: a
  text's first words are often the values of its template ("My sister, Kathy, has graduated ...", "My colleague,
  James, has been promoted ..."), and texts of other tasks share far less of their words in order than
  ``SKELETON_SHARE``.

A goal's terms are its words whatever its template; a new goal that fits the stored goal's template
(the values its run used are the slots) scores 1, and one that names every word of the template's
fixed text (``may_fit``) is worth trying the template on.
Signatures are stored with the trajectory (``encode``/``decode``), so a match never re-parses
stored goals.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ..core.terms import (
    POSSESSIVE,
    QUOTED_TEXT,
    content_of_words,
    content_terms,
    stem,
    words,
    written_in,
)
from .binding import bind
from .bounds import read_bounds
from .conflicts import contrast_conflict, other_elements, other_inputs, other_things
from .reading import read_goal
from .slots import goal_values
from .spans import between, kept, value_spans_of
from .wordings import (
    FRAME_MARK,
    LONG_GOAL_WORDS,
    LONG_TEXT_WORDS,
    SKELETON_SHARE,
    head_token,
    in_order_share,
    may_share_in_order,
    one_text,
    opening_of,
    same_head,
    text_token_of,
    word_count,
)
from .wordings import ITEM as _ITEM

#: Bumped whenever the signature of a goal changes: stored signatures of another version are rebuilt.
SIGNATURE_VERSION = "s23"
VALUE_WEIGHT = 0.35  # how far agreeing values lift a score towards 1
_SLOT = re.compile(r"\{\d{1,3}\}")
_FIELD = "\x1f"
VALUE_MARK = "="  # a value's key among a goal's tokens when weighing how rare it is
_EMPTY: frozenset[str] = frozenset()
FRAME_WORDS = 6  # the words of a goal's frame kept from each end (a longer goal's middle is never compared)
_VALUE_WORD = "*"  # a value in a frame
_FRAME = re.compile(r"[^|\s]+(?: [^|\s]+)+\|[^|\s]+(?: [^|\s]+)+\|[1-9][0-9]{0,5}")  # as ``_frame`` writes it
_WORDING = re.compile(r"[^\s*]+ [^\s*]+(?: \S+){%d,}" % (LONG_GOAL_WORDS - 2))  # as ``_frame_and_wording`` writes it


class Signature:
    """A goal as the matcher sees it (immutable; a plain class because stores build thousands at once)."""

    __slots__ = ("terms", "kinds", "values", "contrasts", "template", "frame", "wording", "content", "tokens",
                 "_fit_terms")

    def __init__(self, terms: frozenset[str], kinds: frozenset[str], values: frozenset[str],
                 contrasts: frozenset[str], template: str | None = None, frame: str = "", wording: str = "") -> None:
        self.terms, self.kinds, self.values, self.contrasts, self.template = terms, kinds, values, contrasts, template
        self.frame, self.wording = frame, wording
        #: the tokens of what the goal says: its terms, its kinds of value and its contrasts
        self.content: frozenset[str] = terms.union(
            [_mark(kind, "<", ">") for kind in kinds], [_mark(word, "!", "") for word in contrasts]
        ) if kinds or contrasts else terms
        #: what the goals are indexed and compared by: its content, the tokens of its frame and its wording, and one
        #: for both as they are (goals of one token set then score alike: see ``ranking``)
        self.tokens: frozenset[str] = self.content.union(
            [frame_token(frame)] if frame else (), [head_token(wording)] if wording else (),
            [text_token_of(count)] if wording and (count := word_count(wording)) >= LONG_TEXT_WORDS else (),
            [exact_token(frame, wording)]
        ) if frame or wording else self.content
        self._fit_terms: frozenset[str] | None = None

    def _key(self) -> tuple[Any, ...]:
        return self.terms, self.kinds, self.values, self.contrasts, self.template, self.frame, self.wording

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return ("Signature(terms={!r}, kinds={!r}, values={!r}, contrasts={!r}, template={!r}, frame={!r}, "
                "wording={!r})"
                .format(*self._key()))

    def may_fit(self, query: Signature) -> bool:
        """Whether a goal of signature ``query`` may fit this goal's template: it names every word of
        the template's fixed text (a goal that does not cannot bind it)."""
        return self.template is not None and fixed_terms(self.template) <= query.fit_terms()

    def fit_terms(self) -> frozenset[str]:
        """The words a template's fixed text may hold when this goal binds it: its terms and the words of its
        values (a name is a value in a goal and fixed text in a template recorded where it was no slot)."""
        if self._fit_terms is None:
            self._fit_terms = self.terms.union(content_terms(" ".join(self.values).replace("_", " "))[0]) \
                if self.values else self.terms
        return self._fit_terms

    def encode(self) -> str:
        """One line of text to store with the trajectory."""
        fields = [SIGNATURE_VERSION, *(_ITEM.join(sorted(part)) for part in (
            self.terms, self.kinds, self.values, self.contrasts
        )), self.frame, self.wording]
        return _FIELD.join(fields)


def decode(text: str | None, template: str | None) -> Signature | None:
    """The stored signature, or None when it is missing or of another version (then rebuild it)."""
    if not text:
        return None
    fields = text.split(_FIELD)
    if (fields[0] != SIGNATURE_VERSION or len(fields) != 7 or (fields[5] and not _FRAME.fullmatch(fields[5]))
            or (fields[6] and not _WORDING.fullmatch(fields[6]))):
        return None
    terms, kinds, values, contrasts = (frozenset(field.split(_ITEM)) if field else _EMPTY for field in fields[1:5])
    return Signature(terms, kinds, values, contrasts, template, fields[5], fields[6])


def signature(goal: str, template: str | None = None) -> Signature:
    """The signature of a goal. Its terms are its words outside the values it names, whatever its ``template``: a slot
    of the template filled with plain words ("smart watch") keeps them as terms, so that a rewording naming the same
    thing still shares them; the template is kept to score goals that fit it (``score``)."""
    goal = read_goal(goal).text
    spans, units = value_spans_of(goal)
    rest = between(goal, spans)
    kinds = frozenset([span[2] for span in spans])
    if "quoted" in kinds and (inputs := quoted_inputs(goal)) > 1:
        kinds = kinds - {"quoted"} | {f"quoted*{inputs}"}
    values = frozenset([span[3].replace(" ", "_") for span in spans if span[3]])
    pieces = read_bounds([words(piece) for piece in rest], spans)
    terms, contrasts, positions = content_of_words(pieces[0] if len(pieces) == 1 else _joined(pieces, spans))
    if _latest_few(pieces, spans):
        contrasts.add("newest")
    terms += [stem(unit) for unit in units]
    return Signature(frozenset(terms), kinds, values | positions, frozenset(contrasts), template,
                     *_frame_and_wording(pieces))


def _joined(pieces: list[list[str]], spans: list[tuple[int, int, str, str]]) -> list[str]:
    """The words of a goal's ``pieces`` (between its values: ``spans.kept``) in order, with
    ``POSSESSIVE`` where a value owns what follows it ("Lilas's email") and ``QUOTED_TEXT`` for a text in quotes."""
    joined = list(pieces[0])
    for piece, (_, _, kind, value) in zip(pieces[1:], kept(spans)):
        if kind == "quoted":
            joined.append(QUOTED_TEXT)
        elif value.endswith(("'s", "’s")):
            joined.append(POSSESSIVE)
        joined += piece
    return joined


_LATEST = frozenset(("last", "past"))


def _latest_few(pieces: list[list[str]], spans: list[tuple[int, int, str, str]]) -> bool:
    """Whether the goal asks for the last few of something ("the last 5 orders", "the past two weeks"): the newest,
    as "the 5 most recent orders" does."""
    return any(piece and piece[-1] in _LATEST and span[2] == "number" for piece, span in zip(pieces, spans))


def _frame_and_wording(pieces: list[list[str]]) -> tuple[str, str]:
    """The frame and the wording of a goal whose words outside its values are ``pieces`` (those between two values
    each), each word as its stem and each value one word ``*``. The frame: its first and last ``FRAME_WORDS`` words
    and how many it has; "" when it has fewer than four words, or a value among its first two or last two (a frame is
    fixed text). The wording: all of them, when they are at least ``LONG_GOAL_WORDS`` and the first two are no value;
    "" otherwise. Stems, as for terms: "What colors do ... come in?" begins and ends as "What color do ... come in?"
    does."""
    count = sum(map(len, pieces)) + len(pieces) - 1
    fixed_start = len(pieces) == 1 or len(pieces[0]) >= 2
    framed = count >= 4 and fixed_start and (len(pieces) == 1 or len(pieces[-1]) >= 2)
    worded = count >= LONG_GOAL_WORDS and fixed_start
    if not framed and not worded:
        return "", ""
    sequence = [stem(word) for word in pieces[0]]
    for piece in pieces[1:]:
        sequence.append(_VALUE_WORD)
        sequence += map(stem, piece)
    frame = f"{_ITEM.join(sequence[:FRAME_WORDS])}|{_ITEM.join(sequence[-FRAME_WORDS:])}|{count}" if framed else ""
    return frame, _ITEM.join(sequence) if worded else ""


@lru_cache(maxsize=4096)
def exact_token(frame: str, wording: str) -> str:
    """A token for a goal's frame and wording as they are (a hash of them): goals that share every other token but
    not these may score differently, by the share of their words that begin and end them or are in order."""
    digest = hashlib.blake2b(f"{frame}{_FIELD}{wording}".encode(), digest_size=8).hexdigest()
    return FRAME_MARK + "#" + digest


@lru_cache(maxsize=4096)
def frame_token(frame: str) -> str:
    """The token of a frame: its first two words and its last two (goals that share it share their frame's ends)."""
    first, last = _frame_ends(frame)
    return FRAME_MARK + "_".join(first) + "~" + "_".join(last)


def _frame_ends(frame: str) -> tuple[list[str], list[str]]:
    """A frame's first two words and its last two."""
    head, tail, _ = frame.split("|")
    return head.split(_ITEM)[:2], tail.split(_ITEM)[-2:]


def same_frame(query: Signature, stored: Signature) -> bool:
    """Whether two goals begin with the same two words and end with the same two."""
    return bool(query.frame and stored.frame) and frame_token(query.frame) == frame_token(stored.frame)


@lru_cache(maxsize=8192)
def frame_share(query: str, stored: str) -> float:
    """The share of two goals' words that begin and end them alike (words of their frames, ``Signature.frame``):
    ``2 (p + s) / (n + m)`` for ``p`` words alike at the start and ``s`` at the end of goals of ``n`` and ``m``
    words, the middle of a goal longer than ``2 FRAME_WORDS`` words never counted."""
    head, tail, size = query.split("|")
    other_head, other_tail, other_size = stored.split("|")
    count, other_count = int(size), int(other_size)
    alike = _common(head.split(_ITEM), other_head.split(_ITEM)) + _common(tail.split(_ITEM)[::-1],
                                                                        other_tail.split(_ITEM)[::-1])
    return 2 * min(alike, count, other_count) / (count + other_count)


def _common(one: list[str], other: list[str]) -> int:
    count = 0
    for word, other_word in zip(one, other):
        if word != other_word:
            break
        count += 1
    return count


@lru_cache(maxsize=1024)
def _mark(word: str, before: str, after: str) -> str:
    """A kind of value or a contrast term as a token: ``<number>``, ``!cheapest``."""
    return before + word + after


@lru_cache(maxsize=8192)
def fixed_terms(template: str) -> frozenset[str]:
    """The terms of a goal template's fixed text (its words outside the slots)."""
    return frozenset(content_terms(_SLOT.sub(" ", template))[0])


def value_agreement(
    query: Signature, stored: Signature, weight: Callable[[str], float] = lambda token: 1.0,
    *, weigh_values: Callable[[frozenset[str]], float] | None = None,
) -> float:
    """The share of values the two goals have in common (0 when either has none), each value
    counted by its ``weight``: among goals of one shape, the one with the same values ranks first,
    and a value every goal names ("Submit") says little. ``weigh_values`` gives the same sums, remembered."""
    common = query.values & stored.values
    if not common:
        return 0.0
    total = weigh_values or (lambda values: value_weight(values, weight))
    return total(common) / (max(total(query.values), total(stored.values)) or 1.0)


def value_weight(values: frozenset[str], weight: Callable[[str], float]) -> float:
    """The weight of a goal's values: how far each says more than a word every goal uses."""
    return sum(weight(VALUE_MARK + value) - 1.0 for value in values)


def score(
    query: Signature, stored: Signature, query_goal: str, weight: Callable[[str], float] = lambda token: 1.0,
    *, like: str | None = None, weigh: Callable[[frozenset[str]], float] | None = None,
    weigh_values: Callable[[frozenset[str]], float] | None = None,
) -> tuple[float, float]:
    """How alike two goals are (0-1), and how far their values agree (0-1).

    The similarity is the share of their tokens the goals have in common (Dice), each token counted
    by its ``weight`` (rare words on the origin weigh more), lifted by agreeing values; a goal that
    fits the stored goal's template (with values of the kinds its slots held in ``like``, the stored
    goal) scores 1, one that disagrees on a contrast 0, one that gives another number of inputs in quotes
    (``other_inputs``), acts on another kind of element (``other_elements``) or shares only the stored goal's values
    (``shares_only_values``) at most ``VALUE_WEIGHT``, one
    whose frame begins and ends as the stored goal's does at least the share of words that do (``frame_share``), a long
    one that begins as the stored goal does at least the share of words they have in the same order, once it is
    ``SKELETON_SHARE`` or more (``in_order_share``). Frames and wordings weigh nothing in the share of tokens (the
    ``weight`` of their tokens is 0).
    ``weigh`` and ``weigh_values`` give the weights of a whole goal's tokens and values as ``weight`` would,
    remembered for goals met again.
    """
    if stored.template and bind(stored.template, query_goal, like=like) is not None:
        return 1.0, value_agreement(query, stored, weight, weigh_values=weigh_values)
    if (query.contrasts or stored.contrasts) and contrast_conflict(query, stored) and not one_text(query, stored):
        return 0.0, 0.0
    left, right = query.tokens, stored.tokens
    if not left and not right:
        return 0.0, 0.0
    whole = weigh or (lambda tokens: sum(map(weight, tokens)))
    total = whole(left) + whole(right)
    dice = 2 * sum(map(weight, left & right)) / total if total else 0.0
    agree = value_agreement(query, stored, weight, weigh_values=weigh_values)
    similarity = dice + VALUE_WEIGHT * agree * (1 - dice)
    if (other_things(query, stored) or (
        stored.template and similarity > VALUE_WEIGHT and shares_only_values(query, stored.content, stored.template)
    )) and not one_text(query, stored):
        return min(similarity, VALUE_WEIGHT), agree  # whatever their frames
    if same_frame(query, stored):
        similarity = max(similarity, frame_share(query.frame, stored.frame))
    if similarity < 1.0 and same_head(query, stored) and may_share_in_order(
            query.wording, stored.wording, need := max(similarity, SKELETON_SHARE)):
        share = in_order_share(query.wording, stored.wording)
        if share >= need:
            similarity = share
    return similarity, agree


_LIST_GAP = re.compile(r"""["'“”\s]*(?:(?:,|;|&|/|\band\b|\bor\b)["'“”\s]*)*""", re.IGNORECASE)


@lru_cache(maxsize=4096)
def quoted_inputs(goal: str) -> int:
    """How many inputs a goal gives in quotes: each quoted text, a list of them ("A", "B" and "C") once."""
    count, previous = 0, None
    for value in goal_values(goal):
        if value.quoted:
            if previous is None or not _LIST_GAP.fullmatch(goal, previous, value.start):
                count += 1
            previous = value.end
    return count


def shares_only_values(query: Signature, tokens: frozenset[str], template: str) -> bool:
    """Whether a new goal names none of the words of a stored goal's ``template`` (its words outside its values)
    and words of its own instead (the stored goal has ``tokens``): then what they share are the values the stored
    goal was done with ("Buy a smart watch", "Compare smart watches" against "Search for {0} reviews" done on a
    smart watch), which say what it was done on, not what was done; such a goal scores at most what agreeing
    values alone lift a score to (``VALUE_WEIGHT``). One that names nothing else ("Find smart watches") may
    well be the same task."""
    fixed = fixed_terms(template)
    return bool(fixed) and not query.content <= tokens and fixed.isdisjoint(query.fit_terms())


def explain(query: Signature, stored: Signature, query_goal: str, agree: float, *, like: str | None = None) -> str:
    """In a few words, what the similarity of two goals rests on."""
    if stored.template and bind(stored.template, query_goal, like=like) is not None:
        return "fits the goal template"
    one = one_text(query, stored)
    differ = contrast_conflict(query, stored)
    if differ and not one:
        return f"different meaning: {', '.join(written_in(differ, like or '', query_goal))}"
    left, right = query.content, stored.content
    framed = same_frame(query, stored)
    in_order = in_order_share(query.wording, stored.wording) if same_head(query, stored) else 0.0
    if not left and not right and not framed and in_order < SKELETON_SHARE:
        return "no words to compare"
    if stored.template and left & right and shares_only_values(query, right, stored.template) and not one:
        fixed = written_in(sorted(fixed_terms(stored.template))[:4], stored.template)
        return f"shares only the words of its values, none of: {', '.join(fixed)}"
    if (inputs := other_inputs(query, stored)) is not None and not one:
        return f"gives {inputs[0]} {_plural(inputs[0], 'input')} in quotes, it gave {inputs[1]}"
    if (elements := other_elements(query, stored)) is not None and not one:
        mine, theirs = (written_in(kinds, text) for kinds, text in zip(elements, (query_goal, like or "")))
        return f"names another kind of element: {', '.join(mine)} (it named {', '.join(theirs)})"
    reasons = []
    if left or right:
        missing = [written_in([token[1:]], like or "")[0] if token[0] == "!" else token  # a contrast as written
                   for token in sorted(right - left)[:4]]
        reasons.append(f"{len(left & right)} of {len(right)} words shared"
                       + (f" (not: {', '.join(missing)})" if missing else ""))
    if agree:
        reasons.append(f"values agree {agree:.0%}")
    if framed:
        first, last = _frame_ends(stored.frame)
        reasons.append(f"begins and ends alike ({frame_share(query.frame, stored.frame):.0%} of the words: "
                       f"\"{_as_written(first, like)} ... {_as_written(last, like)}\")")
    if in_order >= SKELETON_SHARE:
        if opening_of(stored.wording) == opening_of(query.wording):
            alike = f'both begin "{_as_written(opening_of(stored.wording).split(_ITEM), like)}"'
        else:
            alike = f"two texts of {word_count(query.wording)} and {word_count(stored.wording)} words"
        reasons.append(f"{in_order:.0%} of the words in the same order ({alike})")
    if differ:  # one text with the stored goal's: what it says otherwise is what was asked this time
        reasons.append(f"says otherwise in passing: {', '.join(written_in(differ, like or '', query_goal))}")
    return "; ".join(reasons)


def _as_written(stems: list[str], goal: str | None) -> str:
    """Words of a frame or a wording (stems, ``*`` for a value) as ``goal`` writes them, where it does."""
    return _ITEM.join(written_in(stems, goal or ""))


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


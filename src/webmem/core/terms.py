"""Words as a matcher compares them: case-folded, stemmed, without the words that carry no task meaning.

Stemming is Snowball's English stemmer (the ``snowballstemmer`` package, Porter2), cached per word.
Words that change what a task means ("cheapest", "most expensive", "newest", "longest", "not") are kept and
put in one canonical spelling each, so two goals agree on them only when they mean the same.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

import snowballstemmer

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_STEMMER = snowballstemmer.stemmer("english")  # keeps the word it works on: one thread at a time
_STEMMING = threading.Lock()

#: Function words, politeness and filler: words whose presence says nothing about which task it is.
STOP_WORDS = frozenset("""
a an the and or but of to in on at by for from with into onto over under as is are was were be been
being am do does did done doing have has had having it its it's this that these those there here
then than so such very too also just only again please kindly thanks thank i me my mine myself we
us our ours you your yours he him his she her hers they them their theirs what which who whom whose
when where why how can could would should will shall may might must need needs want wants wanted
like let lets let's go going get gets got make sure some any all each every both either neither one
ones someone something anything everything via per about up out off if whether while yet now
currently quickly right away tell show give find look see help view display navigate visit browse retrieve
fetch obtain new e s locate know much
""".split())
#: Verbs that only lead to what is acted on when an article or a possessive follows them ("open the page of X" and
#: "list all X" are "show X"; "my open tabs" are tabs, "the wish list of X" a list).
_LEADING_VERBS = frozenset({"open", "list"})
_DETERMINERS = frozenset("the this that these those my your our his her its their all every each".split())
#: Words that name one thing as another word does, as its stem: "e-mail" is "email", "cost" "price" ("the ticket
#: with the cheapest cost").
_SAME_STEMS = {"mail": "email", "cost": "price", "flag": "mark", "call": "name"}
#: Sending a message that is there already forwards it (``passes_on_a_message``).
_SENDING = frozenset(("send", "resend"))
_MESSAGES = frozenset(("email", "emails", "mail", "mails", "message", "messages", "msg"))
_FROM_SOMEONE = frozenset(("from", "by", "i", "got", "that", "which", "written", "sent", "received"))
_COMPOSING = frozenset(("write", "compose", "draft", "reply", "respond", "response", "answer", "new"))
_SENT_WITHIN = 8  # words after "send" in which the message it sends is named
_OWN = (["my"], ["our"], ["your"])  # "an email from my account" is no one else's
#: Stand, among a goal's words, for a value that owns what follows it ("Lilas's email") and for a text in quotes; no
#: word of a text is either.
POSSESSIVE = "'s"
QUOTED_TEXT = '"'
_PLACES = frozenset((POSSESSIVE, QUOTED_TEXT))
#: Words written as one that others write as two: each is read as its two words ("wishlist", "wish list").
_COMPOUNDS = {"wishlist": ("wish", "list"), "homepage": ("home", "page"), "webpage": ("web", "page"),
              "website": ("web", "site"), "checkout": ("check", "out"), "bestselling": ("best", "selling")}
#: Phrases that name one term: "how many orders", "the number of orders" and "count the orders" ask one thing.
_TERM_PHRASES = {"how many": "count", "number of": "count"}

#: The stems of words of how a page is worked ("click the trash icon") rather than of what is done, and how much they
#: weigh against other words: people who ask for the same task name them or not.
MECHANICS = dict.fromkeys(("click", "tap", "press", "icon", "button", "link", "textbox", "checkbox", "field", "menu",
                           "dropdown"), 0.3)
#: The stems of words that name the kind of element a goal acts on ("the slider", "the link"): two short goals that
#: each name a kind the other does not ("Select 5 with the spinner", "Select 5 with the slider") act on different
#: elements.
ELEMENT_KINDS = frozenset(("button", "link", "tab", "checkbox", "radio", "slider", "spinner", "textbox", "dropdown",
                           "menu", "combobox", "listbox"))
#: Superlatives before "number of": "the highest number of orders" are "the most orders", no count asked for.
_BY_COUNT = {**dict.fromkeys(("most", "highest", "largest", "biggest", "greatest"), "most"),
             **dict.fromkeys(("least", "lowest", "smallest", "fewest"), "least")}
#: Words that change what a task means, each mapped to one spelling; a multi-word form counts as one.
_CONTRAST_PHRASES = {
    "most expensive": "priciest", "highest price": "priciest", "highest priced": "priciest",
    "least expensive": "cheapest", "lowest price": "cheapest", "lowest priced": "cheapest",
    "lowest fare": "cheapest", "lowest cost": "cheapest", "highest fare": "priciest", "highest cost": "priciest",
    "minimum price": "cheapest", "minimum cost": "cheapest", "minimum fare": "cheapest", "maximum price": "priciest",
    "maximum cost": "priciest", "maximum fare": "priciest", "least costly": "cheapest", "most costly": "priciest",
    "most affordable": "cheapest", "least affordable": "priciest",
    "most recent": "newest", "most recently": "newest", "least recent": "oldest",
    "most popular": "popular", "least popular": "unpopular",
    "get rid": "delete", "throw away": "delete", "throw out": "delete",
    # opening a thing that is not there yet creates it: "open an issue", "file an issue", "start a new project"
    "open a": "create", "open an": "create", "file an": "create", "start a": "create",
}
#: The words a bound on a number is put as (``trajectories.bounds``), one for a lower bound and one for an upper.
BOUND_LOWER, BOUND_UPPER = "atleast", "atmost"
_PHRASE_STARTS = frozenset(phrase.split()[0] for phrase in (*_CONTRAST_PHRASES, *_TERM_PHRASES))
_CONTRAST_WORDS = {
    "cheapest": "cheapest", "priciest": "priciest", "costliest": "priciest", "newest": "newest", "latest": "newest",
    "oldest": "oldest", "earliest": "oldest", "highest": "highest", "lowest": "lowest",
    "largest": "largest", "biggest": "largest", "smallest": "smallest", "best": "best",
    "worst": "worst", "most": "most", "least": "least", "not": "not", "no": "not", "never": "not",
    "without": "not", "except": "not",
    **dict.fromkeys(("don't", "dont", "doesn't", "doesnt", "didn't", "didnt", "isn't", "isnt", "aren't", "arent",
                     "wasn't", "wasnt", "weren't", "werent", "haven't", "havent", "hasn't", "hasnt", "hadn't",
                     "won't", "wont", "can't", "cant", "cannot", "couldn't", "shouldn't", "wouldn't"), "not"),
    "ascending": "ascending", "descending": "descending",
    "maximum": "highest", "minimum": "lowest", "max": "highest", "min": "lowest", "fewest": "least",
    "longest": "longest", "shortest": "shortest", "tallest": "tallest", "fastest": "fastest", "quickest": "fastest",
    "slowest": "slowest", "heaviest": "heaviest", "lightest": "lightest", "closest": "nearest", "nearest": "nearest",
    "farthest": "farthest", "furthest": "farthest",
    # a bound on a number, as ``trajectories.bounds`` puts it: "at least 16GB" is no "least"
    BOUND_LOWER: BOUND_LOWER, BOUND_UPPER: BOUND_UPPER,
    # what is done to a thing: two goals that do different things to it are different tasks
    "buy": "buy", "purchase": "buy", "sell": "sell", "delete": "delete", "remove": "delete", "erase": "delete",
    "discard": "delete",
    "add": "create", "create": "create", "edit": "update", "change": "update", "update": "update",
    "modify": "update", "rename": "update", "cancel": "cancel", "subscribe": "subscribe",
    "unsubscribe": "unsubscribe", "upvote": "upvote", "downvote": "downvote",
    "reply": "reply", "replied": "reply", "respond": "reply", "forward": "forward", "forwarded": "forward",
}
#: The past and present participles of the words that name an operation ("needs to be deleted", "forwarding it"):
#: the same act, unless they say a thing's state (``_BEFORE_A_STATE``). Forms in -s are left out, as most of them are
#: also nouns ("the replies", "recent changes").
_ACT_PARTICIPLES = {
    "deleted": "delete", "deleting": "delete", "removed": "delete", "removing": "delete", "erased": "delete",
    "erasing": "delete", "discarded": "delete", "discarding": "delete", "bought": "buy", "buying": "buy",
    "purchased": "buy", "purchasing": "buy", "sold": "sell", "selling": "sell", "created": "create",
    "creating": "create", "added": "create", "adding": "create", "edited": "update", "editing": "update",
    "modified": "update", "modifying": "update", "changed": "update", "changing": "update", "updated": "update",
    "updating": "update", "renamed": "update", "renaming": "update", "cancelled": "cancel", "canceled": "cancel",
    "cancelling": "cancel", "canceling": "cancel", "subscribed": "subscribe", "subscribing": "subscribe",
    "unsubscribed": "unsubscribe", "unsubscribing": "unsubscribe", "upvoted": "upvote", "upvoting": "upvote",
    "downvoted": "downvote", "downvoting": "downvote", "replying": "reply", "responded": "reply",
    "responding": "reply", "forwarding": "forward",
}
_CONTRAST_WORDS.update(_ACT_PARTICIPLES)
#: Words after which a participle says what state a thing is in, not what to do to it: "my cancelled orders", "the
#: recently added products", "the selling price" (a word of the goal, no act).
_BEFORE_A_STATE = _DETERMINERS | frozenset(("recently", "newly", "most", "latest", "last", "previously", "already"))
#: Names a page may spell otherwise than the goal does: a close button reads "×" where a goal says "x".
NAME_SPELLINGS = {"x": ("close", "×", "✕"), "close": ("x", "×", "✕"), "login": ("log in", "sign in")}
#: Each contrast term's dimension: two goals that name different terms of one dimension differ.
DIMENSIONS = {
    "cheapest": "price", "priciest": "price", "newest": "age", "oldest": "age",
    "popular": "popularity", "unpopular": "popularity", "highest": "extent", "lowest": "extent",
    "largest": "extent", "smallest": "extent", "most": "extent", "least": "extent",
    "best": "quality", "worst": "quality", "ascending": "order", "descending": "order", "not": "negation",
    "longest": "length", "shortest": "length", "tallest": "length", "fastest": "speed", "slowest": "speed",
    "heaviest": "weight", "lightest": "weight", "nearest": "distance", "farthest": "distance",
    BOUND_LOWER: "bound", BOUND_UPPER: "bound",
    **{operation: "operation" for operation in (
        "buy", "sell", "delete", "create", "update", "cancel", "subscribe", "unsubscribe", "upvote", "downvote",
        "reply", "forward",
    )},
}
CONTRAST_TERMS = frozenset(DIMENSIONS)
#: The contrast terms that name an operation: a goal that names none may simply not say it.
OPERATIONS = frozenset(term for term, dimension in DIMENSIONS.items() if dimension == "operation")
#: Positions and directions: values of a task ("the first link", "the 3rd result", "drag it up"),
#: compared like other values rather than as words of the task.
POSITIONS = frozenset("""
first second third fourth fifth sixth seventh eighth ninth tenth last top bottom left right up down
""".split())
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$")


def words(text: str) -> list[str]:
    """The text's words, case-folded and Unicode-normalised, apostrophes inside words kept."""
    if text.isascii():  # NFKC leaves ASCII as it is, and nothing to replace is in it
        return _WORD.findall(text.lower())
    normal = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    return _WORD.findall(normal)


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of a case-folded word (``watches`` -> ``watch``, ``reviews`` -> ``review``)."""
    if word.endswith("'s"):
        word = word[:-2]
    with _STEMMING:
        return _STEMMER.stemWord(word)


def content_terms(text: str) -> tuple[list[str], set[str], set[str]]:
    """The stems of the text's content words in order, the canonical contrast terms it carries,
    and the positions it names."""
    return content_of_words(words(text))


def content_of_words(found: list[str]) -> tuple[list[str], set[str], set[str]]:
    """``content_terms`` of a text whose ``words`` were ``found``."""
    terms: list[str] = []
    contrasts: set[str] = set()
    positions: set[str] = set()
    index, count = 0, len(found)
    while index < count:
        word = found[index]
        index += 1
        if word in _PHRASE_STARTS and index < count:
            pair = f"{word} {found[index]}"
            if pair in _CONTRAST_PHRASES:
                contrasts.add(_CONTRAST_PHRASES[pair])
                index += 1
                continue
            if pair in _TERM_PHRASES:
                terms.append(_TERM_PHRASES[pair])
                index += 1
                continue
        if word in _BY_COUNT and found[index:index + 2] == ["number", "of"]:
            contrasts.add(_BY_COUNT[word])
            index += 2
            continue
        if word in _LEADING_VERBS and index < count and found[index] in _DETERMINERS:
            continue
        if word in _PLACES:
            continue
        if word in _SENDING and passes_on_a_message(found, index - 1):
            contrasts.add("forward")  # and "send" stays a word of the goal
        if word in _CONTRAST_WORDS and not (word in _ACT_PARTICIPLES and index >= 2 and
                                            found[index - 2] in _BEFORE_A_STATE):
            contrasts.add(_CONTRAST_WORDS[word])
        elif word in POSITIONS or (word[0].isdigit() and _ORDINAL.match(word)):
            positions.add(word)
        elif word in _COMPOUNDS:
            for part in _COMPOUNDS[word]:
                if part in _CONTRAST_WORDS:
                    contrasts.add(_CONTRAST_WORDS[part])
                elif part not in STOP_WORDS:
                    terms.append(stem(part))
        elif word not in STOP_WORDS and not word.isdigit():
            stemmed = stem(word)
            terms.append(_SAME_STEMS.get(stemmed, stemmed))
    return terms, contrasts, positions


def passes_on_a_message(found: list[str], at: int) -> bool:
    """Whether the "send" at ``at`` of a goal's ``found`` words sends on a message that is there already: one of
    someone ("Lilas's email"), one from someone ("the email from Pooh", "an email written by Heidie", "the message
    I got"), or one referred back to ("it", "that email") once a message was named. That is forwarding it; sending
    "an email to Bob" or "an email from my account", a text in quotes, or a goal that writes, drafts or replies, is
    not."""
    messages = [place for place, word in enumerate(found) if word in _MESSAGES]
    if not messages or QUOTED_TEXT in found or _COMPOSING.intersection(found):
        return False
    after = found[at + 1:at + 3]
    if after[:1] == ["it"] or (after[:1] in (["that"], ["this"]) and after[1:] and after[1] in _MESSAGES):
        return True
    for place in messages:
        if place > at + _SENT_WITHIN:
            break
        owned = any(word.endswith("'s") for word in found[max(0, place - 2):place])
        said_after = found[place + 1:place + 3]
        from_someone = said_after[:1] != [] and said_after[0] in _FROM_SOMEONE and said_after[1:] not in _OWN
        if owned or from_someone:
            return True
    return False


def written_in(terms: list[str], *texts: str) -> list[str]:
    """Stems and canonical contrast terms as the first of ``texts`` that gives each writes it; any other token (a
    kind of value, ``<number>``) as it is."""
    if not terms:
        return []
    found = [words(text) for text in texts]
    return [next((written for each in found if (written := _written_as(term, each)) != term), _SHOWN.get(term, term))
            for term in terms]


#: How a term no text writes as one word is shown: a bound, whichever of its phrasings the goal used.
_SHOWN = {BOUND_LOWER: "at least", BOUND_UPPER: "at most"}


def _written_as(token: str, found: list[str]) -> str:
    """A stem or a canonical contrast term as the text whose ``words`` were ``found`` writes it ("christma" as
    "christmas", "create" as "add"); the token itself when the text does not give it."""
    if token in CONTRAST_TERMS:
        for word, after in zip(found, [*found[1:], ""]):
            if _CONTRAST_WORDS.get(word) == token:
                return word
            if _CONTRAST_PHRASES.get(f"{word} {after}") == token:
                return f"{word} {after}"
    if not token[:1].isalpha():
        return token
    for word in found:  # a stem mostly begins its word
        if word.startswith(token) and stem(word) == token:
            return word
    return next((word for word in found if word.isalpha() and word not in STOP_WORDS and stem(word) == token), token)

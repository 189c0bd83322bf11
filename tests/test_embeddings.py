"""Embedders: the default hashing embedder, the Embedder protocol with a small embedder of our own,
the embedder's name stored with each entry, re-embedding after a switch, and the optional
sentence-transformers embedder without its package."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import webmem
from webmem import Embedder, HashingEmbedder, InvalidInput, SentenceTransformerEmbedder
from webmem.core.embeddings import cosine

PAGE = {"url": "https://support.example.com/tickets", "title": "Tickets",
        "elements": [{"role": "button", "name": f"Action {i}"} for i in range(10)]}
QUERY = "change the priority of ticket 4021 to high"


class LetterCounts:
    """A tiny embedder of our own: how often each letter a-z occurs. It implements the protocol."""

    name = "letter-counts-v1"
    dimension = 26

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(text.lower().count(chr(ord("a") + i))) for i in range(26)] for text in texts]


def norm(vector: Sequence[float]) -> float:
    return math.sqrt(sum(value * value for value in vector))


# --- the hashing embedder -------------------------------------------------------------------


def test_hashing_embedder_is_deterministic_across_instances() -> None:
    texts = [QUERY, "Öffne das Menü", "", "click('42')"]
    first, second = HashingEmbedder().embed(texts), HashingEmbedder().embed(texts)
    assert first == second
    assert HashingEmbedder().embed([QUERY]) == [first[0]]  # batch or not, the same vector
    assert HashingEmbedder().name == "hashing-v1-256" and HashingEmbedder().dimension == 256
    assert HashingEmbedder(64).name == "hashing-v1-64"


def test_hashing_embedder_is_deterministic_across_processes() -> None:
    """No use of Python's salted hash(): another process with another hash seed gets the same vector."""
    code = "import json, webmem; print(json.dumps(webmem.HashingEmbedder().embed([%r])[0]))" % QUERY
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    output = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert json.loads(output.stdout) == HashingEmbedder().embed([QUERY])[0]


@pytest.mark.parametrize("dimension", [16, 100, 256, 8192])
def test_hashing_vectors_are_normalised_and_of_the_dimension(dimension: int) -> None:
    vectors = HashingEmbedder(dimension).embed([QUERY, "x", "Priority dropdown, then High"])
    assert [len(v) for v in vectors] == [dimension] * 3
    assert [norm(v) for v in vectors] == pytest.approx([1.0] * 3)
    empty = HashingEmbedder(dimension).embed(["", "  !? "])
    assert all(value == 0.0 for vector in empty for value in vector)  # nothing to hash: no direction


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    embedder = HashingEmbedder()
    query, similar, reworded, unrelated = embedder.embed([
        QUERY, "change ticket 4021 priority to high", "set the priority of the ticket to High",
        "book a table for two at the italian restaurant",
    ])
    assert cosine(query, similar) > 0.6
    assert cosine(query, reworded) > cosine(query, unrelated)
    assert cosine(query, similar) > cosine(query, unrelated) + 0.4
    assert cosine(query, query) == pytest.approx(1.0)
    # case and Unicode forms do not matter; word order barely does
    assert embedder.embed(["PRIORITY High"]) == embedder.embed(["priority high"])
    assert embedder.embed(["ﬁle"]) == embedder.embed(["file"])


@pytest.mark.parametrize("dimension", [15, 0, -1, 8193, True, 256.0, "256", None])
def test_hashing_dimension_is_validated(dimension: Any) -> None:
    with pytest.raises(InvalidInput, match="^dimension: expected an integer from 16 to 8192"):
        HashingEmbedder(dimension)


def test_cosine_edge_cases() -> None:
    assert cosine([], []) == 0.0
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    assert cosine([1.0, 0.0], [1.0, 0.0, 0.0]) == 0.0  # sizes differ
    assert cosine([1.0, 0.0], [-2.0, 0.0]) == pytest.approx(-1.0)
    assert cosine([3.0, 4.0], [4.0, 3.0]) == pytest.approx(24 / 25)


# --- the protocol and the stored embedder name -------------------------------------------------


def test_a_custom_embedder_satisfies_the_protocol_and_is_used(memory_dir: Path) -> None:
    letters = LetterCounts()
    assert isinstance(letters, Embedder)
    assert isinstance(HashingEmbedder(), Embedder)
    with webmem.Memory.open(memory_dir, embedder=letters) as mem:
        assert mem.episodes.embedder is letters
        mem.episodes.init_episode("s")
        mem.episodes.record_step_start(PAGE, "abc abc", "click('1')", "Action 1")
        [entry] = mem.episodes.persist_memories()
        assert entry.embedder == "letter-counts-v1"
        assert entry.internal_state_embedding == [2.0, 2.0, 2.0] + [0.0] * 23
        assert letters.calls == [["abc abc"]]
    with webmem.Memory.open(memory_dir, embedder=letters) as mem:  # as stored, after reopening
        [entry] = mem.episodes.load_all_memories_for_session("s")
        assert (entry.embedder, entry.internal_state_embedding[:3]) == ("letter-counts-v1", [2.0, 2.0, 2.0])


@pytest.mark.parametrize("embedder", [object(), "hashing", HashingEmbedder])
def test_an_object_that_is_not_an_embedder_is_rejected(memory_dir: Path, embedder: Any) -> None:
    with pytest.raises(InvalidInput, match="^embedder: expected an object with name, dimension and embed"):
        webmem.Memory.open(memory_dir, embedder=embedder)
    assert not memory_dir.exists()
    with webmem.Memory.open(memory_dir) as mem, pytest.raises(InvalidInput, match="^embedder: "):
        webmem.EpisodeStore(mem.scope, embedder=embedder)


class Named(LetterCounts):
    def __init__(self, name: Any, dimension: Any = 26) -> None:
        super().__init__()
        self.name, self.dimension = name, dimension


@pytest.mark.parametrize(
    ("embedder", "reason"),
    [
        (Named(""), "its name must be a non-empty string"),
        (Named("   "), "its name must be a non-empty string"),
        (Named(7), "its name must be a non-empty string"),
        (Named("x" * 201), "its name must be a non-empty string"),
        (Named("ok", 0), "its dimension must be a positive integer, got 0"),
        (Named("ok", "26"), "its dimension must be a positive integer, got '26'"),
    ],
)
def test_an_embedder_needs_a_usable_name_and_dimension(memory_dir: Path, embedder: Any, reason: str) -> None:
    """The name is stored with every entry (and validated when read back): a bad one is refused up front."""
    with pytest.raises(InvalidInput, match=f"^embedder: {reason}"):
        webmem.Memory.open(memory_dir, embedder=embedder)
    assert not memory_dir.exists()  # refused before anything was created or opened


def graded_rep(mem: webmem.Memory, states: list[str]) -> None:
    episodes = mem.episodes
    episodes.init_episode("s")
    for number, state in enumerate(states, start=1):
        episodes.record_step_start(PAGE, state, f"click('{number}')", f"Action {number}")
    episodes.persist_memories()
    episodes.add_grades_to_memories({"task_completed": True, "step_grades": [
        {"step_number": n, "is_correct": n % 2 == 1} for n in range(1, len(states) + 1)]})


STATES = [QUERY, "open the priority dropdown", "press save", "type a comment about the outage"]


def test_reembed_after_switching_embedder(memory_dir: Path, events: list[dict[str, Any]]) -> None:
    with webmem.Memory.open(memory_dir, embedder=LetterCounts()) as mem:
        graded_rep(mem, STATES)
        assert mem.episodes.reembed() == 0  # nothing made by another embedder
    with webmem.Memory.open(memory_dir, on_event=events.append) as mem:  # the default embedder now
        before = mem.episodes.load_all_memories_for_session("s")
        assert {e.embedder for e in before} == {"letter-counts-v1"}
        assert mem.episodes.reembed() == len(STATES)
        after = mem.episodes.load_all_memories_for_session("s")
        assert {e.embedder for e in after} == {"hashing-v1-256"}
        assert [e.internal_state_embedding for e in after] == HashingEmbedder().embed(STATES)
        # only the embedding and its name changed
        assert [e.model_copy(update={"internal_state_embedding": [], "embedder": "x"}) for e in after] == [
            e.model_copy(update={"internal_state_embedding": [], "embedder": "x"}) for e in before]
        assert mem.episodes.reembed() == 0
        assert [(e["count"], e["embedder"]) for e in events if e["event"] == "memories_reembedded"] == [
            (len(STATES), "hashing-v1-256")]


def test_reembed_counts_only_the_entries_of_another_embedder(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir, embedder=LetterCounts()) as mem:
        graded_rep(mem, STATES[:2])
    with webmem.Memory.open(memory_dir) as mem:
        graded_rep(mem, STATES[2:])
        assert mem.episodes.reembed() == 2
    with webmem.Memory.open(memory_dir, embedder=HashingEmbedder(64)) as mem:
        assert mem.episodes.reembed() == 4
        assert {len(e.internal_state_embedding) for e in mem.episodes.load_all_memories_for_session("s")} == {64}


def test_retrieval_works_with_entries_from_another_embedder(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir, embedder=LetterCounts()) as mem:
        graded_rep(mem, STATES)
    with webmem.Memory.open(memory_dir) as mem:
        store = webmem.EpisodeStore(mem.scope, limit=10)
        store.init_episode("s")
        found = store.retrieve_memories(PAGE, QUERY)
        assert {m.entry.embedder for m in found} == {"letter-counts-v1"}
        assert len(found) == len(STATES)
        hashing = HashingEmbedder()
        query = hashing.embed([QUERY])[0]
        for memory in found:  # compared in the current embedder's space, not the stored vectors'
            assert memory.state_similarity == pytest.approx(cosine(query, hashing.embed([memory.entry.internal_state])[0]))
        assert found[0].entry.internal_state == QUERY and found[0].score == pytest.approx(1.0)
        assert mem.episodes.reembed() == len(STATES)
        again = store.retrieve_memories(PAGE, QUERY)
        assert [(m.entry.id, m.score) for m in again] == [(m.entry.id, pytest.approx(m.score)) for m in found]


# --- sentence-transformers ------------------------------------------------------------------


def test_sentence_transformers_is_not_installed_here() -> None:
    assert importlib.util.find_spec("sentence_transformers") is None


def test_sentence_transformer_embedder_without_the_package_says_how_to_install() -> None:
    with pytest.raises(ImportError) as caught:
        SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    assert "pip install 'webmem[embeddings]'" in str(caught.value)


def test_sentence_transformer_embedder_without_the_package_even_if_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # an import of it now fails
    with pytest.raises(ImportError, match=r"pip install 'webmem\[embeddings\]'"):
        SentenceTransformerEmbedder("any-local-model")

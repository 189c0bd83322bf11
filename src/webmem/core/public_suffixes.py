"""The public suffix list as three sets of names, read once when first asked: a host's registrable domain.

The list is the one ``publicsuffixlist`` ships (nothing is downloaded). That package's own parser also makes
a punycode copy of every rule, which takes 40-140 ms; here a host's punycode labels are decoded instead, and
only when it has some.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

_PUNYCODE = "xn--"


def registrable_domain(host: str) -> str | None:
    """The host's registrable domain, its public suffix and one label more (``shop.example.co.uk`` ->
    ``example.co.uk``), lower-case; None when the host is a public suffix itself or has an empty label."""
    lowered = host.lower()
    labels = lowered.split(".")
    if "" in labels:
        return None
    names = [_unicode(label) for label in labels] if _PUNYCODE in lowered else labels
    public = _public_labels(names)
    if public >= len(labels):
        return None
    return ".".join(labels[-public - 1:])


def _public_labels(names: list[str]) -> int:
    """How many of the last labels are the public suffix, by the list's rules: an exception rule prevails,
    else the longest rule that matches; a top-level domain the list does not name is a public suffix."""
    rules, wildcards, exceptions = _rules()
    count = len(names)
    for start in range(count):
        if ".".join(names[start:]) in exceptions:  # "!www.ck": www.ck is no public suffix, ck is
            return count - start - 1
    for start in range(count):
        if ".".join(names[start:]) in rules or ".".join(names[start + 1:]) in wildcards:
            return count - start
    return 1


def _unicode(label: str) -> str:
    if not label.startswith(_PUNYCODE):
        return label
    try:
        return label.encode("ascii").decode("idna")
    except UnicodeError:  # not valid punycode: a label like any other
        return label


@lru_cache(maxsize=1)
def _rules() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The list's rules, its wildcard rules (``*.ck`` kept as ``ck``) and its exceptions (``!www.ck`` kept as
    ``www.ck``). As for the list's own package, a wildcard's parent is a public suffix too (``ck``)."""
    text = resources.files("publicsuffixlist").joinpath("public_suffix_list.dat").read_text(encoding="utf-8")
    rules: set[str] = set()
    wildcards: set[str] = set()
    exceptions: set[str] = set()
    for line in text.splitlines():
        rule = line.split(None, 1)[0].lower() if line.strip() else ""
        if not rule or rule.startswith("//"):
            continue
        if rule.startswith("!"):
            exceptions.add(rule[1:])
        elif rule.startswith("*."):
            wildcards.add(rule[2:])
        else:
            rules.add(rule)
    return frozenset(rules | wildcards), frozenset(wildcards), frozenset(exceptions)

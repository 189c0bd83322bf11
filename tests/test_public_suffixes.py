"""webmem's reading of the public suffix list gives what the list's own package gives, host for host: on the
list's official test cases and on hosts made from every rule of the list, in Unicode and in punycode."""

from __future__ import annotations

import re
from importlib import resources

import pytest
from publicsuffixlist import PublicSuffixList

from webmem.core.public_suffixes import registrable_domain
from webmem.core.urls import site_of

_CASE = re.compile(r"^checkPublicSuffix\((null|'[^']*'), (null|'[^']*')\);$")


@pytest.fixture(scope="module")
def reference() -> PublicSuffixList:
    return PublicSuffixList()


def official_cases() -> list[tuple[str, str | None]]:
    text = resources.files("publicsuffixlist").joinpath("test_psl.txt").read_text(encoding="utf-8")
    cases = []
    for line in text.splitlines():
        found = _CASE.match(line.strip())
        if found and found.group(1) != "null":
            cases.append((found.group(1).strip("'"), None if found.group(2) == "null" else found.group(2).strip("'")))
    return cases


def test_the_official_test_cases_of_the_list_pass() -> None:
    cases = official_cases()
    assert len(cases) > 60
    wrong = [(host, want, registrable_domain(host)) for host, want in cases if registrable_domain(host) != want]
    assert wrong == []


def hosts_from_rules() -> list[str]:
    text = resources.files("publicsuffixlist").joinpath("public_suffix_list.dat").read_text(encoding="utf-8")
    hosts = []
    for line in text.splitlines():
        rule = line.split(None, 1)[0] if line.strip() else ""
        if not rule or rule.startswith("//"):
            continue
        name = rule.lstrip("!").replace("*", "any")
        hosts += [name, f"shop.{name}", f"www.shop.{name}", name.split(".", 1)[-1]]
    return hosts


def test_every_rule_of_the_list_gives_the_site_its_package_gives(reference: PublicSuffixList) -> None:
    hosts = hosts_from_rules()
    assert len(hosts) > 30_000
    wrong = [(host, reference.privatesuffix(host), registrable_domain(host)) for host in hosts
             if registrable_domain(host) != reference.privatesuffix(host)]
    assert wrong == []


def test_hosts_in_punycode_give_the_site_in_punycode(reference: PublicSuffixList) -> None:
    unicode_hosts = [host for host in hosts_from_rules() if not host.isascii()]
    assert len(unicode_hosts) > 1_000
    for host in unicode_hosts:
        encoded = host.encode("idna").decode("ascii")
        assert registrable_domain(encoded) == reference.privatesuffix(encoded), encoded
    assert site_of("www.xn--85x722f.xn--55qx5d.cn") == "xn--85x722f.xn--55qx5d.cn"  # 食狮.公司.cn
    assert site_of("xn--55qx5d.cn") == "xn--55qx5d.cn"  # 公司.cn is a public suffix: its own site


@pytest.mark.parametrize("host", ["xn--", "xn--zz.com", "a.xn--.example", "WWW.Example.CO.UK", "example", "..com"])
def test_odd_hosts_give_what_the_package_gives(reference: PublicSuffixList, host: str) -> None:
    assert registrable_domain(host) == reference.privatesuffix(host)

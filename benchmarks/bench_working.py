"""How long one turn's full context takes to build when the run uses its working memory.

The run has 50 history entries, 5 extractions of 20 KB each (product listing pages: HTML with
links, and extracted page text with URLs), navigation, scratch pad, user and inferred context, a
sitemap and a learned pattern; the memory holds every persistent part (trajectories, sessions,
facts, selectors, lessons that become site tips, and the last error). Prints the median time of
``run.context()`` and, measured in the same process, a baseline: the same run's context built
through a handle that never touched its working memory (persistent parts only), and the ratio.

Usage: python benchmarks/bench_working.py [--repeat N] [--budget TOKENS] [--trajectories N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from timing import median_ms

import webmem

SITE = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
GOAL = "search for smart watch reviews and compare the best rated models"
BRANDS = "Garmin Fitbit Amazfit Polar Suunto Withings Huawei Xiaomi Coros Fossil".split()
FEATURES = "GPS, heart rate, SpO2, sleep tracking, NFC payments, AMOLED display, 5 ATM, music storage".split(", ")
EXTRACTION_BYTES = 20_000



def html_listing(rng: random.Random, page: int) -> str:
    """A product listing page as a browser returns it: navigation, cards with links and prices, a form."""
    head = (
        "<!doctype html><html><head><title>Smart watches - page {0}</title></head><body>"
        '<nav><a href="/">Home</a> <a href="/deals">Deals</a> <a href="/cart">Cart</a> '
        '<a href="/account/login">Sign in</a></nav><h1>Smart watches</h1>'
        '<form action="/search" id="search-form"><label for="q">Search</label>'
        '<input id="q" name="q" type="search" placeholder="Search products"><button id="go">Go</button></form>'
        '<ul id="results">'
    ).format(page)
    cards = []
    number = 0
    while len(head) + sum(map(len, cards)) < EXTRACTION_BYTES - 200:
        brand = rng.choice(BRANDS)
        slug = f"{brand.lower()}-watch-{page}-{number}"
        cards.append(
            f'<li class="card" data-testid="product-{page}-{number}"><a href="https://www.example-shop.com/p/{slug}">'
            f"{brand} Watch {number}</a><span class=\"price\">${rng.randint(49, 899)}.99</span>"
            f"<p>{', '.join(rng.sample(FEATURES, 3))}. {rng.randint(1, 5)}.{rng.randint(0, 9)} stars "
            f"from {rng.randint(3, 4000)} reviews.</p></li>"
        )
        number += 1
    return head + "".join(cards) + '</ul><a href="?page={0}" rel="next">Next page</a></body></html>'.format(page + 1)


def text_listing(rng: random.Random, page: int) -> str:
    """The same kind of page as extracted text: one product a line, with its URL."""
    lines = [f"Smart watches - results page {page}", "Sort by: relevance | price | rating", ""]
    number = 0
    while sum(len(line) + 1 for line in lines) < EXTRACTION_BYTES - 120:
        brand = rng.choice(BRANDS)
        lines.append(
            f"{brand} Watch {number} - ${rng.randint(49, 899)}.99 - {rng.randint(1, 5)}.{rng.randint(0, 9)} stars "
            f"({rng.randint(3, 4000)} reviews) - {', '.join(rng.sample(FEATURES, 2))} - "
            f"https://www.example-shop.com/p/{brand.lower()}-{page}-{number}"
        )
        number += 1
    lines.append(f"Next page: https://www.example-shop.com/search?q=smart+watch&page={page + 1}")
    return "\n".join(lines)


def fill_persistent(mem: webmem.Memory, trajectories: int) -> None:
    """Trajectories, sessions, facts, selectors and lessons on the shop."""
    for index in range(trajectories):
        goal = GOAL if index % 2 == 0 else f"search for {BRANDS[index % len(BRANDS)]} smart watch reviews {index}"
        run = mem.start_run(goal=goal, start_url=SITE)
        run.record_step(action="click", target='button "Accept cookies"', selector="#accept", url=SITE,
                        duration_ms=200)
        run.record_step(action="fill", target='textbox "Search"', selector="#q", value="smart watch", url=SITE,
                        duration_ms=300)
        run.record_step(action="click", target='button "Go"', selector="#go", url=SITE, duration_ms=250)
        for step in range(5):
            run.record_step(action="click", target=f'link "Result {step}"', selector=f"#r{step}",
                            url=f"{SITE}search?q=smart+watch", duration_ms=300)
        run.finish(success=index % 4 != 0, outcome=f"compared {index % 7 + 2} watches",
                   facts=[{"type": "quirk", "key": f"quirk-{index % 10}", "value": "a cookie banner covers the page"}])
    mem.lessons.record("Accept the cookie banner before using the search box", "site_specific", domain=DOMAIN)
    mem.lessons.record("Reviews load lazily: scroll to the reviews section before extracting", "site_specific",
                       domain=DOMAIN)


def fill_working(run: webmem.Run, rng: random.Random) -> None:
    """50 history entries, 5 extractions of 20 KB, navigation, scratch, context, a sitemap."""
    working = run.working
    working.start_task(GOAL, user_context={"currency": "EUR", "max_items": 20, "preferred_brand": "Garmin"})
    working.add_inferred_context("search_box", "#q", source="page analysis")
    working.add_inferred_context("pagination_type", "numbered", source="a pager at the bottom")
    working.init_sitemap_graph(SITE)
    working.add_sitemap_links(SITE, [{"url": f"/category/{name.lower()}", "text": name} for name in BRANDS],
                              link_type="main_nav")
    working.update_sitemap_visited(SITE, title="Example Shop", summary="Homepage with categories", section_count=6)
    for number in range(50):
        page = f"{SITE}search?q=smart+watch&page={number // 5 + 1}"
        if number % 5 == 0:
            working.record_navigation({"url": page, "title": f"Results page {number // 5 + 1}",
                                       "visible_elements_summary": "20 product cards, a pager, filters",
                                       "scroll_position": (0, 400 * (number % 5))})
        action = rng.choice([
            {"tool": "click", "parameters": {"selector": f"#result-{number}"}},
            {"tool": "scroll", "parameters": {"direction": "down", "by": 600}},
            {"tool": "extract_text", "parameters": {"selector": "#reviews"}},
        ])
        working.record_cycle(
            f"Cycle {number}: the reviews of model {number} matter for the comparison, so I open them and read "
            "the average rating and the most helpful review.",
            action,
            f"Opened model {number}: {rng.randint(1, 5)}.{rng.randint(0, 9)} stars from {rng.randint(3, 4000)} "
            "reviews; the top review praises the battery life and criticises the strap. " * 3,
            "failure" if number % 9 == 0 else "success",
            rng.choice(["low", "normal", "normal", "high"]),
            url=page, duration_ms=rng.randint(100, 2000),
        )
    for number in range(5):
        data = html_listing(rng, number + 1) if number % 2 == 0 else text_listing(rng, number + 1)
        working.add_extraction(f"listing page {number + 1}", data)
    working.set_scratch("compared", [f"model {n}" for n in range(12)])
    working.set_scratch("best_so_far", {"model": "Garmin Watch 3", "rating": 4.7})
    working.learn_pattern(DOMAIN, "Search for a product", "search", [
        {"tool": "fill", "selector": "#q", "value": "{search}"}, {"tool": "click", "selector": "#go"}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20, help="context builds per measurement (default 20)")
    parser.add_argument("--budget", type=int, default=8000, help="token budget of the context (default 8000)")
    parser.add_argument("--trajectories", type=int, default=40, help="earlier runs on the site (default 40)")
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        mem = webmem.Memory.open(Path(tmp) / "memory")
        fill_persistent(mem, args.trajectories)
        run = mem.start_run(goal=GOAL, start_url=SITE)
        fill_working(run, rng)
        extraction_kb = sum(len(str(data)) for data in run.working.context_store.extractions().values()) / 1000

        persistent_only = mem.get_run(run.id)  # never touches its working memory: persistent parts only

        def with_error(handle: webmem.Run) -> webmem.ContextPack:
            handle.on_error("click #buy-now", "Timeout 5000ms exceeded waiting for #buy-now")  # a last error too
            return handle.context(budget_tokens=args.budget)

        full_pack = with_error(run)
        baseline_pack = with_error(persistent_only)
        with_error(run)  # warm both (reference trajectory cached per origin, site tips recalled)
        with_error(persistent_only)
        baseline = median_ms(lambda: with_error(persistent_only), args.repeat)
        full = median_ms(lambda: with_error(run), args.repeat)
        working_only = median_ms(lambda: run.working.format_for_prompt(DOMAIN, budget_tokens=args.budget),
                                 args.repeat)
        fresh = iter(range(10_000))

        def after_new_extraction() -> webmem.ContextPack:
            run.working.add_extraction("listing page 5", text_listing(rng, 100 + next(fresh)))  # replaced, not added
            began = time.perf_counter()
            pack = with_error(run)
            cold_samples.append((time.perf_counter() - began) * 1000)
            return pack

        cold_samples: list[float] = []
        for _ in range(max(5, args.repeat // 5)):
            after_new_extraction()
        cold = statistics.median(cold_samples)
        mem.close()

    print(f"one turn, budget {args.budget} tokens, {args.repeat} repeats, {args.trajectories} earlier runs; "
          f"working memory: {len(run.working.short_term.entries)} history entries, "
          f"5 extractions ({extraction_kb:.0f} KB)")
    print(f"{'operation':<62}{'median ms':>10}{'x baseline':>12}")
    for name, value in (
        ("baseline: run.context() without working memory", baseline),
        ("run.context() with working memory (full turn)", full),
        ("working memory alone: format_for_prompt()", working_only),
        ("run.context() right after one extraction was replaced", cold),
    ):
        print(f"{name:<62}{value:>10.2f}{value / baseline:>12.2f}")
    for label, pack in (("full", full_pack), ("baseline", baseline_pack)):
        parts = ", ".join(f"{r.name}={r.status}" for r in pack.report if r.status != "empty")
        print(f"{label} pack: {pack.tokens} tokens; {parts}")


if __name__ == "__main__":
    main()

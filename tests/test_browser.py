"""Tests of webmem.browser and the demo site, against a real headless Chromium."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from webmem.agent.browser import element_identity, find_chromium
from webmem.core.errors import BrowserUnavailable, WebmemError
from webmem.demo.server import SITE_DIR, serve_site


@pytest.fixture(scope="module")
def base_url(site_url):
    return site_url


def _get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.headers.get_content_type(), response.read().decode()


# --- server -----------------------------------------------------------------


def test_server_serves_index(base_url):
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/")
    status, content_type, body = _get(base_url + "index.html")
    assert status == 200
    assert content_type == "text/html"
    assert "Gadget Corner" in body and 'id="search-box"' in body


def test_server_serves_directory_index_and_404(base_url):
    status, _, body = _get(base_url)
    assert status == 200 and "Gadget Corner" in body
    with pytest.raises(urllib.error.HTTPError) as info:
        _get(base_url + "no-such-page.html")
    assert info.value.code == 404


def test_site_has_no_external_resources():
    for page_file in SITE_DIR.glob("*.html"):
        text = page_file.read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, page_file.name


def test_server_custom_directory_and_shutdown(tmp_path):
    (tmp_path / "hello.html").write_text("<p>hi</p>", encoding="utf-8")
    with serve_site(tmp_path) as url:
        assert _get(url + "hello.html")[2] == "<p>hi</p>"
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "hello.html", timeout=2)


def test_server_rejects_missing_directory(tmp_path):
    with pytest.raises(NotADirectoryError):
        with serve_site(tmp_path / "missing"):
            pass


# --- browser helpers ----------------------------------------------------------


def test_element_identity():
    assert element_identity("button", "Search") == 'button "Search"'
    assert element_identity("link", 'Say "hi"') == 'link "Say \\"hi\\""'
    assert element_identity("textbox", "a\\b") == 'textbox "a\\\\b"'
    assert element_identity("heading", "") == 'heading ""'


def test_element_identity_matches_aria_snapshot(page):
    page.set_content('<button>Say "hi"</button><button>back\\slash</button>')
    snapshot = page.aria_snapshot()
    assert element_identity("button", 'Say "hi"') in snapshot
    assert element_identity("button", "back\\slash") in snapshot


def test_find_chromium_returns_executable_or_none():
    path = find_chromium()
    assert path is None or isinstance(path, str)


def test_browser_unavailable_is_webmem_error():
    assert issubclass(BrowserUnavailable, WebmemError)


# --- the demo site in Chromium --------------------------------------------------


def test_launch_opens_index(page, base_url):
    page.goto(base_url + "index.html")
    assert page.title() == "Gadget Corner"
    assert page.get_by_role("heading", name="Gadget Corner").is_visible()


def test_index_aria_snapshot(page, base_url):
    page.goto(base_url + "index.html")
    snapshot = page.aria_snapshot()
    assert 'textbox "Search products"' in snapshot
    assert 'button "Search"' in snapshot
    body_snapshot = page.locator("body").aria_snapshot()
    assert 'textbox "Search products"' in body_snapshot
    assert 'button "Search"' in body_snapshot


def test_search_reaches_results(page, base_url):
    page.goto(base_url + "index.html")
    page.get_by_role("textbox", name="Search products").fill("smart watch")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/results.html?q=smart+watch")
    assert page.locator("#query").text_content() == "smart watch"
    assert page.get_by_role("heading", level=1).text_content() == 'Results for "smart watch"'
    links = page.get_by_role("list", name="Products").get_by_role("link")
    assert links.count() == 3
    assert page.get_by_role("link", name="Pulse Smart Watch").get_attribute("href") == (
        "product.html?id=pulse"
    )


def test_product_page_reviews(page, base_url):
    page.goto(base_url + "product.html?id=pulse")
    assert page.get_by_role("heading", level=1).text_content() == "Pulse Smart Watch"
    reviews = page.get_by_role("region", name="Reviews")
    assert reviews.get_by_role("heading", name="Reviews").is_visible()
    assert reviews.get_by_role("listitem").count() == 3
    reviews.get_by_role("button", name="Read all 12 reviews").click()
    assert reviews.get_by_role("listitem").count() == 12


def test_login_password_field_and_sign_in(page, base_url):
    page.goto(base_url + "login.html")
    password = page.get_by_label("Password")
    assert password.get_attribute("type") == "password"
    assert password.get_attribute("id") == "password"
    page.get_by_label("Email").fill("ada@example.com")
    password.fill("hunter2")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/account.html")
    assert "hunter2" not in page.url
    assert page.get_by_role("heading", name="Welcome back").is_visible()


def test_a_select_takes_the_option_whose_label_matches_in_any_letter_case(page):
    from webmem.agent.actions import Action, Target
    from webmem.agent.execute import perform
    from webmem.agent.observation import observe

    page.set_content('<select aria-label="Genre"><option value="">---</option><option value="p">Poetry</option>'
                     '<option value="h">Science fiction</option></select>')
    action = Action(kind="select", target=Target(role="combobox", name="Genre"), value="science  FICTION")
    execution = perform(page, action, observe(page), timeout_ms=2000)
    assert execution.ok and page.eval_on_selector("select", "element => element.value") == "h"
    assert execution.verified is True  # the option chosen is the one asked for, in any letter case
    missing = perform(page, Action(kind="select", target=Target(role="combobox", name="Genre"), value="drama"),
                      observe(page), timeout_ms=500)
    assert not missing.ok and page.eval_on_selector("select", "element => element.value") == "h"

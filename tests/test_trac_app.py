"""The Trac harness of the Trac replay benchmark: tracd starts, a reset puts the tickets back where it reads
them and shows them, and it takes a form (Trac fails every POST when python-multipart's shim is imported)."""

from __future__ import annotations

import http.cookiejar
import urllib.parse
import urllib.request

from trac_app import Ticket, serve_trac


def test_serve_trac_resets_the_tickets_and_reads_them_back() -> None:
    first = [Ticket("Login timeout", owner="alice"), Ticket("Export to CSV", owner="bruno", priority="minor")]
    second = [Ticket("Memory leak", owner="chen", status="closed", resolution="fixed", type="task")]
    with serve_trac(first) as app:
        assert app.tickets() == list(enumerate(first, 1))
        app.reset(second)
        assert app.tickets() == [(1, second[0])]
        assert app.comments(1) == []
        with urllib.request.urlopen(app.ticket_url(1), timeout=10) as response:
            page = response.read().decode()
        assert "Memory leak" in page and "Login timeout" not in page
        cookies = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
        with browser.open(app.query_url, timeout=10) as response:
            assert "Export to CSV" not in response.read().decode()
        token = next(cookie.value for cookie in cookies if cookie.name == "trac_form_token")
        form = urllib.parse.urlencode({"__FORM_TOKEN": token, "0_type": "task", "update": "Update"}).encode()
        with browser.open(app.query_url, data=form, timeout=10) as response:  # answered by a redirect to the query
            assert "type=task" in response.url and "Memory leak" in response.read().decode()

"""Reading Playwright MCP's calls and answers as steps (answers as @playwright/mcp 0.0.83 writes them)."""

from __future__ import annotations

from webmem import Step
from webmem.mcp.recording import Answer, StepDraft, drafts, locators, snapshot_options, snapshot_refs
from webmem.service.tool_calls import locator, planned_call

JS_TYPE = """### Ran Playwright code
```js
await page.getByRole('textbox', { name: 'Name', exact: true }).fill('hello');
await page.getByRole('textbox', { name: 'Name', exact: true }).press('Enter');
```
### Page
- Page URL: http://127.0.0.1:8765/two.html
- Page Title: quote
"""
PYTHON_CLICK = """### Ran Playwright code
```python
page.get_by_role("button", name="Say \\"hi\\"").click()
```"""
SNAPSHOT = """### Page
- Page URL: http://127.0.0.1:8765/
### Snapshot
```yaml
- generic [active] [ref=e1]:
  - heading "Newsletter" [level=1] [ref=e2]
  - textbox "Email" [ref=e3]: a@b.com
  - checkbox "Weekly" [checked] [ref=f1e4]
  - paragraph
```"""


def test_a_typed_text_with_submit_is_a_fill_and_a_press_on_the_element() -> None:
    answer = Answer(JS_TYPE, is_error=False)
    assert answer.page_url == "http://127.0.0.1:8765/two.html" and answer.error is None
    assert drafts("browser_type", {"target": "e4", "text": "hello", "submit": True}, answer, {}) == [
        StepDraft("fill", 'textbox "Name"', 'role=textbox[name="Name"]', "hello"),
        StepDraft("press", 'textbox "Name"', 'role=textbox[name="Name"]', "Enter"),
    ]


def test_python_codegen_and_escaped_names() -> None:
    found = locators(Answer(PYTHON_CLICK, is_error=False).code)
    assert [(item.identity, item.selector) for item in found] == [
        ('button "Say \\"hi\\""', 'role=button[name="Say \\"hi\\""]')]


def test_other_locators_become_playwright_selectors_and_refs_give_the_identity() -> None:
    code = """```js
await page.getByLabel('Email').fill('x');
await page.getByPlaceholder('Search').fill('y');
await page.getByTestId('go').click();
await page.locator('#main > a').click();
await page.getByText('Next').click();
```"""
    assert [(item.identity, item.selector) for item in locators(code)] == [
        (None, 'internal:label="Email"i'), (None, 'internal:attr=[placeholder="Search"i]'),
        (None, 'internal:testid=[data-testid="go"s]'), (None, "#main > a"), ('text "Next"', 'text="Next"')]
    refs = snapshot_refs(SNAPSHOT)
    assert refs == {"e1": "generic", "e2": 'heading "Newsletter"', "e3": 'textbox "Email"', "f1e4": 'checkbox "Weekly"'}
    answer = Answer("### Ran Playwright code\n```js\nawait page.getByLabel('Email').fill('x');\n```", is_error=False)
    assert drafts("browser_type", {"target": "e3", "text": "x"}, answer, refs) == [
        StepDraft("fill", 'textbox "Email"', 'internal:label="Email"i', "x")]
    assert drafts("browser_click", {"target": "e1"}, Answer("", is_error=True), refs) == [StepDraft("click")]


def test_a_form_is_one_step_per_field_and_looking_is_no_step() -> None:
    answer = Answer("""### Ran Playwright code
```js
await page.getByRole('textbox', { name: 'Email' }).fill('a@b.com');
await page.getByRole('checkbox', { name: 'Weekly' }).setChecked(false);
await page.getByRole('combobox', { name: 'Country' }).selectOption('France');
```""", is_error=False)
    fields = [{"target": "e3", "name": "Email", "type": "textbox", "value": "a@b.com"},
              {"target": "e4", "name": "Weekly", "type": "checkbox", "value": "false"},
              {"target": "e5", "name": "Country", "type": "combobox", "value": "France"}]
    assert [(d.action, d.target, d.value) for d in drafts("browser_fill_form", {"fields": fields}, answer, {})] == [
        ("fill", 'textbox "Email"', "a@b.com"), ("uncheck", 'checkbox "Weekly"', None),
        ("select", 'combobox "Country"', "France")]
    for looking in ("browser_snapshot", "browser_take_screenshot", "browser_console_messages", "browser_find"):
        assert drafts(looking, {}, Answer(SNAPSHOT, is_error=False), {}) == []
    assert drafts("browser_wait_for", {"time": 2}, Answer("", is_error=False), {}) == [
        StepDraft("wait", duration_ms=2000)]
    assert drafts("browser_fill_form", {"fields": "nonsense"}, answer, {}) == []


def test_an_error_answer_gives_the_error_text() -> None:
    answer = Answer('### Error\nError: "role=button[name="Nope"]" does not match any elements.', is_error=True)
    assert answer.error == 'Error: "role=button[name="Nope"]" does not match any elements.'


def test_planned_calls_find_elements_as_playwright_mcp_accepts_them() -> None:
    second = Step(action="click", target='button "Go"', target_index=2, target_count=2)
    assert locator(second) == 'getByRole("button", { name: "Go", exact: true }).nth(1)'
    assert locator(Step(action="click", target='text "Next"')) == 'getByText("Next", { exact: true })'
    assert locator(Step(action="click", target='button "Say \\"hi\\""')) == \
        'getByRole("button", { name: "Say \\"hi\\"", exact: true })'
    call = planned_call(3, Step(action="fill", target='textbox "Password"', value="{password}"))
    assert call.tool == "browser_type" and call.arguments["text"] == "{password}" and "secret" in (call.note or "")
    assert planned_call(1, Step(action="click", selector="#go")).note and \
        planned_call(1, Step(action="click", selector="#go")).arguments["target"] == "#go"
    assert planned_call(1, Step(action="scroll")).tool is None
    assert planned_call(1, Step(action="check", target='checkbox "Weekly"')).arguments == {
        "fields": [{"name": 'checkbox "Weekly"', "target": 'getByRole("checkbox", { name: "Weekly", exact: true })',
                    "type": "checkbox", "value": "true"}]}


def test_a_selects_options_are_read_from_the_snapshot_by_its_identity() -> None:
    snapshot = """### Snapshot
```yaml
- generic [active] [ref=e1]:
  - combobox "Priority" [ref=e5]:
    - option "Low"
    - option "Normal" [selected]
    - option "Say \\"hi\\""
  - button "Create ticket" [ref=e6]
  - listbox [ref=e7]:
    - option "Unnamed"
```"""
    assert snapshot_options(snapshot) == {'combobox "Priority"': ("Low", "Normal", 'Say "hi"')}


def test_a_locator_that_names_an_element_by_part_of_its_name_records_its_whole_name() -> None:
    # Playwright MCP writes the shortest part of a name that is unique on the page (a substring match, no
    # exact: true): on another page that part is another element's name, or none; the snapshot has the whole
    refs = snapshot_refs("""```yaml
- link "Show milestones and their progress" [ref=e7]
- link "Show" [ref=e8]
- textbox "You may use WikiFormatting here." [ref=e9]
```""")
    code = """### Ran Playwright code
```js
await page.getByRole('link', { name: 'Show milestones and their' }).click();
```"""
    assert drafts("browser_click", {"target": "e7"}, Answer(code, is_error=False), refs) == [
        StepDraft("click", 'link "Show milestones and their progress"',
                  'role=link[name="Show milestones and their progress"s]')]
    typed = """### Ran Playwright code
```js
await page.getByRole('textbox', { name: 'You may use WikiFormatting' }).fill('Good catch');
```"""
    assert drafts("browser_type", {"target": "e9", "text": "Good catch"}, Answer(typed, is_error=False), refs)[0] \
        .target == 'textbox "You may use WikiFormatting here."'
    exact = """### Ran Playwright code
```js
await page.getByRole('link', { name: 'Show', exact: true }).click();
```"""
    assert drafts("browser_click", {"target": "e8"}, Answer(exact, is_error=False), refs) == [
        StepDraft("click", 'link "Show"', 'role=link[name="Show"]')]


def test_an_answer_gives_the_fingerprint_of_the_page_it_shows_and_none_for_a_snapshot_in_a_file() -> None:
    shown = Answer(SNAPSHOT, is_error=False).fingerprint
    assert shown is not None and shown == Answer(SNAPSHOT.replace("a@b.com", "c@d.org"), is_error=False).fingerprint
    added = SNAPSHOT.replace("  - paragraph", '  - combobox [ref=e5]:\n    - option "major"\n  - paragraph')
    assert Answer(added, is_error=False).fingerprint not in (None, shown)  # a field added: another page
    linked = "### Page\n- Page URL: http://127.0.0.1:8765/\n### Snapshot\n- [Snapshot](.playwright-mcp/page-1.yml)\n"
    assert Answer(linked, is_error=False).fingerprint is None

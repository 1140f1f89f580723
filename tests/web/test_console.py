"""The web console in headless Chromium (Debian's package, driven by Playwright through its
executable path; no browser is downloaded): upload by drag and drop and by file picker,
watch the jobs, search, ask, click a citation and see the cited passage highlighted (in
text for Markdown, on the PDF.js-rendered page for a PDF). Plus the security basics: the
key never in a URL, text never rendered as HTML, writes without the CSRF token refused.

Screenshots of each step are saved under .artifacts/screenshots/ (ignored by git)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.settings import ApiKey, ApiSettings, MonitoringSettings, Settings
from ragline.api import create_app
from tests.served import serving

playwright_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / ".artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
KEY = "console-writer-key-7f3a"
PDF = ROOT / "examples" / "en-nics-background-checks-2015-11.pdf"
PLAN = (
    "# Finance plan\n\n## Budget\n\nThe zephyrine merger budget is 42 million yuan.\n"
    "It was approved by the board in March.\n"
)
HOSTILE_TITLE = '<img src=x onerror="window.__xss=1">'


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("console")
    settings = Settings(
        data_dir=root / "data",
        api=ApiSettings(
            keys=[ApiKey(key=KEY, user="kim", tags=["finance"], can_write=True)],
        ),
        monitoring=MonitoringSettings(interval_s=3600),
    )
    with serving(create_app(settings)) as (_, url):
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed: deploy/local/services up chromium")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def _wait_state(page: Any, file_name: str, state: str, timeout_ms: int = 90_000) -> None:
    row = page.locator("#jobs tbody tr", has_text=file_name)
    playwright_api.expect(row.locator("td").nth(3)).to_have_text(state, timeout=timeout_ms)


def test_upload_search_ask_and_land_on_the_highlighted_passage(base_url: str, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    expect = playwright_api.expect

    page.goto(base_url + "/")
    page.fill("#api-key", KEY)
    page.click("#key-use")
    expect(page.locator("#whoami")).to_contain_text("signed in as kim")
    assert page.input_value("#api-key") == ""  # not left in the form

    # Upload: a Markdown file dropped on the drop zone, with an ACL tag ...
    page.click("#tabs button[data-tab=upload]")
    page.fill("#acl-tags", "finance")
    page.fill("#upload-title", HOSTILE_TITLE)
    transfer = page.evaluate_handle(
        """(text) => { const dt = new DataTransfer();
           dt.items.add(new File([text], "plan.md", {type: "text/markdown"})); return dt; }""",
        PLAN,
    )
    page.dispatch_event("#drop-zone", "drop", {"dataTransfer": transfer})
    # ... and a PDF through the file picker, public.
    page.fill("#acl-tags", "")
    page.fill("#upload-title", "")
    page.set_input_files("#file-input", str(PDF))
    _wait_state(page, "plan.md", "searchable")
    _wait_state(page, PDF.name, "searchable")
    _shot(page, "1-upload-jobs")

    # Searchable, then answered with inline citations.
    page.click("#tabs button[data-tab=ask]")
    page.fill("#question", "zephyrine merger budget")
    page.click("#btn-search")
    expect(page.locator("#hits li").first).to_contain_text("42 million yuan")
    page.fill("#question", "What is the zephyrine merger budget?")
    page.click("#btn-ask")
    cite = page.locator("#answer-text button.cite").first
    expect(cite).to_be_visible()
    expect(page.locator("#answer-text")).to_contain_text("42 million yuan")
    _shot(page, "2-answer")

    # Click the citation: the viewer shows that page with the cited lines marked.
    cite.click()
    expect(page.locator("#tab-viewer")).to_be_visible()
    marked = page.locator("#passages .passage.cited mark.hl")
    expect(marked.first).to_be_visible()
    expect(page.locator("#passages .passage.cited")).to_contain_text("42 million yuan")
    assert marked.first.bounding_box() is not None
    expect(page.locator("#viewer-where")).to_contain_text("cited lines")
    expect(page.locator("#pdf-wrap")).to_be_hidden()  # Markdown: text, no PDF canvas
    _shot(page, "3-cited-passage-markdown")

    # A PDF citation lands on the PDF.js-rendered page with the passage highlighted.
    page.click("#tabs button[data-tab=ask]")
    page.fill("#question", "How many handgun background checks were there in Kentucky?")
    page.click("#btn-ask")
    expect(page.locator("#answer-text")).to_contain_text("Kentucky", timeout=30_000)
    pdf_cite = page.locator("#answer-text button.cite").first
    expect(pdf_cite).to_be_visible()
    pdf_cite.click()
    expect(page.locator("#pdf-wrap")).to_be_visible(timeout=30_000)
    expect(page.locator("#pdf-highlights .pdf-hl").first).to_be_visible(timeout=30_000)
    assert int(page.get_attribute("#pdf-wrap", "data-highlights") or 0) > 0
    canvas = page.locator("#pdf-canvas").bounding_box()
    assert canvas is not None and canvas["width"] > 300
    highlight = page.locator("#pdf-highlights .pdf-hl").first.bounding_box()
    assert highlight is not None
    inside = (
        canvas["x"] <= highlight["x"] <= canvas["x"] + canvas["width"]
        and canvas["y"] <= highlight["y"] <= canvas["y"] + canvas["height"]
    )
    assert inside, (canvas, highlight)
    _shot(page, "4-cited-passage-pdf")
    page.locator("#pdf-wrap").screenshot(path=str(SHOTS / "4b-pdf-page-highlighted.png"))

    # Documents with versions and lineage; the hostile title is shown as text.
    page.click("#tabs button[data-tab=documents]")
    expect(page.locator("#docs tbody tr")).to_have_count(2)
    expect(page.locator("#docs tbody")).to_contain_text(HOSTILE_TITLE)
    assert page.locator("#docs img").count() == 0
    page.locator("#docs tbody tr", has_text="plan.md").locator("button").click()
    expect(page.locator("#lineage")).to_contain_text("parser")
    expect(page.locator("#lineage")).to_contain_text("uploaded by kim")
    _shot(page, "5-documents-lineage")

    page.click("#tabs button[data-tab=alerts]")
    expect(page.locator("#switches li")).to_have_count(2)
    _shot(page, "6-alerts")
    assert page.evaluate("window.__xss") is None
    # This server has /v1/gaps (issue 9), and this key may read it: the tab is offered.
    page.click("#tab-gaps-button")
    expect(page.locator("#tab-gaps")).to_be_visible()
    _shot(page, "7-knowledge-gaps")

    # A write without the CSRF token is refused, even with the key.
    status = page.evaluate(
        """async (key) => (await fetch("/v1/ops/sync", {method: "POST",
            headers: {"X-API-Key": key}})).status""",
        KEY,
    )
    assert status == 403
    assert not [u for u in urls if KEY in u], "the API key appeared in a URL"
    assert errors == []
    context.close()

"""The HTML report in a real browser: headless Chromium driven by Playwright. It loads without a
console error or a request off the page, a table cell holds a result file's number, and pressing
play advances the animation.

Opt-in (`make test-browser`, or `pytest -m browser`): it needs `pip install 'dfst[browser]'` and a
Chromium, from the system's packages (`apt-get install chromium` on Debian and Ubuntu) or named by
DFST_CHROMIUM; without them the tests are skipped and say why (docs/report.md).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dfst.studies.html import build_report

pytestmark = pytest.mark.browser
RESULTS = Path(__file__).resolve().parents[1] / "results"


def chromium_binary() -> str | None:
    """DFST_CHROMIUM, else the system's Chromium (None: Playwright's own download, if any)."""
    named = os.environ.get("DFST_CHROMIUM")
    if named:
        return named
    return next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs pip install 'dfst[browser]'")
    with sync_api.sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=chromium_binary(), args=["--no-sandbox"])
        except sync_api.Error as exc:
            pytest.skip(f"no Chromium to drive (apt-get install chromium, or DFST_CHROMIUM=PATH): "
                        f"{str(exc).splitlines()[0]}")
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The report of the repository's results, as on a fresh clone (no runs)."""
    out = tmp_path_factory.mktemp("browser") / "report"
    return build_report(RESULTS, out.parent / "no-runs", out)[0]


@pytest.fixture
def page(browser, site):
    """The report open in a new page; `page.problems` collects console errors and warnings, uncaught
    exceptions, and any request that is not for the file itself or a data URI."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    tab.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning")
           else None)
    tab.on("pageerror", lambda exc: problems.append(f"uncaught: {exc}"))
    tab.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(r.url))
    tab.goto(site.as_uri())
    tab.wait_for_load_state("load")
    tab.problems = problems
    yield tab
    tab.close()


def test_the_page_loads_without_errors(page):
    assert page.title() == "dfst report"
    assert page.locator("table#table-comparison tbody tr").count() > 0
    assert page.problems == []


def test_a_table_cell_holds_the_result_files_number(page):
    files = [json.loads(p.read_text()) for p in RESULTS.glob("dfst/add2-s*.json")]
    row = page.locator('table#table-comparison tr[data-system="DFST"][data-task="add2"]')
    assert row.locator('td[data-column="seeds"]').inner_text() == str(len(files))
    best = max(f["robust_lg"] for f in files)
    assert row.locator('td[data-column="robust LG"]').inner_text().startswith(f"{best:,} (")


def test_play_advances_the_animation(page):
    anim = page.locator("#anim-mult2")
    anim.scroll_into_view_if_needed()
    slider, label = anim.locator("input.slider"), anim.locator(".step")
    assert slider.input_value() == "0" and label.inner_text().startswith("step 0 ")
    anim.locator("button.play").click()
    page.wait_for_function("el => Number(el.value) >= 3", arg=slider.element_handle(), timeout=10_000)
    assert not label.inner_text().startswith("step 0 ")
    anim.locator("button.play").click()  # pause: the step stays
    held = slider.input_value()
    page.wait_for_timeout(600)
    assert slider.input_value() == held and anim.locator("button.play").inner_text() == "play"
    assert page.problems == []

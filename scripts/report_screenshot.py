"""Screenshots of a `dfst report --html` site in headless Chromium, for docs/img/ (docs/report.md).

Usage: python scripts/report_screenshot.py SITE_DIR OUT_PREFIX [TASK]
writes OUT_PREFIX.png (the top of the page: the tables) and OUT_PREFIX-TASK.png (the task's section,
its animation stopped a few steps in, its automata unfolded). Needs `pip install 'dfst[browser]'` and
Chromium (apt-get install chromium, or DFST_CHROMIUM=PATH), as `make test-browser` does.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright


def main(site: Path, prefix: str, task: str = "mult2") -> None:
    binary = os.environ.get("DFST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto((site / "index.html").resolve().as_uri())
        page.screenshot(path=f"{prefix}.png")
        page.add_style_tag(content="nav { position: static; }")  # not drawn over the section's picture
        section = page.locator(f"#task-{task}")
        section.locator("details").evaluate("fold => { fold.open = true; }")
        slider = section.locator("input.slider")
        slider.evaluate("el => { el.value = String(Math.min(12, Number(el.max))); "
                        "el.dispatchEvent(new Event('input')); }")
        section.screenshot(path=f"{prefix}-{task}.png")
        browser.close()
    print(f"wrote {prefix}.png and {prefix}-{task}.png")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(Path(sys.argv[1]), *sys.argv[2:])

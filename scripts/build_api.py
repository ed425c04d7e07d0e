"""Build the HTML API reference of dfst from its docstrings with pdoc (`make api`).

    python scripts/build_api.py [OUTPUT_DIR]      # default build/api; open OUTPUT_DIR/index.html

Every warning pdoc raises (an annotation it cannot resolve, a module that fails to import, a broken
docstring) fails the build: the reference documents the whole package or it is not built. Needs the
`docs` extra (`pip install -e '.[docs]'`); nothing is fetched from the network.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
import warnings
from pathlib import Path

DOCFORMAT = "markdown"  # dfst's docstrings are Markdown: `code`, **bold**, indented examples


def build_api(output: Path) -> list[str]:
    """Render the reference into `output` (replaced); return the warnings, one line each."""
    import pdoc
    import pdoc.render

    if output.exists():
        shutil.rmtree(output)
    _build_font_cache()
    pdoc.render.configure(docformat=DOCFORMAT, footer_text="dfst API reference")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc("dfst", output_directory=output)
    return [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught]


def _build_font_cache() -> None:
    """Import matplotlib's font manager before pdoc does: on a fresh machine its first import runs
    fc-list to build the font cache, which pdoc suppresses with a warning (and so failed the build)."""
    with contextlib.suppress(ImportError):
        import matplotlib.font_manager  # noqa: F401


def main(argv: list[str]) -> int:
    output = Path(argv[0] if argv else "build/api")
    start = time.perf_counter()
    problems = build_api(output)
    for line in problems:
        print(f"api: {line}", file=sys.stderr)
    if problems:
        print(f"api: {len(problems)} warning(s); the reference is not complete", file=sys.stderr)
        return 1
    print(f"api: wrote {output}/index.html in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

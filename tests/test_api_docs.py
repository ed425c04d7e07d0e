"""`make api`: the API reference builds from the docstrings with no pdoc warning, and documents the
one agent type. Needs the `docs` extra, which `make test` installs (pdoc: about 1 MB, seconds)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "build_api.py"


def test_api_reference_builds_without_warnings_and_documents_transducer(tmp_path):
    out = tmp_path / "api"
    done = subprocess.run([sys.executable, str(SCRIPT), str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stderr == ""
    assert (out / "index.html").is_file()
    page = (out / "dfst" / "automata.html").read_text()
    assert 'id="Transducer"' in page
    assert "One transducer type for every agent" in page  # the module docstring is rendered

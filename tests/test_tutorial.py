"""examples/tutorial.ipynb runs top to bottom (its code cells in order, one namespace, an empty
directory, no Jupyter needed) and shows what its text says: parity learned from 20 PTOs, the raw
weights robust far past the training length, the automaton read off certified for every length."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "tutorial.ipynb"


def code_cells() -> list[str]:
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4 and all("outputs" not in c or c["outputs"] == [] for c in nb["cells"])
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_the_tutorial_runs_and_shows_what_it_says(tmp_path, monkeypatch, one_torch_thread):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for number, source in enumerate(code_cells()):
            exec(compile(source, f"tutorial.ipynb cell {number}", "exec"), namespace)
    text = printed.getvalue()
    assert "answer: 0 expected: 0" in text
    assert len(namespace["data"].operands) == 20
    reports = namespace["reports"]
    assert reports["model"]["robust_max_digits"] == 10_000  # fine-tuned: every length tried
    assert reports["trained"]["robust_max_digits"] < 10_000
    assert namespace["found"].agent.d == namespace["task"].agent.d == 3
    # the raw weights' proof is bounded (at least 10^4 symbols) or, where their float32 states close, total
    proof = namespace["proof"]
    assert proof.verdict == "CERTIFIED" and (proof.max_digits is None or proof.max_digits >= 10_000)
    assert namespace["whole"].verdict == "CERTIFIED" and namespace["whole"].max_digits is None
    assert "automaton read off: CERTIFIED for every length" in text
    assert (tmp_path / "parity2.png").stat().st_size > 10_000

"""examples/tutorial.ipynb runs top to bottom (its code cells in order, one namespace, an empty
directory, no Jupyter needed; `make tutorial` runs them in a Jupyter kernel) and shows what its
text says: parity learned from 20 PTOs, the raw weights robust far past the training length, the
automaton read off certified for every length."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

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


def test_make_tutorial_installs_the_notebook_extra_and_executes_the_notebook_out_of_tree():
    """`make tutorial` (the same cells in a Jupyter kernel) installs the extra that holds nbclient and
    ipykernel and runs scripts/run_tutorial.py into build/, never next to the tracked notebook."""
    import tomllib

    root = NOTEBOOK.parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {req.split(">")[0] for req in extras["notebook"]} == {"nbclient", "ipykernel"}
    target = (root / "Makefile").read_text().split("\ntutorial:", 1)[1].split("\n\n", 1)[0]
    assert "'.[notebook]'" in target and "scripts/run_tutorial.py build/tutorial" in target


def tutorial_script():
    import importlib.util

    path = NOTEBOOK.parents[1] / "scripts" / "run_tutorial.py"
    spec = importlib.util.spec_from_file_location("run_tutorial", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_run_tutorial_refuses_extra_arguments_and_names_a_missing_extra(capsys, monkeypatch):
    import sys

    script = tutorial_script()
    assert script.main(["a", "b"]) == 2
    monkeypatch.setitem(sys.modules, "nbclient", None)  # as if the extra were not installed
    assert script.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("run_tutorial: needs the notebook extra") and len(err) == 2


def test_run_tutorial_replaces_only_a_copy_it_wrote(tmp_path):
    """WORK_DIR/tutorial.ipynb of the user's (or a FIFO, or a link) is refused before any cell runs;
    a copy an earlier run wrote (its metadata carries the script's mark) may be replaced."""
    import json
    import os

    from dfst.errors import DfstError

    script = tutorial_script()
    target = tmp_path / "tutorial.ipynb"
    script.refuse_foreign(target)  # nothing there
    target.write_text(json.dumps({"metadata": {script.MARK: True}, "cells": []}))
    script.refuse_foreign(target)
    mine = json.dumps({"metadata": {}, "cells": ["the user's work"]})
    target.write_text(mine)
    with pytest.raises(DfstError, match="left alone"):
        script.refuse_foreign(target)
    assert target.read_text() == mine
    fifo = tmp_path / "fifo" / "tutorial.ipynb"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(DfstError, match="FIFO"):
        script.refuse_foreign(fifo)

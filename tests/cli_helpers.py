"""Shared by the CLI tests: run `dfst` in-process and check its one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dfst.cli import main

# `dfst train add2` without its recipe's fine-tuning phase (minutes of CPU), for tests of everything else
TRAIN_ADD2 = ("train", "add2", "--no-finetune")


def run(capsys, *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str | Path, expect: int | None = None):
    """The command's JSON output; `expect` is the exit code: 0 the check holds, 1 it does not. By
    default 0, and for `dfst train` the code its summary's agreement gives (`training_code`)."""
    code, out, err = run(capsys, *argv, "--json")
    found = json.loads(out)
    if expect is None:
        expect = training_code(found) if "train" in map(str, argv) else 0
    assert code == expect, err
    return found


def training_code(summary: object) -> int:
    """`dfst train`'s exit code for the summary it wrote: 1 where the automaton read off did not
    reproduce the longer validation PTOs (the traces were not enough), else 0."""
    found = summary.get("agreement") if isinstance(summary, dict) else None
    return 1 if found is not None and found["agreed"] is False else 0


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dfst: error:"), err
    for fragment in fragments:
        assert fragment in lines[0]


def run_verdict_json(capsys, *argv: str | Path) -> dict:
    """The JSON of a command whose exit code is its verdict: 0 if `certified`, 1 if not."""
    code, out, err = run(capsys, *argv, "--json")
    report = json.loads(out)
    assert code == (0 if report["certified"] else 1), err
    return report


def hold_in_subprocess(statement: str, path: Path) -> subprocess.Popen:
    """Another process that runs `statement` (it takes a lock on `path`, given as sys.argv[1]) and then
    sleeps until killed; returned once it says it holds the lock."""
    code = f"import sys, time\n{statement}\nprint('held', flush=True)\ntime.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc

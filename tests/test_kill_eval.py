"""kill -9 during `dfst eval`: the report in the checkpoint is the old one or the new one, never half.

The kill is placed where it hurts most, by a subprocess that patches `os.replace` (the rename that
publishes a written file) to SIGKILL itself just before, or just after, publishing eval.json; and
once at a random moment of a longer evaluation.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import run_json

KILLER = """
import os, signal, sys
import dfst.io.outputs as outputs
from dfst.cli import main
real, when = outputs.os.replace, sys.argv[1]
def replace(src, dst):
    if str(dst).endswith("eval.json") and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst)
    if str(dst).endswith("eval.json") and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)
outputs.os.replace = replace
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture
def evaluated(capsys, tmp_path) -> Path:
    out = tmp_path / "expert"
    run_json(capsys, "compile", "add2", "--out", out)
    run_json(capsys, "eval", out, "--digits", "3", "--random", "1")
    return out


def _eval_in_subprocess(when: str, checkpoint: Path, *digits: str) -> int:
    argv = ["eval", str(checkpoint), "--digits", ",".join(digits), "--random", "1"]
    return subprocess.run([sys.executable, "-c", KILLER, when, *argv], capture_output=True,
                          timeout=120).returncode


def _report(checkpoint: Path) -> dict:
    return json.loads((checkpoint / "eval.json").read_text())  # fails on a half-written file


def test_kill_before_publishing_keeps_the_old_report(evaluated):
    before = (evaluated / "eval.json").read_bytes()
    assert _eval_in_subprocess("before", evaluated, "7") == -signal.SIGKILL
    assert (evaluated / "eval.json").read_bytes() == before
    assert [lv["digits"] for lv in _report(evaluated)["levels"]] == [3]


def test_kill_after_publishing_leaves_the_new_report(evaluated):
    assert _eval_in_subprocess("after", evaluated, "7") == -signal.SIGKILL
    assert [lv["digits"] for lv in _report(evaluated)["levels"]] == [7]


def test_kill_at_a_random_moment_then_rerun(evaluated):
    argv = [sys.executable, "-c", "import sys; from dfst.cli import main; sys.exit(main(sys.argv[1:]))",
            "eval", str(evaluated), "--digits", "3,1000,3000", "--random", "2"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert [lv["digits"] for lv in _report(evaluated)["levels"]] in ([3], [3, 1000, 3000])
    assert _eval_in_subprocess("none", evaluated, "5") == 0  # a rerun clears what the kill left
    assert [lv["digits"] for lv in _report(evaluated)["levels"]] == [5]
    assert not list(evaluated.glob(".*.tmp"))

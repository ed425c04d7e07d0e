"""No internal errors (issue 54, item 3), by class rather than by instance: random values for the
options of the commands (numbers past every range, path names past the system's limits), random
replies from a scored model, and tasks files that exit or raise, each end in a result or in one short
error line with exit code 2, never a traceback or an "internal error".

The work an accepted option would start (training, fine-tuning) is replaced by a marker: these tests
check what answers the input, not the work."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_helpers import assert_one_line_error, run
from dfst.cli.app import MAX_LINE

FEW = settings(max_examples=40, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
NUMBERS = ["-1", "0", "1", "1e308", "-1e308", "inf", "-inf", "nan", "9" * 30, str(2**63), "-" + "9" * 30,
           "1_000", "0x10", "", "abc", "1,2", "1e-320"]
LONG_NAME = "n" * 300  # over NAME_MAX
LONG_PATH = "/".join(["p" * 200] * 25)  # over PATH_MAX


class WorkStarted(Exception):
    """Raised where an accepted command would start its real work (main reports it as its own)."""


def path_values(tmp: Path) -> list[str]:
    return [str(tmp / LONG_NAME), str(tmp / LONG_PATH), str(tmp / "new"), str(tmp), "/dev/null", "/",
            str(tmp / "a\nb"), str(tmp / ("é" * 200)), str(tmp / "missing" / "deeper"), "-", ""]


# (argv before the option, option, what its values are); each command's other arguments make it fast
OPTIONS = [
    (("solve", "add2", "101", "1"), opt, "number") for opt in ("--seed", "--delay", "--max-memory")
] + [
    (("solve", "add2", "101", "1"), "--agent", "path"),
    (("agent", "add2"), "--out", "path"),
    (("compile", "add2"), "--out", "path"),
    (("data", "add2", "--samples", "2", "--max-digits", "3"), "--out", "path"),
    (("data", "add2", "--samples", "2", "--out", "{tmp}/d.zip"), "--max-digits", "number"),
    (("data", "add2", "--samples", "2", "--out", "{tmp}/d.zip"), "--seed", "number"),
    (("train", "add2", "--iters", "5"), "--out", "path"),
    (("train", "add2", "--out", "{tmp}/run"), "--lr", "number"),
    (("train", "add2", "--out", "{tmp}/run"), "--noise", "number"),
    (("train", "add2", "--out", "{tmp}/run"), "--iters", "number"),
    (("train", "add2", "--out", "{tmp}/run"), "--d", "number"),
    (("train", "add2", "--out", "{tmp}/run"), "--data", "path"),
    (("finetune", "{tmp}/norun", "--out", "{tmp}/ft"), "--lr", "number"),
    (("finetune", "{tmp}/norun", "--out", "{tmp}/ft"), "--margin", "number"),
    (("finetune", "{tmp}/norun"), "--out", "path"),
    (("eval", "{tmp}/nomodel"), "--digits", "number"),
    (("eval", "{tmp}/nomodel"), "--time-budget", "number"),
    (("eval", "{tmp}/nomodel"), "--trained-on", "path"),
    (("score", "add10", "--cmd", "false", "--digits", "2"), "--timeout", "number"),
    (("score", "add10", "--cmd", "false", "--digits", "2"), "--max-reply", "number"),
    (("score", "add10", "--digits", "2"), "--answers", "path"),
    (("score", "add10", "--digits", "2"), "--instances-out", "path"),
    (("report-runs",), "", "path"),
    (("table",), "--results", "path"),
    (("report", "--html"), "--runs", "path"),
    (("show",), "", "path"),
    ((), "--tasks-file", "path"),
]


@pytest.fixture
def no_work(monkeypatch):
    def started(*args, **kwargs):
        raise WorkStarted
    for target in ("dfst.train.job.run_training", "dfst.train.finetune.finetune"):
        monkeypatch.setattr(target, started)


@FEW
@given(choice=st.sampled_from(OPTIONS), pick=st.integers(0, 10**6), noise=st.text(max_size=40))
def test_every_option_value_ends_in_a_result_or_one_short_error(capsys, tmp_path, monkeypatch, no_work,
                                                               choice, pick, noise):
    monkeypatch.chdir(tmp_path)  # a random relative path is written here, never into the checkout
    before, option, kind = choice
    values = (path_values(tmp_path) if kind == "path" else NUMBERS) + [noise]
    value = values[pick % len(values)]
    argv = [a.replace("{tmp}", str(tmp_path)) for a in before] + ([option] if option else []) + [value]
    if not before:  # the global option comes before a command
        argv += ["tasks"]
    code, _, err = run(capsys, *argv)
    if "internal error: WorkStarted" in err:
        return  # accepted: the work it starts is not what this test checks
    assert code in (0, 1, 2), (argv, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    assert all(len(line) <= MAX_LINE for line in err.splitlines()), (argv, err)
    if code == 2:
        assert err.strip().splitlines()[-1].startswith("dfst: error: "), (argv, err)


def test_a_path_over_the_systems_limits_is_one_line_naming_the_limit(capsys, tmp_path):
    for path, fragment in ((tmp_path / LONG_NAME, "255 bytes per name"),
                           (tmp_path / LONG_PATH, "4,096 bytes")):
        for argv in (("compile", "add2", "--out", path), ("data", "add2", "--samples", "2", "--out", path),
                     ("agent", "add2", "--out", path)):
            code, _, err = run(capsys, *argv)
            assert_one_line_error(code, err, "File name too long", fragment)
            assert len(err.strip()) <= MAX_LINE
    assert list(tmp_path.iterdir()) == []  # nothing half-made


def test_no_command_prints_the_usage_and_exits_2(capsys):
    code, out, err = run(capsys)
    assert code == 2 and "Usage: dfst" in out + err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("dfst: error: no command given")


def test_error_lines_stay_short_whatever_they_quote():
    from dfst.cli.app import listing, one_line

    for text in ("x" * 10**6, "word " * 10**5, "a b " + "/" * 5000 + " c", "\n".join(["line"] * 1000)):
        line = one_line(text)
        assert len(line) <= MAX_LINE and "\n" not in line
    assert one_line("short message") == "short message"
    assert listing([f"q{i}" for i in range(200_000)]).endswith("... and 199,990 more")


def test_an_agent_with_200000_unreachable_states_is_noted_in_one_short_line(capsys, tmp_path):
    from dfst.tasks import TASKS

    agent = TASKS["add2"].agent.to_dict()
    extra = [f"u{i}" for i in range(200_000)]
    agent["states"] += extra
    agent["rules"] += [{"state": q, "read": "0", "next": q, "write": "0", "move": "R"} for q in extra]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(agent))
    code, _, err = run(capsys, "solve", "add2", "101", "1", "--agent", path)
    assert code == 0 and "and 199,990 more" in err
    assert all(len(line) <= MAX_LINE for line in err.splitlines())


# --- a scored model's replies -------------------------------------------------------------------

REPLIES = st.one_of(
    st.integers(1, 200_000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 200_000).map(lambda n: '{"id": 0, "answer": ' + "[" * n + "]" * n + "}"),
    st.integers(1, 200_000).map(lambda n: '{"id": ' + "{\"a\":" * n + "1" + "}" * n + ', "answer": "1"}'),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                 lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                             max_size=4),
                 max_leaves=20).map(lambda v: json.dumps({"id": 0, "answer": v})),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.just('{"id": 0, "answer": NaN}'),
    st.just('{"id": ' + "9" * 5000 + ', "answer": "1"}'),
)


@FEW
@given(reply=REPLIES)
def test_any_reply_is_a_verdict_or_one_short_error(capsys, tmp_path, reply):
    """The reply goes through an answers file (no process to start): the same parser as a command's."""
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(reply.encode("utf-8", "surrogateescape") + b"\n")
    code, _, err = run(capsys, "score", "add10", "--answers", answers, "--digits", "1", "--random", "1",
                       "--max-reply", "2M")
    assert code in (1, 2) and "internal error" not in err and "Traceback" not in err, err
    assert all(len(line) <= MAX_LINE for line in err.splitlines()), err


def test_a_command_replying_100000_levels_deep_is_one_line(capsys, tmp_path):
    script = tmp_path / "deep.py"
    script.write_text("import sys\nfor line in sys.stdin:\n"
                      "    print('[' * 100000 + ']' * 100000, flush=True)\n")
    code, _, err = run(capsys, "score", "add10", "--cmd", f"{shlex.quote(sys.executable)} {script}",
                       "--digits", "1", "--random", "1", "--max-reply", "1M")
    assert_one_line_error(code, err, "nests deeper than")


# --- tasks files ----------------------------------------------------------------------------------

EXITS = ["import sys; sys.exit(3)", "raise SystemExit", "raise KeyboardInterrupt", "raise GeneratorExit",
         "raise BaseException('x')", "raise RecursionError", "pass",
         "TASKS = 5", "TASKS = [object()]", "def f(): f()\nf()"]


@pytest.mark.usefixtures("task_registry")
@pytest.mark.parametrize("body", EXITS)
def test_a_tasks_file_that_exits_or_raises_is_one_line(capsys, tmp_path, body):
    path = tmp_path / "mytasks.py"
    path.write_text(body + "\n")
    code, _, err = run(capsys, "--tasks-file", path, "tasks")
    assert_one_line_error(code, err, *([] if "object()" in body else [str(path)]))


@pytest.mark.parametrize("argv", [["--help"], ["check-certificate", "--help"]])
def test_a_reader_that_goes_away_is_no_error(argv):
    """`dfst --help | head -1`: the pipe closes before dfst writes; rich exits 1 on the broken pipe,
    which once read as 'code dfst called ... called sys.exit(1)'."""
    import subprocess

    code = "import sys; from dfst.cli import main; raise SystemExit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # before the interpreter has even imported dfst
    err = proc.stderr.read().decode()
    assert proc.wait() in (0, 1) and "error" not in err and "Traceback" not in err, err

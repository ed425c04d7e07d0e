"""`dfst score`: the examples through a child process, faulty commands, and the answers-file round trip."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import assert_one_line_error, run, run_json
from dfst.tasks import get_task

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "score"
PY = shlex.quote(sys.executable)
ADDER = f"{PY} {shlex.quote(str(EXAMPLES / 'adder.py'))}"
BLIND = f"{PY} {shlex.quote(str(EXAMPLES / 'carry_blind_adder.py'))}"
SMALL = ("--digits", "4,25", "--random", "30")


def test_the_correct_adder_is_robust_in_both_bases(capsys):
    for task, base in (("add10", 10), ("add2", 2)):
        report = run_json(capsys, "score", task, "--cmd", f"{ADDER} {base}", *SMALL)
        assert report["robust_lg"] == 25 and report["format"] == "dfst-result"
        assert [lv["instances"] for lv in report["levels"]] == [lv["hard"] + 30 for lv in report["levels"]]


def test_the_carry_blind_adder_is_caught_by_the_hard_set_only(capsys):
    report = run_json(capsys, "score", "add10", "--cmd", f"{BLIND} 10", "--digits", "10,40",
                      "--random", "100", expect=1)
    for lv in report["levels"]:
        assert not lv["hard_pass"] and lv["probabilistic"]
        failure = lv["first_failure"]
        assert failure["name"] == "carry_chain"
        assert failure["expected"] == str(int(failure["a"]) + int(failure["b"])) != failure["answer"]
    code, out, _ = run(capsys, "score", "add10", "--cmd", f"{BLIND} 10", "--digits", "10", "--random", "5")
    assert code == 1 and "first failure at N=10: carry_chain" in out
    assert "fails at the first tested length (10 digits)" in out and "robust to 0" not in out


def test_replies_in_any_order(capsys, tmp_path):
    script = tmp_path / "reversed.py"  # answers each batch of four requests backwards
    script.write_text(
        f"import json, sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nfrom adder import add\nheld = []\n"
        "for line in sys.stdin:\n    held.append(json.loads(line))\n    if len(held) == 4:\n"
        "        for r in reversed(held):\n            print(json.dumps({'id': r['id'], "
        "'answer': add(r['a'], r['b'])}), flush=True)\n        held = []\n")
    hard = len(get_task("add10").hard_instances(9))  # with the random pairs, a multiple of 4 requests
    report = run_json(capsys, "score", "add10", "--cmd", f"{PY} {script}", "--digits", "9",
                      "--random", str(4 * 25 - hard))
    assert report["robust_lg"] == 9 and report["levels"][0]["instances"] == 100


def _group_members(pgid: int) -> list[int]:
    """Live processes in process group `pgid`, read from /proc (a killed grandchild is a zombie until
    the machine's init reaps it: dead, and not dfst's to wait for)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


FAULTS = {
    "exits": ("exit 3", "exited with code 3"),
    "crashes": (f"{PY} -c 'import sys; sys.stdin.readline(); raise SystemExit(\"boom\")'", "boom"),
    "hangs": ("sleep 30", "no reply for 0.5 s"),
    "garbage": (f"{PY} -c 'print(\"hello\", flush=True); import time; time.sleep(30)'", "not a JSON reply"),
    "garbage_then_exit": ("echo hello", "not a JSON reply"),
    "unknown_id": (f"{PY} -c 'print(\"{{\\\"id\\\": 999, \\\"answer\\\": \\\"1\\\"}}\", flush=True); "
                   "import time; time.sleep(30)'", "answered id 999"),
    "no_answer_key": (f"{PY} -c 'print(\"{{\\\"id\\\": 0}}\", flush=True); import time; time.sleep(30)'",
                      "needs \"id\" and \"answer\""),
    "oversized": (f"{PY} -c 'import sys; sys.stdout.write(\"x\" * 5000); sys.stdout.flush(); "
                  "import time; time.sleep(30)'", "reply cap"),
    "lingering_child": (f"sleep 30 & {ADDER} 10", None),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_faulty_command_is_one_line_and_leaves_no_process(capsys, tmp_path, fault):
    command, fragment = FAULTS[fault]
    pid_file = tmp_path / "pid"
    wrapped = f"echo $$ > {pid_file}; {command}"
    code, _, err = run(capsys, "score", "add10", "--cmd", wrapped, "--digits", "3", "--random", "3",
                       "--timeout", "0.5", "--max-reply", "1K")
    if fragment is None:
        assert code == 0, err
    else:
        assert_one_line_error(code, err, fragment)
    pgid = int(pid_file.read_text())
    deadline = time.monotonic() + 2
    while _group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _group_members(pgid) == []
    with pytest.raises(ProcessLookupError):
        os.kill(pgid, 0)


def test_a_command_that_cannot_start(capsys):
    code, _, err = run(capsys, "score", "add10", "--cmd", "no-such-model-xyz", "--digits", "3",
                       "--random", "1")
    assert_one_line_error(code, err, "exited with code 127", "not found")


def test_the_answers_file_round_trip(capsys, tmp_path):
    instances, answers = tmp_path / "set.jsonl", tmp_path / "answers.jsonl"
    written = run_json(capsys, "score", "add10", "--instances-out", instances, *SMALL)
    assert written["instances_sha256"] == hashlib.sha256(instances.read_bytes()).hexdigest()
    with open(instances) as source:
        replies = subprocess.run([sys.executable, str(EXAMPLES / "adder.py"), "10"], stdin=source,
                                 capture_output=True, text=True, check=True).stdout.splitlines()
    random.Random(0).shuffle(replies)  # any order
    answers.write_text("\n".join(replies) + "\n")
    report = run_json(capsys, "score", "add10", "--answers", answers, "--instances", instances, *SMALL)
    assert report["details"]["instances_sha256"] == written["instances_sha256"]
    assert report["robust_lg"] == 25 and report["details"]["instance_count"] == len(replies)

    first = json.loads(replies[0])
    replies[0] = json.dumps({"id": first["id"], "answer": first["answer"] + "0"})
    answers.write_text("\n".join(replies) + "\n")
    report = run_json(capsys, "score", "add10", "--answers", answers, *SMALL, expect=1)
    failures = [lv["first_failure"] for lv in report["levels"] if lv["first_failure"]]
    assert [f["id"] for f in failures] == [first["id"]] and failures[0]["answer"] == first["answer"] + "0"

    answers.write_text("\n".join(replies[1:]) + "\n")
    code, _, err = run(capsys, "score", "add10", "--answers", answers, *SMALL)
    assert_one_line_error(code, err, f"no answer for id {first['id']}")
    answers.write_text("\n".join(replies) + "\n")
    code, _, err = run(capsys, "score", "add10", "--answers", answers, "--instances", instances,
                       *SMALL, "--seed", "1")
    assert_one_line_error(code, err, "is not this instance set")
    code, _, err = run(capsys, "score", "add10", "--answers", answers, "--digits", "4", "--random", "30")
    assert_one_line_error(code, err, "not in this instance set")


def test_instances_out_never_replaces_a_file(capsys, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text("my own data\n")
    code, _, err = run(capsys, "score", "add10", "--instances-out", path, *SMALL)
    assert_one_line_error(code, err, "already exists")
    assert path.read_text() == "my own data\n"


@pytest.mark.parametrize("argv, fragment", [
    ((), "give one of --cmd"),
    (("--cmd", "cat", "--answers", "x.jsonl"), "not --cmd and --answers"),
    (("--cmd", "cat", "--instances", "x.jsonl"), "--instances goes with --answers"),
    (("--answers", "/nonexistent/a.jsonl"), "does not exist"),
    (("--cmd", "cat", "--random", "-1"), "random pairs must be >= 0"),
    (("--instances-out", "x.jsonl", "--until-fail"), "--until-fail"),
])
def test_bad_options(capsys, argv, fragment):
    code, _, err = run(capsys, "score", "add10", *argv)
    assert_one_line_error(code, err, fragment)


def test_a_user_task_through_tasks_file(capsys, tmp_path):
    from dfst.tasks import TASKS

    script = tmp_path / "or_model.py"  # or2 (examples/tasks/or2.py): a | b in binary, by Python's int
    script.write_text("import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n"
                      "    answer = format(int(r['a'], 2) | int(r['b'], 2), 'b')\n"
                      "    print(json.dumps({'id': r['id'], 'answer': answer}), flush=True)\n")
    before = dict(TASKS)
    try:
        tasks_file = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "or2.py"
        report = run_json(capsys, "--tasks-file", tasks_file, "score", "or2", "--cmd", f"{PY} {script}",
                          "--digits", "3,20", "--random", "20")
    finally:
        TASKS.clear()
        TASKS.update(before)
    assert report["task"] == "or2" and report["robust_lg"] == 20


@pytest.mark.slow
@pytest.mark.parametrize("task, base", [("add10", 10), ("add2", 2)])
def test_a_correct_adder_is_robust_to_100000_digits_in_under_a_minute_of_dfsts_time(capsys, task, base):
    report = run_json(capsys, "score", task, "--cmd", f"{ADDER} {base}",
                      "--digits", "10,100,1000,10000,100000")
    assert report["robust_lg"] == 100_000 and report["levels"][-1]["random"] == 2995
    assert report["details"]["dfst_cpu_seconds"] < 60

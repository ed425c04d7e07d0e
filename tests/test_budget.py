"""Work and memory bounds (issue 14, part 3): estimates before a rollout, refusals beyond
--max-memory in seconds, compile's dense-size check, and solve's exit codes and JSON."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tracemalloc

import pytest

from cli_helpers import assert_one_line_error, run
from dfst.automata import transducer_from_dict
from dfst.errors import DfstError
from dfst.io.limits import GiB, MiB
from dfst.model.compile import check_dense_size, compile_agent
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol
from dfst.tasks import TASKS
from dfst.tasks.budget import (
    ANSWER_OVERHEAD,
    EXACT_BYTES,
    GEOMETRY,
    RESULT_DIGITS,
    estimate_eval,
    estimate_solve,
    hard_digits,
)

TERA = 10**12


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from dfst.cli import main

    path = tmp_path_factory.mktemp("ckpt") / "add2"
    assert main(["compile", "add2", "--out", str(path)]) == 0
    return path


def huge_agent(states: int) -> dict:
    """An add2-alphabet agent with many states and three rules: cheap to build, huge to compile."""
    names = ["q0", "halt", *(f"s{i}" for i in range(states - 2))]
    rules = [{"state": "q0", "read": s, "next": "halt", "write": s, "move": "S"} for s in "01_"]
    return {"format": "dfst-agent", "version": 1, "name": "huge", "states": names,
            "alphabet": ["0", "1", "_"], "blank": "_", "initial": "q0", "final": "halt", "rules": rules}


# --- the estimate ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(TASKS))
@pytest.mark.parametrize("n, m", [(1, 1), (3, 7), (12, 2), (40, 40)])
def test_geometry_is_the_layout_shape(name, n, m):
    task = TASKS[name]
    instance = task.example(n, m)  # mult10x1's b is one digit, a string task's b is empty
    n, m = len(instance.a), len(instance.b)
    assert GEOMETRY[task.operation](n, m) == task.layout(instance).cells.shape
    assert estimate_solve(task, n, m).cells == task.layout(instance).cells.size
    assert estimate_solve(task, n, m).steps == task.max_steps(instance)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_hard_set_size_from_the_probe(name):
    task = TASKS[name]
    count, digits = hard_digits(task, 50)
    hard = task.hard_families(50)
    assert count == len(hard)
    assert digits == len({s for i in hard for s in (i.a, i.b) if len(s) > 1}) * 50


@pytest.mark.parametrize("name", ["add2", "add10", "mult10"])
def test_estimate_bounds_what_solve_allocates(capsys, name):
    """Every allocation of `solve --random N --json` (numpy's and libmpdec's are traced too) fits."""
    n = 2_500 if name.startswith("mult") else 200_000  # mult: 5,000 answer digits, libmpdec
    run(capsys, "solve", name, "--random", "3", "--json")  # loads the compiled kernels first
    tracemalloc.start()
    code, out, _ = run(capsys, "solve", name, "--random", n, "--json")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 0 and json.loads(out)["correct"]
    # Typer builds the command's parser on every call (~0.6 MiB), which the estimate leaves out.
    assert peak <= estimate_solve(TASKS[name], n, n, generate=True, as_json=True).bytes + MiB


@pytest.mark.parametrize("name", sorted(TASKS))
def test_estimate_bounds_the_exact_answer(name):
    """Python's answer (int, or libmpdec for long base-10 operands) at a length solve cannot reach
    quickly for multiplication."""
    task, n = TASKS[name], 100_000
    instance = task.random_instances(n, 1, seed=1)[0]
    tracemalloc.start()
    task.expected(instance)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= EXACT_BYTES * RESULT_DIGITS[task.operation](n, n) + ANSWER_OVERHEAD


@pytest.mark.parametrize("n, random", [(30_000, 10), (1, 4_000)])  # long operands; many instances
def test_estimate_bounds_what_eval_allocates(n, random):
    task = TASKS["add10"]
    run_protocol(task, None, EvalConfig(digits=(3,), random=2))
    tracemalloc.start()
    report, _ = run_protocol(task, None, EvalConfig(digits=(n,), random=random))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert report["robust_max_digits"] == n
    assert peak <= estimate_eval(task, n, random=random, hard=True).bytes


# --- refusals in seconds --------------------------------------------------------------------------

def test_eval_of_a_trillion_digits_is_refused(capsys, checkpoint):
    code, out, err = run(capsys, "eval", checkpoint, "--digits", TERA)
    assert_one_line_error(code, err, "--digits 1,000,000,000,000", "needs about", "TiB", "grid",
                          "over --max-memory", "DFST_MAX_MEMORY")
    assert not (checkpoint / "eval.json").exists()  # refused before anything was evaluated


def test_eval_checks_the_largest_length_before_any(capsys, checkpoint):
    """10 digits would fit, but nothing runs: the refusal comes first."""
    seen = []
    with pytest.raises(DfstError, match="--digits 1,000,000,000,000"):
        run_protocol(TASKS["add2"], None, EvalConfig(digits=(10, TERA)), on_level=lambda n, c: seen.append(n))
    assert seen == []


def test_until_fail_climb_stops_at_the_memory_bound():
    task = TASKS["add2"]
    bound = estimate_eval(task, 20, random=2, hard=True).bytes  # 5, 10, 20 fit; 40 does not
    cfg = EvalConfig(digits=(5,), until_fail=True, max_digits=10**6, random=2, max_memory=bound)
    report, failure = run_protocol(task, None, cfg)
    assert report["stopped_by"] == "memory" and failure is None
    assert [lv["digits"] for lv in report["levels"]] == [5, 10, 20]


def test_solve_of_a_trillion_random_digits_is_refused_by_default(capsys):
    code, _, err = run(capsys, "solve", "add2", "--random", TERA)
    assert_one_line_error(code, err, "--random 1,000,000,000,000", "needs about", "over --max-memory")


def limited_address_space() -> None:
    """In the child: 2 GiB of address space, so that a regression fails loudly instead of swapping."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * GiB, 2 * GiB))


def dfst_subprocess(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    code = "import sys; from dfst.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          preexec_fn=limited_address_space, env=os.environ | (env or {}), timeout=300)


def test_solve_of_a_billion_random_digits_is_refused_in_bounded_memory():
    """Nothing of the billion digits is drawn before the check (a MemoryError would say so)."""
    proc = dfst_subprocess("solve", "add2", "--random", str(10**9), env={"DFST_MAX_MEMORY": "2G"})
    assert proc.returncode == 2, proc.stderr
    assert "--random 1,000,000,000 needs about 36.3 GiB (grid 11.2 GiB" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_eval_of_a_trillion_digits_is_refused_in_bounded_memory(checkpoint):
    proc = dfst_subprocess("eval", str(checkpoint), "--digits", "1_000_000_000_000", "--until-fail")
    assert proc.returncode == 2 and "needs about" in proc.stderr, proc.stderr


def test_long_explicit_operands_are_checked(capsys, tmp_path):
    digits = tmp_path / "a.txt"
    digits.write_text("1" * 100_000)
    code, _, err = run(capsys, "solve", "add2", f"@{digits}", "1", "--max-memory", "100K")
    assert_one_line_error(code, err, "operands of 100,000 and 1 digits", "needs about")
    assert run(capsys, "solve", "add2", f"@{digits}", "1")[0] == 0


# --- --max-memory both ways -----------------------------------------------------------------------

def test_max_memory_lowers_and_raises_the_bound(capsys, monkeypatch, checkpoint):
    code, _, err = run(capsys, "solve", "add2", "--random", "1000", "--max-memory", "1K")
    assert_one_line_error(code, err, "--random 1,000 needs about", "over --max-memory 1.0 KiB")
    assert run(capsys, "solve", "add2", "--random", "1000")[0] == 0  # the default lets it through
    monkeypatch.setenv("DFST_MAX_MEMORY", "1K")
    assert_one_line_error(*run(capsys, "solve", "add2", "--random", "1000")[::2], "over --max-memory 1.0 KiB")
    assert run(capsys, "solve", "add2", "--random", "1000", "--max-memory", "1M")[0] == 0  # option wins
    code, _, err = run(capsys, "eval", checkpoint, "--digits", "100")
    hard = len(TASKS["add2"].hard(100, 2))  # the estimate counts the hard cases before duplicates go
    assert_one_line_error(code, err, f"--digits 100 ({hard + 10} instances) needs about")
    assert run(capsys, "eval", checkpoint, "--digits", "100", "--max-memory", "64M", "--json")[0] == 0


@pytest.mark.parametrize("size", ["0", "-1", "lots", "1.5X"])
def test_bad_max_memory(capsys, size):
    code, _, err = run(capsys, "solve", "add2", "1", "1", "--max-memory", size)
    assert_one_line_error(code, err, "--max-memory")


# --- compile --------------------------------------------------------------------------------------

def reachable_huge_agent(states: int) -> dict:
    """An add2-alphabet agent whose `states` states all lie on some run (dfst drops the ones no rule
    reaches): state i reading the j-th symbol goes to state 3i + j + 1, its head stepping right and
    back left in turn so it stays on the layout, and a state with no such successor halts. Every run
    halts within log3(states) + 1 steps."""
    names = [f"s{i}" for i in range(states - 1)] + ["halt"]
    depth = [0] * (states - 1)
    for i in range(1, states - 1):
        depth[i] = depth[(i - 1) // 3] + 1

    def rule(i: int, j: int) -> dict:
        child = 3 * i + j + 1
        go = child < states - 1
        return {"state": names[i], "read": "01_"[j], "next": names[child] if go else "halt",
                "write": "01_"[j], "move": ("RL"[depth[i] % 2] if go else "S")}

    return {"format": "dfst-agent", "version": 1, "name": "huge", "states": names,
            "alphabet": ["0", "1", "_"], "blank": "_", "initial": "s0", "final": "halt",
            "rules": [rule(i, j) for i in range(states - 1) for j in range(3)]}


def test_compile_checks_the_dense_size_first(capsys, tmp_path):
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(reachable_huge_agent(30_000)))
    code, _, err = run(capsys, "compile", "add2", "--agent", path, "--out", tmp_path / "ckpt")
    assert_one_line_error(code, err, "d=30,000", "GiB of dense weights", "DFST_MAX_MEMORY")
    assert not (tmp_path / "ckpt").exists()


def test_compile_bound_is_given_or_the_default():
    agent = transducer_from_dict(huge_agent(1000))
    assert check_dense_size(agent) == 4 * (3 * 1000 * (3 + 1000 + 5) + 1000)
    with pytest.raises(DfstError, match="over the memory bound 1.0 MiB"):
        compile_agent(agent, max_memory=1 << 20)
    assert compile_agent(agent, max_memory=1 << 30).config.d == 1000


# --- solve: exit codes and JSON -------------------------------------------------------------------

def wrong_add2(tmp_path):
    """The add2 expert with one rule broken: 1 + 1 writes 1 (and carries), so 1 + 1 = 11."""
    path = tmp_path / "wrong.json"
    assert run_quiet(["agent", "add2", "--out", str(path)]) == 0
    data = json.loads(path.read_text())
    for rule in data["rules"]:
        if rule["state"] == "sum1" and rule["read"] == "1":
            rule["write"] = "1"
    path.write_text(json.dumps(data))
    return path


def run_quiet(argv: list[str]) -> int:
    from dfst.cli import main

    return main(argv)


def test_solve_exit_codes(capsys, tmp_path):
    assert run(capsys, "solve", "add2", "1", "1")[0] == 0
    wrong = wrong_add2(tmp_path)
    capsys.readouterr()
    code, out, _ = run(capsys, "solve", "add2", "1", "1", "--agent", wrong)
    assert code == 1 and "WRONG" in out
    code, out, _ = run(capsys, "solve", "add2", "1", "1", "--agent", wrong, "--json")
    assert code == 1 and json.loads(out)["correct"] is False and json.loads(out)["result"] == "11"
    assert_one_line_error(*run(capsys, "solve", "add2", "1", "2")[::2], "not a digit in base 2")


def test_solve_refuses_an_agent_without_a_rule_it_needs_naming_the_rule(capsys, tmp_path):
    path = tmp_path / "nohalt.json"
    assert run_quiet(["agent", "add2", "--out", str(path)]) == 0
    data = json.loads(path.read_text())
    data["rules"] = [r for r in data["rules"] if not (r["state"] == "add0" and r["read"] == "_")]
    path.write_text(json.dumps(data))
    capsys.readouterr()
    code, _, err = run(capsys, "solve", "add2", "0", "1", "--agent", path, "--json")
    assert_one_line_error(code, err, "no rule for state 'add0' reading '_'")  # solve loads as train does


def test_animate_json_keeps_stdout_one_document(capsys):
    code, out, err = run(capsys, "solve", "add2", "11", "1", "--animate", "--delay", "0", "--json")
    assert code == 0 and json.loads(out)["result"] == "100"
    assert "halted" in err  # the frames went to stderr (off a terminal, only the last one)


@pytest.mark.parametrize("argv, fragment", [
    (["--delay", "-1", "--animate"], "--delay"), (["--delay", "inf"], "--delay"),
    (["--delay", "nan", "--animate"], "--delay"), (["--delay", "1e9"], "--delay"),
    (["--seed", "-1"], "--seed must be >= 0"),
])
def test_bad_solve_options(capsys, argv, fragment):
    assert_one_line_error(*run(capsys, "solve", "add2", "1", "1", *argv)[::2], fragment)


@pytest.mark.parametrize("n", ["0", "-1"])
def test_bad_random_length(capsys, n):
    assert_one_line_error(*run(capsys, "solve", "add2", "--random", n)[::2], "at least 1 digit")


def test_seed_minus_one_with_random(capsys):
    assert_one_line_error(*run(capsys, "solve", "add2", "--random", "5", "--seed", "-1")[::2], "--seed")


def test_data_refuses_a_recording_over_the_bound_before_any_work(capsys, tmp_path):
    out = tmp_path / "d.pto.zip"
    code, _, err = run(capsys, "data", "add2", "--samples", "1", "--max-digits", "100000000", "--out", out)
    assert_one_line_error(code, err, "100,000,000 digits", "traces", "--max-memory")
    assert not out.exists()
    code, _, err = run(capsys, "data", "add2", "--samples", "20", "--out", out, "--max-memory", "1K")
    assert_one_line_error(code, err, "over --max-memory 1.0 KiB")
    assert run(capsys, "data", "add2", "--samples", "20", "--out", out)[0] == 0


def test_recording_estimate_bounds_what_a_recording_holds():
    """The trace part alone exceeds the bytes of the recorded arrays, which are 3 per step."""
    from dfst.data import record_dataset
    from dfst.tasks.budget import estimate_recording

    for task in TASKS.values():
        ds = record_dataset(task, 5, 6, 0)
        assert estimate_recording(task, 5, 6).parts["traces"] >= 10 * 3 * ds.steps


def test_a_run_of_huge_step_bound_is_announced(capsys):
    from dfst.cli.agents import _note_long_run
    from dfst.tasks.budget import estimate_solve

    _note_long_run(estimate_solve(TASKS["mult2"], 10**6, 10**6))
    assert "24,000,048,000,016 steps" in capsys.readouterr().err
    _note_long_run(estimate_solve(TASKS["mult2"], 100, 100))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_hard_set_size_is_known_at_every_length_without_building_it(name):
    """hard_digits reads the set at PROBE_LIMIT and adds the carry travels gained past it: an upper
    bound on the instances (exact at even lengths; dyck has fewer at odd ones) and on their digits."""
    from dfst.tasks.budget import PROBE_LIMIT

    task = TASKS[name]
    lengths = (PROBE_LIMIT, PROBE_LIMIT + 1, 1_000, *((5_000,) if task.operation in ("add", "sub") else ()))
    for n in lengths:
        count, digits = hard_digits(task, n)
        hard = task.hard_families(n)
        assert count >= len(hard) and (count == len(hard) or n % 2), (n, count, len(hard))
        assert digits >= sum(len(s) for s in {s for i in hard for s in (i.a, i.b) if len(s) > 1}) - n



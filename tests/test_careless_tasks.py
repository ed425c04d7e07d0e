"""A task of one's own written carelessly (issue 36): registration checks the expert on long instances
too, certify says what it proved, a task of one operand needs no generator, and the hints, errors and
tables around a tasks file say what a new user needs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import assert_one_line_error, run, run_json, training_code
from dfst.tasks import TASKS
from dfst.tasks.user import load_tasks_file

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tasks" / "or2.py"
OR2 = f"""import dataclasses, runpy
from dfst.automata import Rule, make_transducer
from dfst.tasks import Task
_or2 = runpy.run_path({str(EXAMPLE)!r})
OR2 = _or2["TASKS"][0]
"""
# or2's expert, except that it counts the 1s of a in a row and spins forever on the seventh
LOOPS_ON_SEVEN_ONES = OR2 + '''
def build(base):
    rules, states = [], []
    for k in range(7):
        read, or0, or1, up = f"read{k}", f"or0_{k}", f"or1_{k}", f"up{k}"
        states += [read, or0, or1, up]
        rules += [Rule(read, "0", or0, "0", "D"), Rule(read, "_", "halt", "_", "S"),
                  Rule(read, "1", "spin", "1", "L") if k == 6 else Rule(read, "1", or1, "1", "D")]
        rules += [Rule(or0, x, "up0", "0" if x == "_" else x, "L") for x in "01_"]
        rules += [Rule(or1, x, f"up{min(k + 1, 6)}", "1", "L") for x in "01_"]
        rules += [Rule(up, x, read, x, "U") for x in "01_"]
    rules += [Rule("spin", x, "spin2", x, "R") for x in "01_"]
    rules += [Rule("spin2", x, "spin", x, "L") for x in "01_"]
    return make_transducer(states + ["spin", "spin2", "halt"], ["0", "1", "_"], rules,
                           initial="read0", final="halt", blank="_", name="loops")

TASKS = [dataclasses.replace(OR2, name="or2loops", build_agent=build)]
'''
# parity2's layout, expert and answer with one operand and no generator
ONE_OPERAND = """from dfst.tasks import Task, parity
TASKS = [Task("myparity", "myparity", 2, "parity of the 1s", parity.build_parity_agent, parity.draw_parity,
              parity.hard_parity, parity.scan_steps, answer=parity.parity_answer, readout="symbol",
              operands=1)]
"""


def wrong_above(digits: int) -> str:
    """or2 with an answer function whose last digit flips once the answer has more than `digits`."""
    return OR2 + f'''
def answer(a, b, base):
    text = format(int(a, 2) | int(b, 2), "b")
    return text if len(text) <= {digits} else text[:-1] + "10"[int(text[-1])]

TASKS = [dataclasses.replace(OR2, name="or2wrong", answer=answer)]
'''


pytestmark = pytest.mark.usefixtures("task_registry")  # the CLI registers tasks in this process


def tasks_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mytasks.py"
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------- item 3: registration


@pytest.mark.parametrize("digits", [5, 12, 40, 200])
def test_an_answer_function_wrong_only_on_long_answers_is_refused(tmp_path, capsys, digits):
    path = tasks_file(tmp_path, wrong_above(digits))
    code, _, err = run(capsys, "--tasks-file", path, "tasks")
    assert_one_line_error(code, err, "task 'or2wrong' refused", "the expert answers", "the task expects")
    operands = re.search(r"refused: on (.*?):", err).group(1)
    assert max(len(x) for x in operands.split(", ")) > digits or "symbols)" in operands


def test_an_expert_that_loops_on_seven_ones_in_a_row_is_refused(tmp_path, capsys):
    path = tasks_file(tmp_path, LOOPS_ON_SEVEN_ONES)
    code, _, err = run(capsys, "--tasks-file", path, "solve", "or2loops", "101", "1")
    assert_one_line_error(code, err, "task 'or2loops' refused", "does not halt within the step bound",
                          "1111111")


@pytest.mark.parametrize("change, fragment", [
    ("answer=lambda a, b, base: int(a, 2) | int(b, 2)", "returned"),  # an int, not a string
    ("hard=lambda n, base: 1 / 0", "making its instances"),
    ("step_bound=lambda n, m, base: 40", "does not halt within the step bound"),  # enough up to 5 digits
    ("generate=lambda rng, n, m, base: ('2' * n, '1')", "refused by its check"),  # not base 2
    ("draw=lambda a, b, base: OR2.draw(a, b, base) if len(a) < 9 else None", "not a dfst.grid.grid.Layout"),
    ("draw=lambda a, b, base: OR2.draw(a, b, base) if len(a) < 9 else {}[a]", "raised KeyError"),
])
def test_other_careless_tasks_are_refused_in_one_line(tmp_path, capsys, change, fragment):
    path = tasks_file(tmp_path, OR2 + f"TASKS = [dataclasses.replace(OR2, name='careless', {change})]\n")
    code, _, err = run(capsys, "--tasks-file", path, "tasks")
    assert_one_line_error(code, err, "task 'careless' refused", fragment)


def test_registration_records_the_lengths_checked_and_stays_fast():
    import time

    from dfst.tasks.expert_check import check_task_expert

    for name in ("add2", "mult10", "div10x1", "dyck"):
        start = time.process_time()
        problem, check = check_task_expert(TASKS[name])
        assert problem is None and time.process_time() - start < 3, name
        assert check.max_digits >= 100 and {1, 2, 3, 10, 30, 100} <= set(check.lengths), name


# ----------------------------------------------------------------------------- item 3: what certify says


def test_certify_says_what_it_proved_and_how_the_expert_was_checked(tmp_path, capsys):
    tasks = ("--tasks-file", EXAMPLE)
    run_json(capsys, *tasks, "compile", "or2", "--out", tmp_path / "or2")
    code, out, _ = run(capsys, *tasks, "certify", tmp_path / "or2", "--out", tmp_path / "cert.json")
    line = " ".join(out.split())
    assert code == 0 and line.startswith("CERTIFIED (or2, plain mode")
    assert "equal to or2's expert on every input length" in line
    assert re.search(r"checked against or2's answer function \(or_answer\) on [\d,]+ instances of 1 to "
                     r"1,000 digits \(a test, not a proof\)", line), line
    report = run_json(capsys, *tasks, "certify", tmp_path / "or2")
    assert report["proves"].startswith("equal to or2's expert on every input length")
    assert report["expert_check"]["max_digits"] == 1000 and report["expert_check"]["instances"] > 1000
    assert json.loads((tmp_path / "cert.json").read_text())["proves"] == report["proves"]
    run_json(capsys, "compile", "add2", "--out", tmp_path / "add2")
    assert "against Python's integers" in run_json(capsys, "certify", tmp_path / "add2")["proves"]


# ----------------------------------------------------------------------------- item 7: one operand


def test_a_task_of_one_operand_without_a_generator_goes_through_every_command(tmp_path, capsys):
    tasks = ("--tasks-file", tasks_file(tmp_path, ONE_OPERAND))
    assert run_json(capsys, *tasks, "solve", "myparity", "1011")["result"] == "1"
    solved = run_json(capsys, *tasks, "solve", "myparity", "--random", "30")
    assert solved["correct"] and solved["b"] == "" and len(solved["a"]) == 30
    run_json(capsys, *tasks, "data", "myparity", "--samples", "5", "--out", tmp_path / "d.zip")
    run_json(capsys, *tasks, "train", "myparity", "--out", tmp_path / "run", "--iters", "20",
             "--restarts", "1", "--no-finetune")
    code, out, err = run(capsys, *tasks, "eval", tmp_path / "run", "--digits", "10", "--json")
    assert code in (0, 1), err  # exact or not, it ran
    level = json.loads(out)["levels"][0]
    assert level["digits"] == 10 and level["instances"] > 0


def test_random_operands_of_a_task_with_its_own_symbols_are_in_those_symbols():
    from dataclasses import replace

    dyck = replace(TASKS["dyck"], name="mydyck", generate=None)
    for instance in dyck.random_instances(12, 5, seed=0):
        assert set(instance.a) <= {"(", ")"} and instance.b == "" and len(instance.a) == 12


# ----------------------------------------------------------------------------- item 10: hints and labels


def test_an_unknown_task_names_the_tasks_file_option(capsys):
    code, _, err = run(capsys, "solve", "or2", "1", "1")
    assert_one_line_error(code, err, "unknown task 'or2'", "--tasks-file")


def test_the_hints_after_training_keep_the_tasks_file(tmp_path, capsys):
    code, out, _ = run(capsys, "--tasks-file", EXAMPLE, "train", "or2", "--out", tmp_path / "run",
                       "--iters", "20", "--restarts", "1", "--no-finetune")
    hint = " ".join(out.split())
    assert code == training_code(json.loads((tmp_path / "run" / "summary.json").read_text()))
    assert f"evaluate further with: dfst --tasks-file {EXAMPLE} eval " in hint, hint
    command = json.loads((tmp_path / "run" / "config.json").read_text())["command"]
    assert command.startswith(f"dfst --tasks-file {EXAMPLE} train or2 ")  # the run's own command line
    load_tasks_file(EXAMPLE)
    code, out, _ = run(capsys, "--tasks-file", EXAMPLE, "eval", tmp_path / "run", "--digits", "100")
    if "first failure" in out:
        assert f"dfst --tasks-file {EXAMPLE} replay" in " ".join(out.split())


def test_report_runs_labels_the_columns_before_and_after_fine_tuning(tmp_path, capsys):
    level = {"digits": 10, "instances": 3, "exact": 0, "robust": False}
    summary = {"task": "add2", "samples": 20, "d": 9, "params": 468, "iterations": 20, "seconds": 2.0,
               "cpu_seconds": 3.0, "final_loss": 0.5,
               "eval": {"robust_max_digits": 0, "probabilistic_max_digits": 0, "levels": [level]},
               "finetune": {"eval_plain": {"robust_max_digits": 10**6, "probabilistic_max_digits": 10**6,
                                           "levels": [level | {"exact": 3, "robust": True}]}}}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "summary.json").write_text(json.dumps(summary))
    [row] = run_json(capsys, "report-runs", tmp_path / "run")
    assert row["robust LG (model)"] == 10**6 and row["robust LG (trained, before fine-tuning)"] == 0
    assert "robust LG" not in row


def test_square_brackets_in_help_texts_survive_the_markup(capsys):
    """Every [text] written in a command's help (escaped as \\[text] for rich) is shown as [text]."""
    import typer.main
    from typer.testing import CliRunner

    from dfst.cli.app import app

    def commands(group, path):
        yield path, group
        for name, sub in getattr(group, "commands", {}).items():
            yield from commands(sub, [*path, name])

    for path, command in commands(typer.main.get_command(app), []):
        raw = " ".join([command.help or ""] + [getattr(p, "help", None) or "" for p in command.params])
        shown = " ".join(CliRunner().invoke(app, [*path, "--help"], terminal_width=200).output
                         .replace("│", " ").split())
        for inside in re.findall(r"\\?\[([^\]\[/]+)\]", raw):
            assert f"[{' '.join(inside.split())}]" in shown, (path, inside)
    assert '"DFST [agent NAME]"' in " ".join(run(capsys, "reproduce", "--help")[1].replace("│", " ").split())


# ----------------------------------------------------------------------------- issue 54 item 3


def test_a_step_bound_beyond_the_engine_is_refused_at_registration_and_at_long_lengths(tmp_path, capsys):
    path = tasks_file(tmp_path, OR2 + "TASKS = [dataclasses.replace(OR2, name='huge', "
                                      "step_bound=lambda n, m, base: 2 ** 70)]\n")
    code, _, err = run(capsys, "--tasks-file", path, "tasks")
    assert_one_line_error(code, err, "task 'huge' refused", "more than the engine counts")
    late = OR2 + ("TASKS = [dataclasses.replace(OR2, name='late', step_bound=lambda n, m, base: "
                  "4 * max(n, m) + 10 if max(n, m) <= 2000 else 2 ** 70)]\n")
    code, _, err = run(capsys, "--tasks-file", tasks_file(tmp_path, late), "solve", "late", "1" * 3000, "1")
    assert_one_line_error(code, err, "at 3,000 and 1 digits", "more than the engine counts")


def test_an_expert_without_a_rule_is_named_by_the_rule_it_lacks(tmp_path, capsys):
    lacking = OR2 + '''
def build(base):
    a = OR2.build_agent(base)
    rules = [r for (q, x), r in a.rules.items() if not (q == a.initial and x == "1")]
    return make_transducer(a.states, a.alphabet, rules, initial=a.initial, final=a.final, blank=a.blank,
                           name="lacking")

TASKS = [dataclasses.replace(OR2, name="lacking", build_agent=build)]
'''
    code, _, err = run(capsys, "--tasks-file", tasks_file(tmp_path, lacking), "tasks")
    assert_one_line_error(code, err, "has no rule for state", "reading '1'")
    assert "does not halt" not in err


def test_an_answer_function_through_pythons_int_answers_past_4300_digits():
    import dataclasses

    from dfst.tasks.base import Instance

    task = dataclasses.replace(TASKS["add10"], name="intadd", answer=lambda a, b, base: str(int(a) + int(b)))
    a = "9" * 5000
    assert task.expected(Instance(a, "1")) == "1" + "0" * 5000
    with pytest.raises(ValueError, match="4300"):  # the limit is lifted for the answer function only
        int(a)


def test_a_hard_set_generator_and_domain_through_pythons_int_work_past_4300_digits():
    """A task's own hard set, generator and domain may use int() on operands as its answer does (the
    suite's subtraction puts the larger operand first that way): the limit is lifted for them too."""
    import dataclasses

    from dfst.tasks.base import Instance

    def larger_first(a, b):
        return (a, b) if int(a) >= int(b) else (b, a)

    base = TASKS["sub10"]
    task = dataclasses.replace(
        base, name="intsub", hard=lambda n, _: [Instance(*larger_first("1" + "0" * (n - 1), "9" * n), "x")],
        generate=lambda rng, n, m, _: larger_first("7" * n, "8" * m),
        domain=lambda a, b, _: None if int(a) >= int(b) else "a < b")
    n = 5000
    assert task.hard_families(n)[0].a == "9" * n and task.pool_instances(n)[0].a == "9" * n
    assert task.random_instance(None, n, n).a == "8" * n and task.example(n, 3).a == "7" * n
    assert task.domain_problem("1" + "0" * n, "9" * n) is None
    with pytest.raises(ValueError, match="4300"):
        int("9" * n)


def test_one_failing_length_keeps_the_lengths_before_it(tmp_path, capsys):
    failing = OR2 + """
def answer(a, b, base):  # right wherever registration looks (up to 1,000 digits), raises past 1,200
    if len(a) > 1200:
        raise ValueError("not past 1,200")
    return format(int(a, 2) | int(b, 2), "b")

TASKS = [dataclasses.replace(OR2, name="or2short", answer=answer)]
"""
    tasks = ("--tasks-file", tasks_file(tmp_path, failing))
    assert run(capsys, *tasks, "compile", "or2short", "--out", tmp_path / "model")[0] == 0
    code, out, err = run(capsys, *tasks, "eval", tmp_path / "model", "--digits", "5,10,1500", "--random", "2",
                         "--no-hard")
    assert_one_line_error(code, err, "evaluation stopped at 1,500 digits", "ValueError: not past 1,200")
    report = json.loads((tmp_path / "model" / "eval.json").read_text())
    assert [lv["digits"] for lv in report["levels"]] == [5, 10] and report["stopped_by"] == "error"
    assert "robust to 10 digits" in out

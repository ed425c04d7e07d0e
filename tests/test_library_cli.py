"""`dfst library list` and `dfst library run`: the machine's answers beside Python's, one-line errors."""

from __future__ import annotations

import pytest

from cli_helpers import assert_one_line_error, run, run_json


def test_list_names_every_program(capsys):
    names = {row["name"] for row in run_json(capsys, "library", "list")}
    assert {"add", "addc", "mulc", "fib", "sort", "add2"} <= names


def test_run_fib_gives_pythons_answer(capsys):
    a, b = 3, 4
    for _ in range(5):
        a, b = b, (a + b) % 128
    report = run_json(capsys, "library", "run", "fib", "--depth", "5", "--base", "128", "3", "4")
    assert report["interpreter"] == report["machine"] == report["python"] == b
    assert report["machine_one_hot"] and report["agree"]


def test_run_prints_the_three_answers(capsys):
    code, out, _ = run(capsys, "library", "run", "add2", "--base", "64", "987654", "123456")
    assert code == 0
    assert out.count(str(987654 + 123456)) == 3


@pytest.mark.parametrize("argv, fragment", [
    (("nope", "1"), "no library program 'nope'"),
    (("add", "1", "x"), "must be integers"),
    (("add", "1"), "takes 2 argument"),
    (("mulc", "--base", "12", "3", "4"), "power of two"),
    (("add", "--base", "5000", "1", "2"), "outside 2..1024"),
])
def test_errors_are_one_line(capsys, argv, fragment):
    code, _, err = run(capsys, "library", "run", *argv)
    assert_one_line_error(code, err, fragment)

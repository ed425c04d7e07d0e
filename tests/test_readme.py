"""README.md and the docs it links to say what the code does: the headline table equals the stored
results, the generated tables of docs/tables.md are current, every tour command works from an empty
directory, and the Python blocks run (reusing the tour's training run) and say what they claim."""

from __future__ import annotations

import contextlib
import glob
import io
import re
import shlex
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TABLES = ROOT / "docs" / "tables.md"

# The paper's Table 1 (DFST rows): PTOs, max training digits, parameters, robust LG reached.
PAPER = {"add2": ("20 (3)", "1,020", "3,850"), "add10": ("225 (3)", "8,900", "2,450"),
         "mult2": ("750 (5)", "5,280", "600"), "mult10": ("10,000 (5)", "162,108", "180")}


def section(text: str, heading: str) -> str:
    """The text of the section whose heading starts with `heading`, up to the next one."""
    return text.split(f"\n## {heading}", 1)[1].split("\n## ", 1)[0]


def table_rows(text: str) -> list[list[str]]:
    """The cells of a Markdown table's body rows."""
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def tour_commands() -> list[list[str]]:
    """The tour's commands as argv lists, comments dropped (two spaces before a # start one)."""
    block = blocks(section(README.read_text(), "A tour of the command line"), "sh")[0]
    return [shlex.split(re.split(r"\s{2,}#", line)[0]) for line in block.splitlines() if line.strip()]


# ----------------------------------------------------------------------------- figures


def test_the_headline_table_is_the_stored_results():
    """The block is what `dfst table --headline` writes from results/, every paper task has its
    paper row and a row per machine, and the machines' expert runs read are all recorded."""
    from dfst.results import load_results
    from dfst.studies.headline import MACHINES, MARK_END, MARK_START, headline_rows, markdown

    block = README.read_text().split(MARK_START, 1)[1].split(MARK_END, 1)[0]
    rows = headline_rows(load_results(ROOT / "results"))
    assert markdown(rows) in block
    tasks = [row["task"] for row in rows]
    assert list(dict.fromkeys(tasks)) == list(PAPER)
    assert all(tasks.count(t) == 1 + len(MACHINES) for t in PAPER)
    for row in rows:
        if row["what made the number"].startswith("the paper"):
            ptos, params, robust = PAPER[row["task"]]
            assert row["PTOs kept (digits)"].startswith(ptos.replace(" (", " (≤ "))
            assert row["size"] == f"{params} params" and row["robust LG (median, best)"].startswith(robust)
        else:
            assert row["expert runs read (digits)"] != "-"


def test_the_comparison_block_is_what_dfst_table_writes(tmp_path, monkeypatch):
    from dfst.results.tables import MARK_END, MARK_START, comparison

    copy = tmp_path / "tables.md"
    shutil.copy(TABLES, copy)
    monkeypatch.chdir(ROOT)
    comparison(Path("results"), copy)

    def table(path: Path) -> str:  # the rows, not the note above them (it names the file)
        block = path.read_text().split(MARK_START, 1)[1].split(MARK_END, 1)[0]
        return "\n".join(line for line in block.splitlines() if line.startswith("|"))
    assert table(copy) == table(TABLES)


def test_the_reproduce_block_is_what_dfst_reproduce_writes(tmp_path, monkeypatch):
    import dfst.studies.reproduce
    import dfst.studies.seeds
    from dfst.cli.reproduce import seed_plan

    def no_training(*args, **kwargs):
        raise AssertionError("the stored results are incomplete: reproduce would train")
    monkeypatch.setattr(dfst.studies.seeds, "train", no_training)
    plan = re.search(r"PLAN: `([^`]+)`", TABLES.read_text())[1]
    results = tmp_path / "dfst"
    shutil.copytree(ROOT / "results" / "dfst", results)
    rows = dfst.studies.reproduce.reproduce(seed_plan(plan, seeds=10, first_seed=0), tmp_path / "runs",
                                            results, accept_stored=True, warn=lambda note: None)
    copy = tmp_path / "tables.md"
    shutil.copy(TABLES, copy)
    dfst.studies.reproduce.write_readme(copy, rows)
    assert copy.read_text() == TABLES.read_text()


def test_the_readme_names_only_documents_that_exist():
    text = README.read_text()
    for link in re.findall(r"\]\(((?:docs|examples)/[^)#]+)\)", text):
        assert (ROOT / link).exists(), link
    for link in re.findall(r"\]\(([a-z_]+\.md)\)", (ROOT / "docs" / "tables.md").read_text()):
        assert (ROOT / "docs" / link).exists(), link


def test_the_import_lines_of_docs_tasks_work():
    text = (ROOT / "docs" / "tasks.md").read_text()
    lines = [line.split("#")[0] for block in blocks(text, "python") for line in block.splitlines()
             if line.startswith(("from dfst", "import dfst"))]
    assert any("Layout" in line for line in lines) and any("Instance" in line for line in lines)
    for line in lines:
        exec(line, {})


# ----------------------------------------------------------------------------- the tour, then the API


# The default suite runs the tour with every length past this many digits brought down to it: the same
# commands and checks without the minute a million-digit evaluation takes; `pytest -m slow` runs it as
# written.
QUICK_DIGITS = 1000


def quick(argv: list[str]) -> list[str]:
    """`argv` with each `--digits` list capped at QUICK_DIGITS (a length past it becomes QUICK_DIGITS)."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--digits":
            lengths = [min(int(n), QUICK_DIGITS) for n in out[i + 1].split(",")]
            out[i + 1] = ",".join(str(n) for n in dict.fromkeys(lengths))
    return out


def run_the_tour_and_the_api_blocks(tmp_path, monkeypatch, capsys, shorten) -> None:
    """Every tour command, as written (or shortened), from an empty directory (exit 0: each check holds);
    then the README's Python blocks in order in one namespace, where `train` finds the tour's finished run."""
    from dfst.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    commands = tour_commands()
    assert commands and all(argv[0] == "dfst" for argv in commands)
    assert ["dfst", "train", "add2", "--seed", "0", "--out", "runs/add2-s0"] in commands
    for argv in map(shorten, commands):
        args = [match for arg in argv[1:] for match in (sorted(glob.glob(arg)) if "*" in arg else [arg])]
        code = main(args)
        out, err = capsys.readouterr()
        assert code == 0, f"{shlex.join(argv)}: exit {code}\n{out[-2000:]}\n{err[-2000:]}"

    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for block in blocks(README.read_text(), "python"):
            exec(compile(block, "README.md", "exec"), namespace)
    proof = namespace["proof"]
    assert proof.verdict == "CERTIFIED" and proof.max_digits is not None and proof.max_digits >= 400
    lines = printed.getvalue().splitlines()
    assert lines[-2] == f"CERTIFIED {proof.max_digits}"
    assert lines[-1] == "CERTIFIED"  # the automaton read off: for every length


def test_the_tour_runs_from_an_empty_directory_and_the_api_blocks_say_what_they_claim(tmp_path, monkeypatch,
                                                                                      capsys):
    assert any(quick(argv) != argv for argv in tour_commands()), "nothing to shorten: drop QUICK_DIGITS"
    run_the_tour_and_the_api_blocks(tmp_path, monkeypatch, capsys, quick)


@pytest.mark.slow
def test_the_tour_as_written_runs_from_an_empty_directory(tmp_path, monkeypatch, capsys):
    run_the_tour_and_the_api_blocks(tmp_path, monkeypatch, capsys, list)


def test_quick_caps_only_the_lengths_past_the_cap():
    assert quick(["eval", "r", "--digits", "10,1000,100000"]) == ["eval", "r", "--digits", "10,1000"]
    assert quick(["dfst", "eval", "r", "--digits", "1000000"]) == ["dfst", "eval", "r", "--digits", "1000"]
    assert quick(["dfst", "certify", "r", "--digits", "400"]) == ["dfst", "certify", "r", "--digits", "400"]
    assert quick(["dfst", "tasks"]) == ["dfst", "tasks"]


@pytest.mark.parametrize("task", ["add2"])
def test_the_api_block_trains_what_dfst_train_trains(task):
    """`configure(task, {"seed": 0})`, the README's call, is `dfst train TASK --seed 0`'s config, and
    differs from the recipe `dfst reproduce` trains only in how the run is watched."""
    from dataclasses import asdict

    from dfst.train.config import GROUP_OF, flat_fields
    from dfst.train.recipes import WATCHING, configure, recipe

    cfg, set_by = configure(task, {"seed": 0})
    assert cfg.finetune and set_by["recipe"][task]["finetune"]
    ours, theirs = asdict(cfg), asdict(recipe(task, seed=0))
    assert ours.keys() == theirs.keys()
    differ = {f.name for f in flat_fields() if getattr(cfg, f.name) != getattr(recipe(task, seed=0), f.name)}
    assert {GROUP_OF[name] for name in differ} <= set(WATCHING)


def test_the_training_speed_table_is_docs_performance_md():
    """The README's iterations-per-second rows are docs/research/performance.md's measured ones (a table
    edit once pasted the headline's rows under this heading)."""
    text = README.read_text().split("| recipe | autograd it/s |", 1)[1].split("\n\n", 1)[0]
    readme_rows = table_rows("| recipe |" + text)
    measured = {row[0]: row for row in table_rows((ROOT / "docs" / "research" / "performance.md").read_text())
                if len(row) == 9}
    assert [row[0] for row in readme_rows] == ["add2", "add10", "mult2", "mult10", "div10x1"]
    for task, autograd, fused, ratio, share in readme_rows:
        assert (autograd, fused, ratio, share) == tuple(measured[task][i] for i in (4, 5, 6, 8))

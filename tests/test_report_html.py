"""`dfst report --html`: the page's tables hold the numbers of the result files, its animations are
the expert's runs, it fetches nothing, and its directory is written under dfst's safety rules.

No browser here (tests/test_report_html_browser.py opens the page in Chromium: `make test-browser`).
The numbers are checked against the JSON files read with the standard library, not through dfst.
"""

from __future__ import annotations

import json
import shutil
import statistics
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import assert_one_line_error, run
from dfst.grid.world import Outcome, run_agent
from dfst.studies.html import build_report
from dfst.studies.html.animation import animated_instance, animation
from dfst.tasks import TASKS

RESULTS = Path(__file__).resolve().parents[1] / "results"
MAX_BYTES = 5 * 1024 * 1024


class PageParser(HTMLParser):
    """The tables (rows of {column: text} with the row's data-system and data-task), the frames JSON
    of each animation, and every src/href."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[dict]] = defaultdict(list)
        self.frames: dict[str, str] = {}
        self.links: list[str] = []
        self._table = self._row = self._column = self._anim = None
        self._text: list[str] = []
        self._in_frames = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.links += [a[k] for k in ("src", "href") if k in a]
        if tag == "table" and a.get("id", "").startswith("table-"):
            self._table = a["id"].removeprefix("table-")
        elif tag == "tr" and self._table and "data-system" in a:
            self._row = {"_system": a["data-system"], "_task": a["data-task"]}
        elif tag == "td" and self._row is not None:
            self._column, self._text = a["data-column"], []
        elif tag == "figure" and "anim" in a.get("class", ""):
            self._anim = a["id"].removeprefix("anim-")
        elif tag == "script" and a.get("class") == "frames":
            self._in_frames, self._text = True, []

    def handle_endtag(self, tag):
        if tag == "td" and self._column:
            self._row[self._column], self._column = "".join(self._text), None
        elif tag == "tr" and self._row is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "script" and self._in_frames:
            self.frames[self._anim], self._in_frames = "".join(self._text), False

    def handle_data(self, data):
        if self._column or self._in_frames:
            self._text.append(data)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report of the repository's results, with no runs directory (a fresh clone)."""
    out = tmp_path_factory.mktemp("site") / "report"
    page, material = build_report(RESULTS, out.parent / "no-runs", out)
    text = page.read_text()
    parser = PageParser()
    parser.feed(text)
    return text, parser, material


def stored_results() -> dict[tuple[str, str], list[dict]]:
    """Every result file under results/, read as plain JSON, by (system, task)."""
    groups = defaultdict(list)
    for path in RESULTS.rglob("*.json"):
        data = json.loads(path.read_text())
        is_result = data.get("format") == "dfst-result" if "format" in data else "system" in data
        if is_result:
            groups[(data["system"], data["task"])].append(data)
    return groups


def numbers(text: str) -> list[float]:
    """The numbers in a cell, in order: "100,000 (1,000.5)" -> [100000, 1000.5]."""
    words = text.replace("(", " ").replace(")", " ").replace(",", "").split()
    return [float(w) for w in words if w.replace(".", "", 1).isdigit()]


def test_the_comparison_table_holds_every_result_files_numbers(report):
    _, parser, _ = report
    groups = stored_results()
    rows = {(r["_system"], r["_task"]): r for r in parser.tables["comparison"]}
    assert set(rows) == set(groups)
    for key, files in groups.items():
        row = rows[key]
        robust = [f["robust_lg"] for f in files]
        probabilistic = [f["probabilistic_lg"] for f in files]
        assert int(row["seeds"]) == len(files)
        assert numbers(row["robust LG"]) == [max(robust), statistics.median(robust)], key
        assert numbers(row["probabilistic LG"]) == [max(probabilistic), statistics.median(probabilistic)], key
        assert numbers(row["params"]) == [statistics.median(f["params"] for f in files)], key
        assert float(row["train s"]) == round(statistics.median(f["train_seconds"] for f in files), 1), key


def test_the_reproduce_table_holds_the_dfst_seeds(report):
    _, parser, _ = report
    groups = stored_results()
    rows = parser.tables["reproduce"]
    assert {r["_task"] for r in rows} == {task for system, task in groups if system == "DFST"}
    for row in rows:
        files = groups[(row["_system"], row["_task"])]
        robust = [f["robust_lg"] for f in files]
        assert int(row["seeds"]) == len(files)
        assert numbers(row["robust LG (median, min)"]) == [round(statistics.median(robust)), min(robust)]
        successes, seeds = row["robust at target"].split(" at ")[0].split("/")
        target = int(row["robust at target"].split(" at ")[1].replace(",", ""))
        assert (int(successes), int(seeds)) == (sum(r >= target for r in robust), len(files))


def test_each_animation_is_the_experts_run_on_its_instance(report):
    _, parser, material = report
    registered = [t.name for t in material.tasks if t.name in TASKS]
    assert set(parser.frames) == set(registered) and registered
    for name in registered:
        data = json.loads(parser.frames[name])
        task = TASKS[name]
        instance = animated_instance(task)
        layout = task.layout(instance)
        reference = run_agent(task.agent, layout, task.max_steps(instance))  # the unbounded simulator
        first, last = data["frames"][0], data["frames"][-1]
        assert reference.outcome == Outcome.HALTED and data["outcome"] == "halted"
        np.testing.assert_array_equal(np.array(first["cells"]), layout.cells)
        assert tuple(first["head"]) == layout.head and first["state"] == task.agent.initial
        np.testing.assert_array_equal(np.array(last["cells"]), reference.grid.to_array(layout.cells.shape))
        assert last["halted"] and tuple(last["head"]) == reference.head
        assert len(data["frames"]) == reference.steps + 1 == data["steps"] + 1
        assert data["answer"] == data["expected"] == task.expected(instance)


def test_the_added_numbers_are_pythons():
    """The animated add2 instance's answer on the page is the sum Python's integers give."""
    task = TASKS["add2"]
    instance = animated_instance(task)
    data = animation(task, task.agent, "the expert")
    assert int(data["answer"], 2) == int(instance.a, 2) + int(instance.b, 2)
    assert data["instance"] == f"{instance.a} + {instance.b}"


def test_the_page_fetches_nothing_and_is_small(report):
    text, parser, _ = report
    assert len(text.encode()) < MAX_BYTES
    assert parser.links and all(link.startswith(("#", "data:")) for link in parser.links)
    assert "<link" not in text and "@import" not in text and "url(http" not in text


def test_the_page_says_what_is_missing(report):
    text, _, material = report
    assert any("no training runs" in note for note in material.missing)
    assert 'id="missing"' in text and "no training runs" in text


def _fake_run(runs: Path, task: str, seed: int) -> None:
    """A run directory as dfst reproduce leaves it, with what the report reads: the metrics log and
    an extracted automaton (the expert's own JSON, under another name)."""
    run = runs / task / f"s{seed}"
    (run / "extracted").mkdir(parents=True)
    records = [{"iteration": i, "loss": 1.0 / i} for i in (100, 200)]
    records.append({"iteration": 200, "eval": {"robust_max_digits": 10, "levels": [
        {"digits": 10, "instances": 3, "exact": 3, "robust": True}]}})
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    agent = TASKS[task].agent.to_dict() | {"name": "read-off"}
    (run / "extracted" / "agent.json").write_text(json.dumps(agent))


def test_runs_add_training_curves_and_the_extracted_automaton(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    for path in RESULTS.glob("dfst/add2-*s0.json"):
        shutil.copy(path, results)
    _fake_run(tmp_path / "runs", "add2", 3)
    page, material = build_report(results, tmp_path / "runs", tmp_path / "site")
    text = page.read_text()
    assert [t.name for t in material.tasks] == ["add2"] and material.tasks[0].extracted.seed == 3
    assert 'alt="add2: training"' in text and 'id="extracted-add2"' in text
    assert "read off seed 3&#x27;s trained DFST" in text and material.missing == []


def test_the_directory_is_refused_unless_it_is_dfsts_own_report(tmp_path, capsys):
    out = tmp_path / "site"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, _, err = run(capsys, "report", "--html", out, "--results", RESULTS, "--force")
    assert_one_line_error(code, err, "notes.txt", "holds no dfst report")
    assert (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]

    fresh = tmp_path / "fresh"
    (tmp_path / "results").mkdir()
    shutil.copy(RESULTS / "dfst" / "parity2-s0.json", tmp_path / "results")
    args = ("report", "--html", fresh, "--results", tmp_path / "results", "--runs", tmp_path / "none")
    code, out_text, err = run(capsys, *args)
    assert code == 0 and "wrote" in out_text and "no training runs" in err
    code, _, err = run(capsys, *args)
    assert_one_line_error(code, err, "already holds a dfst report", "--force")
    assert run(capsys, *args, "--force")[0] == 0

    (fresh / "index.html").write_text("<html>a page of my own</html>")  # no marker: not dfst's
    code, _, err = run(capsys, *args, "--force")
    assert_one_line_error(code, err, "holds no dfst report")
    assert (fresh / "index.html").read_text() == "<html>a page of my own</html>"


def test_the_command_line_of_report(tmp_path, capsys):
    code, _, err = run(capsys, "report")
    assert_one_line_error(code, err, "--html DIR")
    code, _, err = run(capsys, "report", "--html", tmp_path / "s", tmp_path)
    assert_one_line_error(code, err, "give no checkpoints")
    code, _, err = run(capsys, "report", "--html", tmp_path / "s", "--results", tmp_path / "nope")
    assert_one_line_error(code, err, "does not exist")
    assert not (tmp_path / "s").exists()
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    code, _, err = run(capsys, "report", "--html", link, "--results", RESULTS)
    assert_one_line_error(code, err, "symbolic link")


def _own_run(run: Path, *, finished: bool = True, tuned: bool = True) -> None:
    """A dfst train run directory as a user's --out leaves it, with what the report reads (no training)."""
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"format": "dfst-train-run", "version": 1}))
    level = {"digits": 10, "instances": 5, "exact": 2, "robust": False}
    records = [{"iteration": 100, "loss": 0.1},
               {"iteration": 100, "eval": {"robust_max_digits": 0, "levels": [level]}}]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if not finished:
        return
    passing = [{"digits": n, "instances": 5, "exact": 5, "robust": True} for n in (10, 100)]
    summary = {"task": "add2", "samples": 20, "d": 6, "params": 258, "iterations": 100, "seconds": 1.0,
               "cpu_seconds": 1.0, "final_loss": 0.1,
               "eval": {"robust_max_digits": 0, "probabilistic_max_digits": 0, "levels": [level]}}
    if tuned:
        summary["finetune"] = {"d": [6, 8], "eval_plain": {"robust_max_digits": 100,
                                                          "probabilistic_max_digits": 100, "levels": passing}}
    (run / "summary.json").write_text(json.dumps(summary))


def test_the_users_own_runs_are_shown_or_said_why_not(tmp_path, capsys):
    """--runs DIR of a user's dfst train runs (any depth), with no stored results: each finished run
    is a row (the model it delivers) and a curve; every other run is one line saying why not."""
    runs = tmp_path / "mine"
    _own_run(runs / "first")
    _own_run(runs / "deeper" / "second", tuned=False)
    _own_run(runs / "unfinished", finished=False)
    (runs / "junk").mkdir()
    (runs / "junk" / "summary.json").write_text("{}")
    args = ("report", "--html", tmp_path / "site", "--results", tmp_path / "none", "--runs", runs)
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert sorted(Path(p).name for p in shown["runs"]) == ["first", "second"]
    left_out = [n for n in shown["missing"] if n.startswith("run ")]
    assert len(left_out) == 2 and any("unfinished" in n and "not finished" in n for n in left_out)
    assert any("junk" in n and "not a dfst train run" in n for n in left_out)
    parser = PageParser()
    parser.feed((tmp_path / "site" / "index.html").read_text())
    rows = {r["run"]: r for r in parser.tables["own-runs"]}
    assert set(rows) == {"first", "deeper/second"}
    assert rows["first"]["model"] == "fine-tuned" and rows["first"]["robust LG (model)"] == "100"
    assert rows["first"]["robust LG (trained, before fine-tuning)"] == "none: fails at 10"
    assert rows["deeper/second"]["robust LG (model)"] == "none: fails at 10"
    code, out, err = run(capsys, *args, "--force")
    assert code == 0 and "2 training runs of your own" in out and err.count("left out") == 2

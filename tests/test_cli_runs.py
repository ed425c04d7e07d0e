"""`dfst report-runs` and `dfst plot-runs` over tiny training runs."""

from __future__ import annotations

from cli_helpers import TRAIN_ADD2, assert_one_line_error, run, run_json

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_report_and_plot_runs(capsys, tmp_path):
    runs = []
    for seed in (0, 1):
        out = tmp_path / f"r{seed}"
        run_json(capsys, *TRAIN_ADD2, "--out", out, "--seed", str(seed), "--iters", "20",
                 "--eval-every", "10", "--eval-digits", "3", "--noise", "0.05", "--log-every", "5")
        runs.append(out)
    rows = run_json(capsys, "report-runs", *runs)
    assert [r["run"] for r in rows] == ["r0", "r1"]
    assert all(r["iterations"] == 20 and r["samples"] == 20 and r["robust LG (model)"] in (0, 3)
               for r in rows)
    assert all(r["task"] == "add2" and r["CPU seconds"] > 0 for r in rows)
    code, out, _ = run(capsys, "report-runs", *runs, "--markdown")
    assert code == 0 and out.count("\n") == 4 and out.startswith("| run | task |")
    code, out, _ = run(capsys, "report-runs", *runs, "--csv")
    assert code == 0 and out.splitlines()[0].startswith("run,task,samples") and len(out.splitlines()) == 3
    png = tmp_path / "runs.png"
    assert run(capsys, "plot-runs", *runs, "--out", png)[0] == 0
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_report_runs_rejects_a_non_run(capsys, tmp_path):
    code, _, err = run(capsys, "report-runs", tmp_path)
    assert_one_line_error(code, err, "summary.json")


def test_plot_runs_labels_runs_of_the_same_name_apart():
    from pathlib import Path

    from dfst.cli.runs import run_labels

    runs = [Path("sweep/a/s0"), Path("sweep/b/s0"), Path("other/c")]
    assert run_labels(runs) == ["a/s0", "b/s0", "other/c"]
    assert run_labels([Path("r1"), Path("r2")]) == ["r1", "r2"]
    assert run_labels([Path("runs/s0"), Path("runs/s0")]) == ["s0 (1)", "s0 (2)"]


def test_plot_runs_draws_the_automaton_read_off_too(tmp_path, monkeypatch):
    from dfst.results import plots

    level = {"digits": 3, "exact": 5, "instances": 5}
    records = [{"iteration": 10, "loss": 0.1},
               {"iteration": 10, "eval": {"robust_max_digits": 0, "levels": [level],
                                          "extracted": {"robust_max_digits": 100}}}]
    drawn, subplots = [], plots.plt.subplots
    monkeypatch.setattr(plots.plt, "subplots", lambda *a, **k: drawn.append(subplots(*a, **k)) or drawn[-1])
    plots.plot_training_runs({"a/s0": records, "b/s0": records}, tmp_path / "f.png")
    lg_axis = drawn[0][1][1]
    ys = [list(line.get_ydata()) for line in lg_axis.get_lines()]
    assert ys == [[1], [100], [1], [100]]  # per run: the weights (none: drawn at 1), then the automaton


def test_plot_runs_draws_the_model_a_run_delivers(tmp_path, monkeypatch):
    """A fine-tuned run whose training weights never passed is drawn flat at 1, and the model it
    delivers (the fine-tuned weights) as a star at its robust length, labelled as such."""
    from dfst.results import Result, plots

    level = {"digits": 10, "exact": 2, "instances": 5, "robust": False}
    records = [{"iteration": 10, "loss": 0.1},
               {"iteration": 10, "eval": {"robust_max_digits": 0, "levels": [level]}}]
    delivered = Result(system="DFST", task="add2", seed=None, samples=20, params=1, max_train_digits=None,
                       robust_lg=100_000, probabilistic_lg=100_000, train_seconds=1.0, hardware=None,
                       levels=[level | {"digits": 100_000, "robust": True}],
                       details={"iterations": 10, "model": "fine-tuned", "tested_by": "dfst eval (plain h)"})
    drawn, subplots = [], plots.plt.subplots
    monkeypatch.setattr(plots.plt, "subplots", lambda *a, **k: drawn.append(subplots(*a, **k)) or drawn[-1])
    plots.plot_training_runs({"r": records}, tmp_path / "f.png", {"r": delivered})
    lg_axis = drawn[0][1][1]
    drawn_ys = [list(line.get_ydata()) for line in lg_axis.get_lines()]
    assert [ys for ys in drawn_ys if ys] == [[1], [100_000]]  # the weights before, then the delivered
    labels = [t.get_text() for t in lg_axis.texts]
    assert labels == ["fine-tuned: 100,000 (dfst eval)"]
    assert "before any fine-tuning" in lg_axis.get_title()

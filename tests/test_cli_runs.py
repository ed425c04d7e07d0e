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
    assert all(r["iterations"] == 20 and r["samples"] == 20 and r["robust LG"] in (0, 3) for r in rows)
    code, out, _ = run(capsys, "report-runs", *runs, "--markdown")
    assert code == 0 and out.count("\n") == 4 and out.startswith("| run |")
    png = tmp_path / "runs.png"
    assert run(capsys, "plot-runs", *runs, "--out", png)[0] == 0
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_report_runs_rejects_a_non_run(capsys, tmp_path):
    code, _, err = run(capsys, "report-runs", tmp_path)
    assert_one_line_error(code, err, "summary.json")

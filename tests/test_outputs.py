"""Outputs: dfst never writes through or over a link, FIFO or device, never replaces a user's file,
and --force replaces only what carries dfst's marker. Every case runs in a temporary directory and
checks that what existed before is unchanged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_helpers import TRAIN_ADD2, assert_one_line_error, run, run_json
from dfst.errors import DfstError
from dfst.io.outputs import check_output_file, is_dfst_file, write_atomic


@pytest.fixture
def expert(capsys, tmp_path) -> Path:
    out = tmp_path / "expert"
    run_json(capsys, "compile", "add2", "--out", out)
    return out


@pytest.fixture
def agent_file(capsys, tmp_path) -> Path:
    path = tmp_path / "agent.json"
    assert run(capsys, "agent", "add2", "--out", path)[0] == 0
    return path


def _user_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text("the user's own work\n")
    return path


def _outputs(expert: Path, agent_file: Path) -> dict[str, list]:
    """Each command that writes a named file, as argv without --out."""
    return {"certificate.json": ["certify", expert], "figure.png": ["plot-runs", expert],
            "agent.dot": ["show", agent_file], "data.pto.zip": ["data", "add2", "--samples", "2"],
            "expert.json": ["agent", "add2"]}


def test_existing_user_files_are_never_replaced(capsys, tmp_path, expert, agent_file):
    for name, argv in _outputs(expert, agent_file).items():
        path = _user_file(tmp_path, name)
        code, _, err = run(capsys, *argv, "--out", path)
        assert_one_line_error(code, err, str(path), "already exists")
        code, _, err = run(capsys, *argv, "--out", path, "--force")
        assert_one_line_error(code, err, str(path), "not written by dfst")
        assert path.read_text() == "the user's own work\n"


def test_force_replaces_dfst_own_files(capsys, tmp_path, agent_file):
    for argv, name in ((["show", agent_file], "a.dot"), (["agent", "add2", "--dot"], "b.dot"),
                       (["data", "add2", "--samples", "2"], "c.pto.zip")):
        path = tmp_path / name
        assert run(capsys, *argv, "--out", path)[0] == 0
        assert is_dfst_file(path)
        assert run(capsys, *argv, "--out", path, "--force")[0] == 0


def test_links_fifos_and_devices_are_never_outputs(capsys, tmp_path, agent_file):
    target = _user_file(tmp_path, "target.dot")
    link = tmp_path / "link.dot"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.dot"
    os.mkfifo(fifo)
    for path, kind in ((link, "symbolic link"), (fifo, "FIFO"), (Path("/dev/null"), "character device")):
        for force in ([], ["--force"]):
            code, _, err = run(capsys, "show", agent_file, "--out", path, *force)
            assert_one_line_error(code, err, kind)
    assert link.is_symlink() and target.read_text() == "the user's own work\n"
    assert Path(fifo).exists() and not Path(fifo).is_file()


def test_write_atomic_refuses_links_and_leaves_no_temporary_file(tmp_path):
    target = _user_file(tmp_path, "t")
    (tmp_path / "l").symlink_to(target)
    with pytest.raises(DfstError, match="symbolic link"):
        write_atomic(tmp_path / "l", b"x")
    write_atomic(tmp_path / "new", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l", "new", "t"]


def test_check_output_file_needs_an_existing_parent(tmp_path):
    with pytest.raises(DfstError, match="does not exist"):
        check_output_file(tmp_path / "missing" / "f.json")


def test_checkpoint_force_never_replaces_a_directory_with_other_files(capsys, tmp_path, expert):
    mine = _user_file(expert, "notes.txt")
    code, _, err = run(capsys, "compile", "add2", "--out", expert, "--force")
    assert_one_line_error(code, err, "notes.txt", "which no dfst checkpoint wrote")
    assert mine.read_text() == "the user's own work\n"
    users = tmp_path / "users"
    users.mkdir()
    _user_file(users, "model.safetensors")
    code, _, err = run(capsys, "compile", "add2", "--out", users, "--force")
    assert_one_line_error(code, err, "holds no dfst checkpoint")
    assert (users / "model.safetensors").read_text() == "the user's own work\n"


def test_eval_refuses_a_report_path_that_is_a_directory_before_any_work(capsys, expert):
    run_json(capsys, "eval", expert, "--digits", "3", "--random", "1")
    before = (expert / "eval.json").read_bytes()
    (expert / "eval.png").unlink()
    (expert / "eval.png").mkdir()
    code, _, err = run(capsys, "eval", expert, "--digits", "3", "--random", "1")
    assert_one_line_error(code, err, "eval.png", "directory")
    assert (expert / "eval.json").read_bytes() == before


def test_eval_of_a_read_only_checkpoint_prints_its_result(capsys, expert, monkeypatch):
    monkeypatch.setattr("dfst.protocol.eval_files.writable_directory", lambda _: False)  # root ignores chmod
    code, out, err = run(capsys, "eval", expert, "--digits", "3", "--random", "1", "--json")
    assert code == 0 and json.loads(out)["robust_max_digits"] == 3
    assert "not writable" in err and not (expert / "eval.json").exists()


def test_eval_whose_save_fails_still_prints_its_result(capsys, expert, monkeypatch):
    def refuse(*_a, **_k):
        raise DfstError("cannot write: Read-only file system")

    monkeypatch.setattr("dfst.protocol.eval_files.write_report", refuse)
    code, out, err = run(capsys, "eval", expert, "--digits", "3", "--random", "1", "--json")
    assert code == 0 and json.loads(out)["robust_max_digits"] == 3 and "not saved" in err


@pytest.mark.parametrize("out", ["figure.xyz", "missing/figure.png"])
def test_plot_runs_bad_out_is_one_line(capsys, tmp_path, expert, out):
    code, _, err = run(capsys, "plot-runs", expert, "--out", tmp_path / out)
    assert_one_line_error(code, err, "figure")


def test_report_commands_name_a_missing_field(capsys, tmp_path, expert):
    run_json(capsys, "eval", expert, "--digits", "3", "--random", "1")
    from dfst.io.run_guard import write_recorded

    report = json.loads((expert / "eval.json").read_text())
    del report["levels"]
    (expert / "eval.json").write_text(json.dumps(report))  # by hand: not what dfst wrote
    code, _, err = run(capsys, "report", expert)
    assert_one_line_error(code, err, "eval.json", "changed since dfst wrote it")
    write_recorded(expert, "eval.json", json.dumps(report).encode())  # as a dfst that lacked the field
    code, _, err = run(capsys, "report", expert)
    assert_one_line_error(code, err, "eval.json", "'levels'")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "summary.json").write_text(json.dumps({"samples": 3}))
    code, _, err = run(capsys, "report-runs", run_dir)
    assert_one_line_error(code, err, "summary.json", "'d'")


@pytest.mark.parametrize("argv", [
    ["eval", "none"], ["solve", "add2", "12", "1"], ["certify", "."], ["replay", "none"],
    ["data", "--inspect", "none.zip"], ["compile", "nope", "--out", "x"], [*TRAIN_ADD2, "--out", "r",
    "--seed", "-1"], ["reproduce", "--tasks", "nope"], ["report", "none"], ["report-runs", "none"],
    ["coverage", "add2"], ["extract", "none", "--out", "x"], ["check-certificate", "none", "none"],
    ["table", "--results", "none"], ["baseline", "nope", "add2"], ["solve", "add2", "--random", "0"],
])
def test_json_stays_json_on_errors(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv, "--json")
    assert code == 2 and json.loads(out)["exit_code"] == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and err.startswith("dfst: error:")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing was written


def test_version(capsys):
    from dfst import __version__

    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"dfst {__version__}"


def test_a_parent_that_is_a_file_is_named_as_such(tmp_path):
    _user_file(tmp_path, "f")
    with pytest.raises(DfstError, match="f is not a directory"):
        check_output_file(tmp_path / "f" / "x.png")

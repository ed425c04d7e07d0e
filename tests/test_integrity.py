"""Corruption is never scored as a model (issue 54, item 4): every reader of a run or checkpoint checks
what it reads against the sha256 dfst recorded (dfst.io.recorded), and refuses a changed file with
exit code 2 naming it, writing nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import assert_one_line_error, run

# every file a finished run without fine-tuning records; the fixture checks that this is the manifest
RUN_FILES = ("config.json", "data.pto.zip", "validation.pto.zip", "summary.json", "train_state.safetensors",
             "model/config.json", "model/model.safetensors",
             "extracted/config.json", "extracted/model.safetensors", "extracted/agent.json")


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def flip(path: Path, at: float = 0.5) -> None:
    """One bit of one byte changed: the size stays, and JSON usually still parses."""
    raw = bytearray(path.read_bytes())
    i = int(len(raw) * at)
    raw[i] ^= 0x01
    path.write_bytes(bytes(raw))


@pytest.fixture(scope="module")
def made_run(tmp_path_factory) -> Path:
    from dfst.train import TrainConfig, train

    out = tmp_path_factory.mktemp("run") / "R"
    cfg = TrainConfig(samples=4, max_digits=2, iters=6, restarts=1, eval_every=0, finetune=False)
    train(cfg, out, command="test")
    listed = json.loads((out / "manifest.json").read_text())["files"]
    assert sorted(listed) == sorted(RUN_FILES)  # a new kind of file gets a case below
    return out


@pytest.fixture
def a_run(made_run, tmp_path) -> Path:
    out = tmp_path / "R"
    shutil.copytree(made_run, out)
    return out


def readers(run_dir: Path, scratch: Path) -> dict[str, tuple]:
    """Every command that reads a run, with outputs (if any) outside it, under `scratch`."""
    return {
        "eval": ("eval", run_dir, "--digits", "1,2"),
        "eval-extracted": ("eval", run_dir, "--extracted", "--digits", "1,2"),
        "certify": ("certify", run_dir, "--out", scratch / "cert.json"),
        "certify-extracted": ("certify", run_dir, "--extracted"),
        "extract": ("extract", run_dir, "--out", scratch / "X"),
        "replay": ("replay", run_dir),
        "report-runs": ("report-runs", run_dir),
        "plot-runs": ("plot-runs", run_dir, "--out", scratch / "p.png"),
        "finetune": ("finetune", run_dir, "--out", scratch / "F", "--centre-iters", "1"),
    }


@pytest.mark.parametrize("command", list(readers(Path(), Path())))
@pytest.mark.parametrize("name", RUN_FILES)
def test_a_changed_file_of_a_run_is_refused_by_every_reader(capsys, a_run, tmp_path, name, command):
    flip(a_run / name)
    (tmp_path / "out").mkdir()
    before = tree(tmp_path)
    code, _, err = run(capsys, *readers(a_run, tmp_path / "out")[command])
    assert_one_line_error(code, err, str(a_run / name), "changed since dfst wrote it", "manifest.json")
    assert tree(tmp_path) == before  # nothing written, in the run or beside it


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "manifest.json"])
@pytest.mark.parametrize("command", ["eval", "certify", "replay"])
def test_a_changed_file_of_a_checkpoint_is_refused(capsys, a_run, name, command):
    """The checkpoint path itself (RUN/model), as a user copies it out of the run."""
    checkpoint = a_run / "model"
    flip(checkpoint / name)
    code, _, err = run(capsys, command, checkpoint)
    assert_one_line_error(code, err, str(checkpoint / name), "changed since dfst wrote it")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> tuple[Path, Path]:
    """A compiled add2 checkpoint (its own manifest) and a certificate of it."""
    from dfst.cli import main

    root = tmp_path_factory.mktemp("compiled")
    assert main(["compile", "add2", "--out", str(root / "C")]) == 0
    assert main(["certify", str(root / "C"), "--out", str(root / "cert.json")]) == 0
    return root / "C", root / "cert.json"


@pytest.mark.parametrize("name", ["config.json", "model.safetensors"])
def test_check_certificate_refuses_a_changed_checkpoint(capsys, compiled, tmp_path, name):
    checkpoint = tmp_path / "C"
    shutil.copytree(compiled[0], checkpoint)
    code, _, _ = run(capsys, "check-certificate", compiled[1], checkpoint)
    assert code == 0
    flip(checkpoint / name, 0.9)  # (the weights' last bytes: the tensors, not the header)
    code, _, err = run(capsys, "check-certificate", compiled[1], checkpoint)
    assert_one_line_error(code, err, str(checkpoint / name), "changed since dfst wrote it")


def test_an_intact_run_and_checkpoint_are_read_without_a_word(capsys, a_run, compiled):
    code, _, err = run(capsys, "report-runs", a_run)
    assert code == 0 and "warning" not in err
    code, _, err = run(capsys, "check-certificate", compiled[1], compiled[0])
    assert code == 0 and err == ""


def test_a_checkpoint_without_a_manifest_is_read_with_one_warning(capsys, compiled, tmp_path):
    """Written by hand or by an older dfst: nothing to check against, said once, and scored."""
    checkpoint = tmp_path / "C"
    shutil.copytree(compiled[0], checkpoint)
    (checkpoint / "manifest.json").unlink()
    config = json.loads((checkpoint / "config.json").read_text())
    del config["manifest"]
    (checkpoint / "config.json").write_text(json.dumps(config))
    code, _, err = run(capsys, "check-certificate", compiled[1], checkpoint)
    assert code == 0
    warnings = [line for line in err.splitlines() if "cannot be checked" in line]
    assert len(warnings) == 1 and warnings[0].startswith("dfst: warning:") and str(checkpoint) in warnings[0]


@pytest.mark.parametrize("damage", ["missing", "garbage", "not-a-manifest"])
def test_a_lost_or_damaged_manifest_is_refused(capsys, compiled, a_run, tmp_path, damage):
    checkpoint = tmp_path / "C"
    shutil.copytree(compiled[0], checkpoint)
    for directory in (checkpoint, a_run):
        manifest = directory / "manifest.json"
        if damage == "missing":
            manifest.unlink()
        else:
            manifest.write_text("{ not json" if damage == "garbage" else '{"format": "something else"}')
    code, _, err = run(capsys, "eval", checkpoint)
    assert_one_line_error(code, err, str(checkpoint / "manifest.json"))
    code, _, err = run(capsys, "report-runs", a_run)
    assert_one_line_error(code, err, str(a_run / "manifest.json"))


def test_a_manifest_entry_removed_is_refused(capsys, a_run):
    """Editing the manifest to drop a file's entry does not make the changed file pass."""
    manifest = a_run / "model" / "manifest.json"
    body = json.loads(manifest.read_text())
    del body["files"]["model.safetensors"]
    manifest.write_text(json.dumps(body))
    code, _, err = run(capsys, "eval", a_run / "model")
    assert code == 2 and "manifest.json" in err


def test_a_user_manifest_json_beside_a_checkpoint_is_left_alone(capsys, compiled, tmp_path):
    """Another program's manifest.json in the directory above a checkpoint is none of dfst's."""
    (tmp_path / "manifest.json").write_text('{"name": "my web app"}')
    shutil.copytree(compiled[0], tmp_path / "C")
    code, _, err = run(capsys, "check-certificate", compiled[1], tmp_path / "C")
    assert code == 0 and err == ""


def test_a_damaged_run_can_still_be_started_over(capsys, a_run):
    """--force decides the run is dfst's without trusting its files: a damaged run is replaced."""
    config = a_run / "config.json"
    config.write_text(config.read_text().replace('"command": "test"', '"command": "tested"'))
    code, _, err = run(capsys, "train", "add2", "--no-finetune", "--iters", "2", "--restarts", "1",
                       "--eval-every", "0", "--samples", "4", "--max-digits", "2", "--no-extract",
                       "--force", "--out", a_run, "--json")
    assert code == 0, err
    code, _, _ = run(capsys, "report-runs", a_run)
    assert code == 0


def test_evals_reports_are_recorded_and_a_changed_one_is_refused(capsys, a_run):
    """report-runs shows what dfst eval measured of RUN/model, and replay reruns its saved failure:
    both come from files dfst eval records in the checkpoint's manifest as it writes them."""
    code, _, _ = run(capsys, "eval", a_run, "--digits", "1,2")
    assert code in (0, 1)
    listed = json.loads((a_run / "model" / "manifest.json").read_text())["files"]
    written = [n for n in ("eval.json", "first_failure.json") if (a_run / "model" / n).exists()]
    assert "eval.json" in written and sorted(set(written) & set(listed)) == sorted(written)
    assert run(capsys, "report-runs", a_run)[0] == 0
    for name, command in (("eval.json", "report-runs"), ("first_failure.json", "replay")):
        if name in written:
            kept = (a_run / "model" / name).read_bytes()
            flip(a_run / "model" / name)
            code, _, err = run(capsys, command, a_run)
            last = err.strip().splitlines()[-1]  # (replay says first which model it uses)
            assert code == 2 and last.startswith("dfst: error:") and name in last and "changed since" in last
            (a_run / "model" / name).write_bytes(kept)

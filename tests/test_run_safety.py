"""Runs never lose a user's file (issue 14, part 5): --force, the lock, the manifest, reproduce keys,
checked training data and options, and kill -9 at any moment."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import TRAIN_ADD2, assert_one_line_error, hold_in_subprocess, run, run_json, run_verdict_json

# d fixed: these tests are about files, and a run that grows d trains up to five times
QUICK = ("--iters", "6", "--restarts", "1", "--eval-every", "0", "--samples", "4", "--max-digits", "2",
         "--d", "4")
ROUNDS = ("--until-certified", "--max-rounds", "1", *QUICK)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` and its bytes (to show that nothing changed)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- --force


def test_until_certified_force_refuses_a_directory_with_user_files(capsys, tmp_path):
    out = tmp_path / "D"
    run_verdict_json(capsys, *TRAIN_ADD2, *ROUNDS, "--out", out)
    (out / "notes.txt").write_text("mine")
    before = tree(out)
    code, _, err = run(capsys, *TRAIN_ADD2, *ROUNDS, "--force", "--out", out)
    assert_one_line_error(code, err, str(out / "notes.txt"), "nothing was removed")
    assert tree(out) == before


def test_until_certified_force_in_the_working_directory_keeps_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("keep.txt").write_text("mine")
    code, _, err = run(capsys, *TRAIN_ADD2, *ROUNDS, "--force", "--out", ".")
    assert_one_line_error(code, err, "keep.txt")
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


def test_until_certified_force_replaces_only_its_own_rounds(capsys, tmp_path):
    out = tmp_path / "D"
    run_verdict_json(capsys, *TRAIN_ADD2, *ROUNDS, "--out", out)
    old = (out / "round0" / "config.json").read_bytes()
    report = run_verdict_json(capsys, *TRAIN_ADD2, *ROUNDS[:-1], "7", "--force", "--out", out)
    assert report["rounds"][0]["round"] == 0 and sorted(os.listdir(out)) == ["round0", "rounds.json"]
    assert (out / "round0" / "config.json").read_bytes() != old  # trained again with --iters 7


def test_until_certified_force_refuses_a_round_holding_a_user_file(capsys, tmp_path):
    out = tmp_path / "D"
    run_verdict_json(capsys, *TRAIN_ADD2, *ROUNDS, "--out", out)
    (out / "round0" / "mine.txt").write_text("mine")
    before = tree(out)
    code, _, err = run(capsys, *TRAIN_ADD2, *ROUNDS, "--force", "--out", out)
    assert_one_line_error(code, err, str(out / "round0"))
    assert tree(out) == before


def test_train_force_removes_the_run_and_keeps_the_users_files(capsys, tmp_path):
    out = tmp_path / "R"
    run_json(capsys, *TRAIN_ADD2, *QUICK, "--out", out)
    (out / "notes.txt").write_text("mine")
    summary = run_json(capsys, *TRAIN_ADD2, *QUICK[:1], "7", *QUICK[2:], "--force", "--out", out)
    assert summary["iterations"] == 7 and (out / "notes.txt").read_text() == "mine"


def test_a_users_file_named_like_a_run_file_is_never_taken_for_a_run(capsys, tmp_path):
    """No config.json, so no run: a user's metrics.jsonl is theirs, and dfst refuses the directory."""
    out = tmp_path / "R"
    out.mkdir()
    (out / "metrics.jsonl").write_text("my own log\n")
    code, _, err = run(capsys, *TRAIN_ADD2, *QUICK, "--out", out)
    assert_one_line_error(code, err, "holds no dfst training run", "metrics.jsonl")
    assert tree(out) == {"metrics.jsonl": b"my own log\n"}


def test_a_lock_a_killed_run_left_alone_is_not_a_users_file(tmp_path):
    """The shared rule (`check_directory`): leftovers and temporaries of a killed dfst count as empty."""
    from dfst.errors import DfstError
    from dfst.io.outputs import check_directory

    (tmp_path / ".dfst.lock").write_text("{}")
    (tmp_path / ".config.json.x1.tmp").write_text("")
    rule = {"what": "training run", "own": ("config.json",), "is_ours": lambda p: False}
    assert check_directory(tmp_path, **rule, leftovers=(".dfst.lock",)) is False
    with pytest.raises(DfstError, match="holds no dfst training run"):
        check_directory(tmp_path, **rule)


@pytest.mark.parametrize("link", ["out", "model"])
def test_train_force_never_follows_or_removes_a_link(capsys, tmp_path, link):
    real = tmp_path / "R"
    run_json(capsys, *TRAIN_ADD2, *QUICK, "--out", real)
    if link == "out":
        (tmp_path / "L").symlink_to(real)
        out = tmp_path / "L"
    else:
        (real / "model").rename(real / "elsewhere")
        (real / "model").symlink_to("elsewhere")
        out = real
    before = tree(tmp_path)
    code, _, err = run(capsys, *TRAIN_ADD2, *QUICK, "--force", "--out", out)
    assert_one_line_error(code, err, "symbolic link")
    assert tree(tmp_path) == before and (tmp_path / "L" if link == "out" else real / "model").is_symlink()


def test_train_force_refuses_a_foreign_config(capsys, tmp_path):
    (tmp_path / "config.json").write_text('{"mine": 1}')
    code, _, err = run(capsys, *TRAIN_ADD2, *QUICK, "--force", "--out", tmp_path)
    assert_one_line_error(code, err, "not a dfst training run config")
    assert (tmp_path / "config.json").read_text() == '{"mine": 1}'


# ----------------------------------------------------------------------------- the lock

def hold_lock(directory: Path) -> subprocess.Popen:
    """Another process holding the run lock of `directory` until killed."""
    return hold_in_subprocess("from dfst.io.run_guard import run_lock\n"
                              "lock = run_lock(sys.argv[1], 'dfst train add2 --out elsewhere')\n"
                              "lock.__enter__()", directory)


def test_a_second_writer_is_refused_naming_the_holder_and_a_killed_holder_never_blocks(capsys, tmp_path):
    out = tmp_path / "R"
    holder = hold_lock(out)
    try:
        code, _, err = run(capsys, *TRAIN_ADD2, *QUICK, "--out", out)
        assert_one_line_error(code, err, f"{out} is in use by dfst pid {holder.pid}", "dfst train add2")
        assert sorted(os.listdir(out)) == [".dfst.lock"]  # nothing written
    finally:
        holder.kill()
        holder.wait()
    assert (out / ".dfst.lock").exists()  # left behind by kill -9, but no longer locked
    assert run_json(capsys, *TRAIN_ADD2, *QUICK, "--out", out)["iterations"] == 6
    assert not (out / ".dfst.lock").exists()


def test_until_certified_and_reproduce_take_the_lock(capsys, tmp_path):
    holder = hold_lock(tmp_path / "D")
    try:
        code, _, err = run(capsys, *TRAIN_ADD2, *ROUNDS, "--out", tmp_path / "D")
        assert_one_line_error(code, err, "is in use by dfst pid")
        code, _, err = run(capsys, "reproduce", "--tasks", "add2:1", "--iters", "5", "--restarts", "1",
                           "--runs", tmp_path / "runs", "--results", tmp_path / "D")
        assert_one_line_error(code, err, "is in use by dfst pid")
    finally:
        holder.kill()
        holder.wait()


# ----------------------------------------------------------------------------- the manifest


class Interrupt(Exception):
    pass


def stop_at(iteration: int):
    def progress(record: dict) -> None:
        if record["iteration"] == iteration:
            raise Interrupt
    return progress


def tiny(**fields):
    from dfst.train import TrainConfig

    return TrainConfig(**{"samples": 4, "max_digits": 2, "iters": 20, "restarts": 1, "eval_every": 0,
                          "checkpoint_every": 5, "d": 4, **fields})  # d: one size, resumes as killed


def unfinished(out: Path, at: int = 12) -> None:
    from dfst.train import train

    with pytest.raises(Interrupt):
        train(tiny(), out, command="test", progress=stop_at(at))


def test_manifest_lists_every_file_but_the_metrics_and_the_checkpoints_own_manifests(tmp_path):
    from dfst.io.run_guard import check_manifest, file_entry, read_manifest
    from dfst.train import train

    train(tiny(d=None), tmp_path, command="test")  # d from the data: validation PTOs too
    files = read_manifest(tmp_path)
    assert set(files) == {"config.json", "data.pto.zip", "validation.pto.zip", "train_state.safetensors",
                          "summary.json",
                          "model/model.safetensors", "model/config.json",
                          "extracted/model.safetensors", "extracted/config.json", "extracted/agent.json"}
    assert (tmp_path / "model" / "manifest.json").is_file()  # what dfst eval records its report in
    assert all(file_entry(tmp_path / name) == entry for name, entry in files.items())
    check_manifest(tmp_path)


@pytest.mark.parametrize("name", ["data.pto.zip", "train_state.safetensors", "config.json"])
def test_a_damaged_unfinished_run_is_an_error_not_finished(tmp_path, name):
    from dfst.errors import DfstError
    from dfst.train import train

    unfinished(tmp_path)
    path = tmp_path / name
    if name == "config.json":  # still parses, same config: only the checksum sees it
        path.write_text(path.read_text().replace('"command": "test"', '"command": "tested"'))
    else:
        os.truncate(path, path.stat().st_size // 2)
    with pytest.raises(DfstError, match=f"{name} has changed since dfst wrote it .sha256 mismatch") as info:
        train(tiny(), tmp_path, command="test")
    assert "\n" not in str(info.value) and not (tmp_path / "summary.json").exists()


@pytest.mark.parametrize("name", ["model/model.safetensors", "extracted/agent.json", "summary.json"])
def test_a_finished_run_with_a_damaged_file_is_an_error_not_its_summary(tmp_path, name):
    from dfst.errors import DfstError
    from dfst.train import train

    train(tiny(), tmp_path, command="test")
    with open(tmp_path / name, "ab") as f:
        f.write(b" ")
    with pytest.raises(DfstError, match=f"{name} has changed since dfst wrote it .*--force"):
        train(tiny(), tmp_path, command="test")


def test_a_run_from_before_manifests_resumes_and_its_data_is_still_checked(tmp_path):
    from dfst.errors import DfstError
    from dfst.train import train

    def from_before_manifests(run: Path) -> None:  # no manifest, and a config that names none
        (run / "manifest.json").unlink()
        config = json.loads((run / "config.json").read_text())
        del config["manifest"]
        (run / "config.json").write_text(json.dumps(config))

    unfinished(tmp_path / "a")
    from_before_manifests(tmp_path / "a")
    assert train(tiny(), tmp_path / "a", command="test")["iterations"] == 20
    unfinished(tmp_path / "b")
    from_before_manifests(tmp_path / "b")
    os.truncate(tmp_path / "b" / "data.pto.zip", 100)
    with pytest.raises(DfstError, match="data.pto.zip has changed since dfst wrote it"):
        train(tiny(), tmp_path / "b", command="test")


def test_a_kill_between_a_write_and_its_manifest_entry_still_resumes(tmp_path, monkeypatch):
    """The manifest accepts the old file or the new one while a replacement is pending."""
    import dfst.io.run_guard
    from dfst.train import train

    unfinished(tmp_path, at=7)  # state at iteration 5 recorded
    real = dfst.io.run_guard.write_atomic

    def killed_before_the_rename(path, data):
        if Path(path).name == "train_state.safetensors":
            raise Interrupt  # the manifest already accepts both; the old state stays
        real(path, data)
    monkeypatch.setattr(dfst.io.run_guard, "write_atomic", killed_before_the_rename)
    with pytest.raises(Interrupt):
        train(tiny(), tmp_path, command="test")
    monkeypatch.undo()
    pending = json.loads((tmp_path / "manifest.json").read_text())["files"]["train_state.safetensors"]
    assert "previous" in pending
    assert train(tiny(), tmp_path, command="test")["resumed_from"] == 5


# ----------------------------------------------------------------------------- reproduce keys

REPO = Path(__file__).resolve().parents[1]
# these are about keys and files: no fine-tuning phase (on a 5-iteration model, a minute of L-BFGS)
# and no certification
SEED = ("reproduce", "--tasks", "add2:1", "--restarts", "1", "--no-finetune", "--no-certify",
        "--time-budget", "5")


def test_reproduce_refuses_stale_results_and_offers_rerun_or_accept_stored(capsys, tmp_path):
    where = ("--runs", tmp_path / "R", "--results", tmp_path / "S")
    run_json(capsys, *SEED, "--iters", "5", *where)
    result = tmp_path / "S" / "add2-s0.json"
    stored = json.loads(result.read_text())
    assert stored["key"]["train"]["iters"] == 5 and stored["key"]["eval"]["time_budget"] == 5
    before = tree(tmp_path)
    code, _, err = run(capsys, *SEED, "--iters", "6", *where)
    assert_one_line_error(code, err, str(result), "train.iters=5, not 6", "--rerun", "--accept-stored")
    code, _, err = run(capsys, *SEED[:-1], "9", "--iters", "5", *where)
    assert_one_line_error(code, err, "eval.time_budget=5.0, not 9.0")
    assert tree(tmp_path) == before
    code, out, err = run(capsys, *SEED, "--iters", "6", *where, "--accept-stored", "--json")
    assert code == 0 and json.loads(out) and "--accept-stored" in err and tree(tmp_path) == before
    run_json(capsys, *SEED, "--iters", "6", *where, "--rerun")
    assert json.loads(result.read_text())["key"]["train"]["iters"] == 6
    assert json.loads((tmp_path / "R" / "add2" / "s0" / "config.json").read_text())["train"]["iters"] == 6


def test_reproduce_refuses_a_stale_run_without_rerun(capsys, tmp_path):
    where = ("--runs", tmp_path / "R", "--results", tmp_path / "S")
    run_json(capsys, *SEED, "--iters", "5", *where)
    for path in (tmp_path / "S").iterdir():
        path.unlink()
    code, _, err = run(capsys, *SEED, "--iters", "6", *where)
    assert_one_line_error(code, err, str(tmp_path / "R" / "add2" / "s0"), "iters=5, not 6", "--rerun")
    assert run_json(capsys, *SEED, "--iters", "6", *where, "--rerun")


def test_reproduce_refuses_a_run_on_other_data_without_rerun(capsys, tmp_path, monkeypatch):
    """Same config, other data (a task's hard set changed the cover's pool): train refused to resume it
    even with --rerun; reproduce now starts it over with --rerun and names the cause without."""
    import dfst.studies.reproduce
    import dfst.studies.seeds
    from dfst.data import SAMPLERS
    from dfst.tasks import get_task
    from dfst.train.batches import dataset_sha256

    where = ("--runs", tmp_path / "R", "--results", tmp_path / "S")
    run_json(capsys, *SEED, "--iters", "5", *where)
    for path in (tmp_path / "S").iterdir():
        path.unlink()
    other = SAMPLERS["cover"](get_task("add2"), 20, 3, 99)
    monkeypatch.setattr(dfst.studies.seeds, "training_data", lambda cfg: other)
    code, _, err = run(capsys, *SEED, "--iters", "5", *where)
    assert_one_line_error(code, err, str(tmp_path / "R" / "add2" / "s0"), "training data", "--rerun")
    assert run_json(capsys, *SEED, "--iters", "5", *where, "--rerun")
    config = json.loads((tmp_path / "R" / "add2" / "s0" / "config.json").read_text())
    assert config["data"]["sha256"] == dataset_sha256(other)


def test_reproduce_never_replaces_a_file_it_did_not_write(capsys, tmp_path):
    (tmp_path / "S").mkdir()
    (tmp_path / "S" / "add2-s0.json").write_text('{"mine": true}')
    code, _, err = run(capsys, *SEED, "--iters", "5", "--runs", tmp_path / "R", "--results", tmp_path / "S",
                       "--rerun")
    assert_one_line_error(code, err, "is not dfst's DFST result of add2 seed 0")
    assert (tmp_path / "S" / "add2-s0.json").read_text() == '{"mine": true}'


README_PLAN = ("add2,add10,mult2,mult10:3,sub2:3,sub10:3,compare2:3,compare10:3,"
               "mult10x1:3,div10x1:3,parity2:3,reverse2:3,sort2:3,dyck:3")  # run with the phase


NOT_CERTIFIED = ("div10x1 ", "mult10x1 ", "mult10 seed 1", "mult10 seed 2")  # docs/tables.md: "not run"


def test_the_committed_results_are_reused_without_training(tmp_path, monkeypatch):
    """`dfst reproduce --tasks PLAN --accept-stored` (the PLAN of docs/tables.md) on the committed results:
    nothing trained."""
    import shutil

    import dfst.studies.reproduce
    import dfst.studies.seeds
    from dfst.cli.reproduce import seed_plan

    def no_training(*args, **kwargs):
        raise AssertionError("reproduce would train again")
    monkeypatch.setattr(dfst.studies.seeds, "train", no_training)
    results = tmp_path / "dfst"
    shutil.copytree(REPO / "results" / "dfst", results)
    before = tree(results)
    assert f"PLAN: `{README_PLAN}`" in (REPO / "docs" / "tables.md").read_text()
    plan = seed_plan(README_PLAN, seeds=10, first_seed=0)
    notes = []  # results made with an older hard set than their task's: used as they are, and said so
    rows = dfst.studies.reproduce.reproduce(plan, tmp_path / "runs", results, accept_stored=True,
                                            warn=notes.append)
    # each note names what differs from today's settings, and only what is known and said in the
    # docs: results trained by autograd's engine before the fused one was the default, evaluated
    # with an older hard set, or with --no-certify (NOT_CERTIFIED: docs/tables.md says so); trained
    # on PTOs chosen by the state-reading samplers at the expert's d, before the trace-only defaults
    known = re.compile(r"train\.engine='autograd', not 'fused'|eval\.hard_set=(\d+), not (\d+)|"
                       r"eval\.certify=False, not True|train\.sampler='(?:cover|pairs)', not 'contexts'|"
                       r"train\.d_rule='expert', not 'data'")
    assert notes
    for note in notes:
        seed, differences = note.split(":")[0], note.split("made with ", 1)[1].split("; ")
        for difference in differences:
            match = known.fullmatch(difference)
            assert match, note
            assert match[1] is None or int(match[1]) < int(match[2]), note
            assert "certify" not in difference or seed.startswith(NOT_CERTIFIED), note
    assert {(r["task"], r["seeds"]) for r in rows} == {(task, len(seeds)) for task, seeds in plan.items()}
    assert {r["system"] for r in rows} == {"DFST", "DFST (before fine-tuning)", "DFST (extracted)"}
    assert tree(results) == before and not (tmp_path / "runs").exists()


def test_reproduce_prints_the_stored_table_as_csv_or_markdown(capsys, tmp_path):
    import csv
    import io
    import shutil

    results = tmp_path / "dfst"
    shutil.copytree(REPO / "results" / "dfst", results)
    where = ("--tasks", "add2:0-1", "--runs", tmp_path / "runs", "--results", results, "--accept-stored")
    code, out, _ = run(capsys, "reproduce", *where, "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and {r["system"] for r in rows} == {"DFST", "DFST (before fine-tuning)",
                                                         "DFST (extracted)"}
    assert all(r["task"] == "add2" and r["seeds"] == "2" for r in rows)
    code, out, _ = run(capsys, "reproduce", *where, "--markdown")
    assert code == 0 and out.splitlines()[0].startswith("| task | system |") and out.count("| add2 |") == 3
    assert not (tmp_path / "runs").exists()


# ----------------------------------------------------------------------------- --data and options


def test_train_data_passes_the_checks_of_coverage(capsys, tmp_path):
    from dfst.data import record_dataset, save_dataset
    from dfst.tasks import get_task

    ds = record_dataset(get_task("add2"), 4, 2, seed=0)
    bad_operand = ds.__class__(**{**ds.__dict__, "operands": [("12", "1"), *ds.operands[1:]]})
    not_the_expert = ds.__class__(**{**ds.__dict__, "operands": [ds.operands[1], *ds.operands[1:]]})
    for name, data, fragment in (("bad", bad_operand, "sample 0 ('12', '1'): first operand '12'"),
                                 ("swapped", not_the_expert, "is not the add2 expert's run")):
        save_dataset(data, tmp_path / f"{name}.zip")
        code, _, err = run(capsys, *TRAIN_ADD2, "--data", tmp_path / f"{name}.zip", *QUICK[:4],
                           "--out", tmp_path / name)
        assert_one_line_error(code, err, f"{name}.zip", fragment)
        assert not (tmp_path / name).exists()
        code, _, err = run(capsys, "data", "--inspect", tmp_path / f"{name}.zip")  # the same checks
        assert_one_line_error(code, err, f"{name}.zip")
    save_dataset(ds, tmp_path / "good.zip")
    assert run_json(capsys, "data", "--inspect", tmp_path / "good.zip")["expert_runs_checked"] is True


@pytest.mark.parametrize("option, value", [
    ("--seed", "-1"), ("--samples", "0"), ("--samples", "-1"), ("--max-digits", "0"), ("--iters", "0"),
    ("--restarts", "0"), ("--batch", "-1"), ("--threads", "0"), ("--lr", "0"), ("--lr", "nan"),
    ("--lr", "inf"), ("--noise", "-1"), ("--noise", "nan"), ("--d", "0"), ("--log-every", "0"),
    ("--eval-every", "-1"), ("--checkpoint-every", "-1"), ("--max-rounds", "0"),
])
def test_bad_train_options_are_one_line_errors_before_any_work(capsys, tmp_path, option, value):
    extra = ("--until-certified",) if option == "--max-rounds" else ()
    code, _, err = run(capsys, *TRAIN_ADD2, option, value, *extra, "--out", tmp_path / "R")
    assert_one_line_error(code, err, option.lstrip("-").replace("-", "_").removeprefix("max_rounds"))
    assert not (tmp_path / "R").exists()


@pytest.mark.parametrize("option, value", [("--iters", "0"), ("--restarts", "-1"), ("--time-budget", "0"),
                                           ("--time-budget", "nan"), ("--first-seed", "-1"),
                                           ("--seeds", "0"), ("--rerun", "--accept-stored")])
def test_bad_reproduce_options_are_one_line_errors_before_any_work(capsys, tmp_path, option, value):
    code, _, err = run(capsys, "reproduce", "--tasks", "add2:1", option, value,
                       "--runs", tmp_path / "R", "--results", tmp_path / "S")
    assert_one_line_error(code, err, option)
    assert not (tmp_path / "R").exists() and not (tmp_path / "S").exists()


def test_json_output_is_json_only(capsys, tmp_path):
    code, out, _ = run(capsys, *TRAIN_ADD2, *ROUNDS, "--out", tmp_path / "D", "--json")
    assert code == (0 if json.loads(out)["certified"] else 1) and json.loads(out)["rounds"]
    code, out, _ = run(capsys, *TRAIN_ADD2, *QUICK, "--out", tmp_path / "R", "--json")
    assert code == 0 and json.loads(out)["iterations"] == 6


# ----------------------------------------------------------------------------- kill -9

# d fixed (growth's resume is test_train's test_a_run_that_grows_d_resumes_bit_identically) and a
# checkpoint every 10 iterations, so a kill often lands on a write; long enough that
# the mid-run kill, a third of the way in, leaves hundreds of iterations to resume
TRAIN_ITERS = 300
TRAIN = (*TRAIN_ADD2, "--samples", "4", "--max-digits", "2", "--d", "5", "--iters", str(TRAIN_ITERS),
         "--restarts", "1", "--eval-every", "0", "--checkpoint-every", "10", "--log-every", "10")
# no fine-tuning phase (on so short a run, up to a minute of L-BFGS; a kill lands in training or among
# the result files either way): the systems are DFST and DFST (extracted)
REPRODUCE = ("reproduce", "--tasks", "add2:1", "--iters", "60", "--restarts", "1", "--no-finetune",
             "--no-certify", "--time-budget", "2")


def start(*argv) -> subprocess.Popen:
    code = "import sys; from dfst.cli import main; raise SystemExit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", code, *map(str, argv)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def kill_when(proc: subprocess.Popen, ready, delay: float = 0.0) -> None:
    """SIGKILL `proc` `delay` seconds after `ready()` (a path appeared, or the run got so far)."""
    deadline = time.monotonic() + 60
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()


def logged_past(out: Path, iteration: int):
    """Whether the metrics log of the run `out` has reached `iteration` (its last whole line)."""
    def ready() -> bool:
        lines = (out / "metrics.jsonl").read_text().splitlines() if (out / "metrics.jsonl").exists() else []
        whole = [line for line in lines if line.endswith("}")]
        return bool(whole) and json.loads(whole[-1]).get("iteration", 0) >= iteration
    return ready


def assert_whole_run(out: Path) -> None:
    """Every file of the run is absent or complete, and the manifest agrees with them."""
    from safetensors.torch import load_file

    from dfst.data import load_dataset
    from dfst.io.run_guard import check_manifest

    assert json.loads((out / "config.json").read_text())["format"] == "dfst-train-run"
    load_dataset(out / "data.pto.zip")
    if (out / "train_state.safetensors").exists():
        assert load_file(out / "train_state.safetensors")
    finished = (out / "summary.json").exists()
    if finished:
        assert json.loads((out / "summary.json").read_text())["iterations"] == TRAIN_ITERS
    check_manifest(out, None if finished else ("config.json", "data.pto.zip", "train_state.safetensors"))
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")] or not finished


@pytest.fixture(scope="module")
def whole_train_run(tmp_path_factory) -> Path:
    """TRAIN, never interrupted: the weights every killed and resumed run must end on."""
    from dfst.cli import main

    out = tmp_path_factory.mktemp("whole") / "run"
    assert main([*TRAIN, "--out", str(out), "--json"]) == 0
    return out


@pytest.mark.parametrize("moment", ["first checkpoint", "mid-run"])
def test_train_killed_at_any_moment_leaves_whole_files_and_resumes_to_the_same_weights(
        capsys, tmp_path, moment, whole_train_run):
    from safetensors.torch import load_file

    killed = tmp_path / "killed"
    ready = ((killed / "train_state.safetensors").exists if moment == "first checkpoint"
             else logged_past(killed, TRAIN_ITERS // 3))
    kill_when(start(*TRAIN, "--out", killed), ready)
    assert_whole_run(killed)
    resumed = run_json(capsys, *TRAIN, "--out", killed)
    assert resumed["resumed_from"] and resumed["iterations"] == TRAIN_ITERS  # the kill landed mid-run
    assert_whole_run(killed)
    got, want = (load_file(d / "model" / "model.safetensors") for d in (killed, whole_train_run))
    assert got.keys() == want.keys() and all((got[k] == want[k]).all() for k in got)


@pytest.mark.parametrize("wait_for", ["R/add2/s0/train_state.safetensors", "S/add2-s0.json"])
def test_reproduce_killed_leaves_whole_results_and_a_rerun_completes(capsys, tmp_path, wait_for):
    where = ("--runs", tmp_path / "R", "--results", tmp_path / "S")
    kill_when(start(*REPRODUCE, *where), (tmp_path / wait_for).exists)
    for path in (tmp_path / "S").glob("*.json"):
        assert json.loads(path.read_text())["key"]["train"]["iters"] == 60
    rows = run_json(capsys, *REPRODUCE, *where)
    assert {r["system"] for r in rows} == {"DFST", "DFST (extracted)"}
    assert sorted(p.name for p in (tmp_path / "S").iterdir()) == ["add2-extracted-s0.json", "add2-s0.json"]


def test_a_kill_while_the_final_checkpoint_is_written_still_resumes(tmp_path):
    from dfst.train import train

    train(tiny(), tmp_path, command="test")
    (tmp_path / "summary.json").unlink()  # as if killed between model/model.safetensors and the rest
    (tmp_path / "model" / "config.json").unlink()
    assert train(tiny(), tmp_path, command="test")["iterations"] == 20


def test_a_seed_torch_cannot_take_is_refused_before_the_run_is_written(capsys, tmp_path):
    code, _, err = run(capsys, *TRAIN_ADD2, "--seed", str(2**64), "--out", tmp_path / "D")
    assert_one_line_error(code, err, "seed must be at most")
    assert not (tmp_path / "D").exists()


def test_a_fifo_where_a_run_keeps_a_file_is_refused_and_kept(capsys, tmp_path):
    import os

    out = tmp_path / "D"
    out.mkdir()
    os.mkfifo(out / "config.json")
    for force in ([], ["--force"]):
        code, _, err = run(capsys, *TRAIN_ADD2, *QUICK, "--out", out, *force)
        assert_one_line_error(code, err, "config.json is a FIFO")
    assert (out / "config.json").exists() and not (out / "config.json").is_file()


def test_a_rerun_under_a_new_protocol_keeps_the_certification_of_the_same_weights(capsys, tmp_path,
                                                                                 monkeypatch):
    """Certification reads no protocol instance: scoring a run again under a new version of the
    protocol's instances keeps its verdict (marked with the version it was stored under), while a run
    trained with another config is certified again."""
    import dfst.studies.seeds as seeds

    def certified_as(verdict):
        record = {"verdict": verdict, "max_digits": None, "checker": None, "seconds": 0.1}
        return lambda *args, **kwargs: record

    def refuse(*args, **kwargs):
        raise AssertionError("certified again")

    args = ("reproduce", "--tasks", "add2:1", "--restarts", "1", "--no-finetune", "--time-budget", "5",
            "--runs", tmp_path / "R", "--results", tmp_path / "S")
    monkeypatch.setattr(seeds, "certification", certified_as("INCONCLUSIVE"))
    run_json(capsys, *args, "--iters", "5")
    result = tmp_path / "S" / "add2-s0.json"
    version = json.loads(result.read_text())["key"]["eval"]["hard_set"]
    monkeypatch.setattr(seeds, "hard_set_version", lambda task: version + 1)
    monkeypatch.setattr(seeds, "certification", refuse)
    code, _, err = run(capsys, *args, "--iters", "5")
    assert_one_line_error(code, err, f"eval.hard_set={version}, not {version + 1}", "--rerun")
    run_json(capsys, *args, "--iters", "5", "--rerun")
    stored = json.loads(result.read_text())
    assert stored["key"]["eval"]["hard_set"] == version + 1
    assert stored["details"]["certified"]["verdict"] == "INCONCLUSIVE"
    assert stored["details"]["certified"]["hard_set"] == version
    monkeypatch.setattr(seeds, "certification", certified_as("COUNTEREXAMPLE"))
    run_json(capsys, *args, "--iters", "6", "--rerun")  # other weights: certified again
    assert json.loads(result.read_text())["details"]["certified"]["verdict"] == "COUNTEREXAMPLE"
    # the same config on other data (a hard set that changed the sampler's pool): trained and
    # certified again, never given the old verdict
    from dfst.data import SAMPLERS
    from dfst.tasks import get_task
    other = SAMPLERS["cover"](get_task("add2"), 20, 3, 99)
    monkeypatch.setattr(seeds, "training_data", lambda cfg: other)
    monkeypatch.setattr(seeds, "hard_set_version", lambda task: version + 2)
    monkeypatch.setattr(seeds, "certification", certified_as("CERTIFIED"))
    run_json(capsys, *args, "--iters", "6", "--rerun")
    assert json.loads(result.read_text())["details"]["certified"] == certified_as("CERTIFIED")()

"""The fine-tuning phase of `dfst train`: trained/ keeps training's weights, model/ gets the fine-tuned
ones, and a phase cut short resumes to the same bytes."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from dfst.io.run_guard import check_manifest
from dfst.model.checkpoint import load_checkpoint
from dfst.train import TrainConfig, train
from dfst.train.rundir import SUMMARY_FILE, write_run_json

SHORT = TrainConfig(task="add2", iters=1000, restarts=4, eval_every=0, eval_digits=(10,), finetune=True,
                    finetune_centres=300)
TUNE = {"centre_iters": 300}  # the same schedule for dfst finetune


def weights(path):
    return (path / "model.safetensors").read_bytes()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tuning")
    tuned = train(SHORT, root / "tuned")
    plain = train(replace(SHORT, finetune=False), root / "plain")
    return root, tuned, plain


def test_trained_keeps_trainings_weights_and_model_gets_the_fine_tuned(runs):
    root, tuned, plain = runs
    assert weights(root / "tuned" / "trained") == weights(root / "plain" / "model")
    assert weights(root / "tuned" / "model") != weights(root / "plain" / "model")
    info = tuned["finetune"]
    assert info["after"]["residual"] < info["before"]["residual"] and info["after"]["train_exact"]
    assert [lv["digits"] for lv in info["eval_plain"]["levels"]] == [10]
    assert info["cpu_seconds"] > 0 and tuned["cpu_seconds"] > info["cpu_seconds"]  # both phases counted
    model, config = load_checkpoint(root / "tuned" / "model")
    assert config["provenance"]["finetune"]["centre_iters"] == 300
    assert json.loads((root / "tuned" / "config.json").read_text())["train"]["finetune"] is True
    assert "finetune" not in json.loads((root / "plain" / "config.json").read_text())["train"]


def test_a_phase_cut_short_resumes_to_the_same_weights(runs, tmp_path):
    """Killed after model/ was replaced but before summary.json said so: resuming fine-tunes again
    from trained/, never from the already fine-tuned model/, and ends with the same bytes."""
    root, tuned, _ = runs
    copy = tmp_path / "copy"
    shutil.copytree(root / "tuned", copy)
    cut = {key: value for key, value in tuned.items() if key != "finetune"}
    write_run_json(copy, SUMMARY_FILE, cut)
    again = train(SHORT, copy)
    assert weights(copy / "model") == weights(root / "tuned" / "model")
    assert weights(copy / "trained") == weights(root / "tuned" / "trained")
    assert again["finetune"]["after"] == tuned["finetune"]["after"]
    check_manifest(copy)  # every file the run wrote is recorded as written


def test_a_finished_fine_tuned_run_is_returned_as_it_is(runs):
    root, tuned, _ = runs
    before = weights(root / "tuned" / "model")
    assert train(SHORT, root / "tuned") == tuned
    assert weights(root / "tuned" / "model") == before


def test_the_phase_is_dfst_finetune_on_the_trained_run(runs, tmp_path):
    """`dfst train` with the phase and `dfst train --no-finetune` then `dfst finetune` give the same
    bytes: docs/research/finetune.md's measurements hold for both."""
    from dfst.train.finetune import FinetuneConfig, finetune

    root, _, _ = runs
    finetune(root / "plain", tmp_path / "ft", FinetuneConfig(**TUNE))
    assert weights(tmp_path / "ft" / "model") == weights(root / "tuned" / "model")


def test_dfst_finetune_on_a_fine_tuned_run_starts_from_trained(runs, tmp_path):
    """Fine-tuning twice would fine-tune the fine-tuned weights: dfst finetune reads trained/."""
    from dfst.train.finetune import FinetuneConfig, finetune

    root, _, _ = runs
    finetune(root / "tuned", tmp_path / "ft", FinetuneConfig(**TUNE))
    assert weights(tmp_path / "ft" / "model") == weights(root / "tuned" / "model")


def test_a_link_named_trained_is_neither_followed_nor_replaced(runs, tmp_path):
    """A finished run whose phase was cut short, with a symlink where trained/ goes: a one-line
    error naming it, and the link and its target stay as they were."""
    from dfst.errors import DfstError

    root, tuned, _ = runs
    copy = tmp_path / "copy"
    shutil.copytree(root / "tuned", copy)
    write_run_json(copy, SUMMARY_FILE, {key: value for key, value in tuned.items() if key != "finetune"})
    shutil.rmtree(copy / "trained")
    target = tmp_path / "elsewhere"
    shutil.copytree(root / "plain" / "model", target)
    (copy / "trained").symlink_to(target)
    with pytest.raises(DfstError, match="trained is a"):
        train(SHORT, copy)
    assert (copy / "trained").is_symlink() and weights(target) == weights(root / "plain" / "model")


@pytest.mark.parametrize("name", ["trained", "model", "extracted"])
def test_force_never_removes_a_user_file_named_like_a_checkpoint_directory(tmp_path, name):
    from dfst.errors import DfstError
    from dfst.train.rundir import clear_run

    (tmp_path / name).write_text("mine")
    with pytest.raises(DfstError, match="is a file, not the checkpoint directory"):
        clear_run(tmp_path)
    assert (tmp_path / name).read_text() == "mine"


def test_a_phase_that_cannot_anchor_leaves_the_trained_weights_and_says_why(runs, tmp_path, monkeypatch):
    """When fine-tuning fails (here: made to fail as when the automaton read off the model departs
    from a PTO), the run still finishes: model/ keeps training's weights and summary.json the reason."""
    from dfst.errors import DfstError
    from dfst.train import finetune as finetune_module

    def refuse(*args, **kwargs):
        raise DfstError("the automaton read off the model departs from training PTO 3 at step 7")

    monkeypatch.setattr(finetune_module, "tune", refuse)
    root, tuned, plain = runs
    copy = tmp_path / "copy"
    shutil.copytree(root / "tuned", copy)  # as killed after model/ got the fine-tuned weights
    write_run_json(copy, SUMMARY_FILE, {key: value for key, value in tuned.items() if key != "finetune"})
    summary = train(SHORT, copy)
    assert summary["finetune"]["error"].endswith("PTO 3 at step 7")
    assert weights(copy / "model") == weights(copy / "trained") == weights(root / "plain" / "model")
    training_cpu = tuned["cpu_seconds"] - tuned["finetune"]["cpu_seconds"]  # the copy's, from its state
    assert summary["cpu_seconds"] >= training_cpu - 0.002  # and the failed phase on top (3 places)
    check_manifest(copy)


def test_the_same_command_resumes_a_phase_cut_short_and_refuses_a_finished_run(runs, tmp_path, capsys):
    from cli_helpers import assert_one_line_error, run

    root, tuned, _ = runs
    copy = tmp_path / "copy"
    shutil.copytree(root / "tuned", copy)
    write_run_json(copy, SUMMARY_FILE, {key: value for key, value in tuned.items() if key != "finetune"})
    argv = ("train", "add2", "--iters", "1000", "--restarts", "4", "--eval-every", "0", "--eval-digits", "10",
            "--finetune-centres", "300", "--out", copy)
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    assert weights(copy / "model") == weights(root / "tuned" / "model")
    code, _, err = run(capsys, *argv)  # now finished: the same command is refused, nothing touched
    assert_one_line_error(code, err, "already holds a finished run")
    assert weights(copy / "model") == weights(root / "tuned" / "model")

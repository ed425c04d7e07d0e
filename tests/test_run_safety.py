"""Runs never lose a user's file (issue 14, part 5): --force, the lock, the manifest, reproduce keys,
checked training data and options, and kill -9 at any moment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import assert_one_line_error, run, run_json

QUICK = ("--iters", "6", "--restarts", "1", "--eval-every", "0", "--samples", "4", "--max-digits", "2")
ROUNDS = ("--until-certified", "--max-rounds", "1", *QUICK)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` and its bytes (to show that nothing changed)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- --force


def test_until_certified_force_refuses_a_directory_with_user_files(capsys, tmp_path):
    out = tmp_path / "D"
    run_json(capsys, "train", "add2", *ROUNDS, "--out", out)
    (out / "notes.txt").write_text("mine")
    before = tree(out)
    code, _, err = run(capsys, "train", "add2", *ROUNDS, "--force", "--out", out)
    assert_one_line_error(code, err, str(out / "notes.txt"), "nothing was removed")
    assert tree(out) == before


def test_until_certified_force_in_the_working_directory_keeps_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("keep.txt").write_text("mine")
    code, _, err = run(capsys, "train", "add2", *ROUNDS, "--force", "--out", ".")
    assert_one_line_error(code, err, "keep.txt")
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


def test_until_certified_force_replaces_only_its_own_rounds(capsys, tmp_path):
    out = tmp_path / "D"
    run_json(capsys, "train", "add2", *ROUNDS, "--out", out)
    old = (out / "round0" / "config.json").read_bytes()
    report = run_json(capsys, "train", "add2", *ROUNDS[:-1], "7", "--force", "--out", out)
    assert report["rounds"][0]["round"] == 0 and sorted(os.listdir(out)) == ["round0", "rounds.json"]
    assert (out / "round0" / "config.json").read_bytes() != old  # trained again with --iters 7


def test_until_certified_force_refuses_a_round_holding_a_user_file(capsys, tmp_path):
    out = tmp_path / "D"
    run_json(capsys, "train", "add2", *ROUNDS, "--out", out)
    (out / "round0" / "mine.txt").write_text("mine")
    before = tree(out)
    code, _, err = run(capsys, "train", "add2", *ROUNDS, "--force", "--out", out)
    assert_one_line_error(code, err, str(out / "round0"))
    assert tree(out) == before


def test_train_force_removes_the_run_and_keeps_the_users_files(capsys, tmp_path):
    out = tmp_path / "R"
    run_json(capsys, "train", "add2", *QUICK, "--out", out)
    (out / "notes.txt").write_text("mine")
    summary = run_json(capsys, "train", "add2", *QUICK[:1], "7", *QUICK[2:], "--force", "--out", out)
    assert summary["iterations"] == 7 and (out / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("link", ["out", "model"])
def test_train_force_never_follows_or_removes_a_link(capsys, tmp_path, link):
    real = tmp_path / "R"
    run_json(capsys, "train", "add2", *QUICK, "--out", real)
    if link == "out":
        (tmp_path / "L").symlink_to(real)
        out = tmp_path / "L"
    else:
        (real / "model").rename(real / "elsewhere")
        (real / "model").symlink_to("elsewhere")
        out = real
    before = tree(tmp_path)
    code, _, err = run(capsys, "train", "add2", *QUICK, "--force", "--out", out)
    assert_one_line_error(code, err, "symbolic link")
    assert tree(tmp_path) == before and (tmp_path / "L" if link == "out" else real / "model").is_symlink()


def test_train_force_refuses_a_foreign_config(capsys, tmp_path):
    (tmp_path / "config.json").write_text('{"mine": 1}')
    code, _, err = run(capsys, "train", "add2", *QUICK, "--force", "--out", tmp_path)
    assert_one_line_error(code, err, "not a dfst training run config")
    assert (tmp_path / "config.json").read_text() == '{"mine": 1}'

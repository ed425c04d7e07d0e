"""What a path on the command line names: a checkpoint, or a training run and one of its models.

`dfst eval|certify|extract|replay PATH` take either. A run directory (written by `dfst train`)
stands for its trained weights, RUN/model, or with `extracted` for the automaton read off them,
RUN/extracted; every command says which it used (`Target.which`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dfst.errors import DfstError
from dfst.io.inputs import read_json_file
from dfst.io.recorded import check_recorded_files

# what a run directory names: its model (fine-tuned when the run was), or the automaton read off
TRAINED, EXTRACTED, CHECKPOINT = "model", "extracted automaton", "checkpoint"
# The names in a run directory that other packages read (dfst.train.rundir writes them).
CONFIG_FILE, DATA_FILE, SUMMARY_FILE = "config.json", "data.pto.zip", "summary.json"
MODEL_DIR, EXTRACTED_DIR, RUN_FORMAT = "model", "extracted", "dfst-train-run"
VALIDATION_FILE = "validation.pto.zip"  # PTOs past the training lengths, held out of tests too


@dataclass(frozen=True)
class Target:
    """The checkpoint to load, the run it belongs to (None for a bare checkpoint), and what it is."""

    checkpoint: Path
    run: Path | None
    which: str

    def describe(self) -> str:
        return f"the {self.which} of run {self.run} ({self.checkpoint})" if self.run else str(self.checkpoint)


def is_run(path: Path) -> bool:
    """Does `path` hold a training run's config.json?"""
    config = path / CONFIG_FILE
    if not config.is_file() or config.is_symlink():
        return False
    data = read_json_file(config, f"cannot read {config}", f"{config} is not valid JSON")
    return isinstance(data, dict) and data.get("format") == RUN_FORMAT


def resolve(path: str | Path, *, extracted: bool = False) -> Target:
    """The checkpoint that `path` names; `extracted` picks a run's extracted automaton."""
    path = Path(path)
    if not is_run(path):
        if extracted:
            raise DfstError(f"--extracted takes a training run directory; {path} is not one")
        return Target(path, None, CHECKPOINT)
    if not (path / SUMMARY_FILE).is_file():
        raise DfstError(f"run {path} is not finished (no {SUMMARY_FILE}): resume it with the same dfst train "
                        "command first")
    if extracted and not (path / EXTRACTED_DIR).is_dir():
        raise DfstError(f"run {path} has no extracted automaton (trained with --no-extract, or no "
                        f"conflict-free automaton was found); try dfst extract {path} --method lockstep "
                        "--out DIR, then dfst eval DIR")
    check_recorded_files(path)  # the whole run as dfst wrote it, or nothing of it
    sub = EXTRACTED_DIR if extracted else MODEL_DIR
    return Target(path / sub, path, EXTRACTED if extracted else TRAINED)


def run_data(run: Path) -> Path:
    """The training PTOs of a run (the data every PTO-based extraction reads)."""
    return run / DATA_FILE

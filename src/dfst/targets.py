"""What a path on the command line names: a checkpoint, or a training run and one of its models.

`dfst eval|certify|extract|replay PATH` take either. A run directory (written by `dfst train`)
stands for its trained weights, RUN/model, or with `extracted` for the automaton read off them,
RUN/extracted; every command says which it used (`Target.which`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dfst.errors import DfstError
from dfst.inputs import read_json_file

TRAINED, EXTRACTED, CHECKPOINT = "trained model", "extracted automaton", "checkpoint"


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
    from dfst.train.rundir import CONFIG_FILE, RUN_FORMAT

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
    from dfst.train.rundir import EXTRACTED_DIR, MODEL_DIR, SUMMARY_FILE

    if not (path / SUMMARY_FILE).is_file():
        raise DfstError(f"run {path} is not finished (no {SUMMARY_FILE}): resume it with the same dfst train "
                        "command first")
    if extracted and not (path / EXTRACTED_DIR).is_dir():
        raise DfstError(f"run {path} has no extracted automaton (trained with --no-extract, or no "
                        f"conflict-free automaton was found); try dfst extract {path} --method lockstep")
    sub = EXTRACTED_DIR if extracted else MODEL_DIR
    return Target(path / sub, path, EXTRACTED if extracted else TRAINED)


def run_data(run: Path) -> Path:
    """The training PTOs of a run (the data every PTO-based extraction reads)."""
    from dfst.train.rundir import DATA_FILE

    return run / DATA_FILE

"""Moved to `dfst.train.rundir` (the run directory) and `dfst.train.state` (the training state).
Kept for the importers outside training (dfst.reproduce, dfst.cli.runs); new code imports those."""

from dfst.train.rundir import *  # noqa: F403
from dfst.train.rundir import (  # noqa: F401
    check_run_dir,
    check_run_files,
    clear_run,
    foreign_paths,
    read_metrics,
    run_differences,
)
from dfst.train.state import load_train_state, save_train_state, train_state_bytes  # noqa: F401

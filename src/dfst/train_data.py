"""Moved to `dfst.train.batches`. Kept for the importers outside training (dfst.cli.coverage)."""

from dfst.train.batches import *  # noqa: F403
from dfst.train.batches import SAMPLERS, Sequences, cover_dataset, dataset_sha256, record_instances  # noqa: F401

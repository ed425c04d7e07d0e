"""PTO data: recording the expert's policy-trajectory observations, and which rules they show.

    pto           PtoDataset, record_dataset, the dataset file (save_dataset / load_dataset), summaries
    samplers      the training samplers (uniform, cover, pairs: SAMPLERS) and a given set's checks
    coverage      which expert rules (and pairs of rules) a set of instances exercises; covering sets
    cover_search  the smallest covering set: greedy cover, pruning, branch and bound

`from dfst.data import record_dataset, save_dataset` and the other names of `pto` work as before.
"""

from dfst.data.pto import (
    CHANNELS,
    FORMAT,
    MEMBERS,
    VERSION,
    PtoDataset,
    dataset_instances,
    inspect_dataset,
    load_dataset,
    record_dataset,
    record_dataset_file,
    sample_instance,
    save_dataset,
    summarize,
)
from dfst.data.samplers import SAMPLERS, check_dataset, cover_dataset, pair_cover_dataset, record_instances

__all__ = ["CHANNELS", "FORMAT", "MEMBERS", "SAMPLERS", "VERSION", "PtoDataset", "check_dataset",
           "cover_dataset", "dataset_instances", "inspect_dataset", "load_dataset", "pair_cover_dataset",
           "record_dataset", "record_dataset_file", "record_instances", "sample_instance", "save_dataset",
           "summarize"]

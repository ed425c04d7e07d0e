"""The `dfst` command line. Each command module registers itself on the shared Typer app."""

from dfst.cli import (  # noqa: F401  (each module registers its commands)
    agents,
    baselines,
    bench,
    certify,
    coverage,
    datasets,
    extraction,
    finetune,
    library,
    models,
    report,
    reproduce,
    runs,
    score,
    sweep,
    training,
)
from dfst.cli.app import app, main

__all__ = ["app", "main"]

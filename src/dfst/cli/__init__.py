"""The `dfst` command line. Each command module registers itself on the shared Typer app."""

from dfst.cli import agents, bench, datasets, models, report, runs, training  # noqa: F401  (registers commands)
from dfst.cli.app import app, main

__all__ = ["app", "main"]

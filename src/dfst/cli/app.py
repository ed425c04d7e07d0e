"""The Typer app, its error handling and small output helpers shared by every command.

Every problem with the user's input is a DfstError: one line on stderr, exit code 2, no traceback.
Usage errors from the argument parser are flattened to one line too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from dfst.errors import DfstError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="dfst: exact learning of algorithms by gradient descent.")
console = Console()
JsonOption = typer.Option(False, "--json", help="Machine-readable JSON on stdout.")
# Operands like "-5" must reach our validation (and its clear message), not the option parser.
OPERAND_SETTINGS = {"ignore_unknown_options": True}


def fail(message: str, code: int = 2) -> int:
    print(f"dfst: error: {message}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dfst` script; returns the exit code."""
    try:
        result = app(args=argv, standalone_mode=False, prog_name="dfst")
    except DfstError as exc:
        return fail(str(exc))
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        return fail("aborted", 130)
    except Exception as exc:
        if hasattr(exc, "format_message"):  # the parser's usage errors
            return fail(exc.format_message().replace("\n", " "), getattr(exc, "exit_code", 2))
        raise
    return result if isinstance(result, int) else 0


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=1) + "\n")


def parse_int_list(text: str, option: str) -> tuple[int, ...]:
    """Comma-separated integers given to `option` (underscores allowed: 1_000_000)."""
    try:
        return tuple(int(v.replace("_", "")) for v in text.split(",") if v.strip())
    except ValueError:
        raise DfstError(f"{option} {text!r} is not a comma-separated list of integers") from None


def parse_lengths(text: str, option: str) -> tuple[int, ...]:
    """One or more comma-separated lengths, each >= 1."""
    values = parse_int_list(text, option)
    if not values or min(values) < 1:
        raise DfstError(f"{option} {text!r} needs one or more lengths >= 1")
    return values


def read_operand(text: str) -> str:
    """An operand, or `@FILE` for one too long for the command line (digits, whitespace ignored)."""
    if not text.startswith("@"):
        return text
    try:
        return "".join(Path(text[1:]).read_text().split())
    except (OSError, UnicodeDecodeError) as exc:
        raise DfstError(f"cannot read operand file {text[1:]}: {exc}") from None


def show_rows(rows: list[dict], columns: tuple[str, ...], title: str, *,
              markdown: bool, as_json: bool) -> None:
    """Print result rows as JSON, a Markdown table (for README and docs) or a rich table."""
    if as_json:
        return print_json(rows)
    cells = [[f"{row[c]:,}" if isinstance(row[c], int) else str(row[c]) for c in columns] for row in rows]
    if markdown:
        print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
        print("\n".join("| " + " | ".join(line) + " |" for line in cells))
        return
    table = Table(*columns, title=title)
    for line in cells:
        table.add_row(*line)
    console.print(table)

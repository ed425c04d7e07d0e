"""The Typer app, its error handling and small output helpers shared by every command.

Every problem with the user's input is a DfstError: one line on stderr, exit code 2, no traceback.
Usage errors from the argument parser are flattened to one line too.
"""

from __future__ import annotations

import csv
import errno
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dfst.errors import DfstError
from dfst.io.outputs import release_all_outputs

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="dfst: exact learning of algorithms by gradient descent.\n\n"
                       "Exit codes, as grep and diff: 0 the check holds (correct, CERTIFIED, every "
                       "length exact), 1 it does not (WRONG, COUNTEREXAMPLE, INCONCLUSIVE, a length "
                       "not exact, a rejected certificate), 2 bad input or an error. "
                       "Safety rules and caps: docs/safety.md.")
console = Console()
JsonOption = typer.Option(False, "--json", help="Machine-readable JSON on stdout (also for errors).")
MarkdownOption = typer.Option(False, "--markdown", help="A Markdown table (as in README.md).")
CsvOption = typer.Option(False, "--csv", help="CSV: the numbers as they are, a header line first.")
TaskArgument = typer.Argument(..., metavar="TASK")  # a registered task's name (dfst tasks)
ExecutorOption = typer.Option("serial", "--executor", help="serial (here, one cell after another) or ray "
                              "(each cell a Ray task; without Ray installed: serial, said).")
AddressOption = typer.Option(None, "--address", help="An existing Ray cluster: auto, or ray://HOST:10001. "
                             "Default: start a local Ray bound to 127.0.0.1.")
WorkersOption = typer.Option(None, "--workers", help="CPUs of the local Ray (default: all of them).")
AgentOption = typer.Option(None, "--agent", metavar="FILE",
                           help="Your agent JSON instead of the task's expert, on the task's layout: its "
                                "PTOs and its own answers are the reference.")
AgentReferenceOption = typer.Option(
    None, "--agent", metavar="FILE",
    help="Score against this agent JSON's own answers (default: the agent the model was trained to imitate, "
         "else the task's answers).")
# Operands like "-5" must reach our validation (and its clear message), not the option parser.
OPERAND_SETTINGS = {"ignore_unknown_options": True}


def _show_version(value: bool) -> None:
    if value:
        from dfst import __version__

        print(f"dfst {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_show_version, is_eager=True,
                                          help="Print dfst's version and exit."),
             tasks_file: Path = typer.Option(
                 None, "--tasks-file", metavar="FILE.py",
                 help="Register the tasks this Python file's TASKS lists (your own code: it is run; "
                      "also DFST_TASKS_FILE).")) -> None:
    """dfst: exact learning of algorithms by gradient descent."""
    from dfst.tasks.user import load_tasks_file, load_tasks_from_environment

    load_tasks_from_environment()
    if tasks_file is not None:
        load_tasks_file(tasks_file)


NAME_MAX, PATH_MAX = 255, 4096  # Linux's limits on one path name and a whole path, in bytes
# Characters of one error or note line, whatever the input quoted in it: dfst's own longest messages
# (a memory estimate that lists each part and the option to raise) run to about 500.
MAX_LINE = 600
LONG_WORD = 200  # characters of one word of it (a path, a number) shown whole


def one_line(text: object, limit: int = MAX_LINE) -> str:
    """`text` on one line of at most `limit` characters. A word (a path, a number, a quoted value)
    over LONG_WORD characters keeps its start and end; a line still too long keeps its start (the
    problem) and its end (what to do), the middle said to be left out: a message that quotes a
    4,096-byte path or lists 200,000 states stays readable (one such note was a 1.7 MB line)."""
    line = " ".join(_short_word(word) for word in str(text).split())
    if len(line) <= limit:
        return line
    tail = limit // 4
    marker = f" [... {len(line) - limit:,}+ characters left out ...] "
    head = max(limit - tail - len(marker), 0)
    return line[:head] + marker + line[len(line) - tail:]


def _short_word(word: str) -> str:
    if len(word) <= LONG_WORD:
        return word
    return f"{word[:LONG_WORD // 2]}...[{len(word):,} characters]...{word[-LONG_WORD // 4:]}"


def listing(names: Sequence[str], shown: int = 10) -> str:
    """The first `shown` of `names`, comma-separated, and "... and N more" for the rest."""
    more = f" ... and {len(names) - shown:,} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def fail(message: str, code: int = 2, *, as_json: bool = False) -> int:
    """One line on stderr (at most MAX_LINE characters); with --json, the same error as a JSON
    document on stdout too."""
    message = one_line(message, MAX_LINE - len("dfst: error: "))
    print(f"dfst: error: {message}", file=sys.stderr)
    if as_json:
        print_json({"error": message, "exit_code": code})
    return code


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dfst` script; returns the exit code (0 holds, 1 does not, 2 error)."""
    args = sys.argv[1:] if argv is None else [str(a) for a in argv]
    as_json = "--json" in args
    try:
        result = app(args=args, standalone_mode=False, prog_name="dfst")
    except DfstError as exc:
        return fail(str(exc), as_json=as_json)
    except typer.Exit as exc:  # typer turns Ctrl-C into Exit(130), silently
        return fail("interrupted", 130, as_json=as_json) if exc.exit_code == 130 else exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        return fail("interrupted", 130, as_json=as_json)
    except SystemExit as exc:  # dfst never exits this way: code it called did (a task's own function)
        if _reader_went_away(exc):
            return exc.code if isinstance(exc.code, int) else 1  # `dfst tasks | head`: nothing to say
        return fail(f"code dfst called (a task's own function?) called sys.exit({exc.code!r})",
                    as_json=as_json)
    except MemoryError:
        return fail("out of memory (see --max-memory and docs/safety.md)", as_json=as_json)
    except OSError as exc:
        return fail(os_error_message(exc), as_json=as_json)
    except Exception as exc:
        if hasattr(exc, "format_message"):  # the parser's usage errors
            return fail(_usage_message(exc.format_message()), getattr(exc, "exit_code", 2), as_json=as_json)
        return _internal_error(exc, as_json)
    except GeneratorExit as exc:  # from a user's code; other BaseExceptions (a test's pytest.fail) pass
        return _internal_error(exc, as_json)
    finally:
        release_all_outputs()  # a command that stopped before writing its outputs frees them
    return result if isinstance(result, int) else 0


def _reader_went_away(exc: SystemExit) -> bool:
    """The exit that rich or the parser make when the reader of stdout went away (`dfst --help |
    head`): they catch the broken pipe and exit 1, which is nobody's error."""
    context = exc.__context__
    while context is not None:
        if isinstance(context, OSError) and context.errno == errno.EPIPE:
            return True
        context = context.__context__
    return False


def _usage_message(message: str) -> str:
    """The parser's message, except that an "extra argument" that starts with -- is named for what
    it is: an option the command does not have (a typo, with operands that may start with -)."""
    if not message.strip():  # `dfst` alone: the parser printed the usage and has nothing to add
        return "no command given (the commands are listed above; dfst --help shows them again)"
    found = re.search(r"unexpected extra argument(?:s|\(s\))? \((--[^\s)]+)", message)
    return f"No such option: {found[1]} (--help lists the command's options)" if found else message


def os_error_message(exc: OSError) -> str:
    """The system's refusal of a path or a write (a name too long, no space left, no permission):
    the user's input or machine, not a bug of dfst's, so one line without the internal-error plea."""
    path = exc.filename if exc.filename is not None else exc.filename2
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.ENAMETOOLONG and path is not None:
        reason += f" ({_too_long(os.fsencode(path))})"
    return f"{path}: {reason}" if path is not None else reason


def _too_long(path: bytes) -> str:
    """Which limit a path name passes: one name over NAME_MAX bytes, or the whole over PATH_MAX."""
    longest = max(path.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        return f"a name of {len(longest):,} bytes in it; the limit is {NAME_MAX} bytes per name"
    return f"{len(path):,} bytes; the limit is {PATH_MAX:,} bytes per path and {NAME_MAX} per name"


def _internal_error(exc: BaseException, as_json: bool) -> int:
    """A bug of dfst's, not the user's: one line (the traceback with DFST_DEBUG=1), exit code 2."""
    if os.environ.get("DFST_DEBUG"):
        raise exc
    return fail(f"internal error: {type(exc).__name__}: {exc} (rerun with DFST_DEBUG=1 for the "
                "traceback, and please report it)", as_json=as_json)


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=1) + "\n")


def note(text: str) -> None:
    """A note on stderr (stdout stays the command's output): `dfst: note: TEXT`."""
    print(f"dfst: note: {one_line(text, MAX_LINE - len('dfst: note: '))}", file=sys.stderr)


def note_agent(task, quiet: bool) -> None:
    """On stderr (not with --json, whose report says it): the states of a --agent that no rule
    reaches, which dfst ignores."""
    unreachable = task.describe().get("unreachable_states")
    if unreachable and not quiet:
        note(f"agent {task.agent.name!r} never reaches state(s) {listing(unreachable)}; they are ignored")


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
    from dfst.io.inputs import InputMissing, read_text

    try:  # a regular file under the operand cap: @/dev/zero or a FIFO is refused, not read
        return "".join(read_text(text[1:], "operand file", "operand_bytes").split())
    except InputMissing:
        raise DfstError(f"cannot read operand file {text[1:]}: it does not exist") from None


def show_rows(rows: list[dict], columns: tuple[str, ...], title: str, *,
              markdown: bool = False, as_json: bool = False, as_csv: bool = False,
              raw: list[dict] | None = None) -> None:
    """Print result rows as JSON, a Markdown table (for README and docs), CSV or a rich table.
    `raw`: the rows' values before they were formatted for people; CSV writes those, so a program
    reads 6188, not "6,188", and "best (median)" as two columns."""
    if as_json:
        return print_json(rows)
    check_table_format(markdown, as_csv)
    if as_csv:
        return write_csv(raw if raw is not None else rows, None if raw is not None else columns)
    cells = [[f"{row[c]:,}" if isinstance(row[c], int) else str(row[c]) for c in columns] for row in rows]
    if markdown:
        print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
        print("\n".join("| " + " | ".join(line) + " |" for line in cells))
        return
    table = Table(*columns, title=title)
    for line in cells:
        table.add_row(*line)
    print_table(table)


def write_csv(rows: list[dict], columns: tuple[str, ...] | None = None) -> None:
    """Rows as CSV on stdout: nested records flattened to `outer_inner` columns, lists joined by
    ";", None left empty; `columns` (default: every key, in first-seen order) picks and orders them."""
    flat = [_flatten(row) for row in rows]
    if columns is None:
        keys = list(dict.fromkeys(key for row in flat for key in row))
        # a record that is null in some rows: its flattened columns stand for it, left empty there
        columns = tuple(k for k in keys if not any(o.startswith(f"{k}_") for o in keys)
                        or any(row.get(k) is not None for row in flat))
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([row.get(c) for c in columns] for row in flat)


def _flatten(row: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat |= _flatten(value, f"{name}_")
        else:
            flat[name] = ";".join(map(str, value)) if isinstance(value, (list, tuple)) else value
    return flat


def check_table_format(markdown: bool, as_csv: bool) -> None:
    """Refuse --markdown with --csv (before a long command's work, where it has any)."""
    if markdown and as_csv:
        raise DfstError("--markdown and --csv exclude each other: pick one")


def print_table(table: Table) -> None:
    """A rich table on the terminal at its width; piped or redirected, whole (at 80 columns, the
    width rich assumes without a terminal, a wide table's cells were cut to "sam…")."""
    if console.is_terminal:
        return console.print(table)
    width = console.measure(table, options=console.options.update_width(100_000)).maximum
    Console(width=max(width, 1), file=sys.stdout, no_color=True, highlight=False).print(table)



@contextmanager
def progress_bar(description: str, total: int | None = None, *,
                 quiet: bool) -> Iterator[Callable[..., None]]:
    """A transient "done of total" bar on the console (off with --json: stdout is one document).

    Yields `update(done, total=...)`; the bar is drawn from the first update on, so the checks a
    library function makes before its work leave the terminal as it was when they refuse."""
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, transient=True, disable=quiet)
    bar = progress.add_task(description, total=total)

    def update(done: int, total: int | None = total) -> None:
        if not progress.live.is_started:
            progress.start()
        progress.update(bar, completed=done, total=total)

    try:
        yield update
    finally:
        if progress.live.is_started:
            progress.stop()


ExtractedOption = typer.Option(False, "--extracted", help="With a run directory: the automaton read off "
                               "the trained weights (RUN/extracted) instead of the weights (RUN/model).")
PathArgument = typer.Argument(..., metavar="RUN|CHECKPOINT", help="A dfst train run directory (its trained "
                              "weights, or --extracted) or a checkpoint directory (compile, train, extract).")


def target_of(path: Path, extracted: bool, quiet: bool) -> Path:
    """The checkpoint that `path` names (a run: its model/ or extracted/), said on stderr when it is
    a run's, so that a reader knows which model the figures are about."""
    from dfst.io.targets import resolve

    target = resolve(path, extracted=extracted)
    if target.run is not None and not quiet:
        print(f"dfst: using {target.describe()}", file=sys.stderr)
    return target.checkpoint


@contextmanager
def cell_progress(total: int, *, quiet: bool) -> Iterator[Callable[[int, int, int, int], None]]:
    """A transient bar of cells: done of total, with how many are running and how many failed."""
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, transient=True, disable=quiet)
    bar = progress.add_task("cells", total=total)

    def update(done: int, running: int, failed: int, total: int) -> None:
        if not progress.live.is_started:
            progress.start()
        progress.update(bar, completed=done, total=total,
                        description=f"cells: {running} running, {failed} failed")

    try:
        yield update
    finally:
        if progress.live.is_started:
            progress.stop()

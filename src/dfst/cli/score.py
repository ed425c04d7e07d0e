"""`dfst score`: any model, in any language, under dfst's length-generalisation protocol (docs/score.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dfst.cli.app import (
    JsonOption,
    TaskArgument,
    app,
    console,
    fail,
    parse_lengths,
    print_json,
    print_table,
    progress_bar,
)
from dfst.errors import DfstError
from dfst.protocol.config import UNTIL_FAIL_BUDGET
from dfst.protocol.tally import DEFAULT_RANDOM
from dfst.results.wording import lg_words


@app.command("score")
def score_command(
    task_name: str = TaskArgument,
    cmd: str = typer.Option(None, "--cmd", metavar="COMMAND",
                            help="The model: a command (run by /bin/sh) reading one request a line on stdin, "
                                 '{"id": 7, "a": "987", "b": "45"}, and writing one reply a line on stdout, '
                                 '{"id": 7, "answer": "1032"}, flushing after each.'),
    answers: Path = typer.Option(None, "--answers", metavar="FILE.jsonl",
                                 help="Score replies computed elsewhere, one a line, any order."),
    instances_out: Path = typer.Option(None, "--instances-out", metavar="FILE.jsonl",
                                       help="Write the instance set's requests, score nothing."),
    instances: Path = typer.Option(None, "--instances", metavar="FILE.jsonl",
                                   help="With --answers: the file the answers were computed from; it must "
                                        "be this set (its SHA-256 is checked)."),
    trained_on: Path = typer.Option(None, "--trained-on", metavar="FILE.jsonl",
                                    help='The pairs the model was trained on, {"a": "...", "b": "..."} a '
                                         "line: never scored (left out of the hard set, random pairs drawn "
                                         "again)."),
    digits: str = typer.Option("10,100,1000", "--digits", help="Comma-separated operand lengths N."),
    random: int = typer.Option(DEFAULT_RANDOM, "--random",
                               help="Random pairs per length (default: a model wrong on 0.1% of them is "
                                    "caught with 95% probability; 10 is the paper's protocol)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random pairs (length N draws from seed + N)."),
    until_fail: bool = typer.Option(False, "--until-fail", help="Climb x2 until a failure or the budget."),
    time_budget: float = typer.Option(None, "--time-budget",
                                      help="Seconds; stop before a length predicted to overrun it "
                                           f"(default with --until-fail: {UNTIL_FAIL_BUDGET:g})."),
    max_digits: int = typer.Option(10**6, "--max-digits", help="Upper end of the --until-fail ladder."),
    timeout: float = typer.Option(60.0, "--timeout",
                                  help="Seconds the command may go without reading or answering while a "
                                       "request waits."),
    max_reply: str = typer.Option(None, "--max-reply", metavar="SIZE",
                                  help="Longest reply line (default 1M plus 4x the longest request)."),
    as_json: bool = JsonOption,
) -> int:
    """Score a model that is not dfst's: hard instances and random pairs at each length, exact answers.

    Exit code 0: robust (every instance exact) at every length; 1: not; 2: bad input, or the command
    crashed, hung or printed something that is not a reply (one line says which)."""
    from dfst.protocol import EvalConfig
    from dfst.protocol.instances import HeldOut, read_pairs
    from dfst.tasks import get_task

    task = get_task(task_name)
    _one_source(cmd, answers, instances_out, instances)
    cfg = EvalConfig(parse_lengths(digits, "--digits"), random, True, seed, until_fail=until_fail,
                     max_digits=max_digits, time_budget=time_budget)
    held_out = HeldOut(read_pairs(trained_on) if trained_on is not None else ())
    if instances_out is not None:
        return _write_set(task, cfg, instances_out, as_json, held_out)
    with progress_bar("scoring", quiet=as_json) as update:
        result = _score(task, cfg, cmd, answers, timeout, max_reply,
                        lambda n, done, total: update(done, total=total), held_out)
    if instances is not None and "error" not in result.details:
        _check_instances_file(instances, result.details["instances_sha256"])
    if as_json:
        print_json(result.to_dict())
    else:
        _print_result(result)
    if "error" in result.details:  # the lengths before it are printed (--json: its "error" says it)
        return fail(f"scoring stopped {result.details['error']}")
    return 0 if all(level["robust"] for level in result.levels) else 1


def _one_source(cmd: str | None, answers: Path | None, instances_out: Path | None,
                instances: Path | None) -> None:
    options = (("--cmd", cmd), ("--answers", answers), ("--instances-out", instances_out))
    given = [name for name, value in options if value is not None]
    if len(given) != 1:
        both = f"; not {' and '.join(given)}" if given else ""
        raise DfstError("give one of --cmd COMMAND (a model to run), --answers FILE (its answers) or "
                        f"--instances-out FILE (the set to answer){both}")
    if instances is not None and answers is None:
        raise DfstError("--instances goes with --answers (it checks the answers' instance set)")


def _score(task, cfg, cmd, answers, timeout, max_reply, on_progress, held_out):
    from dfst.io.limits import parse_size
    from dfst.protocol import score_with
    from dfst.protocol.answers import AnswersFile
    from dfst.protocol.child import CommandModel, default_reply_cap
    from dfst.protocol.ladder import ladder

    cap = None if max_reply is None else parse_size(max_reply, "--max-reply")
    if cmd is not None:
        with CommandModel(cmd, timeout=timeout, max_reply=cap) as model:
            return score_with(model.answer, task, cfg, system="external", config={"command": cmd},
                              on_progress=on_progress, held_out=held_out)
    longest = max(ladder(cfg)) * 2 + 64  # the longest request line of the set
    with AnswersFile(answers, cap or default_reply_cap(longest)) as source:
        result = score_with(source.answer, task, cfg, system="answers", config={"answers": str(answers)},
                            on_progress=on_progress, held_out=held_out)
        if "error" not in result.details:  # a length that failed stopped the reading: the rest is unused
            source.check_all_used()
    return result


def _write_set(task, cfg, path: Path, as_json: bool, held_out) -> int:
    from dfst.protocol.export import write_instances

    sha256, count = write_instances(task, cfg, path, held_out)
    if as_json:
        print_json({"task": task.name, "file": str(path), "instances": count, "instances_sha256": sha256,
                    "config": cfg.to_dict()})
    else:
        console.print(f"wrote {count:,} instances of {task.name} to {path}\ninstance set sha256: {sha256}",
                      highlight=False)
    return 0


def _check_instances_file(path: Path, sha256: str) -> None:
    from dfst.protocol.answers import file_sha256

    found = file_sha256(path, "instances file")
    if found != sha256:
        raise DfstError(f"instances file {path} is not this instance set (its sha256 is {found[:16]}..., "
                        f"the set's {sha256[:16]}...): give the TASK, --digits, --random and --seed it was "
                        "written with")


def _print_result(result) -> None:
    from rich.table import Table

    from dfst.tasks import get_task

    table = Table("N", "hard set", "random pairs", "95% Wilson (random)", "failure rate (95%)", "seconds",
                  title=f"{result.task}: {result.system} under dfst's protocol")
    for lv in result.levels:
        bound = "-" if lv["failure_rate_bound"] is None else f"< {lv['failure_rate_bound']:.2%}"
        table.add_row(f"{lv['digits']:,}", _verdict(lv["hard_exact"], lv["hard"]),
                      _verdict(lv["random_exact"], lv["random"]),
                      f"[{lv['wilson_low']:.4f}, {lv['wilson_high']:.4f}]", bound, f"{lv['seconds']:.2f}")
    print_table(table)
    for lv in result.levels:
        if lv["first_failure"]:
            f = lv["first_failure"]
            shown = get_task(result.task).show(_cut(f["a"]), _cut(f["b"]))
            console.print(f"[red]first failure at N={lv['digits']:,}[/]: {f['name']} (id {f['id']}) {shown}: "
                          f"expected {_cut(f['expected'])}, got {_cut(f['answer'])}", highlight=False,
                          soft_wrap=True)
    d = result.details
    console.print(f"{lg_words(result.robust_lg, result.levels)}, "
                  f"{lg_words(result.probabilistic_lg, result.levels, 'probabilistic')}; "
                  f"stopped by: {d['stopped_by']}\ninstance set sha256: {d['instances_sha256']} "
                  f"({d['instance_count']:,} instances, hard set {d['hard_set']})\n"
                  f"dfst's own time: {d['dfst_cpu_seconds']:.2f} s CPU of {d['seconds']:.2f} s",
                  highlight=False, soft_wrap=True)
    sys.stdout.flush()


def _verdict(exact: int, total: int) -> str:
    if total == 0:
        return "-"
    style = "green" if exact == total else "red"
    return f"[{style}]{exact:,}/{total:,}[/]"


def _cut(text: str | None) -> str:
    if text is None:
        return "null"
    return text if len(text) <= 40 else f"{text[:18]}...{text[-18:]} ({len(text):,} chars)"

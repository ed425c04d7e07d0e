"""One transducer type for every agent in dfst: experts, compiled models and extracted automata.

A grid agent M = (Q, Σ, δ, q0, qf) has named states and symbols and partial rules
δ(q, σ) = (q', σ', move) with moves U, D, L, R, S. The move S means "write, then stop": it is used
for nothing else, and the rule that emits it enters the final state. This puts the stop in every
PTO, so a learned model learns when to stop.

Validation collects every problem before it raises, so a user editing an agent's JSON sees them all.
JSON schema (version 1), human-readable and written with sorted, stable rule order:

    {"format": "dfst-agent", "version": 1, "name": "...",
     "states": ["q0", ...], "alphabet": ["0", "1", "_"], "blank": "_",
     "initial": "q0", "final": "halt",
     "rules": [{"state": "q0", "read": "1", "next": "q1", "write": "0", "move": "L"}, ...]}

It stands at the top of the package, outside `grid/`: a user's own agent and task are written against
it (`from dfst.automata import Rule, make_transducer`), and it needs nothing of dfst but the errors
and the capped reads. `param_count` is the size of the DFST an agent compiles to, torch-free.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dfst.errors import DfstError
from dfst.io.inputs import InputMissing, read_json

MOVES = ("U", "D", "L", "R", "S")  # the order of the DFST's move scores (C has 5 rows)
MOVE_INDEX = {m: i for i, m in enumerate(MOVES)}
MOVE_DELTA = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1), "S": (0, 0)}  # (row, col) change
MOVE_DELTAS = tuple(MOVE_DELTA[m] for m in MOVES)  # the same, by move index (engines, the env)
HALT_MOVE = "S"  # "write, then stop": the one way any agent or model halts
STOP = MOVE_INDEX[HALT_MOVE]  # its index, in traces, tables and score vectors
FINAL_STATE = "halt"  # the final state of every automaton dfst builds (extracted, learned)
HALT_TARGET = -1  # the successor of a halting step in integer edge tables (lockstep graphs, extraction)
RULE_KEYS = ("state", "read", "next", "write", "move")
FORMAT = "dfst-agent"
VERSION = 1
MAX_SHOWN_PROBLEMS = 20  # in the message; AgentError.problems keeps them all


class AgentError(DfstError):
    """An agent definition with one or more problems; `problems` lists them all."""

    def __init__(self, problems: list[str], name: str = "agent"):
        self.problems = problems
        shown = problems[:MAX_SHOWN_PROBLEMS]  # a broken 10^5-rule agent must not print megabytes
        more = f"; and {len(problems) - len(shown):,} more" if len(problems) > len(shown) else ""
        super().__init__(f"invalid {name}: " + "; ".join(shown) + more)


@dataclass(frozen=True)
class Rule:
    """What the agent does in state `state` reading `read`."""

    state: str
    read: str
    next: str
    write: str
    move: str


@dataclass(frozen=True)
class Transducer:
    """A validated grid agent. Build it with `make_transducer`, which checks everything."""

    name: str
    states: tuple[str, ...]
    alphabet: tuple[str, ...]
    blank: str
    initial: str
    final: str
    rules: Mapping[tuple[str, str], Rule]

    @property
    def d(self) -> int:
        """Number of states, the DFST's hidden size."""
        return len(self.states)

    @property
    def k(self) -> int:
        """Number of symbols, the DFST's input size."""
        return len(self.alphabet)

    def rule(self, state: str, read: str) -> Rule | None:
        return self.rules.get((state, read))

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Integer lookup tables (next state, written symbol, move), each d×k, -1 where no rule;
        built once per agent (every run of a rollout reads them) and read-only, since shared."""
        return self._tables

    @functools.cached_property
    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        state_ix = {q: i for i, q in enumerate(self.states)}
        symbol_ix = {s: i for i, s in enumerate(self.alphabet)}
        nxt = np.full((self.d, self.k), -1, dtype=np.int32)
        wrt = np.full((self.d, self.k), -1, dtype=np.int32)
        mov = np.full((self.d, self.k), -1, dtype=np.int32)
        for (q, s), r in self.rules.items():
            i, j = state_ix[q], symbol_ix[s]
            nxt[i, j], wrt[i, j], mov[i, j] = state_ix[r.next], symbol_ix[r.write], MOVE_INDEX[r.move]
        for table in (nxt, wrt, mov):
            table.setflags(write=False)
        return nxt, wrt, mov

    def to_dict(self) -> dict:
        order = {q: i for i, q in enumerate(self.states)}
        sym = {s: i for i, s in enumerate(self.alphabet)}
        rules = sorted(self.rules.values(), key=lambda r: (order[r.state], sym[r.read]))
        return {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "states": list(self.states),
            "alphabet": list(self.alphabet),
            "blank": self.blank,
            "initial": self.initial,
            "final": self.final,
            "rules": [r.__dict__ for r in rules],
        }


def make_transducer(
    states: Iterable[str],
    alphabet: Iterable[str],
    rules: Iterable[Rule],
    *,
    initial: str,
    final: str,
    blank: str,
    name: str = "agent",
) -> Transducer:
    """Validate and build a transducer; raise AgentError listing every problem found."""
    states, alphabet, rules = tuple(states), tuple(alphabet), tuple(rules)
    problems = _check_names(states, alphabet, initial, final, blank)
    table: dict[tuple[str, str], Rule] = {}
    state_set, symbol_set = set(states), set(alphabet)  # once: per rule, 10^5 states took 77 s
    for r in rules:
        problems += _check_rule(r, state_set, symbol_set, final)
        if (r.state, r.read) in table:
            problems.append(f"two rules for state {r.state!r} reading {r.read!r}")
        table[(r.state, r.read)] = r
    if problems:
        raise AgentError(problems, name)
    return Transducer(name, states, alphabet, blank, initial, final, table)


def _check_names(states, alphabet, initial, final, blank) -> list[str]:
    problems = []
    for kind, names in (("state", states), ("symbol", alphabet)):
        if not names:
            problems.append(f"no {kind}s")
        counts = Counter(names)  # names.count(n) per name was quadratic
        problems += [f"{kind} {n!r} listed twice" for n in sorted(n for n, c in counts.items() if c > 1)]
        problems += [f"{kind} name {n!r} is not a non-empty string" for n in names
                     if not isinstance(n, str) or not n]
    for kind, n in (("initial state", initial), ("final state", final)):
        if n not in states:
            problems.append(f"{kind} {n!r} is not in states")
    if blank not in alphabet:
        problems.append(f"blank symbol {blank!r} is not in the alphabet")
    if initial == final:
        problems.append("initial and final state are the same")
    return problems


def _check_rule(r: Rule, states: set, alphabet: set, final: str) -> list[str]:
    where = f"rule ({r.state!r}, {r.read!r})"
    problems = [f"{where}: unknown state {q!r}" for q in (r.state, r.next) if q not in states]
    problems += [f"{where}: unknown symbol {s!r}" for s in (r.read, r.write) if s not in alphabet]
    if r.move not in MOVE_INDEX:
        problems.append(f"{where}: unknown move {r.move!r} (expected one of {', '.join(MOVES)})")
    if r.state == final:
        problems.append(f"{where}: leaves the final state")
    if r.move == HALT_MOVE and r.next != final:
        problems.append(f"{where}: move S must enter the final state {final!r}")
    if r.next == final and r.move != HALT_MOVE:
        problems.append(f"{where}: enters the final state without the halting move S")
    return problems


def transducer_from_dict(data: object) -> Transducer:
    """Build from the JSON schema above; every problem is reported at once."""
    if not isinstance(data, dict):
        raise AgentError(["top level is not a JSON object"])
    missing = [key for key in ("states", "alphabet", "blank", "initial", "final", "rules")
               if key not in data]
    if missing:
        raise AgentError([f"missing key {key!r}" for key in missing])
    if data.get("format", FORMAT) != FORMAT or data.get("version", VERSION) != VERSION:
        raise AgentError([f"not a {FORMAT} version {VERSION} file"])
    problems = _type_problems(data)
    rules = []
    for i, raw in enumerate(data["rules"] if isinstance(data["rules"], list) else [None]):
        fields = [raw.get(key) for key in RULE_KEYS] if isinstance(raw, dict) else [None]
        if len(fields) != len(RULE_KEYS) or not all(isinstance(f, str) for f in fields):
            problems.append(f"rule #{i} is malformed (needs string fields {', '.join(RULE_KEYS)})")
        else:
            rules.append(Rule(*fields))
    if problems:
        raise AgentError(problems)
    return make_transducer(data["states"], data["alphabet"], rules, initial=data["initial"],
                           final=data["final"], blank=data["blank"], name=data.get("name", "agent"))


def _type_problems(data: dict) -> list[str]:
    """Names must be strings and name lists lists of strings, before anything looks inside them."""
    problems = [f"{key!r} must be a string" for key in ("blank", "initial", "final")
                if not isinstance(data[key], str)]
    for key in ("states", "alphabet"):
        if not isinstance(data[key], list) or not all(isinstance(n, str) for n in data[key]):
            problems.append(f"{key!r} must be a list of strings")
    if not isinstance(data["rules"], list):
        problems.append("'rules' must be a list")
    return problems


def save_transducer(agent: Transducer, path: str | Path) -> None:
    from dfst.io.outputs import write_json

    write_json(path, agent.to_dict())


def load_transducer(path: str | Path) -> Transducer:
    """The agent JSON at `path`, read through dfst.io.inputs (size and depth caps) and validated."""
    try:
        data = read_json(path, "agent file")
    except InputMissing:
        raise DfstError(f"cannot read agent file {path}: it does not exist") from None
    return transducer_from_dict(data)


def to_dot(agent: Transducer) -> str:
    """Graphviz DOT: one edge per (state, next) pair, labelled 'read/write move' lines."""
    edges: dict[tuple[str, str], list[str]] = {}
    for r in agent.to_dict()["rules"]:
        edges.setdefault((r["state"], r["next"]), []).append(f"{r['read']}/{r['write']} {r['move']}")
    lines = [f"digraph {json.dumps(agent.name)} {{", "  rankdir=LR;",
             f"  {json.dumps(agent.final)} [shape=doublecircle];",
             f"  __start [shape=point]; __start -> {json.dumps(agent.initial)};"]
    lines += [f"  {json.dumps(q)};" for q in agent.states if q != agent.final]  # rule-less ones too
    for (q, p), labels in edges.items():
        lines.append(f"  {json.dumps(q)} -> {json.dumps(p)} [label={json.dumps(chr(10).join(labels))}];")
    return "\n".join(lines + ["}"]) + "\n"


def param_count(k: int, d: int) -> int:
    """Parameters of the DFST of k symbols and d hidden dimensions (A, B, C and h0) that an agent of
    k symbols and d states compiles to: k·d·(k + d + 5) + d (here, torch-free, for the CLI)."""
    return k * d * (k + d + 5) + d

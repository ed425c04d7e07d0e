"""The transducer type: validation that reports every problem, JSON round trips, DOT, lookup tables."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from dfst.automata import (
    MOVES,
    AgentError,
    Rule,
    Transducer,
    load_transducer,
    make_transducer,
    save_transducer,
    to_dot,
    transducer_from_dict,
)
from dfst.errors import DfstError
from dfst.tasks import TASKS

# Flip every bit of a word, left to right, and stop on the blank after it.
FLIP = [
    # state   read   next     write  move
    ("scan", "0", "scan", "1", "R"),
    ("scan", "1", "scan", "0", "R"),
    ("scan", "_", "halt", "_", "S"),
]

# Every rule problem once, on top of a valid core (the first rule) so nothing else is reported.
BROKEN_RULES = [
    ("scan", "0", "scan", "1", "R"),
    ("scan", "1", "nowhere", "0", "R"),  # unknown state
    ("scan", "2", "scan", "0", "R"),     # unknown symbol
    ("back", "0", "back", "0", "L"),
    ("back", "0", "scan", "0", "R"),     # second rule for (back, 0)
    ("halt", "0", "scan", "0", "R"),     # leaves the final state
    ("scan", "_", "scan", "_", "S"),     # S without entering the final state
    ("back", "1", "halt", "1", "L"),     # enters the final state without S
    ("back", "_", "scan", "_", "X"),     # unknown move
]
BROKEN_RULE_PROBLEMS = [
    "rule ('scan', '1'): unknown state 'nowhere'",
    "rule ('scan', '2'): unknown symbol '2'",
    "two rules for state 'back' reading '0'",
    "rule ('halt', '0'): leaves the final state",
    "rule ('scan', '_'): move S must enter the final state 'halt'",
    "rule ('back', '1'): enters the final state without the halting move S",
    "rule ('back', '_'): unknown move 'X'",
]


QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')  # a JSON string literal


def rules_of(table) -> list[Rule]:
    return [Rule(*row) for row in table]


def flip_agent(table=FLIP, states=("scan", "halt")) -> Transducer:
    return make_transducer(states, ("0", "1", "_"), rules_of(table), initial="scan", final="halt",
                           blank="_", name="flip")


def assert_problems(error: AgentError, expected: list[str]) -> None:
    """Each expected fragment is in exactly one problem, and nothing else is reported."""
    for fragment in expected:
        hits = [p for p in error.problems if fragment in p]
        assert len(hits) == 1, f"{fragment!r} reported {len(hits)} times in {error.problems}"
    assert len(error.problems) == len(expected), error.problems


def test_valid_literal_agent():
    agent = flip_agent()
    assert (agent.d, agent.k) == (2, 3)
    assert agent.rule("scan", "1") == Rule("scan", "1", "scan", "0", "R")
    assert agent.rule("halt", "0") is None
    assert set(agent.rules) == {("scan", "0"), ("scan", "1"), ("scan", "_")}


def test_every_rule_problem_is_reported_at_once():
    with pytest.raises(AgentError) as info:
        make_transducer(("scan", "back", "halt"), ("0", "1", "_"), rules_of(BROKEN_RULES),
                        initial="scan", final="halt", blank="_", name="broken")
    assert_problems(info.value, BROKEN_RULE_PROBLEMS)
    assert str(info.value).startswith("invalid broken: ")
    assert all(p in str(info.value) for p in info.value.problems)
    assert isinstance(info.value, DfstError)


def test_every_name_problem_is_reported_at_once():
    with pytest.raises(AgentError) as info:
        make_transducer(("scan", "scan", "", "halt"), ("0", "1", "1", "_"), [],
                        initial="start", final="stop", blank="#")
    assert_problems(info.value, [
        "state 'scan' listed twice",
        "symbol '1' listed twice",
        "state name '' is not a non-empty string",
        "initial state 'start' is not in states",
        "final state 'stop' is not in states",
        "blank symbol '#' is not in the alphabet",
    ])


def test_empty_names_and_initial_equal_to_final():
    with pytest.raises(AgentError) as info:
        make_transducer((), (), [], initial="q", final="q", blank="_")
    assert_problems(info.value, [
        "no states", "no symbols", "initial state 'q' is not in states",
        "final state 'q' is not in states", "blank symbol '_' is not in the alphabet",
        "initial and final state are the same",
    ])


def test_json_round_trip_of_literal_agent():
    agent = flip_agent()
    data = agent.to_dict()
    assert (data["format"], data["version"], data["name"]) == ("dfst-agent", 1, "flip")
    assert transducer_from_dict(json.loads(json.dumps(data))) == agent


@pytest.mark.parametrize("name", TASKS)
def test_json_round_trip_of_experts(name, tmp_path):
    agent = TASKS[name].agent
    assert transducer_from_dict(agent.to_dict()) == agent
    path = tmp_path / f"{name}.json"
    save_transducer(agent, path)
    assert load_transducer(path) == agent
    assert json.loads(path.read_text()) == agent.to_dict()


def test_rule_order_is_stable_whatever_the_input_order(tmp_path):
    forward, backward = flip_agent(), flip_agent(FLIP[::-1])
    assert forward.to_dict() == backward.to_dict()
    assert [(r["state"], r["read"]) for r in forward.to_dict()["rules"]] == [
        ("scan", "0"), ("scan", "1"), ("scan", "_")]
    save_transducer(forward, tmp_path / "a.json")
    save_transducer(backward, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_save_replaces_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "agent.json"
    save_transducer(TASKS["add2"].agent, path)
    save_transducer(flip_agent(), path)
    assert load_transducer(path) == flip_agent()
    assert [p.name for p in tmp_path.iterdir()] == ["agent.json"]


def _flip_dict(**changes) -> dict:
    data = flip_agent().to_dict()
    data.update(changes)
    return data


def test_missing_keys_are_all_listed():
    data = _flip_dict()
    for key in ("states", "blank", "rules"):
        del data[key]
    with pytest.raises(AgentError) as info:
        transducer_from_dict(data)
    assert info.value.problems == ["missing key 'states'", "missing key 'blank'", "missing key 'rules'"]


@pytest.mark.parametrize("data", [
    [1, 2], "agent", None,
    _flip_dict(format="dfst-model"), _flip_dict(version=2),
])
def test_not_an_agent_document(data):
    with pytest.raises(AgentError) as info:
        transducer_from_dict(data)
    assert len(info.value.problems) == 1


def test_malformed_rules_are_all_listed():
    rules = [{"state": "scan", "read": "0", "next": "scan", "write": "1"},  # no move
             "scan 1 -> scan 0 R",
             {"state": "scan", "read": "_", "next": "halt", "write": "_", "move": "S"}]
    with pytest.raises(AgentError) as info:
        transducer_from_dict(_flip_dict(rules=rules))
    assert [p.split(" is malformed")[0] for p in info.value.problems] == ["rule #0", "rule #1"]


def test_rules_not_a_list():
    with pytest.raises(AgentError, match="rule #0 is malformed"):
        transducer_from_dict(_flip_dict(rules={"scan": "0"}))


def test_invalid_agent_in_json_reports_every_problem():
    data = _flip_dict(initial="start")
    data["rules"].append({"state": "scan", "read": "0", "next": "halt", "write": "7", "move": "R"})
    with pytest.raises(AgentError) as info:
        transducer_from_dict(data)
    assert_problems(info.value, [
        "initial state 'start' is not in states", "unknown symbol '7'",
        "enters the final state without the halting move S", "two rules for state 'scan' reading '0'",
    ])


@pytest.mark.parametrize("field, value", [
    ("states", 5), ("alphabet", None), ("states", [["scan"], "halt"]),
    ("rule read", ["0"]), ("rule move", ["S"]),
])
def test_wrongly_typed_json_values_raise_agent_error(field, value):
    """A hand-edited file with a number or list where a name belongs is a user error, not a crash."""
    data = _flip_dict()
    if field.startswith("rule "):
        data["rules"][0][field.split()[1]] = value
    else:
        data[field] = value
    with pytest.raises(AgentError):
        transducer_from_dict(data)


def test_load_errors_are_dfst_errors(tmp_path):
    with pytest.raises(DfstError, match="cannot read"):
        load_transducer(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"states": [')
    with pytest.raises(DfstError, match="not valid JSON"):
        load_transducer(tmp_path / "bad.json")
    (tmp_path / "latin1.json").write_bytes(b'{"name": "\xe9"}')
    with pytest.raises(DfstError, match="not valid JSON"):
        load_transducer(tmp_path / "latin1.json")
    (tmp_path / "broken.json").write_text(json.dumps(_flip_dict(blank="#")))
    with pytest.raises(AgentError, match="blank symbol '#'"):
        load_transducer(tmp_path / "broken.json")


def _dot_states(dot: str) -> set[str]:
    """Quoted names on node and edge lines of the DOT text."""
    names = set()
    for line in dot.splitlines()[1:-1]:
        names |= {json.loads(q) for q in QUOTED.findall(line.split("[")[0])}  # not in [attributes]
    return names


def _dot_rules(dot: str) -> set[tuple[str, str, str, str, str]]:
    """(state, read, next, write, move) from the labelled edges of the DOT text."""
    rules = set()
    for line in dot.splitlines():
        if "[label=" not in line:
            continue
        ends, label = line.split(" [label=")
        q, p = (json.loads(name) for name in QUOTED.findall(ends))
        for entry in json.loads(label.removesuffix("];")).split("\n"):
            read_write, move = entry.split(" ")
            read, write = read_write.split("/")
            rules.add((q, read, p, write, move))
    return rules


@pytest.mark.parametrize("name", TASKS)
def test_to_dot_mentions_every_state_and_rule_of_experts(name):
    agent = TASKS[name].agent
    dot = to_dot(agent)
    assert dot.startswith(f'digraph "{name}" {{') and dot.rstrip().endswith("}")
    assert _dot_states(dot) == set(agent.states)
    assert f'__start -> "{agent.initial}"' in dot and f'"{agent.final}" [shape=doublecircle]' in dot
    assert _dot_rules(dot) == {(r.state, r.read, r.next, r.write, r.move) for r in agent.rules.values()}


def test_to_dot_mentions_a_state_without_rules():
    """An extracted automaton may declare a state no rule touches; the drawing should still show it."""
    agent = flip_agent(states=("scan", "spare", "halt"))
    assert _dot_states(to_dot(agent)) == {"scan", "spare", "halt"}


@pytest.mark.parametrize("agent", [flip_agent(), *(t.agent for t in TASKS.values())],
                         ids=["flip", *TASKS])
def test_tables_agree_with_rules(agent):
    nxt, wrt, mov = agent.tables()
    assert nxt.shape == wrt.shape == mov.shape == (agent.d, agent.k)
    for i, q in enumerate(agent.states):
        for j, s in enumerate(agent.alphabet):
            rule = agent.rule(q, s)
            got = (int(nxt[i, j]), int(wrt[i, j]), int(mov[i, j]))
            if rule is None:
                assert got == (-1, -1, -1), (q, s)
            else:
                assert (agent.states[got[0]], agent.alphabet[got[1]], MOVES[got[2]]) == (
                    rule.next, rule.write, rule.move)
    assert int(np.count_nonzero(mov >= 0)) == len(agent.rules)

"""`--agent FILE` on every command: the user's agent is the expert, its own answers the reference.

Variants of add2's expert: states renamed and permuted, a state split in two (both still add), and
`xor`, which never carries (another function; four of its states become unreachable).
"""

from __future__ import annotations

import copy
import json
import math
import random

import pytest

from cli_helpers import TRAIN_ADD2, assert_one_line_error, run, run_json
from dfst.automata import transducer_from_dict
from dfst.data import load_dataset
from dfst.errors import DfstError
from dfst.tasks import TASKS
from dfst.tasks.arith import exact_answer
from dfst.tasks.own_agent import AgentTask, agent_task
from dfst.train.dsize import GROWTH, states_lower_bound

ADD2 = TASKS["add2"]
EXPERT = ADD2.agent.to_dict()


def renamed() -> dict:
    rng = random.Random(1)
    names = {q: f"s{i}" for i, q in enumerate(rng.sample(EXPERT["states"], len(EXPERT["states"])))}
    return dict(EXPERT, name="renamed", states=sorted(names.values()), initial=names[EXPERT["initial"]],
                final=names[EXPERT["final"]],
                rules=[dict(r, state=names[r["state"]], next=names[r["next"]])
                       for r in reversed(EXPERT["rules"])])


def split() -> dict:
    """next0 split in two by the sum state it comes from."""
    rules = []
    for r in EXPERT["rules"]:
        if r["next"] == "next0":
            r = dict(r, next="next0a" if r["state"] == "sum0" else "next0b")
        rules += [dict(r, state="next0a"), dict(r, state="next0b")] if r["state"] == "next0" else [r]
    states = [q for q in EXPERT["states"] if q not in ("next0", "halt")] + ["next0a", "next0b", "halt"]
    return dict(EXPERT, name="split", states=states, rules=rules)


def xor() -> dict:
    """Never carries: the digits' sum mod 2 (next1, add1, sum2 and carry are never reached)."""
    return dict(EXPERT, name="xor", rules=[dict(r, next="next0") if r["next"] == "next1" else r
                                           for r in EXPERT["rules"]])


def xor_answer(a: str, b: str) -> str:
    n = max(len(a), len(b))
    digits = "".join(str((int(x) + int(y)) % 2) for x, y in zip(a.zfill(n), b.zfill(n), strict=True))
    return digits.lstrip("0") or "0"


def write(tmp_path, agent: dict):
    path = tmp_path / f"{agent['name']}.json"
    path.write_text(json.dumps(agent))
    return path


@pytest.mark.parametrize("variant", [renamed, split])
def test_variants_of_the_expert_are_its_equals_on_the_grid(variant):
    task = agent_task(ADD2, transducer_from_dict(variant()), "test")
    assert isinstance(task, AgentTask) and task.reference == "agent" and task.unreachable == ()
    for inst in ADD2.random_instances(40, 20, seed=3, m=17) + ADD2.hard_instances(12):
        assert task.expected(inst) == exact_answer("add", inst.a, inst.b, 2)


def test_another_function_is_scored_against_the_agents_own_answers():
    task = agent_task(ADD2, transducer_from_dict(xor()), "xor.json")
    assert set(task.unreachable) == {"next1", "add1", "sum2", "carry"} and task.agent.d == 5
    instances = ADD2.random_instances(30, 20, seed=5, m=9)
    assert all(task.expected(inst) == xor_answer(inst.a, inst.b) for inst in instances)
    assert sum(task.expected(inst) != ADD2.expected(inst) for inst in instances) > 10
    assert task.describe() == {"reference": "agent", "agent": "xor", "agent_file": "xor.json",
                               "unreachable_states": ["add1", "sum2", "next1", "carry"]}
    assert ADD2.describe() == {"reference": "task"}


def _without(state: str, read: str) -> dict:
    agent = copy.deepcopy(EXPERT)
    agent["rules"] = [r for r in agent["rules"] if (r["state"], r["read"]) != (state, read)]
    return agent


def _looping(move: str) -> dict:
    """add0 reading a blank moves on instead of halting."""
    return dict(EXPERT, rules=[dict(r, next="add0", move=move) if (r["state"], r["read"]) == ("add0", "_")
                               else r for r in EXPERT["rules"]])


BROKEN = [
    (_without("carry", "_"), ["no rule for state 'carry' reading '_'", "on 1, 1"]),
    (dict(EXPERT, rules=[r for r in EXPERT["rules"] if r["state"] != "sum1"]), ["state 'sum1' has no rules"]),
    (_looping("R"), ["does not halt", "on 0, 0", "in state 'add0'"]),
    (_looping("L"), ["leaves the task's layout", "on 0, 0"]),
    (dict(EXPERT, rules=[dict(r, next="next0", move="L") if r["next"] == "halt" else r
                         for r in EXPERT["rules"]]), ["no rule reaches the final state"]),
]


@pytest.mark.parametrize("agent, fragments", BROKEN)
def test_a_broken_agent_is_refused_naming_the_state_and_instance(agent, fragments):
    with pytest.raises(DfstError) as info:
        agent_task(ADD2, transducer_from_dict(agent), "bad.json")
    for fragment in fragments:
        assert fragment in str(info.value)


def test_an_agent_on_another_alphabet_is_refused(tmp_path, capsys):
    path = write(tmp_path, TASKS["add10"].agent.to_dict())
    assert_one_line_error(*run(capsys, "data", "add2", "--agent", path, "--out", tmp_path / "d.zip")[::2],
                          "does not match task add2")


def test_data_coverage_eval_and_certify_use_the_agent(tmp_path, capsys):
    path = write(tmp_path, xor())
    data = tmp_path / "xor.pto.zip"
    summary = run_json(capsys, "data", "add2", "--agent", path, "--samples", "8", "--out", data)
    assert (summary["reference"], summary["agent"], summary["d"]) == ("agent", "xor", 5)
    assert summary["unreachable_states"] == ["add1", "sum2", "next1", "carry"]
    assert run_json(capsys, "data", "--inspect", data)["expert_runs_checked"] is True
    code, _, err = run(capsys, "coverage", "add2", "--data", data)
    assert_one_line_error(code, err, "holds PTOs of agent 'xor'", "--agent")
    report = run_json(capsys, "coverage", "add2", "--agent", path, "--data", data)
    assert report["reference"] == "agent" and report["rules"] == 12
    model = tmp_path / "xor_model"
    run_json(capsys, "compile", "add2", "--agent", path, "--out", model)
    against_agent = run_json(capsys, "eval", model, "--agent", path, "--digits", "10,100")
    assert against_agent["reference"] == "agent" and against_agent["robust_max_digits"] == 100
    against_task = run_json(capsys, "eval", model, "--digits", "10", expect=1)
    assert against_task["reference"] == "task" and against_task["robust_max_digits"] == 0
    cert = run_json(capsys, "certify", model, "--agent", path)
    assert (cert["verdict"], cert["reference"], cert["agent"]) == ("CERTIFIED", "agent", "xor")


def test_a_run_trained_on_an_agent_is_evaluated_against_it(tmp_path, capsys):
    path, out = write(tmp_path, xor()), tmp_path / "run"
    summary = run_json(capsys, *TRAIN_ADD2, "--agent", path, "--out", out, "--iters", "300",
                       "--restarts", "2", "--eval-digits", "10")
    sizes = [t["d"] for t in summary["tried"]] + [summary["d"]]  # d from the PTOs, not the agent's states
    assert sizes[0] == states_lower_bound(load_dataset(out / "data.pto.zip"))
    assert all(later == math.ceil(GROWTH * d) for d, later in zip(sizes, sizes[1:]))
    saved = json.loads((out / "model" / "config.json").read_text())
    assert saved["reference_agent"]["name"] == "xor"
    assert json.loads((out / "config.json").read_text())["train"]["agent"] == str(path)
    for command in (("eval", out, "--digits", "10"), ("certify", out, "--extracted")):
        code, text, _ = run(capsys, *command, "--json")
        assert json.loads(text)["reference"] == "agent", command
    extracted = run_json(capsys, "extract", out, "--out", tmp_path / "x")
    assert extracted["reference"] == "agent" and extracted["expert_states"] == 5


def test_reproduce_keeps_a_users_agent_apart_from_the_expert(tmp_path):
    from dfst.studies.seeds import result_path, run_config, run_name, systems_of

    cfg = run_config("add2", 3, {"agent": str(tmp_path / "xor.json")})
    assert run_name(cfg) == "add2@xor" and run_name(run_config("add2", 3)) == "add2"
    assert set(systems_of(cfg)) == {"DFST [agent xor]", "DFST (before fine-tuning) [agent xor]",
                                    "DFST (extracted) [agent xor]"}
    assert result_path(tmp_path, run_name(cfg), 3, "model").name == "add2@xor-s3.json"


def test_data_can_sample_a_rule_cover_for_the_agent(tmp_path, capsys):
    """Uniform samples miss rules (22 of add2's 24 with 20 of them); --sampler cover, as dfst train
    samples, uses every rule the agent reaches."""
    path = write(tmp_path, renamed())
    for sampler, covered in (("uniform", 22), ("cover", 24)):
        data = tmp_path / f"{sampler}.zip"
        summary = run_json(capsys, "data", "add2", "--agent", path, "--sampler", sampler, "--out", data)
        assert summary["sampling"]["rule"] == ("uniform-lengths" if sampler == "uniform" else "cover")
        assert run_json(capsys, "coverage", "add2", "--agent", path, "--data", data)["covered"] == covered
    code, _, err = run(capsys, "data", "add2", "--sampler", "cover", "--min-digits", "2",
                       "--out", tmp_path / "x")
    assert_one_line_error(code, err, "--min-digits is the uniform sampler's")

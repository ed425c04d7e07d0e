"""A task whose expert is the user's agent (`--agent FILE`): the task's layouts, the agent's answers.

`agent_task(task, file)` checks the agent once, at load: the task's alphabet, every reachable state
with at least one rule, a rule that reaches the final state, and a halting run within the task's step
bound on the short and long instances a task's expert is checked on (`dfst.tasks.expert_check`: up
to 1,000 digits where the step bound allows), so that an agent that loops on a long run of 1s is
refused at load, not in the middle of an evaluation. Errors name the state, symbol and instance at
fault. States no rule can reach are reported (`unreachable`) and dropped, so they count nowhere (not
in d, not in coverage).

An `AgentTask` is a `Task` with `agent` the user's agent and `expected` that agent's own answer, run
by the table engine (`dfst.grid.rollout.run_table`, checked against the reference simulator in the tests):
every command that takes a task then records the agent's PTOs, trains on them and scores a model on
how exactly it imitates the agent, even when the agent computes another function than the task's.
`reference` says which answer a score is against: "task" (Python's integers) or "agent".
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, fields
from pathlib import Path

from dfst.automata import Transducer, make_transducer, transducer_from_dict
from dfst.errors import DfstError
from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome
from dfst.tasks.base import Instance, Task


@dataclass(frozen=True, eq=False)
class AgentTask(Task):
    """`task` with the user's agent as its expert and the agent's answers as the reference."""

    own: Transducer | None = None
    source: str = ""  # where the agent came from (a file name), for messages and reports
    unreachable: tuple[str, ...] = ()  # states dropped: no rule reaches them

    reference = "agent"
    __eq__ = object.__eq__  # two agents on one task are two tasks
    __hash__ = object.__hash__

    @property
    def agent(self) -> Transducer:
        return self.own

    def expected(self, instance: Instance) -> str | None:
        """The agent's own answer on `instance` (a DfstError if it does not halt within the bound)."""
        layout = self.layout(instance)
        run = run_table(self.own, layout, self.max_steps(instance))
        if run.outcome != Outcome.HALTED:
            raise DfstError(f"agent {self.own.name!r} ({self.source}) {_stopped(self.own, run, instance)}")
        return self.read_answer(run.cells, layout.answer)

    def describe(self) -> dict:
        """What reports say about the reference: the agent, its file, the states dropped."""
        return {"reference": "agent", "agent": self.own.name, "agent_file": self.source,
                "unreachable_states": list(self.unreachable)}


def agent_task(task: Task, agent: Transducer, source: str) -> AgentTask:
    """`task` with `agent` (on the task's alphabet) as its expert, checked as the module doc says."""
    if tuple(agent.alphabet) != tuple(task.alphabet):
        raise DfstError(f"agent alphabet {list(agent.alphabet)} ({source}) does not match task "
                        f"{task.name}'s {list(task.alphabet)} (same symbols, same order)")
    reachable = _reachable(agent)
    if agent.final not in reachable:
        raise DfstError(f"agent {agent.name!r} ({source}): no rule reaches the final state "
                        f"{agent.final!r}, so it never halts")
    ruled = {s for s, _ in agent.rules}  # a set: a scan of the rules per state was quadratic
    idle = [q for q in agent.states if q in reachable and q != agent.final and q not in ruled]
    if idle:
        raise DfstError(f"agent {agent.name!r} ({source}): state {idle[0]!r} has no rules "
                        f"(a run that enters it stops there)")
    kept = make_transducer([q for q in agent.states if q in reachable], agent.alphabet,
                           [r for (q, _), r in agent.rules.items() if q in reachable],
                           initial=agent.initial, final=agent.final, blank=agent.blank, name=agent.name)
    base = {f.name: getattr(task, f.name) for f in fields(Task)}
    own = AgentTask(**base, own=kept, source=source,
                    unreachable=tuple(q for q in agent.states if q not in reachable))
    _check_halts(own)
    return own


def agent_task_from_file(task: Task, path: str | Path) -> AgentTask:
    from dfst.automata import load_transducer

    return agent_task(task, load_transducer(path), str(path))


def agent_task_from_dict(task: Task, data: dict, source: str) -> AgentTask:
    """The agent stored in a checkpoint, dataset or run (its JSON), checked again."""
    return agent_task(task, transducer_from_dict(data), source)


def resolve_task(name: str, agent_file: str | Path | None = None) -> Task:
    """The registered task `name`, with the agent in `agent_file` as its expert when one is given."""
    from dfst.tasks import get_task

    task = get_task(name)
    return task if agent_file is None else agent_task_from_file(task, agent_file)


def checkpoint_task(config: dict, name: str | None = None, agent_file: str | Path | None = None) -> Task:
    """The task a checkpoint's config.json names (or `name`), with the reference agent stored with it
    (`reference_json`), unless `agent_file` replaces it."""
    stored = config.get("reference_agent")
    if agent_file is not None or stored is None:
        return resolve_task(name or config["task"], agent_file)
    from dfst.tasks import get_task

    if not isinstance(stored, dict):
        raise DfstError("the checkpoint's reference_agent is not an agent JSON object")
    return agent_task_from_dict(get_task(name or config["task"]), stored, "the checkpoint's reference agent")


def reference_json(task: Task) -> dict | None:
    """The agent a model of `task` imitates, to store with checkpoints and datasets; None for the
    task's own expert."""
    return task.agent.to_dict() if task.reference == "agent" else None


def _reachable(agent: Transducer) -> set[str]:
    seen, todo = {agent.initial}, deque([agent.initial])
    nexts: dict[str, set[str]] = {}
    for (q, _), r in agent.rules.items():
        nexts.setdefault(q, set()).add(r.next)
    while todo:
        for nxt in sorted(nexts.get(todo.popleft(), ())):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _check_halts(task: AgentTask) -> None:
    from dfst.tasks.expert_check import check_instances

    for instance in check_instances(task):
        task.expected(instance)  # raises, naming the instance, if the run does not halt


def _stopped(agent: Transducer, run, instance: Instance) -> str:
    """Why a run of `agent` on `instance` did not halt, in words naming the state and symbol."""
    from dfst.tasks.expert_check import short_text, why_stopped

    return f"{why_stopped(agent, run)} on {short_text(instance.a)}, {short_text(instance.b)}"

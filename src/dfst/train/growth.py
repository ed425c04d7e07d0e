"""Growing the training data from what the automaton read off gets wrong: the expert as the oracle.

A run whose d comes from the data trains at growing d until an automaton read off explains its
PTOs (`dfst.train.dsize`). When that automaton departs from the expert on an instance held out of
training (`dfst.train.validation`), the PTOs did not pin the algorithm down: a rule, or a chain of
rules, was never shown. While rounds are left, a round of growth then adds the held-out instances
where it departs (the shortest lengths first: the set is ordered by length), at most as many as the
PTOs it has and at least MIN_ADDED, to the training PTOs, draws a fresh held-out set past the new
longest operand, and trains again from the new data's lower bound on d, or from the states of the
automaton the round read off where they are more: counterexample-guided
learning with the expert's PTOs as the only answers (no state is read). The data at most double a
round, so a few rounds span the budgets the built-in tasks' recipes were tuned to (20 to 750 PTOs),
whatever the task needs. At most `grow_rounds` rounds (the config's); in the last, d grows on until
an automaton reproduces the held-out PTOs too, as in a run without growth. The run records each
round and why it stopped.

Every expert run is counted once, under what it ended up as (`dfst.data.reads`): an instance added is
a counterexample; the rest of every round's held-out set stays held out, in the run's validation PTOs
(which each later round's automaton must reproduce too) and out of every test of its models.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dfst.data import PtoDataset, record_instances, summarize
from dfst.tasks import Instance, Task
from dfst.train.batches import dataset_sha256
from dfst.train.dsize import stored_config
from dfst.train.validation import distinct, short_held_out, validation_dataset, validation_instances

MIN_ADDED = 8  # a round adds up to max(MIN_ADDED, the PTOs it has) departing held-out instances


def added_at_most(samples: int) -> int:
    """How many departing held-out instances a round adds to `samples` PTOs, at most."""
    return max(MIN_ADDED, samples)


def with_instances(task: Task, data: PtoDataset, pairs: list[list[str]]) -> PtoDataset:
    """The dataset plus the expert's PTOs on the operand pairs `pairs`, recorded as counterexamples."""
    instances = [Instance(x, y) for x, y in data.operands] + [Instance(a, b, "counterexample")
                                                              for a, b in pairs]
    added = list(data.sampling.get("counterexamples", [])) + [list(pair) for pair in pairs]
    return record_instances(task, instances, data.seed, data.sampling | {"counterexamples": added})


@dataclass(frozen=True)
class Growth:
    """Where a run's data stands: the PTOs sampled (`base`), those plus every instance added (`data`),
    the round (0: nothing added) and each finished round's record (its "added" count among them)."""

    base: PtoDataset
    data: PtoDataset
    round: int = 0
    rounds: tuple[dict, ...] = field(default=())

    @property
    def states_read_off(self) -> int:
        """The states of the automaton the last finished round read off (0: none finished, or one
        recorded before rounds kept it): where the next round's d starts (`dfst.train.dsize`)."""
        return self.rounds[-1].get("states", 0) if self.rounds else 0

    @property
    def added(self) -> list[list[str]]:
        """The operand pairs the rounds added, in order (a given dataset's own counterexamples apart)."""
        return [list(pair) for pair in self.data.operands[self.base.samples:]]

    def validation(self, task: Task, seed: int) -> PtoDataset:
        """The held-out PTOs the automaton read off must reproduce: the short instances the sampled PTOs
        did not show (`short_held_out`), then every round's set but the instances added to the PTOs;
        round r's past the longest training operand of its data, from its own stream; each instance once
        (rounds with the same longest operand draw the same structured instances)."""
        added, counts = {tuple(pair) for pair in self.added}, [r["added"] for r in self.rounds]
        longest = max(len(x) for pair in self.base.operands for x in pair)
        instances = short_held_out(task, longest, {tuple(pair) for pair in self.data.operands})
        for r in range(self.round + 1):
            known = self.data.operands[:self.base.samples + sum(counts[:r])]
            longest = max(len(x) for pair in known for x in pair)
            instances += [inst for inst in validation_instances(task, longest, seed, r)
                          if (inst.a, inst.b) not in added]
        return validation_dataset(task, distinct(instances), seed)

    def record(self) -> dict:
        """The run's "data" entry (config.json): the data trained on, and from round 1 how it grew."""
        record = {"sha256": dataset_sha256(self.data), "summary": summarize(self.data)}
        if self.round:
            record["grown"] = {"from": dataset_sha256(self.base), "round": self.round, "added": self.added,
                               "rounds": list(self.rounds)}
        return record


def next_round(growth: Growth, limit: int, summary: dict, task: Task) -> Growth | None:
    """The next round's growth, or None: the automaton agreed, no automaton explains the PTOs (more
    data would not help: d or iterations would), the run checks nothing, or `limit` rounds are spent."""
    found = summary.get("agreement")
    if growth.round >= limit or not found or found["agreed"] or not found["departs"]:
        return None
    departures = summary["extracted"]["validation"].get("departures") or [found["departs"]]
    pairs = [[d["a"], d["b"]] for d in departures[:added_at_most(growth.data.samples)]]
    finished = {"samples": growth.data.samples, "d_tried": found["d_tried"], "departs": found["departs"],
                "added": len(pairs), "states": summary["extracted"]["states"]}
    return Growth(growth.base, with_instances(task, growth.data, pairs), growth.round + 1,
                  (*growth.rounds, finished))


def resumed_growth(out, run_info: dict, task: Task, growth: Growth) -> Growth:
    """The growth to resume with: the stored run's when it is a later round of this run (same config,
    grown from the same sampled PTOs, its added instances giving the PTOs it stored), else `growth`."""
    old = stored_config(out)
    grown = old.get("data", {}).get("grown") if isinstance(old, dict) else None
    if (not isinstance(grown, dict) or old.get("train") != run_info["train"]
            or grown.get("from") != dataset_sha256(growth.base)):
        return growth
    data = with_instances(task, growth.base, grown.get("added", []))
    if dataset_sha256(data) != old["data"].get("sha256"):
        return growth  # prepare_run refuses the run on other data, with the hint to start over
    return Growth(growth.base, data, grown["round"], tuple(grown.get("rounds", [])))

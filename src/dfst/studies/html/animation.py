"""The frames of a closed-loop run, computed here and embedded in the page as JSON; a few lines of the
page's script step through them (play, pause, a slider).

The agent is the automaton read off a trained DFST where the runs still hold one, else the task's
expert; the instance is a small random one from a fixed seed, so the same inputs give the same page.
"""

from __future__ import annotations

import json

import numpy as np

from dfst.automata import Transducer
from dfst.grid.frames import Frame, run_frames
from dfst.grid.world import step_agent
from dfst.tasks.base import Instance, Task

MAX_FRAMES = 400      # embedded at most; a longer run shows its first MAX_FRAMES (said in the caption)
SIZES = (4, 3)        # operand lengths of the animated instance (a one-operand task: SINGLE symbols)
SINGLE = 6
INSTANCE_SEED = 0


def animated_instance(task: Task, seed: int = INSTANCE_SEED) -> Instance:
    """The small instance the report animates, from a fixed seed."""
    rng = np.random.default_rng(seed)
    return task.random_instance(rng, SINGLE, 0) if task.operands == 1 else task.random_instance(rng, *SIZES)


def animation(task: Task, agent: Transducer, who: str, instance: Instance | None = None) -> dict:
    """The run of `agent` (described by `who`) on `instance` as JSON-ready data: the grid of every
    frame (symbol indices), the head and state, and how the run ended."""
    instance = instance or animated_instance(task)
    layout = task.layout(instance)
    limit = task.max_steps(instance)
    frames = list(run_frames(agent, layout, limit))
    outcome = run_outcome(frames, agent, limit)
    answer = task.read_answer(frames[-1].cells, layout.answer) if outcome == "halted" else None
    return {"task": task.name, "agent": who, "instance": task.show(instance.a, instance.b),
            "alphabet": list(task.alphabet), "blank": task.blank, "answer_cell": list(layout.answer),
            "outcome": outcome, "steps": frames[-1].step, "answer": answer,
            "expected": task.expected(instance),
            "shown": min(len(frames), MAX_FRAMES), "frames": [_frame(f) for f in frames[:MAX_FRAMES]]}


def run_outcome(frames: list[Frame], agent: Transducer, limit: int) -> str:
    """How the run that gave `frames` ended: halted, no rule, left the layout or the step limit."""
    last = frames[-1]
    if last.halted:
        return "halted"
    if len(frames) >= limit:
        return "step limit"
    stuck = step_agent(agent, last.cells.copy(), last.head, last.state) is None
    return "no rule" if stuck else "left the layout"


def _frame(frame: Frame) -> dict:
    return {"step": frame.step, "state": frame.state, "head": list(frame.head), "halted": frame.halted,
            "cells": frame.cells.tolist()}


def caption(data: dict) -> str:
    """One line under the animation: the agent, the instance and how the run ended."""
    cut = f" (the first {data['shown']} frames shown)" if data["shown"] < data["steps"] + 1 else ""
    if data["outcome"] != "halted":
        return f"{data['agent']} on {data['instance']}: {data['outcome']} after {data['steps']} steps{cut}"
    verdict = "correct" if data["answer"] == data["expected"] else f"wrong (expected {data['expected']})"
    return (f"{data['agent']} on {data['instance']}: halted after {data['steps']} steps with answer "
            f"{data['answer']}, {verdict}{cut}")


def frames_json(data: dict) -> str:
    """The data as compact JSON that is safe inside a <script> element."""
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")

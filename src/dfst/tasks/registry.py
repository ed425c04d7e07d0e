"""The registry's dict, `TASKS[name]` -> `Task`: the built-in tasks (`dfst.tasks`) and the tasks of
your own (`dfst.tasks.user`) are added to it, each module importing this one, neither the other."""

from __future__ import annotations

from dfst.tasks.base import Task

TASKS: dict[str, Task] = {}

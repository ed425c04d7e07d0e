"""dfst: exact learning of algorithms by gradient descent.

Grid agents (Turing machines on a 2D grid), their policy-trajectory observations (PTOs), and
Differentiable Finite-State Transducers (DFSTs) that learn them.
"""

__version__ = "0.1.0"


def _register_gymnasium_envs() -> None:
    """`import dfst` registers `dfst/<Task>-v0` for `gymnasium.make` (dfst.tasks.gym), where gymnasium
    is installed."""
    from importlib.util import find_spec

    if find_spec("gymnasium") is not None:
        from dfst.tasks.gym import register_envs

        register_envs()


_register_gymnasium_envs()

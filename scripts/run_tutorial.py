"""Execute examples/tutorial.ipynb as Jupyter would, in a kernel, top to bottom (`make tutorial`).

    python scripts/run_tutorial.py [WORK_DIR]      # default build/tutorial

The notebook runs with WORK_DIR as its working directory (its training run, runs/parity2-s0, and its
figure, parity2.png, land there, never next to the tracked notebook), and the executed copy, outputs
included, is written to WORK_DIR/tutorial.ipynb. A cell that raises stops the run with exit 1 and the
cell's error; the tracked notebook is never written (it is kept without outputs). Needs the
`notebook` extra (`pip install -e '.[notebook]'`: nbclient and ipykernel); nothing is fetched.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "tutorial.ipynb"
MARK = "dfst_executed_tutorial"  # in the executed copy's metadata: a file there without it is the user's
CELL_TIMEOUT = 1800  # seconds a cell may run: the training cell takes seconds to a minute or two


def run_tutorial(work_dir: Path) -> Path:
    """Execute the notebook in `work_dir` (created if missing); return the executed copy's path."""
    import nbformat
    from nbclient import NotebookClient

    from dfst.io.outputs import write_atomic

    executed = work_dir / NOTEBOOK.name
    refuse_foreign(executed)  # before minutes of cells
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    work_dir.mkdir(parents=True, exist_ok=True)
    NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
                   resources={"metadata": {"path": str(work_dir)}}).execute()
    notebook.metadata[MARK] = True
    write_atomic(executed, nbformat.writes(notebook).encode())  # never through a link
    return executed


def refuse_foreign(path: Path) -> None:
    """A file at `path` that an earlier run of this script did not write (it carries MARK) is the
    user's: a DfstError, never replaced."""
    from dfst.errors import DfstError
    from dfst.io.inputs import read_json

    if not os.path.lexists(path):
        return
    data = read_json(path, "notebook", "json_bytes")  # size-capped; a link or FIFO is refused
    if not (isinstance(data, dict) and isinstance(data.get("metadata"), dict) and data["metadata"].get(MARK)):
        raise DfstError(f"{path} is not a notebook this script wrote; it is left alone (give another "
                        "WORK_DIR)")


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("usage: python scripts/run_tutorial.py [WORK_DIR]", file=sys.stderr)
        return 2
    try:
        import nbclient  # noqa: F401
    except ImportError:
        print("run_tutorial: needs the notebook extra: pip install -e '.[notebook]' (or make tutorial)",
              file=sys.stderr)
        return 2
    from nbclient.exceptions import CellExecutionError

    from dfst.errors import DfstError

    work_dir = Path(argv[0] if argv else "build/tutorial")
    try:
        executed = run_tutorial(work_dir)
    except DfstError as exc:
        print(f"run_tutorial: {exc}", file=sys.stderr)
        return 2
    except CellExecutionError as exc:
        print(f"run_tutorial: a cell failed:\n{exc}", file=sys.stderr)
        return 1
    print(f"tutorial: every cell ran; the executed notebook is {executed}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

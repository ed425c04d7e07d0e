"""An agent drawn: Graphviz DOT, and SVG when graphviz's `dot` binary exists, as files dfst marks.

`dfst show` and `dfst agent --dot` write these; the marker (a DOT or XML comment) is what lets
`--force` replace the file later and nothing else (docs/safety.md).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from dfst.automata import Transducer, to_dot
from dfst.errors import DfstError
from dfst.io.outputs import marker_text, write_atomic


def dot_bytes(agent: Transducer) -> bytes:
    """The agent's DOT text, with dfst's marker as its first line."""
    return f"// {marker_text()}\n{to_dot(agent)}".encode()


def svg_bytes(agent: Transducer) -> bytes:
    """Graphviz's SVG of the agent, with dfst's marker as a comment after the XML declaration."""
    if shutil.which("dot") is None:
        raise DfstError("SVG needs graphviz's `dot` binary (not found); use --out FILE.dot")
    done = subprocess.run(["dot", "-Tsvg"], input=to_dot(agent).encode(), capture_output=True, timeout=300)
    if done.returncode != 0:
        raise DfstError(f"graphviz failed: {' '.join(done.stderr.decode(errors='replace').split())[:200]}")
    head, sep, rest = done.stdout.partition(b"?>")
    comment = f"\n<!-- {marker_text()} -->".encode()
    return head + sep + comment + rest if sep else comment.lstrip() + b"\n" + done.stdout


def write_drawing(agent: Transducer, out: str | Path) -> Path:
    """FILE.svg as SVG, any other name as DOT (the caller checks `out` first)."""
    out = Path(out)
    write_atomic(out, svg_bytes(agent) if out.suffix == ".svg" else dot_bytes(agent))
    return out

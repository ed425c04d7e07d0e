"""An agent drawn as inline SVG in pure Python (no Graphviz needed to build or view the report).

Layout: states in columns by their distance from the initial state along the rules (breadth first),
states no rule reaches after the deepest column, the final state last. One arrow per (state, next)
pair; its label lists the rules (`read/write move`) where there are at most `LABELLED`, else counts
them, and hovering an arrow shows them all (an SVG <title>). The drawing is deterministic.
"""

from __future__ import annotations

import math
from html import escape

from dfst.automata import Transducer

LABELLED = 2            # rules written on an arrow; more are counted ("5 rules") and shown on hover
ROW_H, GAP_X, MARGIN = 54, 120, 12
NODE_H, CHAR_W = 24, 6.5  # node height; width per character of a state's name (9 px monospace)


def automaton_svg(agent: Transducer, element_id: str) -> str:
    """The agent as one <svg> element; `element_id` keeps its marker ids apart from other drawings."""
    columns = _columns(agent)
    width = max(len(q) for q in agent.states) * CHAR_W + 16
    place = {q: (i * (width + GAP_X), j * ROW_H)
             for i, column in enumerate(columns) for j, q in enumerate(column)}
    arrow = f"{element_id}-arrow"
    edges: dict[tuple[str, str], list[str]] = {}
    for r in agent.to_dict()["rules"]:
        edges.setdefault((r["state"], r["next"]), []).append(f"{r['read']}/{r['write']} {r['move']}")
    drawn = [_edge(place[q], place[p], labels, width, arrow, q, p) for (q, p), labels in edges.items()]
    corners = [(x + dx, y + dy) for x, y in place.values() for dx in (-width / 2 - 24, width / 2)
               for dy in (-20, 20)]  # the start arrow reaches 24 to the left of the initial state
    points = [pt for _, pts in drawn for pt in pts] + corners
    left, top = min(x for x, _ in points) - MARGIN, min(y for _, y in points) - MARGIN
    size_x, size_y = max(x for x, _ in points) + MARGIN - left, max(y for _, y in points) + MARGIN - top
    arrow_head = (f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                  'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/>'
                  "</marker></defs>")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="{escape(element_id)}" class="automaton" '
             f'viewBox="{left:.0f} {top:.0f} {size_x:.0f} {size_y:.0f}" width="{size_x:.0f}" '
             f'height="{size_y:.0f}" role="img" '
             f'aria-label="{escape(agent.name)}: {agent.d} states, {len(agent.rules)} rules">', arrow_head]
    parts += [markup for markup, _ in drawn]
    parts += [_node(q, place[q], width, agent) for q in agent.states]
    x, y = place[agent.initial]
    parts.append(f'<path class="start" d="M{x - width / 2 - 22:.1f},{y:.1f} H{x - width / 2:.1f}" '
                 f'marker-end="url(#{arrow})"/>')
    return "\n".join(parts + ["</svg>"])


def _columns(agent: Transducer) -> list[list[str]]:
    """States by breadth-first distance from the initial state; unreached ones, then the final state,
    in columns of their own."""
    successors: dict[str, list[str]] = {q: [] for q in agent.states}
    for r in agent.rules.values():
        successors[r.state].append(r.next)
    depth, frontier = {agent.initial: 0}, [agent.initial]
    while frontier:
        reached = []
        for q in frontier:
            for p in successors[q]:
                if p not in depth:
                    depth[p] = depth[q] + 1
                    reached.append(p)
        frontier = reached
    deepest = max((d for q, d in depth.items() if q != agent.final), default=0)
    columns: list[list[str]] = [[] for _ in range(deepest + 1)]
    unreached = []
    for q in agent.states:
        if q == agent.final:
            continue
        (columns[depth[q]] if q in depth else unreached).append(q)
    return [c for c in columns if c] + ([unreached] if unreached else []) + [[agent.final]]


def _node(q: str, at: tuple[float, float], width: float, agent: Transducer) -> str:
    x, y = at
    kind = "final" if q == agent.final else "initial" if q == agent.initial else "state"
    box = (f'<rect x="{x - width / 2:.1f}" y="{y - NODE_H / 2:.1f}" width="{width:.1f}" height="{NODE_H}" '
           f'rx="{NODE_H / 2}"/>')
    if kind == "final":  # a double outline, as Graphviz's doublecircle
        box += (f'<rect x="{x - width / 2 + 3:.1f}" y="{y - NODE_H / 2 + 3:.1f}" width="{width - 6:.1f}" '
                f'height="{NODE_H - 6}" rx="{NODE_H / 2 - 3}"/>')
    return (f'<g class="node {kind}" data-state="{escape(q)}">{box}'
            f'<text x="{x:.1f}" y="{y + 3:.1f}">{escape(q)}</text></g>')


def _edge(a: tuple[float, float], b: tuple[float, float], labels: list[str], width: float, arrow: str,
          q: str, p: str) -> tuple[str, list[tuple[float, float]]]:
    """A curved arrow from a to b (a loop above a where a is b), its label, and every rule on hover;
    and the points it reaches out to (for the drawing's bounds)."""
    title = f"<title>{escape(q)} → {escape(p)}\n{escape(chr(10).join(labels))}</title>"
    text = ", ".join(labels) if len(labels) <= LABELLED else f"{len(labels)} rules"
    if a == b:
        x, y = a
        top = y - NODE_H / 2
        path = (f"M{x - 8:.1f},{top:.1f} C{x - 26:.1f},{top - 30:.1f} {x + 26:.1f},{top - 30:.1f} "
                f"{x + 8:.1f},{top:.1f}")
        label_at = (x, top - 26)
        points = [(x - 26, top - 30), (x + 26, top - 30)]
    else:
        (sx, sy), (ex, ey), (cx, cy) = _curve(a, b, width)
        path = f"M{sx:.1f},{sy:.1f} Q{cx:.1f},{cy:.1f} {ex:.1f},{ey:.1f}"
        label_at = (0.25 * sx + 0.5 * cx + 0.25 * ex, 0.25 * sy + 0.5 * cy + 0.25 * ey - 3)
        points = [label_at]  # the curve's farthest point from its chord
    half = len(text) * CHAR_W * 0.45  # the label's half width at 8 px
    points += [(label_at[0] - half, label_at[1] - 8), (label_at[0] + half, label_at[1])]
    markup = (f'<g class="edge">{title}<path d="{path}" marker-end="url(#{arrow})"/>'
              f'<text x="{label_at[0]:.1f}" y="{label_at[1]:.1f}">{escape(text)}</text></g>')
    return markup, points


def _curve(a: tuple[float, float], b: tuple[float, float], width: float):
    """Start, end and control point of a quadratic curve between two nodes, bent to the left of the
    direction of travel (so that q -> p and p -> q stay apart), its ends on the nodes' outlines."""
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    length = math.hypot(dx, dy)
    bend = 18 + 0.12 * length
    cx, cy = (ax + bx) / 2 + dy / length * bend, (ay + by) / 2 - dx / length * bend
    return _on_outline(a, (cx, cy), width), _on_outline(b, (cx, cy), width), (cx, cy)


def _on_outline(centre: tuple[float, float], towards: tuple[float, float],
                width: float) -> tuple[float, float]:
    """Where the segment from a node's centre towards a point leaves the node's ellipse."""
    (x, y), (tx, ty) = centre, towards
    dx, dy = tx - x, ty - y
    scale = 1 / math.hypot(dx / (width / 2), dy / (NODE_H / 2))
    return x + dx * scale, y + dy * scale

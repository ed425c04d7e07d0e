"""index.html, put together: the tables, then one section per task (animation, length generalisation,
training, automata), with the style and the script inline. The same inputs give the same bytes.
"""

from __future__ import annotations

from html import escape

from dfst.io.outputs import marker_text
from dfst.studies.html.animation import animation, caption, frames_json
from dfst.studies.html.assets import CSS, JS
from dfst.studies.html.collect import Material, TaskMaterial
from dfst.studies.html.diagram import automaton_svg
from dfst.studies.html.figures import lg_figure, training_figure
from dfst.studies.html.tables import comparison_table, html_table, reproduce_table
from dfst.tasks import TASKS


def render_page(material: Material) -> str:
    """The whole report as one HTML document."""
    reproduced = reproduce_table(material.results) or '<p class="missing">No dfst reproduce results.</p>'
    body = [_header(material), _nav(material), _missing(material.missing),
            _section("comparison", "All systems", "As <code>dfst table</code> prints it: LG is the best "
                     "(median) over seeds, other numbers are medians.", comparison_table(material.results)),
            _section("reproduce", "The DFST, seed by seed",
                     "As <code>dfst reproduce</code> summarises its stored results.", reproduced)]
    body += [_task_section(task, material) for task in material.tasks]
    if material.own_runs:
        body.append(_own_runs_section(material))
    return (f'<!DOCTYPE html>\n<!-- {marker_text()} -->\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>dfst report</title>\n<style>{CSS}</style>\n</head>\n<body>\n" + "\n".join(body)
            + f"\n<script>{JS}</script>\n</body>\n</html>\n")


def _header(material: Material) -> str:
    runs = sum(len(t.runs) for t in material.tasks) + len(material.own_runs)
    return (f"<header><h1>dfst report</h1><p>{len(material.results):,} stored results under "
            f"<code>{escape(str(material.results_dir))}</code>, {runs:,} training runs under "
            f"<code>{escape(str(material.runs_dir))}</code>; {len(material.tasks)} tasks. Written by "
            f"{escape(marker_text().removeprefix('written by '))} (<code>dfst report --html</code>)."
            "</p></header>")


def _nav(material: Material) -> str:
    links = ['<a href="#comparison">comparison</a>', '<a href="#reproduce">reproduce</a>', "| tasks:"]
    links += [f'<a href="#task-{escape(t.name)}">{escape(t.name)}</a>' for t in material.tasks]
    if material.own_runs:
        links.append('| <a href="#own-runs">your runs</a>')
    return "<nav>" + " ".join(links) + "</nav>"


def _missing(notes: list[str]) -> str:
    if not notes:
        return ""
    items = "".join(f"<li>{escape(n)}</li>" for n in notes)
    return f'<section id="missing"><h2>Not in this report</h2><ul class="missing">{items}</ul></section>'


def _section(anchor: str, title: str, note: str, content: str) -> str:
    return (f'<section id="{anchor}"><h2>{escape(title)}</h2><p>{note}</p>'
            f'<div class="scroll">{content}</div></section>')


def _task_section(task: TaskMaterial, material: Material) -> str:
    summary = TASKS[task.name].summary if task.registered else "not a registered task"
    lg = _figure(lg_figure(task.name, task.results), f"{task.name}: length generalisation",
                 "Fraction of the hard and random instances exact at each tested length; the ladder stops at "
                 "a seed's first failing length.")
    panels = [_animation(task), lg]
    training = training_figure(task.name, {f"seed {seed}": records for seed, records in task.runs.items()},
                               {f"seed {seed}": result for seed, result in task.delivered.items()})
    no_curves = (f'<p class="missing">No training curves: no run of {escape(task.name)} under '
                 f"<code>{escape(str(material.runs_dir))}</code> logged any.</p>")
    panels.append(_figure(training, f"{task.name}: training", "Loss and the closed-loop robust length of the "
                          "weights during training, one line per seed (metrics.jsonl of each run).")
                  if training else no_curves)
    return (f'<section class="task" id="task-{escape(task.name)}"><h2>{escape(task.name)} <small>'
            f'{escape(summary)} · {len(task.results)} results</small></h2>\n<div class="panels">'
            + "\n".join(panels) + "</div>\n" + _automata(task) + "</section>")


def _own_runs_section(material: Material) -> str:
    """The user's own runs: a row each as `dfst report-runs` prints it, and per task their training
    curves with the model each delivers."""
    from dfst.results import RUN_COLUMNS
    from dfst.results.tables import run_display_row

    runs = material.own_runs
    table = html_table([run_display_row(r.result) for r in runs], RUN_COLUMNS, "own-runs")
    figures = []
    for task in dict.fromkeys(r.result.task for r in runs):
        mine = [r for r in runs if r.result.task == task]
        uri = training_figure(task, {r.label: r.records for r in mine}, {r.label: r.result for r in mine})
        if uri is not None:
            figures.append(_figure(uri, f"{task}: your runs", "Loss and closed-loop robust length during "
                                   "training, and the model each run delivers (star; what dfst eval RUN "
                                   "scores)."))
    note = ("Every <code>dfst train</code> run under <code>" + escape(str(material.runs_dir)) + "</code>, "
            "as <code>dfst report-runs</code> prints it: the model each run delivers (RUN/model, fine-tuned "
            "where the run was), and the trained weights before fine-tuning. Runs left out are listed above.")
    return (f'<section id="own-runs"><h2>Your training runs</h2><p>{note}</p>'
            f'<div class="scroll">{table}</div><div class="panels">{"".join(figures)}</div></section>')


def _figure(uri: str | None, alt: str, text: str) -> str:
    if uri is None:
        return f'<p class="missing">{escape(alt)}: no result records tested lengths.</p>'
    return f'<figure><img src="{uri}" alt="{escape(alt)}"><figcaption>{escape(text)}</figcaption></figure>'


def _animation(task: TaskMaterial) -> str:
    """The closed-loop run: of the extracted automaton where there is one, else of the expert."""
    if not task.registered:
        return '<p class="missing">No animation: the task is not registered here.</p>'
    spec = TASKS[task.name]
    if task.extracted is not None:
        who = f"the automaton read off seed {task.extracted.seed}'s trained DFST"
        data = animation(spec, task.extracted.agent, who)
    else:
        data = animation(spec, spec.agent, "the expert")
    return (f'<figure class="anim" id="anim-{escape(task.name)}"><table class="grid"></table>'
            '<div class="controls"><button class="play" type="button">play</button>'
            '<input class="slider" type="range" min="0" max="0" value="0" aria-label="step">'
            '<span class="step"></span></div>'
            f"<figcaption>{escape(caption(data))}</figcaption>"
            f'<script type="application/json" class="frames">{frames_json(data)}</script></figure>')


def _automata(task: TaskMaterial) -> str:
    """The expert and the extracted automaton, drawn, in a fold of their own (some are large)."""
    if not task.registered:
        return ""
    expert = TASKS[task.name].agent
    drawings = [_drawing(automaton_svg(expert, f"expert-{task.name}"),
                         f"the expert: {expert.d} states, {len(expert.rules)} rules")]
    if task.extracted is not None:
        agent = task.extracted.agent
        drawings.append(_drawing(automaton_svg(agent, f"extracted-{task.name}"),
                                 f"read off seed {task.extracted.seed}'s trained DFST: {agent.d} states, "
                                 f"{len(agent.rules)} rules ({task.extracted.path})"))
        more = ""
    else:
        more = '<p class="missing">No extracted automaton: its run is not under the runs directory.</p>'
    return (f"<details><summary>Automata of {escape(task.name)} (hover an arrow for its rules)</summary>"
            f'<div class="automata">{"".join(drawings)}</div>{more}</details>')


def _drawing(svg: str, text: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(text)}</figcaption></figure>"

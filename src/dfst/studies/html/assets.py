"""The page's style sheet and script, inlined into index.html (the report fetches nothing).

The script steps every animation: each `.anim` element holds its frames as JSON (a <script
type="application/json">), a grid, a play/pause button, a step slider and a step label.
"""

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 16px 40px;
       color: #1d1d1f; }
h1 { margin: 18px 0 4px; } h2 { margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h2 small { font-weight: normal; color: #666; font-size: 14px; }
nav { position: sticky; top: 0; background: #fff; padding: 6px 0; border-bottom: 1px solid #eee; z-index: 1; }
nav a { margin-right: 8px; }
table.results { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
table.results th, table.results td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; }
table.results td { white-space: nowrap; }
table.results th { background: #f4f4f6; }
table.results tr:nth-child(even) td { background: #fafafa; }
.scroll { overflow-x: auto; }
.panels { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
figure { margin: 0; } figcaption { font-size: 12px; color: #444; max-width: 560px; }
.missing { color: #8a5a00; }
.anim { border: 1px solid #ddd; border-radius: 6px; padding: 8px; }
.anim table.grid { border-collapse: collapse; font: 15px/1 ui-monospace, monospace; margin-bottom: 6px; }
.anim table.grid td { width: 22px; height: 22px; text-align: center; border: 1px solid #eee; }
.anim table.grid td.blank { color: #bbb; }
.anim table.grid td.answer { color: #00799e; font-weight: bold; }
.anim table.grid td.head { background: #ffd54a; color: #000; font-weight: bold; }
.anim .controls { display: flex; gap: 8px; align-items: center; font-size: 12px; }
.anim .controls input { width: 220px; }
.automata { display: flex; flex-wrap: wrap; gap: 16px; }
.automata figure { overflow: auto; max-width: 100%; max-height: 640px; border: 1px solid #eee; }
svg.automaton { font: 9px ui-monospace, monospace; }
svg.automaton .node rect { fill: #fff; stroke: #333; }
svg.automaton .node.initial rect { fill: #e8f4ff; } svg.automaton .node.final rect { fill: #eef8ee; }
svg.automaton text { text-anchor: middle; }
svg.automaton .edge path, svg.automaton path.start { fill: none; stroke: #777; }
svg.automaton marker path { fill: #777; }
svg.automaton .edge text { fill: #555; font-size: 8px; }
svg.automaton .edge:hover path { stroke: #d33; stroke-width: 2; }
"""

JS = r"""
"use strict";
function setupAnimation(box) {
  const data = JSON.parse(box.querySelector("script.frames").textContent);
  const grid = box.querySelector("table.grid");
  const slider = box.querySelector("input.slider");
  const label = box.querySelector(".step");
  const button = box.querySelector("button.play");
  const first = data.frames[0].cells;
  const cells = first.map(function (row) {
    const tr = grid.insertRow();
    return row.map(function () { return tr.insertCell(); });
  });
  slider.max = String(data.frames.length - 1);
  let timer = null;
  function show(i) {
    const frame = data.frames[i];
    frame.cells.forEach(function (row, r) {
      row.forEach(function (symbol, c) {
        const td = cells[r][c];
        td.textContent = symbol === data.blank ? "\u00b7" : data.alphabet[symbol];
        td.className = (frame.head[0] === r && frame.head[1] === c) ? "head"
          : symbol === data.blank ? "blank" : (r === data.answer_cell[0] ? "answer" : "");
      });
    });
    slider.value = String(i);
    label.textContent = "step " + frame.step +
      (frame.halted ? " \u00b7 halted" : " \u00b7 state " + frame.state);
  }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    button.textContent = "play";
  }
  function play() {
    if (Number(slider.value) >= data.frames.length - 1) { show(0); }
    button.textContent = "pause";
    timer = setInterval(function () {
      const next = Number(slider.value) + 1;
      if (next >= data.frames.length) { stop(); } else { show(next); }
    }, 250);
  }
  button.addEventListener("click", function () { if (timer === null) { play(); } else { stop(); } });
  slider.addEventListener("input", function () { stop(); show(Number(slider.value)); });
  show(0);
}
document.querySelectorAll(".anim").forEach(setupAnimation);
"""

"""The HTML replay viewer: one self-contained file (inline CSS, JS and SVG, no network).

    python -m caribsim replay game.json --html game.html

Each step shows every player's board, the shared supply, the move played and a chart of
the score over the game; buttons, a slider and the arrow keys move through the steps
(``#step=N`` in the address opens step N). The drawing of each game is its module in
``caribsim.human.boards`` (what a snapshot holds, its CSS and the JS that draws it).
"""
from __future__ import annotations

import html as _html
import json

from caribsim.human import boards, records


def _snapshot(state, game_name):
    scores = state.scores()
    totals = [s["total"] if isinstance(s, dict) else s for s in scores]
    snap = {"scores": totals, "to_act": state.current_player()}   # a seat, or -1 chance / -4 end
    snap.update(boards.get(game_name).snapshot(state))
    return snap


def steps_data(record: dict) -> dict:
    """Everything the page shows, one snapshot per step (after 0..N moves)."""
    states = records.states(record)
    snaps = []
    for i, st in enumerate(states):
        snap = _snapshot(st, record["game"])
        if i == 0:
            snap["move"] = "start of the game"
        else:
            step = record["steps"][i - 1]
            who = "chance" if step["player"] < 0 else f"seat {step['player']}"
            snap["move"] = f"{i}. {who}: {step['name']}"
        snaps.append(snap)
    return {"game": record["game"], "options": record["options"], "seed": record["seed"],
            "players": record.get("players"), "final": record.get("final"), "snapshots": snaps}


# Inside <script> the HTML parser looks for "</script", "<!--" and "<script"; with no "<" in
# the data none of them can occur. ">" and "&" go too (also safe in XHTML), U+2028/9 for old JS.
_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
                   0x2028: "\\u2028", 0x2029: "\\u2029"}


def _script_json(value) -> str:
    """``value`` as a JSON literal safe to embed in an HTML <script> element."""
    return json.dumps(value, separators=(",", ":")).translate(_SCRIPT_ESCAPES)


def render(record: dict) -> str:
    data = _script_json(steps_data(record))
    board = boards.get(record["game"])
    title = _html.escape(f"caribsim replay: {record['game']} (seed {record['seed']})")
    return (_PAGE.replace("__BOARDS_CSS__", board.CSS).replace("__BOARDS_JS__", board.JS)
            .replace("__TITLE__", title).replace("__DATA__", data))


def write_html(record: dict, path) -> None:
    page = render(record)              # a bad record raises before the file is touched
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)


_PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body{font-family:system-ui,sans-serif;margin:1em;background:#fbf8f1;color:#222}
h1{font-size:1.2em;margin:.2em 0}
#controls{display:flex;gap:.5em;align-items:center;margin:.5em 0}
#slider{flex:1}
#move{font-weight:bold;margin:.4em 0}
.boards{display:flex;flex-wrap:wrap;gap:.6em}
.board{border:1px solid #bbb;border-radius:6px;padding:.5em;background:#fff;min-width:15em}
.board.active{border:2px solid #2a7}
.board h3{margin:0 0 .3em 0;font-size:1em}
.row{margin:.15em 0}
.tag{display:inline-block;padding:0 .35em;margin:.1em;border-radius:3px;background:#eee}
__BOARDS_CSS__
.empty{opacity:.55}
#supply{border:1px solid #bbb;border-radius:6px;padding:.5em;background:#fff;margin:.6em 0}
pre{background:#fff;border:1px solid #bbb;padding:.5em}
svg text{font-size:11px}
</style></head><body>
<h1>__TITLE__</h1>
<div id="controls">
<button id="first" title="first (Home)">|&lt;</button><button id="prev" title="previous (Left)">&lt;</button>
<input id="slider" type="range" min="0" value="0"><button id="next" title="next (Right)">&gt;</button>
<button id="last" title="last (End)">&gt;|</button><span id="counter"></span></div>
<div id="move"></div>
<div id="scores"></div>
<div id="supply"></div>
<div id="boards" class="boards"></div>
<svg id="chart" width="760" height="220" role="img" aria-label="score over the game"></svg>
<script>
const DATA = __DATA__;
const S = DATA.snapshots;
const N = S.length - 1;
const COLORS = ["#d33", "#27c", "#2a7", "#c80", "#84c"];
let cur = 0;
const $ = id => document.getElementById(id);
const esc = s => String(s).replace(/[&<>]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;"}[c]));
const label = s => s.replace(/_/g, " ");
function tags(obj, suffix) {
  const out = [];
  for (const [k, v] of Object.entries(obj)) if (v) out.push(`<span class="tag ${k}">${label(k)} ${v}${suffix||""}</span>`);
  return out.join("") || '<span class="empty">none</span>';
}
__BOARDS_JS__
function chart() {
  const svg = $("chart"), W = 760, H = 220, P = 30;
  const n = S[0].scores.length;
  let top = 1;
  S.forEach(s => s.scores.forEach(v => { if (v > top) top = v; }));
  const x = i => P + (W - 2 * P) * (N ? i / N : 0), y = v => H - P - (H - 2 * P) * v / top;
  let out = `<line x1="${P}" y1="${H-P}" x2="${W-P}" y2="${H-P}" stroke="#888"/><line x1="${P}" y1="${P}" x2="${P}" y2="${H-P}" stroke="#888"/>`;
  out += `<text x="${P}" y="${P-8}">score (top ${top})</text><text x="${W-P-60}" y="${H-8}">step ${N}</text>`;
  for (let p = 0; p < n; p++) {
    const pts = S.map((s, i) => `${x(i).toFixed(1)},${y(s.scores[p]).toFixed(1)}`).join(" ");
    out += `<polyline fill="none" stroke="${COLORS[p % 5]}" stroke-width="1.5" points="${pts}"/>`;
    out += `<text x="${W-P+2}" y="${y(S[N].scores[p])}" fill="${COLORS[p % 5]}">${p}</text>`;
  }
  out += `<line id="cursor" x1="0" y1="${P}" x2="0" y2="${H-P}" stroke="#000" stroke-dasharray="3,3"/>`;
  svg.innerHTML = out;
  svg._x = x;
}
function show(i) {
  cur = Math.max(0, Math.min(N, i));
  const s = S[cur];
  $("slider").value = cur;
  $("counter").textContent = `step ${cur} / ${N}`;
  $("move").textContent = s.move;
  $("scores").innerHTML = "scores: " + s.scores.map((v, p) => `<span class="tag" style="border-left:4px solid ${COLORS[p % 5]}">seat ${p}: <b id="total-${p}">${v}</b></span>`).join("");
  $("supply").innerHTML = BOARD.supply(s);
  $("boards").innerHTML = BOARD.boards(s);
  const c = $("cursor"), x = $("chart")._x(cur);
  c.setAttribute("x1", x); c.setAttribute("x2", x);
  if (location.hash !== "#step=" + cur) history.replaceState(null, "", "#step=" + cur);
}
$("slider").max = N;
$("slider").addEventListener("input", e => show(+e.target.value));
$("first").onclick = () => show(0); $("last").onclick = () => show(N);
$("prev").onclick = () => show(cur - 1); $("next").onclick = () => show(cur + 1);
document.addEventListener("keydown", e => {
  if (e.key === "ArrowLeft") show(cur - 1); else if (e.key === "ArrowRight") show(cur + 1);
  else if (e.key === "Home") show(0); else if (e.key === "End") show(N);
});
chart();
const m = /step=(\d+)/.exec(location.hash);
show(m ? +m[1] : 0);
</script></body></html>
"""

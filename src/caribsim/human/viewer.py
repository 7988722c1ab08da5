"""The HTML replay viewer: one self-contained file (inline CSS, JS and SVG, no network).

    python -m caribsim replay game.json --html game.html

Each step shows every player's board, the shared supply, the move played, the scores (with
the players' names from the record) and a chart of the score over the game; the last step
of a finished game shows the game-over panel (final scores with their parts, the winner or
the shared win, the tie-break). Buttons, a slider and the arrow keys (Home/End) move through
the steps; ``#step=N`` in the address opens step N, also when edited on the open page. The
page fits a phone's width. The drawing of each game is its module in
``caribsim.human.boards`` (what a snapshot holds, its CSS and the JS that draws it).

``lang="cs"`` writes the page in Czech: the move lines, the game-over panel and the title are
translated here (``caribsim.human.lang``), the rest in the browser: the page holds the
translation table and ``tr(text)``, which the page's labels and every board panel go through.
"""

from __future__ import annotations

import html as _html
import json

from caribsim.human import boards, lang, records


def _snapshot(state, game_name):
    scores = state.scores()
    totals = [s["total"] if isinstance(s, dict) else s for s in scores]
    snap = {"scores": totals, "to_act": state.current_player()}  # a seat, or -1 chance / -4 end
    snap.update(boards.get(game_name).snapshot(state))
    return snap


snapshot = _snapshot  # what a board page draws at one step (the browser play's too)


def steps_data(record: dict, lang_code: str = "en") -> dict:
    """Everything the page shows, one snapshot per step (after 0..N moves), and the game-over
    panel of a finished record; the move lines and the panel in ``lang_code``."""
    tr = lang.translator(record["game"], lang.check(lang_code))
    states = records.states(record)
    board = boards.get(record["game"])
    snaps, rnd, mark = [], 0, None
    for i, st in enumerate(states):
        snap = _snapshot(st, record["game"])
        # the jumps by round and by decision: a round's number (the board's round_mark
        # changed), and whether the step was a player's decision rather than chance
        now = board.round_mark(st.to_dict())
        rnd += i > 0 and now != mark
        mark = now
        snap["nav_round"] = rnd  # (a board's own snapshot may have a "round" of its own)
        snap["nav_decision"] = i > 0 and record["steps"][i - 1]["player"] >= 0
        if i == 0:
            snap["move"] = tr.msg("start of the game")
        else:
            step = record["steps"][i - 1]
            who = tr.text("chance") if step["player"] < 0 else tr.msg("seat {i}", i=step["player"])
            move = tr.move(board.move_text(states[i - 1], step["name"]))
            snap["move"] = tr.msg("{i}. {who}: {move}", i=i, who=who, move=move)
        snaps.append(snap)
    return {
        "game": record["game"],
        "options": record["options"],
        "seed": record["seed"],
        "players": record.get("players"),
        "final": record.get("final"),
        "game_over": game_over(
            record.get("final"),
            record.get("players"),
            tr,
            board.end_reason(states, tr) if states[-1].is_terminal() else None,
            board.TIEBREAK,
        ),
        "snapshots": snaps,
    }


_NOT_PARTS = ("total", "tiebreak")


def part_label(key: str) -> str:
    """A score part's key as the page labels it: ``"building_vp"`` -> ``"building VP"``."""
    return " ".join("VP" if word == "vp" else word for word in key.split("_"))


def _seat(i: int, players, tr) -> str:
    return tr.msg("seat {i} ({name})", i=i, name=players[i]) if players else tr.msg("seat {i}", i=i)


def game_over(final, players=None, tr=None, ended=None, tiebreak=None):
    """The game-over panel of a record's ``final`` (None while the game is not over): one row
    per seat with its total, the parts of its score (every key of ``scores()`` but total and
    tiebreak) and its tie-break value (``tied``: a seat the tie-break decided between); the
    winners (the seats of the best return, all of them in a draw) and a sentence saying how
    the game was won (in the words of ``tr``, a ``lang.Translator``; default English);
    ``ended``: why the game ended (the board's ``end_reason``), ``tiebreak``: what the
    tie-break counts (the board's ``TIEBREAK``), said in the sentence when it decided."""
    if final is None:
        return None
    tr = tr or lang.translator(None)
    scores = [s if isinstance(s, dict) else {"total": s} for s in final["scores"]]
    returns = final["returns"]
    parts = [k for k in scores[0] if k not in _NOT_PARTS]
    winners = [i for i, r in enumerate(returns) if r == max(returns)]
    used = _tiebreak_used(scores, winners)
    best = {scores[w]["total"] for w in winners}
    rows = [
        {
            "seat": i,
            "total": s["total"],
            "parts": [s[k] for k in parts],
            "tiebreak": s.get("tiebreak"),
            "return": returns[i],
            "winner": i in winners,
            "tied": used and s["total"] in best,
        }
        for i, s in enumerate(scores)
    ]
    return {
        "parts": [[k, tr.text(part_label(k))] for k in parts],
        "has_tiebreak": "tiebreak" in scores[0],
        "rows": rows,
        "winners": winners,
        "tiebreak_used": used,
        "verdict": _verdict(scores, winners, players, tr, tiebreak),
        "ended": ended,
    }


def _tiebreak_used(scores, winners) -> bool:
    """Whether the win needed the tie-break: a winner's total is shared by a seat that did not
    win, or by another winner (a shared win is a tie on the tie-break too)."""
    totals = [s["total"] for s in scores]
    return any(totals.count(totals[w]) > 1 for w in winners) and "tiebreak" in scores[0]


def _verdict(scores, winners, players, tr, tiebreak=None) -> str:
    names = ", ".join(_seat(w, players, tr) for w in winners)
    if len(winners) > 1:
        kind = tr.msg("draw" if len(winners) == len(scores) else "shared win")
        first = scores[winners[0]]
        tied = tr.msg("{total} points", total=first["total"])
        if "tiebreak" in first:
            tied = tr.msg(
                "{points} and tie-break {tiebreak}", points=tied, tiebreak=first["tiebreak"]
            )
        return tr.msg("{kind}: {names} (tied on {tied})", kind=kind, names=names, tied=tied)
    w = winners[0]
    if not _tiebreak_used(scores, winners):
        return tr.msg("winner: {names} with {total} points", names=names, total=scores[w]["total"])
    others = [i for i, s in enumerate(scores) if i != w and s["total"] == scores[w]["total"]]
    beaten = ", ".join(
        tr.msg("{tiebreak} of {seat}", tiebreak=scores[i]["tiebreak"], seat=_seat(i, players, tr))
        for i in others
    )
    if tiebreak:  # what the numbers count: "on the tie-break (doubloons + goods): 11 ..."
        return tr.msg(
            "winner: {names}, tied on {total} points, on the tie-break ({what}): {tiebreak} against {beaten}",
            names=names,
            total=scores[w]["total"],
            what=tr.text(tiebreak),
            tiebreak=scores[w]["tiebreak"],
            beaten=beaten,
        )
    return tr.msg(
        "winner: {names}, tied on {total} points, on the tie-break: {tiebreak} against {beaten}",
        names=names,
        total=scores[w]["total"],
        tiebreak=scores[w]["tiebreak"],
        beaten=beaten,
    )


# Inside <script> the HTML parser looks for "</script", "<!--" and "<script"; with no "<" in
# the data none of them can occur. ">" and "&" go too (also safe in XHTML), U+2028/9 for old JS.
_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def _script_json(value) -> str:
    """``value`` as a JSON literal safe to embed in an HTML <script> element."""
    return json.dumps(value, separators=(",", ":")).translate(_SCRIPT_ESCAPES)


def render(record: dict, lang_code: str = "en") -> str:
    tr = lang.translator(record["game"], lang.check(lang_code))
    data = _script_json(steps_data(record, lang_code))
    board = boards.get(record["game"])
    title = _html.escape(
        tr.msg(
            "caribsim replay: {game} (seed {seed})",
            game=tr.game_name(record["game"]),
            seed=record["seed"],
        )
    )
    return (
        _PAGE.replace("__BOARDS_CSS__", board.CSS)
        .replace("__BOARDS_JS__", board.JS)
        .replace("__TITLE__", title)
        .replace("__LANG__", lang_code)
        .replace("__TRANSLATION__", _script_json(tr.page_table()))
        .replace("__DATA__", data)
    )


def _between(start: str, end: str) -> str:
    return _PAGE[_PAGE.index(start) + len(start) : _PAGE.index(end)]


def page_css(game_name: str) -> str:
    """The replay page's CSS with the game's board CSS, for another page that draws boards
    the same way (caribsim.web's game page): one source for both pages."""
    return _between("<style>", "</style>").replace("__BOARDS_CSS__", boards.get(game_name).CSS)


def page_js(game_name: str, lang_code: str = "en") -> str:
    """The replay page's JS helpers the board drawings use (``$``, ``esc``, ``label``,
    ``seatName``, ``tags``, ``COLORS``, ``tr`` with the table of ``lang_code``), the game's
    ``BOARD`` and ``gameOver(g, true)``, the game-over panel of ``game_over(...)``. The page
    defines ``DATA`` with ``players``, ``snapshots`` (Port Royal draws a step's event from the
    one before) and ``final``."""
    table = lang.translator(game_name, lang.check(lang_code)).page_table()
    return (
        _between("/* page helpers */", "/* end of the page helpers */").replace(
            "__TRANSLATION__", _script_json(table)
        )
        + boards.get(game_name).JS
        + _between("/* game over */", "/* end of game over */")
    )


def write_html(record: dict, path, lang: str = "en") -> None:
    """The viewer page of ``record`` written to ``path``, in the language ``lang`` (en, cs)."""
    page = render(record, lang)  # a bad record raises before the file is touched
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)


_PAGE = r"""<!DOCTYPE html>
<html lang="__LANG__"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>__TITLE__</title>
<style>
body{font-family:system-ui,sans-serif;margin:.6em;background:#fbf8f1;color:#222}
h1{font-size:1.2em;margin:.2em 0;overflow-wrap:anywhere}
#controls{display:flex;flex-wrap:wrap;gap:.4em;align-items:center;margin:.5em 0}
#slider{flex:1 1 10em;min-width:0}
#move{font-weight:bold;margin:.4em 0}
.boards{display:flex;flex-wrap:wrap;gap:.6em}
.board{border:1px solid #bbb;border-radius:6px;padding:.5em;background:#fff;flex:1 1 22em;min-width:0;box-sizing:border-box}
.board.active{border:2px solid #2a7}
.board h3{margin:0 0 .3em 0;font-size:1em}
.row{margin:.15em 0}
.tag{display:inline-block;padding:0 .35em;margin:.1em;border-radius:3px;background:#eee}
__BOARDS_CSS__
.empty{opacity:.55}
#supply{border:1px solid #bbb;border-radius:6px;padding:.5em;background:#fff;margin:.6em 0}
#game-over{border:2px solid #c80;border-radius:6px;padding:.5em;background:#fff8e8;margin:.6em 0;overflow-x:auto}
#game-over h2{font-size:1.1em;margin:0 0 .3em 0}
#game-over table{border-collapse:collapse}
#game-over td,#game-over th{padding:.1em .5em;text-align:right;border-bottom:1px solid #e4d8bd}
#game-over td:first-child,#game-over th:first-child{text-align:left}
#game-over tr.winner{font-weight:bold;background:#fde9b0}
#game-over .used{outline:2px solid #c80;outline-offset:-2px}
@media (max-width:520px){#game-over td,#game-over th{padding:.1em .2em;font-size:.85em}}
pre{background:#fff;border:1px solid #bbb;padding:.5em;overflow-x:auto}
#chart{width:100%;max-width:760px;height:auto;display:block}
svg text{font-size:11px}
</style></head><body>
<h1>__TITLE__</h1>
<div id="controls">
<button id="first" title="first (Home)">|&lt;</button><button id="prev" title="previous (Left)">&lt;</button>
<input id="slider" type="range" min="0" value="0" aria-label="step"><button id="next" title="next (Right)">&gt;</button>
<button id="last" title="last (End)">&gt;|</button><span id="counter"></span>
<span class="jumps"><button id="prev-round" title="previous round (Page Up)">&lt;&lt; round</button><button id="prev-decision" title="previous decision (chance steps skipped)">&lt; decision</button><button id="next-decision" title="next decision (chance steps skipped)">decision &gt;</button><button id="next-round" title="next round (Page Down)">round &gt;&gt;</button></span></div>
<div id="move"></div>
<div id="scores"></div>
<div id="game-over" hidden></div>
<div id="supply"></div>
<div id="boards" class="boards"></div>
<svg id="chart" viewBox="0 0 760 220" role="img" aria-label="score over the game"></svg>
<script>
const DATA = __DATA__;
const S = DATA.snapshots;
const N = S.length - 1;
let cur = 0;
/* page helpers */
const LANG = __TRANSLATION__;
// tr(text): the English words of a label in the page's language, as caribsim.human.lang does
const TR_RE = LANG.counts || LANG.terms ? new RegExp([LANG.counts, LANG.terms].filter(x => x).join("|"), "g") : null;
const czechForm = (n, forms) => forms[n === 1 ? 0 : n >= 2 && n <= 4 ? 1 : 2];
function tr(text) {
  if (!TR_RE) return String(text);
  return String(text).replace(TR_RE, (m, ...g) => {
    if (LANG.counts && g[0] !== undefined) {
      const form = czechForm(Math.abs(+g[0]), LANG.count_forms[g[1]]);
      return form.includes("{n}") ? form.replace("{n}", g[0]) : g[0] + " " + form;
    }
    return LANG.term_text[LANG.counts ? g[2] : g[0]];
  });
}
const trHtml = html => TR_RE ? html.replace(/(^|>)([^<]+)/g, (m, tag, text) => tag + tr(text)) : html;   // text, not tags
const COLORS = ["#d33", "#27c", "#2a7", "#c80", "#84c"];
const $ = id => document.getElementById(id);
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
const label = s => s.replace(/_/g, " ");
const seatName = i => tr(`seat ${i}`) + (DATA.players ? ` (${esc(DATA.players[i])})` : "");
function tags(obj, suffix, key) {
  // key(k): the data-key of k's tag (an element a move of the game page names)
  const out = [];
  for (const [k, v] of Object.entries(obj)) if (v) out.push(`<span class="tag ${k}"${key ? ` data-key="${key(k)}"` : ""}>${label(k)} ${v}${suffix||""}</span>`);
  return out.join("") || `<span class="empty">${tr("none")}</span>`;
}
/* end of the page helpers */
__BOARDS_JS__
function spread(ys, gap, lo, hi) {
  // end labels of close scores would overlap: keep them gap apart, inside lo..hi
  const order = ys.map((_, p) => p).sort((a, b) => ys[a] - ys[b] || a - b), out = ys.slice();
  order.forEach((p, k) => { if (k) out[p] = Math.max(out[p], out[order[k - 1]] + gap); });
  for (let k = order.length - 1; k >= 0; k--)
    out[order[k]] = Math.max(lo, Math.min(out[order[k]], k === order.length - 1 ? hi : out[order[k + 1]] - gap));
  return out;
}
function chart() {
  const svg = $("chart"), W = 760, H = 220, P = 30, R = 70;
  const n = S[0].scores.length;
  let top = 1;
  S.forEach(s => s.scores.forEach(v => { if (v > top) top = v; }));
  const x = i => P + (W - P - R) * (N ? i / N : 0), y = v => H - P - (H - 2 * P) * v / top;
  let out = `<line x1="${P}" y1="${H-P}" x2="${W-R}" y2="${H-P}" stroke="#888"/><line x1="${P}" y1="${P}" x2="${P}" y2="${H-P}" stroke="#888"/>`;
  out += `<text x="${P}" y="${P-8}">${tr(`score (top ${top})`)}</text><text x="${W-R-60}" y="${H-8}">${tr(`step ${N}`)}</text>`;
  const ends = spread(S[N].scores.map(v => y(v) + 4), 13, P, H - 4);
  for (let p = 0; p < n; p++) {
    const pts = S.map((s, i) => `${x(i).toFixed(1)},${y(s.scores[p]).toFixed(1)}`).join(" ");
    out += `<polyline fill="none" stroke="${COLORS[p % 5]}" stroke-width="1.5" points="${pts}"/>`;
    out += `<text class="end" id="end-${p}" x="${W-R+4}" y="${ends[p].toFixed(1)}" fill="${COLORS[p % 5]}">${tr(`seat ${p}`)}: ${S[N].scores[p]}</text>`;
  }
  out += `<line id="cursor" x1="0" y1="${P}" x2="0" y2="${H-P}" stroke="#000" stroke-dasharray="3,3"/>`;
  svg.innerHTML = out;
  svg._x = x;
}
/* game over */
function gameOver(g = DATA.game_over, shown = cur === N) {
  // the final scores, on the last step of a finished game
  if (!g || !shown) return "";
  const head = [tr("seat"), tr("total"), ...g.parts.map(p => p[1])].concat(g.has_tiebreak ? [tr("tie-break")] : []);
  const rows = g.rows.map(r => `<tr id="final-${r.seat}" class="${r.winner ? "winner" : ""}" data-total="${r.total}" data-return="${r["return"]}"${g.has_tiebreak ? ` data-tiebreak="${r.tiebreak}"` : ""}>
    <td>${seatName(r.seat)}${r.winner ? " &#9733;" : ""}</td><td>${r.total}</td>${r.parts.map(v => `<td>${v}</td>`).join("")}${g.has_tiebreak ? `<td class="${r.tied ? "used" : ""}">${r.tiebreak}</td>` : ""}</tr>`).join("");
  return `<h2>${tr("Game over")}</h2>${g.ended ? `<div class="row" id="ended">${esc(g.ended)}</div>` : ""}<div class="row" id="verdict">${esc(g.verdict)}</div>
    <table><tr>${head.map(h => `<th>${esc(h)}</th>`).join("")}</tr>${rows}</table>`;
}
/* end of game over */
function show(i) {
  cur = Math.max(0, Math.min(N, i));
  const s = S[cur];
  $("slider").value = cur;
  $("counter").textContent = tr(`step ${cur} / ${N}`);
  $("move").textContent = s.move;
  $("scores").innerHTML = tr("scores: ") + s.scores.map((v, p) => `<span class="tag" style="border-left:4px solid ${COLORS[p % 5]}">${seatName(p)}: <b id="total-${p}">${v}</b></span>`).join("");
  const over = gameOver();
  $("game-over").innerHTML = over;
  $("game-over").hidden = !over;
  const supply = trHtml(BOARD.supply(s));
  $("supply").innerHTML = supply;
  $("supply").hidden = !supply;       // a game drawn as its text board has no supply panel
  $("boards").innerHTML = trHtml(BOARD.boards(s));
  const c = $("cursor"), x = $("chart")._x(cur);
  c.setAttribute("x1", x); c.setAttribute("x2", x);
  if (location.hash !== "#step=" + cur) history.replaceState(null, "", "#step=" + cur);
}
const hashStep = () => { const m = /step=(\d+)/.exec(location.hash); return m ? +m[1] : 0; };
$("slider").max = N;
for (const id of ["first", "prev", "next", "last"]) $(id).title = tr($(id).title);
$("slider").setAttribute("aria-label", tr("step"));
$("chart").setAttribute("aria-label", tr("score over the game"));
$("slider").addEventListener("input", e => show(+e.target.value));
$("first").onclick = () => show(0); $("last").onclick = () => show(N);
$("prev").onclick = () => show(cur - 1); $("next").onclick = () => show(cur + 1);
// a game of hundreds of steps (Port Royal's draws are steps) is read by round and by decision
function find(from, dir, ok) { for (let i = from + dir; i >= 0 && i <= N; i += dir) if (ok(i)) return i; return dir > 0 ? N : 0; }
const roundStart = i => i === 0 || S[i].nav_round !== S[i - 1].nav_round;
const nextRound = () => find(cur, 1, roundStart);
const prevRound = () => find(cur, -1, roundStart);  // mid-round: its start; at a start: the one before
const nextDecision = () => find(cur, 1, i => S[i].nav_decision), prevDecision = () => find(cur, -1, i => S[i].nav_decision);
$("next-round").onclick = () => show(nextRound()); $("prev-round").onclick = () => show(prevRound());
$("next-decision").onclick = () => show(nextDecision()); $("prev-decision").onclick = () => show(prevDecision());
for (const id of ["prev-round", "prev-decision", "next-decision", "next-round"]) {
  $(id).title = tr($(id).title); $(id).textContent = tr($(id).textContent);
}
const KEYS = {ArrowLeft: () => cur - 1, ArrowRight: () => cur + 1, Home: () => 0, End: () => N,
              PageUp: prevRound, PageDown: nextRound};
document.addEventListener("keydown", e => {
  if (!KEYS[e.key] || e.altKey || e.ctrlKey || e.metaKey) return;   // Alt+Left is the browser's back
  e.preventDefault();            // a focused slider would take a second step of its own
  show(KEYS[e.key]());
});
window.addEventListener("hashchange", () => show(hashStep()));
chart();
show(hashStep());
</script></body></html>
"""

"""The HTML of the lobby and of the game page (inline CSS and JS, no network but the server's
API). The game page draws the board with the replay viewer's CSS, helpers and the game's
board module (``caribsim.human.viewer.page_css`` / ``page_js``), so both pages look alike."""
from __future__ import annotations

import html
import json

from caribsim.human import viewer


def _json(value) -> str:
    # no "<" in the data: nothing in it can close the script element
    return json.dumps(value).replace("<", "\\u003c")


def lobby(default_bot: str) -> str:
    return _LOBBY.replace("__DEFAULT_BOT__", _json(default_bot))


def game(game_id: str, game_name: str) -> str:
    return (_GAME.replace("__VIEWER_CSS__", viewer.page_css(game_name))
            .replace("__VIEWER_JS__", viewer.page_js(game_name))
            .replace("__GAME_ID__", _json(game_id)).replace("__TITLE__", html.escape(f"caribsim: {game_name}")))


def notice(message: str) -> str:
    """A page that only says why there is nothing to show (no such game, not over yet)."""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>caribsim</title>'
            f'</head><body><p id="error">{html.escape(message)}</p><p><a href="/">to the lobby</a></p></body></html>')


_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>__TITLE__</title>"""

_COMMON_JS = r"""
async function api(path, body) {
  // the answer's JSON; a refused request throws its error message
  const r = await fetch(path, body === undefined ? {} :
    {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body)});
  const j = await r.json().catch(() => ({error: `the server answered ${r.status}`}));
  if (!r.ok) throw new Error(j.error || `the server answered ${r.status}`);
  return j;
}
const showError = text => { const e = document.getElementById("error"); e.textContent = text || ""; e.hidden = !text; };
"""

_LOBBY = (_HEAD.replace("__TITLE__", "caribsim: new game") + r"""
<style>
body{font-family:system-ui,sans-serif;margin:.6em;background:#fbf8f1;color:#222}
fieldset{border:1px solid #bbb;border-radius:6px;background:#fff;margin:.5em 0}
.seat{margin:.2em 0}.seat input{width:14em}
#error{color:#b00;font-weight:bold}
#created{border:2px solid #2a7;border-radius:6px;padding:.5em;background:#fff;margin:.5em 0}
table{border-collapse:collapse}td,th{padding:.1em .5em;border-bottom:1px solid #ddd;text-align:left}
</style></head><body>
<h1>caribsim: play in the browser</h1>
<fieldset><legend>new game</legend>
<div>game <select id="game"></select> players <select id="players"></select></div>
<div id="options"></div>
<div id="seats"></div>
<div>seed <input id="seed" inputmode="numeric" placeholder="random"></div>
<button id="create">create the game</button>
</fieldset>
<fieldset><legend>play on from a record</legend>
<div>record <input id="record-file" type="file" accept=".json,application/json" aria-label="a game record (.json)">
step <input id="record-step" inputmode="numeric" size="6" placeholder="last" aria-label="the record's step to play on from"></div>
<div>the seats above play it (their number is the record's players)</div>
<button id="from-record">play from here</button>
</fieldset>
<div id="error" role="alert" hidden></div>
<div id="created" hidden></div>
<h2>unfinished games</h2>
<table id="games"><tbody></tbody></table>
<script>
""" + _COMMON_JS + r"""
const DEFAULT_BOT = __DEFAULT_BOT__;
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
const $ = id => document.getElementById(id);
const label = s => s.replace(/_/g, " ");
// the seat links this browser made: a game is resumed from its token, which only its maker holds
const known = () => JSON.parse(localStorage.getItem("caribsim-links") || "{}");
let CHOICES = [];
const choice = () => CHOICES.find(c => c.game === $("game").value);
function seatRows() {
  const n = +$("players").value, old = [...document.querySelectorAll(".seat")].map(r =>
    [r.querySelector("select").value, r.querySelector("input").value]);
  $("seats").innerHTML = Array.from({length: n}, (_, i) => {
    const [kind, spec] = old[i] || [i ? "bot" : "human", DEFAULT_BOT];
    return `<div class="seat">seat ${i} <select id="kind-${i}"><option value="human"${kind === "human" ? " selected" : ""}>human</option>
      <option value="bot"${kind === "bot" ? " selected" : ""}>bot</option></select>
      <input id="bot-${i}" value="${esc(spec)}"${kind === "human" ? " disabled" : ""} aria-label="bot spec of seat ${i}" title="random, greedy, mcts:N, puct:N ..."></div>`;
  }).join("");
  // a human seat has no bot spec
  document.querySelectorAll(".seat select").forEach((s, i) => { s.onchange = () => { $(`bot-${i}`).disabled = s.value === "human"; }; });
}
function gameChanged() {
  const c = choice();
  $("players").innerHTML = c.players.map(n => `<option value="${n}"${n === 3 ? " selected" : ""}>${n}</option>`).join("");
  $("options").innerHTML = Object.entries(c.options).map(([k, v]) =>
    `<label><input type="checkbox" id="opt-${k}"${v ? " checked" : ""}> ${esc(k.replace(/_/g, " "))}</label> `).join("");
  seatRows();
}
function linkList(id, made) {
  const rows = made.links.map(l => `<li><a class="seat-link" data-seat="${l.seat}" href="${esc(l.url)}">seat ${l.seat}</a>
    <input readonly size="60" value="${esc(location.origin + l.url)}" aria-label="link of seat ${l.seat}"></li>`);
  if (made.hotseat) rows.push(`<li><a id="hotseat-link" href="${esc(made.hotseat)}">all human seats in this browser (hot-seat)</a></li>`);
  rows.push(`<li><a id="watch-link" href="${esc(made.watch)}">watch</a></li>`);
  return `game ${esc(id)}: one link per human seat (its token is its key; give each person theirs)<ul>${rows.join("")}</ul>`;
}
async function create() {
  showError("");
  const c = choice(), n = +$("players").value, seedText = $("seed").value.trim();
  const body = {game: c.game, players: n, options: {}, seed: seedText === "" ? null : Number(seedText),
    seats: Array.from({length: n}, (_, i) => $(`kind-${i}`).value === "human" ? "human" : $(`bot-${i}`).value.trim())};
  // a page's numbers are exact up to 2**53; the API takes any seed up to 2**64-1
  if (seedText !== "" && !(/^\d+$/.test(seedText) && Number.isSafeInteger(body.seed))) {
    showError(`the seed is a whole number 0..${Number.MAX_SAFE_INTEGER} (or empty: a random one)`); return;
  }
  for (const k of Object.keys(c.options)) body.options[k] = $(`opt-${k}`).checked;
  await start(body);
}
async function start(body) {
  // a new game (or one played on from a record): its links kept in this browser and shown
  try {
    const made = await api("/api/games", body), all = known();
    all[made.id] = made;
    localStorage.setItem("caribsim-links", JSON.stringify(all));
    $("created").innerHTML = linkList(made.id, made);
    $("created").hidden = false;
    listGames();
  } catch (e) { showError(e.message); }
}
async function fromRecord() {
  showError("");
  const file = $("record-file").files[0], stepText = $("record-step").value.trim();
  if (!file) { showError("choose a record file (.json) first"); return; }
  let record;
  try { record = JSON.parse(await file.text()); } catch (e) { showError(`${file.name} is not JSON: ${e.message}`); return; }
  if (stepText !== "" && !/^\d+$/.test(stepText)) { showError("the step is a whole number (or empty: the record's last)"); return; }
  const n = +$("players").value;
  const body = {record, seats: Array.from({length: n}, (_, i) => $(`kind-${i}`).value === "human" ? "human" : $(`bot-${i}`).value.trim())};
  if (stepText !== "") body.step = Number(stepText);
  await start(body);
}
async function listGames() {
  const j = await api("/api/games"), mine = known();
  if (!CHOICES.length) {
    CHOICES = j.choices;
    $("game").innerHTML = CHOICES.map(c => `<option value="${c.game}"${c.game === "puerto_rico" ? " selected" : ""}>${label(c.game)}</option>`).join("");
    gameChanged();
  }
  $("games").tBodies[0].innerHTML = j.games.map(g => {
    const links = mine[g.id] ? mine[g.id].links.map(l => `<a class="resume" href="${esc(l.url)}">resume seat ${l.seat}</a>`).join(" ") : "";
    return `<tr id="game-${g.id}"><td>${esc(g.game)}</td><td>${g.players.map(esc).join(", ")}</td><td>step ${g.step}</td>
      <td>${links} <a href="/game/${g.id}">watch</a></td></tr>`;
  }).join("") || '<tr><td>none</td></tr>';
}
$("game").onchange = gameChanged;
$("players").onchange = seatRows;
$("create").onclick = create;
$("from-record").onclick = fromRecord;
listGames().catch(e => showError(e.message));
</script></body></html>
""")

_GAME = _HEAD + r"""
<style>
__VIEWER_CSS__
#status{font-weight:bold;margin:.4em 0}
#error{color:#b00;font-weight:bold}
#moves{display:flex;flex-wrap:wrap;gap:.3em;margin:.4em 0}
#moves button{text-align:left}
#hint-panel table{border-collapse:collapse}#hint-panel td{padding:0 .5em}
#log{max-height:16em;overflow-y:auto;background:#fff;border:1px solid #bbb;font-size:.85em;padding:.3em 2.5em}
</style></head><body>
<h1>__TITLE__ <a href="/" style="font-size:.6em">lobby</a></h1>
<div id="status" data-step="-1"></div>
<div id="error" role="alert" hidden></div>
<div id="moves"></div>
<div><button id="undo" disabled>undo</button> <button id="hint" disabled>hint</button></div>
<div id="hint-panel" hidden></div>
<div id="scores"></div>
<div id="game-over" hidden></div>
__ANALYSIS__
<div id="supply"></div>
<div id="boards" class="boards"></div>
<h2>moves played</h2><ol id="log"></ol>
<script>
""" + _COMMON_JS + r"""
const GAME = __GAME_ID__;
const TOKENS = new URLSearchParams(location.search).getAll("token");
const QUERY = TOKENS.map(t => "token=" + encodeURIComponent(t)).join("&");
// what the board drawings read, as on the replay page: the seats' players, the snapshots (here
// the step before and this one: a board draws the last step's event) and the final result
const DATA = {players: null, snapshots: [], final: null};
__VIEWER_JS__
let view = null;
const tokenOf = seat => view && TOKENS[view.you.indexOf(seat)];
function status(v) {
  const p = v.to_act, who = p >= 0 ? seatName(p) : "";
  if (v.over) return "game over";
  if (v.problem) return v.problem;
  if (v.you.includes(p)) return `your move, ${who}`;
  return v.thinking ? `${who} is thinking...` : `waiting for ${who}`;
}
function render(v) {
  // an answer arriving late, or the same change twice (the move's answer and its update)
  if (view && v.version <= view.version) return;
  const moved = !view || v.step !== view.step;
  view = v;
  Object.assign(DATA, {players: v.players, final: v.final,
                       snapshots: v.previous ? [v.previous, v.snapshot] : [v.snapshot]});
  const st = $("status");
  st.textContent = status(v);
  st.dataset.step = v.step; st.dataset.toAct = v.to_act; st.dataset.over = v.over;
  $("moves").innerHTML = v.moves.map(m => `<button class="move" data-action="${m.action}">${esc(m.label)}</button>`).join("");
  if (moved) $("hint-panel").hidden = true;
  $("undo").disabled = !Object.values(v.undo).some(t => t !== null);
  $("hint").disabled = !v.moves.length;
  const s = v.snapshot;
  $("scores").innerHTML = "scores: " + s.scores.map((x, p) => `<span class="tag" style="border-left:4px solid ${COLORS[p % 5]}">${seatName(p)}: <b id="total-${p}">${x}</b></span>`).join("");
  const over = gameOver(v.game_over, true) + (v.over ? `<div class="row"><a id="replay-link" href="/replay/${GAME}">replay the game</a></div>` : "");
  $("game-over").innerHTML = over; $("game-over").hidden = !over;
  const supply = BOARD.supply(s);
  $("supply").innerHTML = supply; $("supply").hidden = !supply;
  $("boards").innerHTML = BOARD.boards(s);
  const log = $("log"), atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.innerHTML = v.log.map(line => `<li>${esc(line.replace(/^\d+\. /, ""))}</li>`).join("");
  if (atEnd) log.scrollTop = log.scrollHeight;
}
let pending = null;      // the step of the request on its way: one request per step
async function act(path, body) {
  // a refused request says why and the board is fetched again
  if (pending === body.step) return;
  pending = body.step; showError("");
  let v;
  try { v = await api(`/api/games/${GAME}/${path}`, body); }
  catch (e) { showError(e.message); refresh(); return; }
  finally { pending = null; }
  // the answer shows the seat of the one token sent; a hot-seat page holds more
  if (TOKENS.length > 1) refresh(); else render(v);
}
$("moves").onclick = e => {
  const b = e.target.closest("button.move");
  if (b) act("move", {token: tokenOf(view.to_act), step: view.step, action: +b.dataset.action});
};
$("undo").onclick = () => {
  // the held seat whose previous decision is the latest (hot-seat: the last person to move)
  const [seat] = Object.entries(view.undo).filter(([, t]) => t !== null).sort((a, b) => b[1] - a[1])[0] || [];
  if (seat !== undefined) act("undo", {token: tokenOf(+seat), step: view.step});
};
$("hint").onclick = async () => {
  const panel = $("hint-panel"), step = view.step;
  panel.hidden = false; panel.textContent = "searching...";
  try {
    const h = await api(`/api/games/${GAME}/hint`, {token: tokenOf(view.to_act), step});
    if (view.step !== step) return;
    panel.innerHTML = `hint (${h.iterations} iterations; win estimate of the best move ${(100 * h.win).toFixed(0)}%):
      <table>${h.moves.map(m => `<tr class="hint-move" data-action="${m.action}" data-share="${m.share}" data-win="${m.win}">
      <td>${esc(m.label)}</td><td>${(100 * m.share).toFixed(0)}% of visits</td><td>win ${(100 * m.win).toFixed(0)}%</td></tr>`).join("")}</table>`;
  } catch (e) { panel.hidden = true; showError(e.message); }
};
async function refresh() {
  try { render(await api(`/api/games/${GAME}?${QUERY}`)); }
  catch (e) { showError(e.message); }
}
function listen(wait) {
  // live updates: every change of the game comes as its new view; a lost socket reconnects
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/games/${GAME}/ws?${QUERY}`);
  let refused = false;
  ws.onopen = () => { wait = 500; };
  ws.onmessage = e => {
    const v = JSON.parse(e.data);
    if (v.error) { refused = true; showError(v.error); } else render(v);
  };
  ws.onclose = () => { if (!refused) setTimeout(() => listen(Math.min(2 * wait, 8000)), wait); };
}
refresh();
listen(500);
__ANALYSIS_JS__
</script></body></html>
"""

# --- the post-game analysis (caribsim.web.analysis) -------------------------------------------
# At game over the page asks GET /api/games/ID/analysis (again every half second while the
# search runs) and draws each seat's win estimate per decision as an SVG chart, with the
# biggest swings as a table linking the replay at that move.

_ANALYSIS = r"""<style>
#analysis{border:1px solid #bbb;border-radius:6px;padding:.5em;background:#fff;margin:.6em 0;overflow-x:auto}
#analysis h2{font-size:1.1em;margin:0 0 .3em 0}
#analysis-chart{width:100%;max-width:760px;height:auto;display:block}
#analysis-chart text{font-size:11px}
#analysis-legend .tag{margin-right:.4em}
#swings{border-collapse:collapse;margin-top:.4em}
#swings td,#swings th{padding:.1em .5em;border-bottom:1px solid #ddd;text-align:right}
#swings td:nth-child(2),#swings td:nth-child(3),#swings th:nth-child(2),#swings th:nth-child(3){text-align:left}
</style>
<div id="analysis" data-status="" hidden><h2>analysis</h2>
<div id="analysis-status"></div>
<svg id="analysis-chart" viewBox="0 0 760 250" role="img" aria-label="each seat's win estimate over the game"></svg>
<div id="analysis-legend"></div>
<div id="analysis-swings"></div>
</div>
"""

_ANALYSIS_JS = r"""
/* the post-game analysis */
const ANALYSIS = {asked: false};
function analysisWatch() {
  // asked for once the game is over; an undo back into the game hides it again
  const over = $("status").dataset.over === "true";
  if (over && !ANALYSIS.asked) { ANALYSIS.asked = true; analysisAsk(); }
  if (!over && ANALYSIS.asked) { ANALYSIS.asked = false; $("analysis").hidden = true; $("analysis").dataset.status = ""; }
}
new MutationObserver(analysisWatch).observe($("status"), {attributes: true, attributeFilter: ["data-over"]});
analysisWatch();
async function analysisAsk() {
  const box = $("analysis"), say = $("analysis-status");
  if (!ANALYSIS.asked) return;
  box.hidden = false;
  let a;
  try { a = await api(`/api/games/${GAME}/analysis`); }
  catch (e) { box.dataset.status = "error"; say.textContent = e.message; return; }
  if (!ANALYSIS.asked) return;
  box.dataset.status = a.status;
  if (a.status === "running") {
    say.textContent = `searching every decision of the game: ${a.done} of ${a.total} done...`;
    setTimeout(analysisAsk, 500);
    return;
  }
  if (a.status !== "done") { say.textContent = a.error; return; }
  say.textContent = `each seat's win estimate at every decision, from a search of ${a.iterations} simulations ` +
    "(made after the game: it sees what was hidden then); the last point is the result.";
  analysisChart(a);
  analysisSwings(a);
}
const pct = (v, sign) => { const n = Math.round(100 * v); return `${sign && n > 0 ? "+" : ""}${n}%`; };
function analysisChart(a) {
  const svg = $("analysis-chart"), W = 760, H = 250, L = 46, R = W - 20, T = 14, B = H - 36;
  const last = a.final.step || 1, seats = a.final.returns.length;
  const points = a.estimates.map(e => [e.step, e.win]).concat([[a.final.step, a.final.returns]]);
  const x = k => L + (R - L) * k / last, y = v => B - (B - T) * v;
  let out = "";
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    out += `<line x1="${L}" y1="${y(v)}" x2="${R}" y2="${y(v)}" stroke="${v % 1 ? "#eee" : "#888"}"/>`;
    out += `<text x="${L - 4}" y="${y(v) + 4}" text-anchor="end">${pct(v)}</text>`;
  }
  out += `<line x1="${L}" y1="${T}" x2="${L}" y2="${B}" stroke="#888"/>`;
  for (const k of [0, Math.round(last / 4), Math.round(last / 2), Math.round(3 * last / 4), last])
    out += `<line x1="${x(k)}" y1="${B}" x2="${x(k)}" y2="${B + 4}" stroke="#888"/><text x="${x(k)}" y="${B + 16}" text-anchor="middle">${k}</text>`;
  out += `<text x="${(L + R) / 2}" y="${H - 4}" text-anchor="middle">step</text>`;
  out += `<text transform="translate(12 ${(T + B) / 2}) rotate(-90)" text-anchor="middle">win estimate</text>`;
  for (let p = 0; p < seats; p++) {
    const pts = points.map(([k, win]) => `${x(k).toFixed(1)},${y(win[p]).toFixed(1)}`).join(" ");
    out += `<polyline class="seat-line" data-seat="${p}" fill="none" stroke="${COLORS[p % 5]}" stroke-width="1.5" points="${pts}"/>`;
  }
  for (const s of a.swings)
    out += `<circle class="swing-mark" cx="${x(s.step).toFixed(1)}" cy="${y(s.before).toFixed(1)}" r="4" fill="none" stroke="${COLORS[s.seat % 5]}" stroke-width="2"><title>move ${s.step + 1}, ${seatName(s.seat)}: ${esc(s.label)} (${pct(s.before)} to ${pct(s.after)})</title></circle>`;
  svg.innerHTML = out;
  Object.assign(svg.dataset, {left: L, right: R, top: T, bottom: B, last});
  $("analysis-legend").innerHTML = Array.from({length: seats}, (_, p) =>
    `<span class="tag" style="border-left:4px solid ${COLORS[p % 5]}">${seatName(p)}: ${pct(a.final.returns[p])}</span>`).join("");
}
function analysisSwings(a) {
  // the moves after which their mover's estimate changed most (to his next point)
  const rows = a.swings.map(s => `<tr class="swing" data-step="${s.step}" data-seat="${s.seat}">
    <td><a href="/replay/${GAME}#step=${s.step + 1}" title="the board after this move, in the replay">${s.step + 1}</a></td>
    <td>${seatName(s.seat)}</td><td>${esc(s.label)}</td><td>${pct(s.before)}</td><td>${pct(s.after)}</td><td>${pct(s.delta, true)}</td></tr>`).join("");
  $("analysis-swings").innerHTML = `<table id="swings"><tr><th>move</th><th>seat</th><th>played</th><th>before</th>
    <th>after</th><th>change</th></tr>${rows}</table>`;
}
"""

_GAME = _GAME.replace("__ANALYSIS__\n", _ANALYSIS).replace("__ANALYSIS_JS__\n", _ANALYSIS_JS)

"""The HTML of the lobby and of the game page (inline CSS and JS, no network but the server's
API). The game page draws the board with the replay viewer's CSS, helpers and the game's
board module (``caribsim.human.viewer.page_css`` / ``page_js``), so both pages look alike.

Each page is in one language (``lang_code``: en, cs; ``caribsim.human.lang``). Its English
texts are the keys of data/lang_cs.csv's ``msg`` rows: an element marked ``data-t`` has its
text (and its title, placeholder, aria-label) translated when the page loads, a text the
JS writes goes through ``t("template {name}", {name})``; the board's words go through the
viewer's ``tr()``. The API's texts (the moves' labels, the log, the refusals) come in the
page's language: ``api()`` and the socket send ``?lang=``."""

from __future__ import annotations

import html
import json

from caribsim.human import lang, viewer


def _json(value) -> str:
    # no "<" in the data: nothing in it can close the script element
    return json.dumps(value).replace("<", "\\u003c")


def _in(page: str, tr) -> str:
    """The page with its language: the <html lang>, the messages of ``t()``."""
    return (
        page.replace("__LANG__", tr.lang)
        .replace("__PAGE_LANG__", _json(tr.lang))
        .replace("__MESSAGES__", _json(tr.messages))
    )


def lobby(default_bot: str, lang_code: str = "en") -> str:
    tr = lang.translator(None, lang.check(lang_code))
    return _in(
        _LOBBY.replace("__DEFAULT_BOT__", _json(default_bot))
        .replace("__GAME_NAMES__", _json({g: tr.game_name(g) for g in lang.GAME_NAMES}))
        .replace("__TITLE__", html.escape(tr.msg("caribsim: new game"))),
        tr,
    )


def game(game_id: str, game_name: str, lang_code: str = "en") -> str:
    tr = lang.translator(game_name, lang.check(lang_code))
    return _in(
        _GAME.replace("__VIEWER_CSS__", viewer.page_css(game_name))
        .replace("__VIEWER_JS__", viewer.page_js(game_name, lang_code))
        .replace("__GAME_ID__", _json(game_id))
        .replace("__TITLE__", html.escape(f"caribsim: {tr.game_name(game_name)}")),
        tr,
    )


def replay(record: dict, game_id: str, default_bot: str, lang_code: str = "en") -> str:
    """The replay viewer's page of a finished game of the server, with *play from here*: the
    seats and a button that make a new game from the record at the viewer's step and open it
    (a static viewer file has no server, so no such control)."""
    tr = lang.translator(record["game"], lang.check(lang_code))
    block = _in(
        _PLAY_FROM_HERE.replace("__COMMON_JS__", _COMMON_JS)
        .replace("__GAME_ID__", _json(game_id))
        .replace("__DEFAULT_BOT__", _json(default_bot)),
        tr,
    )
    page = viewer.render(record, lang_code)
    at = page.rindex("</body>")
    return page[:at] + block + page[at:]


def notice(message: str, lang_code: str = "en") -> str:
    """A page that only says why there is nothing to show (no such game, not over yet)."""
    tr = lang.translator(None, lang.check(lang_code))
    return (
        f'<!DOCTYPE html><html lang="{tr.lang}"><head><meta charset="utf-8"><title>caribsim</title></head><body>'
        f'<p id="error">{html.escape(message)}</p><p><a href="/">{html.escape(tr.msg("to the lobby"))}</a></p></body></html>'
    )


_HEAD = """<!DOCTYPE html>
<html lang="__LANG__"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>__TITLE__</title>"""

_COMMON_JS = r"""
const PAGE_LANG = __PAGE_LANG__, MESSAGES = __MESSAGES__;
// t(text, values): a message of the page in its language (data/lang_cs.csv), its {names} filled
const t = (text, values = {}) => (Object.hasOwn(MESSAGES, text) ? MESSAGES[text] : text)
  .replace(/\{(\w+)\}/g, (m, k) => Object.hasOwn(values, k) ? values[k] : m);
function translatePage() {
  // the elements marked data-t: their own texts and their title, placeholder, aria-label
  for (const e of document.querySelectorAll("[data-t]")) {
    for (const n of e.childNodes) if (n.nodeType === 3 && n.nodeValue.trim()) n.nodeValue = n.nodeValue.replace(n.nodeValue.trim(), t(n.nodeValue.trim()));
    for (const a of ["title", "placeholder", "aria-label"]) if (e.hasAttribute(a)) e.setAttribute(a, t(e.getAttribute(a)));
  }
}
// the API answers in the page's language; a page's own links keep a language its address asked for
const withLang = (url, lang = PAGE_LANG) => lang === "en" ? url : url + (url.includes("?") ? "&" : "?") + "lang=" + lang;
const ASKED = new URLSearchParams(location.search).get("lang");
const keepLang = url => ASKED ? url + (url.includes("?") ? "&" : "?") + "lang=" + encodeURIComponent(ASKED) : url;
async function api(path, body) {
  // the answer's JSON; a refused request throws its error message
  const r = await fetch(withLang(path), body === undefined ? {} :
    {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body)});
  const j = await r.json().catch(() => ({error: t("the server answered {status}", {status: r.status})}));
  if (!r.ok) throw new Error(j.error || t("the server answered {status}", {status: r.status}));
  return j;
}
const showError = text => { const e = document.getElementById("error"); e.textContent = text || ""; e.hidden = !text; };
"""

_LOBBY = (
    _HEAD
    + r"""
<style>
body{font-family:system-ui,sans-serif;margin:.6em;background:#fbf8f1;color:#222}
fieldset{border:1px solid #bbb;border-radius:6px;background:#fff;margin:.5em 0}
.seat{margin:.2em 0}.seat input{width:14em}
#error{color:#b00;font-weight:bold}
#created{border:2px solid #2a7;border-radius:6px;padding:.5em;background:#fff;margin:.5em 0}
table{border-collapse:collapse}td,th{padding:.1em .5em;border-bottom:1px solid #ddd;text-align:left}
</style></head><body>
<h1 data-t>caribsim: play in the browser</h1>
<fieldset><legend data-t>new game</legend>
<div data-t>game <select id="game"></select> players <select id="players"></select></div>
<div id="options"></div>
<div id="seats"></div>
<div data-t>seed <input id="seed" inputmode="numeric" placeholder="random" data-t></div>
<button id="create" data-t>create the game</button>
</fieldset>
<fieldset><legend data-t>play on from a record</legend>
<div data-t>record <input id="record-file" type="file" accept=".json,application/json" aria-label="a game record (.json)" data-t>
step <input id="record-step" inputmode="numeric" size="6" placeholder="last" aria-label="the record's step to play on from" data-t></div>
<div data-t>the seats above play it (their number is the record's players)</div>
<button id="from-record" data-t>play from here</button>
</fieldset>
<div id="error" role="alert" hidden></div>
<div id="created" hidden></div>
<h2 data-t>unfinished games</h2>
<table id="games"><tbody></tbody></table>
<h2 data-t>finished games</h2>
<div data-t>their replay, and from any of its steps: play from here</div>
<table id="finished"><tbody></tbody></table>
<div id="pages" hidden><button id="newer" data-t>newer</button> <span id="page-of"></span> <button id="older" data-t>older</button></div>
<script>
"""
    + _COMMON_JS
    + r"""
const DEFAULT_BOT = __DEFAULT_BOT__;
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
const $ = id => document.getElementById(id);
const label = s => s.replace(/_/g, " ");
// the seat links this browser made: a game is resumed from its token, which only its maker holds
const known = () => JSON.parse(localStorage.getItem("caribsim-links") || "{}");
let CHOICES = [];
const GAME_NAMES = __GAME_NAMES__;   // id -> the printed name, in the page's language
const gameName = g => esc(GAME_NAMES[g] || g);
const choice = () => CHOICES.find(c => c.game === $("game").value);
function seatRows() {
  const n = +$("players").value, old = [...document.querySelectorAll(".seat")].map(r =>
    [r.querySelector("select").value, r.querySelector("input").value]);
  $("seats").innerHTML = Array.from({length: n}, (_, i) => {
    const [kind, spec] = old[i] || [i ? "bot" : "human", DEFAULT_BOT];
    return `<div class="seat">${t("seat {i}", {i})} <select id="kind-${i}"><option value="human"${kind === "human" ? " selected" : ""}>${t("human")}</option>
      <option value="bot"${kind === "bot" ? " selected" : ""}>${t("bot")}</option></select>
      <input id="bot-${i}" value="${esc(spec)}"${kind === "human" ? " disabled" : ""} aria-label="${esc(t("bot spec of seat {i}", {i}))}" title="random, greedy, mcts:N, puct:N ..."></div>`;
  }).join("");
  // a human seat has no bot spec
  document.querySelectorAll(".seat select").forEach((s, i) => { s.onchange = () => { $(`bot-${i}`).disabled = s.value === "human"; }; });
}
function gameChanged() {
  const c = choice();
  $("players").innerHTML = c.players.map(n => `<option value="${n}"${n === 3 ? " selected" : ""}>${n}</option>`).join("");
  $("options").innerHTML = Object.entries(c.options).map(([k, v]) =>
    `<label><input type="checkbox" id="opt-${k}"${v ? " checked" : ""}> ${esc(t(label(k)))}</label> `).join("");
  seatRows();
}
function linkList(id, made) {
  const rows = made.links.map(l => `<li><a class="seat-link" data-seat="${l.seat}" href="${esc(keepLang(l.url))}">${t("seat {i}", {i: l.seat})}</a>
    <input readonly size="60" value="${esc(location.origin + l.url)}" aria-label="${esc(t("link of seat {i}", {i: l.seat}))}"></li>`);
  if (made.hotseat) rows.push(`<li><a id="hotseat-link" href="${esc(keepLang(made.hotseat))}">${t("all human seats in this browser (hot-seat)")}</a></li>`);
  rows.push(`<li><a id="watch-link" href="${esc(keepLang(made.watch))}">${t("watch")}</a></li>`);
  return `${esc(t("game {id}: one link per human seat (its token is its key; give each person theirs)", {id}))}<ul>${rows.join("")}</ul>`;
}
async function create() {
  showError("");
  const c = choice(), n = +$("players").value, seedText = $("seed").value.trim();
  const body = {game: c.game, players: n, options: {}, seed: seedText === "" ? null : Number(seedText),
    seats: Array.from({length: n}, (_, i) => $(`kind-${i}`).value === "human" ? "human" : $(`bot-${i}`).value.trim())};
  // a page's numbers are exact up to 2**53; the API takes any seed up to 2**64-1
  if (seedText !== "" && !(/^\d+$/.test(seedText) && Number.isSafeInteger(body.seed))) {
    showError(t("the seed is a whole number 0..{max} (or empty: a random one)", {max: Number.MAX_SAFE_INTEGER})); return;
  }
  for (const k of Object.keys(c.options)) body.options[k] = $(`opt-${k}`).checked;
  await start(body);
}
async function start(body) {
  // a new game (or one played on from a record): its links kept in this browser (the lobby's
  // list resumes it from them), then the game opens: one person's seat, or the watcher's page
  // of a game of bots; a game of several people shows each seat's link to give them
  try {
    const made = await api("/api/games", body), all = known();
    all[made.id] = made;
    localStorage.setItem("caribsim-links", JSON.stringify(all));
    if (made.links.length <= 1) { location.assign(keepLang(made.links.length ? made.links[0].url : made.watch)); return; }
    $("created").innerHTML = linkList(made.id, made);
    $("created").hidden = false;
    listGames();
  } catch (e) { showError(e.message); }
}
async function fromRecord() {
  showError("");
  const file = $("record-file").files[0], stepText = $("record-step").value.trim();
  if (!file) { showError(t("choose a record file (.json) first")); return; }
  let record;
  try { record = JSON.parse(await file.text()); } catch (e) { showError(t("{file} is not JSON: {why}", {file: file.name, why: e.message})); return; }
  if (stepText !== "" && !/^\d+$/.test(stepText)) { showError(t("the step is a whole number (or empty: the record's last)")); return; }
  const n = +$("players").value;
  const body = {record, seats: Array.from({length: n}, (_, i) => $(`kind-${i}`).value === "human" ? "human" : $(`bot-${i}`).value.trim())};
  if (stepText !== "") body.step = Number(stepText);
  await start(body);
}
// the lists come a page at a time, newest first (the page's address may say ?limit=, 1..200)
const LIMIT = Math.min(200, Math.max(1, parseInt(new URLSearchParams(location.search).get("limit"), 10) || 100));
let OFFSET = 0;
async function listGames() {
  const j = await api(`/api/games?offset=${OFFSET}&limit=${LIMIT}`), mine = known();
  const total = Math.max(j.count.games, j.count.finished), pages = Math.max(1, Math.ceil(total / LIMIT));
  if (OFFSET > 0 && OFFSET >= total) { OFFSET = (pages - 1) * LIMIT; return listGames(); }  // games ended meanwhile
  $("pages").hidden = pages < 2;
  $("page-of").textContent = t("page {p} of {n}", {p: OFFSET / LIMIT + 1, n: pages});
  $("newer").disabled = OFFSET === 0;
  $("older").disabled = OFFSET + LIMIT >= total;
  if (!CHOICES.length) {
    CHOICES = j.choices;
    $("game").innerHTML = CHOICES.map(c => `<option value="${c.game}"${c.game === "puerto_rico" ? " selected" : ""}>${gameName(c.game)}</option>`).join("");
    gameChanged();
  }
  $("games").tBodies[0].innerHTML = j.games.map(g => {
    const links = mine[g.id] ? mine[g.id].links.map(l => `<a class="resume" href="${esc(keepLang(l.url))}">${t("resume seat {i}", {i: l.seat})}</a>`).join(" ") : "";
    return `<tr id="game-${g.id}"><td>${gameName(g.game)}</td><td>${g.players.map(p => esc(p === "human" ? t(p) : p)).join(", ")}</td><td>${t("step {n}", {n: g.step})}</td>
      <td>${links} <a href="${keepLang(`/game/${g.id}`)}">${t("watch")}</a></td></tr>`;
  }).join("") || `<tr><td>${t("none")}</td></tr>`;
  $("finished").tBodies[0].innerHTML = j.finished.map(g =>
    `<tr id="finished-${g.id}"><td>${gameName(g.game)}</td><td>${g.players.map(p => esc(p === "human" ? t(p) : p)).join(", ")}</td><td>${t("{n} steps", {n: g.step})}</td>
      <td><a class="replay" href="${keepLang(`/replay/${g.id}`)}">${t("replay, play from a step")}</a></td></tr>`).join("") || `<tr><td>${t("none")}</td></tr>`;
}
$("game").onchange = gameChanged;
$("players").onchange = seatRows;
$("create").onclick = create;
$("from-record").onclick = fromRecord;
const turnPage = by => () => { OFFSET = Math.max(0, OFFSET + by * LIMIT); listGames().catch(e => showError(e.message)); };
$("newer").onclick = turnPage(-1);
$("older").onclick = turnPage(1);
translatePage();
listGames().catch(e => showError(e.message));
</script></body></html>
"""
)

_GAME = (
    _HEAD
    + r"""
<style>
__VIEWER_CSS__
#status{font-weight:bold;margin:.4em 0}
#error{color:#b00;font-weight:bold}
#moves{display:flex;flex-wrap:wrap;gap:.3em;margin:.4em 0}
#moves button{text-align:left}
#hint-panel table{border-collapse:collapse}#hint-panel td,#hint-panel th{padding:0 .5em}#hint-panel th{font-weight:normal;color:#555;text-align:right}#hint-panel th:nth-child(2){text-align:left}#hint-panel td.num{text-align:right;white-space:nowrap}
#hint-panel{position:fixed;right:.6em;bottom:.6em;z-index:20;max-width:min(36em,94vw);max-height:45vh;overflow:auto;
  background:#fff;border:2px solid #e07000;border-radius:4px;padding:.4em .6em;box-shadow:0 2px 10px #0004}
#hint-close{float:right;margin-left:.5em}
#log{max-height:16em;overflow-y:auto;background:#fff;border:1px solid #bbb;font-size:.85em;padding:.2em .5em}
#log h4{margin:.3em 0 .1em;font-size:1em;border-bottom:1px solid #ddd}
#log .log-phase-name{color:#666;font-style:italic;margin-left:.3em}
#log ol{margin:0;padding-left:3em}
#log li.chance{list-style:none;color:#777;font-size:.92em;margin-left:.8em}
/* a phone: the seats this page holds right under the moves, the supply after them, the other
   seats folded to their first lines (a tap on the heading unfolds one) */
#mine{display:none}
@media (max-width:700px){
  #mine{display:flex;flex-direction:column;gap:.5em;margin:.4em 0}
  #boards > .board > h3{cursor:pointer}
  #boards > .board.folded > :nth-child(n+3){display:none}
  #boards > .board > h3::after{content:" \25BE";color:#888}
  #boards > .board.folded > h3::after{content:" \25B8"}
}
/* a wide screen: the log in a column of its own beside the board, as tall as the window */
@media (min-width:1280px){
  body{margin-right:24em}
  #log-box{position:fixed;top:0;right:0;bottom:0;width:23em;display:flex;flex-direction:column;padding:.3em .5em;box-sizing:border-box;background:#fbf8f1;border-left:1px solid #ccc}
  #log-box h2{margin:.2em 0}
  #log{max-height:none;flex:1}
  #hint-panel{right:24.6em}
}
.target{outline:2px solid #e07000;outline-offset:1px;cursor:pointer}
.target:hover,.target:focus{outline-width:3px;box-shadow:0 0 0 4px #ffd9a8}
.board.yours{order:-1;box-shadow:0 0 0 3px #e07000}
.you-badge{background:#e07000;color:#fff;border-radius:3px;padding:0 .35em;font-size:.8em}
#moves button.picked{outline:3px solid #e07000;background:#ffe4c0}
#status.your-turn{animation:your-turn 1.6s ease-out}
@keyframes your-turn{0%,40%{background:#ffd9a8;box-shadow:0 0 0 4px #ffd9a8}100%{background:transparent}}
#sound-box{font-size:.85em;color:#555;margin-left:.6em}
#last-move{margin:.3em 0;padding:.2em .5em;border-left:4px solid #f5b400;background:#fffbea;min-height:1.2em}
#last-move .gains{color:#555}
.changed{animation:changed 2.4s ease-out}
@keyframes changed{0%{box-shadow:0 0 0 3px #f5b400;background-color:#ffe98a}100%{box-shadow:0 0 0 3px #f5b40000}}
@media (prefers-reduced-motion:reduce){.changed{animation:none;box-shadow:0 0 0 2px #f5b400}}
</style></head><body>
<h1>__TITLE__ <a id="lobby-link" href="/" style="font-size:.6em" data-t>lobby</a></h1>
<div id="status" data-step="-1"></div>
<div id="error" role="alert" hidden></div>
<div id="moves"></div>
<div><button id="undo" disabled data-t>undo</button> <button id="hint" disabled data-t>hint</button>
 <label id="sound-box"><input type="checkbox" id="sound"> <span data-t>a sound on your turn</span></label></div>
<div id="undo-confirm" role="alertdialog" hidden><span data-t>the game is over: undo your last move and play on from there?</span>
 <button id="undo-yes" data-t>undo and play on</button> <button id="undo-no" data-t>keep the game finished</button></div>
<div id="hint-panel" hidden></div>
<div id="scores"></div>
<div id="last-move" aria-live="polite"></div>
<div id="game-over" hidden></div>
__ANALYSIS__
<div id="mine"></div>
<div id="supply"></div>
<div id="boards" class="boards"></div>
<div id="log-box"><h2 data-t>moves played</h2><div id="log"></div></div>
<script>
"""
    + _COMMON_JS
    + r"""
const GAME = __GAME_ID__;
const TOKENS = new URLSearchParams(location.search).getAll("token");
const QUERY = TOKENS.map(t => "token=" + encodeURIComponent(t)).join("&");
// what the board drawings read, as on the replay page: the seats' players, the snapshots (here
// the step before and this one: a board draws the last step's event) and the final result
const DATA = {players: null, snapshots: [], final: null};
__VIEWER_JS__
let view = null;
const TITLE = document.title;
const tokenOf = seat => view && TOKENS[view.you.indexOf(seat)];
function status(v) {
  const p = v.to_act, who = p >= 0 ? seatName(p) : "";
  if (v.over) return t("game over");
  if (v.problem) return v.problem;
  if (v.you.includes(p)) return t("your move, {who}", {who});
  return v.thinking ? t("{who} is thinking...", {who}) : t("waiting for {who}", {who});
}
function render(v) {
  // an answer arriving late, or the same change twice (the move's answer and its update)
  if (view && v.version <= view.version) return;
  const moved = !view || v.step !== view.step, before = view;
  view = v;
  Object.assign(DATA, {players: v.players.map(p => p === "human" ? t(p) : p), final: v.final,
                       snapshots: v.previous ? [v.previous, v.snapshot] : [v.snapshot]});
  const st = $("status");
  st.textContent = status(v);
  // the turn came to this page: the status flashes (and, if asked for, a short sound)
  const ours = x => x && !x.over && x.you.includes(x.to_act) && x.moves.length > 0;
  if (ours(v) && !ours(before)) yourTurn(st);
  // the tab says when it is this browser's move: a person who looked away sees it there
  document.title = (!v.over && v.you.includes(v.to_act) ? st.textContent + " | " : "") + TITLE;
  st.dataset.step = v.step; st.dataset.toAct = v.to_act; st.dataset.over = v.over;
  $("moves").innerHTML = v.moves.map(m => `<button class="move" data-action="${m.action}"${m.target ? ` data-target="${esc(m.target)}"` : ""}>${esc(m.label)}</button>`).join("");
  if (moved) $("hint-panel").hidden = $("undo-confirm").hidden = true;
  $("undo").disabled = !Object.values(v.undo).some(t => t !== null);
  $("hint").disabled = !v.moves.length;
  const s = v.snapshot;
  $("scores").innerHTML = tr("scores: ") + s.scores.map((x, p) => `<span class="tag" style="border-left:4px solid ${COLORS[p % 5]}">${seatName(p)}: <b id="total-${p}">${x}</b></span>`).join("");
  const over = gameOver(v.game_over, true) + (v.over ? `<div class="row"><a id="replay-link" href="${keepLang(`/replay/${GAME}`)}">${t("replay the game")}</a></div>` : "");
  $("game-over").innerHTML = over; $("game-over").hidden = !over;
  const supply = trHtml(BOARD.supply(s)), drawnBefore = moved && before ? [$("supply").cloneNode(true), boardsNow()] : null;
  $("supply").innerHTML = supply; $("supply").hidden = !supply;
  $("mine").innerHTML = "";  // (a phone's place for the page's own boards: placeBoards)
  $("boards").innerHTML = trHtml(BOARD.boards(s));
  // what just happened: the parts of the drawing the step changed, marked for a moment (the
  // bots' moves come one update each, so each is shown in turn; below, once the drawing is
  // whole), and the step's line of the log with every seat's change of score since this
  // page's last view
  const gains = before && moved ? s.scores.map((x, p) => [p, x - before.snapshot.scores[p]]).filter(([, d]) => d) : [];
  $("last-move").innerHTML = v.log.length ? esc(v.log[v.log.length - 1].replace(/^\d+\. /, "")) +
    (gains.length ? ` <span class="gains">(${tr("score")}: ${gains.map(([p, d]) => `${seatName(p)} ${d > 0 ? "+" : ""}${d}`).join(", ")})</span>` : "") : "";
  // the seats this browser holds: their boards first and marked, not found by scrolling
  const drawn = [...document.querySelectorAll("#boards > .board")];
  drawn.forEach((b, i) => { b.dataset.seat = i; });
  for (const i of v.you) if (drawn[i]) {
    drawn[i].classList.add("yours"); drawn[i].dataset.you = "1";
    drawn[i].querySelector("h3")?.insertAdjacentHTML("beforeend", ` <span class="you-badge">${esc(t("you"))}</span>`);
  }
  if (drawnBefore) { markChanged(drawnBefore[0], $("supply")); markChanged(drawnBefore[1], $("boards")); }
  placeBoards();
  markTargets(v.moves);
  const log = $("log"), atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.innerHTML = logHtml(v);
  if (atEnd) log.scrollTop = log.scrollHeight;
}
// a phone's layout (the CSS's max-width:700px)
const PHONE = matchMedia("(max-width:700px)");
const UNFOLDED = new Set();  // the other seats a person unfolded on a phone
function boardsNow() {
  // the boards as drawn, in seat order, wherever they are placed (a copy)
  const all = document.createElement("div");
  [...document.querySelectorAll("#mine > .board, #boards > .board")].sort((a, b) => a.dataset.seat - b.dataset.seat)
    .forEach(b => all.appendChild(b.cloneNode(true)));
  return all;
}
function placeBoards() {
  // a phone: the page's own boards under the moves, the others folded unless unfolded
  const mine = $("mine"), phone = PHONE.matches;
  for (const b of [...mine.children]) $("boards").insertBefore(b, $("boards").children[+b.dataset.seat] || null);
  for (const b of document.querySelectorAll("#boards > .board")) {
    if (phone && b.classList.contains("yours")) mine.appendChild(b);
    else b.classList.toggle("folded", phone && !UNFOLDED.has(+b.dataset.seat));
  }
}
PHONE.addEventListener("change", placeBoards);
$("boards").addEventListener("click", e => {
  const h = e.target.closest("#boards > .board > h3");
  if (!h || !PHONE.matches) return;
  const b = h.parentElement, seat = +b.dataset.seat;
  if (UNFOLDED.has(seat)) UNFOLDED.delete(seat); else UNFOLDED.add(seat);
  b.classList.toggle("folded", !UNFOLDED.has(seat));
});
// a sound on your turn: off until the person asks for it (kept in this browser)
$("sound").checked = localStorage.getItem("caribsim-sound") === "on";
$("sound").onchange = () => localStorage.setItem("caribsim-sound", $("sound").checked ? "on" : "off");
let AUDIO = null;
function yourTurn(st) {
  st.classList.remove("your-turn");
  void st.offsetWidth;  // the animation starts again
  st.classList.add("your-turn");
  st.dataset.turns = +(st.dataset.turns || 0) + 1;
  if (!$("sound").checked) return;
  try {
    AUDIO = AUDIO || new (window.AudioContext || window.webkitAudioContext)();
    const tone = AUDIO.createOscillator(), gain = AUDIO.createGain();
    tone.frequency.value = 660; gain.gain.value = 0.08;
    tone.connect(gain); gain.connect(AUDIO.destination);
    tone.start(); tone.stop(AUDIO.currentTime + 0.15);
  } catch (e) { /* no sound on this browser: the flash says it */ }
}
function logHtml(v) {
  // the moves by round, then phase; each move numbered by its step, the chance steps it
  // caused under it (one list item per step, in step order)
  const line = (k, chance) => `<li${chance ? ' class="chance"' : ` value="${k + 1}"`}>${esc(v.log[k].replace(/^\d+\. /, ""))}</li>`;
  return v.log_groups.map(g => `<section class="log-round"><h4>${esc(tr("round"))} ${g.round}</h4>` +
    g.phases.map(p => `<div class="log-phase"><div class="log-phase-name">${esc(tr(label(p.phase)))}</div><ol>` +
      p.moves.map(m => (m.move === null ? "" : line(m.move, false)) + m.chance.map(k => line(k, true)).join("")).join("") +
      "</ol></div>").join("") + "</section>").join("");
}
function markChanged(old, now) {
  // the smallest parts of the new drawing whose text differs from the old one's at the same
  // place: where both have the same children (by tag), the differing children are looked into
  if (old.textContent === now.textContent) return;
  const a = old.children, b = now.children;
  if (a.length && a.length === b.length && [...a].every((x, i) => x.tagName === b[i].tagName)) {
    let inner = false;
    for (let i = 0; i < b.length; i++)
      if (a[i].textContent !== b[i].textContent) { markChanged(a[i], b[i]); inner = true; }
    if (inner) return;
  }
  now.classList.add("changed");
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
// The moves on the board itself: an element of the drawing (data-key) that a legal move names
// (its "target") is outlined, its title the move's label. A click plays the move, as its button
// does; an element several moves share (the goods onto one ship) marks their buttons instead.
function markTargets(moves) {
  const byKey = {};
  for (const m of moves) if (m.target) (byKey[m.target] = byKey[m.target] || []).push(m);
  for (const el of document.querySelectorAll("#supply [data-key], #boards [data-key], #mine [data-key]")) {
    const ms = byKey[el.dataset.key];
    if (!ms) continue;
    el.classList.add("target");
    el.classList.toggle("shared", ms.length > 1);
    el.dataset.actions = ms.map(m => m.action).join(" ");
    el.title = ms.length > 1 ? t("choose one of: {moves}", {moves: ms.map(m => m.label).join("; ")}) : ms[0].label;
    el.tabIndex = 0;
    el.setAttribute("role", "button");
  }
}
function boardClick(e) {
  const el = e.target.closest(".target");
  if (!el || !view || !view.moves.length) return;
  const actions = el.dataset.actions.split(" ").map(Number);
  if (actions.length === 1) { act("move", {token: tokenOf(view.to_act), step: view.step, action: actions[0]}); return; }
  const buttons = [...document.querySelectorAll("#moves button.move")];
  buttons.forEach(b => b.classList.toggle("picked", actions.includes(+b.dataset.action)));
  const first = buttons.find(b => b.classList.contains("picked"));
  if (first) first.focus();
}
for (const id of ["supply", "boards", "mine"]) {
  $(id).addEventListener("click", boardClick);
  $(id).addEventListener("keydown", e => { if (e.key === "Enter" || e.key === " ") { if (e.target.closest(".target")) e.preventDefault(); boardClick(e); } });
}
function undo() {
  // the held seat whose previous decision is the latest (hot-seat: the last person to move)
  const [seat] = Object.entries(view.undo).filter(([, t]) => t !== null).sort((a, b) => b[1] - a[1])[0] || [];
  if (seat !== undefined) act("undo", {token: tokenOf(+seat), step: view.step});
}
// an undo of a finished game reopens it: asked first, one click must not undo a result
$("undo").onclick = () => { if (view.over) { $("undo-confirm").hidden = false; $("undo-no").focus(); } else undo(); };
$("undo-yes").onclick = () => { $("undo-confirm").hidden = true; undo(); };
$("undo-no").onclick = () => { $("undo-confirm").hidden = true; };
$("hint").onclick = async () => {
  const panel = $("hint-panel"), step = view.step;
  // a panel over the page's corner: opening it moves nothing of the board
  const close = `<button id="hint-close" aria-label="${esc(t("close"))}">&times;</button>`;
  panel.hidden = false; panel.innerHTML = close + esc(t("searching..."));
  try {
    const h = await api(`/api/games/${GAME}/hint`, {token: tokenOf(view.to_act), step});
    if (view.step !== step) return;
    panel.innerHTML = close + t("hint ({n} iterations; win estimate of the best move {win}%):", {n: h.iterations, win: (100 * h.win).toFixed(0)}) + `
      <table><tr><th></th><th>${esc(t("move"))}</th><th>${esc(t("visits"))}</th><th>${esc(t("win"))}</th>
      <th title="${esc(t("your score minus the best other seat's, at the end of random games after this move"))}">${esc(t("points against the best other seat"))}</th></tr>
      ${h.moves.map((m, i) => `<tr class="hint-move" data-action="${m.action}" data-share="${m.share}" data-win="${m.win}" data-margin="${m.margin}">
      <td>${i + 1}.</td><td class="hint-label">${esc(m.label)}</td><td class="num">${(100 * m.share).toFixed(0)}%</td><td class="num">${(100 * m.win).toFixed(0)}%</td>
      <td class="num">${(m.margin > 0 ? "+" : "") + m.margin.toFixed(1)}</td></tr>`).join("")}</table>`;
  } catch (e) { panel.hidden = true; showError(e.message); }
};
$("hint-panel").addEventListener("click", e => { if (e.target.id === "hint-close") $("hint-panel").hidden = true; });
async function refresh() {
  try { render(await api(`/api/games/${GAME}?${QUERY}`)); }
  catch (e) { showError(e.message); }
}
function listen(wait) {
  // live updates: every change of the game comes as its new view; a lost socket reconnects
  const ws = new WebSocket(withLang(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/games/${GAME}/ws?${QUERY}`));
  let refused = false;
  ws.onopen = () => { wait = 500; };
  ws.onmessage = e => {
    const v = JSON.parse(e.data);
    if (v.error) { refused = true; showError(v.error); } else render(v);
  };
  ws.onclose = () => { if (!refused) setTimeout(() => listen(Math.min(2 * wait, 8000)), wait); };
}
$("lobby-link").href = keepLang("/");
translatePage();
refresh();
listen(500);
__ANALYSIS_JS__
</script></body></html>
"""
)

# Added to the replay viewer's page by replay(): it reads the viewer's DATA, S (the snapshots)
# and cur (the step shown), and follows the viewer's show() to keep the step and seats current.
_PLAY_FROM_HERE = r"""
<style>
#play-from-here{border:1px solid #2a7;border-radius:6px;background:#fff;margin:.6em 0;padding:.3em .6em}
#play-from-here .seat{display:inline-block;margin:.2em 1.2em .2em 0}#play-from-here .seat input{width:10em}
#error{color:#b00;font-weight:bold}
</style>
<fieldset id="play-from-here"><legend data-t>play from here</legend>
<div id="pfh-where"></div>
<div id="pfh-seats"></div>
<button id="pfh-play" data-t>play from here</button> <a id="pfh-lobby" href="/" data-t>lobby</a>
<div id="error" role="alert" hidden></div>
</fieldset>
<script>
__COMMON_JS__
const PFH_GAME = __GAME_ID__, PFH_BOT = __DEFAULT_BOT__;
let pfhTouched = false;          // the person changed a seat: the defaults stay off it
const pfhSeats = () => S[0].scores.length;
function pfhMover(i) {
  // the seat that decided first from step i on in the record (the new game draws its chance
  // steps afresh, from the server's entropy)
  for (let k = i; k < S.length; k++) if (S[k].to_act >= 0) return S[k].to_act;
  return -1;
}
function pfhRows() {
  const mover = pfhMover(cur);
  $("pfh-seats").innerHTML = Array.from({length: pfhSeats()}, (_, i) => {
    const human = i === mover;
    return `<div class="seat">${t("seat {i}", {i})} <select id="pfh-kind-${i}"><option value="human"${human ? " selected" : ""}>${t("human")}</option>
      <option value="bot"${human ? "" : " selected"}>${t("bot")}</option></select>
      <input id="pfh-bot-${i}" value="${esc(PFH_BOT)}"${human ? " disabled" : ""} aria-label="${esc(t("bot spec of seat {i}", {i}))}" title="random, greedy, mcts:N, puct:N ..."></div>`;
  }).join("");
  document.querySelectorAll("#pfh-seats select").forEach((s, i) => {
    s.onchange = () => { $(`pfh-bot-${i}`).disabled = s.value === "human"; pfhTouched = true; };
  });
  document.querySelectorAll("#pfh-seats input").forEach(b => { b.oninput = () => { pfhTouched = true; }; });
}
function pfhStep() {
  const over = S[cur].to_act < -1, mover = pfhMover(cur);
  $("pfh-where").innerHTML = over ? esc(t("the game is over at this step: go back to a step to play on from it"))
    : t("a new game from step {step} of this one (this one stays as it is)", {step: `<b id="pfh-step">${cur}</b>`}) + "; " +
      esc(S[cur].to_act >= 0 ? t("seat {seat} to act", {seat: mover}) : t("chance first, then seat {seat}", {seat: mover}));
  $("pfh-play").disabled = over;
  if (!pfhTouched) pfhRows();
}
async function playFromHere() {
  showError("");
  const step = cur, seats = Array.from({length: pfhSeats()}, (_, i) =>
    $(`pfh-kind-${i}`).value === "human" ? "human" : $(`pfh-bot-${i}`).value.trim());
  try {
    const record = await api(`/api/games/${PFH_GAME}/record`);
    const made = await api("/api/games", {record, step, seats}), all = JSON.parse(localStorage.getItem("caribsim-links") || "{}");
    all[made.id] = made;             // the lobby offers "resume" for the new game's seats
    localStorage.setItem("caribsim-links", JSON.stringify(all));
    location.href = keepLang(made.hotseat || (made.links.length ? made.links[0].url : made.watch));
  } catch (e) { showError(e.message); }
}
$("controls").after($("play-from-here"));       // under the viewer's step controls
const pfhShow = show;
show = i => { pfhShow(i); pfhStep(); };
$("pfh-play").onclick = playFromHere;
$("pfh-lobby").href = keepLang("/");
translatePage();
// the viewer's keys (arrows, Home, End) move its step: not while typing a bot spec here
$("play-from-here").addEventListener("keydown", e => e.stopPropagation());
pfhStep();
</script>
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
.swings{border-collapse:collapse;margin-top:.6em}
.swings caption{text-align:left;font-weight:bold;padding-bottom:.2em}
.swings td,.swings th{padding:.1em .5em;border-bottom:1px solid #ddd;text-align:right}
.swings td:nth-child(2),.swings td:nth-child(3),.swings th:nth-child(2),.swings th:nth-child(3){text-align:left}
</style>
<div id="analysis" data-status="" hidden><h2 data-t>analysis</h2>
<div id="analysis-status"></div>
<svg id="analysis-chart" viewBox="0 0 760 250" role="img" aria-label="each seat's win estimate over the game" data-t></svg>
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
    say.textContent = t("searching every decision of the game: {done} of {total} done...", {done: a.done, total: a.total});
    setTimeout(analysisAsk, 500);
    return;
  }
  if (a.status !== "done") { say.textContent = a.error; return; }
  say.textContent = t("each seat's win estimate at every decision, from a search of {n} simulations " +
    "(made after the game: it sees what was hidden then); the last point is the result.", {n: a.iterations});
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
  out += `<text x="${(L + R) / 2}" y="${H - 4}" text-anchor="middle">${esc(t("step"))}</text>`;
  out += `<text transform="translate(12 ${(T + B) / 2}) rotate(-90)" text-anchor="middle">${esc(t("win estimate"))}</text>`;
  for (let p = 0; p < seats; p++) {
    const pts = points.map(([k, win]) => `${x(k).toFixed(1)},${y(win[p]).toFixed(1)}`).join(" ");
    out += `<polyline class="seat-line" data-seat="${p}" fill="none" stroke="${COLORS[p % 5]}" stroke-width="1.5" points="${pts}"/>`;
  }
  for (const s of a.swings)
    out += `<circle class="swing-mark" cx="${x(s.step).toFixed(1)}" cy="${y(s.before).toFixed(1)}" r="4" fill="none" stroke="${COLORS[s.seat % 5]}" stroke-width="2"><title>${esc(t("move {n}, {seat}: {label} ({before} to {after})", {n: s.step + 1, seat: seatName(s.seat), label: s.label, before: pct(s.before), after: pct(s.after)}))}</title></circle>`;
  svg.innerHTML = out;
  Object.assign(svg.dataset, {left: L, right: R, top: T, bottom: B, last});
  $("analysis-legend").innerHTML = Array.from({length: seats}, (_, p) =>
    `<span class="tag" style="border-left:4px solid ${COLORS[p % 5]}">${seatName(p)}: ${pct(a.final.returns[p])}</span>`).join("");
}
function swingTable(id, caption, list) {
  const rows = list.map(s => `<tr class="swing" data-step="${s.step}" data-seat="${s.seat}">
    <td><a href="${keepLang(`/replay/${GAME}`)}#step=${s.step + 1}" title="${esc(t("the board after this move, in the replay"))}">${s.step + 1}</a></td>
    <td>${seatName(s.seat)}</td><td>${esc(s.label)}</td><td>${pct(s.before)}</td><td>${pct(s.after)}</td><td>${pct(s.delta, true)}</td></tr>`).join("");
  return `<table id="${id}" class="swings"><caption>${esc(t(caption))}</caption><tr>${["move", "seat", "played", "before", "after", "change"]
    .map(h => `<th>${esc(t(h))}</th>`).join("")}</tr>${rows}</table>`;
}
function analysisSwings(a) {
  // the moves after which their mover's estimate changed most (to his next point): a player's
  // own first (the seats this page holds, largest change first), then the whole game's
  const mine = (view ? view.you : []).flatMap(p => a.seat_swings[p])
    .sort((u, w) => Math.abs(w.delta) - Math.abs(u.delta) || u.step - w.step).slice(0, a.swings.length);
  $("analysis-swings").innerHTML = (mine.length ? swingTable("own-swings", "your biggest swings", mine) : "") +
    swingTable("swings", "the biggest swings of the game", a.swings);
}
"""

_GAME = _GAME.replace("__ANALYSIS__\n", _ANALYSIS).replace("__ANALYSIS_JS__\n", _ANALYSIS_JS)

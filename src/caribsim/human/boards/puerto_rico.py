"""Puerto Rico drawn for the page: each player's island, city, goods and chips; the roles,
ships, trading house and supply."""
from __future__ import annotations

_DROP = ("history", "rng", "turn", "options", "game", "version", "player")


def snapshot(state) -> dict:
    """What the page draws at one step: the state's dict without its bookkeeping."""
    return {k: v for k, v in state.to_dict().items() if k not in _DROP}


CSS = """.corn{background:#f5e27a}.indigo{background:#6a7fd8;color:#fff}.sugar{background:#f4f4f4;border:1px solid #ccc}
.tobacco{background:#c89a64}.coffee{background:#6b4a32;color:#fff}.quarry{background:#999;color:#fff}
"""

JS = r"""
function prBoards(s) {
  const parts = [];
  s.boards.forEach((b, i) => {
    const isl = Object.entries(b.island).filter(([k, t]) => t.tiles)
      .map(([k, t]) => `<span class="tag ${k}">${label(k)} ${t.colonists !== undefined ? t.colonists + "/" : ""}${t.tiles}</span>`).join("");
    const city = Object.entries(b.buildings).map(([k, c]) => `<span class="tag">${label(k)} (${c})</span>`).join("");
    parts.push(`<div class="board${i === s.to_act ? " active" : ""}" id="board-${i}">
      <h3>Seat ${i}${i === s.governor ? " (Governor)" : ""}${DATA.players ? " - " + esc(DATA.players[i]) : ""}</h3>
      <div class="row">score <b id="score-${i}">${s.scores[i]}</b> | VP chips <span id="vp-${i}">${b.vp_chips}</span> |
        doubloons <span id="doubloons-${i}">${b.doubloons}</span> | San Juan ${b.san_juan}</div>
      <div class="row">goods: ${tags(b.goods)}</div>
      <div class="row">island: ${isl || '<span class="empty">empty</span>'}</div>
      <div class="row">city: ${city || '<span class="empty">empty</span>'}</div></div>`);
  });
  return parts.join("");
}
function prSupply(s) {
  const roles = Object.entries(s.roles).map(([k, r]) =>
    `<span class="tag${r.taken_by !== null ? " empty" : ""}">${label(k)} ${r.doubloons}$${r.taken_by !== null ? " (seat " + r.taken_by + ")" : ""}</span>`).join("");
  const ships = s.cargo_ships.map(c => `<span class="tag ${c.good || ""}">ship ${c.capacity}: ${c.good ? c.load + " " + c.good : "empty"}</span>`).join("");
  return `<div class="row">phase <b>${label(s.phase)}</b>, step ${label(s.step)}${s.end_triggered ? " - <b>the game ends after this round</b>" : ""}</div>
    <div class="row">roles: ${roles}</div>
    <div class="row">face-up plantations: ${tags(s.plantations.face_up)} | quarries ${s.quarries}</div>
    <div class="row">colonist ship ${s.colonists.ship}, supply ${s.colonists.supply} | VP chips left ${s.vp_chips}</div>
    <div class="row">cargo ships: ${ships}</div>
    <div class="row">trading house: ${tags(s.trading_house)}</div>
    <div class="row">goods supply: ${tags(s.goods)}</div>`;
}
const BOARD = {supply: prSupply, boards: prBoards};
"""


# ---------------------------------------------------------------------------------------------
# The terminal (caribsim play): what a person reads at the prompt.

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
import csv
import functools
from importlib.resources import files

LEGEND = ("G Governor, > to act | role N$: doubloons on the card, (seat k): taken this round | "
          "island a/b: colonists/tiles | city a/b: colonists/circles | ship [c: n good]: capacity c, "
          "n goods loaded | total: score now")


@functools.cache
def buildings() -> dict:
    """Every building's row of puerto_rico_buildings.csv by id (cost, vp, circles, column as ints)."""
    text = files("caribsim").joinpath("data", "puerto_rico_buildings.csv").read_text(encoding="utf-8")
    out = {}
    for row in csv.DictReader(text.splitlines()):
        for k in ("cost", "vp", "circles", "column", "city_spaces"):
            row[k] = int(row[k])
        out[row["id"]] = row
    return out


def build_price(d: dict, seat: int, building: str) -> tuple:
    """(price, reasons) of ``building`` for ``seat`` in the state dict ``d`` (rules §4.3):
    cost minus the Builder's privilege (2 with an occupied Library), the occupied quarries
    up to the building's column and, with a Forest house, a doubloon per 2 forests; never
    below 0. ``reasons`` names each discount, e.g. ["-1 Builder", "-2 quarries"]."""
    b, board = buildings()[building], d["boards"][seat]
    owned = board["buildings"]
    discounts = []
    if d["roles"]["builder"]["taken_by"] == seat:
        discounts.append((2 if owned.get("library", 0) else 1, "Builder"))
    discounts.append((min(board["island"]["quarry"]["colonists"], b["column"]), "quarries"))
    if "forest_house" in owned:
        discounts.append((board["island"]["forest"]["tiles"] // 2, "forests"))
    price = max(0, b["cost"] - sum(n for n, _ in discounts))
    return price, [f"-{n} {why}" for n, why in discounts if n]


def text_board(state) -> str:
    """The engine's board, the colonists still to place in the Mayor phase, and the legend."""
    d = state.to_dict()
    lines = [str(state)]
    if d["step"] == "mayor":
        lines.append(f"Mayor: seat {d['player']} still places {d['turn']['to_place']} colonist(s); "
                     f"free circles: {_free_circles(d['boards'][d['player']])}")
    return "\n".join(lines + ["Legend: " + LEGEND])


def _free_circles(board) -> int:
    island = sum(t["tiles"] - t["colonists"] for t in board["island"].values() if "colonists" in t)
    city = sum(buildings()[b]["circles"] - n for b, n in board["buildings"].items())
    return island + city


def choice_label(state, action, seat=None) -> str:
    """The move as the engine names it; a build adds its price after discounts, its VP and
    the copies left, a role the doubloons on its card (``seat``, who reads it, changes
    nothing: every move is public)."""
    name = state.action_to_string(action)
    d = state.to_dict()
    role = d["roles"].get(name[5:].replace(" ", "_")) if name.startswith("role ") else None
    if role and role["doubloons"]:
        return f"{name}: +{role['doubloons']} doubloon{'' if role['doubloons'] == 1 else 's'} on the card"
    building = name[6:].replace(" ", "_") if name.startswith("build ") else None
    if building not in buildings():
        return name
    seat = state.current_player()
    price, reasons = build_price(d, seat, building)
    cost = buildings()[building]["cost"]
    why = f" (cost {cost} {' '.join(reasons)})" if reasons else ""
    short = d["boards"][seat]["doubloons"] < price
    return (f"{name}: {price} doubloon{'' if price == 1 else 's'}{why}{' (more than in hand: Black market)' if short else ''}, "
            f"{buildings()[building]['vp']} VP, {d['buildings'][building]} left")


def events(before, after) -> list[str]:
    """The chance outcomes from ``before`` to ``after``: plantations turned up or drawn."""
    state, lines = before.clone(), []
    for action in after.history()[len(before.history()):]:
        if state.is_chance_node():
            lines.append(f"  plantation {state.action_to_string(action)}")
        state.apply_action(action)
    return lines

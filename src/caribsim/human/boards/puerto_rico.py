"""Puerto Rico drawn for the page: each player's island and city (every building's circles,
filled or empty, and its VP), goods, chips and, in the Mayor phase, the colonists still to
place; the roles, ships, trading house and the building supply (name, cost, VP, circles and
copies left of every building in play, the expansion's too)."""

from __future__ import annotations

import csv
import io
import json
from importlib.resources import files

from caribsim.human.boards import end_triggered

_DROP = ("history", "rng", "turn", "options", "game", "version", "player")
_VIOLET = ("small_violet", "large_violet")


def _building_table() -> dict:
    """Building id -> what the page draws of it, from data/puerto_rico_buildings.csv (row order:
    the 23 base buildings, then the expansion's)."""
    text = (files("caribsim") / "data" / "puerto_rico_buildings.csv").read_text(encoding="utf-8")
    return {
        r["id"]: {
            "name": r["name"],
            "set": r["set"],
            "kind": r["kind"],
            "produces": r["produces"],
            "cost": int(r["cost"]),
            "vp": int(r["vp"]),
            "circles": int(r["circles"]),
            "column": int(r["column"]),
            "large": r["city_spaces"] == "2",
            "effect": r["effect"],  # its rule text, shown on hover
        }
        for r in csv.DictReader(io.StringIO(text))
    }


BUILDINGS = _building_table()


def in_play(d: dict) -> list:
    """The buildings of the game's supply board, in table order: the base game's 23, or with
    the expansion the production buildings and the violet kinds in play (drafted so far)."""
    if "expansion" not in d:
        return [b for b, row in BUILDINGS.items() if row["set"] == "base"]
    violet = set(d["expansion"]["violet_in_play"])
    return [b for b, row in BUILDINGS.items() if row["kind"] not in _VIOLET or b in violet]


def snapshot(state) -> dict:
    """What the page draws at one step: the state's dict without its bookkeeping, the
    buildings in play and the colonists in the acting seat's hand (Mayor)."""
    d = state.to_dict()
    snap = {k: v for k, v in d.items() if k not in _DROP}
    snap["in_play"] = in_play(d)
    snap["to_place"] = d["turn"]["to_place"]  # 0 except at the mayor step
    return snap


CSS = """.corn{background:#f5e27a}.indigo{background:#6a7fd8;color:#fff}.sugar{background:#f4f4f4;border:1px solid #ccc}
.tobacco{background:#c89a64}.coffee{background:#6b4a32;color:#fff}.quarry{background:#999;color:#fff}.forest{background:#3a7a3a;color:#fff}
.bcols{display:flex;flex-wrap:wrap;gap:.4em;margin-top:.3em}
.bcol{display:flex;flex-direction:column;gap:.2em;flex:1 1 12em}
.bcol h4{margin:0;font-size:.8em;color:#555;font-weight:normal}
.city{display:flex;flex-wrap:wrap;gap:.25em}
.city .bld{flex:0 0 10em}.city .bld.large{flex-basis:14em}
.bld{border:1px solid #aaa;border-left:6px solid #84c;border-radius:4px;padding:.1em .35em;font-size:.85em;background:#f7f3fb;color:#222}
.bld.corn,.bld.indigo,.bld.sugar,.bld.tobacco,.bld.coffee{background:#fff;color:#222;border:1px solid #aaa;border-left-width:6px}
.bld.corn{border-left-color:#e6c93a}.bld.indigo{border-left-color:#6a7fd8}.bld.sugar{border-left-color:#bbb}
.bld.tobacco{border-left-color:#c89a64}.bld.coffee{border-left-color:#6b4a32}
.bld.large{background:#efe6f7}.bld .bn{font-weight:600}.bld .bm{color:#444;white-space:nowrap}
.dot{display:inline-block;width:.7em;height:.7em;border-radius:50%;border:1px solid #444;margin:0 1px;vertical-align:-1px;background:#fff}
.dot.on{background:#7a3b12;border-color:#7a3b12}
.tile .dot{box-shadow:0 0 0 1px #fff}
.tile{display:inline-flex;align-items:center;justify-content:center;width:1.4em;height:1.4em;border-radius:3px;margin:1px}
.mayor{background:#fff4d6;border-radius:3px;padding:0 .3em}
"""

JS = r"""
const PR_B = __BUILDINGS__;
const dots = (on, n) => '<i class="dot on"></i>'.repeat(on) + '<i class="dot"></i>'.repeat(Math.max(0, n - on));
const bldClass = b => "bld " + (PR_B[b].produces || "violet") + (PR_B[b].large ? " large" : "");
function prIsland(b, i) {
  // one square per tile, its circle filled when a colonist works it (forests have none)
  return Object.entries(b.island).filter(([k, t]) => t.tiles).map(([k, t]) => {
    const on = t.colonists || 0, tiles = Array.from({length: t.tiles}, (_, j) =>
      `<span class="tile ${k}" title="${label(k)}">${t.colonists === undefined ? "" : dots(j < on ? 1 : 0, 1)}</span>`).join("");
    return `<span id="pr-island-${i}-${k}" data-key="island-${i}-${k}" data-tiles="${t.tiles}" data-colonists="${on}">${tiles}</span>`;
  }).join(" ");
}
function prCity(b, i) {
  return Object.entries(b.buildings).map(([k, c]) => { const r = PR_B[k];
    return `<div class="${bldClass(k)}" id="pr-building-${i}-${k}" data-key="building-${i}-${k}" data-colonists="${c}" data-circles="${r.circles}" data-vp="${r.vp}">
      <span class="bn" title="${esc(r.effect)}">${esc(r.name)}</span> <span class="bm">${dots(c, r.circles)} ${r.vp} VP</span></div>`; }).join("");
}
function prMayor(s, i) {
  // the Mayor places seat by seat from the role chooser; the acting seat holds his colonists
  if (s.phase !== "mayor") return "";
  const n = s.boards.length, k = (i - s.role_chooser + n) % n, sj = s.boards[i].san_juan;
  const status = k < s.turns_done ? "placed" : (i === s.to_act && s.step === "mayor" ? "placing" : "waiting");
  const toPlace = status === "placing" ? s.to_place : 0;
  const text = {placing: `<b>${toPlace}</b> colonists to place`, waiting: `waits to place (San Juan ${sj})`, placed: "placed"}[status];
  return `<div class="row"><span class="mayor" id="pr-toplace-${i}" data-status="${status}" data-to-place="${toPlace}" data-san-juan="${sj}">Mayor: ${text}</span></div>`;
}
function prBoards(s) {
  return s.boards.map((b, i) => {
    const spaces = Object.keys(b.buildings).reduce((t, k) => t + (PR_B[k].large ? 2 : 1), 0);
    return `<div class="board${i === s.to_act ? " active" : ""}" id="board-${i}">
      <h3>Seat ${i}${i === s.governor ? " (Governor)" : ""}${DATA.players ? " - " + esc(DATA.players[i]) : ""}</h3>
      <div class="row">score <b id="score-${i}">${s.scores[i]}</b> | VP chips <span id="vp-${i}">${b.vp_chips}</span> |
        doubloons <span id="doubloons-${i}">${b.doubloons}</span> | San Juan <span id="sanjuan-${i}">${b.san_juan}</span></div>
      ${prMayor(s, i)}
      <div class="row">goods: ${tags(b.goods, "", k => `good-${i}-${k}`)}</div>
      <div class="row">island: ${prIsland(b, i) || '<span class="empty">empty</span>'}</div>
      <div class="row">city (${spaces}/12 spaces):</div>
      <div class="city">${prCity(b, i) || '<span class="empty">empty</span>'}</div></div>`;
  }).join("");
}
function prBuildingSupply(s) {
  // the supply board's columns: column k takes at most k quarries off the cost
  const cols = {};
  s.in_play.forEach(b => { const r = PR_B[b], left = s.buildings[b];
    (cols[r.column] = cols[r.column] || []).push(`<div class="${bldClass(b)}${left ? "" : " empty"}" id="pr-supply-${b}" data-key="supply-${b}" data-left="${left}" data-cost="${r.cost}" data-vp="${r.vp}" data-circles="${r.circles}">
      <span class="bn" title="${esc(r.effect)}">${esc(r.name)}</span> <span class="bm">cost ${r.cost} | ${r.vp} VP | ${dots(0, r.circles)} | ${left} left</span></div>`); });
  return `<div class="bcols">${Object.keys(cols).map(c =>
    `<div class="bcol"><h4>up to ${c} quarr${c > 1 ? "ies" : "y"} off</h4>${cols[c].join("")}</div>`).join("")}</div>`;
}
function prSupply(s) {
  const roles = Object.entries(s.roles).map(([k, r]) =>
    `<span class="tag${r.taken_by !== null ? " empty" : ""}" data-key="role-${k}">${label(k)} ${r.doubloons}$${r.taken_by !== null ? " (seat " + r.taken_by + ")" : ""}</span>`).join("");
  const ships = s.cargo_ships.map(c => `<span class="tag ${c.good || ""}" data-key="ship-${c.capacity}">ship ${c.capacity}: ${c.good ? c.load + " " + c.good : "empty"}</span>`).join("");
  return `<div class="row">phase <b>${label(s.phase)}</b>, step ${label(s.step)}${s.end_triggered && s.phase !== "end" ? " - <b>the game ends after this round</b>" : ""}</div>
    <div class="row">roles: ${roles}</div>
    <div class="row">face-up plantations: ${tags(s.plantations.face_up, "", k => "plantation-" + k)} | <span data-key="quarry">quarries ${s.quarries}</span>${s.expansion ? " | forests " + s.expansion.forests : ""}</div>
    <div class="row">colonist ship ${s.colonists.ship}, supply ${s.colonists.supply} | VP chips left ${s.vp_chips}</div>
    <div class="row">cargo ships: ${ships}</div>
    <div class="row"><span data-key="trading-house">trading house: ${tags(s.trading_house)}</span></div>
    <div class="row">goods supply: ${tags(s.goods, "", k => "goods-" + k)}</div>
    <div class="row">buildings:</div>${prBuildingSupply(s)}`;
}
const BOARD = {supply: prSupply, boards: prBoards};
""".replace("__BUILDINGS__", json.dumps(BUILDINGS, separators=(",", ":")).replace("<", "\\u003c"))


def move_text(before, name: str) -> str:
    """A step as the page names it: the move's own name (every move is public)."""
    return name


_OWN = {
    "hacienda draw": "hacienda",
    "hospice colonist": "hospice",
    "university colonist": "university",
}


def move_targets(state) -> dict:
    """The legal moves of the seat to act that the page's board draws an element for:
    ``{action: key}``, the key being the element's ``data-key`` (docs/web.md): a role card,
    a building of the supply, a face-up plantation or the quarries (settler), a cargo ship
    (every good loaded onto it shares the ship), the trading house (every good sold shares
    it), a tile kind or a building of the mover's board (Mayor; Hacienda, Hospice, University,
    the Wharf), a good of the mover (keep, warehouse) or of the supply (the Craftsman's
    privilege)."""
    if state.is_terminal() or state.is_chance_node():
        return {}
    d, seat = state.to_dict(), state.current_player()
    out = {}
    for action in state.legal_actions():
        key = _target(state.action_to_string(action), d, seat)
        if key:
            out[action] = key
    return out


def _target(name: str, d: dict, seat: int):
    word, _, rest = name.partition(" ")
    under = rest.replace(" ", "_")
    if word == "role" and under in d["roles"]:
        return f"role-{under}"
    if word == "build" and under in BUILDINGS:
        return f"supply-{under}"
    if word == "settle":
        return "quarry" if rest == "quarry" else f"plantation-{rest}"
    if name in _OWN:
        return f"building-{seat}-{_OWN[name]}"
    if name.startswith("colonist to "):
        what = name[len("colonist to ") :]
        if what == "quarry" or what.endswith(" plantation"):
            return f"island-{seat}-{what.removesuffix(' plantation')}"
        if what.replace(" ", "_") in BUILDINGS:
            return f"building-{seat}-{what.replace(' ', '_')}"
    if word == "ship" and " on " in rest:
        return f"ship-{rest.split(' on ')[1]}"
    if word == "wharf":
        return f"building-{seat}-wharf"
    if word == "sell":
        return "trading-house"
    if word in ("keep", "warehouse"):
        return f"good-{seat}-{rest}"
    if word == "privilege":
        return f"goods-{rest}"
    return None


# ---------------------------------------------------------------------------------------------
# The terminal (caribsim play): what a person reads at the prompt.
LEGEND = (
    "G Governor, > to act | role N$: doubloons on the card, (seat k): taken this round | "
    "island a/b: colonists/tiles | city a/b: colonists/circles | ship [c: n good]: capacity c, "
    "n goods loaded | total: score now"
)


def build_price(d: dict, seat: int, building: str) -> tuple:
    """(price, reasons) of ``building`` for ``seat`` in the state dict ``d`` (rules §4.3):
    cost minus the Builder's privilege (2 with an occupied Library), the occupied quarries
    up to the building's column and, with a Forest house, a doubloon per 2 forests; never
    below 0. ``reasons`` names each discount, e.g. ["-1 Builder", "-2 quarries"]."""
    b, board = BUILDINGS[building], d["boards"][seat]
    owned = board["buildings"]
    discounts = []
    if d["roles"]["builder"]["taken_by"] == seat:
        discounts.append((2 if owned.get("library", 0) else 1, "Builder"))
    discounts.append((min(board["island"]["quarry"]["colonists"], b["column"]), "quarries"))
    if "forest_house" in owned:
        discounts.append((board["island"]["forest"]["tiles"] // 2, "forests"))
    price = max(0, b["cost"] - sum(n for n, _ in discounts))
    return price, [f"-{n} {why}" for n, why in discounts if n]


def text_board(state, tr=str) -> str:
    """The engine's board, the colonists still to place in the Mayor phase, and the legend, in
    the words of ``tr`` (a translation of a text)."""
    d = state.to_dict()
    lines = [str(state)]
    if d["step"] == "mayor":
        lines.append(
            f"Mayor: seat {d['player']} still places {d['turn']['to_place']} colonist(s); "
            f"free circles: {_free_circles(d['boards'][d['player']])}"
        )
    return tr("\n".join([*lines, "Legend: " + LEGEND]))


def _free_circles(board) -> int:
    island = sum(t["tiles"] - t["colonists"] for t in board["island"].values() if "colonists" in t)
    city = sum(BUILDINGS[b]["circles"] - n for b, n in board["buildings"].items())
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
    if not name.startswith("build "):
        return name
    building = name[6:].replace(" ", "_")
    if building not in BUILDINGS:
        return name
    seat = state.current_player()
    price, reasons = build_price(d, seat, building)
    cost = BUILDINGS[building]["cost"]
    why = f" (cost {cost} {' '.join(reasons)})" if reasons else ""
    short = d["boards"][seat]["doubloons"] < price
    return (
        f"{name}: {price} doubloon{'' if price == 1 else 's'}{why}{' (more than in hand: Black market)' if short else ''}, "
        f"{BUILDINGS[building]['vp']} VP, {d['buildings'][building]} left"
    )


def events(before, after) -> list[str]:
    """The chance outcomes from ``before`` to ``after``: plantations turned up or drawn."""
    state, lines = before.clone(), []
    for action in after.history()[len(before.history()) :]:
        if state.is_chance_node():
            lines.append(f"  plantation {state.action_to_string(action)}")
        state.apply_action(action)
    return lines


CITY_SPACES = 12  # §7.1: a city has 12 spaces (the engine's CITY_SPACES)
TIEBREAK = "doubloons + goods"  # §7.5: 1 good counts as 1 doubloon


def _city_full(board) -> bool:
    return sum(2 if BUILDINGS[b]["large"] else 1 for b in board["buildings"]) >= CITY_SPACES


def end_reason(states, tr) -> str:
    """Why the game ended (§7.1): what the step that triggered the end did (a city filled,
    the last VP chip taken, else the colonist supply short at the Mayor phase's end); the
    round was then played out (§7.2)."""
    before, after = (s.to_dict() for s in end_triggered(states))
    why = [
        tr.msg("the city of seat {i} was filled", i=seat)
        for seat, (old, new) in enumerate(zip(before["boards"], after["boards"]))
        if _city_full(new) and not _city_full(old)
    ]
    if after["vp_chips"] <= 0 < before["vp_chips"]:
        why.append(tr.msg("the last VP chip was taken"))
    if not why:
        why.append(tr.msg("the colonist supply could not refill the colonist ship"))
    return tr.msg("the game ended after the round in which {why}", why=", ".join(why))


def round_mark(d: dict):
    """What changes when a new round begins (§6: the Governor card passes on)."""
    return d["governor"]

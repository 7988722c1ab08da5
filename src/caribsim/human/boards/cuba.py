"""Cuba drawn for the page: each player's plantation (3 x 4 fields with buildings and the
pawn), pesos, VP, items and character cards; the market tracks, the harbour, the four law
stacks and the parliament, the round and the supply.

Names, costs, ship slots, prices and the plantation come from the game's own component data
(``game.component_data()``, which honours the ``data`` option); the texts the engine does not
keep (building effects, law parameters) are read from the same CSV files the game read."""

from __future__ import annotations

import csv
import functools
import io
import re
import weakref
from importlib.resources import files

from caribsim._common import _counted
from caribsim.cuba.game import (
    BUILDINGS,
    CARGO,
    CHARACTERS,
    CROPS,
    ITEMS,
    LAW_KINDS,
    MATERIALS,
    STACKS,
)

_WAREHOUSE = len(ITEMS)  # the plantation's field kind after the items is the warehouse
_TABLES: weakref.WeakKeyDictionary[object, dict] = (
    weakref.WeakKeyDictionary()
)  # game -> what every snapshot of it shares


@functools.lru_cache(maxsize=16)
def _csv_rows(origin: str, name: str) -> tuple:
    """The rows of one data file as dicts: the shipped file, or the user's file at ``origin``."""
    if origin == "bundled":
        text = (files("caribsim") / "data" / name).read_text(encoding="utf-8")
    else:
        with open(origin, encoding="utf-8") as f:
            text = f.read()
    return tuple(csv.DictReader(io.StringIO(text)))


# what a subsidy counts (cuba_laws.csv's count=), as a reader says one of it
_COUNTED = {
    "buildings": ("building", "buildings"),
    "free_crop_fields": ("free crop field", "free crop fields"),
    "free_material_fields": ("free material field", "free material fields"),
    "water": ("water", "water"),
    "pesos": ("peso", "pesos"),
    "character_votes": ("vote of the 4th card", "votes of the 4th card"),
}


def _params_text(kind: str, params: str) -> str:
    """A law as a reader says it (CU-9), its numbers from the data file's parameters:
    "tax: 2 pesos", "subsidy: 1 VP per 3 pesos, at most 7 VP"; a kind or a parameter this
    does not know is said as the data file writes it."""
    p = dict(x.split("=", 1) for x in params.split(";")) if params and params != "-" else {}
    name = kind.replace("_", " ")
    try:
        if kind == "tax":
            return f"tax: {_counted(int(p['pesos']), 'peso', 'pesos')}"
        if kind == "tax_per_building":
            return f"tax: {_counted(int(p['pesos_per_building']), 'peso', 'pesos')} per building"
        if kind == "levy":
            return "levy: " + ", ".join(f"{n} {k}" for k, n in p.items())
        if kind == "subsidy":
            unit, (one, many) = int(p["unit"]), _COUNTED[p["count"]]
            per = one if unit == 1 else f"{unit} {many}"
            cap = "" if p["cap"] == "none" else f", at most {int(p['cap'])} VP"
            return f"subsidy: {int(p['vp'])} VP per {per}{cap}"
        if kind in ("market_loses", "market_gains"):
            return f"{name}: {_counted(int(p['crops_each']), 'token', 'tokens')} of each crop"
        if kind == "drought":
            n = int(p["free_crop_fields"])
            return f"drought: the Worker harvests {_counted(n, 'crop field', 'crop fields')} free"
        if kind == "building_law":
            more = _counted(int(p["surcharge_pesos"]), "peso", "pesos")
            return f"building law: each building costs {more} more"
        if kind == "harbour_law" and not p:
            return "harbour law: a ship made full leaves at once"
        if kind == "corruption" and not p:
            return "corruption: no vote buying"
    except (KeyError, ValueError):
        pass
    if p:
        name += ": " + params.replace("=", " ").replace(";", ", ").replace("_", " ")
    return name


def _tables(game) -> dict:
    """The game's component data arranged for drawing (cached per game)."""
    if game in _TABLES:
        return _TABLES[game]
    data, status = game.component_data(), game.component_data_status()
    rows = {
        name: _csv_rows(status[name]["origin"], name)
        for name in ("cuba_buildings.csv", "cuba_laws.csv")
    }
    effects = {r["id"]: r["effect"] for r in rows["cuba_buildings.csv"]}
    law_text = {r["id"]: _params_text(r["kind"], r["params"]) for r in rows["cuba_laws.csv"]}
    setup = data["setup"]
    levy = ";".join(f"{ITEMS[k]}={n}" for k, n in enumerate(setup["initial_levy"]) if n)
    initial = {
        "I": _params_text("tax", f"pesos={setup['initial_tax']}"),
        "II": _params_text("levy", levy),
    }
    t = {
        "buildings": {
            bid: {
                "name": b["name"],
                "cost": b["cost"],
                "copies": b["copies"],
                "effect": effects[bid],
            }
            for bid, b in zip(BUILDINGS, data["buildings"])
        },
        "ships": {s["id"]: dict(zip(CARGO, s["slots"])) for s in data["ships"]},
        "laws": {
            law["id"]: {"stack": STACKS[law["stack"]], "text": law_text[law["id"]]}
            for law in data["laws"]
        },
        "initial": initial,
        "market": {k: m["prices"] for k, m in zip(CARGO, data["market"])},
        "plantation": [
            ["warehouse" if f == _WAREHOUSE else ITEMS[f], f"{i // 4 + 1},{i % 4 + 1}"]
            for i, f in enumerate(data["plantation"])
        ],
        "setup": setup,
        "characters": _character_rules(setup),
    }
    _TABLES[game] = t
    return t


def _character_rules(setup: dict) -> dict:
    """Each character card's rule text (data/rules_cuba_characters.csv, CU-6.2 to 6.7: not a
    cuba_*.csv, the names a Cuba data folder keeps for the game's own data files) with its
    numbers from the game's setup data: "Trader (2 votes): buys and sells ..."."""
    text = (files("caribsim") / "data" / "rules_cuba_characters.csv").read_text(encoding="utf-8")
    values = {k: " or ".join(map(str, v)) if isinstance(v, list) else v for k, v in setup.items()}
    out = {}
    for r, votes in zip(csv.DictReader(io.StringIO(text)), setup["character_votes"]):
        rule = f"{r['id'].capitalize()} ({_counted(votes, 'vote', 'votes')}): "
        rule += r["action"].format(**values)
        if r["alternative"]:
            rule += "; or he " + r["alternative"].format(**values)
        out[r["id"]] = f"{rule} ({r['source']})"
    if list(out) != list(CHARACTERS):
        raise ValueError(
            f"rules_cuba_characters.csv lists {list(out)}, the game's characters are {list(CHARACTERS)}"
        )
    return out


def _cost_text(cost) -> str:
    """A building's cost [wood, stone, water, pesos] as "2 wood 1 stone 2$"."""
    parts = [f"{n} {kind}" for n, kind in zip(cost, ("wood", "stone", "water")) if n]
    return " ".join(parts + ([f"{cost[3]}$"] if cost[3] else [])) or "free"


def _market(d, t) -> list:
    """Per cargo track: its prices, the tokens on it and today's buy and sell prices."""
    su = t["setup"]
    out = []
    for kind in CARGO:
        prices, c = t["market"][kind], d["market"][kind]
        to_supply = su[
            "market_sell_to_supply_price_crop"
            if kind in CROPS
            else "market_sell_to_supply_price_good"
        ]
        out.append(
            {
                "kind": kind,
                "prices": prices,
                "tokens": c,
                "buy": prices[c - 1] if c else su["market_buy_from_supply_price"],
                "sell": prices[c] if c < len(prices) else to_supply,
            }
        )
    return out


def _ship(ship_id, t, cargo=None):
    """A ship card: what it takes (slots per kind) and, in a dock, what is loaded."""
    if ship_id is None:
        return None
    slots = {k: n for k, n in t["ships"][ship_id].items() if n}
    return {
        "id": ship_id,
        "slots": slots,
        "cargo": None if cargo is None else {k: cargo[k] for k in slots},
    }


def _cargo(ship_id, t) -> str:
    """What a ship card takes, as a person reads it: "2 sugar, 1 citrus"."""
    return ", ".join(f"{n} {k}" for k, n in _ship(ship_id, t)["slots"].items())


def _law(law_id, stack, t):
    """A law card (or a stack's initial law) with its text, or None."""
    if law_id is None:
        return None
    if law_id == "initial":
        return {"id": "initial", "text": "initial " + t["initial"].get(stack, "")}
    return {"id": law_id, "text": t["laws"][law_id]["text"]}


def _laws(d, t) -> list:
    """Per stack I..IV: the law in force, the proposal (vetoed or not) and the cards left."""
    laws, revealed = d["laws"], set(d["laws"]["revealed"])
    out = []
    for stack in STACKS:
        cards = [lid for lid, law in t["laws"].items() if law["stack"] == stack]
        out.append(
            {
                "stack": stack,
                "in_force": _law(laws["in_force"][stack], stack, t),
                "proposal": _law(laws["proposals"][stack], stack, t),
                "vetoed": laws["vetoed"] is not None and laws["vetoed"] == laws["proposals"][stack],
                "left": sum(1 for lid in cards if lid not in revealed),
            }
        )
    return out


def _board(b, score, t) -> dict:
    """One player's buildings (by field "r,c"), stock, cards and parliament values."""
    built = {
        field: {
            "id": bid,
            "name": t["buildings"][bid]["name"],
            "effect": t["buildings"][bid]["effect"],
        }
        for bid, field in b["buildings"].items()
    }
    return {
        "pesos": b["pesos"],
        "vp": b["vp"],
        "building_vp": score["building_vp"],
        "pawn": b["pawn"],
        "buildings": built,
        "yard": b["yard"],
        "warehouse": b["warehouse"],
        "storage": b["storage"],
        "hand": b["hand"],
        "played": [c for c in CHARACTERS if c not in b["hand"]],
        "fourth": b["fourth"],
        "bid": b["bid"],
        "bought": b["bought"],
        "votes": b["votes"],
        "paid_tax": b["paid_tax"],
        "church_stack": b["church_stack"],
    }


def _pool(d, t) -> list:
    """The building tiles left in the pool: [id, name, cost text, tiles left, rule text]."""
    owned: dict[str, int] = {}
    for b in d["boards"]:
        for bid in b["buildings"]:
            owned[bid] = owned.get(bid, 0) + 1
    return [
        [bid, b["name"], _cost_text(b["cost"]), b["copies"] - owned.get(bid, 0), b["effect"]]
        for bid, b in t["buildings"].items()
    ]


def snapshot(state) -> dict:
    """What the page draws at one step: display-ready values derived from ``state.to_dict()``
    and the game's component data."""
    d, t = state.to_dict(), _tables(state.game)
    h, opts, su = d["harbour"], d["options"], t["setup"]
    return {
        "round": d["round"],
        "rounds": su["rounds"],
        "phase": d["phase"],
        "step": d["step"],
        "start_player": d["start_player"],
        "lap": d["lap"],
        "character": d["character"],
        "markers": d["markers"],
        "town_hall_user": d["town_hall_user"],
        "market": _market(d, t),
        "docks": [_ship(k and k["ship"], t, k and k["cargo"]) for k in h["docks"]],
        "at_sea": _ship(h["at_sea"], t),
        "deck_unseen": len(h["deck_unseen"]),
        "deck_returned": h["deck_returned"],
        "laws": _laws(d, t),
        "parliament": d["parliament"],
        "secret_bids": state.hidden_bids_pending(),
        "supply": d["supply"],
        "supply_limited": opts["supply_limited"],
        "bank": d["bank"],
        "pesos_limited": opts["pesos_limited"],
        "plantation": t["plantation"],
        "pool": _pool(d, t),
        "character_rules": t["characters"],
        "end_vp_per_building": su["end_vp_per_building"],
        "boards": [_board(b, sc, t) for b, sc in zip(d["boards"], state.scores())],
    }


CSS = """.sugar{background:#f4f4f4;border:1px solid #ccc}.citrus{background:#f6a23a}
.tobacco{background:#5c9b4a;color:#fff}.rum{background:#8a4b2a;color:#fff}.cigar{background:#5a3a24;color:#fff}
.wood{background:#e3cfa4}
.stone{background:#c8553d;color:#fff}.water{background:#4a8fd8;color:#fff}.warehouse{background:#ddd}
.cu-grid{display:grid;grid-template-columns:repeat(4,minmax(0,5.7em));gap:3px;margin:.3em 0}
.cu-cell{position:relative;border:1px solid #999;border-radius:4px;min-height:5.4em;padding:2px 3px 1.3em 3px;
  font-size:.78em;box-sizing:border-box}
.cu-rc{position:absolute;right:3px;bottom:1px;font-size:.9em;font-weight:bold;opacity:.75}
.cu-bld{display:block;margin-top:.2em;background:#fff;color:#222;border:1px solid #666;border-radius:3px;
  padding:0 2px;font-weight:bold;line-height:1.15}
.cu-pawn{position:absolute;left:3px;bottom:2px;width:.95em;height:.95em;border-radius:50%;border:2px solid #000}
.cu-card{display:inline-block;padding:0 .35em;margin:.1em;border-radius:3px;border:1px solid #888;background:#fff}
.cu-card.played{background:#333;color:#fff}
.cu-track{display:inline-block;margin:.1em .5em .1em 0;white-space:nowrap}
.cu-space{display:inline-block;width:1.5em;text-align:center;border:1px solid #aaa;margin-right:1px;font-size:.85em}
.cu-space.covered{background:#333;color:#fff}
.cu-box{display:inline-block;vertical-align:top;border:1px solid #bbb;border-radius:4px;padding:.25em .4em;
  margin:.15em;background:#fcfcfa;min-width:9em}
.cu-box h4{margin:0 0 .15em 0;font-size:.9em}
.cu-small{font-size:.85em}
.cu-board{width:24em;max-width:100%}
.cu-pool .tag{font-size:.85em}
"""

JS = r"""
const CU_NONE = '<span class="empty">none</span>';
const cuSeats = seats => seats.map(i => "seat " + i).join(", ");
function cuShip(sh) {
  if (!sh) return '<span class="empty">empty</span>';
  // the card by what it takes (its id stays in data-ship)
  return Object.entries(sh.slots).map(([k, n]) =>
    `<span class="tag ${k}">${k} ${sh.cargo ? sh.cargo[k] + "/" : ""}${n}</span>`).join("");
}
function cuBox(id, ship, title, body, key) {
  return `<div class="cu-box" id="${id}"${ship === undefined ? "" : ` data-ship="${ship ? ship.id : ""}"`}${key ? ` data-key="${key}"` : ""}>
    <h4>${title}</h4><div class="cu-small">${body}</div></div>`;
}
function cuRound(s) {
  return `<div class="row">round <b id="cuba-round">${s.round}</b> of ${s.rounds},
    phase <b id="cuba-phase">${label(s.phase)}</b>, step ${label(s.step)}${s.phase === "actions" ? ", lap " + (s.lap + 1) : ""}${
    s.character ? ", playing the " + s.character : ""} | start player: seat ${s.start_player}
    ${s.town_hall_user !== null ? " | Town hall used by seat " + s.town_hall_user : ""}
    | black markers: ${s.markers.length ? s.markers.map(label).join(", ") : "none"}</div>`;
}
function cuTrack(m) {
  const spaces = m.prices.map((p, i) => `<span class="cu-space${i < m.tokens ? " covered" : ""}">${p}</span>`).join("");
  return `<span class="cu-track" id="cuba-market-${m.kind}" data-key="market-${m.kind}" data-tokens="${m.tokens}">
    <span class="tag ${m.kind}">${m.kind}</span> ${spaces} <span class="cu-small">buy ${m.buy} / sell ${m.sell}</span></span>`;
}
function cuHarbour(s) {
  const docks = s.docks.map((d, k) =>
    cuBox(`cuba-dock-${k + 1}`, d, `dock ${k + 1} <span class="cu-small">(loaded/slots)</span>`, cuShip(d), `dock-${k + 1}`));
  const back = s.deck_returned.length ? ` (${s.deck_returned.map(esc).join(", ")})` : "";
  return `<div class="row">${docks.join("")}
    ${cuBox("cuba-at-sea", s.at_sea, 'at sea <span class="cu-small">(slots)</span>', cuShip(s.at_sea))}
    ${cuBox("cuba-deck", undefined, "ship deck", `${s.deck_unseen} unseen, ${s.deck_returned.length} returned${back}`)}</div>`;
}
function cuLaw(l) {
  const prop = l.proposal ? esc(l.proposal.text) + (l.vetoed ? " <b>(vetoed)</b>" : "") : CU_NONE;
  return `<div class="cu-box" id="cuba-law-${l.stack}" data-law="${l.in_force ? l.in_force.id : ""}">
    <h4>stack ${l.stack} <span class="cu-small">(${l.left} cards left)</span></h4>
    <div class="cu-small">in force: <b>${l.in_force ? esc(l.in_force.text) : CU_NONE}</b></div>
    <div class="cu-small" id="cuba-proposal-${l.stack}" data-key="proposal-${l.stack}" data-law="${l.proposal ? l.proposal.id : ""}">proposal: ${prop}</div></div>`;
}
function cuParliament(s) {
  const p = s.parliament, seats = p.tied.length ? p.tied : p.bidders;
  let vote = "no vote yet this round";
  if (p.winner !== null)
    vote = `votes ${s.boards.map((b, i) => `seat ${i} ${b.votes}`).join(", ")};
      winner <b id="cuba-winner" data-seat="${p.winner}">seat ${p.winner}</b>`;
  else if (seats.length)
    vote = `${p.rebid ? "re-bid of the tied seats" : "secret bids"}; still to bid: ${cuSeats(seats)}`;
  return `<div class="row">parliament: ${vote}</div>`;
}
function cuPool(s) {
  const left = s.pool.filter(b => b[3] > 0).map(([id, name, cost, n, rule]) =>
    `<span class="tag" id="cuba-pool-${id}" data-key="pool-${id}"><span class="bn" title="${esc(rule)}">${esc(name)}</span> <span class="cu-small">${esc(cost)}${n > 1 ? " x" + n : ""}</span></span>`);
  return `<div class="row cu-pool">buildings left (${s.end_vp_per_building} VP each at the end): ${left.join("") || CU_NONE}</div>`;
}
function cuSupply(s) {
  return cuRound(s) + `<div class="row">market: ${s.market.map(cuTrack).join("")}</div>` + cuHarbour(s)
    + `<div class="row">${s.laws.map(cuLaw).join("")}</div>` + cuParliament(s) + cuPool(s)
    + `<div class="row" id="cuba-supply">supply: ${s.supply_limited ? tags(s.supply, "", k => "supply-" + k) : cuUnlimited(s.supply)}
      | bank <b id="cuba-bank">${s.pesos_limited ? s.bank : "unlimited"}</b></div>`;
}
function cuUnlimited(supply) {
  // an unlimited supply has no count to show (the engine's would go below zero, CU-2.3):
  // "unlimited", then each item's tag, which the setup's and the Trader's moves name
  const items = Object.keys(supply).map(k => `<span class="tag ${k}" data-key="supply-${k}">${label(k)}</span>`);
  return `<b id="cuba-supply-unlimited">unlimited</b> ${items.join("")}`;
}
function cuCell([field, rc], i, b) {
  const pawn = rc === b.pawn, bld = b.buildings[rc];
  return `<div class="cu-cell ${field}" id="cuba-cell-${i}-${rc.replace(",", "-")}" data-key="cell-${i}-${rc.replace(",", "-")}" data-field="${field}"
    data-building="${bld ? bld.id : ""}" data-pawn="${pawn ? 1 : 0}"><span class="cu-rc">${rc}</span>${field}${
    bld ? `<span class="cu-bld" title="${esc(bld.effect)}">${esc(bld.name)}</span>` : ""}${
    pawn ? `<span class="cu-pawn" style="background:${COLORS[i % 5]}" title="pawn"></span>` : ""}</div>`;
}
function cuCards(cards, cls, fourth, key, rules) {
  // a card's name carries its rule text (shown on hover; the card itself, a move's target,
  // says its move)
  return cards.map(c => `<span class="cu-card ${cls}"${key ? ` data-key="${key}${c}"` : ""}><span class="bn" title="${esc(rules[c] || "")}">${c}</span>${c === fourth ? " (4th)" : ""}</span>`).join("") || CU_NONE;
}
function cuBoard(s, b, i) {
  const bid = s.secret_bids.includes(i) ? `bid <span id="cuba-bid-${i}">${b.bid === null ? "?" : b.bid}</span> (secret until all have bid)`
    : `bought votes <span id="cuba-bought-${i}">${b.bought}</span>`;
  return `<div class="board cu-board${i === s.to_act ? " active" : ""}" id="board-${i}"
      style="border-top:4px solid ${COLORS[i % 5]}">
    <h3>Seat ${i}${i === s.start_player ? " (start player)" : ""}${DATA.players ? " - " + esc(DATA.players[i]) : ""}</h3>
    <div class="row">pesos <b id="cuba-pesos-${i}">${b.pesos}</b> | VP <b id="cuba-vp-${i}">${b.vp}</b>
      + buildings ${b.building_vp} = <b>${s.scores[i]}</b> | pawn <span id="cuba-pawn-${i}">${b.pawn}</span></div>
    <div class="cu-grid">${s.plantation.map(c => cuCell(c, i, b)).join("")}</div>
    <div class="row">yard: <span id="cuba-yard-${i}">${tags(b.yard)}</span></div>
    <div class="row">warehouse: ${tags(b.warehouse)} | storage: ${tags(b.storage)}</div>
    <div class="row" id="cuba-hand-${i}">hand: ${cuCards(b.hand, "", null, `hand-${i}-`, s.character_rules)}</div>
    <div class="row" id="cuba-played-${i}">played this round: ${cuCards(b.played, "played", b.fourth, null, s.character_rules)}</div>
    <div class="row cu-small">votes <span id="cuba-votes-${i}">${b.votes}</span> | ${bid}${b.paid_tax ? " | tax paid" : ""}
      ${b.church_stack ? " | last veto: stack " + b.church_stack : ""}</div></div>`;
}
const BOARD = {supply: cuSupply, boards: s => s.boards.map((b, i) => cuBoard(s, b, i)).join("")};
"""


def move_text(before, name: str) -> str:
    """A step as the page names it: the move's own name, a drawn ship by what it takes and a
    drawn law by its text instead of their ids ("ship draw (2 sugar, 1 citrus)", "law draw
    tax: 2 pesos"); a bid is kept from the other seats while it is secret
    (``secret_steps``)."""
    kind, _, what = name.rpartition(" ")
    if kind == "ship draw":
        return f"ship draw ({_cargo(what, _tables(before.game))})"
    if kind == "law draw":
        laws = _tables(before.game)["laws"]
        return f"law draw {laws[what]['text']}" if what in laws else name
    return name


# what a live page says of a bid it may not read (the log's line, the choice's label)
SECRET_MOVE = "bid (secret until every bid is in)"


def secret_steps(state, steps) -> dict:
    """{step: seat}: each seat's bid while the bids are secret (rules: the bids are revealed
    together when every bid is in), the last step of each seat whose bid is pending."""
    out = {}
    for seat in state.hidden_bids_pending():
        for k in range(len(steps) - 1, -1, -1):
            if steps[k]["player"] == seat:
                out[k] = seat
                break
    return out


def hide(snap: dict, state, seats) -> None:
    """Keep from the holder of ``seats`` (a watcher: none) the bids of the other seats while
    they are secret: their amount becomes None ("?" on the page)."""
    for seat in snap["secret_bids"]:
        if seat not in seats:
            snap["boards"][seat]["bid"] = None


def move_targets(state) -> dict:
    """The legal moves of the seat to act that the page's board draws an element for:
    ``{action: key}``, the key being the element's ``data-key`` (docs/web.md): a field of the
    mover's plantation (pawn to, harvest, place on; a building of his or the warehouse used
    there), a building of the pool (build), a character card of his hand (play), an item of
    the supply (take it at the setup, the Trader's material), a proposal (the Church's veto),
    a dock (every item loaded onto it shares the dock) and a market track
    (buying and selling that item share it)."""
    if state.is_terminal() or state.is_chance_node():
        return {}
    seat = state.current_player()
    on, layout = state.to_dict()["boards"][seat]["buildings"], fields(state)
    out = {}
    for action in state.legal_actions():
        name = state.action_to_string(action)
        word, _, rest = name.partition(" ")
        under = rest.replace(" ", "_")
        field = _FIELD.search(name)
        key = None
        if name.startswith(("pawn to ", "harvest ", "place on ")) and field:
            key = f"cell-{seat}-{field.group(1)}-{field.group(2)}"
        elif word == "build" and under in BUILDINGS:
            key = f"pool-{under}"
        elif word == "play" and rest in CHARACTERS:
            key = f"hand-{seat}-{rest}"
        elif word == "load" and " on dock " in rest:
            key = "dock-" + rest.rsplit(" ", 1)[1]
        elif word in ("buy", "sell") and rest in CARGO:
            key = f"market-{rest}"
        elif (word == "take" and rest in ITEMS) or (
            name.startswith("trader take ") and rest[6:] in MATERIALS
        ):
            key = f"supply-{rest.removeprefix('take ')}"
        elif word == "veto" and rest in STACKS:
            key = f"proposal-{rest}"
        elif name == "use warehouse" and "warehouse" in layout:
            key = f"cell-{seat}-{layout.index('warehouse') // _COLS + 1}-{layout.index('warehouse') % _COLS + 1}"
        elif word == "use" and under in on:
            key = f"cell-{seat}-{on[under].replace(',', '-')}"
        if key:
            out[action] = key
    return out


# ---------------------------------------------------------------------------------------------
# The terminal (caribsim play): what a person reads at the prompt.

LEGEND = (
    "S start player, > to act | plantation: * pawn, #Name a building (it covers the field), "
    "(1,1) the warehouse | hand: the character cards still to play"
)
_ROWS, _COLS = 3, 4
_FIELD = re.compile(r"\b(\d),(\d)$")


def _data(state) -> dict:
    """The component data the game was made with (the shipped CSVs or the user's)."""
    return state.game.component_data()


def fields(state) -> list:
    """The printed plantation layout (row-major, 12 fields): an item name or "warehouse"."""
    return [ITEMS[k] if 0 <= k < len(ITEMS) else "warehouse" for k in _data(state)["plantation"]]


def building_name(state, building: str) -> str:
    """A building's printed name ("Golf course") from the game's data."""
    return _data(state)["buildings"][BUILDINGS.index(building)]["name"]


def grid(state, seat: int, tr=str) -> list[str]:
    """The seat's plantation as rows of cells, with row and column numbers (``tr``: the
    translation of a text, applied before the cells are padded into columns)."""
    d = state.to_dict()
    board, layout = d["boards"][seat], fields(state)
    on = {f: b for b, f in board["buildings"].items()}
    cells = []
    for r in range(1, _ROWS + 1):
        row = []
        for c in range(1, _COLS + 1):
            f = f"{r},{c}"
            what = "#" + building_name(state, on[f]) if f in on else layout[(r - 1) * _COLS + c - 1]
            row.append(("*" if board["pawn"] == f else "") + tr(what))
        cells.append(row)
    width = max(len(x) for row in cells for x in row) + 2
    heads = [tr(f"row {r}") for r in range(1, _ROWS + 1)]
    pad = max(len(h) for h in heads)
    lines = [
        (
            " " * (pad + 3) + "".join(tr(f"col {c}").ljust(width) for c in range(1, _COLS + 1))
        ).rstrip()
    ]
    lines += [
        "  " + h.ljust(pad) + " " + "".join(x.ljust(width) for x in row).rstrip()
        for h, row in zip(heads, cells)
    ]
    return lines


_SHIP_ID = re.compile(r"\bship_\d+\b")
# the black markers' spaces (rules §6.8) as printed beside their character
_MARKERS = {
    "trader_material": "Trader: material",
    "trader_crop": "Trader: crop",
    "architect_2vp": "Architect: 2 VP",
    "architect_1vp": "Architect: 1 VP",
    "mayor_4pesos": "Mayor: 4 pesos",
    "mayor_2pesos": "Mayor: 2 pesos",
}
_MARKER_ID = re.compile(r"\b(?:" + "|".join(_MARKERS) + r")\b")
_BUILT = re.compile(r"\b([a-z_]+)@(\d,\d)")
_LAW_ID = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b|\b[a-z]+\b")


def _named(line: str, state) -> str:
    """An engine board line with its ids in the words of the rules: a ship by what it takes
    ("ship (2 sugar, 1 citrus)"), a building by its printed name and its field ("Golf course
    (2,4)"), a law by its text ("tax: pesos 2"), a black marker by its space ("Mayor: 4
    pesos")."""
    t = _tables(state.game)

    def ship(m):
        return f"ship ({_cargo(m.group(), t)})"

    def built(m):
        if m.group(1) not in BUILDINGS:
            return m.group()
        return f"{building_name(state, m.group(1))} ({m.group(2)})"

    line = _BUILT.sub(built, _SHIP_ID.sub(ship, line))
    line = _MARKER_ID.sub(lambda m: _MARKERS[m.group()], line)
    if line.startswith("Laws in force: "):
        line = _LAW_ID.sub(
            lambda m: t["laws"][m.group()]["text"] if m.group() in t["laws"] else m.group(), line
        )
    return line


def text_board(state, tr=str) -> str:
    """The engine's board with the hands named in full, every plantation grid and the legend,
    in the words of ``tr`` (a translation of a text; the grids are aligned after it); ships,
    buildings and laws by what they are, not their ids (``_named``)."""
    d = state.to_dict()
    lines = str(state).split("\n")
    out = []
    for line in lines:
        m = re.match(r"^..seat (\d+):", line)
        if m:
            hand = d["boards"][int(m.group(1))]["hand"]
            line = re.sub(r"\| hand \S*", "| hand " + (", ".join(hand) or "none"), line, count=1)
        out.append(tr(_named(line, state)))
    for seat in range(len(d["boards"])):
        out += [tr(f"Plantation of seat {seat}:"), *grid(state, seat, tr)]
    return "\n".join([*out, tr("Legend: " + LEGEND)])


def _law_in_force(state, kind: str):
    """The parameters of the law of ``kind`` in force, or None."""
    d, laws = state.to_dict(), {x["id"]: x for x in _data(state)["laws"]}
    for law in d["laws"]["in_force"].values():
        if law in laws and LAW_KINDS[laws[law]["kind"]] == kind:
            return laws[law]["param"]
    return None


def build_cost(state, building: str) -> dict:
    """What building ``building`` costs now: wood, stone, water, pesos (rules §6.5, with the
    Building law's surcharge when it is in force)."""
    wood, stone, water, pesos = _data(state)["buildings"][BUILDINGS.index(building)]["cost"]
    surcharge = _law_in_force(state, "building_law")
    return {
        "wood": wood,
        "stone": stone,
        "water": water,
        "pesos": pesos + (surcharge[0] if surcharge else 0),
    }


def _activated(state, field: str) -> str:
    """What a pawn on ``field`` activates for the Worker (rules §6.3): the materials its row
    and column give, and the crop fields he may then harvest."""
    r, c = (int(x) for x in field.split(","))
    d, layout = state.to_dict(), fields(state)
    covered = set(d["boards"][state.current_player()]["buildings"].values())
    got: dict[str, int] = {}
    crops: dict[str, int] = {}
    for k, kind in enumerate(layout):
        fr, fc = k // _COLS + 1, k % _COLS + 1
        if (fr == r or fc == c) and f"{fr},{fc}" not in covered and kind != "warehouse":
            into = got if kind in MATERIALS else crops
            into[kind] = into.get(kind, 0) + 1
    per_field = _data(state)["setup"]["plantation_yield_per_field"]
    mats = ", ".join(f"+{n * per_field} {m}" for m, n in got.items()) or "no material"
    return f"{mats}; crop fields: {', '.join(f'{n} {k}' for k, n in crops.items()) or 'none'}"


def choice_label(state, action, seat=None) -> str:
    """The move as the engine names it with what it means here; ``seat`` is who reads it (None:
    the seat to act): another seat's bid stays secret."""
    name = state.action_to_string(action)
    if name.startswith("bid ") and seat is not None and seat != state.current_player():
        return "bid (secret until every bid is in)"
    if name.startswith(("pawn to ", "harvest ", "place on ")):
        field = _FIELD.search(name)
        if field is None:  # the engine ends each of these moves' names with the field
            raise ValueError(
                f"{name!r}: no plantation field (row,column) at the end of the move's name"
            )
        where = field.group()
        if name.startswith("pawn to "):
            return f"{name} ({_here(state, where)}): {_activated(state, where)}"
        if name.startswith("harvest "):
            return f"{name}: {_harvest_terms(state, where)}"
        return f"{name}: covers {_here(state, where)}"
    if name.startswith("play "):
        votes = _data(state)["setup"]["character_votes"][CHARACTERS.index(name[5:])]
        return f"{name} ({votes} vote{'' if votes == 1 else 's'})"
    if name.startswith("load "):
        dock = int(name.rsplit(" ", 1)[1])
        return f"{name}: {_data(state)['setup']['dock_vp_per_item'][dock - 1]} VP per item"
    if name.startswith("lighthouse "):  # a ship card by what it takes, never its id
        return (
            f"lighthouse: to sea the ship for {_cargo(name.split(' ', 1)[1], _tables(state.game))}"
        )
    if name.startswith(("sell ", "buy ")):
        word, kind = name.split(" ", 1)
        track = next(m for m in _market(state.to_dict(), _tables(state.game)) if m["kind"] == kind)
        price = track[word]
        peso = "peso" if price == 1 else "pesos"
        return f"{name}: +{price} {peso}" if word == "sell" else f"{name}: costs {price} {peso}"
    if name.startswith("build "):
        building = name[6:].replace(" ", "_")
        cost = (
            ", ".join(f"{n} {k}" for k, n in build_cost(state, building).items() if n) or "nothing"
        )
        return f"{name}: costs {cost}"
    return name


def _harvest_terms(state, field: str) -> str:
    """One more crop field for the Worker (rules §6.3): its crop, free or for irrigation water
    (the Drought law leaves fewer fields free)."""
    setup, drought = _data(state)["setup"], _law_in_force(state, "drought")
    free = drought[0] if drought else setup["worker_free_crop_fields"]
    water = setup["irrigation_water_per_extra_crop_field"]
    pay = "free" if state.to_dict()["action"]["harvest_count"] < free else f"costs {water} water"
    return f"{setup['plantation_yield_per_field']} {_here(state, field)}, {pay}"


def _here(state, field: str) -> str:
    """What is on a field of the seat to act: its building, else the printed field."""
    r, c = (int(x) for x in field.split(","))
    on = {f: b for b, f in state.to_dict()["boards"][state.current_player()]["buildings"].items()}
    return (
        building_name(state, on[field]) if field in on else fields(state)[(r - 1) * _COLS + c - 1]
    )


def events(before, after) -> list[str]:
    """The chance outcomes from ``before`` to ``after``: ships drawn, laws proposed, the
    start player."""
    state, lines, t = before.clone(), [], _tables(before.game)
    for action in after.history()[len(before.history()) :]:
        if state.is_chance_node():
            name = state.action_to_string(action)
            ship = name.split()[-1]
            if ship in t["ships"]:
                name += f" (takes {_cargo(ship, t)})"
            lines.append(f"  {name}")
        state.apply_action(action)
    return lines


TIEBREAK = "pesos"  # CU-12.3


def end_reason(states, tr) -> str:
    """Why the game ended (CU-12.1): the last round's phase 5 is over."""
    rounds = _tables(states[-1].game)["setup"]["rounds"]
    return tr.msg("the game ended after round {n} of {n}", n=rounds)


def round_mark(d: dict):
    """The round (CU-4: six rounds of five phases)."""
    return d["round"]

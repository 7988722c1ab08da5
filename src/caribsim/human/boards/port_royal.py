"""Port Royal drawn for the page: the harbour, the card just revealed and what it did, the
expedition area, the draw and discard piles, and each player's persons, coins, VP and swords.

The faces of the coins and the order of the draw pile are hidden from everybody (rules E.1),
so a snapshot holds only their counts; every face-up card is drawn with its complete face
(from the deck csv: a ship's swords and coins, a person's cost, VP and ability, ...).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from importlib.resources import files
from typing import Any

from caribsim.human.boards import end_triggered

_DECK = "port_royal_deck.csv"
_INTS = ("swords", "coins", "cost", "vp", "count", "min_players")

# A person's or a special card's ability in words (rules §8, §5.5, §6), by its csv keyword;
# the numbers come from the card's row.
_ABILITY = {
    "TRADER": "+1 coin when trading a {colour} ship",
    "SETTLER": "expedition symbol: {symbol}",
    "CAPTAIN": "expedition symbol: {symbol}",
    "PRIEST": "expedition symbol: {symbol}",
    "JACK_OF_ALL_TRADES": "stands for any one expedition symbol",
    "SAILOR": "{swords} sword{s}: repels ships; counts for the tax",
    "PIRATE": "{swords} sword{s}: repels ships; counts for the tax",
    "MADEMOISELLE": "each hire costs 1 coin less (not below 0)",
    "JESTER": "+1 coin on any bust, and when he finds an empty harbour in another's turn",
    "ADMIRAL": "+2 coins when his take-turn starts with 5+ harbour cards",
    "GOVERNOR": "+1 card to take in phase 2",
    "TAX_MOST_SWORDS": "who has 12+ coins discards half; then +1 coin to the most swords",
    "TAX_FEWEST_VP": "who has 12+ coins discards half; then +1 coin to the fewest VP",
    "EXPEDITION": "needs {needs}; pays {coins} coin{s} and {vp} VP",
    "SHIP": "",
}


def _name(row: dict) -> str:
    """A card's readable name: "blue Flute", "red Trader", "Jack of all trades", ..."""
    kind = row["ability"]
    if row["category"] == "ship":  # the ship type is the id's second word
        return f"{row['colour']} {row['id'].split('_')[1].capitalize()}"
    if row["category"] == "tax":
        return "Tax increase: " + kind[len("TAX_") :].lower().replace("_", " ").replace("vp", "VP")
    if row["category"] == "expedition":
        return "Expedition " + " + ".join(row["symbol"].split("+"))
    name = kind.lower().replace("_", " ").capitalize()
    return f"{row['colour']} {name}" if row["colour"] else name


def _card(row: dict) -> dict:
    card: dict[str, Any] = {k: int(row[k]) for k in _INTS}
    symbols = row["symbol"].split("+") if row["symbol"] else []
    number = card["coins"] if row["category"] == "expedition" else card["swords"]
    card.update(
        category=row["category"],
        colour=row["colour"] or None,
        skull=row["skull"] == "1",
        keyword=row["ability"],
        symbols=symbols,
        name=_name(row),
        ability=_ABILITY[row["ability"]].format(
            colour=row["colour"],
            symbol=row["symbol"],
            needs=" + ".join(symbols),
            swords=card["swords"],
            coins=card["coins"],
            vp=card["vp"],
            s="" if number == 1 else "s",
        ),
    )
    return card


@functools.cache
def _cards() -> dict:
    text = (files("caribsim") / "data" / _DECK).read_text(encoding="utf-8")
    return {row["id"]: _card(row) for row in csv.DictReader(io.StringIO(text, newline=""))}


def card_table() -> dict:
    """Every card variant of the deck csv: ``{card id: {name, category, colour, swords,
    skull, coins, cost, vp, keyword, symbols, ability, count, min_players}}`` (a copy)."""
    return {k: dict(v, symbols=list(v["symbols"])) for k, v in _cards().items()}


def card_name(card_id: str) -> str:
    """The readable name of a card id, e.g. ``ship_flute_blue_s1_c1`` -> ``blue Flute``."""
    if card_id not in _cards():
        raise ValueError(f"no Port Royal card {card_id!r}; the ids are the rows of {_DECK}")
    return _cards()[card_id]["name"]


def _expand(counts: dict) -> list:
    """A multiset {card id: count} as a list with one entry per card."""
    return [card for card, n in counts.items() for _ in range(n)]


def _player(p: dict, score: dict) -> dict:
    """One player's public display: coin count (the faces are hidden), VP, swords, persons."""
    cards = _cards()
    return {
        "coins": len(p["coins"]),
        "vp": score["total"],
        "person_vp": score["person_vp"],
        "expedition_vp": score["expedition_vp"],
        "swords": score["swords"],
        "persons": {k: n for k, n in p["display"].items() if cards[k]["category"] == "person"},
        "expeditions": [k for k in _expand(p["display"]) if cards[k]["category"] == "expedition"],
    }


# Flow fields copied as they are (docs/port_royal.md, "State dict").
_FLOW = (
    "phase",
    "step",
    "active",
    "player",
    "start_player",
    "turns",
    "revealed",
    "picks_left",
    "takers_done",
    "pending",
    "end_triggered",
    "generation",
    "expedition_area",
    "queue",
)


def snapshot(state) -> dict:
    """What the page draws at one step: the public part of the state (pile sizes, coin
    counts, every face-up card), the chance event to come and the name of the last move."""
    d = state.to_dict()
    snap = {k: d[k] for k in _FLOW}
    history = d["history"]
    snap.update(
        require_expedition=d["options"]["require_expedition"],
        draw_pile=len(d["draw_pile"]),
        discard_pile=len(d["discard_pile"]),
        discard_top=d["discard_pile"][-1] if d["discard_pile"] else None,
        harbour=_expand(d["harbour"]),
        chance=list(state.chance_event()) if state.is_chance_node() else None,
        last=state.action_to_string(history[-1]) if history else None,
        players=[_player(p, sc) for p, sc in zip(d["players"], state.scores())],
    )
    return snap


# The last move's name when it put a card face down (a coin drawn, a fee paid): the page says
# "draws a coin (face down)" from the chance event, and must not learn which card it was.
FACE_DOWN_LAST = "card ?"


def face_down(before) -> bool:
    """Whether the step from ``before`` puts a card face down (a coin drawn or given as a fee):
    a live page must not name that card (the record does, once the game is over)."""
    return before.is_chance_node() and before.chance_event()[0] in ("draw", "fee")


CSS = """.pry-cards{display:flex;flex-wrap:wrap;gap:.35em;margin:.2em 0}
.pry-card{border:1px solid #999;border-left:6px solid #bbb;border-radius:5px;padding:.2em .4em;width:11.5em;
 background:#fffdf6;font-size:.85em;line-height:1.25}
.pry-card b{display:block}.pry-card .pry-line{color:#444}
.pry-card.pry-yellow{border-left-color:#e2bd2f}.pry-card.pry-blue{border-left-color:#3b6fd1}
.pry-card.pry-green{border-left-color:#3a9a4a}.pry-card.pry-red{border-left-color:#c83a32}
.pry-card.pry-black{border-left-color:#222}
.pry-card.pry-person{background:#f6f0ff}.pry-card.pry-tax{background:#fdeaea}.pry-card.pry-expedition{background:#e8f4ea}
.pry-small .pry-card{width:9em;font-size:.8em}
[id^=pry-board-]{flex:1 1 28%}
.pry-count{float:right;font-weight:bold;color:#a40}
#pry-event{border:1px dashed #b96;border-radius:5px;padding:.3em .5em;margin:.3em 0;background:#fff7ea;display:flex;gap:.6em;align-items:flex-start}
.pry-stats b{font-size:1.05em}
"""

JS = r"""
const PRY_CARDS = __PRY_CARDS__;
const prySeat = i => i === null || i === undefined || i < 0 ? "nobody" : "seat " + i;
const pryPlural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const pryName = id => PRY_CARDS[id] ? PRY_CARDS[id].name : id;
function pryFace(c) {
  if (c.category === "ship")
    return [c.skull ? "&#9760; skull: cannot be repelled" : `&#9876; ${c.swords} to repel`, `pays ${pryPlural(c.coins, "coin")}`];
  if (c.category === "person")
    return [`cost ${c.cost} &middot; ${c.vp} VP`, esc(c.ability)];
  if (c.category === "expedition")        // the name already says what it needs
    return [`pays ${pryPlural(c.coins, "coin")} &middot; ${c.vp} VP`];
  return [esc(c.ability)];
}
function pryCard(id, n, key) {
  const c = PRY_CARDS[id];
  const lines = pryFace(c).map(t => `<span class="pry-line">${t}</span>`).join("<br>");
  return `<div class="pry-card pry-${c.category}${c.colour ? " pry-" + c.colour : ""}" data-card="${id}"${n ? ` data-count="${n}"` : ""}${key ? ` data-key="${key}"` : ""}>` +
    `${n > 1 ? `<span class="pry-count">&times;${n}</span>` : ""}<b>${esc(c.name)}</b>${lines}</div>`;
}
// key: the data-key prefix of the cards (a card a move of the game page names)
const pryCards = (ids, id, cls, key) => `<div class="pry-cards${cls ? " " + cls : ""}" id="${id}">${ids.map(c => pryCard(c, 0, key && key + c)).join("") || '<span class="empty">none</span>'}</div>`;
function pryQueue(s) {
  const op = q => ({reveal: `${prySeat(q.seat)} reveals a card`, draw: `${prySeat(q.seat)} draws ${pryPlural(q.count, "coin")}`,
    pay: `${prySeat(q.seat)} pays ${pryPlural(q.count, "coin")} to the discard pile`,
    fee: `${prySeat(q.seat)} gives ${pryPlural(q.count, "coin")} to ${prySeat(s.active)} (fee)`}[q.op]);
  return s.queue.length ? "to come: " + s.queue.map(op).join("; ") : "";
}
// A ship that docks busts the turn when the harbour before it held a ship of its colour;
// the harbour it throws away is shown with the event.
function pryDocks(prev, id) {
  const c = PRY_CARDS[id];
  if (!prev.harbour.some(h => PRY_CARDS[h].category === "ship" && PRY_CARDS[h].colour === c.colour))
    return {text: "it docks in the harbour", lost: []};
  return {text: `BUST: a second ${c.colour} ship docks; the harbour (${pryPlural(prev.harbour.length + 1, "card")}) goes to the
    discard pile, no phase 2; every Jester pays its owner 1 coin`, lost: prev.harbour.concat([id])};
}
function pryReveal(prev, s, id) {
  const c = PRY_CARDS[id], seat = prev.chance[1], swords = s.players[seat].swords;
  const said = {person: "it goes to the harbour", expedition: "it goes to the expedition area", tax: esc(c.ability)}[c.category];
  if (said) return {text: said, lost: []};
  if (s.pending === id) return {text: `${prySeat(seat)} has ${pryPlural(swords, "sword")}: repel it or let it dock`, lost: []};
  const why = c.skull ? "a skull ship cannot be repelled" : `${pryPlural(swords, "sword")} cannot repel ${c.swords}`;
  const docks = pryDocks(prev, id);
  return {text: `${why}; ${docks.text}`, lost: docks.lost};
}
// The persons that left a display (one entry per card): those an expedition used up.
const pryLeft = (before, after) => Object.entries(before).flatMap(([id, n]) => Array(Math.max(0, n - (after[id] || 0))).fill(id));
// What the last move did: the card it revealed (or null) and a sentence.
function pryEvent(prev, s) {
  const m = s.last || "", arg = m.split(" ")[1], who = prySeat(prev ? prev.player : null);
  if (!prev) return {card: null, text: "start of the game: every player gets 3 coins"};
  if (m.startsWith("card ")) {
    const [op, seat] = prev.chance;
    if (op === "reveal") {
      const r = pryReveal(prev, s, arg);
      return {card: arg, text: `${prySeat(seat)} reveals ${esc(pryName(arg))}: ${r.text}`, lost: r.lost};
    }
    if (op === "draw") return {card: null, text: `${prySeat(seat)} draws a coin (face down)`};
    if (op === "pay") return {card: arg, text: `${prySeat(seat)} pays a coin: ${esc(pryName(arg))} goes face up to the discard pile`};
    return {card: null, text: `${prySeat(seat)} gives a coin to ${prySeat(prev.active)} (fee, face down)`};
  }
  if (m === "repel") return {card: prev.pending, text: `${who} repels ${esc(pryName(prev.pending))} onto the discard pile`};
  if (m === "dock") {
    const r = pryDocks(prev, prev.pending);
    return {card: prev.pending, text: `${who} lets ${esc(pryName(prev.pending))} dock: ${r.text}`, lost: r.lost};
  }
  if (m.startsWith("take ")) return {card: arg, text: `${who} ${PRY_CARDS[arg].category === "ship" ? "trades" : "hires"} ${esc(pryName(arg))}`};
  if (m.startsWith("fulfil ")) {
    const jack = m.includes(" jack for ") ? " (Jack of all trades for " + esc(m.split(" jack for ")[1]) + ")" : "";
    return {card: arg, text: `${who} fulfils ${esc(pryName(arg))}${jack}: +${PRY_CARDS[arg].vp} VP`,
      lost: pryLeft(prev.players[prev.player].persons, s.players[prev.player].persons)};
  }
  const said = {reveal: "reveals the next card", stop: "stops discovering: phase 2, trade and hire", pass: "passes"}[m];
  return {card: null, text: `${who} ${said || esc(m)}`};
}
// The seats with the best return in the record's final result (ties share the win).
function pryWinners() {
  if (!DATA.final) return "";
  const best = Math.max(...DATA.final.returns);
  return ": won by " + DATA.final.returns.flatMap((r, i) => r === best ? [prySeat(i)] : []).join(" and ");
}
function prySupply(s) {
  const i = DATA.snapshots.indexOf(s), prev = i > 0 ? DATA.snapshots[i - 1] : null, ev = pryEvent(prev, s);
  const notes = [ev.text];
  if (prev && s.generation > prev.generation) notes.push("the discard pile was shuffled into a new draw pile");
  if (s.phase === "end") notes.push("<b>game over</b>" + pryWinners());
  else if (prev && s.active !== prev.active) notes.push(`the harbour is cleared: ${prySeat(s.active)}'s turn begins`);
  const q = pryQueue(s);
  if (q) notes.push(q);
  const taker = s.step === "take" ? ` | ${prySeat(s.player)} may still take ${pryPlural(s.picks_left, "card")}` : "";
  return `<div class="row">phase <b id="pry-phase">${label(s.phase)}</b>, step ${label(s.step)} | turn ${s.turns} |
      active <b id="pry-active">${prySeat(s.active)}</b> | to act: ${s.to_act >= 0 ? prySeat(s.to_act) : s.to_act === -1 ? "chance" : "nobody"}${taker}
      | start player ${prySeat(s.start_player)}${s.end_triggered && s.phase !== "end" ? " - <b>the game ends after this round</b>" : ""}</div>
    <div id="pry-event">${ev.card ? `<div id="pry-drawn">${pryCard(ev.card, 0, ev.card === s.pending ? "pending" : "")}</div>` : ""}<div><div id="pry-effect">${notes.join("<br>")}</div>${ev.lost && ev.lost.length ?
      `<div class="row">to the discard pile:</div>${pryCards(ev.lost, "pry-lost", "pry-small")}` : ""}</div></div>
    <div class="row">harbour (${pryPlural(s.harbour.length, "card")}, revealed this turn ${s.revealed}):</div>${pryCards(s.harbour, "pry-harbour", "", "harbour-")}
    <div class="row">expedition area:</div>${pryCards(s.expedition_area, "pry-expeditions", "", "expedition-")}
    <div class="row"><span data-key="draw-pile">draw pile <b id="pry-draw-pile">${s.draw_pile}</b> cards (face down)</span> | discard pile <b id="pry-discard-pile">${s.discard_pile}</b>
      cards${s.discard_top ? ", top: " + esc(pryName(s.discard_top)) : ""}${s.require_expedition ? " | end rule: 12 VP and an expedition" : ""}</div>`;
}
function pryBoards(s) {
  return s.players.map((p, i) => {
    const persons = Object.entries(p.persons).map(([id, n]) => pryCard(id, n)).join("");
    return `<div class="board${i === s.to_act ? " active" : ""}" id="pry-board-${i}">
      <h3>Seat ${i}${i === s.active ? " (active)" : ""}${i === s.start_player ? " (start player)" : ""}${DATA.players ? " - " + esc(DATA.players[i]) : ""}</h3>
      <div class="row pry-stats">VP <b id="pry-vp-${i}">${p.vp}</b> | coins <b id="pry-coins-${i}" title="face down: their faces are hidden">${p.coins}</b> |
        swords <b id="pry-swords-${i}">${p.swords}</b></div>
      <div class="row">VP from persons ${p.person_vp}, from expeditions ${p.expedition_vp}</div>
      <div class="row">persons:</div><div class="pry-cards pry-small" id="pry-display-${i}">${persons || '<span class="empty">none</span>'}</div>
      <div class="row">expeditions:</div>${pryCards(p.expeditions, "pry-fulfilled-" + i, "pry-small")}</div>`;
  }).join("");
}
const BOARD = {supply: prySupply, boards: pryBoards};
""".replace("__PRY_CARDS__", json.dumps(_cards(), separators=(",", ":")).replace("<", "\\u003c"))


def move_targets(state) -> dict:
    """The legal moves of the seat to act that the page's board draws an element for:
    ``{action: key}``, the key being the element's ``data-key`` (docs/web.md): a harbour card
    (take it), the draw pile (reveal), the revealed ship waiting (repel and dock share it) and
    a card of the expedition area (fulfil it; its ways with a Jack of all trades share it)."""
    if state.is_terminal() or state.is_chance_node():
        return {}
    out = {}
    for action in state.legal_actions():
        name = state.action_to_string(action)
        if name.startswith("take "):
            out[action] = "harbour-" + name.split()[1]
        elif name == "reveal":
            out[action] = "draw-pile"
        elif name in ("repel", "dock"):
            out[action] = "pending"
        elif name.startswith("fulfil "):
            out[action] = "expedition-" + name.split()[1]
    return out


_COIN_MOVES = ("draw", "pay", "fee")  # chance events that move a card face down as a coin


def move_text(before, name: str) -> str:
    """A step as the page names it. A card that becomes a coin goes face down (rules E.1):
    the page says whose coin it is, not which card."""
    if before.is_chance_node():
        kind, seat = before.chance_event()
        if kind in _COIN_MOVES:
            return f"a coin ({kind}) to seat {seat}, face down"
    return " ".join(card_name(w) if w in _cards() else w for w in name.split(" "))


# ---------------------------------------------------------------------------------------------
# The terminal (caribsim play): what a person reads at the prompt.
LEGEND = "S start player, > to act; coins are counted, never shown (their faces are hidden)"


def card_title(card_id: str) -> str:
    """A card's kind as a person names it: "Flute (blue)", "Jack of all trades", "Tax increase"."""
    c = _cards()[card_id]
    if c["category"] in ("expedition", "tax"):
        return {"expedition": "Expedition " + "+".join(c["symbols"]), "tax": "Tax increase"}[
            c["category"]
        ]
    colour = c["colour"] or ""
    kind = card_id.split("_")[1] if c["category"] == "ship" else re.sub(r"_c\d+$", "", card_id)
    kind = kind.removesuffix("_" + colour).replace("_", " ").capitalize()
    return kind + (f" ({colour})" if colour else "")


def card_text(card_id: str) -> str:
    """A card's whole face in one line, e.g. "Flute (blue), 1 sword to repel, 1 coin"."""
    c = _cards()[card_id]
    if c["category"] == "ship":
        repel = (
            "skull: cannot be repelled"
            if c["skull"]
            else _plural(c["swords"], "sword") + " to repel"
        )
        return f"{card_title(card_id)}, {repel}, {_plural(c['coins'], 'coin')}"
    if c["category"] == "person":
        return f"{card_title(card_id)}, cost {c['cost']}, {c['vp']} VP, {c['ability']}"
    if c["category"] == "expedition":
        return f"{card_title(card_id)}: {c['vp']} VP, {_plural(c['coins'], 'coin')}"
    return f"Tax increase: {c['ability']}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


_WORD = re.compile(r"\b[a-z][a-z0-9_]*\b")


def _readable(text: str) -> str:
    """``text`` with every card id replaced by its readable name."""
    return _WORD.sub(
        lambda m: f"[{card_text(m.group())}]" if m.group() in _cards() else m.group(), text
    )


def _seat(d: dict, seat: int) -> dict:
    """A seat's display, its swords and its persons counted by ability."""
    display = d["players"][seat]["display"]
    abilities: dict[str, int] = {}
    for c, n in display.items():
        abilities[_cards()[c]["keyword"]] = abilities.get(_cards()[c]["keyword"], 0) + n
    return {
        "swords": sum(n * _cards()[c]["swords"] for c, n in display.items()),
        "abilities": abilities,
        "display": display,
    }


def text_board(state, tr=str) -> str:
    """The engine's board with readable card names, and the legend, in the words of ``tr``
    (a translation of a text)."""
    return tr(_readable(str(state)) + "\nLegend: " + LEGEND)


def choice_label(state, action, seat=None) -> str:
    """The move as a person reads it: a card by its printed name (its id only in the engine's
    name of the move, which may still be typed), with what it costs and brings for the seat to
    act (``seat``, who reads it, changes nothing: every move of this game is public)."""
    name = state.action_to_string(action)
    d = state.to_dict()
    me = _seat(d, state.current_player())
    if name.startswith("take "):  # the card by its printed name, never its id
        return _take_terms(d, me, name[5:], state.current_player() == d["active"])
    if name in ("repel", "dock") and d["pending"]:
        ship = _cards()[d["pending"]]
        busts = any(
            _cards()[c]["colour"] == ship["colour"] and _cards()[c]["category"] == "ship"
            for c in d["harbour"]
        )
        extra = (
            f" (swords {me['swords']})"
            if name == "repel"
            else " (bust: the harbour already has a " + ship["colour"] + " ship)"
            if busts
            else ""
        )
        return f"{name} {card_text(d['pending'])}{extra}"
    if name.startswith("fulfil "):
        return f"fulfil {card_text(name.split()[1])}"
    return name


def _take_terms(d, me, card_id, active: bool) -> str:
    """What taking a card does for the taker: a ship's income, a person's price (rules §7)."""
    c = _cards()[card_id]
    fee = "" if active else f"; 1 coin fee to seat {d['active']}, the active player"
    if c["category"] == "ship":
        traders = sum(
            n
            for k, n in me["display"].items()
            if _cards()[k]["keyword"] == "TRADER" and _cards()[k]["colour"] == c["colour"]
        )
        bonus = f" (+{traders} trader)" if traders else ""
        return (
            f"trade {card_title(card_id)} for {_plural(c['coins'] + traders, 'coin')}{bonus}{fee}"
        )
    price = max(0, c["cost"] - me["abilities"].get("MADEMOISELLE", 0))
    return f"hire {card_text(card_id)}; costs {_plural(price, 'coin')}{fee}"


def events(before, after) -> list[str]:
    """What happened from ``before`` to ``after`` (a later state of the same game), replayed
    step by step: every revealed card, repels, docks, busts, taxes and expeditions, each
    seat's coin count where it changed, and each new turn. Coin faces stay hidden."""
    state = before.clone()
    lines: list[str] = []
    turn: list[str] = []
    coins = _coin_counts(state.to_dict())
    for action in after.history()[len(before.history()) :]:
        d = state.to_dict()
        kind = state.chance_event()[0] if state.is_chance_node() else None
        if kind not in ("draw", "pay", "fee"):  # coin moves are summed up, not listed
            lines += _coin_lines(coins, _coin_counts(d)) + turn
            coins, turn = _coin_counts(d), []
        name = state.action_to_string(action)
        state.apply_action(action)
        nd = state.to_dict()
        lines += _step_lines(d, kind, name, nd)
        if nd["active"] != d["active"]:
            turn = [f"--- seat {nd['active']}'s turn ---"]
    return lines + _coin_lines(coins, _coin_counts(state.to_dict())) + turn


def _coin_counts(d) -> list:
    return [len(p["coins"]) for p in d["players"]]


def _coin_lines(old, new) -> list[str]:
    return [
        f"  seat {i}: {a} -> {_plural(b, 'coin')}"
        for i, (a, b) in enumerate(zip(old, new))
        if a != b
    ]


def _step_lines(d, kind, name, nd) -> list[str]:
    """The lines of one step from dict ``d`` to ``nd``: ``kind`` is the chance kind (None for
    a decision) and ``name`` the action's name."""
    active, out = d["active"], []
    if kind == "reveal":
        card = name.split()[1]
        out += [f"  seat {active} reveals {card_text(card)}", *_landing(d, card, nd)]
    elif name == "repel":
        out.append(f"  repelled: {card_text(d['pending'])} to the discard pile")
    elif name == "dock":
        out += _landing(d, d["pending"], nd)
    elif name.startswith("fulfil "):
        mine, now = d["players"][active]["display"], nd["players"][active]["display"]
        gone = [card_title(c) for c, n in mine.items() for _ in range(n - now.get(c, 0))]
        out.append(
            f"  seat {active} fulfils {card_text(name.split()[1])}, discarding {', '.join(gone)}"
        )
    return out


def _landing(d, card, nd) -> list[str]:
    """Where a revealed (or docked) card went: harbour, expedition area, discard pile."""
    c = _cards()[card]
    if nd["pending"] == card:
        return []  # the active player decides: repel or dock
    if c["category"] == "ship":
        if d["harbour"] and not nd["harbour"]:
            return [
                f"  bust: a second {c['colour']} ship; the harbour ({sum(d['harbour'].values()) + 1} "
                f"cards) goes to the discard pile and the turn ends"
            ]
        return [
            "  it docks in the harbour"
            + (" (it cannot be repelled)" if d["pending"] != card else "")
        ]
    if c["category"] == "expedition":
        return ["  it goes to the expedition area"]
    if c["category"] == "tax":
        return []  # its coin lines follow
    return ["  it goes to the harbour"]


END_VP = 12  # §9.1: 12 VP in a display ends the game when the round is played out
TIEBREAK = "coins"  # §10.2


def end_reason(states, tr) -> str:
    """Why the game ended (§9): the seats with 12 VP or more (§9.2: and an expedition) at
    the step that triggered the end, the round then played out so that everyone had as many
    turns."""
    _, at = end_triggered(states)
    expedition = at.to_dict()["options"]["require_expedition"]
    reached = [
        i
        for i, s in enumerate(at.scores())
        if s["total"] >= END_VP and (not expedition or s["expeditions"] > 0)
    ]
    seats = ", ".join(tr.msg("seat {i}", i=i) for i in reached)
    return tr.msg(
        "{seats} reached {vp} VP{and_expedition}; the round was played to its end",
        seats=seats,
        vp=END_VP,
        and_expedition=tr.msg(" and an expedition") if expedition else "",
    )


def round_mark(d: dict):
    """What changes when a new round begins: every player has had a turn as the active one
    (§9.1 counts rounds so)."""
    return d["turns"] // d["options"]["players"]

"""Port Royal drawn for the page: its text board (a drawn board is to come)."""
from __future__ import annotations


def snapshot(state) -> dict:
    """What the page draws at one step."""
    return {"text": str(state)}


CSS = ""

JS = r"""
const BOARD = {supply: s => "", boards: s => `<pre id="text">${esc(s.text)}</pre>`};
"""


# ---------------------------------------------------------------------------------------------
# The terminal (caribsim play): what a person reads at the prompt.
import csv
import functools
import re
from importlib.resources import files

LEGEND = "S start player, > to act; coins are counted, never shown (their faces are hidden)"

_ABILITY = {   # rules §8, what a person does for its owner
    "TRADER": "+1 coin per {colour} ship traded",
    "SETTLER": "symbol house", "CAPTAIN": "symbol anchor", "PRIEST": "symbol cross",
    "JACK_OF_ALL_TRADES": "any one symbol",
    "SAILOR": "1 sword", "PIRATE": "2 swords",
    "MADEMOISELLE": "hire cost -1",
    "JESTER": "+1 coin on every bust and on an empty harbour",
    "ADMIRAL": "+2 coins when the harbour holds 5+ cards",
    "GOVERNOR": "+1 card in phase 2",
}
_TAX = {"TAX_MOST_SWORDS": "most swords", "TAX_FEWEST_VP": "fewest VP"}


@functools.cache
def cards() -> dict:
    """The deck's card variants by id, read from port_royal_deck.csv (numbers as ints)."""
    text = files("caribsim").joinpath("data", "port_royal_deck.csv").read_text(encoding="utf-8")
    out = {}
    for row in csv.DictReader(text.splitlines()):
        for k in ("swords", "skull", "coins", "cost", "vp", "count", "min_players"):
            row[k] = int(row[k])
        out[row["id"]] = row
    return out


def card_title(card_id: str) -> str:
    """A card's kind as a person names it: "Flute (blue)", "Jack of all trades", "Tax increase"."""
    c = cards()[card_id]
    if c["category"] in ("expedition", "tax"):
        return {"expedition": f"Expedition {c['symbol']}", "tax": "Tax increase"}[c["category"]]
    kind = card_id.split("_")[1] if c["category"] == "ship" else re.sub(r"_c\d+$", "", card_id)
    kind = kind.removesuffix("_" + c["colour"]).replace("_", " ").capitalize()
    return kind + (f" ({c['colour']})" if c["colour"] else "")


def card_name(card_id: str) -> str:
    """A card as a person reads it, e.g. "Flute (blue), 1 sword to repel, 1 coin"."""
    c = cards()[card_id]
    if c["category"] == "ship":
        repel = "skull: cannot be repelled" if c["skull"] else _plural(c["swords"], "sword") + " to repel"
        return f"{card_title(card_id)}, {repel}, {_plural(c['coins'], 'coin')}"
    if c["category"] == "person":
        ability = _ABILITY[c["ability"]].format(colour=c["colour"])
        return f"{card_title(card_id)}, cost {c['cost']}, {c['vp']} VP, {ability}"
    if c["category"] == "expedition":
        return f"{card_title(card_id)}: {c['vp']} VP, {_plural(c['coins'], 'coin')}"
    return f"Tax increase: 12+ coins lose half, {_TAX[c['ability']]} gets 1 coin"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


_WORD = re.compile(r"\b[a-z][a-z0-9_]*\b")


def _readable(text: str) -> str:
    """``text`` with every card id replaced by its readable name."""
    return _WORD.sub(lambda m: f"[{card_name(m.group())}]" if m.group() in cards() else m.group(), text)


def _seat(d: dict, seat: int) -> dict:
    """A seat's display, its swords and its persons counted by ability."""
    display = d["players"][seat]["display"]
    abilities = {}
    for c, n in display.items():
        abilities[cards()[c]["ability"]] = abilities.get(cards()[c]["ability"], 0) + n
    return {"swords": sum(n * cards()[c]["swords"] for c, n in display.items()),
            "abilities": abilities, "display": display}


def text_board(state) -> str:
    """The engine's board with readable card names, and the legend."""
    return _readable(str(state)) + "\nLegend: " + LEGEND


def choice_label(state, action, seat=None) -> str:
    """The move as the engine names it, with what it costs and brings for the seat to act
    (``seat``, who reads it, changes nothing: every move of this game is public)."""
    name = state.action_to_string(action)
    d = state.to_dict()
    me = _seat(d, state.current_player())
    if name.startswith("take "):
        return name + ": " + _take_terms(d, me, name[5:], state.current_player() == d["active"])
    if name in ("repel", "dock") and d["pending"]:
        ship = cards()[d["pending"]]
        busts = any(cards()[c]["colour"] == ship["colour"] and cards()[c]["category"] == "ship"
                    for c in d["harbour"])
        extra = (f" (swords {me['swords']})" if name == "repel"
                 else " (bust: the harbour already has a " + ship["colour"] + " ship)" if busts else "")
        return f"{name} {card_name(d['pending'])}{extra}"
    if name.startswith("fulfil "):
        return f"{name}: {card_name(name.split()[1])}"
    return name


def _take_terms(d, me, card_id, active: bool) -> str:
    """What taking a card does for the taker: a ship's income, a person's price (rules §7)."""
    c = cards()[card_id]
    fee = "" if active else f"; 1 coin fee to seat {d['active']}, the active player"
    if c["category"] == "ship":
        traders = sum(n for k, n in me["display"].items()
                      if cards()[k]["ability"] == "TRADER" and cards()[k]["colour"] == c["colour"])
        bonus = f" (+{traders} trader)" if traders else ""
        return f"trade {card_title(card_id)} for {_plural(c['coins'] + traders, 'coin')}{bonus}{fee}"
    price = max(0, c["cost"] - me["abilities"].get("MADEMOISELLE", 0))
    return f"hire {card_name(card_id)}; costs {_plural(price, 'coin')}{fee}"


def events(before, after) -> list[str]:
    """What happened from ``before`` to ``after`` (a later state of the same game), replayed
    step by step: every revealed card, repels, docks, busts, taxes and expeditions, each
    seat's coin count where it changed, and each new turn. Coin faces stay hidden."""
    state, lines, turn = before.clone(), [], []
    coins = _coin_counts(state.to_dict())
    for action in after.history()[len(before.history()):]:
        d = state.to_dict()
        kind = state.chance_event()[0] if state.is_chance_node() else None
        if kind not in ("draw", "pay", "fee"):       # coin moves are summed up, not listed
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
    return [f"  seat {i}: {a} -> {_plural(b, 'coin')}" for i, (a, b) in enumerate(zip(old, new)) if a != b]


def _step_lines(d, kind, name, nd) -> list[str]:
    """The lines of one step from dict ``d`` to ``nd``: ``kind`` is the chance kind (None for
    a decision) and ``name`` the action's name."""
    active, out = d["active"], []
    if kind == "reveal":
        card = name.split()[1]
        out += [f"  seat {active} reveals {card_name(card)}"] + _landing(d, card, nd)
    elif name == "repel":
        out.append(f"  repelled: {card_name(d['pending'])} to the discard pile")
    elif name == "dock":
        out += _landing(d, d["pending"], nd)
    elif name.startswith("fulfil "):
        mine, now = d["players"][active]["display"], nd["players"][active]["display"]
        gone = [card_title(c) for c, n in mine.items() for _ in range(n - now.get(c, 0))]
        out.append(f"  seat {active} fulfils {card_name(name.split()[1])}, discarding {', '.join(gone)}")
    return out


def _landing(d, card, nd) -> list[str]:
    """Where a revealed (or docked) card went: harbour, expedition area, discard pile."""
    c = cards()[card]
    if nd["pending"] == card:
        return []                                    # the active player decides: repel or dock
    if c["category"] == "ship":
        if d["harbour"] and not nd["harbour"]:
            return [f"  bust: a second {c['colour']} ship; the harbour ({sum(d['harbour'].values()) + 1} "
                    f"cards) goes to the discard pile and the turn ends"]
        return ["  it docks in the harbour" + (" (it cannot be repelled)" if d["pending"] != card else "")]
    if c["category"] == "expedition":
        return ["  it goes to the expedition area"]
    if c["category"] == "tax":
        return []                                    # its coin lines follow
    return ["  it goes to the harbour"]

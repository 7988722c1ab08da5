"""Cuba drawn for the page: its text board (a drawn board is to come)."""
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
import re

from caribsim.cuba.game import BUILDINGS, CHARACTERS, ITEMS, LAW_KINDS, MATERIALS

LEGEND = ("S start player, > to act | plantation: * pawn, #Name a building (it covers the field), "
          "(1,1) the warehouse | hand: the character cards still to play")
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


def grid(state, seat: int) -> list[str]:
    """The seat's plantation as rows of cells, with row and column numbers."""
    d = state.to_dict()
    board, layout = d["boards"][seat], fields(state)
    on = {f: b for b, f in board["buildings"].items()}
    cells = []
    for r in range(1, _ROWS + 1):
        row = []
        for c in range(1, _COLS + 1):
            f = f"{r},{c}"
            what = "#" + building_name(state, on[f]) if f in on else layout[(r - 1) * _COLS + c - 1]
            row.append(("*" if board["pawn"] == f else "") + what)
        cells.append(row)
    width = max(len(x) for row in cells for x in row) + 2
    lines = [("        " + "".join(f"col {c}".ljust(width) for c in range(1, _COLS + 1))).rstrip()]
    lines += [f"  row {r} " + "".join(x.ljust(width) for x in row).rstrip() for r, row in enumerate(cells, 1)]
    return lines


def text_board(state) -> str:
    """The engine's board with the hands named in full, every plantation grid and the legend."""
    d = state.to_dict()
    lines = str(state).split("\n")
    out = []
    for line in lines:
        m = re.match(r"^..seat (\d+):", line)
        if m:
            hand = d["boards"][int(m.group(1))]["hand"]
            line = re.sub(r"\| hand \S*", "| hand " + (", ".join(hand) or "none"), line, count=1)
        out.append(line)
    for seat in range(len(d["boards"])):
        out += [f"Plantation of seat {seat}:"] + grid(state, seat)
    return "\n".join(out + ["Legend: " + LEGEND])


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
    return {"wood": wood, "stone": stone, "water": water, "pesos": pesos + (surcharge[0] if surcharge else 0)}


def _activated(state, field: str) -> str:
    """What a pawn on ``field`` activates for the Worker (rules §6.3): the materials its row
    and column give, and the crop fields he may then harvest."""
    r, c = (int(x) for x in field.split(","))
    d, layout = state.to_dict(), fields(state)
    covered = set(d["boards"][state.current_player()]["buildings"].values())
    got, crops = {}, {}
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
    field = _FIELD.search(name)
    if name.startswith("pawn to "):
        return f"{name} ({_here(state, field.group())}): {_activated(state, field.group())}"
    if name.startswith("harvest "):
        return f"{name}: {_harvest_terms(state, field.group())}"
    if name.startswith("place on "):
        return f"{name}: covers {_here(state, field.group())}"
    if name.startswith("play "):
        votes = _data(state)["setup"]["character_votes"][CHARACTERS.index(name[5:])]
        return f"{name} ({votes} vote{'' if votes == 1 else 's'})"
    if name.startswith("load "):
        dock = int(name.rsplit(" ", 1)[1])
        return f"{name}: {_data(state)['setup']['dock_vp_per_item'][dock - 1]} VP per item"
    if name.startswith("build "):
        building = name[6:].replace(" ", "_")
        cost = ", ".join(f"{n} {k}" for k, n in build_cost(state, building).items() if n) or "nothing"
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
    return building_name(state, on[field]) if field in on else fields(state)[(r - 1) * _COLS + c - 1]


def events(before, after) -> list[str]:
    """The chance outcomes from ``before`` to ``after``: ships drawn, laws proposed, the
    start player."""
    state, lines = before.clone(), []
    ships = {s["id"]: s for s in _data(before)["ships"]}
    for action in after.history()[len(before.history()):]:
        if state.is_chance_node():
            name = state.action_to_string(action)
            ship = ships.get(name.split()[-1])
            if ship:
                takes = ", ".join(f"{n} {ITEMS[k]}" for k, n in enumerate(ship["slots"]) if n)
                name += f" (takes {takes})"
            lines.append(f"  {name}")
        state.apply_action(action)
    return lines

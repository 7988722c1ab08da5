"""Cuba: the Game object (options, component data, action space) over the compiled core.

Rules: the shared reference ``cuba.md`` (rule ids CU-n.m, decisions D1..D60) and
``docs/cuba.md`` (the action encoding, the state dict, the engine's own decisions).

Component data is data: the six ``cuba_*.csv`` files shipped in ``caribsim/data`` are
the default; ``load_game("cuba", players=N, data="folder")`` reads a user's files of
the same names and columns (a file present in the folder replaces the shipped one as a
whole; missing files fall back to the shipped ones). Every file is validated (the
invariants of the reference, §13.8, plus types and ranges) with errors that name the
file, the row (its line number) and the column.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import re
from importlib.resources import files
from pathlib import Path

from caribsim._game_base import Game
from caribsim.cuba import _state

__all__ = [
    "BUILDINGS",
    "CARGO",
    "CHARACTERS",
    "CROPS",
    "DATA_FILES",
    "ITEMS",
    "LAW_KINDS",
    "MATERIALS",
    "STACKS",
    "CubaGame",
    "CubaState",
    "DataError",
    "load_component_data",
]

ITEMS = _state.ITEM_NAMES
CARGO = _state.CARGO_NAMES
CROPS = _state.CROP_NAMES
MATERIALS = _state.MATERIAL_NAMES
CHARACTERS = _state.CHARACTER_NAMES
BUILDINGS = _state.BUILDING_IDS
LAW_KINDS = _state.LAW_KINDS
STACKS = _state.STACK_NAMES
CubaState = _state.CubaState

DATA_FILES = (
    "cuba_buildings.csv",
    "cuba_ships.csv",
    "cuba_laws.csv",
    "cuba_market.csv",
    "cuba_plantation.csv",
    "cuba_setup.csv",
)
_COLUMNS = {
    "cuba_buildings.csv": [
        "id",
        "name",
        "cost_wood",
        "cost_stone",
        "cost_water",
        "cost_pesos",
        "copies",
        "effect",
        "per_round_limit",
        "status",
        "source",
    ],
    "cuba_ships.csv": ["id", "slots_total", "accepts", "status"],
    "cuba_laws.csv": ["id", "stack", "kind", "params", "status"],
    "cuba_market.csv": ["item", "prices", "start_covered", "status"],
    "cuba_plantation.csv": ["row", "col", "field", "status"],
    "cuba_setup.csv": ["key", "value", "status"],
}
_STATUSES = ("rules", "decision", "provisional")
_STACK_KIND = {
    "tax": 0,
    "tax_per_building": 0,
    "levy": 1,
    "subsidy": 2,
    "market_loses": 3,
    "market_gains": 3,
    "drought": 3,
    "building_law": 3,
    "harbour_law": 3,
    "corruption": 3,
}


class DataError(ValueError):
    """A component data file breaks the schema or an invariant (names file, row, column)."""


_INT = re.compile(r"0|-?[1-9][0-9]*")  # ASCII only: int() would also take '+3', '1_0', '00003', '٣'
_ID = re.compile(r"[a-z][a-z0-9_]{0,39}")
_ID_RULE = "lowercase ASCII letters, digits and '_', starting with a letter, at most 40 characters"
_MAX_FILE_BYTES = 1 << 20


class _File:
    def __init__(self, name, data, origin):
        self.name = name
        self.origin = origin
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise DataError(
                f"{name} ({origin}) row {line}: not UTF-8 text (byte 0x{data[e.start]:02x})"
            ) from None
        reader = csv.DictReader(io.StringIO(text, newline=""))
        self.rows = []
        cols = None
        try:
            cols = reader.fieldnames or []
            if cols != _COLUMNS[name]:
                raise DataError(
                    f"{name} ({origin}): the header must be the columns {_COLUMNS[name]}, got {cols}"
                )
            for line, row in enumerate(reader, start=2):
                if None in row or any(v is None for v in row.values()):
                    raise DataError(f"{name} row {line}: expected {len(cols)} columns")
                self.rows.append((line, {k: v.strip() for k, v in row.items()}))
        except csv.Error as e:
            why = (
                f"a cell is over {csv.field_size_limit() // 1024} KiB"
                if "field limit" in str(e)
                else str(e)
            )
            row = 1 if cols is None else len(self.rows) + 2  # the record after the last one read
            raise DataError(f"{name} ({origin}) row {row}: not a valid CSV file: {why}") from None
        for line, row in self.rows:
            if row["status"] not in _STATUSES:
                self.err(line, "status", f"must be one of {list(_STATUSES)}, got {row['status']!r}")

    def err(self, line, column, msg):
        raise DataError(f"{self.name} row {line}, column {column}: {msg}")

    def int(self, line, row, column, lo, hi):
        return _num(self, line, column, row[column], lo, hi, "")

    def id(self, line, row, what):
        v = row["id"]
        if not _ID.fullmatch(v):
            self.err(line, "id", f"a {what} id must be {_ID_RULE}, got {v!r}")
        return v


def _read_user_file(folder, name):
    """The bytes of a user's data file, or None if the folder has none of that name."""
    path = folder / name
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        raise DataError(f"data: {str(path)!r} is not a regular file")
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            raise DataError(
                f"data: {str(path)!r} is over {_MAX_FILE_BYTES >> 20} MiB; a data file is a small CSV"
            )
        return path.read_bytes()
    except OSError as e:
        raise DataError(f"data: cannot read {str(path)!r}: {e.strerror or e}") from None


def _read_files(folder):
    out = {}
    user = None
    if folder is not None:
        if not isinstance(folder, (str, Path)):
            raise TypeError(
                f"data must be a folder path (str or Path), got {type(folder).__name__}"
            )
        user = Path(folder)
        if not user.is_dir():
            raise ValueError(f"data: {str(folder)!r} is not a folder")
        try:
            names = sorted(p.name for p in user.iterdir())
        except OSError as e:
            raise DataError(
                f"data: cannot list the folder {str(folder)!r}: {e.strerror or e}"
            ) from None
        for n in names:
            low = n.lower()
            if low in DATA_FILES and n != low:
                raise DataError(
                    f"data: {n!r} differs from the data file name {low!r} only in case; rename it"
                )
        unknown = [
            n
            for n in names
            if n.lower().startswith("cuba_")
            and n.lower().endswith(".csv")
            and n.lower() not in DATA_FILES
        ]
        if unknown:
            raise DataError(
                f"data: unknown Cuba data file(s) {unknown}; the files are {list(DATA_FILES)}"
            )
    for name in DATA_FILES:
        data = None if user is None else _read_user_file(user, name)
        if data is not None:
            out[name] = _File(name, data, str(user / name))
        else:
            out[name] = _File(name, (files("caribsim") / "data" / name).read_bytes(), "bundled")
    return out


def _kv(f, line, column, text, keys=None):
    out = {}
    for part in text.split(";"):
        if "=" not in part:
            f.err(line, column, f"must be 'key=value;key=value', got {text!r}")
        k, v = (x.strip() for x in part.split("=", 1))
        if keys is not None and k not in keys:
            f.err(line, column, f"unknown key {k!r}; allowed: {list(keys)}")
        if k in out:
            f.err(line, column, f"key {k!r} given twice")
        out[k] = v
    return out


def _num(f, line, column, v, lo, hi, what):
    what = f"{what} must be" if what else "must be"
    if not _INT.fullmatch(v):
        f.err(
            line,
            column,
            f"{what} an integer {lo}..{hi} (ASCII digits with an optional leading '-'; "
            f"no '+', '_', spaces or leading zeros), got {v!r}",
        )
    x = int(v)
    if not lo <= x <= hi:
        f.err(line, column, f"{what} an integer {lo}..{hi}, got {x}")
    return x


def _buildings(f):
    if len(f.rows) != len(BUILDINGS):
        raise DataError(
            f"{f.name}: expected {len(BUILDINGS)} rows (one per building kind), found {len(f.rows)}"
        )
    by_id = {}
    for line, row in f.rows:
        if row["id"] not in BUILDINGS:
            f.err(
                line, "id", f"unknown building id {row['id']!r}; the engine knows {list(BUILDINGS)}"
            )
        if row["id"] in by_id:
            f.err(line, "id", f"building id {row['id']!r} appears twice")
        lim = row["per_round_limit"]
        if not row["name"].isprintable():
            f.err(line, "name", f"must be printable text on one line, got {row['name']!r}")
        by_id[row["id"]] = {
            "name": row["name"] or row["id"],
            "cost": [
                f.int(line, row, c, 0, 20)
                for c in ("cost_wood", "cost_stone", "cost_water", "cost_pesos")
            ],
            "copies": f.int(line, row, "copies", 0, 5),
            "limit": None
            if lim == "unlimited"
            else _num(f, line, "per_round_limit", lim, 1, 60, "a limit (or 'unlimited')"),
            "status": row["status"],
        }
    total = sum(b["copies"] for b in by_id.values())
    if total != 25:
        raise DataError(
            f"{f.name}, column copies: the copies must sum to 25 tiles (§13.8), got {total}"
        )
    return [by_id[b] for b in BUILDINGS]


def _ships(f):
    if len(f.rows) != 15:
        raise DataError(f"{f.name}: expected 15 rows (ship cards), found {len(f.rows)}")
    out, seen = [], set()
    for line, row in f.rows:
        sid = f.id(line, row, "ship")
        if sid in seen:
            f.err(line, "id", f"ship id {sid!r} appears twice")
        seen.add(sid)
        total = f.int(line, row, "slots_total", 1, 20)
        slots = [0] * 5
        parts = row["accepts"].split(";")
        for part in parts:
            if ":" not in part:
                f.err(line, "accepts", f"must be 'kind:slots;kind:slots', got {row['accepts']!r}")
            k, v = (x.strip() for x in part.split(":", 1))
            if k not in CARGO:
                f.err(line, "accepts", f"unknown cargo kind {k!r}; allowed: {list(CARGO)}")
            if slots[CARGO.index(k)]:
                f.err(line, "accepts", f"kind {k!r} given twice")
            slots[CARGO.index(k)] = _num(f, line, "accepts", v, 1, 10, f"slots of {k}")
        if not 2 <= len(parts) <= 3:
            f.err(line, "accepts", f"a ship accepts 2-3 cargo kinds (§13.8), got {len(parts)}")
        if sum(slots) != total:
            f.err(
                line,
                "slots_total",
                f"must equal the sum of the accepted slots ({sum(slots)}), got {total}",
            )
        out.append({"id": sid, "slots": slots, "status": row["status"]})
    return out


def _law_params(f, line, kind, text):
    p = [0] * 8
    if kind in ("tax",):
        p[0] = _num(
            f,
            line,
            "params",
            _kv(f, line, "params", text, ("pesos",)).get("pesos", ""),
            0,
            60,
            "pesos",
        )
    elif kind == "tax_per_building":
        p[0] = _num(
            f,
            line,
            "params",
            _kv(f, line, "params", text, ("pesos_per_building",)).get("pesos_per_building", ""),
            0,
            20,
            "pesos_per_building",
        )
    elif kind == "levy":
        kv = _kv(f, line, "params", text, ITEMS)
        for k, v in kv.items():
            p[ITEMS.index(k)] = _num(f, line, "params", v, 1, 20, f"levy of {k}")
    elif kind == "subsidy":
        kv = _kv(f, line, "params", text, ("count", "unit", "vp", "cap"))
        if set(kv) != {"count", "unit", "vp", "cap"}:
            f.err(
                line,
                "params",
                "a subsidy needs count=..;unit=..;vp=..;cap=.. (cap=none for no cap)",
            )
        if kv["count"] not in _state.SUBSIDY_COUNTS:
            f.err(
                line,
                "params",
                f"unknown subsidy count {kv['count']!r}; allowed: {list(_state.SUBSIDY_COUNTS)}",
            )
        p[0] = _state.SUBSIDY_COUNTS.index(kv["count"])
        p[1] = _num(f, line, "params", kv["unit"], 1, 60, "unit")
        p[2] = _num(f, line, "params", kv["vp"], 0, 20, "vp")
        p[3] = (
            -1
            if kv["cap"] == "none"
            else _num(f, line, "params", kv["cap"], 0, 100, "cap (or none)")
        )
    elif kind in ("market_loses", "market_gains"):
        p[0] = _num(
            f,
            line,
            "params",
            _kv(f, line, "params", text, ("crops_each",)).get("crops_each", ""),
            0,
            8,
            "crops_each",
        )
    elif kind == "drought":
        p[0] = _num(
            f,
            line,
            "params",
            _kv(f, line, "params", text, ("free_crop_fields",)).get("free_crop_fields", ""),
            0,
            6,
            "free_crop_fields",
        )
    elif kind == "building_law":
        p[0] = _num(
            f,
            line,
            "params",
            _kv(f, line, "params", text, ("surcharge_pesos",)).get("surcharge_pesos", ""),
            0,
            20,
            "surcharge_pesos",
        )
    elif text not in ("-", ""):
        f.err(line, "params", f"a {kind} law has no parameters: write '-', got {text!r}")
    return p


def _laws(f):
    if len(f.rows) != 24:
        raise DataError(f"{f.name}: expected 24 rows (law cards), found {len(f.rows)}")
    out, seen = [], set()
    for line, row in f.rows:
        lid = f.id(line, row, "law")
        if lid in seen:
            f.err(line, "id", f"law id {lid!r} appears twice")
        seen.add(lid)
        if row["stack"] not in STACKS:
            f.err(line, "stack", f"must be one of {list(STACKS)}, got {row['stack']!r}")
        if row["kind"] not in LAW_KINDS:
            f.err(line, "kind", f"unknown law kind {row['kind']!r}; allowed: {list(LAW_KINDS)}")
        stack = STACKS.index(row["stack"])
        if _STACK_KIND[row["kind"]] != stack:
            f.err(
                line,
                "kind",
                f"a {row['kind']} law belongs to stack {STACKS[_STACK_KIND[row['kind']]]}, "
                f"not {row['stack']}",
            )
        out.append(
            {
                "id": lid,
                "stack": stack,
                "kind": LAW_KINDS.index(row["kind"]),
                "param": _law_params(f, line, row["kind"], row["params"]),
                "status": row["status"],
            }
        )
    for s in range(4):
        n = sum(1 for x in out if x["stack"] == s)
        if n != 6:
            raise DataError(
                f"{f.name}, column stack: stack {STACKS[s]} must hold 6 cards (§13.8), got {n}"
            )
    n = sum(1 for x in out if x["kind"] == LAW_KINDS.index("tax_per_building"))
    if n != 1:
        raise DataError(
            f"{f.name}, column kind: stack I must hold exactly one tax_per_building (§13.8), got {n}"
        )
    return out


def _market(f):
    by = {}
    for line, row in f.rows:
        if row["item"] not in CARGO:
            f.err(line, "item", f"must be a cargo kind {list(CARGO)}, got {row['item']!r}")
        if row["item"] in by:
            f.err(line, "item", f"{row['item']!r} appears twice")
        prices = [_num(f, line, "prices", v, 0, 100, "a price") for v in row["prices"].split(";")]
        if not 1 <= len(prices) <= 8:
            f.err(line, "prices", f"a track has 1-8 spaces, got {len(prices)}")
        if any(a <= b for a, b in zip(prices, prices[1:])):
            f.err(
                line, "prices", f"prices must be strictly decreasing (§13.8), got {row['prices']!r}"
            )
        by[row["item"]] = {
            "prices": prices,
            "start_covered": f.int(line, row, "start_covered", 0, len(prices)),
            "status": row["status"],
        }
    missing = [k for k in CARGO if k not in by]
    if missing:
        raise DataError(f"{f.name}: one row per cargo kind is needed (§13.8); missing {missing}")
    return [by[k] for k in CARGO]


def _plantation(f):
    if len(f.rows) != 12:
        raise DataError(f"{f.name}: expected 12 rows (3 x 4 fields), found {len(f.rows)}")
    grid = [None] * 12
    for line, row in f.rows:
        r = f.int(line, row, "row", 1, 3)
        c = f.int(line, row, "col", 1, 4)
        if grid[(r - 1) * 4 + c - 1] is not None:
            f.err(line, "row", f"field ({r},{c}) appears twice")
        kind = row["field"]
        if kind == "warehouse":
            if (r, c) != (1, 1):
                f.err(line, "field", f"the warehouse must be at (1,1) (§13.8), found at ({r},{c})")
            grid[(r - 1) * 4 + c - 1] = _state.FIELD_WAREHOUSE_KIND
        elif kind in CROPS or kind in MATERIALS:
            grid[(r - 1) * 4 + c - 1] = ITEMS.index(kind)
        else:
            f.err(
                line,
                "field",
                f"must be 'warehouse', a crop {list(CROPS)} or a material {list(MATERIALS)}, "
                f"got {kind!r}",
            )
    if grid[0] != _state.FIELD_WAREHOUSE_KIND:
        raise DataError(f"{f.name}: exactly one warehouse, at (1,1), is needed (§13.8)")
    return grid


_SETUP_INTS = {  # key: (lo, hi)
    "players_min": (2, 5),
    "players_max": (2, 5),
    "rounds": (1, 6),
    "cards_in_hand_per_round": (5, 5),
    "cards_played_per_round": (1, 5),
    "start_pesos": (0, 500),
    "start_materials_chosen": (0, 6),
    "start_crops_chosen": (0, 6),
    "start_vp": (0, 0),
    "plantation_rows": (3, 3),
    "plantation_cols": (4, 4),
    "plantation_yield_per_field": (0, 5),
    "worker_free_crop_fields": (0, 6),
    "irrigation_water_per_extra_crop_field": (0, 5),
    "trader_alt_material_count": (0, 5),
    "trader_alt_cheapest_crop_count": (0, 5),
    "market_buy_from_supply_price": (0, 100),
    "market_sell_to_supply_price_crop": (0, 100),
    "market_sell_to_supply_price_good": (0, 100),
    "docks": (3, 3),
    "ship_cards": (15, 15),
    "law_cards_per_stack": (6, 6),
    "proposals_enacted_per_round": (2, 2),
    "tax_vp": (0, 20),
    "levy_vp": (0, 20),
    "levy_bonus_vp_if_tax_paid": (0, 20),
    "vote_price_pesos": (1, 10),
    "town_hall_votes": (0, 20),
    "building_tiles": (25, 25),
    "max_copies_of_a_building_per_player": (1, 1),
    "storage_capacity_crops": (0, 60),
    "end_vp_per_building": (0, 20),
    "supply_count_per_crop_kind": (0, 500),
    "supply_count_per_good_kind": (0, 500),
    "supply_count_per_material_kind": (0, 500),
}
_SETUP_TEXT = {
    "setup_differs_by_player_count",
    "phases_per_round",
    "characters",
    "start_player_round_1",
    "start_choice_order",
    "plantation_layout_same_for_all_players",
    "pawn_start_field",
    "black_marker_spaces",
    "start_ships_in_docks",
    "start_ships_at_sea",
    "law_stacks",
    "initial_law_III",
    "initial_law_IV",
    "warehouse_capacity_crops",
    "final_tiebreak",
}
_SETUP_OTHER = {
    "character_votes",
    "architect_alt_vp",
    "mayor_alt_pesos",
    "dock_vp_per_item",
    "initial_law_I",
    "initial_law_II",
    "supply_limited",
    "pesos_limited",
    "coins",
}


def _setup(f):
    vals = {}
    lines = {}
    for line, row in f.rows:
        k = row["key"]
        if k in vals:
            f.err(line, "key", f"key {k!r} appears twice")
        if k not in _SETUP_INTS and k not in _SETUP_TEXT and k not in _SETUP_OTHER:
            f.err(line, "key", f"unknown key {k!r}")
        vals[k] = row["value"]
        lines[k] = line
    missing = sorted((set(_SETUP_INTS) | _SETUP_OTHER) - set(vals))
    if missing:
        raise DataError(f"{f.name}: missing keys {missing}")
    out = {}
    for k, (lo, hi) in _SETUP_INTS.items():
        out[k] = _num(f, lines[k], "value", vals[k], lo, hi, k)

    def ints(key, n, lo, hi):
        parts = vals[key].split(";")
        if len(parts) != n:
            f.err(
                lines[key],
                "value",
                f"{key} must be {n} integers separated by ';', got {vals[key]!r}",
            )
        return [_num(f, lines[key], "value", v, lo, hi, key) for v in parts]

    kv = _kv(f, lines["character_votes"], "value", vals["character_votes"], CHARACTERS)
    if set(kv) != set(CHARACTERS):
        f.err(lines["character_votes"], "value", f"character_votes needs all of {list(CHARACTERS)}")
    out["character_votes"] = [
        _num(f, lines["character_votes"], "value", kv[c], 0, 50, c) for c in CHARACTERS
    ]
    out["architect_alt_vp"] = ints("architect_alt_vp", 2, 0, 20)
    out["mayor_alt_pesos"] = ints("mayor_alt_pesos", 2, 0, 50)
    out["dock_vp_per_item"] = ints("dock_vp_per_item", 3, 0, 20)
    t = vals["initial_law_I"].split()
    if len(t) != 2 or t[0] != "tax" or not t[1].startswith("pesos="):
        f.err(
            lines["initial_law_I"], "value", f"must be 'tax pesos=N', got {vals['initial_law_I']!r}"
        )
    out["initial_tax"] = _num(
        f, lines["initial_law_I"], "value", t[1][6:], 0, 60, "the initial tax"
    )
    t = vals["initial_law_II"].split()
    if len(t) != 2 or t[0] != "levy":
        f.err(
            lines["initial_law_II"],
            "value",
            f"must be 'levy kind=N[;kind=N]', got {vals['initial_law_II']!r}",
        )
    levy = [0] * 8
    for k, v in _kv(f, lines["initial_law_II"], "value", t[1], ITEMS).items():
        levy[ITEMS.index(k)] = _num(f, lines["initial_law_II"], "value", v, 1, 20, f"levy of {k}")
    out["initial_levy"] = levy
    for key in ("supply_limited", "pesos_limited"):
        if vals[key] not in ("true", "false"):
            f.err(lines[key], "value", f"{key} must be true or false, got {vals[key]!r}")
        out[key] = vals[key] == "true"
    coins = vals["coins"].split()[0] if vals["coins"] else ""
    out["coins"] = _num(f, lines["coins"], "value", coins, 0, 30000, "coins")
    out["supply_count"] = (
        [out["supply_count_per_crop_kind"]] * 3
        + [out["supply_count_per_good_kind"]] * 2
        + [out["supply_count_per_material_kind"]] * 3
    )
    if out["rounds"] > 6:
        f.err(
            lines["rounds"], "value", "at most 6 rounds: each law stack reveals one card per round"
        )
    out["_lines"] = lines
    return out


def _check_limits(spec, players, supply_limited, pesos_limited):
    """A limited supply / bank must cover what setup hands out, or the initial state would hold a
    negative supply or bank (refused, naming the count's row in cuba_setup.csv)."""
    su = spec["setup"]
    lines = su["_lines"]

    def err(key, msg):
        raise DataError(
            f"cuba_setup.csv row {lines[key]}, column value: {key} {su[key]} is too small for "
            f"{players} players: {msg}"
        )

    if pesos_limited and su["coins"] < players * su["start_pesos"]:
        err(
            "coins",
            f"the limited bank must pay {players} x start_pesos {su['start_pesos']} = "
            f"{players * su['start_pesos']}",
        )
    if not supply_limited:
        return
    covered = [m["start_covered"] for m in spec["market"]]
    for k, name in enumerate(CARGO):
        key = "supply_count_per_crop_kind" if name in CROPS else "supply_count_per_good_kind"
        if su[key] < covered[k]:
            err(
                key,
                f"the limited supply must fill the {covered[k]} market spaces of {name} "
                f"(cuba_market.csv, start_covered)",
            )
    crops = sum(su["supply_count_per_crop_kind"] - covered[k] for k in range(len(CROPS)))
    if crops < players * su["start_crops_chosen"]:
        err(
            "supply_count_per_crop_kind",
            f"after the market the limited supply holds {crops} crops, fewer than "
            f"{players} x start_crops_chosen {su['start_crops_chosen']}",
        )
    materials = len(MATERIALS) * su["supply_count_per_material_kind"]
    if materials < players * su["start_materials_chosen"]:
        err(
            "supply_count_per_material_kind",
            f"the limited supply holds {materials} materials, fewer than "
            f"{players} x start_materials_chosen {su['start_materials_chosen']}",
        )


def load_component_data(folder=None) -> dict:
    """Read and validate the six data files (the shipped ones, or a user's folder)."""
    fs = _read_files(folder)
    spec = {
        "buildings": _buildings(fs["cuba_buildings.csv"]),
        "ships": _ships(fs["cuba_ships.csv"]),
        "laws": _laws(fs["cuba_laws.csv"]),
        "market": _market(fs["cuba_market.csv"]),
        "plantation": _plantation(fs["cuba_plantation.csv"]),
        "setup": _setup(fs["cuba_setup.csv"]),
    }
    status = {}
    for name, f in fs.items():
        key = "key" if name == "cuba_setup.csv" else ("item" if name == "cuba_market.csv" else "id")
        rows = []
        for _line, row in f.rows:
            if row["status"] == "provisional":
                rows.append(
                    f"{row['row']},{row['col']}" if name == "cuba_plantation.csv" else row[key]
                )
        status[name] = {"origin": f.origin, "provisional": rows}
    spec["status"] = status
    return spec


_BUNDLED = None


def _bundled():
    global _BUNDLED
    if _BUNDLED is None:
        _BUNDLED = load_component_data(None)
    return _BUNDLED


class CubaGame(Game):
    """Cuba for 2-5 players (eggertspiele 2007).

    Options:
        players: 2..5 (default 4).
        start_player: the round-1 start player's seat, or None (default) for the chance
            node that draws him (C1, D53).
        data: a folder with user data files (``cuba_*.csv``), or None for the shipped set.
        supply_limited, pesos_limited: the physical counts of items / coins (E.4); None
            (default) takes the value of ``cuba_setup.csv`` (false in the shipped set).
    """

    _state = _state  # the compiled state module (Game.state_from_dict reads through it)
    name = "cuba"

    def __init__(
        self,
        players: int = 4,
        start_player=None,
        data=None,
        supply_limited=None,
        pesos_limited=None,
    ):
        players = self._check_players(players)
        if start_player is not None:
            if isinstance(start_player, bool):
                raise TypeError("start_player must be a seat (int) or None, got bool")
            try:
                start_player = operator.index(start_player)
            except TypeError:
                raise TypeError(
                    f"start_player must be a seat (int) or None, got {type(start_player).__name__}"
                ) from None
            if not 0 <= start_player < players:
                raise ValueError(
                    f"start_player must be a seat 0..{players - 1} or None, got {start_player}"
                )
        for name, v in (("supply_limited", supply_limited), ("pesos_limited", pesos_limited)):
            if v is not None and not isinstance(v, bool):
                raise TypeError(f"{name} must be a bool or None, got {type(v).__name__}")
        spec = _bundled() if data is None else load_component_data(data)
        self._spec = spec
        self._data = None if data is None else str(data)
        self._players = players
        self._start = start_player
        self._supply_limited = (
            spec["setup"]["supply_limited"] if supply_limited is None else supply_limited
        )
        self._pesos_limited = (
            spec["setup"]["pesos_limited"] if pesos_limited is None else pesos_limited
        )
        _check_limits(spec, players, self._supply_limited, self._pesos_limited)
        self._tables = _state.pack_tables(spec)
        self._ship_ids = tuple(s["id"] for s in spec["ships"])
        self._law_ids = tuple(x["id"] for x in spec["laws"])
        self._action_names = _state.action_names(self._ship_ids, self._law_ids)
        self._lookup = {name.lower(): a for a, name in enumerate(self._action_names)}

    # --- parameters ---------------------------------------------------------
    def options(self) -> dict:
        return {
            "players": self._players,
            "start_player": self._start,
            "data": self._data,
            "supply_limited": self._supply_limited,
            "pesos_limited": self._pesos_limited,
        }

    def _option_bits(self) -> int:
        return (_state.OPTION_SUPPLY_LIMITED if self._supply_limited else 0) | (
            _state.OPTION_PESOS_LIMITED if self._pesos_limited else 0
        )

    def _key(self):
        return (super()._key(), self._tables)

    def _start_option(self) -> int:
        return -1 if self._start is None else self._start

    def num_distinct_actions(self) -> int:
        return _state.NUM_DISTINCT_ACTIONS

    def max_chance_outcomes(self) -> int:
        return _state.MAX_CHANCE_OUTCOMES

    def observation_tensor_shape(self) -> tuple:
        return (_state.observation_size(self._players),)

    def observation_layout(self) -> list:
        """The observation's features in order (``caribsim._obs.Feature``/``Block`` rows with
        their true bounds; docs/cuba.md)."""
        return _observation_layout(self)

    def information_state_tensor_shape(self) -> tuple:
        return self.observation_tensor_shape()

    def ship_ids(self) -> tuple:
        return self._ship_ids

    def law_ids(self) -> tuple:
        return self._law_ids

    def component_data(self) -> dict:
        """The validated component data this game uses (a copy)."""
        spec = {k: v for k, v in self._spec.items() if k != "status"}
        spec["setup"] = {k: v for k, v in spec["setup"].items() if k != "_lines"}
        return json.loads(json.dumps(spec))

    def component_data_status(self) -> dict:
        """Per data file: where it came from ('bundled' or the user's path) and the ids of the
        rows marked ``status=provisional`` (values chosen for this engine because the printed
        ones are not available; see the README's Cuba section)."""
        return json.loads(json.dumps(self._spec["status"]))

    def action_to_string(self, action: int) -> str:
        a = _state._int_in(action, "action", 0, _state.NUM_DISTINCT_ACTIONS - 1)
        return self._action_names[a]

    def string_to_action(self, name: str) -> int:
        key = self._action_key(name)
        if key not in self._lookup:
            raise ValueError(f"unknown action name {name!r}; see docs/cuba.md")
        return self._lookup[key]

    # --- states -------------------------------------------------------------
    def new_initial_state(self, seed: int = 0) -> CubaState:
        """The position at the start of setup (§3): the ship draws, the start player (if
        random) and the proposals are chance nodes; the starting items are decisions."""
        return _state.new_state(
            self, self._tables, self._players, self._option_bits(), self._start_option(), seed
        )


def _make_game(options):
    return CubaGame(**options)


# --------------------------------------------------------------------------------------
# The observation layout and its true bounds (the order of write_observation in _core.pyx;
# the table in docs/cuba.md is generated from this and checked by the tests)
# --------------------------------------------------------------------------------------
VP_TRACK = 80  # the published board's VP track runs 0-80: the cap of the VP features
MAX_BID = 200  # bids are 0..200 pesos (decision X3)
UNLIMITED = 127  # a building without a per-round limit (the C constant)


def _observation_layout(game):
    from caribsim._obs import INF, Block, Feature

    n = game._players
    spec = game._spec
    su = spec["setup"]
    items = _state.ITEM_NAMES
    supply = list(su["supply_count"])
    coins = su["coins"]
    pesos_high = coins if game._pesos_limited else INF
    item_high = supply if game._supply_limited else INF
    crop_high = supply[:3] if game._supply_limited else INF
    bid_high = min(MAX_BID, coins) if game._pesos_limited else MAX_BID
    vote_price = su["vote_price_pesos"]
    # two biddings at most (the bid and one re-bid of the tied, CU-8.6); all paid pesos
    paid = min(2 * MAX_BID, coins) if game._pesos_limited else 2 * MAX_BID
    bought = paid // vote_price if vote_price > 0 else paid
    votes = max(su["character_votes"]) + su["town_hall_votes"] + bought
    nb = len(spec["buildings"])
    nf = len(spec["plantation"])
    crop_fields = [f for f, kind in enumerate(spec["plantation"]) if 0 <= kind < 3]
    nships = len(spec["ships"])
    rounds = su["rounds"]
    market = spec["market"]
    slots_max = [max(s["slots"][k] for s in spec["ships"]) for k in range(5)]
    ship_total = max(sum(s["slots"]) for s in spec["ships"])
    limits = [UNLIMITED if b["limit"] is None else b["limit"] for b in spec["buildings"]]
    pick_max = max([*limits, su["storage_capacity_crops"], 1])
    player = (
        Feature("pesos", 1, 0, pesos_high, coins, "unlimited bank (D46); cap: the 60 coins"),
        Feature("vp", 1, 0, INF, VP_TRACK, "no finite bound in the rules; cap: the VP track 0-80"),
        Feature(
            "yard",
            len(items),
            0,
            item_high,
            supply,
            "per item; unlimited supply (D46); cap: the physical count",
        ),
    )
    for k in range(3):
        player += (
            Feature(
                f"{items[k]} warehouse",
                1,
                0,
                crop_high[k] if game._supply_limited else INF,
                supply[k],
                "unlimited supply; cap: the physical count",
            ),
            Feature(
                f"{items[k]} storage",
                1,
                0,
                su["storage_capacity_crops"],
                note="the Storage's capacity",
            ),
        )
    fields = ()
    for f in range(nf):
        warehouse = spec["plantation"][f] == 8  # FIELD_WAREHOUSE: no building there
        fields += (
            Feature(f"field {f} pawn", 1),
            Feature(
                f"field {f} building one-hot",
                nb,
                0,
                0 if warehouse else 1,
                note="the warehouse field takes no building" if warehouse else "",
            ),
        )
    player += (
        *fields,
        Feature("hand", 5),
        Feature("4th card one-hot", 5),
        Feature("last veto stack one-hot", 4),
        Feature("paid tax", 1),
        Feature("bought votes", 1, 0, bought, note="bid and re-bid, 200 pesos each at most"),
        Feature("votes", 1, 0, votes, note="character + Town hall + bought"),
        Feature("has bid", 1),
        Feature("own bid", 1, 0, bid_high, note="0..200 (X3)"),
        Feature("to act", 1),
        Feature("start player", 1),
        Feature("town hall used", 1),
        Feature("tied", 1),
        Feature("parliament winner", 1),
    )
    layout = [
        Block("player", 5, player, present=n),
        Feature("round one-hot", 12, 0, [1 if r < rounds else 0 for r in range(12)]),
        Feature("phase one-hot", 7),
        Feature("step one-hot", 22),
        Feature("lap", 1, 0, su["cards_played_per_round"]),
        Feature("turn", 1, 0, n),
        Feature("character one-hot", 5),
        Feature("black markers", 6),
    ]
    for k in range(5):
        prices = market[k]["prices"]
        layout += [
            Feature(f"{items[k]} tokens", 1, 0, len(prices), note="spaces of the track"),
            Feature(
                f"{items[k]} buy price",
                1,
                min([*prices, su["market_buy_from_supply_price"]]),
                max([*prices, su["market_buy_from_supply_price"]]),
            ),
            Feature(
                f"{items[k]} sell price",
                1,
                min(
                    [
                        *prices,
                        su[
                            "market_sell_to_supply_price_crop"
                            if k < 3
                            else "market_sell_to_supply_price_good"
                        ],
                    ]
                ),
                max(
                    [
                        *prices,
                        su[
                            "market_sell_to_supply_price_crop"
                            if k < 3
                            else "market_sell_to_supply_price_good"
                        ],
                    ]
                ),
            ),
        ]
    dock = (Feature("ship one-hot", nships),)
    for k in range(5):
        dock += (
            Feature(f"{items[k]} cargo", 1, 0, slots_max[k], note="the ships' slots"),
            Feature(f"{items[k]} free slots", 1, 0, slots_max[k]),
        )
    layout += [
        Block("dock", 3, dock, desc="one block per dock 1..3"),
        Feature("at sea one-hot", nships),
        Block(
            "ship card",
            nships,
            (Feature("never seen", 1), Feature("returned position", 1, 0, nships, note="1 = next")),
            desc="one block per ship card (cuba_ships.csv order)",
        ),
        Block(
            "law card",
            len(spec["laws"]),
            (
                Feature("in force", 1),
                Feature("proposed", 1),
                Feature("vetoed", 1),
                Feature("revealed", 1),
            ),
            desc="one block per law card (cuba_laws.csv order)",
        ),
    ]
    layout += [
        Feature("initial tax in force", 1),
        Feature("initial levy in force", 1),
        Feature("re-bid", 1),
        Feature("setup items left", 1, 0, su["start_materials_chosen"] + su["start_crops_chosen"]),
        Feature("setup last item + 1", 1, 0, len(items)),
        Feature("harvest count", 1, 0, len(crop_fields), note="the crop fields of the plantation"),
        Feature("harvest last field + 1", 1, 0, max(crop_fields, default=-1) + 1),
        Feature(
            "harvest activated fields",
            nf,
            0,
            [1 if f in crop_fields else 0 for f in range(nf)],
            note="crop fields only",
        ),
        Feature("trade last + 1", 1, 0, 10, note="sell k = k, buy k = 5 + k"),
        Feature("sold kinds", 5),
        Feature("building to place one-hot", nb),
        Feature("foreman activated / used", 2 * (nb + 1)),
        Feature("building in use one-hot", nb),
        Feature("picks left", 1, 0, pick_max, note="the largest per-round limit (127: unlimited)"),
        Feature("picks made", 1, 0, pick_max),
        Feature("pick last item", 1, 0, len(items) - 1),
        Feature("black market item + 1", 1, 0, len(items)),
        Feature("loading context one-hot", 3),
        Feature("loading dock + 1", 1, 0, 3),
        Feature("loads left", 1, 0, UNLIMITED, note="Mayor: unlimited (127); offices 1 or 2"),
        Feature("loads made", 1, 0, max(ship_total, 2), note="one ship's slots"),
        Feature("last loaded kind + 1", 1, 0, 5),
    ]
    return layout

"""Expansion setup (§8.1-§8.3, E.3 #1, E.4): the building draft as player decisions (T49, T50),
the user-given building set and its validation, the all-31 variant, the action space and the
dict codec of expansion games.

Numbers are written out from the rules reference: draft slots (§8.2) small costs
1,2,2,3,4,5,5,6,7,8,8,9 and five large of cost 10; copies 2 per small violet kind (2p: 1),
1 per large kind; 12 forests.
"""

from __future__ import annotations

import copy
import csv
import pickle
import random
from pathlib import Path

import pytest
from pr_scenario import act, legal

import caribsim

_RULES_CSV = Path("/work/shared/rules/data/puerto_rico_buildings.csv")
if not _RULES_CSV.exists():
    _RULES_CSV = Path(caribsim.__file__).parent / "data" / "puerto_rico_buildings.csv"
with open(_RULES_CSV, newline="") as f:
    ROWS = {r["id"]: r for r in csv.DictReader(f)}
VIOLET = [b for b, r in ROWS.items() if r["kind"] in ("small_violet", "large_violet")]
SMALL_SLOT_COSTS = [1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 8, 9]
BASE_SET = [b for b in VIOLET if ROWS[b]["set"] == "base"]
# a legal hand-made set: the base set with 5 expansion kinds swapped in (same costs)
CUSTOM_SET = [
    b for b in BASE_SET if b not in ("small_market", "hacienda", "hospice", "harbor", "guild_hall")
]
CUSTOM_SET += ["aqueduct", "forest_house", "guest_house", "library", "statue"]


def drafted_game(players, seed=0):
    g = caribsim.load_game("puerto_rico", players=players, expansion=True)
    st = g.new_initial_state(seed=seed)
    while st.is_chance_node():
        st.resolve_chance()
    return g, st


def draft_names(st):
    return {n[len("draft ") :] for n in legal(st) if n.startswith("draft ")}


def label(bid):
    return ROWS[bid]["name"].lower()


# --------------------------------------------------------------------------------------
# the draft (§8.2)
# --------------------------------------------------------------------------------------
def test_s8_2_draft_starts_after_the_face_up_draws_with_the_first_governor():
    _g, st = drafted_game(3)
    assert st.step_name() == "draft" and st.phase() == "setup" and st.current_player() == 0
    assert draft_names(st) == {label(b) for b in VIOLET}  # every violet kind has an empty slot
    assert legal(st) == {"draft " + label(b) for b in VIOLET}  # nothing else (no guests, no pass)


def test_T49_draft_exclusions():
    _g, st = drafted_game(3)
    act(st, "draft office")  # A: a cost-5 slot
    assert st.current_player() == 1
    assert "trading post" not in draft_names(st) and "office" not in draft_names(st)
    act(st, "draft church")  # B: the second cost-5 slot
    names = draft_names(st)
    assert not {"large market", "trading post", "office", "church"} & names
    act(st, "draft forest house")  # C
    assert st.current_player() == 0
    names = draft_names(st)
    assert "hacienda" not in names and {"construction hut", "black market"} <= names


def test_s8_2_czech_example_black_market_then_hacienda_closes_cost_2():
    _g, st = drafted_game(4)
    act(st, "draft black market", "draft hacienda")
    names = draft_names(st)
    assert not {"construction hut", "forest house", "black market", "hacienda"} & names


def test_s8_2_full_draft_fills_12_small_and_5_large_slots_then_the_round_starts():
    _g, st = drafted_game(4, seed=3)
    rng = random.Random(5)
    seats = []
    while st.step_name() == "draft":
        seats.append(st.current_player())
        st.apply_action(rng.choice(st.legal_actions()))
    assert seats == [i % 4 for i in range(17)]  # in turn from the Governor
    d = st.to_dict()
    chosen = d["expansion"]["violet_in_play"]
    small = sorted(int(ROWS[b]["cost"]) for b in chosen if ROWS[b]["kind"] == "small_violet")
    large = [b for b in chosen if ROWS[b]["kind"] == "large_violet"]
    assert small == SMALL_SLOT_COSTS and len(large) == 5
    assert not {"hacienda", "forest_house"} <= set(chosen) and not {
        "office",
        "trading_post",
    } <= set(chosen)
    for b in VIOLET:
        want = (2 if ROWS[b]["kind"] == "small_violet" else 1) if b in chosen else 0
        assert d["buildings"][b] == want, b
    assert d["buildings"]["coffee_roaster"] == 3 and d["buildings"]["small_indigo_plant"] == 4
    assert d["phase"] == "role_selection" and d["player"] == 0


def test_T50_two_players_draft_one_copy_each():
    _g, st = drafted_game(2, seed=1)
    rng = random.Random(2)
    while st.step_name() == "draft":
        st.apply_action(rng.choice(st.legal_actions()))
    d = st.to_dict()
    assert len(d["expansion"]["violet_in_play"]) == 17
    assert all(d["buildings"][b] == 1 for b in d["expansion"]["violet_in_play"])
    assert d["buildings"]["indigo_plant"] == 2


def test_T50_a_violet_building_is_built_by_one_player_only_in_2p():
    g = caribsim.load_game("puerto_rico", players=2, expansion=True, buildings=CUSTOM_SET)
    st = g.new_initial_state(seed=0)
    while st.is_chance_node():
        st.resolve_chance()
    d = st.to_dict()
    d["boards"][0]["doubloons"] = d["boards"][1]["doubloons"] = 10
    st = g.state_from_dict(d)
    act(st, "role builder", "build library")
    assert "build library" not in legal(st) and st.current_player() == 1


# --------------------------------------------------------------------------------------
# options (E.4) and their validation
# --------------------------------------------------------------------------------------
def test_e4_defaults_and_options_dicts():
    base = caribsim.load_game("puerto_rico", players=3)
    assert base.options() == {"players": 3, "all_colonists_and_vp": False}
    assert base.num_distinct_actions() == 143
    g = caribsim.load_game("puerto_rico", players=3, expansion=True)
    assert g.options() == {
        "players": 3,
        "all_colonists_and_vp": False,
        "expansion": True,
        "draft": True,
        "buildings": None,
        "all_31_buildings": False,
    }
    assert (
        caribsim.load_game("puerto_rico", players=3, expansion=True, exclusions=True).options()
        == g.options()
    )
    g = caribsim.load_game("puerto_rico", players=3, expansion=True, buildings=CUSTOM_SET)
    assert g.options()["draft"] is False and sorted(g.options()["buildings"]) == sorted(CUSTOM_SET)
    g = caribsim.load_game("puerto_rico", players=5, expansion=True, all_31_buildings=True)
    assert g.options()["draft"] is False and g.options()["all_31_buildings"] is True


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        (dict(draft=True), ValueError, "need expansion=True"),
        (dict(all_31_buildings=True), ValueError, "need expansion=True"),
        (dict(expansion=True, draft="yes"), TypeError, "draft must be a bool"),
        (dict(expansion=True, all_31_buildings=1), TypeError, "all_31_buildings must be a bool"),
        (dict(expansion=True, draft=False), ValueError, "draft=False needs buildings"),
        (dict(expansion=True, draft=True, all_31_buildings=True), ValueError, "cannot be combined"),
        (
            dict(expansion=True, all_31_buildings=True, buildings=CUSTOM_SET),
            ValueError,
            "do not give buildings",
        ),
        (dict(expansion=True, buildings="library"), TypeError, "list of violet building ids"),
        (
            dict(expansion=True, buildings=CUSTOM_SET[:-1]),
            ValueError,
            "exactly 5 violet kind(s) of cost 10",
        ),
        (
            dict(expansion=True, buildings=[*CUSTOM_SET[:-1], "castle"]),
            ValueError,
            "not a violet building id",
        ),
        (
            dict(expansion=True, buildings=[*CUSTOM_SET[:-1], "coffee_roaster"]),
            ValueError,
            "not a violet building",
        ),
        (
            dict(expansion=True, buildings=[*CUSTOM_SET[:-1], "library"]),
            ValueError,
            "each kind at most once",
        ),
        (
            dict(
                expansion=True,
                buildings=[b for b in CUSTOM_SET if b != "aqueduct"] + ["storehouse"],
            ),
            ValueError,
            "cost 1",
        ),
        (
            dict(
                expansion=True,
                buildings=[b for b in CUSTOM_SET if b != "construction_hut"] + ["hacienda"],
            ),
            ValueError,
            "hacienda and forest_house exclude each other",
        ),
        (
            dict(
                expansion=True,
                buildings=[b for b in CUSTOM_SET if b != "large_market"] + ["trading_post"],
            ),
            ValueError,
            "office and trading_post exclude each other",
        ),
        (dict(expansion=True, buildings=[1] * 17), TypeError, "building id strings"),
        (dict(exclusions=False), ValueError, "exclusions need expansion=True"),
        (dict(exclusions=True), ValueError, "exclusions need expansion=True"),
        (dict(expansion=True, exclusions=0), TypeError, "exclusions must be a bool or None"),
    ],
)
def test_e4_option_validation(kwargs, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
        caribsim.load_game("puerto_rico", players=3, **kwargs)


def test_s8_2_exclusions_false_draft_offers_both_kinds_of_each_pair():
    g = caribsim.load_game("puerto_rico", players=3, expansion=True, exclusions=False)
    st = g.new_initial_state(seed=0)
    while st.is_chance_node():
        st.resolve_chance()
    act(st, "draft office")
    assert "trading post" in draft_names(st)  # the second cost-5 slot is open
    act(st, "draft hacienda")
    assert "forest house" in draft_names(st)  # the second cost-2 slot is open
    act(st, "draft trading post", "draft forest house")
    names = draft_names(st)
    assert (
        not {"office", "trading post", "hacienda", "forest house", "church", "black market"} & names
    )
    d = st.to_dict()
    assert {"office", "trading_post", "hacienda", "forest_house"} <= set(
        d["expansion"]["violet_in_play"]
    )
    assert g.state_from_dict(d) == st and pickle.loads(pickle.dumps(st)) == st
    # the default game does not accept this draft
    strict = caribsim.load_game("puerto_rico", players=3, expansion=True)
    d["options"] = strict.options()
    with pytest.raises(ValueError, match="the draft excludes hacienda together with forest_house"):
        strict.state_from_dict(d)


def test_s8_2_exclusions_false_random_drafts_combine_the_pairs():
    both = {True: 0, False: 0}
    for exclusions in (True, False):
        g = caribsim.load_game("puerto_rico", players=4, expansion=True, exclusions=exclusions)
        for seed in range(60):
            rng = random.Random(seed)
            st = g.new_initial_state(seed=seed)
            while st.is_chance_node():
                st.resolve_chance()
            while st.step_name() == "draft":
                st.apply_action(rng.choice(st.legal_actions()))
            inplay = set(st.to_dict()["expansion"]["violet_in_play"])
            both[exclusions] += {"hacienda", "forest_house"} <= inplay or {
                "office",
                "trading_post",
            } <= inplay
    assert both[True] == 0 and both[False] > 0


def test_s8_2_exclusions_false_given_set_may_hold_both():
    pairs = [b for b in CUSTOM_SET if b not in ("construction_hut", "large_market")] + [
        "hacienda",
        "trading_post",
    ]
    with pytest.raises(ValueError, match="exclusions=False allows both"):
        caribsim.load_game("puerto_rico", players=3, expansion=True, buildings=pairs)
    g = caribsim.load_game(
        "puerto_rico", players=3, expansion=True, buildings=pairs, exclusions=False
    )
    assert g.options()["exclusions"] is False and g.options()["draft"] is False
    assert pickle.loads(pickle.dumps(g)) == g
    st = g.new_initial_state(seed=3)
    while st.is_chance_node():
        st.resolve_chance()
    d = st.to_dict()
    assert sorted(d["expansion"]["violet_in_play"]) == sorted(pairs)
    assert all(
        d["buildings"][b] == 2 for b in ("hacienda", "forest_house", "office", "trading_post")
    )
    result = caribsim.random_playouts(st, 20, seed=1)
    assert len(result.lengths) == 20 and min(result.lengths) > 0


def test_s8_3_1_all_31_buildings_one_copy_each_no_draft_no_exclusions():
    g = caribsim.load_game("puerto_rico", players=5, expansion=True, all_31_buildings=True)
    st = g.new_initial_state(seed=0)
    while st.is_chance_node():
        st.resolve_chance()
    d = st.to_dict()
    assert d["phase"] == "role_selection"
    assert all(d["buildings"][b] == 1 for b in VIOLET)
    assert d["buildings"]["small_sugar_mill"] == 4 and d["expansion"]["forests"] == 12


def test_s8_1_given_set_is_in_play_and_nothing_else():
    g = caribsim.load_game("puerto_rico", players=4, expansion=True, buildings=CUSTOM_SET)
    d = g.new_initial_state(seed=0).to_dict()
    for b in VIOLET:
        assert d["buildings"][b] == (
            (2 if ROWS[b]["kind"] == "small_violet" else 1) if b in CUSTOM_SET else 0
        )


def test_s8_3_2_all_colonists_and_vp_with_the_expansion():
    g = caribsim.load_game("puerto_rico", players=3, expansion=True, all_colonists_and_vp=True)
    d = g.new_initial_state(seed=0).to_dict()
    assert d["colonists"]["supply"] + d["colonists"]["ship"] == 100 and d["vp_chips"] == 122


# --------------------------------------------------------------------------------------
# action space: base ids unchanged, expansion ids appended
# --------------------------------------------------------------------------------------
def test_actions_base_ids_unchanged_and_expansion_ids_appended():
    base = caribsim.load_game("puerto_rico", players=4)
    exp = caribsim.load_game("puerto_rico", players=4, expansion=True)
    n = exp.num_distinct_actions()
    assert n > 143
    names = [exp.action_to_string(a) for a in range(n)]
    assert names[:143] == [base.action_to_string(a) for a in range(143)]
    assert len(set(names)) == n
    assert all(exp.string_to_action(x) == a for a, x in enumerate(names))
    assert names[143] == "draft small market" and "draft cloister" in names
    for x in (
        "forest remove corn",
        "sell coffee to trading post",
        "small wharf sugar",
        "small wharf done",
        "black market vp",
        "black market indigo",
        "black market colonist from san juan",
        "guest to library",
        "guest to quarry",
    ):
        assert x in names
    with pytest.raises(ValueError):
        base.action_to_string(143)
    with pytest.raises(ValueError):
        base.string_to_action("draft library")
    st = exp.new_initial_state(seed=0)
    assert st.legal_actions_mask().shape == (n,)
    assert exp.observation_tensor_shape()[0] > base.observation_tensor_shape()[0]
    assert st.observation_tensor().shape == exp.observation_tensor_shape()


# --------------------------------------------------------------------------------------
# dict codec of expansion games
# --------------------------------------------------------------------------------------
def _mid_game(players=3, seed=4, steps=300):
    g = caribsim.load_game("puerto_rico", players=players, expansion=True)
    st = g.new_initial_state(seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if st.is_terminal():
            break
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    return g, st


def test_dict_round_trip_and_pickle():
    g, st = _mid_game()
    d = st.to_dict()
    assert "expansion" in d and g.state_from_dict(d) == st
    assert pickle.loads(pickle.dumps(st)) == st
    assert g.deserialize_state(st.serialize()).legal_actions() == st.legal_actions()


def _remove_one(d):
    k = max(d["plantations"]["stack"], key=d["plantations"]["stack"].get)
    d["plantations"]["stack"][k] -= 1
    d["expansion"]["removed_plantations"][k] += 1


def _broken(d, fn):
    d = copy.deepcopy(d)
    fn(d)
    return d


@pytest.mark.parametrize(
    "name,fn,msg",
    [
        (
            "forest supply +1",
            lambda d: d["expansion"].__setitem__("forests", d["expansion"]["forests"] - 1),
            "forests are not conserved",
        ),
        (
            "removed plantation without forest",
            lambda d: _remove_one(d),
            "removes one face-up plantation",
        ),
        (
            "building not in the set",
            lambda d: d["buildings"].__setitem__(
                next(b for b in VIOLET if b not in d["expansion"]["violet_in_play"]), 1
            ),
            "not conserved",
        ),
        ("unknown expansion key", lambda d: d["expansion"].__setitem__("gold", 1), "unknown keys"),
        (
            "violet list wrong",
            lambda d: d["expansion"].__setitem__("violet_in_play", ["castle"]),
            "violet_in_play",
        ),
        ("missing expansion", lambda d: d.pop("expansion"), "missing key 'expansion'"),
        (
            "small wharf count outside its step",
            lambda d: d["expansion"].__setitem__("small_wharf_count", 2),
            "small_wharf_count",
        ),
    ],
)
def test_dict_validation_of_expansion_fields(name, fn, msg):
    g, st = _mid_game()
    d = st.to_dict()
    with pytest.raises(ValueError, match=msg):
        g.state_from_dict(_broken(d, fn))


def test_base_game_rejects_expansion_fields():
    g = caribsim.load_game("puerto_rico", players=3)
    d = g.new_initial_state(seed=0).to_dict()
    assert "expansion" not in d
    d["expansion"] = {}
    with pytest.raises(ValueError, match="unknown keys"):
        g.state_from_dict(d)


def test_draft_position_round_trip_and_order_check():
    g, st = drafted_game(3)
    act(st, "draft library")
    d = st.to_dict()
    assert d["expansion"]["violet_in_play"] == ["library"] and g.state_from_dict(d) == st
    bad = copy.deepcopy(d)
    bad["player"] = 0
    with pytest.raises(ValueError, match="in the draft seat 1 picks next"):
        g.state_from_dict(bad)
    bad = copy.deepcopy(d)
    bad["expansion"]["violet_in_play"] = ["library", "university", "harbor"]
    with pytest.raises(ValueError, match="slot"):
        g.state_from_dict(bad)

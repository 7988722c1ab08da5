"""True per-feature observation bounds and the normalised view (issue "Embedding contracts",
item 9).

- random games (VectorGame + sample_legal, every seat at every step, and the final
  observations) never leave ``observation_bounds()``; the normalised view is in [0, 1];
- adversarial positions push features to their bounds (and past the caps of the unbounded
  ones, where the normalised view clips);
- every finite ``high`` is reached by random play, a chance node or a scenario, or is named in
  ``UNREACHED`` with the argument why no test position reaches it;
- the docs hold exactly the generated layout tables, whose rows add up to the length;
- the environments' spaces contain every observation in both modes.
"""

from __future__ import annotations

import pathlib
import warnings

import cuba_scenario
import numpy as np
import pr_scenario
import pry_scenario
import pytest
from extras import need

import caribsim
from caribsim._obs import DOC_TABLES, TABLE_BEGIN, TABLE_END, Block, layout_table, parse_table

ROOT = pathlib.Path(__file__).resolve().parents[2]


def doc_table(name):
    """The docs' table of ``name`` (as docs/gen_observation_tables.py writes it)."""
    options = DOC_TABLES[name][1]
    return layout_table([caribsim.load_game(name, players=n, **options) for n in range(2, 6)])


CONFIGS = [
    ("puerto_rico", {}),
    ("puerto_rico", {"all_colonists_and_vp": True}),
    ("puerto_rico", {"expansion": True}),  # with the draft
    ("puerto_rico", {"expansion": True, "all_31_buildings": True}),  # without the draft
    ("port_royal", {}),
    ("port_royal", {"require_expedition": True}),
    ("cuba", {}),
    ("cuba", {"supply_limited": True, "pesos_limited": True}),
]
CASES = [(name, opts, n) for name, opts in CONFIGS for n in range(2, 6)]


def _id(case):
    name, opts, n = case
    return f"{name}-{'-'.join(opts) or 'default'}-{n}p"


def _rows(game):
    """(feature name, start, count) per feature, blocks unrolled (names without the seat)."""
    out, i = [], 0
    for item in game.observation_layout():
        if isinstance(item, Block):
            for _ in range(item.repeat):
                for f in item.features:
                    out.append((f"{item.name}.{f.name}", i, f.count))
                    i += f.count
        else:
            out.append((item.name, i, item.count))
            i += item.count
    return out


def _index(game, name, rep=0, k=0):
    """The entry of feature ``name`` (``block.feature`` inside a block), in block ``rep``."""
    hits = [(start, count) for nm, start, count in _rows(game) if nm == name]
    start, count = hits[rep]
    assert 0 <= k < count
    return start + k


def _random_extremes(game, steps, n=32, seed=1):
    """Per entry the min and max over random games: every seat's view at every step, and
    the final observations of the episodes that ended. Also checks each batch as it goes."""
    low, high = game.observation_bounds()
    players = game.num_players()
    vg = caribsim.VectorGame(game, n=n, seed=seed)
    mn = np.full(low.shape, np.inf, np.float32)
    mx = np.full(low.shape, -np.inf, np.float32)
    finals = 0

    def take(obs):
        nonlocal mn, mx
        assert obs.shape[1] == low.shape[0]
        bad = (obs < low) | (obs > high)
        assert not bad.any(), f"entries {sorted(set(np.nonzero(bad)[1].tolist()))} out of bounds"
        norm = game.normalize_observation(obs)
        assert np.isfinite(norm).all() and norm.min() >= 0.0 and norm.max() <= 1.0
        mn = np.minimum(mn, obs.min(0))
        mx = np.maximum(mx, obs.max(0))

    for t in range(steps):
        for seat in range(players):
            take(vg.observations(seat=seat))
        done = vg.episodes() > 0
        if done.any() and t % 8 == 0:
            for seat in range(players):
                take(vg.final_observations(seat)[done])
            finals = int(done.sum())
        vg.step(vg.sample_legal())
    assert finals > 0, "no episode finished: raise the step budget"
    return mn, mx


STEPS = {"puerto_rico": 1200, "port_royal": 1000, "cuba": 1500}


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_bounds_have_the_observation_length_and_are_ordered(case):
    name, opts, n = case
    game = caribsim.load_game(name, players=n, **opts)
    low, high = game.observation_bounds()
    caps = game.observation_caps()
    size = game.observation_tensor_shape()[0]
    assert low.shape == high.shape == caps.shape == (size,)
    assert low.dtype == high.dtype == np.float32
    assert (low <= high).all() and np.isfinite(low).all() and np.isfinite(caps).all()
    assert (caps >= low).all() and (caps[np.isfinite(high)] == high[np.isfinite(high)]).all()
    st = game.new_initial_state(seed=3)
    assert len(st.observation_tensor(0)) == size


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_random_games_stay_within_the_bounds(case):
    name, opts, n = case
    game = caribsim.load_game(name, players=n, **opts)
    _random_extremes(game, STEPS[name])


def test_a_bound_below_what_games_reach_is_caught():
    """The random-game check can fail: with the observer's corn bounded by 0 it does."""
    game = caribsim.load_game("puerto_rico", players=3)
    low, high, caps, norm = game._obs_tables()
    tight = high.copy()
    tight[_index(game, "player.goods", 0, 0)] = 0
    game.__dict__["_obs_cache"] = (low, tight, caps, norm)
    with pytest.raises(AssertionError, match="out of bounds"):
        _random_extremes(game, 600)


def test_chance_node_observations_are_in_bounds():
    # the state API also observes chance nodes (VectorGame never stops at one)
    for name, opts, n in CASES:
        game = caribsim.load_game(name, players=n, **opts)
        low, high = game.observation_bounds()
        st = game.new_initial_state(seed=5)
        for _ in range(40):
            for seat in range(n):
                obs = np.asarray(st.observation_tensor(seat), np.float32)
                assert ((obs >= low) & (obs <= high)).all(), (name, opts, n)
            if st.is_terminal():
                break
            if st.is_chance_node():
                st.resolve_chance()
            else:
                st.apply_action(st.legal_actions()[0])


# --------------------------------------------------------------------------------------
# normalisation
# --------------------------------------------------------------------------------------
def test_normalize_maps_the_bounds_to_0_and_1_and_clips_past_the_cap():
    game = caribsim.load_game("puerto_rico", players=4)
    low, high = game.observation_bounds()
    caps = game.observation_caps()
    const = low == caps
    assert np.allclose(game.normalize_observation(low), 0.0)
    assert np.allclose(game.normalize_observation(caps)[~const], 1.0)
    assert np.allclose(game.normalize_observation(caps)[const], 0.0)  # one possible value
    mid = (low + caps) / 2
    assert np.allclose(game.normalize_observation(mid)[~const], 0.5)
    unbounded = ~np.isfinite(high)
    assert unbounded.any()
    far = caps.copy()
    far[unbounded] *= 10  # beyond the cap: clipped at 1
    assert np.allclose(game.normalize_observation(far)[unbounded], 1.0)
    # any batch shape [..., O]; float32 out
    batch = np.stack([np.stack([low, caps])] * 3)  # (3, 2, O)
    out = game.normalize_observation(batch)
    assert out.shape == batch.shape and out.dtype == np.float32
    assert np.allclose(out[:, 0], 0.0)
    with pytest.raises(ValueError):
        game.normalize_observation(np.zeros(len(low) + 1))


def test_vector_game_normalized_observations():
    game = caribsim.load_game("cuba", players=3)
    vg = caribsim.VectorGame(game, n=8, seed=2)
    for _ in range(300):
        vg.step(vg.sample_legal())
    raw = vg.observations(seat=1).copy()
    norm = vg.observations(seat=1, normalized=True)
    assert np.array_equal(norm, game.normalize_observation(raw))
    assert norm.min() >= 0 and norm.max() <= 1
    done = vg.episodes() > 0
    fin = vg.final_observations(0, normalized=True)
    assert np.array_equal(fin[done], game.normalize_observation(vg.final_observations(0)[done]))
    assert not fin[~done].any()


# --------------------------------------------------------------------------------------
# adversarial positions at the bounds
# --------------------------------------------------------------------------------------
def _check_at(state, entries, seat=0):
    """The observation from `seat` is within the bounds and each of `entries` (index ->
    expected normalised value) holds."""
    game = state.game
    low, high = game.observation_bounds()
    obs = np.asarray(state.observation_tensor(seat), np.float32)
    bad = np.flatnonzero((obs < low) | (obs > high))
    assert not bad.size, [(int(i), float(obs[i]), float(low[i]), float(high[i])) for i in bad]
    norm = game.normalize_observation(obs)
    for i, v in entries.items():
        assert norm[i] == pytest.approx(v), (i, obs[i], low[i], high[i])
    return obs


def test_puerto_rico_all_vp_chips_and_all_goods_of_a_kind():
    sc = pr_scenario.Scenario(players=4)
    game = sc.game
    pool = sc.d["vp_chips"]
    sc.vp(0, pool)  # every VP chip: at the cap
    sc.goods(1, corn=sc.d["goods"]["corn"])  # every corn barrel
    sc.doubloons(2, 5000)  # far past the cap: clipped
    d = sc.dict_at_role_selection(0)
    d["end_triggered"] = True  # the last chip taken triggers the end
    st = game.state_from_dict(d)
    hi = game.observation_bounds()[1]
    obs = _check_at(
        st,
        {
            _index(game, "player.vp chips", 0): 1.0,
            _index(game, "vp pool"): 0.0,
            _index(game, "player.goods", 1, 0): 1.0,
            _index(game, "player.doubloons", 2): 1.0,
        },
    )
    assert obs[_index(game, "player.goods", 1, 0)] == hi[_index(game, "player.goods", 1, 0)] == 10
    assert (
        obs[_index(game, "player.doubloons", 2)]
        > game.observation_caps()[_index(game, "player.doubloons", 2)]
    )


def test_puerto_rico_full_ships_and_a_full_trading_house():
    sc = pr_scenario.Scenario(players=5)
    game = sc.game
    caps = game.cargo_ship_capacities()
    sc.ships(("corn", caps[0]), ("indigo", caps[1]), ("sugar", caps[2]))
    sc.building(0, "office", colonists=1)
    sc.house(coffee=4)  # four of a kind: the Office's doing
    st = sc.at_role_selection(0)
    entries = {_index(game, f"ship {i} load"): 1.0 for i in range(3)}
    entries[_index(game, "coffee trading house")] = 1.0
    entries[_index(game, "trading house count")] = 1.0
    _check_at(st, entries)


def test_puerto_rico_colonists_and_island():
    sc = pr_scenario.Scenario(players=2)
    game = sc.game
    sc.clear_island(0)
    sc.tiles(0, "quarry", 5)  # every quarry of the 2p game
    sc.colonists_on(0, "quarry", 5)
    st = sc.at_role_selection(0)
    _check_at(
        st,
        {
            _index(game, "player.island tiles", 0, 5): 1.0,
            _index(game, "player.manned tiles", 0, 5): 1.0,
            _index(game, "quarries"): 0.0,
        },
    )


def test_port_royal_every_sailor_and_pirate():
    fighters = [
        r["id"] for r in pry_scenario.core.CARD_ROWS if r["ability"] in ("SAILOR", "PIRATE")
    ]
    cards = [c for c in fighters for _ in range(int(pry_scenario.ROWS[c]["count"]))]
    st = pry_scenario.make(4, display={1: cards}, coins={0: 30})
    game = st.game
    obs = _check_at(st, {_index(game, "player.swords", 1): 1.0}, seat=0)
    assert obs[_index(game, "player.swords", 1)] == 16


def test_cuba_pesos_items_and_vp_past_their_caps():
    game, st = cuba_scenario.start(3)

    def fn(d):
        d["boards"][0]["pesos"] = 500
        d["boards"][0]["vp"] = 200
        d["boards"][1]["yard"]["sugar"] = 18  # the physical count: the cap
        cuba_scenario.give_building(d["boards"][1], "storage", "1,2")
        d["boards"][1]["storage"]["citrus"] = 3  # the Storage's capacity

    st = cuba_scenario.edit(st, fn)
    _low, high = game.observation_bounds()
    assert not np.isfinite(high[_index(game, "player.pesos", 0)])
    _check_at(
        st,
        {
            _index(game, "player.pesos", 0): 1.0,
            _index(game, "player.vp", 0): 1.0,
            _index(game, "player.yard", 1, 0): 1.0,
            _index(game, "player.citrus storage", 1): 1.0,
        },
        seat=0,
    )


def test_cuba_limited_game_is_finite():
    game = caribsim.load_game("cuba", players=4, supply_limited=True, pesos_limited=True)
    _low, high = game.observation_bounds()
    finite = np.isfinite(high)
    # only VP is unbounded when the bank and the supply are the physical ones
    names = {nm for nm, start, count in _rows(game) if not finite[start : start + count].all()}
    assert names == {"player.vp"}
    assert high[_index(game, "player.pesos")] == 60


# --------------------------------------------------------------------------------------
# every finite bound is reached, or argued
# --------------------------------------------------------------------------------------
UNREACHED = {
    # Puerto Rico: bounds from the components that no short random game reaches
    "player.island tiles": "a player holding every loose tile of a kind (11-12) needs the other "
    "players never to take one; the quarry entry is reached by a scenario",
    "player.manned tiles": "as the island tiles",
    "player.san juan": "all colonists in one San Juan: the bound is the colonist count",
    "player.goods": "a player with every barrel of a kind (reached by a scenario for corn)",
    "player.building colonists": "a Guest house's 2 guests, a production building's 3 colonists",
    "player.vp chips": "",
    "player.doubloons": "",
    "colonist ship": "the ship can hold only what the supply gave: the bound is the colonist count",
    "to place": "one player placing every colonist: the bound is the colonist count",
    "last mayor slot": "placing on the last building needs a player owning it with a colonist to place",
    "corn discard": "every loose plantation of a kind in the discard",
    "indigo discard": "",
    "sugar discard": "",
    "tobacco discard": "",
    "coffee discard": "",
    "corn face-up": "N + 1 face-up of one kind",
    "indigo face-up": "",
    "sugar face-up": "",
    "tobacco face-up": "",
    "coffee face-up": "",
    "corn stack": "",
    "indigo stack": "",
    "sugar stack": "",
    "tobacco stack": "",
    "coffee stack": "",
    "corn removed": "every loose plantation of a kind removed by forests",
    "indigo removed": "",
    "sugar removed": "",
    "tobacco removed": "",
    "coffee removed": "",
    "corn trading house": "four of a kind need the Office (a scenario reaches coffee)",
    "indigo trading house": "",
    "sugar trading house": "",
    "tobacco trading house": "",
    "coffee trading house": "",
    "trading house count": "reached by a scenario",
    "corn craftsman amount": "one Craftsman receiving every barrel of a kind",
    "indigo craftsman amount": "",
    "sugar craftsman amount": "",
    "tobacco craftsman amount": "",
    "coffee craftsman amount": "",
    "corn single barrels kept": "4 single barrels of one kind need a Storehouse",
    "indigo single barrels kept": "",
    "sugar single barrels kept": "",
    "tobacco single barrels kept": "",
    "coffee single barrels kept": "",
    "small wharf goods": "a Small-wharf shipment of every good of the game",
    "ship 0 load": "a full ship is emptied at the end of the Captain phase (reached by a scenario)",
    "ship 1 load": "",
    "ship 2 load": "",
    "selections done": "the value after the round's last selection is never a decision state",
    "idle captain turns": "n idle turns end the Captain phase at once",
    "privilege left": "the Library's doubled privilege",
    "black market items left": "",
    "black market last + 1": "",
    "barrels left": "",
    "last keep + 1": "",
    "warehouse kinds left": "both warehouses occupied",
    "last warehouse kind + 1": "",
    "colonist supply": "its setup value, left at once by the first Mayor",
    "step one-hot (base steps)": "the chance steps are resolved by VectorGame",
    "step one-hot (expansion steps)": "",
    "phase one-hot": "the setup phase: chance only",
    "last tile one-hot": "",
    "last building one-hot": "",
    "player.owns building": "",
    "building supply": "",
    "player.used wharf": "",
    "small wharf used.small wharf used": "",
    "to draw": "only chance nodes have plantations to draw",
    "quarries": "",
    # Port Royal
    "player.coins": "every card as coins: the bound is the deck",
    "player.vp": "",
    "player.swords": "reached by a scenario",
    "player.expeditions": "every expedition",
    "player.display per variant": "every copy of a person",
    "harbour per variant": "",
    "unseen per variant": "",
    "discard per variant": "",
    "pending card one-hot": "",
    "step one-hot": "the chance step is resolved by VectorGame",
    "draw pile": "",
    "discard pile": "",
    "revealed this turn": "127: the counter's saturation",
    "picks left": "3 + every Governor (Cuba: as picks made)",
    "take-turns done": "",
    # Cuba
    "player.citrus storage": "reached by a scenario",
    "player.sugar storage": "",
    "player.tobacco storage": "",
    "player.bought votes": "400: two bids of 200 pesos",
    "player.votes": "",
    "player.own bid": "a 200-peso bid",
    "turn": "",
    "ship card.returned position": "every ship returned",
    "harvest count": "every crop field",
    "harvest last field + 1": "",
    "picks made": "127: an unlimited building's counter",
    # "picks left": one key for both games, argued with Port Royal's above
    "black market item + 1": "",
    "loads made": "a ship's every slot at once",
    "loads left": "127: the Mayor's unlimited counter",
    "player.pesos": "",
    "player.yard": "",
    "lap": "",
    "dock.sugar cargo": "",
    "dock.citrus cargo": "",
    "dock.tobacco cargo": "",
    "dock.rum cargo": "",
    "dock.cigar cargo": "",
    "dock.sugar free slots": "",
    "dock.citrus free slots": "",
    "dock.tobacco free slots": "",
    "dock.rum free slots": "",
    "dock.cigar free slots": "",
    "setup items left": "",
    "setup last item + 1": "",
    "building in use one-hot": "one entry per building kind: each is a legal position, random "
    "play builds only some kinds",
    "foreman activated / used": "",
    "law card.vetoed": "a Church veto of each law card",
    "harvest activated fields": "",
}
# the building one-hot of each plantation field: 23 kinds x 11 fields, each a legal position
UNREACHED.update({f"player.field {f} building one-hot": "" for f in range(12)})


@pytest.mark.parametrize(
    "name,opts,n",
    [
        ("puerto_rico", {}, 3),
        ("puerto_rico", {"expansion": True}, 4),
        ("port_royal", {}, 4),
        ("cuba", {}, 3),
    ],
)
def test_every_finite_bound_is_reached_or_argued(name, opts, n):
    game = caribsim.load_game(name, players=n, **opts)
    low, high = game.observation_bounds()
    mn, mx = _random_extremes(game, 2 * STEPS[name])
    # the chance nodes of the setup, which VectorGame resolves without stopping
    st = game.new_initial_state(seed=0)
    for seat in range(n):
        obs = np.asarray(st.observation_tensor(seat), np.float32)
        mn, mx = np.minimum(mn, obs), np.maximum(mx, obs)
    missing = []
    for nm, start, count in _rows(game):
        sl = slice(start, start + count)
        fin = np.isfinite(high[sl])
        if (mx[sl][fin] < high[sl][fin]).any() or (mn[sl] > low[sl]).any():
            missing.append(nm)
    unargued = sorted(set(missing) - set(UNREACHED))
    assert not unargued, f"bounds neither reached nor argued in UNREACHED: {unargued}"


# --------------------------------------------------------------------------------------
# the docs
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(DOC_TABLES))
def test_docs_hold_the_generated_layout_table(name):
    path = ROOT / DOC_TABLES[name][0]
    text = path.read_text(encoding="utf-8")
    assert TABLE_BEGIN in text and TABLE_END in text, f"{path} has no observation table"
    documented = text.split(TABLE_BEGIN, 1)[1].split(TABLE_END, 1)[0].strip()
    assert documented == doc_table(name), (
        f"{path}: the table differs from the code: run python docs/gen_observation_tables.py --write"
    )
    rows = parse_table(documented)
    options = DOC_TABLES[name][1]
    for k, n in enumerate(range(2, 6)):
        game = caribsim.load_game(name, players=n, **options)
        total, names = 0, []
        for offset, count, feature in rows:
            if offset.startswith("+"):
                continue  # inside the block just counted
            at = (
                int(offset)
                if "n" not in offset
                else int(offset.split("n")[0]) * n
                + int(offset.split("+")[1] if "+" in offset else 0)
            )
            assert at == total, (name, n, feature, offset, total)
            if isinstance(count, tuple):
                reps = count[0].split("/")
                total += int(reps[k] if len(reps) > 1 else reps[0]) * count[1]
            else:
                total += count
            names.append(feature)
        assert total == len(game.observation_bounds()[0]) == game.observation_tensor_shape()[0]
        top = [it.name for it in game.observation_layout()]
        assert names == top


def test_puerto_rico_docs_are_linked_from_embedding():
    text = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
    assert "(puerto_rico.md)" in text and "(port_royal.md)" in text and "(cuba.md)" in text


# --------------------------------------------------------------------------------------
# environments: both modes
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["normalized", "raw"])
@pytest.mark.parametrize("name", ["puerto_rico", "port_royal", "cuba"])
def test_gym_env_spaces_contain_every_observation(name, mode):
    need("rl")
    from gymnasium.utils.env_checker import check_env

    from caribsim.envs import gym_env

    env = gym_env(name, players=3, observation=mode)
    box = env.observation_space["observation"]
    if mode == "normalized":
        assert (box.low == 0).all() and (box.high == 1).all()
    else:
        low, high = env.game.observation_bounds()
        assert (box.low == low).all()
        assert (
            (box.high == high)
            | ((low == high) & (box.high == low + 1))
            | (~np.isfinite(high) & (box.high == 2**15 - 1))
        ).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)
    rng = np.random.default_rng(0)
    for episode in range(2):
        obs, _info = env.reset(seed=episode)
        done = False
        while not done:
            assert obs in env.observation_space
            a = rng.choice(np.flatnonzero(obs["action_mask"]))
            obs, _r, done, _trunc, _info = env.step(a)
        assert obs in env.observation_space


@pytest.mark.parametrize("mode", ["normalized", "raw"])
def test_pettingzoo_env_spaces_contain_every_observation(mode):
    need("rl")
    from pettingzoo.test import api_test

    from caribsim.envs import pettingzoo_env

    with warnings.catch_warnings():
        # api_test's two warnings of the {"observation", "action_mask"} dict: test_envs.py
        # checks that they are exactly those (docs/embedding.md says why they stay)
        warnings.simplefilter("ignore")
        api_test(pettingzoo_env("port_royal", players=3, observation=mode), num_cycles=200)
    env = pettingzoo_env("puerto_rico", players=3, observation=mode)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for agent in env.agent_iter(max_iter=3000):
        obs, _reward, term, trunc, _info = env.last()
        assert obs in env.observation_space(agent)
        for other in env.agents:
            assert env.observe(other) in env.observation_space(other)
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("mode", ["normalized", "raw"])
def test_vector_env_spaces_contain_every_observation(mode):
    need("rl")
    from caribsim.vector_env import vector_env

    env = vector_env("cuba", num_envs=6, players=2, seat=1, observation=mode)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        assert obs in env.observation_space
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, _rew, term, _trunc, info = env.step(acts)
        for i in np.flatnonzero(term):
            assert info["final_obs"][i] in env.single_observation_space
            ended += 1
    assert ended > 0


def test_bad_observation_mode_is_refused():
    need("rl")
    from caribsim.envs import gym_env, pettingzoo_env
    from caribsim.vector_env import vector_env

    for make in (gym_env, pettingzoo_env, vector_env):
        with pytest.raises(ValueError, match="observation must be one of"):
            make("port_royal", players=2, observation="scaled")

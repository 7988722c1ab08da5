"""OpenSpiel observers of every IIGObservationType (caribsim.openspiel): each combination of
perfect recall, public information and private information (none, the player's, every
player's) is built, or refused with a clear error, for every game, and each view has its
defining property: a public-only view is equal across states that differ only in private
information, a player's view across his information set, and an all-players view tells apart
states that differ in any private information (Cuba's secret bids; Port Royal's coin faces
and Puerto Rico's future draws are chance's, no player's)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from extras import need

pyspiel = need("openspiel")
from open_spiel.python.observation import make_observation

import caribsim
import caribsim.openspiel as cos

cos.register()

NONE = pyspiel.PrivateInfoType.NONE
SINGLE = pyspiel.PrivateInfoType.SINGLE_PLAYER
ALL = pyspiel.PrivateInfoType.ALL_PLAYERS
TYPES = list(itertools.product((False, True), (True, False), (NONE, SINGLE, ALL)))
BUILT = [t for t in TYPES if t[1] or not t[0]]  # all but a private-only perfect recall


def _iig(recall, public, private):
    return pyspiel.IIGObservationType(
        perfect_recall=recall, public_info=public, private_info=private
    )


def _observers(game):
    return {t: make_observation(game, _iig(*t)) for t in BUILT}


def _view(observer, state, player):
    observer.set_from(state, player)
    return observer.tensor.copy(), observer.string_from(state, player)


def _same(v, w):
    return np.array_equal(v[0], w[0]) and v[1] == w[1]


def _differ(v, w):
    """Both the tensor and the string tell the states apart."""
    return not np.array_equal(v[0], w[0]) and v[1] != w[1]


def _step(state, rng):
    if state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(actions, p=probs)))
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))


@pytest.mark.parametrize("name", caribsim.games())
def test_every_observation_type_is_built_or_refused(name):
    """Nine types are built, with the pieces the type asks for; the default and the perfect-
    recall single-player types are the state's observation and information state; a
    private-only information state is refused, saying what was asked and what is built."""
    game = pyspiel.load_game(f"caribsim_{name}", {"players": 3})
    state = game.new_initial_state()
    rng = np.random.RandomState(3)
    for _ in range(80):
        _step(state, rng)
    n_obs = int(np.prod(game.observation_tensor_shape()))
    private_per_seat = 1 if name == "cuba" else 0  # only Cuba has private facts (bids)
    for recall, public, private in TYPES:
        if recall and not public:
            with pytest.raises(ValueError) as err:
                make_observation(game, _iig(recall, public, private))
            msg = str(err.value)
            assert f"caribsim_{name}" in msg and "public_info=False" in msg
            assert f"private_info={private.name}" in msg and "supported:" in msg
            continue
        obs = make_observation(game, _iig(recall, public, private))
        seats = {NONE: 0, SINGLE: 0 if public else 1, ALL: 3}[private] * private_per_seat
        sizes = {
            "observation": n_obs if public else 0,
            "private": seats,
            "events": 2 * game.event_slots if recall else 0,
        }
        assert {k: v.size for k, v in obs.dict.items()} == {k: v for k, v in sizes.items() if v}
        assert obs.tensor.size == sum(sizes.values())
        for p in range(3):
            obs.set_from(state, p)
            pieces = [obs.dict[k] for k in sizes if k in obs.dict]
            np.testing.assert_array_equal(
                np.concatenate(pieces) if pieces else np.zeros(0), obs.tensor
            )  # the pieces are views of the one tensor
            text = obs.string_from(state, p)
            if (public, private) == (True, SINGLE):
                if recall:
                    np.testing.assert_array_equal(obs.tensor, state.information_state_tensor(p))
                    assert text == state.information_state_string(p)
                else:
                    np.testing.assert_array_equal(obs.tensor, state.observation_tensor(p))
                    assert text == state.observation_string(p)
            if public and private != SINGLE:
                # no player's own view: the strings are the same for every player
                assert text == obs.string_from(state, (p + 1) % 3)
    with pytest.raises(ValueError, match="observation parameters are not supported"):
        make_observation(game, _iig(False, True, NONE), {"x": 1})


def _cuba_pending_bid(players, bidder, seed):
    """Two Cuba states that differ only by ``bidder``'s secret bid, still pending (someone
    else has yet to bid): the same history but that one bid."""
    game = pyspiel.load_game("caribsim_cuba", {"players": players})
    bid0, nbids = caribsim._cuba.ACTION_RANGES["bid"]
    rng = np.random.RandomState(seed)
    for _ in range(20):
        a = game.new_initial_state()
        while not a.is_terminal():
            if not a.is_chance_node() and a.current_player() == bidder:
                bids = [x for x in a.legal_actions() if bid0 <= x < bid0 + nbids]
                if len(bids) >= 2:
                    b = a.clone()
                    a.apply_action(bids[0])
                    b.apply_action(bids[-1])
                    if bidder in a.inner.hidden_bids_pending():
                        return game, a, b
                    break
            _step(a, rng)
    raise AssertionError("no pending bid found")


def test_cuba_views_of_states_differing_by_one_secret_bid():
    """Seat 1's pending bid differs: the public views (perfect recall or not) are equal for
    every player, seat 1 too; a player's own view differs only for seat 1; the all-players
    views differ for everybody. After the reveal the amounts are public: every view with
    public information tells the states apart."""
    game, a, b = _cuba_pending_bid(3, bidder=1, seed=0)
    assert a.inner.to_dict() != b.inner.to_dict()
    observers = _observers(game)
    for (recall, public, private), obs in observers.items():
        for p in range(3):
            va, vb = _view(obs, a, p), _view(obs, b, p)
            if private == NONE or (private == SINGLE and p != 1):
                assert _same(va, vb), (recall, public, private, p)
            else:
                assert _differ(va, vb), (recall, public, private, p)
    # play on with the same actions until the bids are revealed (paid)
    rng = np.random.RandomState(1)
    while a.inner.hidden_bids_pending():
        action = a.legal_actions()[0] if not a.is_chance_node() else None
        if action is None:
            _step(a, rng)
            b.apply_action(a.history()[-1])
        else:
            a.apply_action(action)
            b.apply_action(action)
    for (recall, public, private), obs in observers.items():
        for p in range(3):
            va, vb = _view(obs, a, p), _view(obs, b, p)
            if public:
                assert _differ(va, vb), (recall, public, private, p)
            else:
                assert _same(va, vb)  # nothing private any more: empty private views


def test_cuba_views_of_a_determinized_state():
    """The engine's determinize from a bidder's point of view redraws the other pending bids:
    the public views stay equal, the bidder's own view stays equal, the view of a seat whose
    bid was redrawn differs, and every all-players view differs (the current position's
    views: the events still name the true bids)."""
    game, state, _ = _cuba_pending_bid(4, bidder=1, seed=2)
    while len(state.inner.to_dict()["parliament"]["bidders"]) > 1:  # all but the last bid
        state.apply_action(state.legal_actions()[-1])
    pending = state.inner.hidden_bids_pending()
    assert len(pending) >= 2
    observer = pending[0]
    true_bids = [board["bid"] for board in state.inner.to_dict()["boards"]]
    for seed in range(50):
        other = state.clone()
        other.inner = state.inner.determinize(observer, seed=seed)
        bids = [board["bid"] for board in other.inner.to_dict()["boards"]]
        if bids != true_bids:
            break
    changed = {q for q in range(4) if bids[q] != true_bids[q]}
    assert changed and changed <= set(pending) - {observer}
    for (recall, public, private), obs in _observers(game).items():
        if recall:
            continue
        for p in range(4):
            va, vb = _view(obs, state, p), _view(obs, other, p)
            if private == ALL or (private == SINGLE and p in changed):
                assert _differ(va, vb), (public, private, p)
            else:
                assert _same(va, vb), (public, private, p)


def test_port_royal_coin_faces_are_nobodys_private_information():
    """States that differ only by a coin's face (drawn face down; its holder does not see it
    either) give equal views of every type, the all-players ones too, along a stretch of
    common play, and after a determinize; a card revealed face up (public) changes every
    view with public information."""
    game = pyspiel.load_game("caribsim_port_royal", {"players": 3})
    observers = _observers(game)
    rng = np.random.RandomState(5)
    a = game.new_initial_state()
    while not (a.is_chance_node() and a.inner.chance_event()[0] == "draw"):
        _step(a, rng)
    while len({x for x, _ in a.chance_outcomes()}) < 2:
        _step(a, rng)
    b = a.clone()
    (x, _), (y, _) = a.chance_outcomes()[:2]
    a.apply_action(x)
    b.apply_action(y)
    assert a.inner.to_dict() != b.inner.to_dict()
    for _ in range(6):
        for obs in observers.values():
            for p in range(3):
                assert _same(_view(obs, a, p), _view(obs, b, p))
        if a.is_chance_node():
            common = sorted(
                {x for x, _ in a.chance_outcomes()} & {x for x, _ in b.chance_outcomes()}
            )
            action = int(rng.choice(common))
        else:
            action = int(rng.choice(a.legal_actions()))
        a.apply_action(action)
        b.apply_action(action)
    while a.is_chance_node():
        _step(a, rng)
    other = a.clone()
    other.inner = a.inner.determinize(0, seed=11)
    for (recall, _public, _private), obs in observers.items():
        if not recall:
            for p in range(3):
                assert _same(_view(obs, a, p), _view(obs, other, p))
    while not (a.is_chance_node() and a.inner.chance_event()[0] == "reveal"):
        _step(a, rng)
    (x, _), (y, _) = a.chance_outcomes()[:2]
    c, d = a.child(x), a.child(y)
    for kind, obs in observers.items():
        for p in range(3):
            vc, vd = _view(obs, c, p), _view(obs, d, p)
            assert _differ(vc, vd) if kind[1] else _same(vc, vd), (kind, p)


def test_puerto_rico_has_no_private_information():
    """Every view of one kind (perfect recall or not) holds the same tensor whatever its
    private information, and the same board; the chance draws are public: two different
    draws give different views."""
    game = pyspiel.load_game("caribsim_puerto_rico", {"players": 3})
    observers = _observers(game)
    rng = np.random.RandomState(2)
    state = game.new_initial_state()
    for _ in range(60):
        _step(state, rng)
    while not state.is_chance_node():
        _step(state, rng)
    outcomes = [x for x, _ in state.chance_outcomes()]
    assert len(outcomes) >= 2
    c, d = state.child(outcomes[0]), state.child(outcomes[1])
    for p in range(3):
        for recall in (False, True):
            views = [_view(observers[(recall, True, pr)], c, p) for pr in (NONE, SINGLE, ALL)]
            for v in views[1:]:
                np.testing.assert_array_equal(v[0], views[0][0])
                assert v[1].split("\n", 1)[1] == views[0][1].split("\n", 1)[1]  # the header aside
        for kind, obs in observers.items():
            vc, vd = _view(obs, c, p), _view(obs, d, p)
            public = kind[1]
            assert _differ(vc, vd) if public else (vc[0].size == 0 and _same(vc, vd)), (kind, p)

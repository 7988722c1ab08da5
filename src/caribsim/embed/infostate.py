"""Information states with perfect recall, for every caribsim game.

A player's information state is the list of events he has seen since the initial state:
every decision and chance outcome, except the hidden ones, which he sees only as "something
of this kind happened" (Port Royal: the face of a coin drawn or paid as a fee; Cuba: the
amount of another player's secret bid, until the bids are revealed). Puerto Rico hides
nothing but the future (its chance events are public), so there every event is seen.

``Events`` is the immutable chain of those events: ``events.after(state, a, apply)`` applies
one step and returns the extended chain; ``information_state_string`` and ``encode_events``
read it from one player's point of view, or, for OpenSpiel's other observation types, with
the public information only (``PUBLIC``) or every player's private information
(``ALL_PLAYERS``). Which events are hidden is the per-game table ``_RULES``; the private
facts of the current position (Cuba's pending bids) are ``private_facts``.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

import numpy as np

REVEAL = -2  # actor of a record saying that a hidden bid became public
# who sees, besides a seat: nobody's private information, or every player's
PUBLIC, ALL_PLAYERS = -3, -4
_SEEN, _HIDDEN_TO_OTHERS, _HIDDEN_TO_ALL = 0, 1, 2


def _no_hidden(state, action):
    return _SEEN, ""


def _port_royal_hidden(state, action):
    # coin faces are hidden from everybody, the holder included (docs/port_royal.md)
    if state.is_chance_node():
        kind, seat = state.chance_event()
        if kind in ("draw", "fee"):
            return _HIDDEN_TO_ALL, f"coin face ({kind}, p{seat})"
    return _SEEN, ""


_CUBA_BID_BASE = None


def _cuba_bid_base():
    global _CUBA_BID_BASE
    if _CUBA_BID_BASE is None:
        from caribsim.cuba._state import ACTION_RANGES

        _CUBA_BID_BASE = ACTION_RANGES["bid"]
    return _CUBA_BID_BASE


def _cuba_hidden(state, action):
    base, count = _cuba_bid_base()
    if not state.is_chance_node() and base <= action < base + count:
        return _HIDDEN_TO_OTHERS, "bid"
    return _SEEN, ""


def _cuba_pending(state, actor, action):
    """What the reveal needs to know before the step: the secret bids made so far (with
    this one) and the parliament's re-bid state."""
    base, count = _cuba_bid_base()
    pending = state.hidden_bids_pending()
    is_bid = actor >= 0 and base <= action < base + count
    if not pending and not is_bid:
        return None
    d = state.to_dict()
    bids = {seat: d["boards"][seat]["bid"] for seat in pending}
    if is_bid:
        bids[actor] = action - base
    return bids, (d["parliament"]["rebid"], d["parliament"]["tied"])


def _cuba_reveals(ctx, after):
    """(seat, amount) of every secret bid made public by the step: all bids are paid at once
    when the last bidder has bid (docs/cuba.md). The step revealed them if one of them is no
    longer pending, or a re-bid started (tied players without pesos bid 0 again at once)."""
    bids, rebid_before = ctx
    still = set(after.hidden_bids_pending())
    if set(bids) <= still:
        parliament = after.to_dict()["parliament"]
        if (parliament["rebid"], parliament["tied"]) == rebid_before:
            return ()
    return tuple(sorted(bids.items()))


def _nothing(*args):
    return None


# game name -> (hidden(state, action) -> (kind, label), before(state, actor, action) -> ctx,
#               reveals(ctx, state after) -> ((seat, amount), ...)); ctx None = no reveal
_RULES = {
    "puerto_rico": (_no_hidden, _nothing, _nothing),
    "port_royal": (_port_royal_hidden, _nothing, _nothing),
    "cuba": (_cuba_hidden, _cuba_pending, _cuba_reveals),
}


def rules(name: str):
    try:
        return _RULES[name]
    except KeyError:
        raise ValueError(
            f"no information-state rules for game {name!r}; known: {sorted(_RULES)}"
        ) from None


class Events:
    """An immutable chain of event records, shared between a state and its clones.

    A record is ``(actor, action, hidden, label)``: ``actor`` a seat, -1 for chance or
    ``REVEAL`` (then ``action`` is the seat and ``label`` the amount of its revealed bid);
    ``hidden`` says from whom the action is hidden."""

    __slots__ = ("__weakref__", "_rules", "length", "name", "parent", "records")

    def __init__(self, name, parent=None, records=()):
        self.name = name if parent is None else parent.name
        self._rules = rules(self.name)
        self.parent = parent
        self.records = records
        self.length = (parent.length if parent is not None else 0) + len(records)

    def after(self, state, action: int, apply) -> Events:
        """Apply ``action`` to ``state`` with ``apply(action)`` and return the chain with the
        step's records (the hidden flags are read before the step, the reveals after)."""
        hidden_rule, before_rule, reveal_rule = self._rules
        actor = -1 if state.is_chance_node() else state.current_player()
        kind, label = hidden_rule(state, action)
        ctx = before_rule(state, actor, action)
        apply(action)
        recs = [(actor, action, kind, label)]
        if ctx is not None:
            recs += [(REVEAL, seat, _SEEN, amount) for seat, amount in reveal_rule(ctx, state)]
        return Events(None, self, tuple(recs))

    def __deepcopy__(self, memo):
        return self  # immutable

    def __copy__(self):
        return self

    def __reduce__(self):
        return Events, (self.name, None, tuple(self.list()))

    def list(self) -> list:
        chunks, node = [], self
        while node is not None:
            chunks.append(node.records)
            node = node.parent
        return [r for chunk in reversed(chunks) for r in chunk]


def _seen(record, viewer):
    """Whether ``viewer`` (a seat, ``PUBLIC`` or ``ALL_PLAYERS``) sees the record's action. What
    is hidden from everybody (Port Royal's coin faces) is chance's, no player's: no viewer."""
    actor, _, hidden, _ = record
    if hidden == _SEEN:
        return True
    return hidden == _HIDDEN_TO_OTHERS and (viewer == ALL_PLAYERS or actor == viewer)


def _line(i, rec, viewer, name_of):
    actor, action, _hidden, label = rec
    if actor == REVEAL:
        return f"{i}. p{action} bid revealed: {label}"
    who = "chance" if actor < 0 else f"p{actor}"
    what = name_of(action) if _seen(rec, viewer) else f"hidden {label}"
    return f"{i}. {who}: {what}"


def _header(viewer):
    if viewer == PUBLIC:
        return "public information state"
    if viewer == ALL_PLAYERS:
        return "information state of all players"
    return f"information state of p{viewer}"


# (id(events), viewer) -> (weakref to events, string): the last strings built, so that a
# search's states (clones of one root plus a few events) build only their own lines; bounded,
# as a game's chain holds one node per event.
_STRINGS: OrderedDict = OrderedDict()
_STRINGS_KEPT = 256


def _cached(node, player):
    hit = _STRINGS.get((id(node), player))
    if hit is not None and hit[0]() is node:
        _STRINGS.move_to_end((id(node), player))
        return hit[1]
    return None


def information_state_string(events: Events, player: int, name_of) -> str:
    """One line per event as ``player`` saw it (a seat; ``PUBLIC``: as everybody saw it, no
    player's private information; ``ALL_PLAYERS``: with every player's); ``name_of(action)``
    names an action. Built on the nearest ancestor's cached string."""
    chunks, node, text = [], events, None
    while node is not None:
        text = _cached(node, player)
        if text is not None:
            break
        chunks.append(node)
        node = node.parent
    if node is None:
        text = _header(player)
    i = node.length if node is not None else 0
    lines = [text]
    for chunk in reversed(chunks):
        for rec in chunk.records:
            lines.append(_line(i, rec, player, name_of))
            i += 1
    text = "\n".join(lines)
    _STRINGS[(id(events), player)] = (weakref.ref(events), text)
    if len(_STRINGS) > _STRINGS_KEPT:
        _STRINGS.popitem(last=False)
    return text


def check_player(player, n: int) -> int:
    if isinstance(player, bool) or not isinstance(player, (int, np.integer)):
        raise TypeError(f"player must be an int seat, got {type(player).__name__}")
    if not 0 <= player < n:
        raise ValueError(f"player must be a seat in 0..{n - 1}, got {player}")
    return int(player)


def encode_events(
    events: Events, player: int, n_players: int, out: np.ndarray, viewer: int | None = None
) -> None:
    """Two floats per event into ``out`` (zeros after the last): the actor (1 + seat counted
    from ``player``, ``n_players + 1`` chance, ``n_players + 2 + seat`` a revealed bid) and
    the action + 1 (0 if hidden from ``viewer``; a revealed bid's amount + 1). ``viewer``:
    ``player`` (default), ``PUBLIC`` or ``ALL_PLAYERS``."""
    viewer = player if viewer is None else viewer
    recs = events.list()
    if 2 * len(recs) > out.size:
        raise ValueError(
            f"the history has {len(recs)} events, more than the information-state "
            f"tensor's {out.size // 2} slots (see docs/embedding.md, game length)"
        )
    out[:] = 0
    for i, rec in enumerate(recs):
        actor, action, _, label = rec
        if actor == REVEAL:
            out[2 * i] = n_players + 2 + (action - player) % n_players
            out[2 * i + 1] = label + 1
        else:
            out[2 * i] = n_players + 1 if actor < 0 else 1 + (actor - player) % n_players
            out[2 * i + 1] = action + 1 if _seen(rec, viewer) else 0


def _cuba_pending_bids(state):
    pending = state.hidden_bids_pending()
    if not pending:
        return {}
    boards = state.to_dict()["boards"]
    return {seat: boards[seat]["bid"] for seat in pending}


# game name -> (state -> {seat: amount} of the facts only that seat knows now, their name).
# Puerto Rico has none (the plantation stack's order is chance, not in the state); Port Royal
# none (a coin's face is hidden from its holder too: chance's, not a player's).
_PRIVATE = {"cuba": (_cuba_pending_bids, "secret bid")}


def private_facts(state) -> dict:
    """The private information of the position: ``{seat: amount}`` of Cuba's secret bids made
    and not yet revealed; empty for the games without private information."""
    rule = _PRIVATE.get(state.game.name)
    return rule[0](state) if rule is not None else {}


def has_private_facts(name: str) -> bool:
    """Whether game ``name`` has private information (facts one player knows and the others
    do not): only Cuba, its secret bids."""
    return name in _PRIVATE


def observation_string(state, player: int) -> str:
    """What ``player`` sees now, as text: the public board (the games' renderers print no
    hidden fact: coins and stacks as counts, no pending bid) and his own secret facts."""
    text = f"view of p{player}\n{state}"
    own = private_facts(state).get(player)
    if own is None:
        return text
    return f"{text}\nyour {_PRIVATE[state.game.name][1]}: {own}"


def private_lines(state, seats) -> list:
    """One line per private fact of ``seats`` now (``p1 secret bid: 5``), in seat order."""
    facts = private_facts(state)
    if not facts:
        return []
    label = _PRIVATE[state.game.name][1]
    return [f"p{seat} {label}: {facts[seat]}" for seat in sorted(seats) if seat in facts]

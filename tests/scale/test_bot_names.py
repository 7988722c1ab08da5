"""One name per bot: ``bot.name`` is its normalised spec, repeated specs are numbered, and the
arena's console table, JSON, game records and plot all use that one name."""

from __future__ import annotations

import json
import re

import pytest
from extras import need

from caribsim.__main__ import main
from caribsim.human import records
from caribsim.scale import arena
from caribsim.search import bots, guided

SPECS = [
    "random",
    "greedy",
    "mcts:300",
    "mcts",
    "mcts:300:rollout=heuristic:c=1",
    "mcts:c=2.5:iterations=40",
    "mcts:seconds=0.5",
    "mcts:5:reuse=false:threads=2",
    "puct:20",
    "gumbel:8:rollouts=2:c_puct=1.5",
]
ROW = re.compile(r"^  (.+?)\s+(\d+\.\d{3})\s+\[")


@pytest.mark.parametrize("spec", SPECS)
def test_a_bots_name_is_a_spec_of_the_same_bot(spec):
    bot = bots.parse_bot(spec)
    again = bots.parse_bot(bot.name)
    assert type(again) is type(bot)
    assert getattr(again, "options", None) == getattr(bot, "options", None)
    assert again.name == bot.name


def test_names_are_normalised():
    # the iterations first, then the options in parse_bot's order of keys, whatever the spec's order
    assert (
        bots.parse_bot("mcts:iterations=300:rollout=heuristic:c=1.0").name
        == bots.parse_bot("mcts:300:c=1:rollout=heuristic").name
    )
    assert bots.parse_bot("mcts:c=2.5:iterations=40").name.split(":")[:2] == ["mcts", "40"]
    # a bot built from Python is named by the spec its options give; repr stays the constructor
    built = bots.MCTSBot(iterations=300, rollout="heuristic")
    assert built.name == bots.parse_bot("mcts:300:rollout=heuristic").name
    assert repr(built) == "MCTSBot(iterations=300, rollout='heuristic')"
    assert bots.parse_bot("mcts").name == bots.MCTSBot(iterations=1000).name
    assert bots.AlphaZeroBot(guided.RolloutEvaluator(), 20).name == bots.parse_bot("puct:20").name
    # an evaluator no spec can name still gives a name, in the spec's form
    uniform = bots.AlphaZeroBot(guided.UniformEvaluator(3), 10)
    assert uniform.name.startswith("puct:10:") and "evaluator=UniformEvaluator" in uniform.name


def test_a_repeated_spec_is_numbered_in_order():
    pool = [
        bots.RandomBot(),
        bots.parse_bot("mcts:3"),
        bots.RandomBot(),
        bots.MCTSBot(iterations=3),
        bots.GreedyBot(),
    ]
    base = [b.name for b in pool]
    names = bots.bot_names(pool)
    assert len(set(names)) == len(names)
    for name, b in zip(names, base):
        assert name == b if base.count(b) == 1 else name.startswith(b + " #")
    assert [n for n in names if n.startswith("random")] == ["random #1", "random #2"]


def test_the_arena_names_agree_in_console_json_records_and_plot(tmp_path, capsys):
    need("plot")
    spec = "mcts:3,random,mcts:3"
    args = ["arena", "cuba", "--bots", spec, "--games", "3", "--seed", "4", "--no-progress"]
    assert (
        main(
            [
                *args,
                "--save",
                str(tmp_path / "m.json"),
                "--save-games",
                str(tmp_path / "g"),
                "--plot",
                str(tmp_path / "p.png"),
            ]
        )
        == 0
    )
    console = [m.group(1) for m in map(ROW.match, capsys.readouterr().out.splitlines()) if m]
    saved = json.loads((tmp_path / "m.json").read_text())
    from_json = [b["name"] for b in saved["bots"]]
    names = bots.bot_names([bots.parse_bot(s) for s in spec.split(",")])
    assert console == from_json == names
    assert len(set(names)) == 3 and names[1] == "random"
    for g, game in enumerate(saved["games"]):
        rec = records.load(tmp_path / "g" / f"game_{g:05d}.json")
        assert rec["players"] == [names[b] for b in game["seat_bot"]]
    # the plot of the same match (the same seed gives the same result) labels its bars so
    result = arena.play_match(
        "cuba", [bots.parse_bot(s) for s in spec.split(",")], 3, seed=4, progress=False, players=3
    )
    assert [b.name for b in result.bots] == names and [g["returns"] for g in result.games] == [
        g["returns"] for g in saved["games"]
    ]
    labels = [t.get_text() for t in arena.figure(result).axes[0].get_xticklabels()]
    assert labels == names

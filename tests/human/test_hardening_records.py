"""Records and JSON input under bad input: replay(upto=...), states() validated exactly as
replay(), and JSON that is nested too deeply, not UTF-8 or not JSON (records, state texts)."""

import json
import random

import numpy as np
import pytest
from test_play_records import random_game

import caribsim
from caribsim import records


def _played(game, seed, steps=None):
    return random_game(seed=seed, steps=steps, game=game)


@pytest.fixture(scope="module")
def record():
    s = _played(caribsim.load_game("puerto_rico", players=3), seed=4)
    return records.record_game(s, seed=4, players_info=["ann", "bob", "cy"])


def _copy(rec):
    return json.loads(json.dumps(rec))


# --- item 17: upto -------------------------------------------------------------------


@pytest.mark.parametrize(
    "upto, kind", [(True, "bool"), (False, "bool"), (2.0, "float"), ("3", "str"), ([1], "list")]
)
def test_replay_upto_must_be_an_int(record, upto, kind):
    with pytest.raises(TypeError, match=f"^upto must be an int, got {kind}$"):
        records.replay(record, upto=upto)


def test_replay_upto_range_names_the_step_count(record):
    n = len(record["steps"])
    for bad in (-1, n + 1, 10**30):
        with pytest.raises(
            records.RecordError,
            match=rf"upto must be in 0\.\.{n}, got {bad} \(the record has {n} steps\)",
        ):
            records.replay(record, upto=bad)
    # ints of any kind (numpy too) in range still work
    assert records.replay(record, upto=np.int64(7)).history() == [
        s["action"] for s in record["steps"][:7]
    ]
    assert records.replay(record, upto=0).history() == []


# --- item 18: states() validates exactly as replay() ----------------------------------


def _mutations(rec, rng):
    """Mutated copies of a record: names, players, actions, steps, final scores, game,
    options and the players list."""
    steps = rec["steps"]
    while True:
        r = _copy(rec)
        i = rng.randrange(len(steps))
        kind = rng.randrange(10)
        if kind == 0:
            r["steps"][i]["name"] = rng.choice(["build harbor", "role mayor", "pass", ""])
        elif kind == 1:
            r["steps"][i]["player"] = rng.randrange(-4, 4)
        elif kind == 2:
            r["steps"][i]["action"] = rng.randrange(-3, 400)
        elif kind == 3:
            del r["steps"][i]
        elif kind == 4:
            r["steps"] = r["steps"][: rng.randrange(len(steps))]
        elif kind == 5:
            seat = rng.randrange(3)
            r["final"]["scores"][seat]["total"] += rng.choice([-1, 1])
        elif kind == 6:
            r["final"]["returns"] = rng.choice([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        elif kind == 7:
            r["game"] = rng.choice(["chess", "port_royal", "cuba", "Puerto_Rico"])
        elif kind == 8:
            r["options"] = rng.choice(
                [
                    {"players": 9},
                    {"players": "3"},
                    {"speed": 1},
                    {"players": 4},
                    {"players": 3, "expansion": "yes"},
                ]
            )
        else:
            r["players"] = rng.choice([["a", "b"], ["a", "b", "c", "d"], [], ["a", "b", "c"]])
        yield r


def _outcome(fn, rec):
    try:
        return "ok", fn(rec)
    except records.RecordError as e:
        return "RecordError", str(e)
    except Exception as e:  # any other error is a failure of the check
        return type(e).__name__, str(e)


def test_states_refuses_exactly_what_replay_refuses(record):
    """Before the fix states() ignored names, players and final scores (it accepted many
    records replay() refused) and raised raw ValueError/TypeError for a bad game."""
    rng = random.Random(2024)
    gen = _mutations(record, rng)
    refused = 0
    for _ in range(150):
        rec = next(gen)
        kind, value = _outcome(records.replay, rec)
        skind, svalue = _outcome(records.states, rec)
        assert kind in ("ok", "RecordError"), (kind, value)
        assert (skind, svalue if skind != "ok" else None) == (kind, value if kind != "ok" else None)
        if kind == "ok":
            assert svalue[-1].to_dict() == value.to_dict()
            assert len(svalue) == len(rec["steps"]) + 1
        else:
            refused += 1
    assert refused > 100  # the mutations do hit the checks


@pytest.mark.parametrize(
    "change, message",
    [
        ({"game": "chess"}, "unknown game"),
        ({"options": {"players": 9}}, "players must be 2..5, got 9"),
        ({"options": {"players": "3"}}, "players must be an int"),
        ({"options": {"speed": 1}}, "speed"),
        ({"players": ["a", "b"]}, "record.players has 2 entries for a 3-player game"),
        ({"players": ["a", 1, "c"]}, "record.players must be a list of strings"),
        ({"players": "abc"}, "record.players must be a list of strings"),
    ],
)
def test_states_bad_game_options_and_players_are_record_errors(record, change, message):
    rec = {**_copy(record), **change}
    for fn in (records.states, records.replay):
        with pytest.raises(records.RecordError, match=message):
            fn(rec)


def test_states_checks_names_players_and_final(record):
    for path, value, message in (
        (("steps", 30, "name"), "role mayor", "step 30: action"),
        (("steps", 31, "player"), 2, "step 31: recorded player 2"),
        (("final", "returns"), [0.5, 0.5, 0.0], "final scores do not match"),
    ):
        rec = _copy(record)
        target = rec
        for key in path[:-1]:
            target = target[key]
        if target[path[-1]] == value:
            value = [0.0, 0.5, 0.5] if isinstance(value, list) else (value + 1) % 3
        target[path[-1]] = value
        with pytest.raises(records.RecordError, match=message):
            records.states(rec)


# --- item 19: JSON input --------------------------------------------------------------

NESTED = ["[" * 100_000, '{"a":' * 100_000, "[" * 40 + "]" * 40]


@pytest.mark.parametrize("name", caribsim.games())
@pytest.mark.parametrize("text", NESTED, ids=["list-100000", "dict-100000", "list-40"])
def test_deserialize_state_of_deeply_nested_json_is_a_clear_value_error(name, text):
    game = caribsim.load_game(name)
    for t in (text, text.encode()):
        with pytest.raises(
            ValueError, match=r"^serialized state is nested too deeply \(at most 32 levels\)$"
        ):
            game.deserialize_state(t)


@pytest.mark.parametrize("name", caribsim.games())
def test_deserialize_state_of_bad_bytes_and_text(name):
    game = caribsim.load_game(name)
    s = _played(game, seed=3, steps=20)
    assert game.deserialize_state(s.serialize().encode()) == s
    with pytest.raises(
        ValueError, match=r"^serialized state is not UTF-8 text \(byte 0: invalid start byte\)$"
    ):
        game.deserialize_state(b"\xff" + s.serialize().encode())
    with pytest.raises(ValueError, match=r"^serialized state is not valid JSON: "):
        game.deserialize_state(s.serialize()[:-1])


@pytest.mark.parametrize(
    "content, message",
    [
        ("[" * 100_000, "is nested too deeply"),
        ('{"format": ' + "[" * 50 + "]" * 50 + "}", "is nested too deeply"),
        (
            b'{"format": "caribsim-record", "game": "\xe9"}',
            r"is not UTF-8 text \(byte 39: invalid continuation byte\)",
        ),
        (b"\xff\xfe{\x00}\x00", r"is not UTF-8 text \(byte 0: invalid start byte\)"),
        ("{not json", "is not valid JSON"),
        ("", "is not valid JSON"),
    ],
    ids=["list-100000", "list-51", "latin-1", "utf-16", "bad-json", "empty"],
)
def test_load_names_the_file_for_nested_non_utf8_and_bad_json(tmp_path, content, message):
    path = tmp_path / "rec.json"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    with pytest.raises(records.RecordError, match=f"^record '{path}' {message}"):
        records.load(path)


def test_load_of_a_folder_a_missing_file_and_a_bad_path(tmp_path):
    with pytest.raises(
        records.RecordError, match=f"^cannot read record '{tmp_path}': Is a directory$"
    ):
        records.load(tmp_path)
    with pytest.raises(
        records.RecordError, match=r"^cannot read record .*: No such file or directory$"
    ):
        records.load(tmp_path / "missing.json")
    with pytest.raises(
        records.RecordError, match=r"^cannot read record 'a\\x00b': embedded null byte$"
    ):
        records.load("a\0b")
    with pytest.raises(TypeError, match=r"^record path must be a str or path object, got int$"):
        records.load(0)  # not file descriptor 0


def test_record_with_a_long_bad_value_gets_a_short_message(record):
    rec = {**_copy(record), "game": ["x" * 10_000] * 1000}
    with pytest.raises(records.RecordError) as e:
        records.replay(rec)
    assert str(e.value).startswith("record.game must be a str, got [")
    assert len(str(e.value)) < 200


def test_record_game_refuses_players_info_that_a_record_cannot_hold():
    s = _played(caribsim.load_game("puerto_rico", players=3), seed=4, steps=10)
    for bad in (["a", "b"], ["a", "b", 3]):
        with pytest.raises(
            ValueError, match=r"^players_info must be 3 strings, one per seat, got \["
        ):
            records.record_game(s, 4, bad)
    assert records.record_game(s, 4, ("a", "b", "c"))["players"] == ["a", "b", "c"]


# --- item 22: the HTML viewer embeds any record safely ---------------------------------

HOSTILE_NAMES = ["<!--<script>", '</script><b id="pwned">x</b>', "a&b\u2028c\u2029"]


def _script_end(page: str, i: int) -> int:
    """Where the script element whose text starts at ``i`` ends, following the HTML
    tokenizer's script data states (escaped after "<!--", double-escaped after "<script"
    there); -1 if it never ends."""
    text, state = page.lower(), "data"

    def tag(name, at):
        return text.startswith(name, at) and text[at + len(name) : at + len(name) + 1] in tuple(
            " \t\n\f\r/>"
        )

    while i < len(text):
        if state != "data" and text[i] == ">" and text[i - 2 : i] == "--":
            state = "data"
        elif state == "data" and text.startswith("<!--", i):
            state, i = "escaped", i + 4
            continue
        elif state in ("data", "escaped") and tag("</script", i):
            return i
        elif state == "escaped" and tag("<script", i):
            state = "double"
        elif state == "double" and tag("</script", i):
            state, i = "escaped", i + 8
            continue
        i += 1
    return -1


@pytest.fixture(scope="module")
def hostile_record():
    s = _played(caribsim.load_game("puerto_rico", players=3), seed=6, steps=12)
    return records.record_game(s, seed=6, players_info=HOSTILE_NAMES)


def test_viewer_script_element_closes_where_the_page_ends_it(hostile_record):
    from caribsim import viewer

    page = viewer.render(hostile_record)
    start = page.index("<script>") + len("<script>")
    assert _script_end(page, start) == page.rindex("</script></body></html>")
    literal = page[page.index("const DATA = ") + len("const DATA = ") : page.index(";\nconst S = ")]
    assert not set(literal) & set("<>&\u2028\u2029")
    assert json.loads(literal) == json.loads(json.dumps(viewer.steps_data(hostile_record)))


def test_viewer_shows_hostile_player_names_as_text_in_a_browser(tmp_path, hostile_record):
    import shutil
    import subprocess

    from caribsim import viewer

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "the viewer test needs Debian's chromium (.ci/run installs it)"
    out = tmp_path / "replay.html"
    viewer.write_html(hostile_record, out)
    n = len(hostile_record["steps"])
    dom = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=5000",
            "--dump-dom",
            f"file://{out}#step={n}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert f"step {n} / {n}" in dom  # the script ran to the end
    assert " - &lt;!--&lt;script&gt;</h3>" in dom
    assert ' - &lt;/script&gt;&lt;b id="pwned"&gt;x&lt;/b&gt;</h3>' in dom
    assert " - a&amp;b\u2028c\u2029</h3>" in dom
    assert '<b id="pwned">' not in dom


def test_write_html_of_a_bad_record_leaves_the_file_alone(tmp_path, record):
    from caribsim import viewer

    out = tmp_path / "page.html"
    out.write_text("before")
    with pytest.raises(records.RecordError, match="step 5: recorded player"):
        viewer.write_html(
            {
                **_copy(record),
                "steps": [
                    dict(s, player=7) if i == 5 else s for i, s in enumerate(record["steps"])
                ],
            },
            out,
        )
    assert out.read_text() == "before"

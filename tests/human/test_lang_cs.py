"""Czech (--lang cs): whole games played through stdin whose every printed word comes from
data/lang_cs.csv (no English word of the English boards is left), moves typed as numbers,
Czech labels (accents optional) or English names, the record still English; the Czech replay
page in a real browser (Czech labels, the numbers of the state); bad languages; and the data
file covering every component name of the three games."""

import csv
import os
import random
import re
import string

import pytest
from test_play_records import random_game, run_cli
from test_play_terminal import Player
from test_viewer_page import check_supply_and_city

import caribsim
from caribsim import records, viewer
from caribsim.cuba.game import BUILDINGS as CU_BUILDINGS
from caribsim.cuba.game import CHARACTERS, ITEMS, LAW_KINDS
from caribsim.human import boards, lang, play
from caribsim.puerto_rico.game import GOODS, ROLES

DATA = os.path.join(os.path.dirname(caribsim.__file__), "data")


def data_rows(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return list(csv.DictReader(f))


CS = data_rows("lang_cs.csv")
MSG = {r["key"]: r["text"] for r in CS if r["kind"] == "msg"}
# English words that are Czech words too (indigo, rum, hotel, San Juan, ...) are not "left over"
CZECH_WORDS = {w.lower() for r in CS for w in re.findall(r"[A-Za-z]+", r["text"])}


def term(game, key):
    """The Czech text of an English term in the data file (the game's row over the shared one)."""
    hits = {r["game"]: r["text"] for r in CS if r["kind"] == "term" and r["key"] == key}
    return hits.get(game, hits.get("all"))


def words(text) -> set:
    return set(re.findall(r"(?<![A-Za-z0-9_])[A-Za-z]+(?![A-Za-z0-9_])", text))


def english_left(english_texts, czech_text, ignore=()) -> set:
    """The words of the English texts that are not Czech words yet stand in the Czech text."""
    suspects = {
        w
        for t in english_texts
        for w in words(t)
        if w.lower() not in CZECH_WORDS and w not in ignore and len(w) > 1
    }
    return suspects & words(czech_text)


def choices(prompt_text):
    block = prompt_text.rsplit(MSG["Your move:"] + "\n", 1)[1]
    return [m.group(1) for m in re.finditer(r"^ +\d+\. (.*)$", block, re.M)]


def typed_plain(text):
    """A label as a person may type it without a Czech keyboard (no accents)."""
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def drive(player, choose):
    """Answer every prompt: ``choose(labels, k_prompt)`` gives (index, what to type: None for
    the number). Returns [(labels, index)] in order."""
    played = []
    while (text := player.prompt()) is not None:
        labels = choices(text)
        k, typed = choose(labels, len(played))
        played.append((labels, k))
        player.send(k + 1 if typed is None else typed)
    return played


def _typing(labels, n):
    """The first or the last move; every 3rd decision typed as its whole label, every 3rd as
    a prefix of it without accents (its first word at least, so that it is no English name's
    prefix) that no other label starts with, the others by number."""
    k = len(labels) - 1 if n % 2 else 0
    if n % 3 == 1:
        return k, labels[k]
    if n % 3 == 2:
        plain = [typed_plain(x).lower() for x in labels]
        for end in range(len(plain[k].split()[0]), len(plain[k]) + 1):
            if (
                sum(p.startswith(plain[k][:end]) for p in plain) == 1
                and not plain[k][:end].isdecimal()
            ):
                return k, plain[k][:end]
    return k, None


GAMES = {
    "puerto_rico": ("--players", 3, "--seed", 12),
    "port_royal": ("--players", 2, "--seed", 4),
    "cuba": ("--players", 2, "--seed", 8),
}


@pytest.fixture(scope="module", params=list(GAMES))
def czech_game(request, tmp_path_factory):
    game = request.param
    path = tmp_path_factory.mktemp(game) / "game.json"
    bots = ",".join(["random"] * (GAMES[game][1] - 1))
    with Player(
        "play", game, *GAMES[game], "--bots", bots, "--no-color", "--record", path, "--lang", "cs"
    ) as player:
        played = drive(player, _typing)
    return (
        game,
        played,
        records.load(path),
        player.text.replace(str(path), "FILE"),
    )  # a path is no word


def _decisions(rec):
    """(state before, action) of each of the person's (seat 0) decisions, replayed."""
    states = records.states(rec)
    out = []
    for i, step in enumerate(rec["steps"]):
        if step["player"] == 0:
            out.append((states[i], step["action"]))
    return out


def test_the_record_is_english_and_each_move_is_the_czech_label_chosen(czech_game):
    game, played, rec, _ = czech_game
    final = records.replay(rec)  # the record format is unchanged
    assert final.is_terminal() and rec["final"]["returns"] == final.returns()
    tr, board = lang.translator(game, "cs"), boards.get(game)
    decisions = _decisions(rec)
    assert len(decisions) == len(played)
    for (before, action), (labels, k) in zip(decisions, played):
        name = before.action_to_string(action)
        assert rec["steps"][len(before.history())]["name"] == name  # English engine name
        legal = before.legal_actions()
        assert labels == [tr.move(board.choice_label(before, a, seat=0)) for a in legal]
        assert legal[k] == action  # the number, the label or the prefix typed


def test_no_english_word_of_the_english_boards_is_printed(czech_game):
    game, _, rec, out = czech_game
    board = boards.get(game)
    english = [board.LEGEND] + [board.text_board(st) for st, _ in _decisions(rec)]
    english += [
        board.choice_label(st, a, seat=0) for st, _ in _decisions(rec) for a in st.legal_actions()
    ]
    english.append(board.text_board(records.replay(rec)))
    assert (
        english_left(english, out, ignore={"random", "I", "II", "III", "IV"}) == set()
    )  # bots, law stacks


def test_the_messages_and_terms_printed_are_the_data_files(czech_game):
    game, _, rec, out = czech_game
    seed = GAMES[game][3]
    assert out.startswith(MSG["seed {seed}: replay with --seed {seed}"].format(seed=seed) + "\n")
    assert MSG["You are seat {seat}. {help}"].format(seat=0, help=MSG[play.HELP]) in out
    totals = [s["total"] if isinstance(s, dict) else s for s in rec["final"]["scores"]]
    scores = ", ".join(MSG["seat {i} {total}"].format(i=i, total=t) for i, t in enumerate(totals))
    assert (
        MSG["Game over. Scores: {scores}. Returns: {returns}"].format(
            scores=scores, returns=rec["final"]["returns"]
        )
        in out
    )
    legend = boards.get(game).LEGEND
    assert term(game, "Legend") + ": " + term(game, legend) in out
    if game == "puerto_rico":  # every role of the game, by its Czech name only
        for role in records.states(rec)[0].to_dict()["roles"]:
            assert re.search(rf"\brole {term(game, role)}\b", out) and f"role {role}" not in out
    if game == "cuba":
        for character in CHARACTERS:
            assert term(game, character) in out and f"play {character}" not in out


def test_a_move_may_be_typed_as_its_english_czech_name_or_label():
    s = caribsim.load_game("puerto_rico", players=3).new_initial_state(seed=3)
    rng = random.Random(3)
    while s.is_chance_node() or s.to_dict()["step"] != "build":
        s.resolve_chance() if s.is_chance_node() else s.apply_action(rng.choice(s.legal_actions()))
    tr, board = lang.translator("puerto_rico", "cs"), boards.get("puerto_rico")
    legal = s.legal_actions()
    labels = [tr.move(board.choice_label(s, a)) for a in legal]
    for k, a in enumerate(legal):
        english = s.action_to_string(a)
        czech = tr.move(english)
        assert czech != english
        nominative = tr.move(english, cases=False)  # as a person may type it
        for text in (english, czech, typed_plain(czech).upper(), labels[k], nominative):
            assert play.match_move(text, s, labels, tr) == (a, None), text
    k = next(i for i, a in enumerate(legal) if s.action_to_string(a) == "build small indigo plant")
    # the label says the building in the accusative its verb asks for
    acc = lang.translator("puerto_rico", "cs").cases[term("puerto_rico", "small indigo plant")]
    assert labels[k].startswith("postavit " + acc["acc"] + ":")
    assert tr.move("build small indigo plant", cases=False) == "postavit malá barvírna"
    builds = ", ".join(
        tr.move(s.action_to_string(a)) for a in legal if s.action_to_string(a).startswith("build ")
    )
    assert play.match_move("postavit", s, labels, tr) == (
        None,
        MSG["{text!r} is ambiguous: {names}"].format(text="postavit", names=builds),
    )


# --- the page ---------------------------------------------------------------------------------


def _page_text(browser, path, step):
    browser.get(f"file://{path}#step={step}")
    browser.execute_script(f"show({step})")
    return browser.execute_script("return document.body.innerText")


@pytest.mark.parametrize("game", list(GAMES))
def test_the_czech_page_has_no_english_word_of_the_english_page(browser, tmp_path, game):
    st = random_game(game=caribsim.load_game(game, players=GAMES[game][1]), seed=6)
    rec = records.record_game(st, seed=6, players_info=["p"] * GAMES[game][1])
    en, cs = tmp_path / "en.html", tmp_path / "cs.html"
    viewer.write_html(rec, en)
    viewer.write_html(rec, cs, lang="cs")
    n = len(rec["steps"])
    for step in (0, n // 3, 2 * n // 3, n):
        english, czech = _page_text(browser, en, step), _page_text(browser, cs, step)
        assert english_left([english], czech, ignore={"I", "II", "III", "IV"}) == set(), step
        assert english != czech
        counter = browser.find_element("id", "counter").text
        assert counter == f"{term(game, 'step')} {step} / {n}"
        assert (
            browser.find_element("id", "move").text
            == viewer.steps_data(rec, "cs")["snapshots"][step]["move"]
        )
        totals = [
            s["total"] if isinstance(s, dict) else s for s in records.states(rec)[step].scores()
        ]
        assert [browser.find_element("id", f"total-{p}").text for p in range(len(totals))] == [
            str(t) for t in totals
        ]


def test_the_czech_page_draws_the_states_numbers_with_czech_names(browser, tmp_path):
    st = random_game(players=3, seed=9)
    rec = records.record_game(st, seed=9, players_info=["a", "b", "c"])
    path = tmp_path / "pr.html"
    viewer.write_html(rec, path, lang="cs")
    names = {r["id"]: r["name"] for r in data_rows("puerto_rico_buildings.csv")}
    states = records.states(rec)
    for step in (1, len(states) // 2, len(states) - 1):
        _page_text(browser, path, step)
        check_supply_and_city(browser, states[step].to_dict())  # the numbers are the state's
        for b in ("small_indigo_plant", "coffee_roaster", "city_hall"):
            shown = browser.find_element("css selector", f"#pr-supply-{b} .bn").text
            czech = term("puerto_rico", names[b].lower())
            assert shown == czech[0].upper() + czech[1:]
    over = browser.find_element("id", "game-over")
    heads = [th.text for th in over.find_elements("css selector", "th")]
    assert heads[:2] == [term("all", "seat"), term("all", "total")]
    assert heads[-1] == term("all", "tie-break")
    for i, s in enumerate(rec["final"]["scores"]):
        assert over.find_element("id", f"final-{i}").get_attribute("data-total") == str(s["total"])
    assert browser.execute_script("return document.documentElement.lang") == "cs"
    assert browser.find_element("id", "first").get_attribute("title") == term("all", "first (Home)")


# --- bad languages ------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["play", "puerto_rico"], ["replay", "REC", "--html", "OUT"]])
def test_an_unknown_language_is_one_error_line(tmp_path, command):
    path = tmp_path / "rec.json"
    records.save(records.record_game(random_game(players=3, seed=1, steps=5), seed=1), path)
    args = [
        str(path) if a == "REC" else str(tmp_path / "out.html") if a == "OUT" else a
        for a in command
    ]
    r = run_cli(*args, "--lang", "xx", stdin="quit\n")
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr
        == f"python -m caribsim {command[0]}: error: argument --lang: unknown language 'xx'; choose from en, cs\n"
    )
    assert not (tmp_path / "out.html").exists()


def test_the_python_api_refuses_an_unknown_language(tmp_path):
    rec = records.record_game(random_game(players=3, seed=1, steps=5), seed=1)
    with pytest.raises(ValueError, match="unknown language 'de'; choose from en, cs"):
        viewer.write_html(rec, tmp_path / "x.html", lang="de")
    assert not (tmp_path / "x.html").exists()
    with pytest.raises(ValueError, match="unknown language"):
        play.run(caribsim.load_game("puerto_rico", players=2), 0, [], seed=1, lang_code="EN")


# --- the data file --------------------------------------------------------------------------------


def _has(game, english):
    return english in lang.translator(game, "cs").terms


def test_the_data_file_names_every_puerto_rico_role_building_and_good():
    for name in list(ROLES) + list(GOODS) + ["quarry", "forest"]:
        assert _has("puerto_rico", name), name
    for r in data_rows("puerto_rico_buildings.csv"):
        assert _has("puerto_rico", r["name"].lower()) and _has("puerto_rico", r["id"]), r["id"]


def test_the_data_file_names_every_port_royal_card():
    tr, board = lang.translator("port_royal", "cs"), boards.get("port_royal")
    for card in board.card_table():
        english = board.card_text(card)
        czech = tr.text(english)
        assert english_left([english], czech) == set(), card
        assert czech != english


def test_the_data_file_names_every_cuba_character_building_item_and_law():
    for name in list(CHARACTERS) + list(ITEMS) + list(CU_BUILDINGS) + list(LAW_KINDS):
        assert _has("cuba", name), name
    for r in data_rows("cuba_buildings.csv"):
        assert _has("cuba", r["name"]), r["name"]


def test_every_czech_message_keeps_the_placeholders_of_its_english_one():
    def fields(t):
        return sorted((f, c) for _, f, _, c in string.Formatter().parse(t) if f is not None)

    assert MSG and all(fields(k) == fields(v) for k, v in MSG.items())
    keys = [(r["game"], r["kind"], r["key"]) for r in CS]
    assert len(keys) == len(set(keys))
    counts = [r for r in CS if r["kind"] == "count"]
    assert counts and all(len(r["text"].split("|")) == 3 for r in counts)


def test_replay_prints_the_board_and_its_commands_in_czech(tmp_path):
    st = random_game(game=caribsim.load_game("cuba", players=3), seed=2)
    rec = records.record_game(st, seed=2)
    path = tmp_path / "rec.json"
    records.save(rec, path)
    n, states = len(rec["steps"]), records.states(rec)
    r = run_cli("replay", path, "--step", 40, "--lang", "cs")
    assert r.returncode == 0, r.stderr
    board = boards.get("cuba")
    english = board.text_board(
        states[40]
    )  # the board of play, the engine's abbreviations spelt out
    assert r.stdout == (
        f"{term('all', 'step')} 40 / {n}\n"
        + board.text_board(states[40], tr=lang.translator("cuba", "cs").text)
        + "\n"
    )
    assert english_left([english], r.stdout, ignore={"I", "II", "III", "IV"}) == set()
    r = run_cli("replay", path, "--lang", "cs", stdin="\nzzz\nq\n")
    first = rec["steps"][0]["name"]
    assert MSG["--- step {i} / {n}: {head}"].format(i=0, n=n, head=MSG["start"]) in r.stdout
    assert (
        MSG["--- step {i} / {n}: {head}"].format(
            i=1, n=n, head="1. " + lang.translator("cuba", "cs").move(first)
        )
        in r.stdout
    )
    usage = MSG["Enter or n, p, g N (0..{n}), q"].format(n=n)
    assert MSG["unknown command {cmd}: {usage}"].format(cmd="'zzz'", usage=usage) in r.stdout


@pytest.mark.parametrize(
    "text, words",
    [
        (
            "game,kind,key,text\nall,msg,a,b, c\n",
            "line 2: 5 fields, expected 4 (game, kind, key, text): quote a field",
        ),
        ("game,kind,key,text\nall,msg,ok,fine\nall,msg,a\n", "line 3: 3 fields, expected 4"),
        ("game,kind,key,text\nall,nope,a,b\n", "line 2: bad row"),
    ],
)
def test_a_malformed_row_of_the_data_file_is_named(text, words):
    import io

    with pytest.raises(ValueError, match=re.escape(words)):
        lang.check_rows(csv.DictReader(io.StringIO(text)))
    assert len(lang.rows()) == len(CS)  # the shipped file itself reads whole
    assert all(None not in r and None not in r.values() for r in CS)


# --- the grammatical cases ----------------------------------------------------------------


@pytest.mark.parametrize(
    "game, english, czech",
    [
        # the three, as a person read them
        ("puerto_rico", "colonist to small indigo plant", "kolonista na malou barvírnu"),
        ("puerto_rico", "settle corn", "vzít kukuřici"),
        ("puerto_rico", "draw sugar", "odkryta plantáž cukru"),
        ("puerto_rico", "build hacienda", "postavit haciendu"),
        ("port_royal", "take Sailor", "vzít Námořníka"),
        ("port_royal", "dock Pinnace (yellow)", "nechat zakotvit Pinasu (žlutá)"),
        (
            "port_royal",
            "trade Frigate (red) for 3 coins",
            "obchodovat s Fregatou (červená) za 3 mince",
        ),
        ("cuba", "take water", "vzít vodu"),
        ("cuba", "play mayor", "zahrát starostu"),
        ("cuba", "take stone", "vzít kámen"),  # its accusative is its nominative
    ],
)
def test_a_noun_after_a_word_that_governs_a_case_takes_that_case(game, english, czech):
    assert lang.translator(game, "cs").move(english) == czech


def _governed_phrases(game):
    """(governing word, the Czech term that follows it) in the Czech labels and log lines of
    random games of ``game`` as they would read without the cases (the nominatives)."""
    tr = lang.translator(game, "cs")
    plain = lambda t: tr._pattern.sub(tr._replace, t)  # noqa: E731 (terms only, no cases)
    values = sorted(set(tr.terms.values()), key=len, reverse=True)
    found = set()
    b = boards.get(game)
    for seed in range(3):
        st = caribsim.load_game(game, players=3).new_initial_state(seed=seed)
        rng = random.Random(seed)
        while not st.is_terminal():
            if st.is_chance_node():
                before = st.clone()
                st.resolve_chance()
                texts = [b.move_text(before, before.action_to_string(st.history()[-1]))]
            else:
                texts = [
                    b.choice_label(st, a, seat=st.current_player()) for a in st.legal_actions()
                ]
                st.apply_action(rng.choice(st.legal_actions()))
            for text in texts:
                m = tr._move.match(text) if tr._move else None
                czech = tr.moves[m.group(2)] + plain(text[m.end() :]) if m else plain(text)
                for word in tr.governs:
                    for hit in re.finditer(rf"(?<!\w){re.escape(word)} ", czech):
                        rest = czech[hit.end() :]
                        phrase = next(
                            (v for v in values if re.match(rf"{re.escape(v)}(?!\w)", rest)), None
                        )
                        if phrase:
                            found.add((word, phrase))
    return found


@pytest.mark.parametrize("game", ["puerto_rico", "port_royal", "cuba"])
def test_every_term_that_follows_a_governing_word_has_its_case_forms(game):
    """Every Czech term that stands after a word that governs a case, in the labels of every
    legal move and every chance step of random games, has a ``case`` row with that case (its
    form may be its nominative: then the row says so): a term added later without its forms
    fails here."""
    tr = lang.translator(game, "cs")
    found = _governed_phrases(game)
    assert found  # the games' labels do put terms after governing words
    missing = sorted(
        (word, phrase) for word, phrase in found if tr.governs[word] not in tr.cases.get(phrase, {})
    )
    assert not missing, f"case rows missing (word, term): {missing}"


@pytest.mark.parametrize(
    "row, words",
    [
        ("all,governs,vzít,accusative", "'vzít' governs 'accusative'; a case is one of gen, dat"),
        ("all,case,voda,acc", "bad case form 'acc'; write case=form;case=form"),
        ("all,case,voda,acc=vodu;acc=vodě", "bad case form 'acc=vodě'"),
        ("all,case,voda,nom=voda", "bad case form 'nom=voda'"),
    ],
)
def test_a_malformed_case_row_is_named(row, words):
    import io

    with pytest.raises(ValueError, match=re.escape(words)):
        lang.check_rows(csv.DictReader(io.StringIO("game,kind,key,text\n" + row + "\n")))

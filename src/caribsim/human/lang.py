"""The language of what a person reads: English (the engine's own words) or Czech.

The engine's strings are English and are the API (action names, ``str(state)``); the Czech
face is made here, over the English text the boards write, from ``data/lang_cs.csv``
(columns game, kind, key, text; game ``all`` or a game's name, which wins over ``all``):

- ``term``: an English word or phrase of a board, a move or the page, replaced wherever it
  stands as whole words (the longest one first; a lower-case key also matches capitalised);
- ``count``: a noun after a number, ``doubloon|doubloons`` -> ``dublon|dublony|dublonů``
  (the Czech forms for 1, for 2-4 and for the rest; ``{n}`` in a form places the number);
- ``move``: the first words of a move's name (its verb), e.g. ``build`` -> ``postavit``;
- ``msg``: a message of the terminal or the page: the English template with its
  ``{placeholders}`` as key, the Czech template as text;
- ``governs``: a Czech word (a verb, a preposition, a noun) and the grammatical case it puts
  the noun phrase after it in: ``vzít`` -> ``acc`` ("take"), ``plantáž`` -> ``gen``;
- ``case``: a Czech noun phrase as the terms write it (the nominative) and its other cases,
  ``malá barvírna`` -> ``acc=malou barvírnu``: after a word that governs a case, a phrase
  with a form for it takes that form ("kolonista na malou barvírnu", "vzít kukuřici").

``translator(game, lang)`` gives the ``Translator`` of a game (game None: the messages and the
shared terms only); for English it changes nothing. ``page_table()`` is what the replay
page's ``tr()`` needs to do the same in the browser.
"""

from __future__ import annotations

import csv
import functools
import io
import re
from importlib.resources import files

LANGS = ("en", "cs")
_FILE = "lang_cs.csv"
_KINDS = ("term", "count", "move", "msg", "governs", "case")
CASES = ("gen", "dat", "acc", "loc", "ins")  # the Czech cases a phrase may be put in
# a key is whole words: not inside a longer word or an id such as "ship_10"
_NOT_LETTER_BEFORE, _NOT_LETTER_AFTER = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"


def check(lang) -> str:
    """``lang`` if it is a known language, else ValueError naming the choices."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGS)}")
    return lang


@functools.cache
def rows() -> tuple:
    """The rows of the Czech data file, checked: four fields (a comma inside a field must be
    quoted), a known kind, a non-empty key and text."""
    text = (files("caribsim") / "data" / _FILE).read_text(encoding="utf-8")
    return check_rows(csv.DictReader(io.StringIO(text, newline="")))


def check_rows(reader) -> tuple:
    """The rows of a ``csv.DictReader`` over the data file's text, or ValueError naming the
    first bad line."""
    out = tuple(reader)
    for line, r in enumerate(out, start=2):
        if None in r or None in r.values():
            n = sum(v is not None for k, v in r.items() if k is not None) + len(r.get(None) or [])
            raise ValueError(
                f"{_FILE}, line {line}: {n} fields, "
                f"expected 4 (game, kind, key, text): quote a field that holds a comma"
            )
        if r["kind"] not in _KINDS or not r["key"] or not r["text"]:
            raise ValueError(f"{_FILE}, line {line}: bad row {r}")
        if r["kind"] == "governs" and r["text"] not in CASES:
            raise ValueError(
                f"{_FILE}, line {line}: {r['key']!r} governs {r['text']!r}; "
                f"a case is one of {', '.join(CASES)}"
            )
        if r["kind"] == "case":
            _forms(r["text"], f"{_FILE}, line {line}")
    return out


def _forms(text: str, where: str) -> dict:
    """``acc=malou barvírnu;gen=malé barvírny`` as {case: form}, or ValueError."""
    out = {}
    for part in text.split(";"):
        case, sep, form = part.partition("=")
        if not sep or case not in CASES or not form or case in out:
            raise ValueError(
                f"{where}: bad case form {part!r}; write case=form;case=form..., "
                f"a case one of {', '.join(CASES)}"
            )
        out[case] = form
    return out


def _table(game, kind: str) -> dict:
    """English key -> Czech text of one kind: the shared rows, then the game's over them."""
    table = {}
    for where in ("all", game):
        table.update(
            {r["key"]: r["text"] for r in rows() if r["game"] == where and r["kind"] == kind}
        )
    return table


def _capitalised(table: dict) -> dict:
    """The table with "Role" -> "Role" added for "role" -> "role", and "a b" for "a_b" (and
    the other way)."""
    out = dict(table)
    for key, text in table.items():  # the engine's ids and the page's labels of them
        out.setdefault(key.replace("_", " "), text)
        out.setdefault(key.replace(" ", "_"), text)
    for key, text in list(out.items()):
        if key[0].islower():
            out.setdefault(key[0].upper() + key[1:], text[0].upper() + text[1:])
    return out


def _alternation(keys) -> str:
    """A regex alternation of literal keys, the longest first (also valid in JavaScript)."""
    return "|".join(
        re.sub(r"([\\^$.|?*+()\[\]{}/])", r"\\\1", k) for k in sorted(keys, key=len, reverse=True)
    )


def czech_form(n: int, forms: list) -> str:
    """The Czech form of a noun for the number ``n``: 1, 2-4, else (0, 5 and more)."""
    n = abs(n)
    return forms[0] if n == 1 else forms[1] if 2 <= n <= 4 else forms[2]


# the games' names as their boxes print them: what a title and the lobby say, never the id
GAME_NAMES = {"puerto_rico": "Puerto Rico", "port_royal": "Port Royal", "cuba": "Cuba"}


class Translator:
    """Turns the English a board writes into the language ``lang`` (English: unchanged)."""

    def __init__(self, game, lang: str):
        self.game, self.lang = game, check(lang)
        self.terms = _capitalised(_table(game, "term")) if lang != "en" else {}
        self.counts = {}  # English form -> Czech forms
        for key, text in (_table(game, "count") if lang != "en" else {}).items():
            for english in key.split("|"):
                self.counts[english] = text.split("|")
        self.moves = _table(game, "move") if lang != "en" else {}
        self.messages = _table(game, "msg") if lang != "en" else {}
        self.governs = _table(game, "governs") if lang != "en" else {}
        self.cases = {
            k: _forms(v, f"{_FILE}: {k}")
            for k, v in (_table(game, "case") if lang != "en" else {}).items()
        }
        # a governing word, then a phrase with case forms: the phrase in the word's case
        self._governed = (
            re.compile(rf"(?<!\w)({_alternation(self.governs)}) ({_alternation(self.cases)})(?!\w)")
            if self.governs and self.cases
            else None
        )
        self.count_source = (
            rf"(\d+) ({_alternation(self.counts)}){_NOT_LETTER_AFTER}" if self.counts else None
        )
        # a key that starts with a sign ("'s turn") may follow a word
        self.term_source = (
            f"(?:{_NOT_LETTER_BEFORE}|(?=[^A-Za-z0-9_]))({_alternation(self.terms)}){_NOT_LETTER_AFTER}"
            if self.terms
            else None
        )
        source = "|".join(s for s in (self.count_source, self.term_source) if s)
        self._pattern = re.compile(source) if source else None
        self._move = (
            re.compile(rf"^(\s*)({_alternation(self.moves)}){_NOT_LETTER_AFTER}")
            if self.moves
            else None
        )

    def _replace(self, m) -> str:
        if self.count_source and m.group(1) is not None:
            n, forms = m.group(1), self.counts[m.group(2)]
            form = czech_form(int(n), forms)
            return form.replace("{n}", n) if "{n}" in form else f"{n} {form}"
        return self.terms[m.group(m.lastindex)]

    def _case(self, m) -> str:
        word, phrase = m.group(1), m.group(2)
        return f"{word} {self.cases[phrase].get(self.governs[word], phrase)}"

    def _inflected(self, text: str) -> str:
        return self._governed.sub(self._case, text) if self._governed else text

    def text(self, text: str) -> str:
        """A board's, a label's or an event's English text in the language."""
        return self._inflected(self._terms(text))

    def move(self, text: str, cases: bool = True) -> str:
        """A move's name (or a label or a line that starts with one): its verb, then the rest
        (``cases=False``: every term in its nominative, as a person may type it)."""
        out = None
        if self._move:
            m = self._move.match(text)
            if m:
                out = m.group(1) + self.moves[m.group(2)] + self._terms(text[m.end() :])
        if out is None:
            out = self._terms(text)
        return self._inflected(out) if cases else out

    def _terms(self, text: str) -> str:
        return self._pattern.sub(self._replace, text) if self._pattern else text

    def msg(self, template: str, **values) -> str:
        """A message: its template in the language, filled with ``values``."""
        return self.messages.get(template, template).format(**values)

    def game_name(self, game: str) -> str:
        """The game's printed name (``GAME_NAMES``) in the language."""
        return self.msg(GAME_NAMES[game])

    def page_table(self) -> dict:
        """What the page's ``tr()`` needs: the two regex sources and their replacements."""
        return {
            "lang": self.lang,
            "counts": self.count_source,
            "terms": self.term_source,
            "count_forms": self.counts,
            "term_text": self.terms,
        }


@functools.cache
def translator(game, lang: str = "en") -> Translator:
    """The translator of ``game`` (a game's name, or None for the shared words) into ``lang``."""
    return Translator(game, lang)

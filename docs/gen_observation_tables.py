"""Print (or, with --write, replace in the docs) the observation layout tables.

    python docs/gen_observation_tables.py [--write]

The tables come from the games' ``observation_layout()`` (the features, their offsets and
their true bounds), so docs/puerto_rico.md, docs/port_royal.md and docs/cuba.md can be
regenerated after a change of an observation writer; tests/embed/test_observation_bounds.py
checks that the docs hold exactly these tables.
"""

from __future__ import annotations

import pathlib
import sys

import caribsim
from caribsim._obs import DOC_TABLES, TABLE_BEGIN, TABLE_END, layout_table

ROOT = pathlib.Path(__file__).resolve().parent.parent


def doc_table(name) -> str:
    """The table of game ``name`` in the configuration of ``DOC_TABLES``, for 2..5 players."""
    options = DOC_TABLES[name][1]
    return layout_table([caribsim.load_game(name, players=n, **options) for n in range(2, 6)])


def main(argv):
    for name, (path, _) in DOC_TABLES.items():
        table = doc_table(name)
        if "--write" not in argv:
            print(f"## {name} ({path})\n\n{table}\n")
            continue
        doc = ROOT / path
        text = doc.read_text(encoding="utf-8")
        head, rest = text.split(TABLE_BEGIN, 1)
        _, tail = rest.split(TABLE_END, 1)
        doc.write_text(f"{head}{TABLE_BEGIN}\n{table}\n{TABLE_END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])

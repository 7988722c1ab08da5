"""Coverage-guided fuzzing of every game's state_from_dict and deserialize_state (atheris).

The same mutations and checks as tests/test_fuzz_state_dict.py, driven by libFuzzer for long
runs: each input picks a game, a real state of a random game and a list of edits (or raw
bytes for deserialize_state). An accepted dict must play to the end with every state on the
way accepted again; anything else must be a ValueError/TypeError. Any other exception, a
crash or a hang (use -timeout) is a finding, saved by libFuzzer as crash-*/timeout-* files.

Run (not collected by pytest):

    pip install atheris
    PYTHONPATH=src:tests python tests/fuzz/atheris_state_dict.py -max_total_time=600 -timeout=60

Replay a finding: the same command with the saved file as the argument.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for the shared code

with atheris.instrument_imports():
    from test_fuzz_state_dict import GAMES, check_dict, check_text, mutate, pool

    import caribsim  # noqa: F401

_POOLS = {name: pool(name) for name in GAMES}


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    name = GAMES[fdp.ConsumeIntInRange(0, len(GAMES) - 1)]
    states = _POOLS[name]
    game, d = states[fdp.ConsumeIntInRange(0, len(states) - 1)]
    if fdp.ConsumeIntInRange(0, 9) == 0:  # deserialize_state of raw bytes
        check_text(game, fdp.ConsumeBytes(fdp.remaining_bytes()))
        return
    d = copy.deepcopy(d)
    mutate(d, lambda n: fdp.ConsumeIntInRange(0, n - 1))
    check_dict(game, d)


def main():
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

"""Hostile network files and cards: each is one clear ValueError, found from the zip directory
and the .npy headers before anything large is read or allocated (MLPEvaluator.load, the az card).
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

import caribsim
from caribsim.search import bots, evaluators
from caribsim.search.evaluators import MLPEvaluator


def _npy_header(shape, dtype="<f4") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()  # the magic string, the length and the header dict


def _zip(path, members, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return str(path)


def test_a_small_file_that_declares_a_huge_array_is_refused_before_any_allocation(tmp_path):
    # 12 KB on disk, a header that says 10**10 float32 (37 GiB): MemoryError before the check
    path = _zip(tmp_path / "huge.npz", {"w0.npy": _npy_header((10**10,)) + b"\0" * 12_000})
    with pytest.raises(ValueError, match=r"'w0\.npy' declares \(10000000000,\) float32 "):
        MLPEvaluator.load(path)


def test_a_member_that_inflates_past_the_bound_is_refused_unread(tmp_path, monkeypatch):
    # a deflated member of zeros far larger than the bound (here lowered to 1 MiB, so the test
    # stays small): the zip directory says so, and nothing of it is read
    monkeypatch.setattr(evaluators, "MAX_FILE_BYTES", 1 << 20)
    zeros = _npy_header((1 << 20,)) + bytes(4 << 20)
    path = _zip(tmp_path / "bomb.npz", {"w0.npy": zeros}, zipfile.ZIP_DEFLATED)
    assert (tmp_path / "bomb.npz").stat().st_size < 20_000
    with pytest.raises(ValueError, match=r"holds 4,194,432 bytes uncompressed; an MLP file holds "):
        MLPEvaluator.load(path)


def test_the_bound_is_far_above_a_real_network():
    assert evaluators.MAX_FILE_BYTES >= 1 << 30
    game = caribsim.load_game("puerto_rico", players=2)
    assert MLPEvaluator.for_game(game, hidden=(1024, 1024)).parameters()["w0"].nbytes < 1 << 22


def test_a_member_that_is_not_a_npy_array_is_refused(tmp_path):
    path = _zip(tmp_path / "readme.npz", {"README.txt": b"hello"})
    with pytest.raises(ValueError, match=r"its member 'README\.txt' is not a \.npy array"):
        MLPEvaluator.load(path)


def test_object_arrays_and_short_members_are_refused(tmp_path):
    path = _zip(tmp_path / "obj.npz", {"w0.npy": _npy_header((2,), "|O") + b"\0" * 16})
    with pytest.raises(ValueError, match="holds Python objects, not numbers"):
        MLPEvaluator.load(path)
    header = _npy_header((8,))
    path = _zip(tmp_path / "short.npz", {"b0.npy": header + b"\0" * 8})
    with pytest.raises(ValueError, match=r"'b0\.npy' is cut short"):
        MLPEvaluator.load(path)


def test_a_good_file_still_loads_to_the_same_network(tmp_path):
    game = caribsim.load_game("cuba", players=3)
    net = MLPEvaluator.for_game(game, hidden=(16, 8), seed=4)
    net.save(tmp_path / "net.npz")
    back = MLPEvaluator.load(tmp_path / "net.npz")
    for name, array in net.parameters().items():
        assert np.array_equal(back.parameters()[name], array), name
    assert back.parameters()["w0"].flags.writeable


@pytest.mark.parametrize(
    "card, words",
    [
        ({"options": {}, "search": {"simulations": 200}}, "needs 'game' (str), got 'nothing'"),
        ({"game": "puerto_rico", "options": {}}, "needs 'search' (dict), got 'nothing'"),
        ({"game": "puerto_rico", "options": [], "search": {}}, "needs 'options' (dict), got []"),
        (
            {"game": "puerto_rico", "options": {}, "search": {"simulations": "many"}},
            "search.simulations must be an integer >= 1, got 'many'",
        ),
        ([1, 2], "must hold a JSON object, got list"),
    ],
)
def test_a_lying_card_is_one_clear_error(tmp_path, card, words):
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    with pytest.raises(ValueError, match="model card") as info:
        bots.read_card(str(path))
    assert words in str(info.value)


def test_the_shipped_card_reads(tmp_path):
    card = bots.shipped_card()
    assert card["game"] == "puerto_rico" and card["search"]["simulations"] >= 1
    (tmp_path / "bad.json").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="is not JSON text"):
        bots.read_card(str(tmp_path / "bad.json"))

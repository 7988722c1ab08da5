"""Cuba drawn for the page: its text board (a drawn board is to come)."""
from __future__ import annotations


def snapshot(state) -> dict:
    """What the page draws at one step."""
    return {"text": str(state)}


CSS = ""

JS = r"""
const BOARD = {supply: s => "", boards: s => `<pre id="text">${esc(s.text)}</pre>`};
"""


# ---------------------------------------------------------------------------------------------
# The terminal (caribsim play): what a person reads at the prompt.

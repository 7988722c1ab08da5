"""Tests sit beside the layer they test (puerto_rico/, port_royal/, cuba/, search/, human/,
embed/, scale/, cli/; the shared engine's tests here). Each game folder has a scenario
builder (pr_scenario, pry_scenario, cuba_scenario) that tests of other layers use too."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
for game in ("puerto_rico", "port_royal", "cuba"):
    folder = os.path.join(HERE, game)
    if folder not in sys.path:
        sys.path.insert(0, folder)

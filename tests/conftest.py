"""Tests sit beside the layer they test (puerto_rico/, port_royal/, cuba/, search/, human/,
embed/, scale/, train/, web/, cli/; the shared engine's tests here). Each game folder has a
scenario builder (pr_scenario, pry_scenario, cuba_scenario) that tests of other layers use
too. The page tests (human/, web/) share one real headless Chromium driven through Selenium
(Debian's chromium and chromium-driver; nothing downloads a browser): the ``browser`` fixture.

Optional parts: a test that needs an extra or a system program says so through ``extras.need``
and ``extras.need_system`` (tests/extras.py) and skips naming the install. The hooks below keep
that honest: a skip whose reason names neither an extra (``pip install 'caribsim[x]'``) nor a
system package (``apt-get install ...``) fails, under ``CARIBSIM_REQUIRE_ALL=1`` every skip fails,
and the summary counts the skips by what they need (tests/skip_guard.py, a plugin that
tests/test_extras.py also loads on its own)."""

import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)  # tests/extras.py, tests/skip_guard.py

from skip_guard import (  # noqa: F401 (the hooks, registered by their names here)
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_terminal_summary,
)

for game in ("puerto_rico", "port_royal", "cuba"):
    folder = os.path.join(HERE, game)
    if folder not in sys.path:
        sys.path.insert(0, folder)


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session; tests open their page with ``browser.get``."""
    from extras import need_system
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = need_system("chromium")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
    ):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(chromedriver), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


# --- CI's subsets ------------------------------------------------------------------------


_ASKS_FOR_AN_EXTRA = re.compile(r"\bneed\(\s*\"")


def _subset_wants(subset):
    """(whether a file that asks for one of the extras of the subset is run whole, a function
    of (the file's text, the test's place in it) that says whether the test runs)."""
    if subset == "quick":
        # a file that asks for an extra runs whole (without it, each of its tests skips naming
        # the install); the system's parts (Chromium) are there, so theirs are like the rest
        return lambda text, k: bool(_ASKS_FOR_AN_EXTRA.search(text)) or k <= 1
    if subset.startswith("needs:") and subset[len("needs:") :]:
        names = "|".join(re.escape(n) for n in subset[len("needs:") :].split(","))
        asks = re.compile(rf"\bneed(?:_system)?\(\s*\"(?:{names})\"")
        return lambda text, k: bool(asks.search(text))
    raise pytest.UsageError(
        "CARIBSIM_TEST_SUBSET must be quick or needs:EXTRA,... (or unset), got " + repr(subset)
    )


def pytest_collection_modifyitems(config, items):
    """``CARIBSIM_TEST_SUBSET`` picks a part of the suite; every test file is still collected
    and imported. A file "asks for" an extra when it calls ``need`` with its name.

    - ``quick`` (CI's first run, on ``pip install -e '.[test]'`` alone): every test of a file
      that asks for an extra (``need("nn")``), the first test of each other file.
    - ``needs:nn,ppo`` (CI's last run): every test of the files that ask for one of these
      extras, the ones the README's install leaves out. The run before it ran everything else
      with its extras required, so the two together run every test with nothing skipped.
    """
    subset = os.environ.get("CARIBSIM_TEST_SUBSET", "")
    if not subset:
        return
    wants = _subset_wants(subset)
    keep, drop, seen, texts = [], [], {}, {}
    for item in items:
        path = str(item.path)
        if path not in texts:
            with open(path, encoding="utf-8") as f:
                texts[path] = f.read()
        seen[path] = seen.get(path, 0) + 1
        (keep if wants(texts[path], seen[path]) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep

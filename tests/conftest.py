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

SUBSETS = ("quick", "optional")


def pytest_collection_modifyitems(config, items):
    """``CARIBSIM_TEST_SUBSET`` picks a part of the suite; every test file is still collected
    and imported. A file "asks for an optional part" when it calls ``need(...)``.

    - ``quick`` (CI's first run, on ``pip install -e '.[test]'`` alone): every test of a file
      that asks for an optional part, the first three of each other file.
    - ``optional`` (CI's last run, with every extra): every test of the files that ask for an
      optional part. The other files do not depend on any extra (they pass without them in the
      runs before), so running them again would only repeat those runs.
    """
    subset = os.environ.get("CARIBSIM_TEST_SUBSET", "")
    if not subset:
        return
    if subset not in SUBSETS:
        raise pytest.UsageError(
            f"CARIBSIM_TEST_SUBSET must be one of {', '.join(SUBSETS)} (or unset), got {subset!r}"
        )
    keep, drop, seen, asks = [], [], {}, {}
    for item in items:
        path = str(item.path)
        if path not in asks:
            with open(path, encoding="utf-8") as f:
                asks[path] = "need(" in f.read()
        seen[path] = seen.get(path, 0) + 1
        wanted = asks[path] or (subset == "quick" and seen[path] <= 3)
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep

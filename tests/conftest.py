"""Tests sit beside the layer they test (puerto_rico/, port_royal/, cuba/, search/, human/,
embed/, scale/, train/, web/, cli/; the shared engine's tests here). Each game folder has a
scenario builder (pr_scenario, pry_scenario, cuba_scenario) that tests of other layers use
too. The page tests (human/, web/) share one real headless Chromium driven through Selenium
(Debian's chromium and chromium-driver; nothing downloads a browser): the ``browser`` fixture."""
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
for game in ("puerto_rico", "port_royal", "cuba"):
    folder = os.path.join(HERE, game)
    if folder not in sys.path:
        sys.path.insert(0, folder)


def _binary(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError(f"the page tests need {names[0]} (Debian: apt-get install chromium "
                         "chromium-driver; .ci/run installs them)")


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session; tests open their page with ``browser.get``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = _binary("chromium", "chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(_binary("chromedriver")), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()

"""A real headless Chromium driven through Selenium (Debian's chromium and chromium-driver;
nothing downloads a browser), shared by the page tests of this folder."""
from __future__ import annotations

import shutil

import pytest


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

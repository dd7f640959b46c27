"""Checks the built site (build/docs) in headless Chromium: every page renders, search works, no link
is broken. Run through ``bash docs/check``, which builds the site first.

* Render: each HTML page loads without a JavaScript error, its stylesheets load, it has a title and a
  main article with text, and every image has pixels.
* Links: every ``href``/``src`` in the rendered DOM that points inside the site names an existing file,
  and a ``#fragment`` names an element id on that page. Links leaving the site are listed, not fetched.
* Search: typing a query into the search box of the front page shows results that link to the right
  page (the API reference for an op, a guide for a word only a guide has).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Set
from urllib.parse import unquote, urldefrag, urlparse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,900",
]

PAGE_STATE = """
const sheets = [...document.querySelectorAll('link[rel="stylesheet"]')];
const main = document.querySelector('article[role="main"]') || document.querySelector('article');
return {
  ready: document.readyState,
  title: document.title,
  text: main ? main.innerText.trim().length : 0,
  unloadedSheets: sheets.filter(s => !s.sheet).map(s => s.href),
  brokenImages: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
  links: [...document.querySelectorAll('a[href], link[href], script[src], img[src]')]
           .map(e => e.href || e.src),
  ids: [...document.querySelectorAll('[id]')].map(e => e.id),
};
"""

SEARCH_STATE = """
const summary = document.querySelector('#search-results .search-summary');
return [summary ? summary.innerText : '', [...document.querySelectorAll('#search-results li a')].map(a => a.href)];
"""

SEARCHES = [  # (query, page that must be among the results)
    ("softmax", "reference/tripy.softmax.html"),
    ("integrate_subgraph", "guides/flatir.html"),
    ("InputInfo", "reference/tripy.InputInfo.html"),
]


def make_driver(chromium: str, chromedriver: str, profile: str) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)


def check_pages(driver: webdriver.Chrome, site: Path, problems: List[str]) -> Dict[Path, Set[str]]:
    pages = sorted(site.rglob("*.html"))
    ids: Dict[Path, Set[str]] = {}
    links: Dict[Path, List[str]] = {}
    for page in pages:
        name = page.relative_to(site).as_posix()
        driver.get(page.as_uri())
        state = driver.execute_script(PAGE_STATE)
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        if state["ready"] != "complete":
            problems.append(f"{name}: did not finish loading ({state['ready']})")
        if not state["title"]:
            problems.append(f"{name}: no title")
        if name not in ("search.html", "genindex.html") and state["text"] < 20:
            problems.append(f"{name}: the main article is empty")
        problems += [f"{name}: stylesheet did not load: {s}" for s in state["unloadedSheets"]]
        problems += [f"{name}: image did not load: {s}" for s in state["brokenImages"]]
        problems += [f"{name}: JavaScript error: {e}" for e in errors]
        ids[page.resolve()] = set(state["ids"])
        links[page] = state["links"]
    external: Set[str] = set()
    for page, hrefs in links.items():
        for href in hrefs:
            url, fragment = urldefrag(href)
            parsed = urlparse(url)
            if parsed.scheme != "file":
                external.add(url)
                continue
            target = Path(unquote(parsed.path)).resolve()
            if not target.exists():
                problems.append(f"{page.relative_to(site)}: broken link to {target}")
            elif fragment and target.suffix == ".html" and unquote(fragment) not in ids.get(target, set()):
                problems.append(f"{page.relative_to(site)}: link to a missing anchor {target.name}#{fragment}")
    print(
        f"pages: {len(pages)} rendered; links checked: {sum(map(len, links.values()))}; "
        f"external links (not fetched): {len(external)}"
    )
    for url in sorted(external):
        print(f"  external: {url}")
    return ids


def check_search(driver: webdriver.Chrome, site: Path, problems: List[str]) -> None:
    for query, expected in SEARCHES:
        driver.get((site / "index.html").as_uri())
        box = driver.find_element(By.CSS_SELECTOR, "form[role=search] input[name=q], input[name=q]")
        box.send_keys(query + Keys.ENTER)
        deadline, found = time.time() + 20, []
        while time.time() < deadline:  # (results appear one by one: read them once the search says it is done)
            summary, found = driver.execute_script(SEARCH_STATE)
            if summary.startswith("Search finished") or "did not match" in summary:
                break
            time.sleep(0.2)
        hits = [urlparse(h).path for h in found]
        if not any(h.endswith("/" + expected) for h in hits):
            problems.append(f"search {query!r}: expected a result linking to {expected}, got {hits[:5]}")
        else:
            print(f"search {query!r}: {len(hits)} result(s), including {expected}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, nargs="?", default=Path(__file__).resolve().parents[1] / "build" / "docs")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    site = args.site.resolve()
    if not (site / "index.html").exists():
        print(f"no site at {site}: run bash docs/build first", file=sys.stderr)
        return 1
    problems: List[str] = []
    with tempfile.TemporaryDirectory(prefix="tripy-docs-check-") as profile:
        driver = make_driver(args.chromium, args.chromedriver, profile)
        try:
            check_pages(driver, site, problems)
            check_search(driver, site, problems)
        finally:
            driver.quit()
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    print("docs check: " + ("FAILED" if problems else "passed"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

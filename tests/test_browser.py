"""The HTML token viewer in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`,
which .ci/run installs) opens the page `bytepair viz --html` writes; the test reads the token spans back
from the rendered page, points at a token, switches the ids on, and takes a screenshot.

Skipped on a machine without Chromium, its driver or selenium; required under CI."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest

import bytepair
from bytepair import cli, viewer
from conftest import shared_required

TEXT = (
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\n"
    "naïve café 🎉🎉 日本語 <|endoftext|> the end, the end.\n\tx = 12345;\n"
)
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver", "/usr/lib/chromium/chromedriver", "/usr/bin/chromedriver")


def _find(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name) or (name if os.path.isfile(name) and os.access(name, os.X_OK) else None)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by selenium."""
    problem = None
    chromium, driver_path = _find(BROWSERS), _find(DRIVERS)
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        problem = "selenium is not installed (make test installs it)"
    if problem is None and (chromium is None or driver_path is None):
        problem = "Chromium or chromedriver is missing (apt-get install chromium chromium-driver)"
    if problem is not None:
        if shared_required():
            pytest.fail(problem + " — required under CI (.ci/run installs it)")
        pytest.skip(problem)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium  # type: ignore[assignment]
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1200,900",
        "--hide-scrollbars",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, bytepair.Tokenizer]:
    folder = tmp_path_factory.mktemp("viz")
    corpus = folder / "corpus.txt"
    corpus.write_text(TEXT.replace("🎉", "") * 20, encoding="utf-8")  # the emoji stays several byte tokens
    assert (
        cli.main(
            ["train", str(corpus), "--vocab-size", "320", "--special-token", "<|endoftext|>", "-o", str(folder / "tok")]
        )
        == 0
    )
    (folder / "text.txt").write_text(TEXT, encoding="utf-8")
    out = folder / "tokens.html"
    assert cli.main(["viz", str(folder / "tok"), str(folder / "text.txt"), "--html", str(out)]) == 0
    return out, bytepair.Tokenizer.load(folder / "tok" / "bytepair.json")


def test_token_spans_in_the_browser(browser, page, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    path, tok = page
    browser.get(path.as_uri())
    assert browser.title.startswith("bytepair")
    spans = browser.find_elements(By.CSS_SELECTOR, "#text .t")
    segs = [s for s in viewer.segments(tok, TEXT) if s.ids]
    assert len(spans) == len(segs)
    # The ids on the page are the tokenizer's, in order; the rendered text (marks left out) is the text.
    ids = browser.execute_script("return Array.from(document.querySelectorAll('#text .t')).map(e => e.dataset.ids)")
    assert [int(i) for group in ids for i in group.split()] == tok.encode(TEXT, allowed_special="all")
    rendered = browser.execute_script("""
        const copy = document.getElementById('text').cloneNode(true);
        copy.querySelectorAll('.mark').forEach(m => m.remove());
        return copy.textContent;""")
    assert rendered == TEXT
    # Token boundaries are visible: neighbouring tokens have different backgrounds; the special token its own.
    colours = browser.execute_script(
        "return Array.from(document.querySelectorAll('#text .t')).map(e => getComputedStyle(e).backgroundColor)"
    )
    assert all(a != b for a, b in itertools.pairwise(colours))
    special = browser.find_element(By.CSS_SELECTOR, "#text .t.special")
    assert special.text == "<|endoftext|>"
    assert colours[spans.index(special)] == "rgb(91, 42, 134)"
    assert browser.find_element(By.ID, "n-tokens").text == str(len(tok.encode(TEXT, allowed_special="all")))
    # Pointing at a token shows its id and marks every occurrence of it.
    the = next(e for e in spans if e.text == " the")
    ActionChains(browser).move_to_element(the).perform()
    info = browser.find_element(By.ID, "info").text
    the_id = tok.token_to_id("Ġthe")
    assert info.startswith(f"id {the_id} ") and '" the"' in info and "4 bytes" in info
    marked = browser.find_elements(By.CSS_SELECTOR, "#text .t.same")
    assert len(marked) == tok.encode(TEXT, allowed_special="all").count(the_id) == 2
    emoji = next(e for e in spans if "🎉" in e.text)
    ActionChains(browser).move_to_element(emoji).perform()
    assert browser.find_element(By.ID, "info").text.startswith("ids ")  # several byte tokens, one character
    # The ids switch writes each token's id after it.
    browser.find_element(By.ID, "show-ids").click()
    after = browser.execute_script("return getComputedStyle(document.querySelector('#text .t'), '::after').content")
    assert after == f'"{ids[0]}"'
    # A screenshot of the page: the token colours are in it.
    shot = tmp_path / "viewer.png"
    assert browser.save_screenshot(str(shot))
    keep = os.environ.get("BYTEPAIR_SCREENSHOTS")
    if keep:  # to look at it: BYTEPAIR_SCREENSHOTS=some/folder make test
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "viewer.png")
    import matplotlib.image

    image = matplotlib.image.imread(shot)
    assert image.shape[0] >= 600 and image.shape[1] >= 1000
    pixels = (image[:, :, :3] * 255).round().reshape(-1, 3).tolist()
    first_colour = tuple(int(viewer._HTML_BACKGROUNDS[0][i : i + 2], 16) for i in (1, 3, 5))
    assert sum(1 for p in pixels if tuple(p) == first_colour) > 200


def test_a_large_text_is_capped_and_the_page_stays_in_the_viewport(browser, tmp_path):
    """1.4 MB of text made a 29 MB page that took a minute to draw, and a long frequent token pushed the table of
    most frequent tokens out of the window. The page now draws the first MAX_PAGE_TOKENS tokens and says so, with
    the whole text's numbers, and its columns fit a narrow window."""
    import random
    import time

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    rng = random.Random(25)
    long_word = "pneumonoultramicroscopicsilicovolcanoconiosis" * 2  # 90 letters, frequent: one long token
    words = [long_word] + ["".join(rng.choice("etaoinshrdlu") for _ in range(rng.randint(2, 8))) for _ in range(400)]
    text = " ".join(long_word if rng.random() < 0.2 else rng.choice(words) for _ in range(62_000))
    assert len(text) > 1_400_000
    corpus = tmp_path / "big.txt"
    corpus.write_text(text, encoding="utf-8")
    tok = bytepair.train([text[:300_000]], vocab_size=700)
    assert tok.token_to_id("Ġ" + long_word) is not None
    tok.save(tmp_path / "tok.json")
    out = tmp_path / "big.html"
    assert cli.main(["viz", str(tmp_path / "tok.json"), str(corpus), "--html", str(out), "--max-chars", "2000000"]) == 0
    assert out.stat().st_size < 4_000_000  # was 29 MB for 1 MB of text
    total = len(tok.encode(text))
    browser.set_window_size(700, 900)
    try:
        start = time.perf_counter()
        browser.get(out.as_uri())
        # Count only once the document says it is complete: once, in the full suite on a busy machine, 7 926
        # of the 20 000 segments were counted right after get().
        WebDriverWait(browser, 60).until(lambda d: d.execute_script("return document.readyState") == "complete")
        seconds = time.perf_counter() - start
        drawn = len(browser.find_elements(By.CSS_SELECTOR, "#text .t"))
        assert drawn == viewer.MAX_PAGE_TOKENS  # (every token of this text is a segment of its own)
        notice = browser.find_element(By.ID, "truncated").text
        assert f"the first {drawn:,} of {total:,} tokens" in notice and notice.strip()
        assert browser.find_element(By.ID, "n-tokens").text == str(total)  # the numbers are the whole text's
        width = browser.execute_script("return window.innerWidth")
        overflow = browser.execute_script("return document.documentElement.scrollWidth")
        right = browser.execute_script(
            "return Math.max(...Array.from(document.querySelectorAll('aside td, #text, .notice'))"
            ".map(e => e.getBoundingClientRect().right))"
        )
        assert overflow <= width and right <= width, (overflow, right, width)
        assert any(long_word in cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "aside code"))
        print(f"a {out.stat().st_size / 1e6:.1f} MB page of {drawn} tokens loaded in {seconds:.1f} s")
    finally:
        browser.set_window_size(1200, 900)

"""The built documentation reads the same without a network: equations are MathML in the pages
(no LaTeX source left for a script to render), no page loads a script from the network, and a
user-guide page with equations, opened from disk by headless Chromium with no network, is
screenshotted for the log.

    python .ci/docs_offline.py HTML_DIR [SCREENSHOT.png]
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path


class _Text(HTMLParser):
    """Text of a page outside <pre>, <code>, <script>, <style>; counts of <math> elements."""

    SKIP = {"pre", "code", "script", "style"}

    def __init__(self):
        super().__init__()
        self.depth, self.text, self.math, self.remote = 0, [], 0, []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1
        if tag == "math":
            self.math += 1
        src = dict(attrs).get("src") or ""
        if tag == "script" and re.match(r"(https?:)?//", src):
            self.remote.append(src)

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.text.append(data)


def check_pages(html: Path) -> tuple[Path, int]:
    """Every user-guide page: no ``\\(``, ``\\[`` or ``$$`` left outside code, no remote script;
    returns the page with the most equations and their number."""
    pages = sorted((html / "user_guide").glob("*.html"))
    assert pages, f"no user-guide pages under {html}"
    best, most, problems = None, -1, []
    for page in pages + [html / "index.html"]:
        raw = page.read_text(encoding="utf-8")
        p = _Text()
        p.feed(raw)
        # a command or an alignment mark the converter passed through as text
        for leftover in sorted(set(re.findall(r"<m[ion][^>]*>(\\[A-Za-z]+|&amp;|&)</m[ion]>", raw))):
            problems.append(f"{page.name}: {leftover!r} left unrendered in an equation")
        text = "".join(p.text)
        for token in ("\\(", "\\)", "\\[", "\\]", "$$"):
            if token in text:
                problems.append(f"{page.name}: LaTeX delimiter {token!r} left in the text")
        if p.remote:
            problems.append(f"{page.name}: scripts from the network {p.remote}")
        if p.math > most:
            best, most = page, p.math
    assert not problems, "\n".join(problems)
    assert most > 0, "no page of the user guide holds a MathML equation"
    return best, most


def screenshot(page: Path, png: Path) -> None:
    """Headless Chromium, no network (a network namespace of its own when it can have one)."""
    exe = next((shutil.which(c) for c in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(c)), None)
    if exe is None:
        raise SystemExit("no Chromium found (Debian: apt-get install chromium)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--no-first-run", "--disable-sync",
             "--proxy-server=127.0.0.1:9", "--window-size=1200,1600",
             f"--screenshot={png}", page.resolve().as_uri()]
    cmd = [exe] + flags
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        cmd = [unshare, "-n"] + cmd               # no network interface at all
    # the DOM as Chromium rendered it: the equations are MathML elements, not LaTeX text
    dom = subprocess.run(cmd[:-2] + ["--dump-dom", page.resolve().as_uri()], capture_output=True,
                         text=True, timeout=120)
    assert dom.returncode == 0 and "<math" in dom.stdout, dom.stderr[-2000:]
    assert "\\(" not in re.sub(r"<(pre|code|script)\b.*?</\1>", "", dom.stdout, flags=re.S)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and png.is_file(), run.stderr[-2000:]
    from PIL import Image

    img = Image.open(png).convert("L")
    dark = sum(img.histogram()[:128])
    assert dark > 1000, f"the screenshot {png} is blank"
    print(f"screenshot of {page.name} opened from disk without network: {png} "
          f"({img.size[0]}x{img.size[1]}, {dark} dark pixels; "
          f"{' '.join(cmd[:2]) if cmd[0] == unshare else 'proxy to a closed port'})")


def main(argv):
    html = Path(argv[0])
    png = Path(argv[1]) if len(argv) > 1 else Path("docs-offline.png")
    page, n = check_pages(html)
    print(f"offline math: every user-guide page is free of LaTeX delimiters and remote scripts; "
          f"{page.name} holds {n} MathML equations")
    screenshot(page, png)


if __name__ == "__main__":
    main(sys.argv[1:])

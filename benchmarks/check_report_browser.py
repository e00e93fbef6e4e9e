"""Open a report's HTML page in real headless Chromium and save a full-page screenshot,
the documented check of `mlw report`'s page (docs/experiments.md, "Reports").

    apt-get install chromium                      # Debian's package
    python benchmarks/check_report_browser.py REPORT_DIR [--out shot.png] [--height N]

Chromium loads ``REPORT_DIR/report.html`` from a file:// URL with the network off
(the page must render from itself alone: every figure is embedded), writes the
screenshot (default ``REPORT_DIR/screenshot.png``) and prints the page's size and the
number of images Chromium decoded (via --dump-dom, counting <img> elements with data
URLs). Look at the screenshot.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=4000)
    args = ap.parse_args()
    page = (args.report / "report.html").resolve()
    if not page.is_file():
        print(f"no report.html in {args.report}", file=sys.stderr)
        return 2
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    shot = (args.out or args.report / "screenshot.png").resolve()
    with tempfile.TemporaryDirectory() as profile:
        common = [chromium, *FLAGS, f"--user-data-dir={profile}"]
        subprocess.run([*common, f"--window-size={args.width},{args.height}",
                        f"--screenshot={shot}", page.as_uri()], check=True,
                       capture_output=True, timeout=120)
        dom = subprocess.run([*common, "--dump-dom", page.as_uri()], check=True,
                             capture_output=True, text=True, timeout=120).stdout
    images = len(re.findall(r'<img[^>]+src="data:image/png;base64,', dom))
    tables = dom.count("<table")
    print(f"rendered {page} -> {shot} ({shot.stat().st_size} bytes); DOM: {tables} tables, "
          f"{images} embedded PNG images")
    return 0


if __name__ == "__main__":
    sys.exit(main())

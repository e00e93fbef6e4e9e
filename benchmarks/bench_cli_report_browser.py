"""Open a report's HTML page in real headless Chromium and save a full-page screenshot,
the documented check of `mlw report`'s page (docs/guide/bench-and-report.md, "Reports").

    apt-get install chromium                      # Debian's package
    python benchmarks/bench_cli_report_browser.py REPORT_DIR [--out shot.png] [--height N]

Chromium loads ``REPORT_DIR/report.html`` from a file:// URL with the network off
(the page must render from itself alone: every figure is embedded), writes the
screenshot (default ``REPORT_DIR/screenshot.png``), then loads a copy of the page with
one added script that counts, after the load event, the images Chromium actually
decoded (``naturalWidth > 0``) and the tables wider than the page (their overflow
scrolls inside the page), read back with --dump-dom. Exit 1 when an image did not
decode or the page asked for anything from outside. Look at the screenshot.
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

# counts after the load event; resources from outside the page would show up in
# performance entries (the page must render from itself alone)
PROBE = """<script>window.addEventListener("load", () => {
  const imgs = [...document.images];
  const decoded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  const tables = [...document.querySelectorAll("table")];
  const wide = tables.filter(t => t.scrollWidth > t.clientWidth + 1).length;
  const external = performance.getEntriesByType("resource").length;
  const p = document.createElement("p");
  p.id = "mlw-probe";
  p.textContent = `images=${imgs.length} decoded=${decoded} tables=${tables.length} ` +
                  `wide=${wide} external=${external}`;
  document.body.appendChild(p);
});</script>"""


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
        probe = Path(profile) / "probe.html"
        probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                         encoding="utf-8")
        dom = subprocess.run([*common, "--virtual-time-budget=10000", "--dump-dom",
                              probe.as_uri()], check=True, capture_output=True, text=True,
                             timeout=120).stdout
    m = re.search(r'id="mlw-probe"[^>]*>([^<]*)<', dom)
    if m is None:
        print("the probe script did not run (no #mlw-probe in the DOM)", file=sys.stderr)
        return 1
    found = dict(kv.split("=") for kv in m.group(1).split())
    embedded = len(re.findall(r'<img[^>]+src="data:image/png;base64,', dom))
    print(f"rendered {page} -> {shot} ({shot.stat().st_size} bytes); {found['tables']} "
          f"tables ({found['wide']} wider than the page, scrolling inside it), "
          f"{found['decoded']} of {found['images']} images decoded by Chromium "
          f"({embedded} embedded as data: URLs); external resources: {found['external']}")
    ok = found["decoded"] == found["images"] == str(embedded) and found["external"] == "0"
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

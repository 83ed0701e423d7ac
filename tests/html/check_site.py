#!/usr/bin/env python3
"""html.site_in_browser: `fib report html` sites loaded in headless Chromium from file://.

    check_site.py --fib FIB --scratch DIR --dataset DS [--dataset DS ...]

For each dataset the site is written, then every page is loaded in Chromium (--dump-dom, after
the inline script ran): no console error, every relative link leads to a file of the site, the
index lists one row per definition page, and its search and op_type filters (preset through the
URL's #q= / #op=) hide exactly the rows that do not match. The leaderboard's fast_p chart has one
series per author plus the best of all, one point per threshold (checked against `fib report
fastp --format json`). A screenshot of the index and of a definition page must not be blank.
Exits 77 (skipped) with a message when no Chromium is installed.
"""
import argparse
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import urllib.parse
import zlib

SKIP = 77


class Dom(html.parser.HTMLParser):
    """The parts of a dumped DOM the checks read."""

    def __init__(self):
        super().__init__()
        self.links, self.rows, self.series, self.points, self.scripts = [], [], 0, 0, 0
        self.bars = 0
        self.table = None
        self.in_body = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "table":
            self.table = a.get("id")
        if tag == "tbody":
            self.in_body = True
        if tag == "tr" and self.in_body and self.table == "definitions":
            self.rows.append(a)
        if tag == "g" and "series" in a.get("class", ""):
            self.series += 1
        if tag == "circle" and "point" in a.get("class", ""):
            self.points += 1
        if tag == "rect" and "bar" in a.get("class", "").split():
            self.bars += 1
        if tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "tbody":
            self.in_body = False


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def chromium(binary, url, *extra):
    """(dumped DOM or screenshot output, console error lines) of one page load."""
    profile = tempfile.mkdtemp(prefix="fib-chromium-")
    try:
        proc = subprocess.run(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=3000", *extra, url],
            capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    errors = [line for line in proc.stderr.splitlines()
              if "CONSOLE" in line and ("Uncaught" in line or "Error" in line
                                        or "Refused" in line)]
    return proc.stdout, errors


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat, width = 8, b"", 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, "unsupported PNG"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        for x in range(stride):
            left = row[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                row[x] = (row[x] + left) & 255
            elif kind == 2:
                row[x] = (row[x] + up) & 255
            elif kind == 3:
                row[x] = (row[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                row[x] = (row[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(row))
        previous = row
    return width, height, channels, rows


def check_not_blank(path, failures):
    width, height, channels, rows = png_pixels(path)
    background = rows[height // 2][:3]
    colors, differing, total = set(), 0, 0
    for y in range(0, height, 4):
        for x in range(0, width, 4):
            pixel = rows[y][x * channels:x * channels + 3]
            colors.add(pixel)
            differing += pixel != background
            total += 1
    if len(colors) < 8 or differing < total // 100:
        failures.append("%s looks blank: %d colours, %d of %d sampled pixels differ"
                        % (path, len(colors), differing, total))


def check_dataset(fib, binary, dataset, scratch, failures):
    scratch = os.path.join(scratch, "%d" % len(os.listdir(scratch)))
    os.makedirs(scratch)
    out = os.path.join(scratch, "site")
    shutil.rmtree(out, ignore_errors=True)
    made = subprocess.run([fib, "report", "html", "--dataset", dataset, out],
                          capture_output=True, text=True)
    if made.returncode != 0:
        failures.append("fib report html %s: exit %d\n%s" % (dataset, made.returncode, made.stderr))
        return
    pages = sorted(os.path.relpath(os.path.join(d, f), out)
                   for d, _, files in os.walk(out) for f in files if f.endswith(".html"))
    definition_pages = [p for p in pages if p.startswith("definitions" + os.sep)]
    linked = {"index.html"}
    for page in pages:
        dom_text, errors = chromium(binary, "file://" + os.path.join(out, page), "--dump-dom")
        failures.extend("%s: console: %s" % (page, e) for e in errors)
        dom = Dom()
        dom.feed(dom_text)
        if dom.scripts != 1:
            failures.append("%s: %d scripts, expected fib's one" % (page, dom.scripts))
        for href in dom.links:
            target = urllib.parse.urlsplit(href)
            if target.scheme or target.netloc:
                failures.append("%s: a link out of the site: %s" % (page, href))
                continue
            path = os.path.normpath(os.path.join(out, os.path.dirname(page),
                                                 urllib.parse.unquote(target.path)))
            if not os.path.isfile(path):
                failures.append("%s: a broken link: %s" % (page, href))
            else:
                linked.add(os.path.relpath(path, out))
    for page in sorted(set(pages) - linked):
        failures.append("%s: no page links to it" % page)
    index = "file://" + os.path.join(out, "index.html")
    dom = Dom()
    dom.feed(chromium(binary, index, "--dump-dom")[0])
    if len(dom.rows) != len(definition_pages):
        failures.append("index: %d rows for %d definition pages" % (len(dom.rows), len(definition_pages)))
    if not dom.rows:
        return
    # Filters preset by the URL: the rows left visible are those the data says match.
    query = dom.rows[0]["data-text"].split(" ")[0]
    op = dom.rows[-1]["data-op"]
    for fragment, matches in (("q=" + urllib.parse.quote(query), lambda r: query in r["data-text"]),
                              ("op=" + urllib.parse.quote(op), lambda r: r["data-op"] == op)):
        filtered = Dom()
        filtered.feed(chromium(binary, index + "#" + fragment, "--dump-dom")[0])
        shown = [r for r in filtered.rows if "display: none" not in r.get("style", "")]
        expected = [r for r in filtered.rows if matches(r)]
        if len(shown) != len(expected) or not shown:
            failures.append("index#%s: %d rows shown, %d match" % (fragment, len(shown), len(expected)))
    # The leaderboard's chart against fib report fastp.
    fastp = json.loads(subprocess.run([fib, "report", "fastp", "--dataset", dataset, "--format",
                                       "json"], capture_output=True, text=True).stdout)
    curves = fastp["datasets"][0]["curves"]
    board = Dom()
    board.feed(chromium(binary, "file://" + os.path.join(out, "leaderboard.html"), "--dump-dom")[0])
    if board.series != len(curves) or board.points != sum(len(c["points"]) for c in curves):
        failures.append("leaderboard: %d series and %d points, fastp has %d curves of %d points"
                        % (board.series, board.points, len(curves),
                           sum(len(c["points"]) for c in curves)))
    authors = [c for c in curves if c["author"] is not None]
    if board.bars != 2 * len(authors):
        failures.append("leaderboard: %d coverage bars for %d authors" % (board.bars, len(authors)))
    for page in ["index.html"] + definition_pages[:1]:
        shot = os.path.join(scratch, os.path.basename(page) + ".png")
        chromium(binary, "file://" + os.path.join(out, page), "--screenshot=" + shot,
                 "--window-size=1280,900")
        if not os.path.isfile(shot):
            failures.append("%s: no screenshot" % page)
        else:
            check_not_blank(shot, failures)
    print("%s: %d pages checked in %s" % (dataset, len(pages), os.path.basename(binary)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--dataset", action="append", default=[])
    args = parser.parse_args()
    binary = chromium_binary()
    if binary is None:
        print("SKIP: no Chromium here (apt-get install chromium); the site was not loaded in a "
              "browser")
        return SKIP
    os.makedirs(args.scratch, exist_ok=True)
    failures = []
    for dataset in args.dataset:
        if os.path.isdir(dataset):
            check_dataset(args.fib, binary, dataset, args.scratch, failures)
        else:
            print("%s: absent, not checked" % dataset)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

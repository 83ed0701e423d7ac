#!/usr/bin/env python3
"""lint.layers: every #include between fib's layers follows the rule in docs/architecture.md.

The rule is read from the table between the `<!-- layer-rule:begin -->` and `<!-- layer-rule:end -->`
markers of docs/architecture.md (one row per layer: `| layer | may include |`), so the document and
the check cannot drift apart. A file belongs to the layer of its folder: include/fib/<layer>/ and
src/<layer>/. Its includes of another layer are `<fib/<layer>/...>` (public headers) and
`"<layer>/..."` (private headers of src/<layer>/). An include of a layer that the table does not list
for the file's layer (up, or sideways) fails the test, with file:line. Unknown folders fail too, so a
new layer must be added to the table first.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- layer-rule:begin -->", "<!-- layer-rule:end -->"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def read_rule(doc: pathlib.Path) -> dict[str, set[str]]:
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        sys.exit(f"{doc}: the layer table markers {BEGIN} … {END} are missing")
    table = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rule: dict[str, set[str]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not re.fullmatch(r"`[a-z_]+`", cells[0]):
            continue
        layer = cells[0].strip("`")
        allowed = set(re.findall(r"`([a-z_]+)`", cells[1]))
        rule[layer] = allowed
    if not rule:
        sys.exit(f"{doc}: no layer rows found between the markers")
    return rule


def layer_of(path: pathlib.Path) -> str | None:
    rel = path.relative_to(ROOT).parts
    if rel[:2] == ("include", "fib") and len(rel) > 3:
        return rel[2]
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    return None


def included_layer(kind: str, target: str, layers: set[str]) -> str | None:
    parts = target.split("/")
    if kind == "<":
        if len(parts) >= 3 and parts[0] == "fib":
            return parts[1]
        return None
    # Quoted: the own header "fib/<layer>/x.hpp" or a private header "<layer>/x.hpp".
    if len(parts) >= 3 and parts[0] == "fib":
        return parts[1]
    if len(parts) >= 2 and parts[0] in layers:
        return parts[0]
    return None


def main() -> int:
    rule = read_rule(ROOT / "docs" / "architecture.md")
    layers = set(rule)
    problems: list[str] = []
    files = sorted(
        p
        for base in (ROOT / "include" / "fib", ROOT / "src")
        for p in base.rglob("*")
        if p.suffix in {".hpp", ".cpp", ".h", ".cu"} and p.is_file()
    )
    checked = 0
    for path in files:
        layer = layer_of(path)
        rel = path.relative_to(ROOT)
        if layer is None:
            problems.append(f"{rel}: not inside a layer folder")
            continue
        if layer not in rule:
            problems.append(f"{rel}: layer '{layer}' is not in the table of docs/architecture.md")
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target_layer = included_layer(match.group(1), match.group(2), layers)
            if target_layer is None or target_layer == layer:
                continue
            checked += 1
            if target_layer not in layers:
                problems.append(f"{rel}:{number}: includes unknown layer '{target_layer}'")
            elif target_layer not in rule[layer]:
                problems.append(
                    f"{rel}:{number}: layer '{layer}' may not include '{target_layer}' "
                    f"({match.group(2)}); allowed: {', '.join(sorted(rule[layer])) or 'none'}"
                )
    for problem in problems:
        print(problem)
    print(f"lint.layers: {len(files)} files, {checked} cross-layer includes, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

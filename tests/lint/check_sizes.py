#!/usr/bin/env python3
"""lint.sizes: no source file over 800 lines and no function over 100 lines in src/, include/ and
apps/ (the house rule that keeps god files and god functions out).

Functions are found on clang-formatted code: a line that ends a signature with `{` (after `)`,
optionally `const`, `override`, `noexcept`, `-> T`, or a constructor's initializer list) opens a
body, and the brace that closes it ends it. Lambdas and control statements are not functions.
Embedded non-C++ files (.py) are not checked. Usage: check_sizes.py [--max-file N] [--max-function N]
"""

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTROL = re.compile(r"^\s*(if|for|while|switch|else|do|catch|try)\b|^\s*\}?\s*else\b")
SIGNATURE_END = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?(->\s*[\w:<>,\s*&]+)?\{\s*$")
INIT_LIST_END = re.compile(r"^\s*[:,]\s*m_\w+\(.*\)\s*\{\s*$|^\s*:\s*\w+\(.*\)\s*\{\s*$")


def strip_strings(line: str) -> str:
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def functions(lines: list[str]):
    """Yields (start_line, length, signature) of each function body."""
    i = 0
    in_raw = False
    while i < len(lines):
        raw = lines[i]
        if 'R"' in raw and not in_raw:
            # Raw string literals (embedded text) hold no code.
            if raw.count('R"') and ')"' not in raw.split('R"', 1)[1]:
                in_raw = True
            i += 1
            continue
        if in_raw:
            if ')"' in raw:
                in_raw = False
            i += 1
            continue
        line = strip_strings(raw)
        is_function = (SIGNATURE_END.search(line) or INIT_LIST_END.search(line)) and not CONTROL.search(line)
        if is_function and ("[" in line and "](" in line.replace(" ", "")):
            is_function = False  # a lambda
        if is_function and re.search(r"=\s*\[", line):
            is_function = False
        if not is_function:
            i += 1
            continue
        depth = 0
        start = i
        for j in range(i, len(lines)):
            code = strip_strings(lines[j])
            depth += code.count("{") - code.count("}")
            if depth <= 0 and j > start or (depth == 0 and "}" in code):
                yield start + 1, j - start + 1, lines[start].strip()
                i = j + 1
                break
        else:
            i += 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-file", type=int, default=800)
    parser.add_argument("--max-function", type=int, default=100)
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    roots = [pathlib.Path(p) for p in args.paths] or [ROOT / "src", ROOT / "include", ROOT / "apps"]
    files = sorted(
        p for r in roots for p in ([r] if r.is_file() else r.rglob("*"))
        if p.suffix in {".cpp", ".hpp", ".cu", ".h"} and p.is_file()
    )
    problems = []
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if len(lines) > args.max_file:
            problems.append(f"{rel}: {len(lines)} lines (at most {args.max_file})")
        for start, length, signature in functions(lines):
            if length > args.max_function:
                problems.append(
                    f"{rel}:{start}: function of {length} lines (at most {args.max_function}): "
                    f"{signature[:90]}")
    for problem in problems:
        print(problem)
    print(f"lint.sizes: {len(files)} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Benchmark helper (not a test): writes an N-times copy of a FlashInfer-Trace dataset.

    python3 bench/scale_dataset.py TARGET [--copies N] [--source DIR] [--distinct-text]
    python3 bench/scale_dataset.py --self-check [--fib build/apps/fib/fib] [--copies 3]

Copy k (0-based) of every definition gets the suffix `_x{k:04d}` on its name, and everything tied
to the definition follows it, so the copies are independent definitions that the validator finds
exactly as it finds the original:
  definitions/<op>/<def>.json              -> definitions/<op>/<def>_x0007.json, JSON "name" suffixed
  workloads/<op>/<def>.jsonl               -> workloads/<op>/<def>_x0007.jsonl, each line's "definition"
  solutions/<a>/<op>/<def>/<sol>.json      -> solutions/<a>/<op>/<def>_x0007/<sol>_x0007.json,
                                              JSON "definition" and "name" suffixed
  traces/<a>/<op>/<def>.jsonl              -> traces/<a>/<op>/<def>_x0007.jsonl, each line's
                                              "definition" and (non-empty string) "solution"
Every value is suffixed whatever it was, so a mismatch in the source (a JSON name that differs from
its file stem, a trace naming an unknown solution) stays a mismatch in each copy. A file or line
that is not valid JSON, or has duplicate keys, is copied unchanged. Files at other depths in the
four trees are copied with the suffix on their stem. blob/ is copied once, unchanged (workloads
keep their blob paths, so all copies share it), and only if the source has one; reports/ and
anything else at the top level are skipped. Standard library only.

With --distinct-text every copy (copy 0 too) also gets its own text in what fib parses with
Python: each definition's non-empty string `reference` gets a last comment line appended,
`\n# distinct copy _x0007\n` (whatever the reference ended with stays in front of it), and each
non-empty string in its `constraints` gets `  # _x0007` appended. Without it the copies share
their reference and constraint text, so a cache keyed on that text could serve every copy from the
first; with it no copy's text is another's. Empty references and constraints are left empty (fib
does not parse them).

--self-check validates the source, a plain copy and a distinct-text copy (--copies of each, in a
temporary directory) with `fib validate --dataset ... --disable-gpu --outputs json` and checks
that every copy's per-definition result equals the source's once the copy suffix and the appended
text are removed from every string of the report (statuses, messages, codes). Exit status 1 on a
mismatch.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

TREES = {"definitions": 2, "workloads": 2, "solutions": 4, "traces": 3}


class _Unchanged(Exception):
    pass


def _pairs_hook(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise _Unchanged("duplicate keys")
    return dict(pairs)


def _load(text):
    try:
        return json.loads(text, object_pairs_hook=_pairs_hook)
    except (ValueError, _Unchanged):
        return None


def _suffix_fields(obj, fields, sfx):
    if not isinstance(obj, dict):
        return obj
    for field in fields:
        value = obj.get(field)
        if isinstance(value, str) and value:
            obj[field] = value + sfx
    return obj


def reference_marker(sfx):
    """What --distinct-text appends to a definition's reference."""
    return f"\n# distinct copy {sfx}\n"


def constraint_marker(sfx):
    """What --distinct-text appends to each non-empty string constraint."""
    return f"  # {sfx}"


def _distinct_text(obj, sfx):
    """Appends the copy's markers to the reference and the string constraints of a definition."""
    if not isinstance(obj, dict):
        return obj
    reference = obj.get("reference")
    if isinstance(reference, str) and reference:
        obj["reference"] = reference + reference_marker(sfx)
    constraints = obj.get("constraints")
    if isinstance(constraints, list):
        obj["constraints"] = [c + constraint_marker(sfx) if isinstance(c, str) and c else c
                              for c in constraints]
    return obj


def _rewrite_json(text, fields, sfx, distinct_text=False):
    obj = _load(text)
    if obj is None:
        return text
    obj = _suffix_fields(obj, fields, sfx)
    if distinct_text:
        obj = _distinct_text(obj, sfx)
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def _rewrite_jsonl(text, fields, sfx):
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        obj = _load(body) if body.strip() else None
        if obj is None:
            out.append(line)
            continue
        out.append(json.dumps(_suffix_fields(obj, fields, sfx), ensure_ascii=False) +
                   line[len(body):])
    return "".join(out)


def _stem_suffixed(name, sfx):
    stem, dot, ext = name.rpartition(".")
    return f"{stem}{sfx}.{ext}" if dot else name + sfx


def _target_parts(tree, parts, sfx):
    """The relative path of the copy: the definition name (and solution stem) suffixed."""
    parts = list(parts)
    parts[-1] = _stem_suffixed(parts[-1], sfx)
    if tree == "solutions" and len(parts) == TREES["solutions"]:
        parts[2] += sfx  # <definition_name> directory
    return parts


def _fields(tree, name):
    if tree == "definitions":
        return ("name",)
    if tree == "solutions":
        return ("definition", "name")
    if tree == "workloads":
        return ("definition",)
    return ("definition", "solution")


def scale(source, target, copies, distinct_text=False):
    """Writes `copies` renamed copies of `source` into `target` (which must not exist yet); with
    `distinct_text`, each copy's references and constraints get the copy's own text as well.
    Returns the number of definition files written at the scanned depth."""
    os.makedirs(target)
    files = []
    for tree in TREES:
        base = os.path.join(source, tree)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, name), base)
                with open(os.path.join(dirpath, name), "rb") as f:
                    data = f.read()
                files.append((tree, rel.split(os.sep), data))
    definitions = 0
    for k in range(copies):
        sfx = f"_x{k:04d}"
        for tree, parts, data in files:
            out_parts = _target_parts(tree, parts, sfx)
            out = os.path.join(target, tree, *out_parts)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None and parts[-1].endswith(".jsonl"):
                data = _rewrite_jsonl(text, _fields(tree, parts[-1]), sfx).encode("utf-8")
            elif text is not None and parts[-1].endswith(".json"):
                data = _rewrite_json(text, _fields(tree, parts[-1]), sfx,
                                     distinct_text and tree == "definitions").encode("utf-8")
            with open(out, "wb") as f:
                f.write(data)
            if tree == "definitions" and len(parts) == 2 and parts[-1].endswith(".json"):
                definitions += 1
    blob = os.path.join(source, "blob")
    if os.path.isdir(blob):
        shutil.copytree(blob, os.path.join(target, "blob"), symlinks=True)
    return definitions


def _fib_report(fib, dataset, out):
    """The "definitions" object of `fib validate --dataset` on `dataset` (report JSON only)."""
    cmd = [fib, "validate", "--dataset", dataset, "--disable-gpu", "--outputs", "json",
           "--output-folder", out]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"exit status {done.returncode}: {' '.join(cmd)}\n{done.stderr}")
    (report,) = os.listdir(out)
    with open(os.path.join(out, report), encoding="utf-8") as f:
        return json.load(f)["definitions"]


def _without(value, removals):
    """`value` with every string in it (keys too) cleared of each text in `removals`, in order."""
    if isinstance(value, str):
        for text in removals:
            value = value.replace(text, "")
        return value
    if isinstance(value, list):
        return [_without(v, removals) for v in value]
    if isinstance(value, dict):
        return {_without(k, removals): _without(v, removals) for k, v in value.items()}
    return value


def _first_difference(got, want, where=""):
    if type(got) is not type(want):
        return f"{where}: {got!r} != {want!r}"
    if isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            if key not in got or key not in want:
                return f"{where}/{key}: only in {'copy' if key in got else 'source'}"
            found = _first_difference(got[key], want[key], f"{where}/{key}")
            if found:
                return found
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{where}: {len(got)} entries != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            found = _first_difference(g, w, f"{where}/{i}")
            if found:
                return found
        return None
    return None if got == want else f"{where}: {got!r} != {want!r}"


def self_check(fib, source, copies):
    """Validates the source, a plain and a distinct-text copy with `fib`; returns the number of
    copied definitions whose result differs from their original's (printing each)."""
    work = tempfile.mkdtemp(prefix="fib-scale-check-")
    mismatches = 0
    try:
        original = _fib_report(fib, source, os.path.join(work, "out-source"))
        for mode in ("plain", "distinct"):
            distinct = mode == "distinct"
            dataset = os.path.join(work, mode)
            scale(source, dataset, copies, distinct)
            report = _fib_report(fib, dataset, os.path.join(work, f"out-{mode}"))
            if len(report) != copies * len(original):
                print(f"{mode}: {len(report)} definitions, expected {copies * len(original)}")
                mismatches += 1
            for k in range(copies):
                sfx = f"_x{k:04d}"
                removals = [reference_marker(sfx), constraint_marker(sfx)] if distinct else []
                removals.append(sfx)
                for name, want in sorted(original.items()):
                    got = report.get(name + sfx)
                    found = ("missing from the report" if got is None else
                             _first_difference(_without(got, removals), want))
                    if found:
                        print(f"{mode} {name}{sfx}: {found}")
                        mismatches += 1
            print(f"{mode}: {copies} copies of {len(original)} definitions checked")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return mismatches


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    default_source = os.path.join(root, "..", "shared", "corpus", "dataset")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", nargs="?", help="directory to create (must not exist)")
    parser.add_argument("--copies", "-n", type=int, default=None,
                        help="number of copies (default 10; 3 with --self-check)")
    parser.add_argument("--source", default=default_source)
    parser.add_argument("--distinct-text", action="store_true",
                        help="give every copy its own reference and constraint text")
    parser.add_argument("--self-check", action="store_true",
                        help="check with fib that copies validate like the source")
    parser.add_argument("--fib", default=os.path.join(root, "build", "apps", "fib", "fib"),
                        help="fib binary of --self-check")
    args = parser.parse_args()
    source = os.path.normpath(args.source)
    if args.self_check:
        if args.target or args.distinct_text:
            sys.exit("--self-check takes no TARGET and no --distinct-text (it checks both kinds)")
        mismatches = self_check(args.fib, source, args.copies or 3)
        print("self-check: " + (f"{mismatches} mismatches" if mismatches else "OK"))
        sys.exit(1 if mismatches else 0)
    copies = 10 if args.copies is None else args.copies
    if not args.target:
        parser.error("TARGET is required (or --self-check)")
    if copies < 1:
        sys.exit("--copies must be at least 1")
    if os.path.exists(args.target):
        sys.exit(f"{args.target} already exists")
    n = scale(source, args.target, copies, args.distinct_text)
    text = ", each with distinct text" if args.distinct_text else ""
    print(f"wrote {n} definitions ({copies} copies of {source}{text}) to {args.target}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark helper (not a test): writes an N-times copy of a FlashInfer-Trace dataset.

    python3 bench/scale_dataset.py TARGET [--copies N] [--source DIR]

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
"""
import argparse
import json
import os
import shutil
import sys

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


def _rewrite_json(text, fields, sfx):
    obj = _load(text)
    if obj is None:
        return text
    return json.dumps(_suffix_fields(obj, fields, sfx), indent=2, ensure_ascii=False) + "\n"


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


def scale(source, target, copies):
    """Writes `copies` renamed copies of `source` into `target` (which must not exist yet).
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
                data = _rewrite_json(text, _fields(tree, parts[-1]), sfx).encode("utf-8")
            with open(out, "wb") as f:
                f.write(data)
            if tree == "definitions" and len(parts) == 2 and parts[-1].endswith(".json"):
                definitions += 1
    blob = os.path.join(source, "blob")
    if os.path.isdir(blob):
        shutil.copytree(blob, os.path.join(target, "blob"), symlinks=True)
    return definitions


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_source = os.path.join(here, "..", "..", "shared", "corpus", "dataset")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="directory to create (must not exist)")
    parser.add_argument("--copies", "-n", type=int, default=10)
    parser.add_argument("--source", default=default_source)
    args = parser.parse_args()
    if args.copies < 1:
        sys.exit("--copies must be at least 1")
    if os.path.exists(args.target):
        sys.exit(f"{args.target} already exists")
    n = scale(os.path.normpath(args.source), args.target, args.copies)
    print(f"wrote {n} definitions ({args.copies} copies of {os.path.normpath(args.source)}) "
          f"to {args.target}")


if __name__ == "__main__":
    main()

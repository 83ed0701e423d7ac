#!/usr/bin/env python3
"""What decoding a dataset's JSON costs CPython at least: json.loads of every *.json file and of
every non-blank line of every *.jsonl file under DATASET, in this one process, best of --rounds,
the files read beforehand (so the page cache and the reading are not timed).

    /usr/bin/python3 bench/json_floor.py DATASET [--rounds 5]

Prints one line: files, bytes, documents, the best time and its throughput. bench/README.md uses
it next to validate_scaling.py's floor (which times only the Python sources' parse).
"""
import argparse
import json
import os
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    files = []
    for directory, _, names in os.walk(args.dataset):
        for name in sorted(names):
            if name.endswith((".json", ".jsonl")):
                path = os.path.join(directory, name)
                with open(path, "rb") as f:
                    files.append((name.endswith(".jsonl"), f.read()))
    total = sum(len(data) for _, data in files)
    best = None
    documents = 0
    for _ in range(args.rounds):
        start = time.perf_counter()
        documents = 0
        for lines, data in files:
            if lines:
                for line in data.splitlines():
                    if line.strip():
                        json.loads(line)
                        documents += 1
            else:
                json.loads(data)
                documents += 1
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    rate = total / 1e6 / best if best else 0.0
    print(f"{len(files)} files, {total / 1e6:.1f} MB, {documents} JSON documents: json.loads "
          f"best of {args.rounds} {best * 1000:.0f} ms ({rate:.0f} MB/s)")


if __name__ == "__main__":
    main()

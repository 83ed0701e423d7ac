#!/usr/bin/env python3
"""Check that the JSON Schemas in schemas/ agree with `fib validate`.

Usage:
    check_schemas.py --fib PATH_TO_fib --schemas DIR --corpus DIR

Steps:
  1. Every schema must itself be a valid draft 2020-12 schema (Draft202012Validator.check_schema),
     and the $defs that trace-line.v1 copies from workload-line.v1 must still be identical.
  2. Hand-written cases (small JSON objects defined below, written to a temporary directory) are
     checked with both the schema and fib, and each verdict must be the expected one. Most are
     rejected by both (dtype "unknown", shape "M", a missing reference, language "sycl", a PASSED
     evaluation without performance, ...); a few pin down the documented differences between
     the two (docs/schemas.md), so that the documentation cannot silently go stale.
  3. For every file of CORPUS/dataset
        definitions/*/*.json    -> definition.v1.schema.json   (fib --kind definition)
        solutions/**/*.json     -> solution.v1.schema.json     (fib --kind solution)
        workloads/*/*.jsonl     -> workload-line.v1.schema.json, line by line (fib --kind workload)
        traces/**/*.jsonl       -> trace-line.v1.schema.json, line by line (fib --kind trace)
     the schema verdict (a .jsonl file is valid iff every non-blank line is) is compared with
     fib's verdict. If CORPUS/dataset does not exist, this step is skipped with a message.

fib's verdict: `fib validate --kind K --format json FILE` prints a JSON array of diagnostics,
each with a "severity" (error, warning, note) and a "code". The file is valid for fib iff no
diagnostic has severity "error", ignoring the codes in FIB_ONLY_CODES. Those are fib's own
checks that go beyond the data model the schemas describe:
  * definition.run.arity: fib checks that the reference's `run` can take one positional argument
    per input; the old tool only finds this when it builds the reference, and no JSON Schema can
    look inside Python source.
Warnings (e.g. lax coercions such as "value": "7") and notes (unknown keys) never make a file
invalid for fib. Diagnostics that say fib could not do its job (exit status 3; codes io.* and
python.*) are reported as failures, not as verdicts.

Output: one line per disagreement (or unexpected verdict of a hand-written case), then a final
line exactly of the form `N passed, M failed`, counting corpus files and hand-written cases.
Exit status: 0 iff M == 0; 77 (ctest's skip code here) when the jsonschema module is missing;
2 for usage errors.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from jsonschema import Draft202012Validator
except ImportError:  # pragma: no cover - depends on the machine
    print("skip: the Python module jsonschema (>= 4.0, with Draft202012Validator) is not "
          f"installed for {sys.executable}")
    sys.exit(77)

SKIP_EXIT = 77

# fib-only error codes that the schema comparison ignores (see the module docstring).
FIB_ONLY_CODES = frozenset({"definition.run.arity"})

# Codes that mean fib could not check the file at all (environment, not a verdict).
ENVIRONMENT_CODES = frozenset({"io.read", "io.not-found", "io.write", "python.unavailable",
                               "python.exception"})
FIB_EXIT_ENVIRONMENT = 3

SCHEMA_FILES = {
    "definition": "definition.v1.schema.json",
    "solution": "solution.v1.schema.json",
    "workload": "workload-line.v1.schema.json",
    "trace": "trace-line.v1.schema.json",
}

# $defs of trace-line.v1 copied verbatim from workload-line.v1.
SHARED_DEFS = ("workload", "inputSpec", "randomInput", "scalarInput", "safetensorsInput")

MAX_REASONS = 3


# --- hand-written cases ---------------------------------------------------------------------

BASE_DEFINITION = {
    "name": "gemm_tiny",
    "op_type": "gemm",
    "description": "C = A @ B.T on a small fixed N and K.",
    "tags": ["status:verified"],
    "axes": {
        "M": {"type": "var", "description": "rows of A"},
        "N": {"type": "const", "value": 4, "description": "rows of B"},
        "K": {"type": "const", "value": 8, "description": "reduction size"},
    },
    "constraints": ["M >= 1"],
    "inputs": {
        "A": {"shape": ["M", "K"], "dtype": "float16", "description": "left operand"},
        "B": {"shape": ["N", "K"], "dtype": "float16", "description": "right operand"},
    },
    "outputs": {
        "C": {"shape": ["M", "N"], "dtype": "float16", "description": "product"},
    },
    "reference": "import torch\n\n\ndef run(A, B):\n    return torch.matmul(A, B.T)\n",
}

BASE_SOLUTION = {
    "name": "gemm_tiny_torch",
    "definition": "gemm_tiny",
    "author": "tester",
    "spec": {
        "language": "python",
        "target_hardware": ["B200"],
        "entry_point": "main.py::run",
        "dependencies": [],
        "destination_passing_style": False,
    },
    "sources": [
        {"path": "main.py", "content": "import torch\n\n\ndef run(A, B):\n    return A @ B.T\n"},
    ],
}

BASE_WORKLOAD = {
    "axes": {"M": 16},
    "inputs": {"A": {"type": "random"}, "B": {"type": "random"}},
    "uuid": "0b5c1a8e-9d7f-4e1a-8a44-2f9f0d6e7c11",
}

BASE_WORKLOAD_LINE = {
    "definition": "gemm_tiny",
    "solution": None,
    "workload": BASE_WORKLOAD,
    "evaluation": None,
}

BASE_TRACE_LINE = {
    "definition": "gemm_tiny",
    "workload": BASE_WORKLOAD,
    "solution": "gemm_tiny_torch",
    "evaluation": {
        "status": "PASSED",
        "environment": {"hardware": "NVIDIA B200", "libs": {"torch": "2.9.1"}},
        "timestamp": "2026-01-01T00:00:00",
        "log": "",
        "correctness": {"max_relative_error": 0.001, "max_absolute_error": 0.0001, "extra": None},
        "performance": {"latency_ms": 0.02, "reference_latency_ms": 0.04, "speedup_factor": 2.0},
    },
}

BASES = {
    "definition": BASE_DEFINITION,
    "solution": BASE_SOLUTION,
    "workload": BASE_WORKLOAD_LINE,
    "trace": BASE_TRACE_LINE,
}


DELETE = object()


def mutate(kind, *edits):
    """A deep copy of the base object of `kind` with edits applied. Each edit is (path, value),
    where path is a tuple of keys/indices; the value DELETE removes the key."""
    obj = copy.deepcopy(BASES[kind])
    for path, value in edits:
        target = obj
        for key in path[:-1]:
            target = target[key]
        if value is DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return obj


VALID, INVALID = "valid", "invalid"

# (name, kind, object, expected schema verdict, expected fib verdict)
HAND_CASES = [
    # The bases themselves: both must accept them, or the negatives below prove nothing.
    ("base definition", "definition", BASE_DEFINITION, VALID, VALID),
    ("base solution", "solution", BASE_SOLUTION, VALID, VALID),
    ("base workload line", "workload", BASE_WORKLOAD_LINE, VALID, VALID),
    ("base trace line", "trace", BASE_TRACE_LINE, VALID, VALID),
    ("workload line without solution/evaluation keys", "workload",
     mutate("workload", (("solution",), DELETE), (("evaluation",), DELETE)), VALID, VALID),
    ("axes without type (value -> const, none -> var)", "definition",
     mutate("definition", (("axes", "M"), {}), (("axes", "N"), {"value": 4})), VALID, VALID),
    ("RUNTIME_ERROR trace with null metrics", "trace",
     mutate("trace", (("evaluation", "status"), "RUNTIME_ERROR"),
            (("evaluation", "correctness"), None), (("evaluation", "performance"), None)),
     VALID, VALID),
    ("entry point with ':::' (one non-overlapping '::')", "solution",
     mutate("solution", (("spec", "entry_point"), "main.py:::run")), VALID, VALID),
    ("0-D tensor (shape [])", "definition",
     mutate("definition", (("inputs", "A", "shape"), [])), VALID, VALID),
    ("correctness errors written as 'NaN' and 'Infinity'", "trace",
     mutate("trace", (("evaluation", "correctness", "max_relative_error"), "NaN"),
            (("evaluation", "correctness", "max_absolute_error"), "Infinity")), VALID, VALID),

    # Rejected by both.
    ("dtype 'unknown'", "definition",
     mutate("definition", (("inputs", "A", "dtype"), "unknown")), INVALID, INVALID),
    ("shape 'M' (a string, not a list)", "definition",
     mutate("definition", (("inputs", "A", "shape"), "M")), INVALID, INVALID),
    ("missing reference", "definition",
     mutate("definition", (("reference",), DELETE)), INVALID, INVALID),
    ("integer inside shape", "definition",
     mutate("definition", (("inputs", "A", "shape"), ["M", 8])), INVALID, INVALID),
    ("const axis without value", "definition",
     mutate("definition", (("axes", "N"), {"type": "const"})), INVALID, INVALID),
    ("tags null", "definition", mutate("definition", (("tags",), None)), INVALID, INVALID),
    ("const axis value beyond 64 bits", "definition",
     mutate("definition", (("axes", "N", "value"), 2**63)), INVALID, INVALID),
    ("language 'sycl'", "solution",
     mutate("solution", (("spec", "language"), "sycl")), INVALID, INVALID),
    ("language 'CUDA' (capitalised)", "solution",
     mutate("solution", (("spec", "language"), "CUDA")), INVALID, INVALID),
    ("entry point without '::'", "solution",
     mutate("solution", (("spec", "entry_point"), "main.py")), INVALID, INVALID),
    ("entry point with two '::'", "solution",
     mutate("solution", (("spec", "entry_point"), "main.py::a::run")), INVALID, INVALID),
    ("empty target_hardware", "solution",
     mutate("solution", (("spec", "target_hardware"), [])), INVALID, INVALID),
    ("absolute source path", "solution",
     mutate("solution", (("sources", 0, "path"), "/main.py"),
            (("spec", "entry_point"), "/main.py::run")), INVALID, INVALID),
    ("source path with '..'", "solution",
     mutate("solution", (("sources", 0, "path"), "src/../main.py"),
            (("spec", "entry_point"), "src/../main.py::run")), INVALID, INVALID),
    ("no sources", "solution", mutate("solution", (("sources",), [])), INVALID, INVALID),
    ("workload line with solution ''", "workload",
     mutate("workload", (("solution",), "")), INVALID, INVALID),
    ("input type 'zeros'", "workload",
     mutate("workload", (("workload", "inputs", "A"), {"type": "zeros"})), INVALID, INVALID),
    ("scalar input with value null", "workload",
     mutate("workload", (("workload", "inputs", "A"), {"type": "scalar", "value": None})),
     INVALID, INVALID),
    ("status PASSED without performance", "trace",
     mutate("trace", (("evaluation", "performance"), DELETE)), INVALID, INVALID),
    ("status INCORRECT_NUMERICAL with performance", "trace",
     mutate("trace", (("evaluation", "status"), "INCORRECT_NUMERICAL")), INVALID, INVALID),
    ("status RUNTIME_ERROR with correctness", "trace",
     mutate("trace", (("evaluation", "status"), "RUNTIME_ERROR"),
            (("evaluation", "performance"), None)), INVALID, INVALID),
    ("status 'passed' (lower case)", "trace",
     mutate("trace", (("evaluation", "status"), "passed")), INVALID, INVALID),
    ("trace line without evaluation", "trace",
     mutate("trace", (("evaluation",), None)), INVALID, INVALID),
    ("log null", "trace", mutate("trace", (("evaluation", "log"), None)), INVALID, INVALID),

    # Documented differences (docs/schemas.md). The schema describes the canonical form, so it
    # rejects values fib only warns about ...
    ("const axis value '7' (fib: coerced, warning)", "definition",
     mutate("definition", (("axes", "N", "value"), "7")), INVALID, VALID),
    ("destination_passing_style 'yes' (fib: coerced, warning)", "solution",
     mutate("solution", (("spec", "destination_passing_style"), "yes")), INVALID, VALID),
    ("scalar input value '3' (fib: coerced, warning)", "workload",
     mutate("workload", (("workload", "inputs", "A"), {"type": "scalar", "value": "3"})),
     INVALID, VALID),
    ("performance latency 'Infinity' as a string (fib: accepted)", "trace",
     mutate("trace", (("evaluation", "performance", "latency_ms"), "Infinity")), INVALID, VALID),
    # ... and cannot see what only fib checks.
    ("reference without a top-level def run (fib only)", "definition",
     mutate("definition", (("reference",), "def main(A, B):\n    return A\n")), VALID, INVALID),
    ("constraint that is not a Python expression (fib only)", "definition",
     mutate("definition", (("constraints",), ["M = 1"])), VALID, INVALID),
    ("shape naming an undefined axis (fib only)", "definition",
     mutate("definition", (("inputs", "A", "shape"), ["M", "Q"])), VALID, INVALID),
    ("shape entry that is an expression (fib only)", "definition",
     mutate("definition", (("inputs", "A", "shape"), ["M", "K * 2"])), VALID, INVALID),
    ("input and output with the same name (fib only)", "definition",
     mutate("definition", (("outputs",), {"A": {"shape": ["M", "K"], "dtype": "float16"}})),
     VALID, INVALID),
    ("entry file not among the sources (fib only)", "solution",
     mutate("solution", (("spec", "entry_point"), "kernel.py::run")), VALID, INVALID),
    ("duplicate source paths (fib only)", "solution",
     mutate("solution", (("sources",), BASE_SOLUTION["sources"] * 2)), VALID, INVALID),
    ("run arity mismatch (fib-only code, ignored)", "definition",
     mutate("definition", (("reference",), "def run(A):\n    return A\n")), VALID, VALID),
]


# --- verdicts --------------------------------------------------------------------------------

def load_schemas(schema_dir):
    """Loads and self-checks the schemas. Returns ({kind: validator}, [problems])."""
    problems = []
    validators = {}
    raw = {}
    for kind, name in SCHEMA_FILES.items():
        path = schema_dir / name
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: cannot load: {exc}")
            continue
        try:
            Draft202012Validator.check_schema(schema)
        except Exception as exc:  # jsonschema.exceptions.SchemaError
            problems.append(f"{path}: not a valid draft 2020-12 schema: {exc}")
            continue
        if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            problems.append(f"{path}: $schema is not draft 2020-12")
        if schema.get("$id") != f"https://flashinfer-trace.fib/schemas/{name}":
            problems.append(f"{path}: unexpected $id {schema.get('$id')!r}")
        raw[kind] = schema
        validators[kind] = Draft202012Validator(schema)
    if "workload" in raw and "trace" in raw:
        for name in SHARED_DEFS:
            a = raw["workload"].get("$defs", {}).get(name)
            b = raw["trace"].get("$defs", {}).get(name)
            if a is None or a != b:
                problems.append(f"$defs/{name} differs between {SCHEMA_FILES['workload']} and "
                                f"{SCHEMA_FILES['trace']}")
    return validators, problems


def schema_verdict(validator, path, kind):
    """(verdict, reasons) of the schema for one file; .jsonl files are checked line by line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return INVALID, [f"cannot read: {exc}"]
    if kind in ("workload", "trace"):
        documents = [(number, line.strip()) for number, line in
                     enumerate(text.splitlines(), start=1) if line.strip()]
    else:
        documents = [(None, text)]
    reasons = []
    for number, document in documents:
        where = f"line {number}: " if number is not None else ""
        try:
            instance = json.loads(document)  # accepts NaN/Infinity, last duplicate key wins
        except ValueError as exc:
            reasons.append(f"{where}not JSON: {exc}")
            continue
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.path)):
            pointer = "".join(f"/{p}" for p in error.absolute_path)
            reasons.append(f"{where}{pointer or '/'}: {error.message[:200]}")
    return (INVALID if reasons else VALID), reasons


class FibFailure(Exception):
    """fib could not produce a verdict (crash, environment problem, unreadable output)."""


def fib_verdict(fib, path, kind):
    """(verdict, reasons) of `fib validate` for one file."""
    command = [str(fib), "validate", "--kind", kind, "--format", "json", str(path)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FibFailure(f"cannot run {' '.join(command)}: {exc}") from exc
    try:
        diagnostics = json.loads(result.stdout)
        if not isinstance(diagnostics, list):
            raise ValueError("not a JSON array")
    except ValueError as exc:
        raise FibFailure(f"exit {result.returncode}, unreadable output ({exc}): "
                         f"{result.stdout[:300]!r} {result.stderr[:300]!r}") from exc
    environment = [d for d in diagnostics if d.get("code") in ENVIRONMENT_CODES]
    if environment or result.returncode == FIB_EXIT_ENVIRONMENT:
        detail = "; ".join(f"{d.get('code')}: {d.get('message')}" for d in environment)
        raise FibFailure(f"fib could not check the file (exit {result.returncode}): "
                         f"{detail or result.stderr.strip()}")
    if result.returncode not in (0, 1):
        raise FibFailure(f"unexpected exit {result.returncode}: {result.stderr.strip()}")
    errors = [d for d in diagnostics
              if d.get("severity") == "error" and d.get("code") not in FIB_ONLY_CODES]
    reasons = []
    for d in errors:
        line = f"line {d['line']}: " if d.get("line") is not None else ""
        reasons.append(f"{line}{d.get('pointer') or '/'}: [{d.get('code')}] "
                       f"{str(d.get('message', ''))[:200]}")
    return (INVALID if errors else VALID), reasons


def describe(reasons):
    shown = reasons[:MAX_REASONS]
    more = f" (+{len(reasons) - MAX_REASONS} more)" if len(reasons) > MAX_REASONS else ""
    return "; ".join(shown) + more if shown else "-"


# --- main ------------------------------------------------------------------------------------

def corpus_files(dataset):
    """(kind, path) for every file the comparison covers, in a stable order."""
    patterns = [
        ("definition", "definitions", "*/*.json"),
        ("solution", "solutions", "**/*.json"),
        ("workload", "workloads", "*/*.jsonl"),
        ("trace", "traces", "**/*.jsonl"),
    ]
    files = []
    for kind, tree, pattern in patterns:
        root = dataset / tree
        if root.is_dir():
            files.extend((kind, p) for p in sorted(root.glob(pattern)) if p.is_file())
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fib", required=True, type=Path, help="path of the fib binary")
    parser.add_argument("--schemas", required=True, type=Path, help="directory of *.schema.json")
    parser.add_argument("--corpus", required=True, type=Path,
                        help="corpus directory (its dataset/ subdirectory is checked)")
    args = parser.parse_args()

    if not (args.fib.is_file() and os.access(args.fib, os.X_OK)):
        print(f"error: {args.fib} is not an executable file", file=sys.stderr)
        return 2

    passed = failed = 0

    validators, problems = load_schemas(args.schemas)
    for problem in problems:
        print(f"SCHEMA {problem}")
    if problems:
        failed += len(problems)
    if len(validators) != len(SCHEMA_FILES):
        print(f"{passed} passed, {failed} failed")
        return 1

    def check(label, kind, path, expected_schema=None, expected_fib=None):
        nonlocal passed, failed
        s_verdict, s_reasons = schema_verdict(validators[kind], path, kind)
        try:
            f_verdict, f_reasons = fib_verdict(args.fib, path, kind)
        except FibFailure as exc:
            print(f"FIB-FAILURE {label}: {exc}")
            failed += 1
            return
        if expected_schema is None:
            ok = s_verdict == f_verdict
            tag = "MISMATCH"
        else:
            ok = s_verdict == expected_schema and f_verdict == expected_fib
            tag = (f"UNEXPECTED (wanted schema={expected_schema} fib={expected_fib})")
        if ok:
            passed += 1
            return
        failed += 1
        print(f"{tag} {label} [{kind}]: schema={s_verdict} fib={f_verdict}")
        print(f"    schema: {describe(s_reasons)}")
        print(f"    fib:    {describe(f_reasons)}")

    # Hand-written cases.
    with tempfile.TemporaryDirectory(prefix="fib-schema-cases-") as tmp:
        for index, (name, kind, obj, expected_schema, expected_fib) in enumerate(HAND_CASES):
            suffix = ".jsonl" if kind in ("workload", "trace") else ".json"
            path = Path(tmp) / f"case{index:02d}{suffix}"
            text = json.dumps(obj, indent=None if suffix == ".jsonl" else 2)
            path.write_text(text + "\n", encoding="utf-8")
            check(f"case '{name}'", kind, path, expected_schema, expected_fib)
    hand_passed, hand_failed = passed, failed
    print(f"hand-written cases: {hand_passed} as expected, {hand_failed} not")

    # Corpus.
    dataset = args.corpus / "dataset"
    if not dataset.is_dir():
        print(f"skip: corpus dataset {dataset} not found; corpus verdicts not compared")
    else:
        files = corpus_files(dataset)
        for kind, path in files:
            check(str(path.relative_to(args.corpus)), kind, path)
        print(f"corpus: {len(files)} files, {passed - hand_passed} agree, "
              f"{failed - hand_failed} disagree")

    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

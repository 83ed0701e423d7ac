#!/usr/bin/env python3
"""sarif.structure: `fib validate --format sarif` writes valid SARIF 2.1.0 that says what the other
formats say.

In a temporary directory that plays the repository (GITHUB_WORKSPACE), fib validates a broken
definition and a workload file (file mode) and a dataset with findings in every kind of file
(dataset mode). Each SARIF log must:
- validate against tests/sarif/sarif-2.1.0-subset.schema.json (the objects fib writes, from the
  SARIF 2.1.0 object model: required properties, types, enums, startLine >= 1);
- have one rule per code used, in code order, each with the codes table's default level, and
  every result's ruleIndex naming the rule of its ruleId;
- resolve every relative uri against SRCROOT (a file: URI of the workspace, ending with '/') to a
  file that exists, with startLine within the file;
- hold the same findings as the JSON output: file mode's `--format json` diagnostics (code,
  severity, line), dataset mode's report messages of level error and warning (code, count).
"""
import argparse
import collections
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

import jsonschema

HERE = pathlib.Path(__file__).resolve().parent
CASES = HERE.parent / "cli" / "cases"


def run_fib(fib, args, cwd, workspace):
    env = dict(os.environ, GITHUB_WORKSPACE=str(workspace), FIB_CACHE_DIR=str(workspace / "cache"))
    env.pop("GITHUB_STEP_SUMMARY", None)
    result = subprocess.run([fib] + args, cwd=cwd, env=env, capture_output=True, timeout=120)
    if result.returncode not in (0, 1):
        sys.exit(f"fib {' '.join(args)} exited {result.returncode}:\n{result.stderr.decode()}")
    return result.stdout.decode("utf-8")


def check_log(log, schema, workspace, codes):
    jsonschema.validate(log, schema, format_checker=jsonschema.FormatChecker())
    assert len(log["runs"]) == 1, "one run"
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "fib"
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert ids == sorted(ids), f"rules in code order: {ids}"
    used = sorted({r["ruleId"] for r in run["results"]})
    assert ids == used, f"one rule per code used: rules {ids}, used {used}"
    levels, summaries = codes
    for rule in rules:
        assert rule["id"] in levels, f"rule {rule['id']} is not in the codes table"
        assert rule["defaultConfiguration"]["level"] == levels[rule["id"]], rule
        assert rule["shortDescription"]["text"] == summaries[rule["id"]], rule
    base = run["originalUriBaseIds"]["SRCROOT"]["uri"]
    assert base.startswith("file://") and base.endswith("/"), base
    base_path = pathlib.Path(urllib.parse.unquote(urllib.parse.urlparse(base).path))
    assert base_path == workspace, f"SRCROOT {base_path} is not the workspace {workspace}"
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"], result
        assert result["level"] in ("error", "warning", "note")
        assert result["partialFingerprints"]["fib/v1"], result
        for location in result.get("locations", []):
            artifact = location["physicalLocation"]["artifactLocation"]
            assert artifact.get("uriBaseId") == "SRCROOT", artifact
            path = base_path / urllib.parse.unquote(artifact["uri"])
            assert path.is_file(), f"{artifact['uri']} resolves to no file ({path})"
            region = location["physicalLocation"].get("region")
            if region:
                lines = path.read_text(encoding="utf-8").count("\n") + 1
                assert 1 <= region["startLine"] <= lines, (artifact["uri"], region)
    return run["results"]


def code_levels():
    # The codes table as docs/diagnostics.md renders it (generated from it, checked by a test):
    # code -> default severity, and the summary.
    levels, summaries = {}, {}
    doc = HERE.parent.parent / "docs" / "diagnostics.md"
    for line in doc.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0].startswith("`") and cells[1] in ("error", "warning", "note"):
            levels[cells[0].strip("`")] = cells[1]
            summaries[cells[0].strip("`")] = "|".join(cells[4:]).replace("\\|", "|")
    assert levels, f"no codes read from {doc}"
    return levels, summaries


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", required=True)
    args = parser.parse_args()
    fib = os.path.abspath(args.fib)
    codes = code_levels()
    schema = json.loads((HERE / "sarif-2.1.0-subset.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    with tempfile.TemporaryDirectory(prefix="fib-sarif-") as tmp:
        workspace = pathlib.Path(tmp).resolve() / "repo"
        workspace.mkdir()
        shutil.copy(CASES / "validate_broken_definition" / "broken.json", workspace / "broken.json")
        shutil.copytree(CASES / "validate_workload_lines" / "workloads", workspace / "workloads")
        shutil.copytree(CASES / "dataset_format_github" / "ds", workspace / "data" / "ds")

        # File mode: the same diagnostics as --format json.
        files = ["broken.json", "workloads"]
        sarif = json.loads(run_fib(fib, ["validate", *files, "--format", "sarif"],
                                   workspace, workspace))
        found = json.loads(run_fib(fib, ["validate", *files, "--format", "json"],
                                   workspace, workspace))
        results = check_log(sarif, schema, workspace, codes)
        assert len(results) == len(found), (len(results), len(found))
        for result, diagnostic in zip(results, found):
            assert result["ruleId"] == diagnostic["code"], (result, diagnostic)
            assert result["level"] == diagnostic["severity"], (result, diagnostic)
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            assert urllib.parse.unquote(uri) == diagnostic["file"], (uri, diagnostic)
            region = result["locations"][0]["physicalLocation"].get("region", {})
            assert region.get("startLine") == diagnostic["line"], (region, diagnostic)
        print(f"file mode: {len(results)} results, as --format json")

        # Dataset mode, from another working directory: the report's errors and warnings.
        reports = workspace / "reports"
        sarif = json.loads(run_fib(fib, [
            "validate", "--dataset", str(workspace / "data" / "ds"), "--disable-gpu",
            "--outputs", "json", "--output-folder", str(reports), "--format", "sarif"],
            pathlib.Path(tmp), workspace))
        results = check_log(sarif, schema, workspace, codes)
        report = json.loads(next(reports.glob("report-*.json")).read_text(encoding="utf-8"))
        expected = collections.Counter()
        sections = [c for d in report["definitions"].values() for c in d.values()
                    if isinstance(c, dict)]
        if report.get("fib_dataset"):
            sections.append(report["fib_dataset"])
        for section in sections:
            for message in section.get("messages", []):
                if message["level"] in ("error", "warning"):
                    expected[(message["code"], message["level"])] += 1
        got = collections.Counter((r["ruleId"], r["level"]) for r in results)
        assert got == expected, f"SARIF {dict(got)} != report {dict(expected)}"
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in results if r.get("locations")}
        kinds = {u.split("/")[2] for u in uris}
        assert kinds == {"definitions", "workloads", "solutions", "traces"}, uris
        lined = sum(1 for r in results if r.get("locations") and
                    "region" in r["locations"][0]["physicalLocation"])
        assert lined > 0, "some results have lines"
        print(f"dataset mode: {len(results)} results, as the report; "
              f"{lined} with a line, files in {sorted(kinds)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The hooks of .pre-commit-hooks.yaml, run the way pre-commit runs them, on a temporary repository.

    python3 tests/precommit/check_hooks.py --fib build/apps/fib/fib --dataset examples/dataset

pre-commit is not installed here (nor needed): for each hook this script does what pre-commit
does with a `language: system` hook. It lists the staged files of a temporary git repository
(`git diff --cached --name-only`), keeps those that `files` matches and `exclude` does not (Python
`re.search`, as pre-commit), and runs `entry` split as a shell would, plus `args`, plus the file
names, from the repository root, with fib first on PATH. It asserts:

  - every hook has the keys pre-commit requires (id, name, entry, language) and valid regexes;
  - a clean dataset passes both hooks (exit 0), and files outside the patterns (README.md, a
    report written by dataset mode, a .txt) are never passed;
  - a definition whose reference does not parse fails fib-validate with exit 1 and a
    `definition.reference.syntax` line naming that file; the same file written compactly fails
    fib-normalize-check with exit 1;
  - a fib.toml at the repository root applies (`ignore` makes the broken reference pass).
Exit status 0 when all held, 1 otherwise.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUIRED = ("id", "name", "entry", "language")


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True)


def staged(repo):
    out = subprocess.run(["git", "-C", repo, "diff", "--cached", "--name-only", "-z"],
                         check=True, capture_output=True, text=True).stdout
    return sorted(name for name in out.split("\0") if name)


def selected(hook, files):
    keep = re.compile(hook.get("files", ""))
    drop = re.compile(hook["exclude"]) if hook.get("exclude") else None
    return [f for f in files if keep.search(f) and not (drop and drop.search(f))]


def run_hook(hook, repo, fib_dir):
    files = selected(hook, staged(repo))
    if not files:
        return None, files, ""
    env = dict(os.environ, PATH=fib_dir + os.pathsep + os.environ.get("PATH", ""))
    env.pop("FIB_DATASET_PATH", None)
    argv = shlex.split(hook["entry"]) + list(hook.get("args", [])) + files
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, files, done.stdout + done.stderr


class Checks:
    def __init__(self):
        self.problems = []

    def expect(self, condition, what):
        print(("ok   " if condition else "FAIL ") + what)
        if not condition:
            self.problems.append(what)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fib", required=True)
    parser.add_argument("--dataset", required=True)
    args = parser.parse_args()
    fib_dir = os.path.dirname(os.path.abspath(args.fib))
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as f:
        hooks = {hook["id"]: hook for hook in yaml.safe_load(f)}
    checks = Checks()
    for hook in hooks.values():
        checks.expect(all(key in hook for key in REQUIRED) and hook["language"] == "system",
                      f"{hook.get('id')}: has {', '.join(REQUIRED)}, language system")
        for key in ("files", "exclude"):
            if key in hook:
                re.compile(hook[key])
    checks.expect(set(hooks) == {"fib-validate", "fib-normalize-check"},
                  "the hooks are fib-validate and fib-normalize-check")

    scratch = tempfile.mkdtemp(prefix="fib-precommit-")
    try:
        repo = os.path.join(scratch, "repo")
        shutil.copytree(args.dataset, repo)
        os.makedirs(os.path.join(repo, "reports"))
        with open(os.path.join(repo, "reports", "report-20260101-000000.json"), "w") as f:
            f.write("{}")
        for name in ("README.md", os.path.join("definitions", "notes.txt")):
            with open(os.path.join(repo, name), "w") as f:
                f.write("text\n")
        git(repo, "init", "-q")
        git(repo, "add", "-A")

        for hook_id in hooks:
            status, files, output = run_hook(hooks[hook_id], repo, fib_dir)
            checks.expect(status == 0, f"{hook_id}: a clean dataset passes (exit {status})"
                          + ("" if status == 0 else "\n" + output))
            checks.expect(bool(files) and all(
                not f.startswith("reports/") and f.endswith((".json", ".jsonl")) for f in files),
                f"{hook_id}: only dataset files are passed ({len(files)})")

        definitions = sorted(
            os.path.join(d, name) for d, _, names in os.walk(os.path.join(repo, "definitions"))
            for name in names if name.endswith(".json"))
        broken = definitions[0]
        relative = os.path.relpath(broken, repo)
        import json
        with open(broken, encoding="utf-8") as f:
            document = json.load(f)
        document["reference"] = "def run(:\n"
        with open(broken, "w", encoding="utf-8") as f:
            json.dump(document, f, separators=(",", ":"))
        git(repo, "add", "-A")

        status, files, output = run_hook(hooks["fib-validate"], repo, fib_dir)
        checks.expect(status == 1 and re.search(
            re.escape(relative) + r":\d+: error\[definition\.reference\.syntax\]", output),
            f"fib-validate: a broken reference fails with its file and code (exit {status})"
            + ("" if status == 1 else "\n" + output))
        status, files, output = run_hook(hooks["fib-normalize-check"], repo, fib_dir)
        checks.expect(status == 1 and relative in output,
                      f"fib-normalize-check: a compact definition fails naming it (exit {status})")

        with open(os.path.join(repo, "fib.toml"), "w") as f:
            f.write('ignore = ["definition.reference"]\n')
        status, files, output = run_hook(hooks["fib-validate"], repo, fib_dir)
        checks.expect(status == 0, f"fib-validate: the repository's fib.toml applies (exit {status})"
                      + ("" if status == 0 else "\n" + output))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(checks.problems)} problems")
    return 1 if checks.problems else 0


if __name__ == "__main__":
    sys.exit(main())

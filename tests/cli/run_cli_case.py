#!/usr/bin/env python3
"""Runs one golden CLI case of fib.

A case is a directory tests/cli/cases/<name>/ holding:
  cmd              the arguments after `fib`, one shell-quoted line (shlex rules)
  env              optional KEY=VALUE lines added to the environment
  expected.stdout  what fib must print on standard output
  expected.exit    its exit status
Input files live next to them; fib runs with the case directory as its working directory, so
paths in the output are relative and stable. FIB_UPDATE_GOLDEN=1 rewrites the expectations.
"""
import argparse
import difflib
import os
import shlex
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", required=True)
    parser.add_argument("--case", required=True)
    args = parser.parse_args()

    case = args.case
    with open(os.path.join(case, "cmd"), encoding="utf-8") as f:
        argv = shlex.split(f.read())
    env = dict(os.environ)
    env_file = os.path.join(case, "env")
    if os.path.exists(env_file):
        with open(env_file, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    key, _, value = line.partition("=")
                    env[key] = value
    result = subprocess.run([args.fib] + argv, cwd=case, env=env, capture_output=True,
                            timeout=120, check=False)
    stdout = result.stdout.decode("utf-8", "replace")
    stdout_path = os.path.join(case, "expected.stdout")
    exit_path = os.path.join(case, "expected.exit")
    if os.environ.get("FIB_UPDATE_GOLDEN") == "1":
        with open(stdout_path, "w", encoding="utf-8") as f:
            f.write(stdout)
        with open(exit_path, "w", encoding="utf-8") as f:
            f.write(f"{result.returncode}\n")
        print(f"updated {case}")
        return 0
    with open(stdout_path, encoding="utf-8") as f:
        expected_stdout = f.read()
    with open(exit_path, encoding="utf-8") as f:
        expected_exit = int(f.read().strip())
    ok = True
    if stdout != expected_stdout:
        ok = False
        sys.stdout.writelines(difflib.unified_diff(
            expected_stdout.splitlines(True), stdout.splitlines(True),
            "expected.stdout", "actual stdout"))
    if result.returncode != expected_exit:
        ok = False
        print(f"exit status {result.returncode}, expected {expected_exit}")
    if not ok:
        print("stderr was:\n" + result.stderr.decode("utf-8", "replace"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

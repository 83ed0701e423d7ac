#!/usr/bin/env python3
"""Runs one golden CLI case of fib.

A case is a directory tests/cli/cases/<name>/ holding:
  cmd              the arguments after `fib`, one shell-quoted line (shlex rules)
  env              optional KEY=VALUE lines added to the environment (GITHUB_WORKSPACE,
                   GITHUB_STEP_SUMMARY and the colour variables are removed first)
  expected.stdout  what fib must print on standard output
  expected.exit    its exit status
  expected.stderr  optional: what fib must print on standard error (compared only when present)
  requires-worker  optional, empty: the case needs fib-worker (fib built with torch); without it
                   the case is skipped (exit status 77)
  setup            optional Python script run before fib (argument: the scratch directory)
  check            optional Python script run after fib (argument: the scratch directory); what it
                   prints is compared too, after a line "--- check ---", and it must exit 0
  timeout          optional: the seconds fib may take (default 120), for cases that build
                   solutions with a compiler, which a loaded machine makes slow
  unprivileged     optional, empty: fib runs unable to read what permissions forbid, even as
                   root (CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped from its bounding set),
                   so a setup that chmods a directory to 000 means the same everywhere; where
                   they cannot be dropped the case is skipped
Input files live next to them; fib runs with the case directory as its working directory, so
paths in the output are relative and stable. FIB_UPDATE_GOLDEN=1 rewrites the expectations
(expected.stderr only where it already exists).

Every run gets a fresh scratch directory, removed afterwards (whatever modes setup gave it). `${FIB_CASE_TMP}` in cmd and env
stands for it; setup and check see it as $FIB_CASE_TMP and the fib binary as $FIB. In what is
compared, the scratch path reads `${FIB_CASE_TMP}`, report file names read
`report-YYYYMMDD-HHMMSS`, and the time of stderr log lines reads `[HH:MM:SS]`.
"""
import argparse
import ctypes
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SCRATCH = "${FIB_CASE_TMP}"


def mask(text, scratch, log_times=False):
    text = text.replace(scratch, SCRATCH)
    text = re.sub(r"report-\d{8}-\d{6}", "report-YYYYMMDD-HHMMSS", text)
    if log_times:
        text = re.sub(r"^\[\d\d:\d\d:\d\d\]", "[HH:MM:SS]", text, flags=re.MULTILINE)
    return text


def run_script(case, name, scratch, env):
    script = os.path.abspath(os.path.join(case, name))
    if not os.path.exists(script):
        return None
    return subprocess.run([sys.executable, script, scratch], cwd=case, env=env,
                          capture_output=True, timeout=120, check=False)


def compare(ok, expected, actual, label):
    if expected == actual:
        return ok
    sys.stdout.writelines(difflib.unified_diff(
        expected.splitlines(True), actual.splitlines(True), f"expected.{label}", f"actual {label}"))
    return False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", required=True)
    parser.add_argument("--case", required=True)
    args = parser.parse_args()

    case = args.case
    scratch = os.path.realpath(tempfile.mkdtemp(prefix="fib-cli-"))
    try:
        return run_case(os.path.abspath(args.fib), case, scratch)
    finally:
        make_removable(scratch)
        shutil.rmtree(scratch, ignore_errors=True)


def make_removable(scratch):
    # A case may leave directories that cannot be listed (mode 000): open them up first.
    for root, dirs, _ in os.walk(scratch):
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755)


PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2


def drop_dac_capabilities():
    # Runs in the child before exec: as root, what exec grants is limited by the bounding set.
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def can_fork_dropping():
    try:
        subprocess.run([sys.executable, "-c", ""], preexec_fn=drop_dac_capabilities,
                       check=True, capture_output=True)
        return True
    except (subprocess.SubprocessError, OSError):
        return False


SKIPPED = 77  # ctest's SKIP_RETURN_CODE for these cases


def run_case(fib, case, scratch) -> int:
    # A case that needs the reference worker (fib built with torch) skips without it.
    if os.path.exists(os.path.join(case, "requires-worker")):
        worker = os.path.join(os.path.dirname(os.path.dirname(fib)), "fib-worker", "fib-worker")
        if not os.path.exists(worker):
            print(f"skipped: {worker} was not built (FIB_WITH_TORCH)")
            return SKIPPED
    unprivileged = os.path.exists(os.path.join(case, "unprivileged"))
    if unprivileged and os.geteuid() == 0 and not can_fork_dropping():
        print("skipped: CAP_DAC_OVERRIDE cannot be dropped here (no CAP_SETPCAP)")
        return SKIPPED
    with open(os.path.join(case, "cmd"), encoding="utf-8") as f:
        argv = [a.replace(SCRATCH, scratch) for a in shlex.split(f.read())]
    env = dict(os.environ)
    # What a CI runner or a terminal sets must not reach a case unless its env file sets it: the
    # GitHub workspace changes annotation paths, a step summary would be appended to.
    # FIB_PYTHON_MODULE would load another fib's Python module.
    for key in ("GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY", "NO_COLOR", "FORCE_COLOR",
                "CLICOLOR_FORCE", "FIB_PYTHON_MODULE"):
        env.pop(key, None)
    # Each case starts with an empty cache root of its own, results and solution builds (a case's
    # env file may override it): ${FIB_CASE_TMP}/cache.
    env["FIB_CACHE_DIR"] = os.path.join(scratch, "cache")
    env_file = os.path.join(case, "env")
    if os.path.exists(env_file):
        with open(env_file, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    key, _, value = line.partition("=")
                    env[key] = value.replace(SCRATCH, scratch)
    script_env = dict(env, FIB=fib, FIB_CASE_TMP=scratch)
    setup = run_script(case, "setup", scratch, script_env)
    if setup is not None and setup.returncode != 0:
        print("setup failed:\n" + setup.stdout.decode("utf-8", "replace") +
              setup.stderr.decode("utf-8", "replace"))
        return 1
    drop = drop_dac_capabilities if unprivileged and os.geteuid() == 0 else None
    limit = 120
    if os.path.exists(os.path.join(case, "timeout")):
        with open(os.path.join(case, "timeout")) as f:
            limit = int(f.read().strip())
    result = subprocess.run([fib] + argv, cwd=case, env=env, capture_output=True,
                            timeout=limit, check=False, preexec_fn=drop)
    stdout = mask(result.stdout.decode("utf-8", "replace"), scratch)
    stderr = mask(result.stderr.decode("utf-8", "replace"), scratch, log_times=True)
    check = run_script(case, "check", scratch, script_env)
    check_failed = False
    if check is not None:
        stdout += "--- check ---\n" + mask(check.stdout.decode("utf-8", "replace"), scratch)
        check_failed = check.returncode != 0
    stdout_path = os.path.join(case, "expected.stdout")
    stderr_path = os.path.join(case, "expected.stderr")
    exit_path = os.path.join(case, "expected.exit")
    if os.environ.get("FIB_UPDATE_GOLDEN") == "1":
        with open(stdout_path, "w", encoding="utf-8") as f:
            f.write(stdout)
        if os.path.exists(stderr_path):
            with open(stderr_path, "w", encoding="utf-8") as f:
                f.write(stderr)
        with open(exit_path, "w", encoding="utf-8") as f:
            f.write(f"{result.returncode}\n")
        print(f"updated {case}")
        if check_failed:
            print("check failed:\n" + check.stderr.decode("utf-8", "replace"))
            return 1
        return 0
    with open(stdout_path, encoding="utf-8") as f:
        expected_stdout = f.read()
    with open(exit_path, encoding="utf-8") as f:
        expected_exit = int(f.read().strip())
    ok = compare(True, expected_stdout, stdout, "stdout")
    if os.path.exists(stderr_path):
        with open(stderr_path, encoding="utf-8") as f:
            ok = compare(ok, f.read(), stderr, "stderr")
    if result.returncode != expected_exit:
        ok = False
        print(f"exit status {result.returncode}, expected {expected_exit}")
    if check_failed:
        ok = False
        print("check failed:\n" + check.stderr.decode("utf-8", "replace"))
    if not ok:
        print("stderr was:\n" + result.stderr.decode("utf-8", "replace"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

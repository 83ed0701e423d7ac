#!/usr/bin/env python3
"""Installs a fib build into a scratch prefix and checks that the installed tree works alone.

Steps (all in a fresh temporary directory, removed afterwards; nothing is written to the source
or build tree):
  1. `cmake --install BUILD --prefix TMP/stage`, then the stage is moved to TMP/moved, so that
     nothing can work only because a path was baked in at install time;
  2. the layout: bin/fib, the schemas under share/fib/schemas, the docs under share/doc/fib,
     <libdir>/fib/fib-python.so, and libexec/fib/fib-worker exactly when the worker was built
     (--worker yes|no);
  3. the installed fib validates SOURCE/examples/dataset (`--disable-gpu --outputs stdout`);
  4. with a worker: `fib validate --smoke` on an example definition runs its reference in the
     installed worker (FIB_WORKER unset, so fib found it next to itself);
  5. with the installed worker removed (or never built), the same command reports
     `worker.unavailable`: an installed fib never falls back to the build tree's worker;
  6. with the installed Python module removed, validating a definition with a cold cache reports
     `python.unavailable`: nor does it fall back to the build tree's module.
Exit status 0 when every check passes, 1 otherwise (each failure is printed).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

SMOKE_DEFINITION = os.path.join("examples", "dataset", "definitions", "rmsnorm", "rmsnorm_h64.json")


class Checker:
    def __init__(self):
        self.failures = 0

    def expect(self, condition, what, detail=""):
        if not condition:
            self.failures += 1
            print(f"FAIL: {what}")
            if detail:
                print(detail.rstrip())
        return condition


def run(command, cwd, env):
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=300, check=False)
    return result, f"$ {' '.join(command)}\nexit {result.returncode}\n--- stdout\n" \
                   f"{result.stdout}--- stderr\n{result.stderr}"


def python_modules(prefix):
    """The installed fib-python.so files (<libdir>/fib/; the libdir is lib/ or lib/<multiarch>/)."""
    return sorted(glob.glob(os.path.join(prefix, "lib*", "**", "fib", "fib-python.so"),
                            recursive=True))


def check_layout(check, prefix, source, worker_built):
    check.expect(os.access(os.path.join(prefix, "bin", "fib"), os.X_OK), "bin/fib is installed")
    worker = os.path.join(prefix, "libexec", "fib", "fib-worker")
    if worker_built:
        check.expect(os.access(worker, os.X_OK), "libexec/fib/fib-worker is installed")
    else:
        check.expect(not os.path.exists(worker), "no libexec/fib/fib-worker without torch")
    check.expect(not os.path.exists(os.path.join(prefix, "bin", "fib-worker")),
                 "fib-worker is not in bin/")
    check.expect(len(python_modules(prefix)) == 1,
                 "fib-python.so is installed once, under <libdir>/fib/",
                 ", ".join(python_modules(prefix)))
    schemas = sorted(name for name in os.listdir(os.path.join(source, "schemas"))
                     if name.endswith(".schema.json"))
    installed = os.path.join(prefix, "share", "fib", "schemas")
    check.expect(os.path.isdir(installed) and sorted(os.listdir(installed)) == schemas,
                 f"share/fib/schemas holds exactly {schemas}")
    docs = os.path.join(prefix, "share", "doc", "fib")
    for name in ["README.md", "LICENSE", os.path.join("docs", "building.md"),
                 os.path.join("docs", "cli.md"), os.path.join("docs", "ci.md")]:
        check.expect(os.path.isfile(os.path.join(docs, name)), f"share/doc/fib/{name} is installed")
    generated = {
        os.path.join("share", "man", "man1", "fib.1"): ".TH FIB 1",
        os.path.join("share", "bash-completion", "completions", "fib"): "complete -o filenames",
        os.path.join("share", "zsh", "site-functions", "_fib"): "#compdef fib",
        os.path.join("share", "fish", "vendor_completions.d", "fib.fish"): "complete -c fib",
    }
    for name, marker in generated.items():
        path = os.path.join(prefix, name)
        text = open(path, encoding="utf-8").read() if os.path.isfile(path) else ""
        check.expect(marker in text, f"{name} is installed (holds {marker!r})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="the CMake build directory")
    parser.add_argument("--source", required=True, help="the source tree (examples/ is read)")
    parser.add_argument("--worker", choices=["yes", "no"], required=True,
                        help="whether the build has fib-worker")
    parser.add_argument("--cmake", default="cmake")
    args = parser.parse_args()
    source = os.path.abspath(args.source)
    worker_built = args.worker == "yes"
    check = Checker()

    with tempfile.TemporaryDirectory(prefix="fib-install-") as scratch:
        stage = os.path.join(scratch, "stage")
        result, log = run([args.cmake, "--install", args.build, "--prefix", stage], scratch,
                          os.environ.copy())
        if not check.expect(result.returncode == 0, "cmake --install succeeds", log):
            return 1
        prefix = os.path.join(scratch, "moved")
        os.rename(stage, prefix)
        check_layout(check, prefix, source, worker_built)

        env = {key: value for key, value in os.environ.items()
               if key not in ("FIB_WORKER", "FIB_PYTHON_MODULE", "FIB_DATASET_PATH",
                              "FIB_CACHE_PATH")}
        env["HOME"] = scratch
        fib = os.path.join(prefix, "bin", "fib")
        dataset = os.path.join(source, "examples", "dataset")
        result, log = run([fib, "validate", "--dataset", dataset, "--disable-gpu", "--outputs",
                           "stdout"], scratch, env)
        check.expect(result.returncode == 0, "installed fib validates examples/dataset", log)
        check.expect("=== Dataset Validation Report ===" in result.stdout
                     and " 0 error" in result.stdout,
                     "the dataset report says 0 errors", log)

        result, log = run([fib, "validate", "--help"], scratch, env)
        installed_doc = os.path.join(prefix, "share", "doc", "fib", "docs", "configuration.md")
        check.expect(result.returncode == 0 and installed_doc in result.stdout,
                     "validate --help names the installed docs/configuration.md (moved prefix)",
                     log)

        smoke = [fib, "validate", "--smoke", os.path.join(source, SMOKE_DEFINITION)]
        if worker_built:
            result, log = run(smoke, scratch, env)
            check.expect(result.returncode == 0, "the installed worker runs the smoke run", log)
            check.expect("note[reference.ok]" in result.stdout and "smoke run: ok" in result.stdout,
                         "the smoke run reports reference.ok", log)
            os.remove(os.path.join(prefix, "libexec", "fib", "fib-worker"))
        result, log = run(smoke, scratch, env)
        check.expect(result.returncode == 3 and "worker.unavailable" in result.stdout,
                     "without its installed worker, fib reports worker.unavailable", log)

        # Without its installed Python module, fib reports python.unavailable (it never takes the
        # build tree's); a cold cache, so that the check needs the interpreter.
        for module in python_modules(prefix):
            os.remove(module)
        env["HOME"] = os.path.join(scratch, "home-without-module")
        result, log = run([fib, "validate", os.path.join(source, SMOKE_DEFINITION)], scratch, env)
        check.expect(result.returncode == 3 and "python.unavailable" in result.stdout
                     and "fib-python.so" in result.stdout,
                     "without its installed Python module, fib reports python.unavailable", log)

    if check.failures:
        print(f"{check.failures} install check(s) failed")
        return 1
    print("install: layout, dataset validation, worker and Python module lookup ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

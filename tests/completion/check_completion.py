#!/usr/bin/env python3
"""completion.scripts: `fib completion bash|zsh|fish` and `fib man` follow fib's command table.

- bash: the script passes `bash -n`; sourced into a bash, `_fib` completes what the command table
  has: every subcommand `fib --help` lists, nested subcommands (`fib report …`), a subcommand's
  options after "-", an option's choices after it (`--format`, `--kind`, `completion`'s shell),
  and the word after a value-taking option is skipped when finding the subcommand.
- zsh and fish: each passes `zsh -n` / `fish --no-execute` where the shell is installed; in any
  case the script defines a completion for every subcommand and carries the choices of
  `validate --format` and the description of `validate`.
- the manual page: every subcommand of `fib --help` has a section, every option of
  `fib validate --help` is listed, and groff (when installed) reads it without warnings.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, **kwargs)


def subcommands_of(fib, *path):
    # The "SUBCOMMANDS:" section of CLI11's help: one "  name   description" line each.
    out = run([fib, *path, "--help"]).stdout
    names, inside = [], False
    for line in out.splitlines():
        if line.strip().upper() == "SUBCOMMANDS:":
            inside = True
            continue
        if inside:
            m = re.match(r"^  (\S+)\s", line)
            if not m:
                break
            names.append(m.group(1))
    return names


def options_of(fib, *path):
    out = run([fib, *path, "--help"]).stdout
    return sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", out.split("\n\n", 1)[-1])))


def bash_complete(script, words):
    # words: the command line split into words, the last one being the word completed.
    line = " ".join(f"'{w}'" for w in words)
    program = (f'source "{script}"\nCOMP_WORDS=({line})\nCOMP_CWORD={len(words) - 1}\n'
               '_fib\nprintf "%s\\n" "${COMPREPLY[@]}"\n')
    result = run(["bash", "--norc", "--noprofile", "-c", program], cwd=os.path.dirname(script))
    assert result.returncode == 0, result.stderr
    return [w for w in result.stdout.splitlines() if w]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", required=True)
    parser.add_argument("--scratch", default=None)
    args = parser.parse_args()
    fib = os.path.abspath(args.fib)
    failures = []

    def expect(condition, what):
        print(("ok   " if condition else "FAIL ") + what)
        if not condition:
            failures.append(what)

    commands = subcommands_of(fib)
    expect(len(commands) >= 10 and "validate" in commands and "completion" in commands,
           f"fib --help lists the subcommands ({', '.join(commands)})")
    report_subs = subcommands_of(fib, "report")
    expect(report_subs == ["summary", "best", "fastp", "merge", "html"], f"fib report has {report_subs}")

    scripts = {}
    for shell in ("bash", "zsh", "fish"):
        result = run([fib, "completion", shell])
        expect(result.returncode == 0 and result.stdout, f"fib completion {shell} prints a script")
        path = os.path.join(args.scratch or os.getcwd(), f"fib-completion.{shell}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(result.stdout)
        scripts[shell] = path
    result = run([fib, "completion", "tcsh"])
    expect(result.returncode == 2, "an unknown shell is a usage error (exit 2)")

    bash = scripts["bash"]
    expect(run(["bash", "-n", bash]).returncode == 0, "bash -n accepts the bash script")
    expect(sorted(bash_complete(bash, ["fib", ""])) == sorted(commands),
           "bash: `fib <TAB>` offers exactly the subcommands")
    expect(set(bash_complete(bash, ["fib", "val"])) == {c for c in commands if c.startswith("val")},
           "bash: `fib val<TAB>` offers the validate commands")
    expect(bash_complete(bash, ["fib", "report", ""]) == report_subs,
           "bash: `fib report <TAB>` offers its subcommands")
    expect(bash_complete(bash, ["fib", "validate", "--for"]) == ["--format"],
           "bash: `fib validate --for<TAB>` is --format")
    expect(bash_complete(bash, ["fib", "validate", "--format", ""]) ==
           ["text", "json", "github", "sarif"], "bash: --format offers its four values")
    expect(bash_complete(bash, ["fib", "validate", "--kind", "w"]) == ["workload"],
           "bash: --kind w<TAB> is workload")
    expect(bash_complete(bash, ["fib", "completion", ""]) == ["bash", "zsh", "fish"],
           "bash: `fib completion <TAB>` offers the shells")
    expect(bash_complete(bash, ["fib", "validate", "--dataset", "report", "--disable-g"]) ==
           ["--disable-gpu"], "bash: the value of --dataset is not taken for a subcommand")
    validate_options = options_of(fib, "validate")
    offered = set(bash_complete(bash, ["fib", "validate", "--"]))
    missing = [o for o in validate_options if o not in offered]
    expect(not missing, f"bash: every option of `fib validate --help` is offered (missing {missing})")
    best = set(bash_complete(bash, ["fib", "report", "best", "--"]))
    expect("--atol" in best and "--format" not in bash_complete(bash, ["fib", "report", "--f"]),
           "bash: `fib report best --<TAB>` offers best's options, not another command's")

    for shell, check in (("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])):
        text = open(scripts[shell], encoding="utf-8").read()
        if shutil.which(check[0]):
            expect(run(check + [scripts[shell]]).returncode == 0, f"{check[0]} accepts the script")
        else:
            print(f"skip {shell}: {check[0]} is not installed, syntax not checked")
        for command in commands:
            if shell == "zsh":
                expect(f"_fib_{command.replace('-', '_')}()" in text, f"zsh: a function for {command}")
            else:
                expect(f"-a '{command}'" in text, f"fish: {command} is offered")
    zsh = open(scripts["zsh"], encoding="utf-8").read()
    expect(zsh.startswith("#compdef fib\n") and ":(text json github sarif)" in zsh,
           "zsh: #compdef and the values of --format")
    fish = open(scripts["fish"], encoding="utf-8").read()
    expect("-l format -x -a 'text json github sarif'" in fish, "fish: the values of --format")

    man = run([fib, "man"])
    expect(man.returncode == 0 and ".TH FIB 1" in man.stdout, "fib man prints a page")
    for command in commands:
        expect(f'.SS "fib {command}"' in man.stdout, f"man: a section for fib {command}")
    page_options = set(re.findall(r"\\fB\\-\\-([a-z0-9\\-]+)\\fR", man.stdout))
    page_options = {o.replace("\\-", "-") for o in page_options}
    missing = [o for o in validate_options if o[2:] not in page_options]
    expect(not missing, f"man: every option of fib validate is listed (missing {missing})")
    if shutil.which("groff"):
        page = os.path.join(args.scratch or os.getcwd(), "fib.1")
        with open(page, "w", encoding="utf-8") as f:
            f.write(man.stdout)
        result = run(["groff", "-man", "-ww", "-z", page])
        expect(result.returncode == 0 and not result.stderr.strip(),
               f"groff reads the page without warnings {result.stderr.strip()[:200]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

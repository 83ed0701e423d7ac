#!/usr/bin/env python3
"""Self-check of the FlashInfer/SGLang test doubles in tests/fakes (not the real ones).

Runs every harness in tests/dump/harnesses with FLASHINFER_TRACE_DUMP=1 and a temp
FLASHINFER_TRACE_DUMP_DIR, checks what the fake dumper wrote (dumper.md §1.3-§1.7),
runs the fake SGLang Engine, and - when build/apps/fib/fib exists - checks that
`fib normalize` reports every ok.py / SGLang dump valid.

    /usr/bin/python3 tests/dump/check_fakes.py        # exit 0 = all checks passed
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FAKES = REPO / "tests" / "fakes"
HARNESSES = HERE / "harnesses"
FIB = Path(os.environ.get("FIB", REPO / "build" / "apps" / "fib" / "fib"))

KEY_ORDER = ["name", "description", "op_type", "tags", "axes", "constraints", "inputs",
             "outputs", "reference", "check", "init"]
REQUIRED = ["name", "description", "op_type", "tags", "axes", "inputs", "outputs"]
ALLOWED_DTYPES = {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                  "float4_e2m1", "int64", "int32", "int16", "int8", "bool"}

OK_NAMES = {"rmsnorm_h4096", "rmsnorm_h2048", "fused_add_rmsnorm_h4096",
            "gemma_rmsnorm_h1024", "rmsnorm_h1024", "gemm_bf16_N8192_K4096",
            "bmm_bf16_N128_K64"}
LLAMA3B = "meta-llama/Llama-3.2-3B-Instruct"
SGLANG_NAMES = {
    1: {"rmsnorm_h3072", "fused_add_rmsnorm_h3072", "gemm_bf16_N5120_K3072",
        "gemm_bf16_N3072_K3072", "gemm_bf16_N16384_K3072", "gemm_bf16_N3072_K8192"},
    2: {"rmsnorm_h3072", "fused_add_rmsnorm_h3072", "gemm_bf16_N2560_K3072",
        "gemm_bf16_N3072_K1536", "gemm_bf16_N8192_K3072", "gemm_bf16_N3072_K4096"},
}

failures = []


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def env_for(dump_dir, dump="1"):
    env = dict(os.environ)
    env.pop("FLASHINFER_TRACE_DUMP", None)
    env.pop("FLASHINFER_TRACE_DUMP_DIR", None)
    if dump is not None:
        env["FLASHINFER_TRACE_DUMP"] = dump
    if dump_dir is not None:
        env["FLASHINFER_TRACE_DUMP_DIR"] = str(dump_dir)
    env["PYTHONPATH"] = str(FAKES) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run(args, env, timeout=60):
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)


def harness(name, dump_dir, **kw):
    return run([sys.executable, str(HARNESSES / f"{name}.py")], env_for(dump_dir, **kw))


def names_in(d: Path):
    return {p.stem for p in d.glob("*.json")} if d.is_dir() else set()


def check_definition_file(path: Path):
    text = path.read_text()
    ok = check(not text.endswith("\n"), f"{path.name}: no trailing newline")
    ok &= check(text.isascii(), f"{path.name}: ASCII only (ensure_ascii)")
    try:
        d = json.loads(text)
    except ValueError as e:
        return check(False, f"{path.name}: valid JSON ({e})")
    ok &= check(text == json.dumps(d, indent=2), f"{path.name}: byte-identical to json.dumps(indent=2)")
    keys = list(d)
    ok &= check(all(k in keys for k in REQUIRED) and keys == [k for k in KEY_ORDER if k in keys],
                f"{path.name}: keys in dumper order {keys}")
    ok &= check(d["name"] == path.stem, f"{path.name}: name equals file stem")
    ok &= check(d["tags"][0].startswith("fi_api:flashinfer.") and "status:verified" in d["tags"],
                f"{path.name}: tags {d['tags']}")
    for sect in ("inputs", "outputs"):
        for k, v in d[sect].items():
            ok &= check(v["dtype"] in ALLOWED_DTYPES, f"{path.name}: {sect}.{k} dtype {v['dtype']}")
            ok &= check(v["shape"] is None or all(s in d["axes"] for s in v["shape"]),
                        f"{path.name}: {sect}.{k} shape names are axes")
    for a, v in d["axes"].items():
        if v["type"] == "const":
            ok &= check(isinstance(v.get("value"), int), f"{path.name}: const axis {a} has a value")
    ref = d.get("reference", "")
    ok &= check("import torch" in ref and "def _" in ref, f"{path.name}: reference has preamble + _x_reference")
    if ref:
        import ast
        tree = ast.parse(ref)
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        entry = defs[-1]
        params = [a.arg for a in entry.args.args]
        ok &= check(entry.name.startswith("_") and entry.name.endswith("_reference"),
                    f"{path.name}: last def {entry.name} is the entry")
        ok &= check(params == list(d["inputs"]), f"{path.name}: reference params {params} == inputs")
    return ok


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="fib-fakes-"))
    try:
        # ---- ok.py ---------------------------------------------------------
        ok_dir = tmp / "ok" / "nested"  # not existing yet: the dumper creates it
        r = harness("ok", ok_dir)
        check(r.returncode == 0, f"ok.py exit 0 (got {r.returncode}; stderr={r.stderr.strip()!r})")
        check(r.stdout.strip() == "ok: 8 traced calls", "ok.py prints its line")
        check(names_in(ok_dir) == OK_NAMES, f"ok.py names {sorted(names_in(ok_dir))}")
        for p in sorted(ok_dir.glob("*.json")):
            check_definition_file(p)
        if (ok_dir / "bmm_bf16_N128_K64.json").exists():
            bmm = json.loads((ok_dir / "bmm_bf16_N128_K64.json").read_text())
            check(bmm["axes"]["batch"] == {"type": "const", "value": 2,
                                          "description": "Number of independent GEMMs (not in the name)."},
                  "abbrev='' axis: value from the first call (2), not in the name")
        if (ok_dir / "fused_add_rmsnorm_h4096.json").exists():
            fa = json.loads((ok_dir / "fused_add_rmsnorm_h4096.json").read_text())
            check(list(fa["outputs"]) == ["output", "residual"] and "residual" in fa["inputs"]
                  and fa["outputs"]["output"]["param"] == "input",
                  "fused_add_rmsnorm is in place (inputs/outputs share 'residual')")

        # ---- none.py / env_after_import.py ---------------------------------
        for name in ("none", "env_after_import"):
            d = tmp / name
            r = harness(name, d)
            check(r.returncode == 0, f"{name}.py exit 0 (got {r.returncode})")
            check(names_in(d) == set(), f"{name}.py dumps nothing")

        # ---- no DIR / DUMP=0 / DUMP=false ----------------------------------
        cwd_before = set(os.listdir(REPO))
        r = harness("ok", None)
        check(r.returncode == 0 and set(os.listdir(REPO)) == cwd_before,
              "DUMP=1 without DIR: nothing written anywhere (no default dir)")
        d = tmp / "dump0"
        harness("ok", d, dump="0")
        check(names_in(d) == set(), "FLASHINFER_TRACE_DUMP=0 dumps nothing")
        d = tmp / "dumpfalse"
        harness("ok", d, dump="false")
        check(names_in(d) == OK_NAMES, "FLASHINFER_TRACE_DUMP=false enables dumping (real quirk)")

        # ---- crash / exit error / truncated / hang -------------------------
        d = tmp / "crash"
        r = harness("crash_after_dump", d)
        check(r.returncode == -signal.SIGABRT, f"crash_after_dump.py killed by SIGABRT (got {r.returncode})")
        check(names_in(d) == {"rmsnorm_h4096"}, "crash_after_dump.py left rmsnorm_h4096.json")
        d = tmp / "exit3"
        r = harness("exit_error_after_dump", d)
        check(r.returncode == 3, f"exit_error_after_dump.py exit 3 (got {r.returncode})")
        check(names_in(d) == {"rmsnorm_h4096"}, "exit_error_after_dump.py left rmsnorm_h4096.json")
        d = tmp / "trunc"
        r = harness("truncated", d)
        check(r.returncode == 0, f"truncated.py exit 0 (got {r.returncode})")
        check(names_in(d) == {"rmsnorm_h4096", "broken_h1"}, "truncated.py: two files")
        if (d / "broken_h1.json").exists():
            try:
                json.loads((d / "broken_h1.json").read_text())
                check(False, "broken_h1.json is invalid JSON")
            except ValueError:
                check(True, "broken_h1.json is invalid JSON")
            check_definition_file(d / "rmsnorm_h4096.json")
        d = tmp / "hang"
        p = subprocess.Popen([sys.executable, str(HARNESSES / "hang_after_dump.py")], env=env_for(d),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            p.communicate(timeout=2)
            check(False, "hang_after_dump.py still running after 2 s")
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            check(True, "hang_after_dump.py still running after 2 s (killed)")
            check(out == "dumped; now hanging\n", f"hang_after_dump.py printed its line ({out!r})")
        check(names_in(d) == {"rmsnorm_h4096"}, "hang_after_dump.py left rmsnorm_h4096.json")

        # ---- torch is never imported ---------------------------------------
        r = run([sys.executable, "-c",
                 "import sys, flashinfer, sglang.srt.entrypoints.engine; "
                 "print('torch' in sys.modules)"], env_for(tmp / "notorch"))
        check(r.stdout.strip() == "False", "importing the fakes does not import torch")

        # ---- explicit fi_trace bypasses dedup ------------------------------
        d = tmp / "explicit"
        code = ("import flashinfer as fi\n"
                "x, w = fi.tensor(2, 64), fi.tensor(64)\n"
                f"r = fi.rmsnorm.fi_trace(input=x, weight=w, save_dir={str(d)!r})\n"
                "assert r['name'] == 'rmsnorm_h64', r['name']\n"
                "from flashinfer.trace import _DUMPED_NAMES\n"
                "assert 'rmsnorm_h64' not in _DUMPED_NAMES\n"
                "r = fi.rmsnorm.fi_trace(hidden_states=x, weight=w)\n"
                "assert r['inputs']['hidden_states']['dtype'] == 'unknown'\n"
                "assert r['name'] == 'rmsnorm_h64'  # hidden_size still read from weight\n"
                "r = fi.rmsnorm.fi_trace(hidden_states=x)\n"
                "assert 'value' not in r['axes']['hidden_size'] and r['name'] == 'rmsnorm'\n")
        r = run([sys.executable, "-c", code], env_for(None, dump=None))
        check(r.returncode == 0 and names_in(d) == {"rmsnorm_h64"},
              f"explicit fi_trace writes without dedup; definition names -> unknown ({r.stderr.strip()[-300:]})")

        # ---- fake SGLang Engine --------------------------------------------
        def engine(d, backend="flashinfer", no_graph=True, tp=1, model=LLAMA3B, log_level="warning"):
            code = (
                "import os\n"
                "os.environ['FLASHINFER_TRACE_DUMP'] = '1'\n"
                f"os.environ['FLASHINFER_TRACE_DUMP_DIR'] = {str(d)!r}\n"
                "os.environ.setdefault('SGLANG_SKIP_CUBIN_DOWNLOAD', '1')\n"
                "from sglang.srt.entrypoints.engine import Engine\n"
                f"engine = Engine(model_path={model!r}, attention_backend={backend!r},\n"
                f"                disable_cuda_graph={no_graph!r}, mem_fraction_static=0.5, tp_size={tp},\n"
                f"                ep_size=1, page_size=16, disable_radix_cache=True, log_level={log_level!r})\n"
                "out = engine.generate(['The capital of France is'], {'temperature': 0.0, 'max_new_tokens': 4})\n"
                "assert isinstance(out, list) and isinstance(out[0]['text'], str)\n"
                "engine.shutdown()\n")
            return run([sys.executable, "-c", code], env_for(None, dump=None))

        for tp in (1, 2):
            d = tmp / f"sglang_tp{tp}"
            r = engine(d, tp=tp)
            check(r.returncode == 0 and r.stdout == "" and r.stderr == "",
                  f"sglang tp={tp}: exit 0, silent at log_level=warning ({r.stderr.strip()[-300:]})")
            check(names_in(d) == SGLANG_NAMES[tp], f"sglang tp={tp} names {sorted(names_in(d))}")
            for p in sorted(d.glob("*.json")):
                check_definition_file(p)
        d = tmp / "sglang_graphs"
        r = engine(d, no_graph=False)
        check(r.returncode == 0 and names_in(d) == set(), "sglang with CUDA graphs: nothing dumped")
        d = tmp / "sglang_triton"
        r = engine(d, backend="triton")
        check(r.returncode == 0 and names_in(d) == set(), "sglang triton backend: nothing dumped")
        r = engine(tmp / "sglang_info", log_level="info")
        check(r.returncode == 0 and r.stdout == "" and r.stderr.startswith("[fake sglang]"),
              "sglang log_level=info: one stderr line, nothing on stdout")
        r = engine(tmp / "sglang_unknown", model="nobody/no-such-model")
        check(r.returncode != 0 and "unknown model_path" in r.stderr, "sglang unknown model id: clear error")

        # ---- fib normalize (Path A ends in a validated dataset) -------------
        if FIB.exists():
            for label, d in (("ok.py", ok_dir), ("sglang tp=1", tmp / "sglang_tp1"),
                             ("sglang tp=2", tmp / "sglang_tp2")):
                out = tmp / f"normalized_{label.replace(' ', '_').replace('=', '')}"
                r = run([str(FIB), "normalize", "--output-dir", str(out), str(d)], dict(os.environ))
                status = [ln for ln in r.stderr.splitlines() if ": changed" in ln or ": unchanged" in ln]
                check(r.returncode == 0, f"fib normalize on {label}: exit 0 (got {r.returncode})")
                check(len(status) == len(names_in(d)) and all(ln.endswith("valid") and
                                                             not ln.endswith("invalid") for ln in status),
                      f"fib normalize on {label}: every file valid")
                print("  " + (r.stderr.strip().splitlines() or [""])[-1])
        else:
            print(f"SKIP fib normalize: {FIB} not built")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"\n{len(failures)} failure(s)")
    for f in failures:
        print("  - " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

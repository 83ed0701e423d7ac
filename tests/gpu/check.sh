#!/usr/bin/env bash
# The GPU check of fib's timing and sandbox (docs/execution.md, "The GPU inside the sandbox"):
# one script for a machine with an NVIDIA GPU, fib and fib-worker built there against its torch
# (docs/building.md). It runs in about two minutes and prints one PASS or FAIL line per check;
# exit 0 when all pass.
#
#   FIB=build/apps/fib/fib FIB_WORKER=build/apps/fib-worker/fib-worker tests/gpu/check.sh [OUT]
#
# Checks:
#   1. the example references smoke-run on cuda, inside the sandbox;
#   2. the fixture (tests/run/make_fixture.py) on cuda with --cold-cache and --stop-at-ci: the
#      nvcc-compiled cuda_scale PASSED, the trace's environment.device_state read through NVML
#      (an SM clock, a power draw), performance.extra with its quartiles and a plausibility floor
#      under the latency, and the persisting-L2 reset found in the driver;
#   3. the red-team dataset (tests/run/make_redteam_fixture.py) on cuda: the same verdicts as on
#      the CPU (the CLI case run_redteam), and every cache entry as fib wrote it;
#   4. a solution that leaves its work on a side stream: its latency holds that work (every
#      stream of the device is waited for before "done").
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
fib=${FIB:-$here/build/apps/fib/fib}
export FIB_WORKER=${FIB_WORKER:-$here/build/apps/fib-worker/fib-worker}
out=${1:-$(mktemp -d)}
mkdir -p "$out"
export FIB_CACHE_PATH=$out/cache
python=${PYTHON:-python3}
failed=0
check() { # NAME CONDITION-EXIT-STATUS
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1"; failed=1; fi
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader \
  > "$out/nvidia-smi.txt" 2>&1
cat "$out/nvidia-smi.txt"

# 1. Smoke runs on cuda.
"$fib" validate --smoke --device cuda "$here"/examples/dataset/definitions/*/*.json \
  > "$out/smoke.txt" 2>&1
grep -c "smoke run: ok (.*on cuda)" "$out/smoke.txt" | grep -qv '^0$'
check "references smoke-run on cuda" $?

# 2. The fixture on cuda.
"$python" "$here/tests/run/make_fixture.py" "$out/fixture" > /dev/null
"$fib" run --dataset "$out/fixture" --device cuda --warmup 3 --iterations 30 --cold-cache \
  --stop-at-ci 0.05 > "$out/fixture-run.txt" 2>&1
"$python" - "$out/fixture" <<'PY'
import glob, json, sys
traces = [json.loads(l) for f in glob.glob(sys.argv[1] + "/traces/**/*.jsonl", recursive=True)
          for l in open(f)]
cuda = [t for t in traces if t["solution"] == "cuda_scale"]
assert cuda and all(t["evaluation"]["status"] == "PASSED" for t in cuda), "cuda_scale not PASSED"
for t in (t for t in traces if t["evaluation"]["status"] == "PASSED"):
    e = t["evaluation"]
    state = e["environment"].get("device_state") or {}
    assert state.get("sm_clock_mhz", 0) > 0 and state.get("power_w", 0) > 0, ("no GPU state", e)
    extra = e["performance"]["extra"]
    assert 5 <= extra["timed_calls"] <= 30 and extra["latency_q1_ms"] <= extra["latency_q3_ms"]
    assert 0 < extra["plausibility_floor_ms"] < e["performance"]["latency_ms"], extra
    assert e["settings"]["stop_at_ci"] == 0.05
print("device_state", cuda[0]["evaluation"]["environment"]["device_state"])
print("extra", cuda[0]["evaluation"]["performance"]["extra"])
PY
check "fixture on cuda: cuda_scale PASSED, device_state, quartiles, floor, adaptive stop" $?
(cd "$here/src/worker" && "$python" -c "
import sandbox, torch
torch.zeros(1, device='cuda')
assert sandbox._persisting_l2_reset() is not None
print('copy bandwidth', sandbox.copy_bandwidth('cuda'))")
check "the driver has cuCtxResetPersistingL2Cache; the copy bandwidth is measured on cuda" $?

# 3. The red team on cuda.
"$python" "$here/tests/run/make_redteam_fixture.py" "$out/redteam/ds" > /dev/null
FIB_CACHE_PATH=$out/redteam/cache "$fib" run --dataset "$out/redteam/ds" --device cuda --quiet \
  --warmup 1 --iterations 3 --scratch-limit 268435456 > "$out/redteam-run.txt" 2>&1
"$python" "$here/tests/cli/cases/run_redteam/check" "$out/redteam" > "$out/redteam.txt" 2>&1
diff <(tail -n +2 "$here/tests/cli/cases/run_redteam/expected.stdout") "$out/redteam.txt"
check "red team on cuda: the CPU's verdicts, entries clean" $?

# 4. Work left on a side stream is timed.
"$python" - "$out/sidestream" <<'PY'
import json, os, sys
root = sys.argv[1]
definition = {"name": "mm_n4096", "op_type": "gemm", "axes": {"n": {"type": "const", "value": 4096}},
              "inputs": {"a": {"shape": ["n", "n"], "dtype": "float32"}},
              "outputs": {"y": {"shape": ["n", "n"], "dtype": "float32"}},
              "reference": "import torch\n\ndef run(a):\n    return a @ a\n"}
source = ("import torch\n_side = torch.cuda.Stream()\n\ndef run(a):\n"
          "    with torch.cuda.stream(_side):\n        y = a @ a\n    return y\n")
solution = {"name": "side_stream", "definition": "mm_n4096", "author": "gpu-check",
            "spec": {"language": "python", "target_hardware": ["cuda"],
                     "entry_point": "main.py::run", "destination_passing_style": False},
            "sources": [{"path": "main.py", "content": source}]}
for path, text in ((root + "/definitions/gemm/mm_n4096.json", json.dumps(definition)),
                   (root + "/solutions/gpu-check/gemm/mm_n4096/side_stream.json",
                    json.dumps(solution)),
                   (root + "/workloads/gemm/mm_n4096.jsonl",
                    json.dumps({"definition": "mm_n4096", "solution": None, "workload": {
                        "uuid": "44444444-dddd-4000-8000-000000000004", "axes": {},
                        "inputs": {"a": {"type": "random"}}}, "evaluation": None}))):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(text + "\n")
PY
"$fib" run --dataset "$out/sidestream" --device cuda --warmup 2 --iterations 10 \
  > "$out/sidestream-run.txt" 2>&1
"$python" - "$out/sidestream" <<'PY'
import glob, json, sys
t = [json.loads(l) for f in glob.glob(sys.argv[1] + "/traces/**/*.jsonl", recursive=True)
     for l in open(f)][0]
e = t["evaluation"]
print(e["status"], e.get("performance"))
# A 4096^3 fp32 product is over 0.1 ms on any GPU: a clock that did not wait shows microseconds.
assert e["status"] != "PASSED" or e["performance"]["latency_ms"] > 0.1
PY
check "work on a side stream is inside the timed call" $?

exit $failed

"""The writers of tests/crash/kill_at_random.py: every fib command that writes files, with its
fixture and, where its outputs differ from run to run, its own invariant.

Each fixture is sized so that writing takes most of a run: FILES inputs (FIB_CRASH_FILES, default
40), written with the fixture helpers of the CLI and run tests.
"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
sys.path.insert(0, os.path.join(HERE, "..", "run"))
import report_fixtures  # noqa: E402
import stage_fixtures  # noqa: E402

MIN_MIDDLE_FRACTION = 0.2
REPORT_NAME = re.compile(r"^report-\d{8}-\d{6}(-\d+)?\.(json|txt)$")


# --- Writers ----------------------------------------------------------------------------------

class Writer:
    """A fib command that writes files, with its fixture.

    build(fixture)      writes the fixture below `fixture` (the trial root)
    argv(root)          the command line (fib first), for a trial rooted at `root`
    env                 extra environment ("@TRIAL@" is replaced by the trial root)
    canonical(state)    maps a snapshot to what is compared (default: the snapshot itself); for
                        outputs that differ from run to run
    check_killed        paths of the state after a kill that are accepted although in neither state
    check_rerun         an extra check of the state after the rerun (returns a list of problems)
    rerun_exempt        paths left to check_rerun instead of the byte comparison after the rerun
    learn_post          called with the post-state of the run to completion
    needs_worker        the writer needs fib's torch worker
    min_middle          the fraction of its kills that must interrupt the middle of a run
    """

    def __init__(self, name, summary, build, argv, env=None, canonical=None, check_killed=None,
                 check_rerun=None, before_rerun=None, learn_post=None, rerun_exempt=(),
                 needs_worker=False, min_middle=MIN_MIDDLE_FRACTION):
        self.name = name
        self.summary = summary
        self.build = build
        self.argv = argv
        self.env = env or {}
        self.canonical = canonical or (lambda state, root: state)
        self.check_killed = check_killed
        self.check_rerun = check_rerun
        self.before_rerun = before_rerun
        self.learn_post = learn_post
        self.rerun_exempt = set(rerun_exempt)
        self.needs_worker = needs_worker
        self.min_middle = min_middle


# Inputs per fixture: enough that writing them takes most of a run (FIB_CRASH_FILES).
FILES = int(os.environ.get("FIB_CRASH_FILES", "40"))


def dumps_fixture(folder, count=FILES, prefix="rmsnorm_h"):
    """`count` raw dumps (the dumper's format: no final newline, which normalize adds)."""
    for i in range(count):
        name = f"{prefix}{128 + i}"
        stage_fixtures.write_dump(folder, name + ".json", stage_fixtures.definition(name))


def staged_fixture(root, count=FILES):
    for i in range(count):
        op_type = "rmsnorm" if i % 2 else "layernorm"
        stage_fixtures.write_staged(root, stage_fixtures.definition(f"{op_type}_h{128 + i}",
                                                                    op_type))


def build_normalize_in_place(fixture):
    dumps_fixture(os.path.join(fixture, "dumps"))
    # Permission bits other than the atomic writer's default: in place keeps them.
    for name in os.listdir(os.path.join(fixture, "dumps")):
        os.chmod(os.path.join(fixture, "dumps", name), 0o640)


def build_normalize_output_dir(fixture):
    dumps_fixture(os.path.join(fixture, "dumps"))
    os.makedirs(os.path.join(fixture, "out"))


def build_stage(fixture):
    dumps_fixture(os.path.join(fixture, "dumps"), FILES // 2, "rmsnorm_h")
    dumps_fixture(os.path.join(fixture, "dumps"), FILES // 2, "layernorm_h")
    os.makedirs(os.path.join(fixture, "ds"))
    # One definition already staged with other content: stage overwrites it.
    stage_fixtures.write_staged(os.path.join(fixture, "ds"), {
        **stage_fixtures.definition("rmsnorm_h128"), "description": "older"})


def build_tag_dataset(fixture):
    staged_fixture(os.path.join(fixture, "ds"))


def build_tag_manifest(fixture, fib):
    build_tag_dataset(fixture)
    # A manifest of half of the definitions, written by `fib stage` itself.
    dumps = os.path.join(fixture, "manifest-dumps")
    for i in range(0, FILES, 2):
        name = f"layernorm_h{128 + i}"
        document = {**stage_fixtures.definition(name, "layernorm"), "description": "newer"}
        stage_fixtures.write_dump(dumps, name + ".json", document)  # overwritten: in the manifest
    subprocess.run([fib, "stage", dumps, "--dataset", os.path.join(fixture, "ds"), "--manifest",
                    os.path.join(fixture, "staged.json"), "--on-conflict", "overwrite"],
                   check=True, capture_output=True)
    shutil.rmtree(dumps)
    # Tags for `tag remove` to take away.
    subprocess.run([fib, "tag", "add", "model:llama-3.1-8b", "tp:2", "--dataset",
                    os.path.join(fixture, "ds")], check=True, capture_output=True)


def build_report_merge(fixture):
    for k, (first, last) in enumerate([(0, FILES // 2 + 20), (FILES // 2 - 20, FILES)]):
        root = os.path.join(fixture, f"in{k}")
        for i in range(first, last):
            name = f"d{i}"
            path = os.path.join(root, "definitions", "op", name + ".json")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(report_fixtures.definition(name), f, indent=2)
            trace = os.path.join(root, "traces", "alice", "op", name + ".jsonl")
            os.makedirs(os.path.dirname(trace), exist_ok=True)
            with open(trace, "w", encoding="utf-8") as f:
                for w in range(3):
                    line = json.loads(report_fixtures.trace("fast", f"w{w}", 1.0 + k + w))
                    line["definition"] = name
                    f.write(json.dumps(line) + "\n")
    os.makedirs(os.path.join(fixture, "out", "definitions", "op"))
    with open(os.path.join(fixture, "out", "README.md"), "w") as f:
        f.write("kept\n")


def build_validate(fixture):
    staged_fixture(os.path.join(fixture, "ds"), FILES * 2)


def build_validate_shards(fixture, fib):
    build_validate(fixture)
    for k in (1, 2):
        folder = os.path.join(fixture, f"s{k}")
        subprocess.run([fib, "validate", "--dataset", os.path.join(fixture, "ds"),
                        "--disable-gpu", "--checks", "layout,definition", "--shard", f"{k}/2",
                        "--outputs", "json", "--output-folder", folder],
                       capture_output=True, check=False)
        (name,) = os.listdir(folder)
        os.rename(os.path.join(folder, name), os.path.join(fixture, f"shard{k}.json"))
        os.rmdir(folder)
    shutil.rmtree(os.path.join(fixture, "ds"))
    os.makedirs(os.path.join(fixture, "out"))


def build_dump(fixture):
    dumps_fixture(os.path.join(fixture, "dumps"), 20, "old_h")  # --clean removes these
    os.makedirs(os.path.join(fixture, "ds"))
    with open(os.path.join(fixture, "harness.py"), "w", encoding="utf-8") as f:
        f.write(DUMP_HARNESS)


# A stand-in for a traced program: writes dumps the way FlashInfer's dumper does (straight into
# the dump directory, no temporary file).
DUMP_HARNESS = f'''import json, os, sys
sys.path.insert(0, {os.path.join(HERE, "..", "cli")!r})
from stage_fixtures import definition
folder = os.environ["FLASHINFER_TRACE_DUMP_DIR"]
for i in range({FILES}):
    name = "rmsnorm_h%d" % (1024 + i)
    with open(os.path.join(folder, name + ".json"), "w") as f:
        f.write(json.dumps(definition(name), indent=2))
'''


class StageManifest:
    """`--manifest` names what *this* run added or overwrote. After a kill, the rerun finds the
    definitions the killed run wrote already staged (`unchanged`), so its manifest names exactly
    the post-state's entries less those: checked here instead of byte equality."""

    path = "staged.json"

    def __init__(self):
        self.post_entries = set()

    def learn_post(self, post_state, root):
        self.post_entries = self.entries(root)

    def entries(self, root):
        with open(os.path.join(root, self.path), encoding="utf-8") as f:
            return {entry["path"] for entry in json.load(f)["entries"]}

    def check_rerun(self, killed, rerun, post, root):
        written_before = {p for p in self.post_entries
                          if killed.get(os.path.join("ds", p)) == post.get(os.path.join("ds", p))
                          and post.get(os.path.join("ds", p)) is not None}
        try:
            named = self.entries(root)
        except (OSError, ValueError, KeyError) as error:
            return [f"{self.path} after the rerun: {error}"]
        expected = self.post_entries - written_before
        if named != expected:
            return [f"{self.path} after the rerun names {len(named)} entries, expected the "
                    f"{len(expected)} the killed run had not written "
                    f"(extra {sorted(named - expected)[:3]}, "
                    f"missing {sorted(expected - named)[:3]})"]
        return []


def validate_canonical(state, root):
    """Report files are named by the second they were written in (and a count within it):
    compared by kind and content.
    Result-cache packs are compared by being whole (the snapshot's entry says so), however many."""
    out = {}
    for path, entry in state.items():
        folder, name = os.path.split(path)
        if name.startswith("pack-") and name.endswith(".bin") and os.path.basename(folder) == "v1":
            out.setdefault(os.path.join(folder, "pack-*.bin"), set()).add(entry)
            continue
        if REPORT_NAME.match(name):
            kind = name.rsplit(".", 1)[1]
            out.setdefault(os.path.join(folder, "report-*." + kind), set()).add(entry)
        else:
            out[path] = entry
    return {p: (tuple(sorted(e)) if isinstance(e, set) else e) for p, e in out.items()}


def build_baseline_dataset(fixture):
    # Staged definitions whose descriptions are missing: warnings the baseline records.
    staged_fixture(os.path.join(fixture, "ds"))


def validate_reports(state):
    return sorted(p for p in state if REPORT_NAME.match(os.path.basename(p)))


def validate_check_rerun(killed, rerun, expected, root):
    """The rerun adds one complete json+txt pair; what the killed run wrote stays as it was."""
    problems = []
    new = [p for p in validate_reports(rerun) if p not in killed]
    stems = {p.rsplit(".", 1)[0] for p in new}
    if len(new) != 2 or len(stems) != 1:
        problems.append(f"the rerun wrote {new}, not one report-*.json and report-*.txt pair")
    for path in validate_reports(killed):
        if rerun.get(path) != killed[path]:
            problems.append(f"{path}: changed by the rerun")
    return problems


def writers(fib, worker):
    fixtures_with_fib = {
        "tag.remove_manifest": lambda d: build_tag_manifest(d, fib),
        "validate_merge": lambda d: build_validate_shards(d, fib),
    }
    manifest = StageManifest()
    listed = [
        Writer("normalize.in_place", f"normalize --in-place DIR ({FILES} dumps, mode 640 kept)",
               build_normalize_in_place, lambda r: [fib, "normalize", "--in-place", f"{r}/dumps"]),
        Writer("normalize.output_dir",
               f"normalize --output-dir OUT --report FILE ({FILES} dumps)",
               build_normalize_output_dir,
               lambda r: [fib, "normalize", f"{r}/dumps", "--output-dir", f"{r}/out",
                          "--report", f"{r}/normalize-report.json"]),
        Writer("stage", f"stage DUMPS --dataset DS --manifest FILE ({FILES} dumps, 1 overwritten)",
               build_stage,
               lambda r: [fib, "stage", f"{r}/dumps", "--dataset", f"{r}/ds", "--manifest",
                          f"{r}/staged.json", "--on-conflict", "overwrite", "--quiet"],
               learn_post=manifest.learn_post, check_rerun=manifest.check_rerun,
               rerun_exempt=[StageManifest.path]),
        Writer("tag.add", f"tag add TAGS --dataset DS ({FILES} definitions)", build_tag_dataset,
               lambda r: [fib, "tag", "add", "model:llama-3.1-8b", "tp:2", "--dataset",
                          f"{r}/ds"]),
        Writer("tag.remove_manifest",
               f"tag remove 'model:*' --manifest FILE ({FILES // 2} of {FILES} definitions)",
               fixtures_with_fib["tag.remove_manifest"],
               lambda r: [fib, "tag", "remove", "model:*", "--manifest", f"{r}/staged.json"]),
        Writer("report.merge", f"report merge OUT IN0 IN1 ({FILES} definitions and traces)",
               build_report_merge,
               lambda r: [fib, "report", "merge", f"{r}/out", f"{r}/in0", f"{r}/in1"]),
        Writer("validate.report_files",
               f"validate --dataset DS --output-folder DIR ({FILES * 2} definitions)",
               build_validate,
               lambda r: [fib, "validate", "--dataset", f"{r}/ds", "--disable-gpu", "--checks",
                          "layout,definition", "--output-folder", f"{r}/reports"],
               canonical=validate_canonical, check_rerun=validate_check_rerun,
               # Its two files are written after the whole validation, in about the last tenth
               # of the run: its middle kills are counted (toward the total), not required.
               min_middle=0.0),
        Writer("validate.write_baseline",
               f"validate DS --write-baseline FILE ({FILES} definitions with findings)",
               build_baseline_dataset,
               lambda r: [fib, "validate", f"{r}/ds", "--no-config", "--exit-zero", "--no-cache",
                          "--write-baseline", f"{r}/fib-baseline.json"],
               # One file, written after every definition was checked (about the last tenth of
               # the run): its middle kills are counted (toward the total), not required.
               min_middle=0.0),
        Writer("validate_merge", "validate-merge SHARDS --output FILE --text FILE",
               fixtures_with_fib["validate_merge"],
               lambda r: [fib, "validate-merge", f"{r}/shard1.json", f"{r}/shard2.json",
                          "--output", f"{r}/out/merged.json", "--text", f"{r}/out/merged.txt"],
               # A 10 ms run that writes its two small files at its very end: as for validate,
               # its middle kills are counted (toward the total), not required.
               min_middle=0.0),
        Writer("validate_render", "validate-render REPORT --output FILE",
               fixtures_with_fib["validate_merge"],
               lambda r: [fib, "validate-render", f"{r}/shard1.json", "--output",
                          f"{r}/out/rendered.txt"],
               min_middle=0.0),  # one small file written at the end of a 10 ms run, as above
        Writer("dump", f"dump --out DIR --clean --stage DS --tag T -- harness ({FILES} dumps)",
               build_dump,
               lambda r: [fib, "dump", "--out", f"{r}/dumps", "--clean", "--stage", f"{r}/ds",
                          "--tag", "status:verified", "--", sys.executable, f"{r}/harness.py"],
               check_killed=dump_check_killed),
    ]
    listed.append(Writer("collect", f"collect DUMP --dataset DS ({FILES // 2} definitions, "
                                    f"{3 * (FILES // 2)} calls, every tensor a blob)",
                         build_collect, lambda r: [fib, "collect", f"{r}/dumps", "--dataset",
                                                   f"{r}/ds"],
                         canonical=collect_canonical, check_killed=collect_check_killed))
    listed.append(run_writer(fib, worker))
    return listed


def dump_check_killed(killed, pre, post):
    """The traced program's own dumps may be cut short by the kill (its dumper writes them in
    place, as FlashInfer's does; the dump's collection reports such a file): a dump smaller than
    its post-state is accepted there, nowhere else."""
    return [p for p, e in killed.items()
            if p.startswith("dumps/") and e[0] == "file" and post.get(p, ("",))[0] == "file"
            and e[3] < post[p][3]]


# --- fib collect: workloads and blobs from a Level-10 dump -----------------------------------

COLLECT_SIGNATURE = ("(probs: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor, "
                     "deterministic: bool = True) -> torch.Tensor")


def safetensors_bytes(tensors):
    """A safetensors file of {key: (dtype, shape, raw bytes)}, as the library writes it."""
    header, data = {}, b""
    for key in sorted(tensors):
        dtype, shape, raw = tensors[key]
        header[key] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data),
                                                                        len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return len(text).to_bytes(8, "little") + text + data


def build_collect(fixture):
    """FILES//2 sampling definitions (every tensor a blob) and 3 calls of each one's vocabulary."""
    for i in range(FILES // 2):
        vocab = 16 + i
        name = f"sampling_v{vocab}"
        path = os.path.join(fixture, "ds", "definitions", "sampling", name + ".json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({
                "name": name, "op_type": "sampling",
                "tags": ["fi_api:flashinfer.sampling.top_k_top_p_sampling_from_probs"],
                "axes": {"batch_size": {"type": "var"},
                         "vocab_size": {"type": "const", "value": vocab}},
                "inputs": {"probs": {"shape": ["batch_size", "vocab_size"], "dtype": "float32"},
                           "top_k": {"shape": ["batch_size"], "dtype": "int32"},
                           "top_p": {"shape": ["batch_size"], "dtype": "float32"}},
                "outputs": {"samples": {"shape": ["batch_size"], "dtype": "int32"}},
                "reference": "def run(probs, top_k, top_p):\n    return top_k\n"}, f)
        for batch in (1, 2, 3):
            sequence = i * 3 + batch
            call = (f"20260101_120000_{sequence:03}_pid7_top_k_top_p_sampling_from_probs_"
                    f"call{sequence:04}")
            folder = os.path.join(fixture, "dumps", call)
            os.makedirs(folder)
            inputs = {"arg_0": ("F32", [batch, vocab], bytes([sequence % 251]) * (4 * batch * vocab)),
                      "arg_1": ("I32", [batch], (5).to_bytes(4, "little") * batch),
                      "arg_2": ("F32", [batch], b"\x00\x00\x00\x3f" * batch)}
            record = {"function_name": "top_k_top_p_sampling_from_probs",
                      "module": "flashinfer.sampling", "call_sequence": sequence,
                      "timestamp": call[:19], "process_id": 7, "input_metadata": {},
                      "output_metadata": {},
                      "tensor_info": {"input_tensor_keys": sorted(inputs),
                                      "output_tensor_keys": []},
                      "tensor_details": {}, "tensor_format": "safetensors",
                      "function_signature": COLLECT_SIGNATURE, "versions": {},
                      "execution_status": "completed", "graph_capture": False}
            with open(os.path.join(folder, "metadata.jsonl"), "w", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
            with open(os.path.join(folder, "inputs.safetensors"), "wb") as f:
                f.write(safetensors_bytes(inputs))


COLLECT_JOURNAL = ".fib-collect-pending.json"


def collect_canonical(state, root):
    """Uuids differ from run to run: a workloads file is compared by its lines without them (and
    without the blob paths, which hold them), a definition's blobs by their contents."""
    out = {}
    for path, entry in state.items():
        folder, name = os.path.split(path)
        if path.startswith("ds/workloads/") and name.endswith(".jsonl") and entry[0] == "file":
            lines = []
            with open(os.path.join(root, path), encoding="utf-8") as f:
                for text in f.read().splitlines():
                    line = json.loads(text)
                    line["workload"].pop("uuid")
                    for spec in line["workload"]["inputs"].values():
                        spec.pop("path", None)
                    lines.append(json.dumps(line, sort_keys=True))
            out[path] = (entry[1], tuple(sorted(lines)))
        elif path.startswith("ds/blob/") and name.endswith(".safetensors"):
            out.setdefault(os.path.join(folder, "*.safetensors"), []).append(entry[2])
        else:
            out[path] = entry
    return {p: (tuple(sorted(e)) if isinstance(e, list) else e) for p, e in out.items()}


def collect_check_killed(killed, pre, post):
    """A kill between a definition's blobs and its line leaves those blobs and the journal that
    lists them; the rerun removes them (compared after the rerun as usual)."""
    tolerated = [p for p in killed if os.path.basename(p) == COLLECT_JOURNAL]
    for path in killed:
        folder, name = os.path.split(path)
        if path.startswith("ds/blob/") and name.endswith(".safetensors"):
            tolerated.append(os.path.join(folder, "*.safetensors"))
    return tolerated


# --- fib run: traces appended ------------------------------------------------------------------

RUN_SOLUTIONS = int(os.environ.get("FIB_CRASH_RUN_SOLUTIONS", "2"))  # copies beside py_correct


OLDER_RUN_LOG = "a line of an older run"  # the fixture's trace line, told apart by its log


def build_run(fixture):
    import make_fixture  # tests/run/make_fixture.py
    root = os.path.join(fixture, "ds")
    subprocess.run([sys.executable, make_fixture.__file__, root, "--only", "py_correct"],
                   check=True)
    folder = os.path.join(root, "solutions", "fixture", "scale", "scale_h64")
    with open(os.path.join(folder, "py_correct.json"), encoding="utf-8") as f:
        solution = json.load(f)
    for i in range(RUN_SOLUTIONS):
        solution["name"] = f"py_copy_{i}"
        solution["sources"][0]["content"] = f"def run(x, w):\n    return x * w  # copy {i}\n"
        with open(os.path.join(folder, solution["name"] + ".json"), "w", encoding="utf-8") as f:
            json.dump(solution, f, indent=2)
    # A trace file with a line already in it (and no final newline): kept by every append.
    trace = os.path.join(root, "traces", "fixture", "scale", "scale_h64.jsonl")
    os.makedirs(os.path.dirname(trace))
    with open(trace, "w", encoding="utf-8") as f:
        f.write(json.dumps({"definition": "scale_h64", "solution": "py_correct",
                            "workload": make_fixture.WORKLOADS[0]["workload"],
                            "evaluation": {"status": "RUNTIME_ERROR", "log": OLDER_RUN_LOG,
                                           "environment": {"hardware": "cpu"},
                                           "timestamp": "2026-01-01T00:00:00Z"}}))


def trace_lines(state, root):
    """{trace file: [lines]} of the trial's dataset (split on newlines: the last is "" when the
    file ends with one)."""
    out = {}
    for path, entry in state.items():
        if path.startswith("ds/traces/") and path.endswith(".jsonl") and entry[0] == "file":
            with open(os.path.join(root, path), encoding="utf-8") as f:
                out[path] = f.read().split("\n")
    return out


def trace_key(line):
    document = json.loads(line)
    return (document.get("solution"), (document.get("workload") or {}).get("uuid"))


def run_check_killed(killed, pre, post):
    """Trace files are checked line by line by RunTraces, not against the two states."""
    return [p for p in killed if p.startswith("ds/traces/") and p.endswith(".jsonl")]


def outside_tmp(state):
    return {p: e for p, e in state.items() if p != "tmp" and not p.startswith("tmp/")}


def run_canonical(state, root):
    """A trace file stands for the solutions appended to it (their lines' timings differ from
    run to run; RunTraces checks the lines themselves); the build cache is fib's own scratch,
    checked only for temporaries."""
    out = {}
    for path, entry in state.items():
        if path == "cache" or path.startswith("cache/"):
            continue
        if path.startswith("ds/traces/") and path.endswith(".jsonl") and entry[0] == "file":
            with open(os.path.join(root, path), encoding="utf-8") as f:
                solutions = set()
                for line in f.read().split("\n"):
                    try:
                        if line and json.loads(line)["evaluation"].get("log") != OLDER_RUN_LOG:
                            solutions.add(trace_key(line)[0])
                    except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                        solutions.add("(torn line)")
            entry = ("trace", entry[1], tuple(sorted(s for s in solutions if s)))
        out[path] = entry
    return out


class RunTraces:
    """The invariant of `fib run`'s trace files. fib writes each evaluation's line as soon as the
    evaluation ends, in one atomic rewrite of the file that also drops an older line of the same
    (solution, workload, settings). So a trace file holds the pre-state's lines (all kept: the
    fixture's line has no settings, so nothing replaces it; the last one now ends with a newline),
    then whole lines only, each (solution, workload) at most once. After the rerun (a plain run,
    which replaces what the killed run wrote) every (solution, workload) of a full run is there
    exactly once; no line is torn, lost or duplicated."""

    def __init__(self):
        self.pre_lines = {}
        self.expected_keys = {}

    def learn(self, pre_state, post_state, root):
        self.pre_raw = trace_lines(pre_state, root)
        for path, lines in self.pre_raw.items():
            self.pre_lines[path] = [line for line in lines if line != ""]

    def learn_post(self, post_state, root):
        for path, lines in trace_lines(post_state, root).items():
            old = len(self.pre_lines.get(path, []))
            self.expected_keys[path] = {trace_key(line) for line in lines[old:] if line != ""}

    def problems(self, state, root, complete):
        lines = trace_lines(state, root)
        out = []
        for path in sorted(set(lines) | set(self.pre_lines)):
            if path not in lines:
                out.append(f"{path}: missing")
                continue
            if not complete and lines[path] == self.pre_raw.get(path):
                continue  # untouched
            out += [f"{path}: {p}" for p in self.file_problems(
                lines[path], self.pre_lines.get(path, []), self.expected_keys.get(path, set()),
                complete)]
        if complete and set(lines) != set(self.expected_keys) | set(self.pre_lines):
            out.append(f"trace files {sorted(lines)}, expected {sorted(self.expected_keys)}")
        return out

    @staticmethod
    def file_problems(lines, pre_lines, expected_keys, complete):
        problems = []
        if lines[-1] != "":
            problems.append("does not end with a newline")
        body = lines[:-1]
        if body[:len(pre_lines)] != pre_lines:
            return problems + ["lost or changed the lines it had before"]
        try:
            keys = [trace_key(line) for line in body[len(pre_lines):]]
        except json.JSONDecodeError as error:
            return problems + [f"holds a line that is not JSON (torn?): {error}"]
        counts = {}
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
        repeated = sorted(key for key, n in counts.items() if n > 1)
        if repeated:
            problems.append(f"the same (solution, workload) twice: {repeated[:3]}")
        if complete:
            missing = sorted(key for key in expected_keys if key not in counts)
            if missing:
                problems.append(f"the rerun left out {missing[:3]}")
        unknown = [key for key in counts if key not in expected_keys]
        if unknown:
            problems.append(f"lines of unknown (solution, workload): {unknown[:3]}")
        return problems


def run_writer(fib, worker):
    # The sandbox needs bubblewrap; without it the run goes unsandboxed (what it runs is ours).
    unsandboxed = [] if shutil.which("bwrap") else ["--unsafe-no-sandbox"]
    writer = Writer("run", f"run --dataset DS ({RUN_SOLUTIONS + 1} solutions x 3 workloads)",
                    build_run,
                    lambda r: [fib, "run", "--dataset", f"{r}/ds", "--quiet", "--warmup", "0",
                               "--iterations", "1", "--timeout", "60"] + unsandboxed,
                    canonical=run_canonical, check_killed=run_check_killed, needs_worker=True)
    writer.traces = RunTraces()
    writer.worker = worker
    return writer

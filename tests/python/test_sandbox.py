"""Unit tests of src/worker/sandbox.py, the worker's Python program.

The program imports torch at the top. Where this Python has no torch, an empty stand-in module
takes its place so that the pure helpers (annotations, clipping, building a reference, init
arguments, writing sources) are still tested; the tests that need real tensors skip."""

import importlib.util
import os
import pathlib
import sys
import tempfile
import types
import unittest

SANDBOX = pathlib.Path(__file__).resolve().parents[2] / "src" / "worker" / "sandbox.py"

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    torch = None
    HAVE_TORCH = False


def load_sandbox():
    if not HAVE_TORCH:
        sys.modules.setdefault("torch", types.ModuleType("torch"))
    spec = importlib.util.spec_from_file_location("fib_worker_sandbox", SANDBOX)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sandbox = load_sandbox()
needs_torch = unittest.skipUnless(HAVE_TORCH, "this Python has no torch")


def annotation_problem(source, n_outputs):
    module = sandbox.load("t", source)
    return sandbox._annotation_problem(module.run, module, n_outputs)


class AnnotationProblem(unittest.TestCase):
    def test_no_annotation_fits_anything(self):
        self.assertIsNone(annotation_problem("def run(x):\n    return x\n", 3))

    def test_none_fits_only_zero_outputs(self):
        source = "def run(x) -> None:\n    pass\n"
        self.assertIsNone(annotation_problem(source, 0))
        self.assertEqual(annotation_problem(source, 2),
                         "return annotation None does not fit 2 outputs")

    def test_a_tuple_must_have_one_element_per_output(self):
        source = "def run(x) -> tuple[int, int]:\n    return x, x\n"
        self.assertIsNone(annotation_problem(source, 2))
        self.assertEqual(annotation_problem(source, 3),
                         "return annotation tuple[int, int] has 2 elements for 3 outputs")

    def test_an_open_tuple_fits_several_outputs_but_not_one(self):
        source = "from typing import Tuple\n\ndef run(x) -> Tuple[int, ...]:\n    return x, x\n"
        self.assertIsNone(annotation_problem(source, 4))
        self.assertEqual(annotation_problem(source, 1),
                         "return annotation is a tuple for 1 output")

    def test_string_annotations_are_evaluated_in_the_module(self):
        source = "def run(x) -> 'None':\n    pass\n"
        self.assertEqual(annotation_problem(source, 1),
                         "return annotation None does not fit 1 outputs")
        # One that does not evaluate says nothing.
        self.assertIsNone(annotation_problem("def run(x) -> 'Missing':\n    pass\n", 1))


class Build(unittest.TestCase):
    def test_a_reference_that_fits_builds(self):
        module, message, trace = sandbox.build("ok", "def run(a, b):\n    return a\n", 2, 1)
        self.assertIsNotNone(module)
        self.assertIsNone(message)
        self.assertEqual(trace, "")

    def test_an_import_failure_names_the_module_and_the_error(self):
        module, message, trace = sandbox.build("bad", "raise ValueError('no')\n", 1, 1)
        self.assertIsNone(module)
        self.assertEqual(message, "Failed importing module 'bad__reference' from sources: "
                                  "ValueError: no")
        self.assertIn('File "<reference:bad>", line 1', trace)

    def test_a_missing_run_is_named(self):
        module, message, _ = sandbox.build("norun", "def main(x):\n    return x\n", 1, 1)
        self.assertIsNone(module)
        self.assertEqual(message, "Entry symbol 'run' not found in module 'norun__reference'")

    def test_run_must_bind_one_argument_per_input(self):
        module, message, _ = sandbox.build("arity", "def run(a):\n    return a\n", 2, 1)
        self.assertIsNone(module)
        self.assertTrue(message.startswith("Value-returning style callable: expected 2 "
                                           "positional parameters, but signature '(a)' is "
                                           "incompatible"), message)

    def test_the_annotation_is_checked(self):
        _, message, _ = sandbox.build("ann", "def run(a) -> None:\n    pass\n", 1, 1)
        self.assertEqual(message, "return annotation None does not fit 1 outputs")

    def test_references_do_not_share_globals(self):
        first, _, _ = sandbox.build("one", "X = 1\ndef run(a):\n    return X\n", 1, 1)
        second, _, _ = sandbox.build("two", "def run(a):\n    return X\n", 1, 1)
        self.assertEqual(first.run(0), 1)
        with self.assertRaises(NameError):
            second.run(0)


class WriteSources(unittest.TestCase):
    def test_the_temporaries_of_a_killed_write_are_removed(self):
        with tempfile.TemporaryDirectory() as directory:
            src = os.path.join(directory, "src")
            os.makedirs(os.path.join(src, "sub"))
            for name, text in [("main.py.fib-4242", "torn"), ("sub/k.py.fib-7", "torn"),
                               ("keep.py", "kept"), ("note.fib-abc", "kept")]:
                with open(os.path.join(src, name), "w") as f:
                    f.write(text)
            sandbox._write_sources(src, [("main.py", "def run():\n    pass\n")])
            found = sorted(os.path.relpath(os.path.join(folder, name), src)
                           for folder, _, names in os.walk(src) for name in names)
            self.assertEqual(found, ["keep.py", "main.py", "note.fib-abc"])
            with open(os.path.join(src, "main.py")) as f:
                self.assertEqual(f.read(), "def run():\n    pass\n")


class Clip(unittest.TestCase):
    def test_short_text_is_kept_and_long_text_keeps_its_ends(self):
        self.assertEqual(sandbox.clip("abc", 10), "abc")
        clipped = sandbox.clip("a" * 50 + "b" * 50, 20)
        self.assertTrue(clipped.startswith("a" * 10 + "\n[... 80 characters cut by fib-worker"))
        self.assertTrue(clipped.endswith("\n" + "b" * 10))


class AsList(unittest.TestCase):
    def test_results_become_lists_of_outputs(self):
        self.assertEqual(sandbox._as_list((1, 2), 2), [1, 2])
        self.assertEqual(sandbox._as_list([1], 1), [1])
        self.assertEqual(sandbox._as_list(None, 0), [])
        self.assertEqual(sandbox._as_list(None, 1), [None])
        self.assertEqual(sandbox._as_list(7, 1), [7])


class InitArgs(unittest.TestCase):
    def init_args(self, source, inputs, axes=None, const_axes=None):
        return sandbox.init_args("d", source, inputs, axes or {}, const_axes or {}, "cpu", 5)

    def test_values_come_in_input_order_with_the_axes_passed(self):
        source = ("def make(batch, hidden=8, device='x', seed=0):\n"
                  "    return {'y': (batch, hidden), 'x': (device, seed)}\n")
        values, why = self.init_args(source, ["x", "y"], {"batch": 3, "hidden": 4},
                                     {"hidden": 16})
        self.assertEqual(why, "")
        # Var axes only when the parameter has no default; const axes always.
        self.assertEqual(values, [("cpu", 5), (3, 16)])

    def test_the_last_function_is_the_entry(self):
        source = "def helper():\n    return 1\n\ndef make():\n    return {'x': helper()}\n"
        self.assertEqual(self.init_args(source, ["x"]), ([1], ""))

    def test_names_are_mapped_through_the_aliases(self):
        source = "def make():\n    return {'input': 1, 'indptr': 2}\n"
        self.assertEqual(self.init_args(source, ["hidden_states", "kv_indptr"]), ([1, 2], ""))

    def test_plan_and_run_dicts_are_merged(self):
        source = "def make():\n    return {'plan': {'a': 1}, 'run': {'b': 2}}\n"
        self.assertEqual(self.init_args(source, ["a", "b"]), ([1, 2], ""))

    def test_a_forwarder_gets_device_and_seed(self):
        source = "def make(**kwargs):\n    return {'x': (kwargs['device'], kwargs['seed'])}\n"
        self.assertEqual(self.init_args(source, ["x"]), ([("cpu", 5)], ""))

    def test_why_it_could_not_be_used(self):
        self.assertEqual(self.init_args("def make():\n    return {}\n", ["x"]),
                         (None, "its init gives no value for input 'x'"))
        self.assertEqual(self.init_args("def make():\n    return [1]\n", ["x"]),
                         (None, "its init returned list, not a dict"))
        self.assertEqual(self.init_args("def make():\n    raise KeyError('k')\n", ["x"]),
                         (None, "its init raised KeyError: 'k'"))
        self.assertEqual(
            self.init_args("def make():\n    import fib_no_such_package\n", ["x"]),
            (None, "its init needs the fib_no_such_package package"))
        self.assertTrue(self.init_args("def make(:\n", ["x"])[1].startswith(
            "its init does not run here (SyntaxError: "))


class WriteSources(unittest.TestCase):
    def test_sources_are_written_below_the_directory(self):
        with tempfile.TemporaryDirectory() as directory:
            sandbox._write_sources(directory, [("pkg/main.py", "A = 1\n"), ("b.cu", "//\n")])
            with open(os.path.join(directory, "pkg", "main.py")) as f:
                self.assertEqual(f.read(), "A = 1\n")
            self.assertTrue(os.path.isfile(os.path.join(directory, "b.cu")))

    def test_an_unchanged_file_keeps_its_time(self):
        with tempfile.TemporaryDirectory() as directory:
            target = os.path.join(directory, "main.py")
            sandbox._write_sources(directory, [("main.py", "A = 1\n")])
            os.utime(target, (1000, 1000))
            sandbox._write_sources(directory, [("main.py", "A = 1\n")])
            self.assertEqual(os.stat(target).st_mtime, 1000)
            sandbox._write_sources(directory, [("main.py", "A = 2\n")])
            self.assertNotEqual(os.stat(target).st_mtime, 1000)

    def test_a_path_that_leaves_the_directory_is_refused(self):
        with tempfile.TemporaryDirectory() as directory:
            for path in ("../escape.py", "/tmp/absolute.py", "a/../../escape.py"):
                with self.assertRaises(ValueError, msg=path):
                    sandbox._write_sources(directory, [(path, "x")])


@needs_torch
class Safetensors(unittest.TestCase):
    def test_tensors_round_trip_with_dtype_and_shape(self):
        tensors = [("a", torch.arange(6, dtype=torch.float32).reshape(2, 3)),
                   ("b", torch.tensor([1.5, -2.0], dtype=torch.bfloat16)),
                   ("c", torch.tensor(7, dtype=torch.int64)),
                   ("d", torch.zeros(0, 4, dtype=torch.float16)),
                   ("e", torch.tensor([True, False]))]
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "t.safetensors")
            sandbox.save_tensors(path, tensors)
            loaded = sandbox.load_tensors(path, "cpu")
            with open(path, "rb") as f:
                size = int.from_bytes(f.read(8), "little")
            self.assertEqual(size % 8, 0)  # the header is padded as writers do
        self.assertEqual(sorted(loaded), ["a", "b", "c", "d", "e"])
        for key, tensor in tensors:
            self.assertEqual(loaded[key].dtype, tensor.dtype, key)
            self.assertEqual(loaded[key].shape, tensor.shape, key)
            self.assertTrue(torch.equal(loaded[key], tensor), key)


class FakeFib:
    """fib's side of the timed calls, on a socket pair: a seed (`seed + call`, or none) for each
    "prepare", "go" with a key for each "ready", "keep" for each "done" (and "stop" with the
    `stop_after`-th)."""

    def __init__(self, seed=None, stop_after=None):
        import socket, threading
        self.seed = seed
        self.stop_after = stop_after
        self.done = 0
        self.keys = []
        self.ours, self.theirs = socket.socketpair()
        self.messages = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        import json
        buffer = b""
        while True:
            chunk = self.ours.recv(4096)
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                self.messages.append(message)
                step, i = message.get("timing"), message.get("iteration")
                if step == "prepare":
                    seed = None if self.seed is None else self.seed + i
                    self.ours.sendall((json.dumps({"seed": seed}) + "\n").encode())
                elif step == "ready":
                    self.keys.append(os.urandom(16).hex())
                    self.ours.sendall((json.dumps({"go": i, "key": self.keys[-1]}) + "\n").encode())
                elif step == "done":
                    self.done += 1
                    stop = self.done == self.stop_after
                    self.ours.sendall(b'{"keep": true, "stop": true}\n' if stop
                                      else b'{"keep": true}\n')

    def channel(self, job_id):
        return sandbox.Channel(self.theirs.fileno(), job_id)

    def close(self):
        self.theirs.close()
        self.thread.join(5)
        self.ours.close()


@needs_torch
class ReferenceAndSolutionOutputs(unittest.TestCase):
    def setUp(self):
        self.fib = FakeFib()
        self.scratch = tempfile.mkdtemp()
        self.directory = os.path.join(self.scratch, "job-2")  # as fib names the job directories
        os.mkdir(self.directory)

    def tearDown(self):
        import shutil
        self.fib.close()
        shutil.rmtree(self.scratch)

    def test_earlier_job_directories_are_forgotten(self):
        import json
        os.makedirs(os.path.join(self.scratch, "job-1", "deep"))
        os.mkdir(os.path.join(self.scratch, "keep"))
        module = self.reference("def run(x, k):\n    return x\n")
        sandbox.reference_outputs(module, [torch.ones(1), 1], ["x", "k"], ["y"], self.directory,
                                  "cpu", 0, 1, self.fib.channel(5))
        self.assertEqual(sorted(os.listdir(self.scratch)), ["job-2", "keep"])

    def reference(self, source):
        module, message, _ = sandbox.build("ref", source, 2, 1)
        self.assertIsNone(message)
        return module

    def test_the_reference_leaves_its_files_and_is_timed_under_fibs_clock(self):
        import json
        module = self.reference("def run(x, k):\n    return x * k\n")
        result = json.loads(sandbox.reference_outputs(
            module, [torch.ones(3), 2], ["x", "k"], ["y"], self.directory, "cpu", 1, 3,
            self.fib.channel(41)))
        self.assertEqual(result, {"scalars": {"k": 2}})
        expected = sandbox.load_tensors(os.path.join(self.directory, "expected.safetensors"), "cpu")
        self.assertTrue(torch.equal(expected["y"], torch.full((3,), 2.0)))
        inputs = sandbox.load_tensors(os.path.join(self.directory, "inputs.safetensors"), "cpu")
        self.assertEqual(sorted(inputs), ["x"])
        steps = [(m["timing"], m["iteration"], m["id"]) for m in self.fib.messages]
        self.assertEqual(steps, [(step, i, 41) for i in range(3)
                                 for step in ("prepare", "ready", "done")])
        # Every call's outputs are kept, and "done" carried the commitment to them.
        for i, message in enumerate(m for m in self.fib.messages if m["timing"] == "done"):
            kept = sandbox.load_tensors(os.path.join(self.directory, "timed_%d.safetensors" % i),
                                        "cpu")
            self.assertTrue(torch.equal(kept["y"], torch.full((3,), 2.0)))
            self.assertEqual(message["commit"], sandbox.commitment(self.fib.keys[i], [kept["y"]]))

    def test_the_seed_fib_sends_decides_the_fresh_values_in_both_workers(self):
        self.fib.close()
        self.fib = FakeFib(seed=1000)
        module = self.reference("def run(x, k):\n    return x * k\n")
        x = torch.arange(16, dtype=torch.float32)
        sandbox.reference_outputs(module, [x, 1], ["x", "k"], ["y"], self.directory, "cpu", 0, 2,
                                  self.fib.channel(7), fresh_inputs={"x": "values"},
                                  keep_inputs=True)
        vary = sandbox._FreshValues({0: "values"})
        for i in range(2):
            inputs = sandbox.load_tensors(
                os.path.join(self.directory, "timed_inputs_%d.safetensors" % i), "cpu")
            self.assertTrue(torch.equal(inputs["x"], vary([x, 1], 1000 + i)[0]))
            self.assertFalse(torch.equal(inputs["x"], x))  # a new order of the same values
            self.assertTrue(torch.equal(inputs["x"].sort().values, x))

    def test_a_cold_cache_resets_persisting_lines_first_where_the_driver_can(self):
        calls = []
        flush = sandbox._CacheFlush("cpu", reset=lambda: calls.append(flush.value))
        flush()
        flush()
        self.assertEqual(calls, [0, 1])  # the reset comes before each fill
        self.assertEqual(int(flush.buffer[0]), 2)

        class Driver:
            cuCtxResetPersistingL2Cache = object()
        self.assertIs(sandbox._persisting_l2_reset(lambda name: Driver),
                      Driver.cuCtxResetPersistingL2Cache)
        def missing(name):
            raise OSError(name + ": cannot open shared object file")
        self.assertIsNone(sandbox._persisting_l2_reset(missing))
        self.assertIsNone(sandbox._persisting_l2_reset(lambda name: object()))

    def test_a_commitment_changes_with_the_key_and_every_byte(self):
        y = torch.zeros(4)
        first = sandbox.commitment("00" * 16, [y])
        self.assertNotEqual(first, sandbox.commitment("01" + "00" * 15, [y]))
        y[3] = 1e-30
        self.assertNotEqual(first, sandbox.commitment("00" * 16, [y]))
        self.assertEqual(len(first), 64)

    def test_a_commitment_hashes_its_pieces_after_the_fold_on_any_number_of_threads(self):
        import hashlib
        piece = sandbox.COMMIT_PIECE
        y = torch.zeros(piece + 8, dtype=torch.uint8)
        y[0], y[piece] = 2, 3
        head = bytes(16) + (5).to_bytes(8, "little")  # the fold: 2 + 3
        data = bytes(y.numpy())
        expected = hashlib.sha256(head + len(data).to_bytes(8, "little") +
                                  hashlib.sha256(head + data[:piece]).digest() +
                                  hashlib.sha256(head + data[piece:]).digest()).hexdigest()
        threads = sandbox._commit_threads
        try:
            for count in (1, 3):
                sandbox._commit_threads = lambda: count
                self.assertEqual(sandbox.commitment("00" * 16, [y]), expected)
        finally:
            sandbox._commit_threads = threads
        # A byte anywhere changes the fold, so every piece's hash.
        y[piece + 7] = 1
        self.assertNotEqual(sandbox.commitment("00" * 16, [y]), expected)

    def test_the_commitments_cost_is_a_table_by_size(self):
        table = sandbox.commitment_cost("cpu")
        self.assertEqual([size for size, _ in table], [1, 1 << 16, 1 << 20, 4 << 20])
        self.assertTrue(all(seconds > 0 for _, seconds in table))
        self.assertLess(table[0][1], table[-1][1])

    def test_a_reference_that_raises_shows_only_its_own_frames(self):
        import json
        module = self.reference("def run(x, k):\n    raise ValueError('no')\n")
        result = json.loads(sandbox.reference_outputs(
            module, [torch.ones(1), 1], ["x", "k"], ["y"], self.directory, "cpu", 0, 1,
            self.fib.channel(1)))
        self.assertIn("ValueError: no", result["reference_error"])
        self.assertIn("<reference:ref>", result["reference_error"])
        self.assertNotIn("reference_outputs", result["reference_error"])

    def solution(self, source, dps=False, built=True):
        """The request of a Python solution, built (as fib's build worker does) unless told."""
        import hashlib
        key = hashlib.sha1(source.encode()).hexdigest()  # as fib's content hash: distinct heads
        solution = {"key": key, "language": "python", "binding": None,
                    "entry_file": "main.py", "entry_symbol": "run", "dps": dps,
                    "sources": [{"path": "main.py", "content": source}]}
        if built:
            self.assertEqual(sandbox.build_job(os.path.join(self.scratch, "cache"), solution),
                             (True, ""))
        return solution

    def test_the_build_never_runs_the_solution_and_a_load_needs_a_build(self):
        cache = os.path.join(self.scratch, "cache")
        witness = os.path.join(self.scratch, "imported")
        source = "open(%r, 'w').close()\n\ndef run(x, k):\n    return x\n" % witness
        unbuilt = self.solution(source, built=False)
        ok, why = sandbox.load_job(cache, unbuilt)
        self.assertFalse(ok)
        self.assertIn("build did not complete", why)
        self.assertEqual(sandbox.build_job(cache, unbuilt), (True, ""))
        self.assertFalse(os.path.exists(witness))  # written, not imported
        self.assertTrue(os.path.exists(os.path.join(cache, "solutions", unbuilt["key"],
                                                    sandbox.BUILT_MARK)))
        self.assertEqual(sandbox.load_job(cache, unbuilt), (True, ""))
        self.assertTrue(os.path.exists(witness))

    def test_the_solution_writes_what_it_returned_and_says_its_kinds(self):
        import json
        sandbox.save_tensors(os.path.join(self.directory, "inputs.safetensors"),
                             [("x", torch.ones(2))])
        cache = os.path.join(self.scratch, "cache")
        result = json.loads(sandbox.solution_outputs(
            cache, self.solution("def run(x, k):\n    return x * k, 5\n"), self.directory,
            ["x", "k"], {"k": 3}, [[[2], "F32"]], "cpu", 0, 2, self.fib.channel(9)))
        self.assertEqual(result["kinds"], ["tensor", "int"])
        got = sandbox.load_tensors(os.path.join(self.directory, "got.safetensors"), "cpu")
        self.assertEqual(sorted(got), ["0"])
        self.assertTrue(torch.equal(got["0"], torch.full((2,), 3.0)))
        # The lock of the build lives inside the cache entry (the only writable place).
        self.assertTrue(os.path.exists(os.path.join(cache, "solutions",
                                                    self.solution("def run(x, k):\n    return x * k, 5\n")["key"], ".lock")))

    def test_a_setup_runs_before_each_call_and_is_said_between_go_and_done(self):
        import json
        sandbox.save_tensors(os.path.join(self.directory, "inputs.safetensors"),
                             [("x", torch.ones(2))])
        source = ("calls = []\n\ndef setup(x, k):\n    calls.append('setup')\n"
                  "    return {'scale': k + 1}\n\n"
                  "def run(x, k, scale):\n    calls.append('run')\n    return x * scale\n")
        fib = FakeFib()
        try:
            result = json.loads(sandbox.solution_outputs(
                os.path.join(self.scratch, "cache"), self.solution(source), self.directory,
                ["x", "k"], {"k": 2}, [[[2], "F32"]], "cpu", 1, 2, fib.channel(8)))
        finally:
            fib.close()
        self.assertEqual(result["kinds"], ["tensor"])
        got = sandbox.load_tensors(os.path.join(self.directory, "got.safetensors"), "cpu")
        self.assertTrue(torch.equal(got["0"], torch.full((2,), 3.0)))  # run got setup's state
        steps = [m["timing"] for m in fib.messages if "timing" in m]
        self.assertEqual(steps, ["prepare", "ready", "setup", "done"] * 2)

    def test_fib_s_stop_ends_the_timed_calls(self):
        import json
        sandbox.save_tensors(os.path.join(self.directory, "inputs.safetensors"),
                             [("x", torch.ones(2))])
        fib = FakeFib(stop_after=2)
        try:
            json.loads(sandbox.solution_outputs(
                os.path.join(self.scratch, "cache"), self.solution("def run(x, k):\n    return x\n"),
                self.directory, ["x", "k"], {"k": 1}, [[[2], "F32"]], "cpu", 0, 9,
                fib.channel(7)))
        finally:
            fib.close()
        done = [m for m in fib.messages if m.get("timing") == "done"]
        self.assertEqual(len(done), 2)  # of 9 asked
        self.assertFalse(os.path.exists(os.path.join(self.directory, "timed_2.safetensors")))

    def test_every_timed_call_is_kept_after_it_returned(self):
        import json
        sandbox.save_tensors(os.path.join(self.directory, "inputs.safetensors"),
                             [("x", torch.ones(2))])
        source = ("calls = [0]\n\ndef run(x, k):\n    calls[0] += 1\n"
                  "    return x * calls[0]\n")
        json.loads(sandbox.solution_outputs(
            os.path.join(self.scratch, "cache"), self.solution(source), self.directory,
            ["x", "k"], {"k": 1}, [[[2], "F32"]], "cpu", 0, 3, self.fib.channel(6)))
        # Call 1 is the first call, 2, 3 and 4 the timed ones: timed call i is call i + 2.
        for i in range(3):
            kept = sandbox.load_tensors(os.path.join(self.directory, "timed_%d.safetensors" % i),
                                        "cpu")
            self.assertTrue(torch.equal(kept["0"], torch.full((2,), float(i + 2))))

    def test_a_destination_passing_solution_gets_outputs_of_the_expected_shapes(self):
        import json
        sandbox.save_tensors(os.path.join(self.directory, "inputs.safetensors"),
                             [("x", torch.ones(2, 2))])
        source = "def run(x, k, out):\n    out.copy_(x + k)\n"
        result = json.loads(sandbox.solution_outputs(
            os.path.join(self.scratch, "cache"), self.solution(source, dps=True),
            self.directory, ["x", "k"], {"k": 1}, [[[2, 2], "F32"]], "cpu", 0, 1,
            self.fib.channel(2)))
        self.assertEqual(result["kinds"], ["tensor"])
        got = sandbox.load_tensors(os.path.join(self.directory, "got.safetensors"), "cpu")
        self.assertTrue(torch.equal(got["0"], torch.full((2, 2), 2.0)))

    def test_compile_and_runtime_errors_are_said_with_their_logs(self):
        import json
        sandbox.save_tensors(os.path.join(self.directory, "inputs.safetensors"),
                             [("x", torch.ones(1))])
        cache = os.path.join(self.scratch, "cache")
        broken = json.loads(sandbox.solution_outputs(
            cache, self.solution("def run(x, k:\n"), self.directory, ["x", "k"], {"k": 1},
            [[[1], "F32"]], "cpu", 0, 1, self.fib.channel(3)))
        self.assertIn("SyntaxError", broken["compile_error"])
        raising = json.loads(sandbox.solution_outputs(
            cache, self.solution("def run(x, k):\n    raise KeyError('boom')\n"), self.directory,
            ["x", "k"], {"k": 1}, [[[1], "F32"]], "cpu", 0, 1, self.fib.channel(4)))
        self.assertIn("KeyError: 'boom'", raising["runtime_error"])


@needs_torch
class CallAndEvaluate(unittest.TestCase):
    def reference(self, source):
        module, message, _ = sandbox.build("ref", source, 1, 1)
        self.assertIsNone(message)
        return module

    def test_call_describes_the_outputs(self):
        module = self.reference("def run(x):\n    return x * 2, 3\n")
        self.assertEqual(sandbox.call(module, [torch.zeros(2, 3)], 2),
                         ("ok", [("tensor", [2, 3], "float32"), ("int", None, None)]))

    def test_call_tells_a_missing_name_from_other_errors(self):
        kind, name, trace = sandbox.call(self.reference("def run(x):\n    return helper(x)\n"),
                                         [1], 1)
        self.assertEqual((kind, name), ("name", "helper"))
        self.assertIn("<reference:ref>", trace)
        kind, text, _ = sandbox.call(self.reference("def run(x):\n    return 1 / 0\n"), [1], 1)
        self.assertEqual((kind, text), ("raise", "ZeroDivisionError: division by zero"))

    def test_input_axes_are_read_off_the_tensors(self):
        axes = sandbox.input_axes([torch.zeros(2, 5), torch.zeros(5, 7), 3],
                                  [["m", "k"], ["k", "n"], []])
        self.assertEqual(axes, {"m": 2, "k": 5, "n": 7})


if __name__ == "__main__":
    unittest.main()

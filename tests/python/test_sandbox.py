"""Unit tests of src/worker/sandbox.py, the worker's Python program.

The program imports torch at the top. Where this Python has no torch, an empty stand-in module
takes its place so that the pure helpers (annotations, tolerances, building a reference, init
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


class Tolerance(unittest.TestCase):
    def test_without_the_table_the_given_tolerances_apply(self):
        self.assertEqual(sandbox._tolerance("bfloat16", 0.5, 0.25, False), (0.5, 0.25, 1.0))

    def test_the_table_is_per_dtype(self):
        self.assertEqual(sandbox._tolerance("float32", 0.5, 0.25, True), (1e-5, 1e-5, 1.0))
        self.assertEqual(sandbox._tolerance("float16", 0.5, 0.25, True), (1e-3, 1e-3, 1.0))
        self.assertEqual(sandbox._tolerance("bfloat16", 0.5, 0.25, True), (8e-3, 1e-2, 1.0))
        self.assertEqual(sandbox._tolerance("float8_e4m3fn", 0.5, 0.25, True), (1e-1, 2e-1, 0.85))
        self.assertEqual(sandbox._tolerance("float8_e5m2", 0.5, 0.25, True), (1e-1, 2e-1, 0.85))

    def test_a_dtype_outside_the_table_keeps_the_given_tolerances(self):
        self.assertEqual(sandbox._tolerance("int32", 0.5, 0.25, True), (0.5, 0.25, 1.0))


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
class Compare(unittest.TestCase):
    def test_equal_outputs_pass_with_their_errors(self):
        t = torch.tensor([1.0, 2.0])
        status, log, correctness = sandbox._compare([t.clone()], [t], 1e-2, 1e-2, False)
        self.assertIsNone(status)
        self.assertEqual(log, "")
        self.assertEqual(correctness["max_absolute_error"], 0.0)

    def test_a_count_shape_or_dtype_mismatch_is_reported(self):
        t = torch.zeros(2, 3)
        self.assertEqual(sandbox._compare([], [t], 1, 1, False),
                         ("INCORRECT_SHAPE", "returned 0 outputs, expected 1", None))
        self.assertEqual(sandbox._compare([torch.zeros(3, 2)], [t], 1, 1, False),
                         ("INCORRECT_SHAPE", "output 0: shape (3, 2), expected (2, 3)", None))
        self.assertEqual(sandbox._compare([7], [t], 1, 1, False),
                         ("INCORRECT_SHAPE", "output 0: shape (), expected (2, 3)", None))
        self.assertEqual(
            sandbox._compare([t.double()], [t], 1, 1, False),
            ("INCORRECT_DTYPE", "output 0: dtype torch.float64, expected torch.float32", None))

    def test_values_outside_the_tolerance_are_numerical_errors(self):
        expected = torch.tensor([1.0, 1.0, 1.0, 1.0])
        got = torch.tensor([1.0, 1.0, 1.0, 1.5])
        status, log, correctness = sandbox._compare([got], [expected], 1e-2, 1e-2, False)
        self.assertEqual(status, "INCORRECT_NUMERICAL")
        self.assertEqual(log, "output 0: 75.0% of the values within atol=0.01, rtol=0.01")
        self.assertAlmostEqual(correctness["max_absolute_error"], 0.5)
        self.assertAlmostEqual(correctness["max_relative_error"], 0.5)
        # A larger tolerance accepts it.
        self.assertIsNone(sandbox._compare([got], [expected], 1.0, 0.0, False)[0])

    def test_the_table_applies_the_dtype_tolerance(self):
        expected = torch.ones(4, dtype=torch.bfloat16)
        got = expected + 0.0078125  # one bfloat16 step above 1, within atol 8e-3 + rtol 1e-2
        self.assertIsNone(sandbox._compare([got], [expected], 0.0, 0.0, True)[0])
        self.assertEqual(sandbox._compare([got], [expected], 0.0, 0.0, False)[0],
                         "INCORRECT_NUMERICAL")


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

    def evaluate(self, function, dps=False):
        reference = self.reference("def run(x):\n    return x + 1\n")
        return sandbox.evaluate(reference, function, [torch.ones(4)], 1, dps, 0, 2, "cpu",
                                1e-2, 1e-2, False, "built\n")

    def test_a_matching_solution_passes_and_is_timed(self):
        result = self.evaluate(lambda x: x + 1)
        self.assertEqual(result["status"], "PASSED")
        self.assertEqual(result["log"], "built\n")
        self.assertGreater(result["performance"]["latency_ms"], 0.0)
        self.assertEqual(result["correctness"]["max_absolute_error"], 0.0)

    def test_a_destination_passing_solution_writes_its_outputs(self):
        def solution(x, out):
            out.copy_(x + 1)
        self.assertEqual(self.evaluate(solution, dps=True)["status"], "PASSED")

    def test_wrong_values_and_exceptions_become_their_statuses(self):
        self.assertEqual(self.evaluate(lambda x: x)["status"], "INCORRECT_NUMERICAL")
        failed = self.evaluate(lambda x: 1 / 0)
        self.assertEqual(failed["status"], "RUNTIME_ERROR")
        self.assertTrue(failed["log"].startswith("built\nTraceback"))
        self.assertIsNone(failed["correctness"])

    def test_a_failing_reference_gives_no_evaluation(self):
        reference = self.reference("def run(x):\n    raise RuntimeError('broken')\n")
        result = sandbox.evaluate(reference, lambda x: x, [torch.ones(1)], 1, False, 0, 1, "cpu",
                                  1e-2, 1e-2, False, "")
        self.assertEqual(list(result), ["reference_error"])
        self.assertIn("RuntimeError: broken", result["reference_error"])


if __name__ == "__main__":
    unittest.main()

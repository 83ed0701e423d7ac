"""Unit tests of src/python/helper.py, the program fib's embedded interpreter runs for the syntax
and structure checks. The helper needs only the standard library, so these run on any Python 3."""

import importlib.util
import pathlib
import unittest

HELPER = pathlib.Path(__file__).resolve().parents[2] / "src" / "python" / "helper.py"


def load_helper():
    spec = importlib.util.spec_from_file_location("fib_python_helper", HELPER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helper = load_helper()


def functions_of(source):
    """name -> (line, end_line, is_async, params, var_pos, var_kw, arity) of analyze_structure."""
    result = helper.analyze_structure(source)
    assert result[0] == "ok", result
    return {f[0]: f[1:] for f in result[1]}


def arity(source, name="run"):
    return functions_of(source)[name][6]


class AnalyzeReference(unittest.TestCase):
    def test_a_syntax_error_gives_the_message_line_and_column(self):
        result = helper.analyze_reference("def run(:\n    pass\n")
        self.assertEqual(result[0], "syntax")
        self.assertEqual(result[3], 1)
        self.assertGreater(result[4], 0)
        self.assertTrue(result[2])

    def test_no_top_level_run_is_norun(self):
        self.assertEqual(helper.analyze_reference("def main(x):\n    return x\n"), ("norun",))
        # A nested `run` does not count.
        self.assertEqual(
            helper.analyze_reference("def outer():\n    def run(x):\n        return x\n"),
            ("norun",))

    def test_the_signature_of_run_is_counted(self):
        source = "import torch\n\ndef run(a, /, b, c=1, *rest, k, m=2):\n    return a\n"
        tag, total, required, var_positional, kwonly_required, line, names = (
            helper.analyze_reference(source))
        self.assertEqual(tag, "run")
        self.assertEqual(total, 3)
        self.assertEqual(required, 2)
        self.assertTrue(var_positional)
        self.assertEqual(kwonly_required, 1)
        self.assertEqual(line, 3)
        self.assertEqual(names, ["a", "b", "c"])

    def test_deep_nesting_names_the_cause(self):
        # CPython gives up with a MemoryError (empty message) or a RecursionError.
        for body in ("-" * 200000 + "x", "x" + "[0]" * 200000):
            result = helper.analyze_reference("def run(x):\n    return " + body + "\n")
            self.assertEqual(result[0], "syntax")
            self.assertEqual(result[1], "it is nested too deeply to parse")
            self.assertEqual(result[2], result[1])

    def test_the_last_run_wins(self):
        source = "def run(a):\n    return a\n\ndef run(a, b):\n    return a\n"
        self.assertEqual(helper.analyze_reference(source)[1], 2)


# Sources for which the symbol-table path must give exactly what the AST path gives: either the
# same answer or None (the caller then takes the AST path).
TRICKY_REFERENCES = [
    "def run(q, k, v, scale):\n    return q\n",
    "import torch\n\n@torch.no_grad()\ndef run(a, b=1):\n    return a\n",
    "def run(\n    a,  # the (first) input\n    b: 'tuple[int, int]' = (1, 2),\n    *,\n"
    "    c=\"')\",\n    d,\n):\n    return a\n",
    "def  run  (a, b=[1, (2, 3)], c={'x': ')'}, *args, **kw) -> int:\n    return a\n",
    "def run(a, b='''multi\nline ) string''', c=r'\\\\'):\n    return a\n",
    "def run(a, /, b, c=lambda x=1: x, *d, e, f=2, **g):\n    return a\n",
    "def run(x, y=f'{1})'):\n    return x\n",
    "def run(a):\r\n    return a\r\n\r\ndef run(a, b):\r\n    return a\r\n",
    "x = 1\rdef run(a, b, c):\r    return a\r",
    "def run(*, a, b=1):\n    return a\n",
    "\fdef run(a):\n    return a\n",
    "\ufeffdef run(a):\n    return a\n",
    "async def run(a):\n    return a\n",
    "def run(a):\n    return a\n\nasync def run(a, b):\n    return a\n",
    "def run(a):\n    return a\n\nif True:\n    def run(a, b):\n        return a\n",
    "if True:\n    def run(a, b):\n        return a\n",
    "class run:\n    def run(self, a):\n        return a\n",
    "def run(a):\n    return a\n\nclass run:\n    pass\n",
    "run = lambda a: a\n",
    "def outer():\n    def run(a):\n        return a\n    return run\n",
    "def run(a, a):\n    return a\n",
    "nonlocal x\ndef run(a):\n    return a\n",
    "def run(a):\n    global a\n    return a\n",
    "def run(a):\n    yield a\nreturn 1\n",
    "def \\\nrun(a):\n    return a\n",
    "def run(a, b=(1,\n    2)): return a\n",
    "def run(a, b=\"unterminated):\n    return a\n",
    "def run(a\x00):\n    return a\n",
    "def run(): pass\ndef run(x, y, z=0, /): pass\n",
    "def run(a, b):\n    return a\n\ndef run(a, b, c=3):\n    return a\n\nx = [run for run in ()]\n",
]


def reference_by(path, source):
    """analyze_reference with the symbol-table path ("fast") or without it ("ast"); both calls
    start CPython's parse at the same Python stack depth, which moves the depth it gives up at."""
    if path == "fast":
        return helper.analyze_reference(source)
    saved = helper._fast_reference
    helper._fast_reference = lambda src: None
    try:
        return helper.analyze_reference(source)
    finally:
        helper._fast_reference = saved


class SymbolTablePath(unittest.TestCase):
    def test_it_agrees_with_the_ast_path_or_steps_aside(self):
        for source in TRICKY_REFERENCES:
            with self.subTest(source=source):
                exact = reference_by("ast", source)
                self.assertIn(helper._fast_reference(source), (None, exact))
                self.assertEqual(reference_by("fast", source), exact)

    def test_it_is_taken_for_ordinary_references(self):
        # An ordinary reference never needs the AST path (that would silently cost the time back).
        for source in TRICKY_REFERENCES[:10]:
            with self.subTest(source=source):
                self.assertIsNotNone(helper._fast_reference(source))

    def test_it_steps_aside_below_the_depth_where_the_ast_path_gives_up(self):
        shapes = {
            "unary": lambda n: "x = " + "-" * n + "y\n",
            "attribute": lambda n: "x = y" + ".a" * n + "\n",
            "call": lambda n: "x = f" + "()" * n + "\n",
            "lambda": lambda n: "x = " + "lambda: " * n + "0\n",
            "in run": lambda n: "def run(x):\n    return " + "not " * n + "y\n",
        }

        for name, shape in shapes.items():
            with self.subTest(shape=name):
                low, high = 1, 20000  # the deepest nesting the AST path accepts
                while low < high:
                    middle = (low + high + 1) // 2
                    parses = reference_by("ast", shape(middle))[0] != "syntax"
                    low, high = (middle, high) if parses else (low, middle - 1)
                self.assertGreater(low, 1000)
                for depth in range(low - 4, low + 5):
                    source = shape(depth)
                    self.assertEqual(reference_by("fast", source), reference_by("ast", source))
                # The margin: near the limit the symbol table refuses and the AST path answers.
                self.assertIsNone(helper._fast_reference(shape(low)))
                self.assertIsNotNone(helper._fast_reference(shape(low - 200)))

    def test_expressions_agree_with_the_ast_path(self):
        for source in ("M % 16 == 0", "x +", "(yield)", "[x for x in y if (x := 1)]", "a\x00",
                       "lambda: (lambda: 0)", "-" * 3000 + "x"):
            with self.subTest(source=source):
                try:
                    helper._parse(source, "eval")
                    exact = None
                except helper._PARSE_ERRORS as e:
                    exact = helper._syntax(e)
                self.assertEqual(helper.check_expression(source), exact)


class CheckExpression(unittest.TestCase):
    def test_a_valid_expression_is_none(self):
        self.assertIsNone(helper.check_expression("M % 16 == 0 and N > 0"))

    def test_a_statement_is_a_syntax_error(self):
        result = helper.check_expression("x = 1")
        self.assertEqual(result[0], "syntax")

    def test_a_null_byte_is_reported_not_raised(self):
        self.assertEqual(helper.check_expression("a\0b")[0], "syntax")


class ReturnArity(unittest.TestCase):
    def test_a_tuple_counts_its_elements(self):
        self.assertEqual(arity("def run(x):\n    return x, x + 1\n"), 2)
        self.assertEqual(arity("def run(x):\n    return [x, x, x]\n"), 3)

    def test_a_single_value_is_one(self):
        self.assertEqual(arity("def run(x):\n    return x * 2\n"), 1)

    def test_no_return_and_return_none_are_zero(self):
        self.assertEqual(arity("def run(x):\n    x.add_(1)\n"), 0)
        self.assertEqual(arity("def run(x):\n    return None\n"), 0)
        self.assertEqual(arity("def run(x):\n    return\n"), 0)

    def test_a_starred_element_is_unknown(self):
        self.assertEqual(arity("def run(x):\n    return (*x, 1)\n"), -1)

    def test_returns_that_disagree_are_unknown(self):
        source = "def run(x):\n    if x:\n        return x, x\n    return x\n"
        self.assertEqual(arity(source), -1)

    def test_falling_off_the_end_adds_zero(self):
        source = "def run(x):\n    if x:\n        return x\n"
        self.assertEqual(arity(source), -1)
        source = "def run(x):\n    if x:\n        return x\n    raise ValueError(x)\n"
        self.assertEqual(arity(source), 1)

    def test_a_call_to_a_local_function_takes_its_arity(self):
        source = ("def helper(x):\n    return x, x\n\n"
                  "def run(x):\n    return helper(x)\n")
        self.assertEqual(arity(source), 2)

    def test_a_call_to_an_unknown_function_is_unknown(self):
        self.assertEqual(arity("def run(x):\n    return compute(x)\n"), -1)

    def test_methods_that_return_tuples_are_unknown(self):
        self.assertEqual(arity("def run(x):\n    return x.topk(2)\n"), -1)
        self.assertEqual(arity("def run(x):\n    return torch.split(x, 2)\n"), -1)
        self.assertEqual(arity("def run(x):\n    return torch.matmul(x, x)\n"), 1)

    def test_a_name_takes_the_arity_of_what_was_assigned_to_it(self):
        self.assertEqual(arity("def run(x):\n    out = x, x\n    return out\n"), 2)
        self.assertEqual(arity("def run(x):\n    return x\n"), 1)
        source = "def run(x):\n    out = x, x\n    out = x\n    return out\n"
        self.assertEqual(arity(source), -1)

    def test_nested_functions_inside_blocks_do_not_count(self):
        source = ("def run(x):\n    if x:\n        def inner():\n            return 1, 2, 3\n"
                  "    return x\n")
        self.assertEqual(arity(source), 1)
        self.assertEqual(arity("def run(x):\n    f = lambda: (1, 2)\n    return x\n"), 1)

    def test_a_generator_is_unknown(self):
        self.assertEqual(arity("def run(x):\n    yield x\n"), -1)

    def test_recursion_stops(self):
        source = "def run(x):\n    return run(x)\n"
        self.assertEqual(arity(source), -1)


class Structure(unittest.TestCase):
    def test_parameters_carry_their_kind_and_default(self):
        functions = functions_of("def run(a, /, b=1, *args, c, d=2, **kw):\n    return a\n")
        line, end_line, is_async, params, var_pos, var_kw, _ = functions["run"]
        self.assertEqual((line, end_line, is_async), (1, 2, False))
        self.assertEqual(params, [("a", 0, False), ("b", 1, True), ("c", 2, False),
                                  ("d", 2, True)])
        self.assertTrue(var_pos)
        self.assertTrue(var_kw)

    def test_async_functions_are_marked(self):
        self.assertTrue(functions_of("async def run(x):\n    return x\n")["run"][2])

    def test_imports_go_after_the_docstring_and_future_imports(self):
        source = '"""Doc."""\nfrom __future__ import annotations\n\nimport torch\n'
        self.assertEqual(helper.analyze_structure(source)[2], 2)
        self.assertEqual(helper.analyze_structure("import torch\n")[2], 0)

    def test_unresolved_names_are_listed(self):
        source = ("import torch\n\nSCALE = 2\n\n"
                  "def run(x):\n    return torch.relu(x) * SCALE + missing_helper(x) + len(x)\n")
        self.assertEqual(helper.analyze_structure(source)[3], ["missing_helper"])

    def test_a_syntax_error_is_reported(self):
        self.assertEqual(helper.analyze_structure("def run(x)\n")[0], "syntax")

    def test_classes_imports_and_nested_globals_count_as_bound_or_missing(self):
        source = ("import os\nfrom a import b\nclass C:\n    pass\nK = 1\n"
                  "def run(x):\n    def inner():\n        return hidden + K\n"
                  "    return os, b, C, inner, absent\n")
        self.assertEqual(helper.analyze_structure(source)[3], ["absent", "hidden"])

    def test_the_module_table_is_never_searched_name_by_name(self):
        # symtable's lookup() scans every child table per name: with many top-level defs that
        # is quadratic (20,000 defs took 11 s). The module's names must come from its flags.
        import symtable
        source = "".join("def f%d(x):\n    return f%d(x) + g\n" % (i, i) for i in range(300))
        calls = []
        original = symtable.SymbolTable.lookup
        def counting(table, name):
            calls.append(table.get_type())
            return original(table, name)
        symtable.SymbolTable.lookup = counting
        try:
            self.assertEqual(helper.analyze_structure(source)[3], ["g"])
        finally:
            symtable.SymbolTable.lookup = original
        self.assertEqual(calls.count("module"), 0)


REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fakes" / "helper_source"
CORPUS_SOURCE = REPO.parent / "shared" / "corpus" / "flashinfer-src"
CORPUS_DUMPS = REPO.parent / "shared" / "corpus" / "dumps"


def resolve(src, names, root=FIXTURE):
    package, new_src, inserted, files, imports, missing = helper.resolve_helpers(
        src, names, str(root))
    return {"package": package, "src": new_src, "inserted": inserted, "files": files,
            "imports": imports, "missing": dict(missing)}


def run_reference(src, *args):
    namespace = {}
    exec(compile(src, "<reference>", "exec"), namespace)
    return namespace["_ref"](*args)


class ResolveHelpers(unittest.TestCase):
    """resolve_helpers against the fixture package tests/fakes/helper_source (rule N22)."""

    REF = "def _alpha_reference(x):\n    return x\n\ndef _ref(x):\n    return {}\n"

    def test_transitive_helpers_a_constant_and_their_import_are_inlined_in_source_order(self):
        out = resolve(self.REF.format("_outer(x)"), ["_outer"])
        self.assertEqual(out["files"], [("flashinfer/trace/templates/alpha.py",
                                         ["_EPS", "_inner", "_outer"])])
        self.assertEqual(out["imports"], ["import math"])
        self.assertEqual(out["missing"], {})
        self.assertLess(out["src"].index("_EPS = 0.5"), out["src"].index("def _inner"))
        self.assertLess(out["src"].index("def _outer"), out["src"].index("def _alpha_reference"))
        self.assertEqual(run_reference(out["src"], 4.0), 2.5)
        # The result reads no name it does not bind, so a second run has nothing to do.
        self.assertEqual(helper.analyze_structure(out["src"])[3], [])
        self.assertEqual(out["inserted"], out["src"].count("\n") - self.REF.count("\n"))

    def test_relative_imports_are_followed_to_their_modules(self):
        out = resolve(self.REF.format("_uses_template(x) + _uses_beta(x)"),
                      ["_uses_beta", "_uses_template"])
        self.assertEqual(out["files"], [
            ("flashinfer/trace/template.py", ["_SCALE", "scaled"]),
            ("flashinfer/trace/templates/beta.py", ["beta_helper", "_BETA"]),
            ("flashinfer/trace/templates/alpha.py", ["_uses_template", "_uses_beta"])])
        self.assertEqual(run_reference(out["src"], 1.0), 5.0)
        self.assertNotIn("import", "".join(out["imports"]))

    def test_an_aliased_import_becomes_an_assignment_after_its_definition(self):
        out = resolve(self.REF.format("_uses_alias(3)"), ["_uses_alias"])
        self.assertIn(("flashinfer/trace/templates/_init_helpers.py", ["make_ones"]), out["files"])
        self.assertIn("ones = make_ones\n", out["src"])
        self.assertEqual(run_reference(out["src"], 0), [1.0, 1.0, 1.0])

    def test_names_not_found_or_not_inlinable_stay_with_the_reason(self):
        out = resolve(self.REF.format("_nope(x) + _uses_compiled(x) + _conditional + _outer(x)"),
                      ["_conditional", "_nope", "_outer", "_uses_compiled"])
        self.assertEqual(sorted(out["missing"]), ["_conditional", "_nope", "_uses_compiled"])
        self.assertEqual(out["missing"]["_nope"],
                         "not defined in any flashinfer/trace/templates module")
        self.assertEqual(out["missing"]["_uses_compiled"],
                         "needs fast_op: imported by `from ...compiled_ext import fast_op` in "
                         "flashinfer/trace/templates/alpha.py, but flashinfer.compiled_ext is not "
                         "Python source in the package")
        self.assertEqual(out["missing"]["_conditional"],
                         "bound only inside a top-level `if` in flashinfer/trace/templates/alpha.py")
        # What can be inlined still is.
        self.assertIn("def _outer", out["src"])

    def test_a_name_the_reference_defines_itself_is_never_replaced(self):
        src = ("import math\n\ndef _inner(x):\n    return 100.0\n\n" +
               self.REF.format("_outer(x)"))
        out = resolve(src, ["_outer"])
        self.assertEqual(out["files"], [("flashinfer/trace/templates/alpha.py",
                                         ["_EPS", "_outer"])])
        self.assertEqual(out["imports"], [])
        self.assertEqual(out["src"].count("def _inner"), 1)
        self.assertEqual(run_reference(out["src"], 4.0), 100.5)

    def test_the_module_the_reference_comes_from_wins_a_shared_name(self):
        # beta.py defines _inner too; the reference's own def names alpha.py as its module.
        out = resolve(self.REF.format("_inner(x)"), ["_inner"])
        self.assertEqual(out["files"], [("flashinfer/trace/templates/alpha.py", ["_inner"])])
        src = "def _beta_only():\n    pass\n\ndef beta_helper(x):\n    return x\n" \
              "\ndef _ref(x):\n    return _inner(x)\n"
        out = resolve(src, ["_inner"])
        self.assertEqual(out["files"], [("flashinfer/trace/templates/beta.py", ["_inner"])])

    def test_helpers_go_after_the_docstring_and_leading_imports_and_the_output_is_stable(self):
        src = '"""Doc."""\nfrom __future__ import annotations\nimport math\n' + \
              self.REF.format("_outer(x)")
        first = resolve(src, ["_outer"])
        self.assertTrue(first["src"].startswith(
            '"""Doc."""\nfrom __future__ import annotations\nimport math\n\n'
            "# Inlined by fib normalize from FlashInfer's source: "
            "flashinfer/trace/templates/alpha.py.\n"), first["src"])
        self.assertEqual(first["imports"], [])
        self.assertEqual(resolve(src, ["_outer"]), first)

    def test_no_package_is_a_reason_for_every_name(self):
        missing = resolve("def _ref(x):\n    return _a(x) + _b(x)\n", ["_a", "_b"],
                          root=FIXTURE / "nowhere")["missing"]
        self.assertEqual(sorted(missing), ["_a", "_b"])
        self.assertIn("has no trace/templates", missing["_a"])

    def test_the_installed_package_is_found_on_the_import_path_without_importing_it(self):
        import sys
        saved_path, saved_cache = list(sys.path), list(helper._installed_cache)
        sys.path.insert(0, str(FIXTURE))
        helper._installed_cache.clear()
        try:
            out = resolve(self.REF.format("_outer(x)"), ["_outer"], root="")
            self.assertNotIn("flashinfer", sys.modules)
        finally:
            sys.path[:] = saved_path
            helper._installed_cache[:] = saved_cache
        self.assertEqual(out["package"], str(FIXTURE / "flashinfer"))
        self.assertEqual(out["missing"], {})

    def test_thousands_of_unknown_names_stay_linear(self):
        import time
        names = ["_unknown_%05d" % i for i in range(20000)]
        src = "def _ref(x):\n    return " + " + ".join(names) + "\n"
        start = time.monotonic()
        out = resolve(src, names)
        self.assertLess(time.monotonic() - start, 10.0)
        self.assertEqual(len(out["missing"]), 20000)
        self.assertIsNone(out["src"])


class ResolveHelpersInATemporaryPackage(unittest.TestCase):
    def package(self, modules):
        import tempfile
        root = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(__import__("shutil").rmtree, root)
        templates = root / "flashinfer" / "trace" / "templates"
        templates.mkdir(parents=True)
        for name, text in modules.items():
            (templates / name).write_text(text)
        return root

    def test_a_module_over_the_size_limit_is_not_read(self):
        root = self.package({"big.py": "def _h():\n    return 1\n" + "#" * (9 << 20) + "\n"})
        missing = resolve("def _ref():\n    return _h()\n", ["_h"], root)["missing"]
        self.assertEqual(missing, {"_h": "not defined in any flashinfer/trace/templates module"})

    def test_one_name_bound_differently_by_two_modules_is_not_inlined(self):
        root = self.package({
            "a.py": "from .b import _from_b\n_K = 1\ndef _a():\n    return _K + _from_b()\n",
            "b.py": "_K = 2\ndef _from_b():\n    return _K\n"})
        missing = resolve("def _ref():\n    return _a()\n", ["_a"], root)["missing"]
        self.assertIn("bound differently in flashinfer/trace/templates/a.py and "
                      "flashinfer/trace/templates/b.py", missing["_a"])

    def test_a_module_that_does_not_parse_is_named(self):
        root = self.package({"a.py": "from .b import _h\n", "b.py": "def _h(:\n"})
        missing = resolve("def _ref():\n    return _h()\n", ["_h"], root)["missing"]
        self.assertIn("flashinfer/trace/templates/b.py cannot be used: it does not parse",
                      missing["_h"])


@unittest.skipUnless(CORPUS_SOURCE.is_dir(), "no shared corpus")
class ResolveHelpersInFlashInfersSource(unittest.TestCase):
    """The real trace templates (the corpus's flashinfer-src, the revision that wrote its dumps)."""

    def reference(self, dump):
        import json
        return json.loads((CORPUS_DUMPS / dump).read_text())["reference"]

    def test_the_rope_dump_gets_its_three_helpers_and_the_one_they_share(self):
        out = resolve(self.reference("rope_h32_kv8_d128.json"),
                      ["_apply_rope_core", "_positions_from_indptr", "_rope_freqs"],
                      root=CORPUS_SOURCE)
        self.assertEqual(out["files"], [("flashinfer/trace/templates/rope.py", [
            "_rope_freqs", "_rotate", "_positions_from_indptr", "_apply_rope_core"])])
        self.assertEqual(out["missing"], {})
        self.assertEqual(helper.analyze_structure(out["src"])[3], [])


if __name__ == "__main__":
    unittest.main()

"""Dumps with one of each runnable verdict, for the `--smoke` golden cases of normalize and stage.

Run with --max-bytes 65536: `c_big` needs about 1 MiB and is not runnable here; the others are
small. Setup scripts import this module with `sys.path.insert(0, "../..")`.
"""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stage_fixtures import definition, write_dump  # noqa: E402


def write_smoke_dumps(folder):
    """a_good runs, b_wrong_dtype fails when run, c_big is over --max-bytes, d_question has an
    input of unknown dtype (normalize asks; nothing runs)."""
    write_dump(folder, "a_good.json", definition("a_good"))
    wrong = definition("b_wrong_dtype")
    wrong["reference"] = wrong["reference"].replace(".to(hidden_states.dtype)", "")
    write_dump(folder, "b_wrong_dtype.json", wrong)
    big = definition("c_big")
    big["axes"]["hidden_size"]["value"] = 65536
    write_dump(folder, "c_big.json", big)
    question = copy.deepcopy(definition("d_question"))
    question["inputs"]["weight"]["dtype"] = "unknown"
    write_dump(folder, "d_question.json", question)

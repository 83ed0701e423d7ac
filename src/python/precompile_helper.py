"""Build step: compiles helper.py to a code object and writes it marshalled, after the 4-byte magic
number of the Python that compiled it, so that fib's embedded interpreter can load the helper
without compiling its source at every start (about 5 ms). The interpreter uses these bytes only
when its own magic number is the same and it runs unoptimised (sys.flags.optimize == 0, as the
code was compiled); otherwise it compiles the source the same way. The code is compiled exactly as
the source is compiled there: file name "<string>", optimisation level 0, no inherited flags.

    python3 precompile_helper.py HELPER_PY OUTPUT
"""
import importlib.util
import marshal
import os
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        source = f.read()
    code = compile(source, "<string>", "exec", dont_inherit=True, optimize=0)
    data = importlib.util.MAGIC_NUMBER + marshal.dumps(code)
    temporary = argv[2] + ".tmp"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

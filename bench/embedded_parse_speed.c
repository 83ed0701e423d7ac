/* Benchmark helper (not a test): how fast CPython's symbol-table pass parses a set of sources in
 * a program that embeds CPython, to compare ways of linking it with the `python3` executable.
 *
 *   python3 - <<'PY'                      # the sources: every definition's reference, marshalled
 *   import json, marshal, pathlib
 *   refs = [json.loads(p.read_text())["reference"] for p in pathlib.Path(COPY,
 * "definitions").rglob("*.json")] marshal.dump(refs, open("/tmp/refs.marshal", "wb")) PY
 *   I=-I/usr/include/python3.11; A=/usr/lib/python3.11/config-3.11-x86_64-linux-gnu
 *   gcc -O2 $I bench/embedded_parse_speed.c -o /tmp/eps_so -lpython3.11
 *   gcc -O2 $I bench/embedded_parse_speed.c -o /tmp/eps_static -no-pie $A/libpython3.11.a \
 *       -lm -lz -lexpat -Wl,--export-dynamic
 *   gcc -O2 $I bench/embedded_parse_speed.c -o /tmp/eps_pic $A/libpython3.11-pic.a -lm -lz -lexpat
 *   /tmp/eps_so /tmp/refs.marshal      # and the others, alternating; then the same loop in
 *   python3 -I -S -c "$(/tmp/eps_so --print-loop)" /tmp/refs.marshal
 *
 * Prints the best of five passes over the sources, in milliseconds per source. */
#include <Python.h>

#include <stdio.h>
#include <string.h>

static const char* const k_loop =
    "import _symtable, gc, marshal, sys, time\n"
    "sources = marshal.load(open(sys.argv[1], 'rb'))\n"
    "best = 1e9\n"
    "for _ in range(5):\n"
    "    gc.disable()\n"
    "    start = time.perf_counter()\n"
    "    for source in sources:\n"
    "        _symtable.symtable(source, '<unknown>', 'exec')\n"
    "    best = min(best, time.perf_counter() - start)\n"
    "    gc.enable()\n"
    "print(f'{len(sources)} sources: {best / len(sources) * 1e3:.4f} ms each (best of 5)')\n";

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--print-loop") == 0) {
    fputs(k_loop, stdout);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: %s SOURCES.marshal | --print-loop\n", argv[0]);
    return 2;
  }
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.site_import = 0;
  PyStatus status = PyConfig_SetBytesArgv(&config, argc, argv);
  if (PyStatus_Exception(status)) {
    return 1;
  }
  status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) {
    return 1;
  }
  const int failed = PyRun_SimpleString(k_loop);
  return Py_FinalizeEx() < 0 || failed != 0 ? 1 : 0;
}

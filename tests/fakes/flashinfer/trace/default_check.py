"""TEST DOUBLE for ``flashinfer.trace.default_check``: the dumped ``check`` source
imports it (so ``check`` is not standalone, dumper.md §1.7); never used by the fakes."""


def default_check(reference_outputs, actual_outputs, **kwargs):  # pragma: no cover
    raise NotImplementedError("fake flashinfer: default_check needs torch and a GPU")

"""TEST DOUBLE of SGLang (not SGLang); see tests/fakes/README.md."""

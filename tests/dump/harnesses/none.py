"""fib dump test harness: imports the FlashInfer TEST DOUBLE but calls no traced API."""
import flashinfer  # noqa: F401

print("no traced call")

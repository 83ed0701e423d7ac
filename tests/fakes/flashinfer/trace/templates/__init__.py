"""TEST DOUBLE: trace templates for the fake FlashInfer APIs (not FlashInfer)."""

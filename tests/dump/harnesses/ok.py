"""fib dump test harness (uses the FlashInfer TEST DOUBLE from tests/fakes).

Expected dumps (dumper.md §1.4/§1.5): rmsnorm_h4096 (called twice, one file),
rmsnorm_h2048, fused_add_rmsnorm_h4096, gemma_rmsnorm_h1024 + rmsnorm_h1024
(nested traced call), gemm_bf16_N8192_K4096, bmm_bf16_N128_K64 (called with
batch 2 and batch 4: abbrev="" axis -> same name, first call wins, value 2).
"""
import flashinfer
from flashinfer import tensor

x = tensor(8, 4096)
w = tensor(4096)
flashinfer.rmsnorm(x, w)
flashinfer.norm.rmsnorm(tensor(16, 4096), w)          # same name -> deduplicated
flashinfer.rmsnorm(tensor(8, 2048), tensor(2048))
flashinfer.fused_add_rmsnorm(x, tensor(8, 4096), w)
flashinfer.norm.gemma_rmsnorm(tensor(8, 1024), tensor(1024))  # dumps 2 names
flashinfer.gemm.mm_bf16(x, tensor(4096, 8192))
flashinfer.gemm.bmm_bf16(tensor(2, 8, 64), tensor(2, 64, 128))
flashinfer.gemm.bmm_bf16(tensor(4, 8, 64), tensor(4, 64, 128))  # collides, not written
print("ok: 8 traced calls")

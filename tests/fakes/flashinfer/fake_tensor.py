"""A tiny stand-in for ``torch.Tensor`` used by the FlashInfer/SGLang test doubles.

TEST DOUBLE: this is not torch. It carries a shape and a dtype name and nothing
else (no data, no device), which is all the trace dumper reads from a tensor.
"""

from __future__ import annotations

from typing import Iterable, Tuple

# The dtype names torch prints without the "torch." prefix.
KNOWN_DTYPES = (
    "float32", "float16", "bfloat16", "float64",
    "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn_x2",
    "int64", "int32", "int16", "int8", "uint8", "uint32", "bool",
)


class Tensor:
    """Shape + dtype only. ``shape`` is a tuple of ints, ``dtype`` a string like "bfloat16"."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Iterable[int], dtype: str = "bfloat16") -> None:
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"negative dimension in shape {shape}")
        dtype = str(dtype)
        if dtype.startswith("torch."):
            dtype = dtype[len("torch."):]
        if dtype not in KNOWN_DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}")
        self.shape: Tuple[int, ...] = shape
        self.dtype: str = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def size(self, i=None):
        return self.shape if i is None else self.shape[i]

    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape}, dtype={self.dtype})"


def tensor(*shape: int, dtype: str = "bfloat16") -> Tensor:
    """``tensor(4, 3072)`` -> a bfloat16 Tensor of shape (4, 3072)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return Tensor(shape, dtype)


def empty_like(t: Tensor) -> Tensor:
    return Tensor(t.shape, t.dtype)

#!/usr/bin/env python3
"""Writes the sampling evaluator's fixture dataset: one top-k/top-p sampling definition over a
vocabulary of 64 tokens (the reference samples row by row, as FlashInfer's does), two workloads,
and one solution per outcome.

    python3 tests/run/make_sampling_fixture.py DIR

Workloads: 44444444 has random probabilities (rows of a softmax, which fib gives new orders on
every timed call) for 3 rows, with top_k and top_p per row from a blob; 55555555 reads everything
from a blob: 2 rows of decaying probabilities.

Solutions (author `fixture`):
  py_sampler         top-k, renormalize, top-p, torch.multinomial, vectorized   → PASSED
  py_dps_sampler     the same, destination-passing style                      → PASSED
  py_argmax          the most likely token of the filtered row, always         → INCORRECT_NUMERICAL
                     (every sample in the support, but the same on every call)
  py_sharpened       samples of the filtered rows raised to the 4th power (a temperature
                     mistake)                                                → INCORRECT_NUMERICAL
                     (every sample in the support, but a distribution far from the expected)
  py_ignores_top_k   top-p only                                               → INCORRECT_NUMERICAL
                     (samples outside the top-k support)
  py_reuses_samples  the first samples it drew for each shape, again           → INCORRECT_NUMERICAL
"""
import json
import os
import struct
import sys

NAME = "top_k_top_p_sampling_from_probs_v64"
VOCAB = 64

REFERENCE = '''import torch

@torch.no_grad()
def run(probs, top_k, top_p):
    batch_size, vocab_size = probs.shape
    probs = probs.to(torch.float32)
    samples = torch.empty(batch_size, dtype=torch.int64, device=probs.device)
    for i in range(batch_size):
        row = probs[i]
        k = int(top_k[i].item())
        p = float(top_p[i].item())
        if 0 < k < vocab_size:
            keep = torch.argsort(row, descending=True)[:k]
            filtered = torch.zeros_like(row)
            filtered[keep] = row[keep]
            row = filtered / filtered.sum()
        if p <= 0.0:
            samples[i] = torch.argmax(row)
            continue
        if p < 1.0:
            vals, idx = torch.sort(row, descending=True)
            cdf = torch.cumsum(vals, dim=0)
            to_remove = cdf > p
            to_remove[1:] = to_remove[:-1].clone()
            to_remove[0] = False
            filtered = torch.zeros_like(row)
            filtered[idx[~to_remove]] = row[idx[~to_remove]]
            row = filtered / filtered.sum()
        samples[i] = torch.multinomial(row, 1).squeeze(0)
    return samples
'''

DEFINITION = {
    "name": NAME, "op_type": "sampling",
    "description": "Top-k then top-p sampling from probabilities over 64 tokens.",
    "tags": ["status:verified"],
    "axes": {"batch_size": {"type": "var", "description": "rows"},
             "vocab_size": {"type": "const", "value": VOCAB, "description": "tokens"}},
    "inputs": {"probs": {"shape": ["batch_size", "vocab_size"], "dtype": "float32"},
               "top_k": {"shape": ["batch_size"], "dtype": "int32"},
               "top_p": {"shape": ["batch_size"], "dtype": "float32"}},
    "outputs": {"samples": {"shape": ["batch_size"], "dtype": "int64"}},
    "reference": REFERENCE,
}

BLOB = "blob/workloads/sampling/%s/" % NAME


def blob_input(file, key):
    return {"type": "safetensors", "path": BLOB + file, "tensor_key": key}


WORKLOADS = [
    {"definition": NAME, "solution": None, "evaluation": None,
     "workload": {"uuid": "44444444-dddd-4000-8000-000000000004", "axes": {"batch_size": 3},
                  "inputs": {"probs": {"type": "random"},
                             "top_k": blob_input("w4.safetensors", "top_k"),
                             "top_p": blob_input("w4.safetensors", "top_p")}}},
    {"definition": NAME, "solution": None, "evaluation": None,
     "workload": {"uuid": "55555555-eeee-4000-8000-000000000005", "axes": {"batch_size": 2},
                  "inputs": {"probs": blob_input("w5.safetensors", "probs"),
                             "top_k": blob_input("w5.safetensors", "top_k"),
                             "top_p": blob_input("w5.safetensors", "top_p")}}},
]

FILTERED = '''import torch

def filtered(probs, top_k, top_p):
    """The rows after top-k (renormalized) and then top-p, as the reference filters them."""
    probs = probs.to(torch.float32)
    vocab = probs.shape[-1]
    ranked, order = torch.sort(probs, dim=-1, descending=True)
    k = top_k.to(torch.int64).clamp(min=0)
    k = torch.where((k > 0) & (k < vocab), k, torch.full_like(k, vocab))
    positions = torch.arange(vocab, device=probs.device).expand_as(ranked)
    ranked = torch.where(positions < k.unsqueeze(1), ranked, torch.zeros_like(ranked))
    ranked = ranked / ranked.sum(dim=-1, keepdim=True)
    before = torch.cumsum(ranked, dim=-1) - ranked
    p = top_p.to(torch.float32).unsqueeze(1)
    keep = (before <= p) | (p >= 1.0)
    keep[:, 0] = True
    ranked = torch.where(keep, ranked, torch.zeros_like(ranked))
    out = torch.zeros_like(probs).scatter_(1, order, ranked)
    return out / out.sum(dim=-1, keepdim=True)
'''

SOLUTIONS = {
    "py_sampler": (False, FILTERED + '''
def run(probs, top_k, top_p):
    return torch.multinomial(filtered(probs, top_k, top_p), 1).squeeze(1)
'''),
    "py_dps_sampler": (True, FILTERED + '''
def run(probs, top_k, top_p, samples):
    samples.copy_(torch.multinomial(filtered(probs, top_k, top_p), 1).squeeze(1))
'''),
    "py_argmax": (False, FILTERED + '''
def run(probs, top_k, top_p):
    return filtered(probs, top_k, top_p).argmax(dim=-1)
'''),
    "py_sharpened": (False, FILTERED + '''
def run(probs, top_k, top_p):
    return torch.multinomial(filtered(probs, top_k, top_p) ** 4, 1).squeeze(1)
'''),
    "py_ignores_top_k": (False, FILTERED + '''
def run(probs, top_k, top_p):
    return torch.multinomial(filtered(probs, torch.zeros_like(top_k), top_p), 1).squeeze(1)
'''),
    "py_reuses_samples": (False, FILTERED + '''
_first = {}

def run(probs, top_k, top_p):
    key = tuple(probs.shape)
    if key not in _first:
        _first[key] = torch.multinomial(filtered(probs, top_k, top_p), 1).squeeze(1)
    return _first[key].clone()
'''),
}


def safetensors_bytes(tensors):
    """A safetensors file of [(key, dtype code, shape, values)], written by hand."""
    header, data = {}, b""
    for key, dtype, shape, values in tensors:
        packed = struct.pack("<%d%s" % (len(values), {"F32": "f", "I32": "i"}[dtype]), *values)
        header[key] = {"dtype": dtype, "shape": shape,
                       "data_offsets": [len(data), len(data) + len(packed)]}
        data += packed
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def decaying_row(ratio, shift):
    """Probabilities falling by `ratio` from token to token, the order rotated by `shift`."""
    raw = [ratio ** i for i in range(VOCAB)]
    total = sum(raw)
    row = [v / total for v in raw]
    return row[shift:] + row[:shift]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def main():
    root = sys.argv[1]
    write(os.path.join(root, "definitions", "sampling", NAME + ".json"),
          json.dumps(DEFINITION, indent=2) + "\n")
    write(os.path.join(root, "workloads", "sampling", NAME + ".jsonl"),
          "".join(json.dumps(w) + "\n" for w in WORKLOADS))
    write(os.path.join(root, BLOB, "w4.safetensors"),
          safetensors_bytes([("top_k", "I32", [3], [8, 0, 3]),
                             ("top_p", "F32", [3], [0.9, 0.5, 1.0])]))
    write(os.path.join(root, BLOB, "w5.safetensors"),
          safetensors_bytes([("probs", "F32", [2, VOCAB],
                              decaying_row(0.8, 5) + decaying_row(0.95, 40)),
                             ("top_k", "I32", [2], [5, VOCAB]),
                             ("top_p", "F32", [2], [1.0, 0.7])]))
    for name, (dps, source) in SOLUTIONS.items():
        solution = {
            "name": name, "definition": NAME, "author": "fixture",
            "spec": {"language": "python", "target_hardware": ["cpu"],
                     "entry_point": "main.py::run", "destination_passing_style": dps,
                     "binding": None},
            "sources": [{"path": "main.py", "content": source}],
        }
        write(os.path.join(root, "solutions", "fixture", "sampling", NAME, name + ".json"),
              json.dumps(solution, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Small definitions and dataset helpers for the `fib stage` / `fib tag` golden cases.

Setup and check scripts run with their case directory as the working directory; they import this
module with `sys.path.insert(0, "../..")`.
"""
import copy
import json
import os

_RMSNORM = {
    "name": "",
    "description": "Root mean square normalization.",
    "op_type": "rmsnorm",
    "tags": ["fi_api:flashinfer.norm.rmsnorm", "status:verified"],
    "axes": {
        "batch_size": {"type": "var"},
        "hidden_size": {"type": "const", "value": 128},
    },
    "inputs": {
        "hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
        "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"},
    },
    "outputs": {"output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
    "reference": "import torch\n\n\ndef run(hidden_states, weight):\n"
                 "    x = hidden_states.float()\n"
                 "    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)\n"
                 "    return (y * weight.float()).to(hidden_states.dtype)\n",
}


def definition(name, op_type="rmsnorm"):
    """A valid rmsnorm-like definition called `name` under `op_type`."""
    d = copy.deepcopy(_RMSNORM)
    d["name"] = name
    d["op_type"] = op_type
    return d


def write_dump(folder, file_name, document):
    """Writes `document` the way the dumper does: indent 2, ASCII, no trailing newline."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, file_name), "w", encoding="utf-8") as f:
        f.write(json.dumps(document, indent=2))


def write_staged(root, document):
    """Writes `document` into the dataset at definitions/<op_type>/<name>.json."""
    folder = os.path.join(root, "definitions", document["op_type"])
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, document["name"] + ".json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def tree(root):
    """Every path below `root` (links listed, not followed), relative and sorted."""
    out = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            out.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(out)

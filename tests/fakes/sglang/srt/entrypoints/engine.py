"""TEST DOUBLE of ``sglang.srt.entrypoints.engine.Engine`` - NOT SGLang.

Enough of the offline Engine API for the harness ``fib dump --sglang`` generates:

    engine = Engine(model_path=..., attention_backend="flashinfer", disable_cuda_graph=True,
                    mem_fraction_static=0.5, tp_size=2, ep_size=1, page_size=16,
                    disable_radix_cache=True, log_level="warning")
    out = engine.generate(["The capital of France is"], {"temperature": 0.0, "max_new_tokens": 4})
    engine.shutdown()

Every keyword argument must be a field of the fake ``ServerArgs`` (``server_args.py``), as in
SGLang, where an unknown one is a ``TypeError``.

``generate`` touches the (fake) FlashInfer traced APIs only when
``attention_backend == "flashinfer"`` **and** ``disable_cuda_graph`` is true:
other backends bypass FlashInfer, and with CUDA graphs the decode steps are graph
replays that run no Python (dumper.md §1.3) - so nothing is dumped in those cases.
(The real engine would still dump what it calls during graph capture; this fake
simply calls nothing, which is the "nothing dumped" case fib must diagnose.)

tp_size == 1 runs the model in this process; tp_size > 1 starts one process per
rank (``python -m sglang.srt.fake_worker``), each inheriting ``os.environ``, so
every rank dumps the same names into the same directory. Shapes of the
tensor-parallel linear layers are divided by tp_size (see fake_worker.gemm_shapes).
Unknown model ids raise ValueError (see fake_models). Nothing is printed on stdout;
at log_level "info"/"debug" one line goes to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict, List, Union

from sglang.srt import fake_worker
from sglang.srt.fake_models import load_config
from sglang.srt.server_args import ServerArgs

_FAKE_CONTINUATIONS = [" Paris.", " a city.", " 42.", " blue."]


class Engine:
    def __init__(self, model_path: str, attention_backend: str = "triton",
                 disable_cuda_graph: bool = False, mem_fraction_static: float = 0.9,
                 tp_size: int = 1, ep_size: int = 1, page_size: int = 1,
                 disable_radix_cache: bool = False, log_level: str = "info", **kwargs: Any) -> None:
        # Like SGLang: every keyword argument is a ServerArgs field (TypeError otherwise).
        ServerArgs(model_path=model_path, attention_backend=attention_backend,
                   disable_cuda_graph=disable_cuda_graph, mem_fraction_static=mem_fraction_static,
                   tp_size=tp_size, ep_size=ep_size, page_size=page_size,
                   disable_radix_cache=disable_radix_cache, log_level=log_level, **kwargs)
        if tp_size < 1 or ep_size < 1 or page_size < 1:
            raise ValueError("tp_size, ep_size and page_size must be >= 1")
        if not 0.0 < float(mem_fraction_static) <= 1.0:
            raise ValueError(f"mem_fraction_static must be in (0, 1], got {mem_fraction_static}")
        self.config = load_config(model_path)
        if self.config["num_attention_heads"] % tp_size != 0:
            raise ValueError(
                f"num_attention_heads ({self.config['num_attention_heads']}) must be divisible "
                f"by tp_size ({tp_size})")
        self.model_path = model_path
        self.attention_backend = attention_backend
        self.disable_cuda_graph = bool(disable_cuda_graph)
        self.tp_size = int(tp_size)
        self.ep_size = int(ep_size)
        self.page_size = int(page_size)
        self.log_level = log_level
        self.server_args = dict(kwargs, model_path=model_path, attention_backend=attention_backend,
                                disable_cuda_graph=disable_cuda_graph, tp_size=tp_size,
                                ep_size=ep_size, page_size=page_size,
                                mem_fraction_static=mem_fraction_static,
                                disable_radix_cache=disable_radix_cache, log_level=log_level)
        self._closed = False
        self._log(f"[fake sglang] Load weight end. model={model_path} tp_size={tp_size} "
                  f"attention_backend={attention_backend} cuda_graph={not self.disable_cuda_graph}")

    def _log(self, msg: str) -> None:
        if str(self.log_level).lower() in ("info", "debug"):
            print(msg, file=sys.stderr, flush=True)

    def _uses_flashinfer_python_path(self) -> bool:
        return self.attention_backend == "flashinfer" and self.disable_cuda_graph

    def _run_model(self, steps: List[int]) -> None:
        if self.tp_size == 1:
            fake_worker.run_forward(self.config, 1, steps)
            return
        job = json.dumps({"config": self.config, "tp_size": self.tp_size, "steps": steps})
        procs = [subprocess.Popen([sys.executable, "-m", "sglang.srt.fake_worker", job])
                 for _ in range(self.tp_size)]
        codes = [p.wait() for p in procs]
        bad = [(rank, c) for rank, c in enumerate(codes) if c != 0]
        if bad:
            raise RuntimeError(f"fake sglang: TP rank(s) failed: {bad}")

    def generate(self, prompt: Union[str, List[str]] = None,
                 sampling_params: Union[Dict[str, Any], List[Dict[str, Any]], None] = None,
                 **kwargs: Any):
        if self._closed:
            raise RuntimeError("Engine has been shut down")
        single = isinstance(prompt, str)
        prompts = [prompt] if single else list(prompt or [])
        params = sampling_params if isinstance(sampling_params, dict) else (
            (sampling_params or [{}])[0])
        max_new = int(params.get("max_new_tokens", 16))
        prefill_tokens = sum(len(p.split()) + 1 for p in prompts) or 1
        steps = [prefill_tokens] + [len(prompts)] * max(max_new - 1, 0)
        if self._uses_flashinfer_python_path():
            self._run_model(steps)
        outs = [{"text": _FAKE_CONTINUATIONS[i % len(_FAKE_CONTINUATIONS)],
                 "meta_info": {"prompt_tokens": len(p.split()) + 1,
                               "completion_tokens": min(max_new, 2)}}
                for i, p in enumerate(prompts)]
        return outs[0] if single else outs

    def shutdown(self) -> None:
        self._closed = True

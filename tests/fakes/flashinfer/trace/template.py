"""TEST DOUBLE of ``flashinfer/trace/template.py`` (FlashInfer's trace dumper).

Not FlashInfer. Reproduces the behaviour described in ``shared/spec/dumper.md``
§1.3-§1.7 closely enough for ``fib dump`` / ``fib normalize`` / ``fib stage`` tests:

* §1.2  ``FLASHINFER_TRACE_DUMP`` / ``FLASHINFER_TRACE_DUMP_DIR`` are read from
  ``os.environ`` at every call; on = anything but "" or "0"; there is **no default
  directory** (DIR unset -> the dict is built, nothing is written, nothing deduped).
* §1.3  the dict is built and written **before** the kernel runs; the write is a
  plain open-truncate-write (``Path.write_text``), not atomic; the directory is
  created with parents; exceptions are turned into a once-per-(api, type) warning.
* §1.4  ``name`` = name_prefix (or op_type) + ``_<abbrev><value>`` for every
  resolved Const axis in template order; ``abbrev=None`` -> axis name,
  ``abbrev=""`` -> omitted; unresolved consts are dropped from the name and
  emitted without ``value``.
* §1.5  in-process dedup set ``_DUMPED_NAMES`` keyed by name only, filled only
  after a successful auto-dump write; explicit ``fi_trace(save_dir=...)`` bypasses it.
* §1.6  ``json.dumps(result, indent=2)`` (ensure_ascii, no trailing newline).
* §1.7  key order name, description, op_type, tags, axes, [constraints], inputs,
  outputs, [reference], [check], [init]; tensor entries shape, dtype, [optional],
  [param], [description]; axis values read positionally from the first required
  tensor input that names the axis (§1.9: no layout/rank check beyond index < ndim).
"""

from __future__ import annotations

import inspect
import json
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

# Names written by auto-dump in this process (dumper.md §1.5).
_DUMPED_NAMES: set = set()

# (function, template, label) filled at decoration time (dumper.md §1.1).
_TRACE_REGISTRY: List[tuple] = []

REFERENCE_PREAMBLE = (
    "from __future__ import annotations\n"
    "import math\n"
    "import torch\n"
    "import torch.nn.functional as F\n"
)
INIT_PREAMBLE = "from __future__ import annotations\nimport math\nimport torch\n"


class Var:
    def __init__(self, description: Optional[str] = None) -> None:
        self.description = description


class Const:
    def __init__(self, abbrev: Optional[str] = None, value: Optional[int] = None,
                 description: Optional[str] = None) -> None:
        self.abbrev = abbrev
        self.value = value
        self.description = description


class Tensor:
    """Template description of a tensor input/output (not a tensor)."""

    def __init__(self, dim_names, param: Optional[str] = None, tuple_idx: Optional[int] = None,
                 dtype: Optional[str] = None, dtype_from: Optional[str] = None,
                 optional: bool = False, description: Optional[str] = None) -> None:
        self.dim_names = list(dim_names)
        self.param = param
        self.tuple_idx = tuple_idx
        self.dtype = dtype
        self.dtype_from = dtype_from
        self.optional = optional
        self.description = description


class Scalar:
    def __init__(self, dtype: str = "float32", param: Optional[str] = None,
                 optional: bool = False, description: Optional[str] = None) -> None:
        self.dtype = dtype
        self.param = param
        self.optional = optional
        self.description = description


def _dump_enabled() -> bool:
    return os.environ.get("FLASHINFER_TRACE_DUMP", "") not in ("", "0")


def _dump_dir() -> Optional[str]:
    d = os.environ.get("FLASHINFER_TRACE_DUMP_DIR")
    return d if d else None


def _dtype_name(value: Any) -> Optional[str]:
    dt = getattr(value, "dtype", None)
    if dt is None:
        return None
    s = str(dt)
    return s[len("torch."):] if s.startswith("torch.") else s


def _get_source(fn: Optional[Callable]) -> Optional[str]:
    if fn is None:
        return None
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return None  # §1.3: rendering failures are swallowed, the key is absent


class TraceTemplate:
    def __init__(self, *, op_type: str, name_prefix: Optional[str] = None, description: str = "",
                 axes: Dict[str, Any], inputs: Dict[str, Any], outputs: Dict[str, Any],
                 constraints: Optional[List[str]] = None, tags: Optional[List[str]] = None,
                 reference: Optional[Callable] = None,
                 reference_dependencies: Optional[List[Callable]] = None,
                 check: Optional[Callable] = None, init: Optional[Callable] = None,
                 init_dependencies: Optional[List[Callable]] = None) -> None:
        self.op_type = op_type
        self.name_prefix = name_prefix
        self.description = description
        self.axes = OrderedDict(axes)
        self.inputs = OrderedDict(inputs)
        self.outputs = OrderedDict(outputs)
        self.constraints = list(constraints or [])
        self.tags = list(tags or [])
        self.reference = reference
        self.reference_dependencies = list(reference_dependencies or [])
        if check is None:
            # Since 2026-05-29 every template has a check (dumper.md §1.8 v3).
            from flashinfer.trace.checks import standard_check
            check = standard_check
        self.check = check
        self.init = init
        self.init_dependencies = list(init_dependencies or [])

    # ---- §1.4 -----------------------------------------------------------
    def definition_name(self, axis_values: Dict[str, int]) -> str:
        name = self.name_prefix or self.op_type
        for axis, spec in self.axes.items():
            if not isinstance(spec, Const) or axis not in axis_values:
                continue
            abbrev = axis if spec.abbrev is None else spec.abbrev
            if abbrev == "":
                continue
            name += f"_{abbrev}{axis_values[axis]}"
        return name

    # ---- §1.9: positional extraction ------------------------------------
    def _lookup(self, spec, key: str, kwargs: Dict[str, Any]):
        value = kwargs.get(spec.param or key)
        if spec.tuple_idx is not None and isinstance(value, (tuple, list)):
            value = value[spec.tuple_idx] if spec.tuple_idx < len(value) else None
        return value

    def extract_axes(self, kwargs: Dict[str, Any]) -> Dict[str, int]:
        values: Dict[str, int] = {}
        for axis, spec in self.axes.items():
            if isinstance(spec, Const) and spec.value is not None:
                values[axis] = int(spec.value)
                continue
            for key, ispec in self.inputs.items():
                if not isinstance(ispec, Tensor) or ispec.optional or axis not in ispec.dim_names:
                    continue
                t = self._lookup(ispec, key, kwargs)
                shape = getattr(t, "shape", None)
                if shape is None:
                    continue
                idx = ispec.dim_names.index(axis)
                if idx < len(shape):
                    values[axis] = int(shape[idx])
                    break
        return values

    # ---- rendering --------------------------------------------------------
    def _render_reference(self) -> Optional[str]:
        src = _get_source(self.reference)
        if src is None:
            return None
        out = REFERENCE_PREAMBLE + "\n"
        deps = [_get_source(d) for d in self.reference_dependencies]
        if deps and all(d is not None for d in deps):
            out += "# ----- reference dependencies -----\n" + "\n\n".join(deps) + "\n"
            out += "# ----- reference -----\n"
        return out + src

    def _render_init(self) -> Optional[str]:
        src = _get_source(self.init)
        if src is None:
            return None
        helpers_path = Path(__file__).with_name("templates") / "_init_helpers.py"
        try:
            helpers = helpers_path.read_text()
        except OSError:
            return None
        out = INIT_PREAMBLE + "\n# ----- shared init helpers -----\n" + helpers + "\n"
        deps = [_get_source(d) for d in self.init_dependencies]
        if deps and all(d is not None for d in deps):
            out += "# ----- init dependencies -----\n" + "\n\n".join(deps) + "\n"
        return out + "# ----- init -----\n" + src

    def build(self, kwargs: Dict[str, Any], fi_api: str, name: Optional[str] = None) -> "OrderedDict":
        axis_values = self.extract_axes(kwargs)
        result: "OrderedDict[str, Any]" = OrderedDict()
        result["name"] = name or self.definition_name(axis_values)
        result["description"] = self.description
        result["op_type"] = self.op_type
        result["tags"] = [f"fi_api:{fi_api}"] + self.tags

        axes = OrderedDict()
        for axis, spec in self.axes.items():
            entry = OrderedDict()
            if isinstance(spec, Const):
                entry["type"] = "const"
                if axis in axis_values:
                    entry["value"] = axis_values[axis]
            else:
                entry["type"] = "var"
            if spec.description:
                entry["description"] = spec.description
            axes[axis] = entry
        result["axes"] = axes
        if self.constraints:
            result["constraints"] = list(self.constraints)

        inputs = OrderedDict()
        for key, spec in self.inputs.items():
            entry = OrderedDict()
            if isinstance(spec, Scalar):
                entry["shape"] = None
                entry["dtype"] = spec.dtype  # the declared string, never the runtime value
            else:
                entry["shape"] = list(spec.dim_names)
                dt = _dtype_name(self._lookup(spec, key, kwargs))
                if dt is None:
                    dt = spec.dtype if (spec.optional and spec.dtype) else "unknown"
                entry["dtype"] = dt
            if spec.optional:
                entry["optional"] = True
            if spec.description:
                entry["description"] = spec.description
            inputs[key] = entry
        result["inputs"] = inputs

        outputs = OrderedDict()
        for key, spec in self.outputs.items():
            entry = OrderedDict()
            entry["shape"] = list(spec.dim_names)
            dt = None
            if spec.dtype_from:
                dt = _dtype_name(kwargs.get(spec.dtype_from))
            if dt is None and spec.dtype:
                dt = spec.dtype
            if dt is None:
                # auto-inference: first input tensor sharing any axis name (§1.7)
                for ikey, ispec in self.inputs.items():
                    if isinstance(ispec, Tensor) and set(ispec.dim_names) & set(spec.dim_names):
                        dt = inputs[ikey]["dtype"]
                        break
            entry["dtype"] = dt or "unknown"
            if spec.optional:
                entry["optional"] = True
            if spec.param:
                entry["param"] = spec.param
            if spec.description:
                entry["description"] = spec.description
            outputs[key] = entry
        result["outputs"] = outputs

        for key, render in (("reference", self._render_reference),
                            ("check", lambda: _get_source(self.check)),
                            ("init", self._render_init)):
            text = render()
            if text is not None:
                result[key] = text
        return result


def write_definition(result: Dict[str, Any], save_dir: str) -> Path:
    """Plain, non-atomic write (§1.3, §1.6)."""
    d = Path(save_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{result['name']}.json"
    path.write_text(json.dumps(result, indent=2))
    return path


def make_fi_trace(template_or_dispatch, fi_api: str, signature: inspect.Signature):
    """The per-API ``fi_trace`` function (attached as ``api.fi_trace``)."""

    def fi_trace(*args, save_dir: Optional[str] = None, name: Optional[str] = None,
                 _auto_dump: bool = False, **kwargs):
        if _auto_dump:
            # auto-dump: bind to the original signature, defaults applied (§1.3 step 1)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            call_kwargs = dict(bound.arguments)
        else:
            # explicit call: keywords are taken as given (API parameter names expected;
            # a definition input name such as hidden_states= is simply not found and
            # comes out as dtype "unknown", dumper.md §1.3 example)
            known = {k: v for k, v in kwargs.items() if k in signature.parameters}
            bound = signature.bind_partial(*args, **known)
            bound.apply_defaults()
            call_kwargs = dict(bound.arguments)
            call_kwargs.update({k: v for k, v in kwargs.items() if k not in signature.parameters})
        template = template_or_dispatch
        if not isinstance(template, TraceTemplate):
            template = template_or_dispatch(**call_kwargs)  # dispatch callable
            if template is None:
                return {}
        result = template.build(call_kwargs, fi_api, name=name)
        if _auto_dump:
            # dedup check happens after the whole dict was built (§1.3 step 2)
            out_dir = _dump_dir()
            if out_dir is not None and result["name"] not in _DUMPED_NAMES:
                write_definition(result, out_dir)
                _DUMPED_NAMES.add(result["name"])
        else:
            out_dir = save_dir or _dump_dir()
            if out_dir is not None:
                write_definition(result, out_dir)  # explicit: no dedup, always overwrites
        return result

    return fi_trace

"""A disk cache of AOT autograd's traced and partitioned graphs.

Tracing the joint graph on fake tensors and partitioning it is most of a compiled training
step's first call when the inductor cache already holds the kernels. An entry keeps what
compiling needs afterwards: the forward and backward GraphModules (pickled: their graphs and
state), each node's ``meta["val"]`` as tensor metadata (shape, stride, dtype, device: the
fake tensors have no data to pickle, and the code generator reads only those), and the
output layout. Entries are keyed by the captured graph's code, the inputs' metadata, grad
mode, autocast state and the default dtype, the partition function, the decompositions and
the torch sources (their paths, sizes and modification times, so an edited checkout traces
anew). Only static-shape graphs without ``get_attr`` constants, submodules or calls of
functions from outside torch and the standard library are cached. Files are written under a
temporary name and moved into place, as the inductor's libraries are; an unreadable entry is
traced again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import threading
from typing import Any

import torch

log = logging.getLogger("torch._functorch")

#: What the cache did in this process (tests read it: "a second process traces nothing").
counters: dict[str, int] = {"hits": 0, "stores": 0, "misses": 0}

#: The format of an entry; a change makes old entries misses.
_FORMAT = 1

_sources: list[str] = []


def _source_fingerprint() -> str:
    """A hash of every torch source file's path, size and modification time (once a process)."""
    if not _sources:
        digest = hashlib.sha256(torch.__version__.encode())
        for root in sorted(torch.__path__):
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith(".py"):
                        stat = os.stat(os.path.join(folder, name))
                        digest.update(f"{folder}/{name}:{stat.st_size}:{stat.st_mtime_ns}\0"
                                      .encode())
        _sources.append(digest.hexdigest())
    return _sources[0]


def _input_key(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return (f"T{tuple(value.shape)}{value.stride()}{value.dtype}{value.device}"
                f"{value.requires_grad}")
    return f"C{type(value).__name__}:{value!r}"


#: Modules whose functions a captured graph may call and still be cached: their behaviour is
#: covered by the source fingerprint (torch) or fixed (the standard library's).
_KNOWN_MODULES = ("torch", "_operator", "operator", "math", "builtins", "functools")


def _known_function(target: Any) -> bool:
    module = getattr(target, "__module__", None) or ""
    return module.split(".")[0] in _KNOWN_MODULES or isinstance(
        getattr(target, "qualname", None), str)  # an operator overload (aten::...)


def cache_key(mod: Any, args: tuple[Any, ...], partition_fn: Any,
              decompositions: dict | None) -> str | None:
    """The key of ``mod`` (a captured GraphModule) compiled for ``args``, or ``None`` when it
    cannot be cached (not a GraphModule, constants in the graph, symbolic sizes)."""
    graph = getattr(mod, "graph", None)
    code = getattr(mod, "code", None)
    if graph is None or not isinstance(code, str):
        return None
    for node in graph.nodes:
        if node.op in ("get_attr", "call_module"):
            return None  # values (constants, submodules' settings) the code does not show
        if node.op == "call_function" and not _known_function(node.target):
            return None  # a function of the program's: its body may change between runs
    for a in args:
        if isinstance(a, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in a.shape):
            return None
    devices = {"cpu"} | {a.device.type for a in args if isinstance(a, torch.Tensor)}
    parts_ambient = [str(torch.get_default_dtype())]
    for device in sorted(devices):  # autocast changes what the trace records
        try:
            parts_ambient.append(f"{device}:{torch.is_autocast_enabled(device)}:"
                                 f"{torch.get_autocast_dtype(device)}")
        except (RuntimeError, ValueError):  # a device type without autocast
            parts_ambient.append(f"{device}:-")
    partitioner = f"{getattr(partition_fn, '__module__', '')}." \
                  f"{getattr(partition_fn, '__qualname__', '')}"
    parts = [str(_FORMAT), _source_fingerprint(), code, *map(_input_key, args),
             str(torch.is_grad_enabled()), *parts_ambient, partitioner,
             repr(sorted(str(k) for k in (decompositions or {})))]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _path(key: str) -> str:
    from torch._inductor import config

    return os.path.join(config.resolved_cache_dir(), "aot", key[:2], key + ".pkl")


def _encode_val(value: Any) -> Any:
    """``meta["val"]`` as picklable metadata; raises ``TypeError`` on a symbolic value."""
    if isinstance(value, torch.Tensor):
        if any(isinstance(s, torch.SymInt) for s in (*value.shape, *value.stride())):
            raise TypeError("symbolic sizes")
        return ("tensor", tuple(value.shape), tuple(value.stride()), str(value.dtype),
                str(value.device), bool(value.requires_grad))
    if isinstance(value, (list, tuple)):
        return ("seq", type(value) is list, [_encode_val(v) for v in value])
    if isinstance(value, torch.SymInt):
        raise TypeError("symbolic value")
    if value is None or isinstance(value, (bool, int, float, str)):
        return ("value", value)
    raise TypeError(f"meta value of type {type(value).__name__}")


_DTYPES: dict[str, Any] = {}


def _decode_val(value: Any, mode: Any) -> Any:
    from torch._subclasses.fake_tensor import FakeTensor, _meta_storage

    kind = value[0]
    if kind == "tensor":
        _, shape, stride, dtype, device, requires_grad = value
        if not _DTYPES:
            _DTYPES.update({str(d): d for d in vars(torch).values() if isinstance(d, torch.dtype)})
        torch_dtype = _DTYPES[dtype]
        # built as the mode's from_tensor builds one (a meta storage of the extent's bytes):
        # no operator runs, which made loading an entry cost as much as a third of tracing
        extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
        fake = FakeTensor._make(_meta_storage(extent * torch_dtype.itemsize), tuple(shape),
                                tuple(stride), 0, torch_dtype, torch.device(device))
        fake.fake_mode = mode
        if requires_grad:
            fake._requires_grad = True
        return fake
    if kind == "seq":
        items = [_decode_val(v, mode) for v in value[2]]
        return items if value[1] else tuple(items)
    return value[1]


def _vals_of(gm: Any) -> list[Any]:
    return [_encode_val(node.meta["val"]) if "val" in node.meta else ("absent",)
            for node in gm.graph.nodes]


def load(key: str) -> tuple[Any, ...] | None:
    """The traced entry stored under ``key`` (graphs with their meta values restored), or
    ``None``."""
    path = _path(key)
    try:
        with open(path, "rb") as handle:
            stored = pickle.load(handle)
    except FileNotFoundError:
        counters["misses"] += 1
        return None
    except Exception as error:  # a damaged or foreign entry: trace again
        log.debug("AOT cache: could not read %s (%s)", path, error)
        counters["misses"] += 1
        return None
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    graphs = []
    for gm, vals in zip(stored["graphs"], stored["vals"]):
        for node, val in zip(gm.graph.nodes, vals):
            if val[0] != "absent":
                node.meta["val"] = _decode_val(val, mode)
        graphs.append(gm)
    counters["hits"] += 1
    return (*graphs, *stored["rest"])


def store(key: str, fw_gm: Any, bw_gm: Any, rest: tuple[Any, ...]) -> None:
    """Keep an entry: the two graphs (before any compiler sees them) and the picklable
    ``rest``. A graph that cannot be pickled is not stored."""
    try:
        data = pickle.dumps({"graphs": [fw_gm, bw_gm], "vals": [_vals_of(fw_gm), _vals_of(bw_gm)],
                             "rest": rest}, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # anything unpicklable in a graph: compile without the cache
        log.debug("AOT cache: entry not stored (%s)", error)
        return
    path = _path(key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        staged = f"{path}.tmp{os.getpid()}.{threading.get_ident()}"
        with open(staged, "wb") as handle:
            handle.write(data)
        os.replace(staged, path)
    except OSError as error:
        log.debug("AOT cache: could not write %s (%s)", path, error)
        return
    counters["stores"] += 1

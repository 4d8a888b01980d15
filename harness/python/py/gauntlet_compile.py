"""Gauntlet's side of torch.compile in a worker (Note [Embedded interpreter] in
harness/python/include/gauntlet/python/interpreter.h; Note [Compile path] in
harness/python/compiled.cpp).

The C++ side hands over a program as Python source (an op case's traced graph written as calls of
`torch.ops.aten`, or a model file as its author wrote it), compiles it here with `torch.compile`
and the backend's dynamo backend, calls it with the case's tensors (the same tensors, not copies)
and judges what it returns. What dynamo and the backend recorded about a program (graphs, graph
breaks with their reasons and user-code locations, recompiles with the guard that failed, the
recompile limit, compile time split into dynamo and the backend) is read back with
`program_stats()`, from dynamo's own records: its counters, its compilation metrics and its
`graph_breaks` log artifact.
"""

import linecache
import logging
import math
import re
import types
import typing

import torch
import torch._dynamo
import torch._inductor.config
from torch._dynamo.utils import (
    clear_compilation_metrics,
    counters,
    get_compilation_metrics,
    set_compilation_metrics_limit,
)

# A worker is one of several on the host (one per device slot): inductor compiles in the worker
# itself, not in a pool of compile processes per worker.
torch._inductor.config.compile_threads = 1
# dynamo keeps the metrics of its last 64 frames; a program is one case, cleared when it is made,
# and one case with many graph breaks or recompiles may have more.
set_compilation_metrics_limit(4096)

# --- graph breaks as dynamo logs them -------------------------------------------------------

_breaks = []  # (reason, "file:line") of the program being compiled, in the order dynamo met them


class _BreakLog(logging.Handler):
    """Keeps dynamo's `graph_breaks` artifact records: "Graph break in user code at FILE:LINE",
    then "Graph Break Reason: ...", a blank line and the short reason."""

    def emit(self, record):
        try:
            text = record.getMessage()
        except Exception:  # a record that cannot format itself says nothing we can use
            return
        lines = text.splitlines()
        if not lines or not lines[0].startswith("Graph break in user code at "):
            return
        where = lines[0][len("Graph break in user code at "):].strip()
        reason = ""
        for i, line in enumerate(lines[1:], 1):
            if line.startswith("Graph Break Reason:"):
                rest = [x.strip() for x in lines[i + 1:] if x.strip()]
                head = line[len("Graph Break Reason:"):].strip()
                # "Encountered graph break when attempting to trace CALL: ...": the short reason
                # follows on its own line.
                reason = rest[0] if rest and head.startswith("Encountered graph break") else head
                break
        _breaks.append((reason or "graph break", where))


_log_ready = False


def _listen():
    global _log_ready
    if _log_ready:
        return
    torch._logging.set_logs(graph_breaks=True)
    handler = _BreakLog()
    for module in ("torch._dynamo.symbolic_convert", "torch._dynamo.convert_frame", "torch._dynamo.exc"):
        log = logging.getLogger(module + ".__graph_breaks")
        log.addHandler(handler)
        log.propagate = False  # recorded here, not printed on the worker's stderr
    _log_ready = True


# --- programs -------------------------------------------------------------------------------

_GLOBALS = {
    "torch": torch,
    "aten": torch.ops.aten,
    "prim": torch.ops.prim,
    "Tensor": torch.Tensor,
    "List": typing.List,
    "Tuple": typing.Tuple,
    "Optional": typing.Optional,
    "Dict": typing.Dict,
    "math": math,
    "inf": math.inf,
    "nan": math.nan,
}


def _script_torch(source):
    """`torch` as a TorchScript source sees it: TorchScript resolves `torch.linear`,
    `torch.relu6` or `torch.upsample_bilinear2d` to the aten op of that name, which Python's torch
    does not have as an attribute. A module with torch's attributes, plus each aten op the source
    names that torch lacks, lets the model zoo's files (TorchScript, docs/models.md) run as the
    Python dynamo traces."""
    missing = [n for n in set(re.findall(r"\btorch\.([A-Za-z_]\w*)", source)) if not hasattr(torch, n)]
    if not missing:
        return torch
    module = types.ModuleType("torch")
    module.__dict__.update(torch.__dict__)
    for name in missing:
        if hasattr(torch.ops.aten, name):
            setattr(module, name, getattr(torch.ops.aten, name))
    return module


class _Program:
    def __init__(self, fn, backend, options, dynamic, records):
        self.fn = fn
        self.backend = backend
        self.compiled = torch.compile(fn, backend=backend, options=options or None, dynamic=dynamic)
        self.breaks = _breaks
        self.calls = 0
        self.records = records  # the backend's own records (Note [Backend records]), or None


class CompileFailed(RuntimeError):
    """The dynamo backend raised while compiling a graph (the case's ERROR, at stage compiled)."""


_programs = {}
_next_handle = [0]


def _backend_callable(name):
    """A dynamo backend by the name it registered (`inductor`, `eager`, a vendor's)."""
    from torch._dynamo.backends.registry import list_backends, lookup_backend

    known = set(list_backends(exclude_tags=()))
    if name not in known:
        raise ValueError(
            f"no dynamo backend named {name!r} (registered: {', '.join(sorted(known))}); a vendor's "
            "backend registers its name when its Python package is imported"
        )
    return lookup_backend(name)


def _import(module):
    """A vendor's module by name, or a .py file by its path (imported once, under its stem)."""
    if not module.endswith(".py"):
        return __import__(module)
    import importlib.util
    import os
    import sys

    name = os.path.splitext(os.path.basename(module))[0]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, module)
    if spec is None or not os.path.isfile(module):
        raise ImportError(f"no Python file {module}")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def compile_program(source, filename, function, backend, module="", options=None, dynamic=None):
    """Compiles `function` of `source` (written as if it were `filename`) with torch.compile and the
    dynamo backend `backend`, after importing `module` (a vendor's package that registers it) when
    one is named. Returns {"handle": n} for run_program, program_stats and drop_program."""
    global _breaks
    records = None
    if module:
        # Note [Backend records] (harness/python/compiled.cpp): a backend module may say what its
        # own compiler did; read from the program's compilation on, as dynamo's records are.
        records = getattr(_import(module), "gauntlet_compile_records", None)
        if records is not None:
            records(reset=True)
    _listen()
    torch._dynamo.reset()  # one program per case: its records are its own
    counters.clear()
    clear_compilation_metrics()
    _breaks = []
    code = compile(source, filename, "exec")
    # dynamo and tracebacks show the program's lines, generated or not
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    scope = dict(_GLOBALS)
    scope["torch"] = _script_torch(source)
    exec(code, scope)
    if function not in scope:
        raise ValueError(f"{filename} defines no function {function}")
    _backend_callable(backend)
    program = _Program(scope[function], backend, options, dynamic, records)
    _next_handle[0] += 1
    _programs[_next_handle[0]] = program
    return {"handle": _next_handle[0]}


def run_program(*tensors, handle):
    """Calls program `handle` with `tensors`; returns its tensors as a tuple."""
    program = _programs[handle]
    program.calls += 1
    try:
        out = program.compiled(*tensors)
    except torch._dynamo.exc.BackendCompilerFailed as e:
        inner = getattr(e, "inner_exception", None) or e
        first = str(inner).strip().splitlines()
        raise CompileFailed(
            f"the backend's compiler raised {type(inner).__name__}: {first[0] if first else ''}"
        ) from None
    if isinstance(out, torch.Tensor):
        return (out,)
    return tuple(_flatten(out))


def _flatten(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _flatten(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _flatten(item)
    elif value is not None:
        raise TypeError(f"the program returned a {type(value).__name__}, not tensors")


def program_stats(handle):
    """What dynamo and the backend recorded for program `handle` since it was compiled."""
    program = _programs[handle]
    metrics = get_compilation_metrics()
    total = sum(m.entire_frame_compile_time_s or 0.0 for m in metrics)
    backend = sum(m.backend_compile_time_s or 0.0 for m in metrics)  # AOT autograd and the compiler
    inductor = sum(m.inductor_compile_time_s or 0.0 for m in metrics)
    recompiles = [m.recompile_reason for m in metrics if m.recompile_reason]
    limit = [
        (m.fail_reason or "").splitlines()[0]
        for m in metrics
        if "recompile limit" in (m.fail_reason or "").lower() or "recompile_limit" in (m.fail_reason or "")
    ]
    limit += [str(r).splitlines()[0] for r in counters["graph_break"] if "recompile limit" in str(r).lower()]
    breaks = []
    for reason, where in program.breaks:
        text = f"{reason} ({where})"
        if text not in breaks:
            breaks.append(text)
    # a break dynamo counted but did not log (the log is off for it) still counts, by its reason
    logged = {r for r, _ in program.breaks}
    for reason in counters["graph_break"]:
        first = str(reason).splitlines()[0]
        if first not in logged and not any(first in b for b in breaks):
            breaks.append(first)
    graphs = int(counters["stats"]["unique_graphs"])
    # Note [Compiler cache]: graphs whose compiled code a compiler's on-disk cache served
    # (inductor's FX graph cache, AOT autograd's cache): a cached compile takes a fraction of a
    # cold one, so compile time is judged only between results compiled alike. None where
    # neither cache was consulted (a backend without one).
    fx, aot = counters["inductor"], counters["aot_autograd"]
    consulted = fx["fxgraph_cache_hit"] + fx["fxgraph_cache_miss"]
    consulted += aot["autograd_cache_hit"] + aot["autograd_cache_miss"]
    cache_hits = max(fx["fxgraph_cache_hit"], aot["autograd_cache_hit"]) if consulted else None
    dynamo_ms = max(0.0, total - backend) * 1000.0
    own = program.records() if program.records is not None else None
    if own is not None:
        # the backend compiles at a graph's first call, after dynamo's clock: all of dynamo's
        # backend time is AOT autograd's, and the compiler's is the backend's own figure
        aot_ms, backend_ms = backend * 1000.0, float(own.get("compile_ms", 0.0))
        breaks += [b for b in own.get("breaks", []) if b not in breaks]
        graphs = int(own.get("regions", graphs))
    elif inductor > 0:
        aot_ms, backend_ms = max(0.0, backend - inductor) * 1000.0, inductor * 1000.0
    else:  # a backend that does not say: AOT autograd (if it uses it) is inside its time
        aot_ms, backend_ms = 0.0, backend * 1000.0
    return {
        "graphs": graphs,
        "frames": len(metrics),
        "graph_breaks": len(breaks),
        "breaks": breaks,
        "recompiles": len(recompiles),
        "recompile_reasons": recompiles,
        "recompile_limit": limit[:1],
        "compile_ms": dynamo_ms + aot_ms + backend_ms,
        "dynamo_ms": dynamo_ms,
        "aot_ms": aot_ms,
        "backend_ms": backend_ms,
        "cache_hits": cache_hits,
        "failures": [
            f"{m.fail_type}: {(m.fail_reason or '').splitlines()[0] if m.fail_reason else ''}"
            for m in metrics
            if m.fail_type
        ],
    }


_warm = set()


def warm_up(backend, module=""):
    """Pays a process's one-time costs of compiling with `backend` (imports, the compiler's first
    run) outside any case: compiles and runs one small program, then forgets it."""
    if (backend, module) in _warm:
        return {}
    records = getattr(_import(module), "gauntlet_compile_records", None) if module else None
    _listen()
    try:
        fn = torch.compile(lambda a: torch.relu(a * 2 + 1), backend=_backend_callable(backend))
        fn(torch.ones(4))
    except Exception:  # a backend that cannot compile this fails again in a case, with its own error
        pass
    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()
    if records is not None:
        records(reset=True)
    _warm.add((backend, module))
    return {}


def drop_program(handle):
    _programs.pop(handle, None)
    return {}


# --- the embedding's own checks ---------------------------------------------------------------


def _fresh():
    torch._dynamo.reset()
    counters.clear()


def selftest_compiled_sin(x, backend="eager"):
    """sin(x) + 1 through torch.compile with `backend`: the embedding's own check."""
    _fresh()
    fn = torch.compile(lambda a: torch.sin(a) + 1, backend=backend)
    return fn(x)


def selftest_graph_break(x, backend="eager"):
    """A data-dependent branch on a value read on the host: dynamo breaks the graph there."""
    _fresh()

    def branchy(a):
        b = a * 2
        if b.sum().item() > 0:
            return b + 1
        return b - 1

    return torch.compile(branchy, backend=backend)(x)


def last_stats():
    """What dynamo recorded since the last reset: graphs compiled, graph breaks by reason."""
    breaks = {str(reason): int(n) for reason, n in counters["graph_break"].items()}
    return {
        "unique_graphs": int(counters["stats"]["unique_graphs"]),
        "graph_breaks": sum(breaks.values()),
        "break_reasons": breaks,
    }


def fail(message):
    raise ValueError(message)

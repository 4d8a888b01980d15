"""The simulated accelerator's Python side, what a vendor's Python package does for its device
(docs/simulator.md; Note [Simulated compiler] in simulator/src/compiler.cpp).

Importing it, in a process that loaded libgauntlet_sim.so (or it loads the library beside this
file, or $GAUNTLET_SIM_LIB):
  - registers the device module `torch.privateuseone`, which torch.compile asks the device about;
  - registers the dynamo backend `gauntlet_sim`: AOT autograd's aten graphs (forward, and backward
    for training), split into regions the simulated device compiles and runs as fused launches,
    with a graph break at each node it cannot take.

The decisions (which node the device takes, what a region costs to compile, how a region is
charged) are the simulator's, made in C++ behind `torch.ops.gauntlet_sim.*`; this file walks the
graph and runs it. What the compiler did is read back with `gauntlet_compile_records()`.
"""

import os
import re
import types
import warnings

import torch

__all__ = ["gauntlet_compile_records"]


def _load_library():
    try:
        torch.ops.gauntlet_sim.takes  # registered when the library was loaded
        return
    except (AttributeError, RuntimeError):
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    torch.ops.load_library(os.environ.get("GAUNTLET_SIM_LIB") or os.path.join(here, "libgauntlet_sim.so"))


_load_library()
# AOT autograd's backward wrapper drops the attribute that says a compiled graph takes its
# arguments boxed; _SimGraph takes either.
warnings.filterwarnings("ignore", message="Your compiler for AOTAutograd is returning a function that doesn't take boxed")
_ops = torch.ops.gauntlet_sim


# --- the device module ------------------------------------------------------------------------


def _device_module():
    """`torch.privateuseone`: one device, always there, synchronous."""
    m = types.ModuleType("torch.privateuseone")
    m.__file__ = __file__
    m.is_available = lambda: True
    m.is_initialized = lambda: True
    m._lazy_init = lambda: None
    m._is_in_bad_fork = lambda: False
    m.device_count = lambda: 1
    m.current_device = lambda: 0
    m.set_device = lambda device: None
    m.synchronize = lambda device=None: None
    m.manual_seed = lambda seed: None
    m.manual_seed_all = lambda seed: None
    return m


if not hasattr(torch, "privateuseone"):
    torch._register_device_module("privateuseone", _device_module())


# --- what the compiler did --------------------------------------------------------------------

_records = {"breaks": [], "regions": 0, "compiles": 0, "compile_ms": 0.0}


def gauntlet_compile_records(reset=False):
    """What the simulated compiler did since the last reset: its graph breaks ("op (file:line):
    why"), the regions it compiled, the graphs it compiled and the modelled compile time in ms."""
    out = {k: (list(v) if isinstance(v, list) else v) for k, v in _records.items()}
    if reset:
        _records.update(breaks=[], regions=0, compiles=0, compile_ms=0.0)
    return out


# --- the compiler -----------------------------------------------------------------------------

# Ops that read a tensor's value on the host: the device cannot trace through them.
_READS_VALUES = {"aten::_local_scalar_dense", "aten::item", "aten::is_nonzero", "aten::equal"}


def _op_name(target):
    schema = target._schema
    return schema.name + ("." + schema.overload_name if schema.overload_name else "")


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


def _nbytes(value):
    return sum(t.numel() * t.element_size() for t in _tensors(value))


def _where(node):
    """"file.py:31": the user's line this node came from, when dynamo recorded it."""
    trace = node.meta.get("stack_trace") or ""
    found = re.findall(r'File "([^"]+)", line (\d+)', trace)
    if not found:
        return ""
    path, line = found[-1]
    return f"{os.path.basename(path)}:{line}"


def _is_op(node):
    return node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)


def _host_side(node):
    """Moves no tensor data: size arithmetic, picking an element of a tuple, ops that return no
    tensor (a size, a dtype)."""
    if not _is_op(node):
        return True
    if _op_name(node.target) in _READS_VALUES:
        return False
    return not any(
        isinstance(r.type, torch.TensorType) or "Tensor" in str(r.type) for r in node.target._schema.returns
    )


class _Segment:
    def __init__(self, region):
        self.region = region  # a compiled region, else one node run eagerly (a graph break)
        self.nodes = []
        self.device_nodes = 0  # nodes that are not host-side: what compile time grows with
        self.inputs = []  # values from before the segment that its nodes use
        self.outputs = []  # values of the segment used after it
        self.compiled = False


class _SimGraph:
    """One aten graph compiled for the simulated device."""

    _boxed_call = True

    def __init__(self, gm):
        self.gm = gm
        self.nodes = list(gm.graph.nodes)
        self.segments = None
        self.dtype = None  # the first call's first tensor dtype and largest input: the compiler's
        self.numel = 0  # fault rules match them (Note [Fault rules])
        # after each node, the values no later node uses (freed as eager would)
        last = {}
        for node in self.nodes:
            for used in node.all_input_nodes:
                last[used] = node
        self.frees = {}
        for value, user in last.items():
            self.frees.setdefault(user, []).append(value)

    def __call__(self, *args):
        # boxed (one list, which the callee empties to free the inputs early) or, where AOT
        # autograd's wrappers lost the attribute that asks for it, unboxed
        if len(args) == 1 and isinstance(args[0], list):
            inputs = list(args[0])
            args[0].clear()
        else:
            inputs = list(args)
        if self.segments is None:
            self._partition(inputs)
        return self._run(inputs)

    # the first call: decide every node from its real inputs, then split into segments
    def _partition(self, inputs):
        for t in _tensors(inputs):
            self.dtype = self.dtype or t.dtype
            self.numel = max(self.numel, t.numel())
        env = self._bind(inputs)
        decided = []
        start = _ops.probe_begin()
        try:
            for node in self.nodes:
                if node.op in ("placeholder", "output"):
                    continue
                args, kwargs = self._args(node, env)
                why = self._reason(node, args, kwargs)
                if _is_op(node) and node.target._schema.is_mutable:  # the probe must not write inputs
                    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
                with torch.no_grad():
                    env[node] = self._call(node, args, kwargs)
                for value in self.frees.get(node, ()):
                    env.pop(value, None)
                fell = _ops.take_fallbacks()
                if not why and fell and not _host_side(node):
                    why = f"decomposes into {', '.join(fell)}, which falls back to the CPU"
                decided.append((node, why))
                if why:
                    where = _where(node)
                    name = _op_name(node.target) if _is_op(node) else str(node.target)
                    _records["breaks"].append(f"{name} ({where}): {why}" if where else f"{name}: {why}")
        finally:
            _ops.probe_end(start)
        segments = []
        for node, why in decided:
            if why:
                seg = _Segment(False)
                segments.append(seg)
            elif not segments or not segments[-1].region:
                seg = _Segment(True)
                segments.append(seg)
            else:
                seg = segments[-1]
            seg.nodes.append(node)
            if not _host_side(node):
                seg.device_nodes += 1
        for seg in segments:
            inside = set(seg.nodes)
            for node in seg.nodes:
                for used in node.all_input_nodes:
                    if used not in inside and used not in seg.inputs:
                        seg.inputs.append(used)
                if any(user not in inside for user in node.users):
                    seg.outputs.append(node)
            if seg.region and seg.device_nodes:
                _records["regions"] += 1
        _records["compiles"] += 1
        self.segments = segments

    def _run(self, inputs):
        env = self._bind(inputs)
        for seg in self.segments:
            if not (seg.region and seg.device_nodes):
                for node in seg.nodes:
                    self._step(node, env)
                continue
            if not seg.compiled:
                _records["compile_ms"] += _ops.compile_region(seg.device_nodes, self.dtype, self.numel)
                seg.compiled = True
            moved = sum(_nbytes(env[v]) for v in seg.inputs)
            _ops.begin_region()
            try:
                for node in seg.nodes:
                    self._step(node, env, free=False)
                moved += sum(_nbytes(env[v]) for v in seg.outputs)
            finally:
                _ops.end_region(float(moved))
            for node in seg.nodes:
                for value in self.frees.get(node, ()):
                    env.pop(value, None)
        output = self.nodes[-1]
        return list(torch.fx.node.map_arg(output.args[0], lambda n: env[n]))

    def _bind(self, inputs):
        env = {}
        i = 0
        for node in self.nodes:
            if node.op == "placeholder":
                env[node] = inputs[i]
                i += 1
        return env

    def _args(self, node, env):
        args = torch.fx.node.map_arg(node.args, lambda n: env[n])
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
        return list(args), dict(kwargs)

    def _call(self, node, args, kwargs):
        if node.op == "get_attr":
            return getattr(self.gm, node.target)
        return node.target(*args, **kwargs)

    def _step(self, node, env, free=True):
        args, kwargs = self._args(node, env)
        env[node] = self._call(node, args, kwargs)
        if free:
            for value in self.frees.get(node, ()):
                env.pop(value, None)

    def _reason(self, node, args, kwargs):
        """Why the device cannot take this node with these inputs, or ""."""
        if not _is_op(node):
            return ""
        name = _op_name(node.target)
        if name in _READS_VALUES:
            return "reads a tensor's value on the host (data-dependent)"
        if _host_side(node):
            return ""
        tensors = list(_tensors(list(args) + list(kwargs.values())))
        dtype = tensors[0].dtype if tensors else None
        numel = max((t.numel() for t in tensors), default=0)
        return _ops.takes(name, dtype, numel)


def _compile(gm, example_inputs):
    return _SimGraph(gm)


def _backend():
    from torch._dynamo.backends.common import aot_autograd

    return aot_autograd(fw_compiler=_compile, bw_compiler=_compile)


def _register():
    from torch._dynamo.backends.registry import _COMPILER_FNS, register_backend

    if "gauntlet_sim" in _COMPILER_FNS:
        return
    compiled = _backend()

    def gauntlet_sim(gm, example_inputs, **options):
        return compiled(gm, example_inputs)

    register_backend(gauntlet_sim, name="gauntlet_sim")


_register()

#include "gauntlet/core/cases/runner.h"

#include <c10/core/AutogradState.h>
#include <fmt/format.h>
#include <malloc.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <ctime>
#include <optional>

#include "gauntlet/base/host.h"
#include "gauntlet/base/stage.h"
#include "gauntlet/core/cases/compare.h"
#include "gauntlet/core/cases/compile_path.h"
#include "gauntlet/core/cases/dispatch_probe.h"
#include "gauntlet/core/cases/model_case.h"
#include "gauntlet/core/cases/timing.h"
#include "gauntlet/golden/golden.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/plugin/torch_compat.h"

namespace gauntlet {

namespace {

using Clock = std::chrono::steady_clock;

// The dispatcher's "Could not run 'aten::x' with arguments from the 'PrivateUse1' backend. This
// could be because ... is only available for these backends: [CPU, ...]" and a table of every
// backend's registration: ~5 KB a case. The first sentence says it all.
constexpr const char* kNoKernel = " The backend has no kernel for it and no fallback.";
std::string short_error(std::string text) {
  const auto start = text.find("Could not run '");
  if (start == std::string::npos || text.find(kNoKernel) != std::string::npos) return text;
  const auto end = text.find(" backend.", start);
  if (end == std::string::npos) return text;
  return text.substr(0, end + 9) + kNoKernel;
}

// CPU time of this thread: what computing a golden costs, unskewed by other threads' load.
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

std::optional<DType> dtype_of(at::ScalarType t) {
  for (DType d : kAllDTypes) {
    if (to_scalar_type(d) == t) return d;
  }
  return std::nullopt;
}

// The dtype an output should have: the golden's, except that floating goldens ran in fp64 on
// behalf of the case dtype.
at::ScalarType expected_dtype(const at::Tensor& golden, const CaseKey& key) {
  if (golden.scalar_type() == at::kDouble && is_floating(key.dtype)) return to_scalar_type(key.dtype);
  return golden.scalar_type();
}

std::string join_sizes(at::IntArrayRef s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

TensorSummary summarize(const std::string& name, const at::Tensor& t) {
  TensorSummary s;
  s.name = name;
  s.dtype = std::string(c10::toString(t.scalar_type()));
  s.shape = join_sizes(t.sizes());
  s.strides = join_sizes(t.strides());
  at::Tensor d = t.detach().cpu().to(at::kDouble);
  at::Tensor finite = d.masked_select(at::isfinite(d));
  if (finite.numel() > 0) {
    s.min = finite.min().item<double>();
    s.max = finite.max().item<double>();
    s.mean = finite.mean().item<double>();
  }
  s.fingerprint = fingerprint({t.detach().cpu()});
  return s;
}

std::string coords_of(std::int64_t flat, at::IntArrayRef sizes) {
  std::vector<std::int64_t> c(sizes.size());
  for (std::size_t i = sizes.size(); i-- > 0;) {
    c[i] = sizes[i] ? flat % sizes[i] : 0;
    flat = sizes[i] ? flat / sizes[i] : 0;
  }
  return fmt::format("[{}]", fmt::join(c, ", "));
}

void add_worst(CaseDetail& detail, const std::string& name, const at::Tensor& a, const at::Tensor& g,
               const at::Tensor& gc, const Tolerance& tol, at::IntArrayRef sizes) {
  if (a.numel() == 0) return;
  at::Tensor allowed = tol.atol + tol.rtol * gc.abs();
  at::Tensor err = (a - gc).abs();
  at::Tensor score =
      at::where(at::isnan(a) != at::isnan(gc), at::full_like(err, INFINITY), err / allowed.clamp_min(1e-300));
  score = at::nan_to_num(score, 0.0, INFINITY);
  auto top = score.topk(std::min<std::int64_t>(5, score.numel()));
  at::Tensor idx = std::get<1>(top);
  for (std::int64_t k = 0; k < idx.numel(); ++k) {
    std::int64_t i = idx[k].item<std::int64_t>();
    detail.worst.push_back({name, i, coords_of(i, sizes), a[i].item<double>(), g[i].item<double>(),
                            gc[i].item<double>(), err[i].item<double>(), allowed[i].item<double>()});
  }
}

// Compares the device's outputs with the golden's; returns the problem text ("" when none).
std::string compare_outputs(const CaseKey& key, const Backend& dev, const std::string& backend,
                            const std::vector<NamedTensor>& actual, const std::vector<NamedTensor>& golden,
                            const std::vector<at::Tensor>& device_inputs, const OpSpec& spec, const RunnerConfig& cfg,
                            Outcome& out, CaseDetail* detail) {
  if (actual.size() != golden.size()) {
    return fmt::format("the device returned {} outputs, the golden {}", actual.size(), golden.size());
  }
  Comparison cmp;
  std::string problem;
  bool tolerance_set = false;
  for (std::size_t k = 0; k < actual.size(); ++k) {
    const std::string& name = golden[k].name;
    enter_stage(Stage::Outputs);
    at::Tensor a = dev.to_host(actual[k].value.detach());
    enter_stage(Stage::Compare);
    const at::Tensor& g = golden[k].value;
    if (actual[k].name != name) return fmt::format("output {} is missing (got {})", name, actual[k].name);
    if (a.sizes() != g.sizes()) {
      return fmt::format("{}: shape {} differs from the golden's {}", name, join_sizes(a.sizes()),
                         join_sizes(g.sizes()));
    }
    const at::ScalarType want = expected_dtype(g, key);
    if (a.scalar_type() != want) {
      return fmt::format("{}: dtype {} differs from the expected {}", name, c10::toString(a.scalar_type()),
                         c10::toString(want));
    }
    // Where the op promises it, an output keeps a dense input's memory layout.
    if (spec.promise.strides_like_input && k == 0 && name == "out0" && !device_inputs.empty() &&
        device_inputs[0].sizes() == a.sizes() && device_inputs[0].is_non_overlapping_and_dense() && a.numel() > 1) {
      at::Tensor like =
          at::empty_like(at::empty_strided(device_inputs[0].sizes(), device_inputs[0].strides(), a.options()));
      if (detail && detail->keep_tensors) detail->tensors.promised_strides = like.strides().vec();
      if (like.strides() != a.strides() && problem.empty()) {
        problem = fmt::format("{}: strides {} differ from the promised {}", name, join_sizes(a.strides()),
                              join_sizes(like.strides()));
      }
    }
    const DType out_dtype = dtype_of(want).value_or(DType::F64);
    Tolerance tol = cfg.tolerances ? cfg.tolerances->lookup(key, out_dtype, backend) : default_tolerance(out_dtype);
    if (!tolerance_set || is_floating(out_dtype)) {
      out.rtol = tol.rtol;
      out.atol = tol.atol;
      out.tolerance_profile = backend + ":" + tol.source;
      tolerance_set = true;
    }
    if (detail && detail->keep_tensors) {
      detail->tensors.actual.push_back({name, a});
      detail->tensors.golden.push_back({name, g});
      detail->tensors.dtypes.push_back(want);
      detail->tensors.tolerances.push_back(tol);
    }
    // Widened to fp64 with the golden rounded to the output's dtype beside it; a floating output is
    // compared in its own dtype instead, the same metrics without the three casts (Note [Typed
    // comparison] in compare.cpp).
    auto widened = [&] {
      return std::array<at::Tensor, 3>{a.to(at::kDouble).contiguous().reshape({-1}),
                                       g.to(at::kDouble).contiguous().reshape({-1}),
                                       g.to(want).to(at::kDouble).contiguous().reshape({-1})};
    };
    const std::int64_t before = cmp.metrics().mismatches;
    if (is_floating(out_dtype) && g.scalar_type() == at::kDouble) {
      const at::Tensor ac = a.contiguous(), gc = g.contiguous();
      cmp.add(TypedOutputView{name, ac.data_ptr(), gc.data_ptr<double>(), ac.numel(), out_dtype}, tol);
    } else {
      const auto [ad, gd, gcd] = widened();
      cmp.add({name, ad.data_ptr<double>(), gd.data_ptr<double>(), gcd.data_ptr<double>(), ad.numel(), out_dtype}, tol);
    }
    const std::int64_t bad = cmp.metrics().mismatches - before;
    if (bad > 0 && problem.empty()) {
      problem = fmt::format("{}: {} of {} elements outside tolerance (rtol={:g}, atol={:g})", name, bad, a.numel(),
                            tol.rtol, tol.atol);
    }
    if (detail) {
      detail->actual.push_back(summarize(name, a));
      detail->golden.push_back(summarize(name, g));
      const auto [ad, gd, gcd] = widened();
      add_worst(*detail, name, ad, gd, gcd, tol, a.sizes());
    }
  }
  out.metrics = cmp.metrics();
  if (detail) {
    std::stable_sort(detail->worst.begin(), detail->worst.end(), [](const WorstElement& x, const WorstElement& y) {
      return x.abs_err / std::max(x.allowed, 1e-300) > y.abs_err / std::max(y.allowed, 1e-300);
    });
    if (detail->worst.size() > 5) detail->worst.resize(5);
  }
  return problem;
}

// The golden from the store when it holds an intact entry, else computed (and, when asked,
// added). A corrupt entry is never used: it is recomputed, and replaced when adding.
std::vector<NamedTensor> obtain_golden(const OpDef& def, const CaseKey& key, const std::vector<at::Tensor>& inputs,
                                       const RunnerConfig& cfg, Outcome& out) {
  auto t0 = Clock::now();
  // See Note [Reading or recomputing] in golden_store.h.
  bool read = cfg.golden_store != nullptr;
  if (read && cfg.golden_release.empty() && !cfg.golden_always) {
    const std::string reference = cfg.golden_reference.empty() ? reference_identity() : cfg.golden_reference;
    auto e = cfg.golden_store->find(key.str(), kGoldenMethodVersion, reference);
    read = e && e->compute_us >= estimated_read_us(e->raw_bytes);
    if (!read && e) out.golden_entry = e->object;  // stored, but cheaper to recompute
  }
  if (read) {
    const std::string reference = cfg.golden_reference.empty() ? reference_identity() : cfg.golden_reference;
    GoldenLookup hit = cfg.golden_store->get(key.str(), kGoldenMethodVersion, reference, cfg.golden_release);
    if (hit.state == GoldenLookup::State::Hit) {
      out.golden_source = "store";
      out.golden_entry = hit.entry.object;
      out.timing.golden_us = us_since(t0);
      return std::move(hit.outputs);
    }
    if (!cfg.golden_release.empty()) {
      throw std::runtime_error(hit.state == GoldenLookup::State::Corrupt
                                   ? "frozen golden of release " + cfg.golden_release + " is corrupt: " + hit.problem
                                   : "release " + cfg.golden_release + " froze no golden for this case");
    }
  }
  const double cpu0 = thread_cpu_us();
  std::vector<NamedTensor> golden = compute_golden(def, key, inputs);
  const double compute_us = thread_cpu_us() - cpu0;
  out.golden_source = out.golden_entry.empty() ? "computed" : "recomputed";
  if (cfg.golden_store && cfg.golden_add && out.golden_entry.empty()) {
    const std::string reference = cfg.golden_reference.empty() ? reference_identity() : cfg.golden_reference;
    out.golden_entry = cfg.golden_store->put(key.str(), kGoldenMethodVersion, reference, golden, compute_us).object;
    out.golden_source = "computed+stored";
  }
  out.timing.golden_us = us_since(t0);
  return golden;
}

// Note [Op cases in compile mode]: an op case with mode `compile` traces the op table's call of
// the op (torch::jit::tracer, on the device inputs) into a graph, usually one aten node, and runs
// it through the backend's compile path (Note [Compile path]), forward only. Its outputs are
// checked as an eager case's; the outcome also has graph breaks, regions and compile time. The
// trace and the compilation are part of the first call (first_us), as a user's first call of a
// compiled function pays them; the device time and fallbacks are the compiled run's. A call
// that cannot be traced (it reads values on the host to decide what to do) is UNSUPPORTED: the
// harness cannot make a graph of it, which says nothing about the backend.
//
// Note [Tracing on the CPU]: the tracer records the aten calls it sees, so what it sees depends on
// which kernels the device registered. A backend that registers a composite itself (the simulator
// registers aten::convolution on PrivateUse1, as a vendor may) computes its output where the
// tracer records nothing (the composite's own calls, such as aten::_convolution, never happen),
// and the trace fails with "output 1 ... did not have observable data dependence with trace
// inputs". The graph a user's torch.compile gets does not depend on the device's kernels (dynamo
// traces the Python call, AOT decomposes it without them), so the harness's should not either:
// such a call is traced again on CPU copies of the inputs, where every composite decomposes as
// aten's own kernels do, and the graph's device constants are moved to the inputs' device. The
// compiled program then runs on the device inputs as any other.
std::shared_ptr<torch::jit::Graph> trace_op_graph(const OpDef& def, const CaseKey& key,
                                                  const std::vector<at::Tensor>& inputs, std::exception_ptr& op_error) {
  torch::jit::Stack stack(inputs.begin(), inputs.end());
  auto traced = torch::jit::tracer::trace(
      std::move(stack),
      [&](torch::jit::Stack in) {
        std::vector<at::Tensor> ts;
        for (const c10::IValue& v : in) ts.push_back(v.isTensor() ? v.toTensor() : at::Tensor());
        OpCall call(def.spec, key, std::move(ts));
        try {
          std::vector<at::Tensor> outs = def.fn(call);
          return torch::jit::Stack(outs.begin(), outs.end());
        } catch (...) {
          op_error = std::current_exception();
          throw;
        }
      },
      [](const at::Tensor&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false);
  return traced.first->graph;
}

// The CPU constants of a graph traced on CPU copies become `device` (Note [Tracing on the CPU]).
void move_device_constants(torch::jit::Graph& graph, const c10::Device& device) {
  std::vector<torch::jit::Node*> moved;
  for (torch::jit::Node* n : graph.nodes()) {
    if (n->kind() != c10::prim::Constant || n->output()->type()->kind() != c10::TypeKind::DeviceObjType) continue;
    const std::optional<c10::IValue> value = torch::jit::toIValue(n->output());
    if (!value || value->toDevice().type() != c10::DeviceType::CPU) continue;
    torch::jit::WithInsertPoint here(n);
    n->output()->replaceAllUsesWith(graph.insertConstant(device));
    moved.push_back(n);
  }
  for (torch::jit::Node* n : moved) n->destroy();
}

std::unique_ptr<CompiledGraph> trace_and_compile(const OpDef& def, const CaseKey& key,
                                                 const std::vector<at::Tensor>& inputs, Backend& backend) {
  std::shared_ptr<torch::jit::Graph> graph;
  std::exception_ptr op_error;  // the op itself failed: classified as an eager call's failure
  try {
    graph = trace_op_graph(def, key, inputs, op_error);
  } catch (const std::exception& e) {
    if (op_error) std::rethrow_exception(op_error);
    std::string what = e.what();
    const bool unseen_output = what.find("did not have observable data dependence") != std::string::npos;
    std::optional<c10::Device> device;
    for (const at::Tensor& t : inputs)
      if (t.defined()) device = device.value_or(t.device());
    if (unseen_output && device) {
      std::vector<at::Tensor> on_cpu;
      for (const at::Tensor& t : inputs) on_cpu.push_back(t.defined() ? t.detach().to(at::kCPU) : at::Tensor());
      try {
        std::exception_ptr cpu_error;
        graph = trace_op_graph(def, key, on_cpu, cpu_error);
        move_device_constants(*graph, *device);
      } catch (const std::exception& again) {
        what = again.what();
      }
    }
    if (!graph) {
      // The tracer's complaints print a whole tensor ("output 1 (<values>) of traced region ..."):
      // keep the words around it.
      const auto open = what.find(" ("), close = what.find(") of traced region");
      if (open != std::string::npos && close != std::string::npos && open < close) what.erase(open, close + 1 - open);
      std::replace(what.begin(), what.end(), '\n', ' ');
      throw c10::NotImplementedError({__func__, __FILE__, __LINE__},
                                     "the op's call cannot be traced into a graph: " + what.substr(0, 300));
    }
  }
  enter_stage(Stage::Compile);
  return backend.compile_graph(graph, nullptr);
}

std::vector<NamedTensor> run_compiled(CompiledGraph& program, const std::vector<at::Tensor>& inputs) {
  std::vector<c10::IValue> values = program.run(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
  std::vector<NamedTensor> named;
  for (const c10::IValue& v : values) {
    if (v.isTensor()) {
      named.push_back({"out" + std::to_string(named.size()), v.toTensor().detach()});
    } else if (v.isTuple() || v.isList()) {
      const std::vector<c10::IValue> items = v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec();
      for (const c10::IValue& item : items)
        named.push_back({"out" + std::to_string(named.size()), item.toTensor().detach()});
    }
  }
  return named;
}

// Fills `out` as the case goes, so what is known before an exception (the golden's provenance)
// survives into the outcome.
void run_checked(const CaseKey& key, Backend& backend, const RunnerConfig& cfg, CaseDetail* detail, Outcome& out,
                 CaseTrace& trace) {
  out.key = key.str();
  if (auto problem = validate_key(key)) {
    out.status = Status::Error;
    out.error = "invalid case: " + *problem;
    return;
  }
  if (key.kind == "model") {
    if (is_model_file_target(key.target))
      run_model_file_case(key, backend, cfg, out, trace, detail);
    else
      run_model_case(key, backend, cfg, out, trace, detail);
    return;
  }
  if (key.kind == "coll") {
    // A group of rank processes (Note [Collective groups]); whoever runs cases sets how.
    if (!cfg.collective)
      throw std::runtime_error("collective cases run as a group of rank processes, which this caller cannot start");
    enter_stage(Stage::Op);  // the group's ranks run and judge it (Note [Collective groups])
    out = cfg.collective(key);
    return;
  }
  const OpDef& def = *find_op_def(key.target);
  std::vector<at::Tensor> inputs = make_inputs(key, def.spec);
  if (detail) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      detail->inputs.push_back(summarize(def.spec.inputs[i].name, apply_layout(inputs[i], key.layout)));
      if (detail->keep_tensors)
        detail->tensors.inputs.push_back({def.spec.inputs[i].name, apply_layout(inputs[i], key.layout)});
    }
  }
  std::vector<NamedTensor> golden = obtain_golden(def, key, inputs, cfg, out);

  trace.step = "moving inputs to the device";
  enter_stage(Stage::Inputs);
  const MemoryBaseline memory_baseline(backend);  // Note [Case peak memory] in backend.h
  std::vector<at::Tensor> device_inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor laid_out = apply_layout(inputs[i], key.layout);
    try {
      device_inputs.push_back(backend.to_device(laid_out));
    } catch (const CapabilityMissing&) {
      throw CapabilityMissing(
          fmt::format("layout {} needs aten::as_strided, which the backend lacks (input {} has strides {})",
                      layout_name(key.layout), def.spec.inputs[i].name, join_sizes(laid_out.strides())));
    }
  }
  trace.step = "synchronising the device";
  backend.synchronize();
  trace.step.clear();
  backend.take_fallback_ops();
  backend.reset_peak_memory();
  backend.reset_device_time();

  if (key.mode == Mode::Compile && backend.has_compile_path()) {
    enter_stage(Stage::Compile);
    backend.prepare_compile_path();
  }
  auto t0 = Clock::now();
  std::unique_ptr<CompiledGraph> program;
  if (key.mode == Mode::Compile) {
    enter_stage(Stage::Compile);
    // A backend without a compile path: UNSUPPORTED, before the trace runs the op eagerly.
    if (!backend.has_compile_path()) backend.compile_graph(nullptr, nullptr);
    enter_stage(Stage::Trace);
    auto obs = observe_dispatch(backend);
    try {
      program = trace_and_compile(def, key, device_inputs, backend);
      backend.synchronize();
    } catch (...) {
      trace.note_raise(obs.get());
      out.fallback_ops = case_fallbacks(backend, obs.get(), cfg.fallback_source);
      throw;
    }
    backend.take_fallback_ops();  // the trace ran the op eagerly: not the compiled run's
    backend.reset_peak_memory();
    backend.reset_device_time();
  }
  auto call = [&] { return program ? run_compiled(*program, device_inputs) : execute(def, key, device_inputs); };
  std::vector<NamedTensor> actual;
  enter_stage(program ? Stage::Compiled : Stage::Op);
  {
    auto obs = observe_dispatch(backend);
    try {
      actual = call();
      backend.synchronize();
    } catch (...) {
      trace.note_raise(obs.get());
      // Note [Failing stage]: a case that failed inside the CPU fallback entered it too.
      out.fallback_ops = case_fallbacks(backend, obs.get(), cfg.fallback_source);
      throw;
    }
    out.timing.first_us = us_since(t0);
    out.sim_time_us = backend.device_time_us();
    out.peak_mem_bytes = memory_baseline.peak_above(backend);
    out.fallback_ops = case_fallbacks(backend, obs.get(), cfg.fallback_source);
    if (detail && obs) detail->decomposed = obs->decomposed_ops();
  }

  // Steady state: repeat while cheap. Note: speed methodology proper (warm-up, min time,
  // Google Benchmark) belongs to `gauntlet bench`; this is the per-case figure every run keeps.
  // Note [Timing methodology] in runner.h.
  // Compilation does not eat into the repetitions' budget.
  std::vector<double> reps = time_repetitions(cfg, program ? 0.0 : out.timing.first_us / 1000, [&] {
    call();
    backend.synchronize();
  });
  record_repetitions(out.timing, std::move(reps));
  if (program) {
    record_compile_stats(program->stats(), out);
    keep_compiled_program(*program, detail);
  }

  trace.step = "copying results back to the CPU";
  enter_stage(Stage::Outputs);
  std::string problem =
      compare_outputs(key, backend, backend.profile(), actual, golden, device_inputs, def.spec, cfg, out, detail);
  trace.step.clear();
  if (!problem.empty()) {
    out.status = Status::Fail;
    out.error = problem;
  }
}

}  // namespace

// Note [Interpreter errors]: TorchScript's interpreter rethrows a kernel's error (as the same
// c10 type, or as a std::runtime_error) with a traceback in front: "The following operation failed
// in the TorchScript interpreter.", the serialized code's frames, the original code's frames (a
// trace's Python stack), then "RuntimeError: <the kernel's message>" to the end. The stored error
// leads with that message, without its Python exception name, and keeps the traceback after it:
// reporters show an error's first line, classification reads its start ("Could not run '..."),
// and bounding (Note [Bounded error texts]) keeps the start.
std::string lead_with_cause(std::string text) {
  static constexpr std::string_view kHeader = "The following operation failed in the TorchScript interpreter";
  if (text.rfind(kHeader, 0) != 0) return text;
  std::size_t line = 0;
  while (line < text.size()) {
    std::size_t end = text.find('\n', line);
    if (end == std::string::npos) end = text.size();
    const std::string_view l(text.data() + line, end - line);
    // "RuntimeError: ", "NotImplementedError: ", "torch.jit.Error: ": a name, then ": "
    std::size_t n = 0;
    while (n < l.size() && (std::isalnum(static_cast<unsigned char>(l[n])) || l[n] == '_' || l[n] == '.')) ++n;
    const std::string_view name = l.substr(0, n);
    auto ends_with = [&](std::string_view suffix) {
      return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
    };
    if (n > 0 && l.substr(n, 2) == ": " && (ends_with("Error") || ends_with("Exception"))) {
      std::string cause = text.substr(line + n + 2);
      while (!cause.empty() && (cause.back() == '\n' || cause.back() == ' ')) cause.pop_back();
      std::string traceback = text.substr(0, line);
      while (!traceback.empty() && (traceback.back() == '\n' || traceback.back() == ' ')) traceback.pop_back();
      return cause + "\n" + traceback;
    }
    line = end + 1;
  }
  return text;
}

// Note [Outcome classification]: the only place exceptions become statuses.
//   CapabilityMissing (a layout the backend cannot make)                  -> UNSUPPORTED
//   any exception during a harness step (moving inputs, reading results)   -> ERROR, naming the step
//   c10::NotImplementedError: the dispatcher found no kernel for an op ...
//     ... that the op under test called or decomposed into                 -> UNSUPPORTED
//     ... that a native kernel or the CPU fallback of another op called    -> ERROR, naming that op
//   1.13's "not implemented for '<dtype>'"                                 -> UNSUPPORTED
//   c10::OutOfMemoryError                                                  -> ERROR ("out of memory: ...")
//   any other c10::Error or std::exception                                 -> ERROR
// The op an exception came from is known from the dispatcher (Note [Dispatcher-derived
// fallbacks]): an ERROR names it, and whether it ran as a native kernel or through the fallback.
// So a vendor reads UNSUPPORTED only where a kernel is missing, and a crash in its fallback
// machinery is not mistaken for an op it lacks. The message is kept without the C++ backtrace and
// without the dispatcher's table of backends (short_error). Then the catalog's expectation
// applies: SKIP never runs; an xfail case that fails (FAIL/ERROR/UNSUPPORTED) is XFAIL, one that
// passes XPASS, or keeps its status when the entry is not strict.
namespace {
class Prepared final : public PreparedCase {
 public:
  Prepared(const CaseKey& key, Backend& backend) : key_(key), backend_(backend) {
    if (auto problem = validate_key(key)) throw std::invalid_argument("invalid case: " + *problem);
    if (key.kind != "op")
      throw std::invalid_argument("only op cases can be prepared for timing (not " + key.str() + ")");
    if (key.mode == Mode::Compile)
      throw std::invalid_argument("compile-mode cases are timed by run, not bench (" + key.str() + ")");
    def_ = find_op_def(key.target);
    for (const auto& t : make_inputs(key, def_->spec))
      inputs_.push_back(backend.to_device(apply_layout(t, key.layout)));
  }
  void call() override {
    execute(*def_, key_, inputs_);
    backend_.synchronize();
  }

 private:
  CaseKey key_;
  Backend& backend_;
  const OpDef* def_ = nullptr;
  std::vector<at::Tensor> inputs_;
};
}  // namespace

std::unique_ptr<PreparedCase> prepare_case(const CaseKey& key, Backend& backend) {
  return std::make_unique<Prepared>(key, backend);
}

// Note [Freed memory kept]: a case allocates its inputs, golden and outputs (a few MiB each on
// large cases) and frees them all before the next. glibc serves such blocks with mmap and gives
// them back with munmap (or trims the heap's top) each time, so every case paid its page faults
// and the kernel's zeroing again: a tenth of the time of large cases (issue 24's profile). Blocks
// below 64 MiB now come from the heap and up to 128 MiB of free memory stays at its top for the
// next case: a process that runs cases holds at most that much more than it uses. Set before the
// first case (these calls take precedence over GLIBC_TUNABLES' malloc thresholds).
void prepare_process_for_cases() {
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 128 << 20);
  compat::fetch_no_error_backtraces();
  at::set_num_threads(case_intra_op_threads());  // Note [Intra-op threads] in gauntlet/base/host.h
}

namespace {

// Note [Backward on the calling thread]: a case's backward runs on the thread that runs the case,
// with autograd's per-device worker threads off. A process that runs a backward through the C++
// autograd engine and, once the embedded interpreter has started (a compile case), another
// through the Python engine (AOT autograd's compiled backward, or any backward then, since the
// Python engine becomes the default), fails the second on the device's ready queue (torch 2.14,
// engine.cpp: "0 <= device.index() && device.index() < device_ready_queues_.size()"). On the
// calling thread no device queue is involved; the backward's kernels are the same, and a case
// times its own calls anyway (Note [Timing methodology]).
class BackwardOnCallingThread {
 public:
  BackwardOnCallingThread() : was_(c10::AutogradState::get_tls_state().get_multithreading_enabled()) {
    c10::AutogradState::get_tls_state().set_multithreading_enabled(false);
  }
  ~BackwardOnCallingThread() { c10::AutogradState::get_tls_state().set_multithreading_enabled(was_); }
  BackwardOnCallingThread(const BackwardOnCallingThread&) = delete;
  BackwardOnCallingThread& operator=(const BackwardOnCallingThread&) = delete;

 private:
  bool was_;
};

}  // namespace

Outcome run_case(const CaseKey& key, Backend& backend, const RunnerConfig& cfg, CaseDetail* detail) {
  const BackwardOnCallingThread backward_here;
  Expectation expect;
  if (cfg.expectations) expect = cfg.expectations->lookup(key.str(), backend.profile());
  if (expect.kind == Expect::Skip) {
    Outcome out;
    out.key = key.str();
    out.status = Status::Skip;
    out.reason = expect.reason + " (" + expect.source + ")";
    return out;
  }
  Outcome out;
  CaseTrace trace;
  begin_case_stage();
  try {
    run_checked(key, backend, cfg, detail, out, trace);
  } catch (const CapabilityMissing& e) {
    out.status = Status::Unsupported;
    out.error = e.what();
    trace.step.clear();  // the layout, not the step, is what the backend lacks
  } catch (const c10::OutOfMemoryError& e) {
    out.status = Status::Error;
    out.error = std::string("out of memory: ") + e.what_without_backtrace();
  } catch (const c10::NotImplementedError& e) {
    out.error = short_error(lead_with_cause(e.what_without_backtrace()));
    // A missing kernel is the op under test's when nothing of the backend's own was running:
    // the op itself, or a composite it decomposed into, has no kernel.
    const bool missing_kernel = out.error.rfind("Could not run '", 0) == 0;
    const bool backend_code = missing_kernel && trace.raised_source &&
                              (*trace.raised_source == kernel_source_name(KernelSource::Native) ||
                               *trace.raised_source == kernel_source_name(KernelSource::Fallback));
    out.status = trace.step.empty() && !backend_code ? Status::Unsupported : Status::Error;
  } catch (const c10::Error& e) {
    out.status = compat::is_dtype_not_implemented(e) ? Status::Unsupported : Status::Error;
    out.error = short_error(lead_with_cause(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    // TorchScript's interpreter rethrows a kernel's c10::Error as a std::runtime_error with the
    // same text: the dtype it lacks is still UNSUPPORTED (Note [Outcome classification]).
    out.error = short_error(lead_with_cause(e.what()));
    out.status = compat::says_dtype_not_implemented(out.error) ? Status::Unsupported : Status::Error;
  }
  if (out.status == Status::Error || out.status == Status::Unsupported) {
    if (!trace.step.empty()) {
      out.status = Status::Error;
      out.error = "harness step '" + trace.step + "' failed: " + out.error;
    } else if (trace.raised_op && out.status == Status::Error) {
      if (trace.raised_in_fallback_of) {
        out.error +=
            " (raised in " + *trace.raised_op + ", inside the CPU fallback of " + *trace.raised_in_fallback_of + ")";
      } else if (*trace.raised_source == kernel_source_name(KernelSource::Fallback)) {
        out.error += " (raised in the CPU fallback of " + *trace.raised_op + ")";
      } else {
        out.error += " (raised in " + *trace.raised_op + ", " + *trace.raised_source + " kernel)";
      }
    }
  }
  out.key = key.str();
  out.error = short_error(std::move(out.error));  // rank processes' errors too
  if (out.status == Status::Fail && out.stage.empty()) out.stage = stage_name(Stage::Compare);
  if (out.status != Status::Pass && out.status != Status::Fail && out.stage.empty())
    out.stage = stage_name(current_stage() == Stage::None ? Stage::Op : current_stage());
  // Note [Throughput and cost]: an op or collective case processes the elements it compares.
  if (out.work_items == 0) out.work_items = out.metrics.numel;
  if (expect.kind == Expect::XFail) {
    out.reason = expect.reason + " (" + expect.source + ")";
    const bool failed = out.status == Status::Fail || out.status == Status::Error || out.status == Status::Unsupported;
    out.status = failed ? Status::XFail : (expect.strict ? Status::XPass : out.status);
  }
  if (out.status == Status::Pass || out.status == Status::XPass) out.stage.clear();
  enter_stage(Stage::None);
  return out;
}

void CaseTrace::note_raise(const DispatchObserver* obs) {
  if (!obs || raised_op || !obs->raised_in()) return;
  const DispatchObserver::Raised& r = *obs->raised_in();
  raised_op = r.op;
  raised_source = kernel_source_name(r.source);
  if (!r.in_fallback_of.empty() && r.in_fallback_of != r.op) raised_in_fallback_of = r.in_fallback_of;
}

std::unique_ptr<DispatchObserver> observe_dispatch(const Backend& backend) {
  const std::optional<c10::DispatchKey> key = backend.dispatch_key();
  if (!key) return nullptr;
  return std::make_unique<DispatchObserver>(backend.device().type(), *key);
}

std::vector<std::string> case_fallbacks(Backend& backend, const DispatchObserver* obs, FallbackSource source) {
  std::vector<std::string> reported = backend.take_fallback_ops();
  const bool use_backend =
      source == FallbackSource::Backend || (source == FallbackSource::Auto && backend.reports_fallbacks());
  if (use_backend || !obs) return reported;
  return obs->fallback_ops();
}

std::vector<double> time_repetitions(const RunnerConfig& cfg, double spent_ms, const std::function<void()>& call) {
  std::vector<double> reps;
  double timed_ms = 0;
  for (int i = 0; i < cfg.warmup && cfg.max_reps > 0 && spent_ms < cfg.max_time_ms; ++i) {
    const auto t = Clock::now();
    call();
    spent_ms += us_since(t) / 1000;
  }
  auto more = [&] {
    const int n = static_cast<int>(reps.size());
    if (n >= cfg.max_reps || spent_ms >= cfg.max_time_ms) return false;
    return n < cfg.min_reps || timed_ms < cfg.min_time_ms;
  };
  while (more()) {
    const auto t = Clock::now();
    call();
    reps.push_back(us_since(t));
    spent_ms += reps.back() / 1000;
    timed_ms += reps.back() / 1000;
  }
  return reps;
}

}  // namespace gauntlet

// Note [Model cases]: a model case runs one model of the zoo (Note [Model zoo]):
//   - inputs and weights from make_model_inputs(spec, config, dtype, seed = the case id): the same
//     values on every host and release;
//   - the golden: the same source run on the CPU in fp64 from those values (rounded to the case
//     dtype, then upcast: the golden sees exactly what the device got);
//   - "eager": the graph executor op by op (legacy executor, no optimisation passes), so each aten
//     op is dispatched to the backend as a Python eager program would; "compile" is the backend's
//     compile path (Note [Compile path], compile_path.cpp), with a shape sequence for seq=<n>;
//   - "train": forward, then the gradient of loss = sum_k sum(out_k * w_k) for fixed weights w_k
//     (splitmix, rounded to the dtype) with respect to every trainable weight; each gradient is
//     compared with the fp64 golden's ("grad.<arg>");
//   - tolerance: tolerances.yaml's rules for the family `model` (a model chains dozens of ops,
//     each rounding), per dtype and backend;
//   - timing: the first call (allocations, caches) apart, then repetitions as for op cases (Note
//     [Timing methodology]); the TorchScript parse happens before and is not timed.
#include "gauntlet/core/cases/model_case.h"

#include <fmt/format.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

#include "gauntlet/base/stage.h"
#include "gauntlet/core/cases/compare.h"
#include "gauntlet/core/cases/compile_path.h"
#include "gauntlet/core/cases/dispatch_probe.h"
#include "gauntlet/core/cases/graph_step.h"
#include "gauntlet/core/cases/timing.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/models/models.h"
#include "gauntlet/python/compiled.h"

namespace gauntlet {

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

struct Result {
  std::vector<std::string> names;
  std::vector<at::Tensor> tensors;
};

at::Tensor cpu_double(const at::Tensor& t) { return t.detach().to(at::kCPU).contiguous().to(at::kDouble); }

std::string shape_text(const at::Tensor& t) { return "[" + fmt::format("{}", fmt::join(t.sizes(), ", ")) + "]"; }

// Note [First divergent node]: when a model case fails, its forward graph (helpers inlined, no
// passes) is run node by node twice, on the backend from the device inputs and on the CPU in fp64
// from the golden inputs, each node's operation fed from its own run's values, and each tensor a
// node produces is compared with the golden's under the case's tolerance. The first node whose
// output leaves it is named with its kind, its source line and its input shapes: where the
// backend went wrong first (what comes after only carries the error along). Control flow is
// followed: a prim::If takes its branch (a branch the two runs disagree on is named), a
// prim::Loop runs its body once per iteration, and a node inside it is named with its iteration.
// Forward only: a training case whose forward agrees has diverged in its backward.
class DivergenceWalk {
 public:
  using Env = GraphEnv;

  // `file`: the source's name for a zoo model, "" to name each node's own source file (a model
  // file's graph comes from many). `scaled` > 0: a node's output agrees when every element is
  // within scaled * max|golden| (Note [Output quality]), else the tolerance's atol + rtol.
  DivergenceWalk(std::string file, at::ScalarType dtype, const Tolerance& tol, double scaled)
      : file_(std::move(file)), dtype_(dtype), tol_(tol), scaled_(scaled) {}

  std::string run(const torch::jit::Graph& graph, const std::vector<c10::IValue>& device_inputs,
                  const std::vector<c10::IValue>& golden_inputs) {
    for (std::size_t i = 0; i < graph.inputs().size() && i < device_inputs.size(); ++i) {
      dev_[graph.inputs()[i]] = device_inputs[i];
      gold_[graph.inputs()[i]] = golden_inputs[i];
    }
    if (auto found = block(graph.block(), "")) return *found;
    return "none: every node of the forward graph agrees (the divergence is in the backward)";
  }

 private:
  std::string where(const torch::jit::Node* node, const std::string& iteration) const {
    if (file_.empty()) {
      const auto flc = node->sourceRange().file_line_col();
      if (!flc) return fmt::format("{} ({}{})", node->kind().toQualString(), "no source line", iteration);
      const auto& [file, line, col] = *flc;
      (void)col;
      return fmt::format("{} ({}:{}{})", node->kind().toQualString(), std::filesystem::path(file).filename().string(),
                         line, iteration);
    }
    return fmt::format("{} ({}:{}{})", node->kind().toQualString(), file_, source_line(*node), iteration);
  }

  std::optional<std::string> block(const torch::jit::Block* b, const std::string& iteration) {
    for (const torch::jit::Node* node : b->nodes()) {
      if (auto found = visit(node, iteration)) return found;
    }
    return std::nullopt;
  }

  std::optional<std::string> visit(const torch::jit::Node* node, const std::string& iteration) {
    const auto kind = node->kind();
    if (kind == torch::jit::prim::If) {
      const bool d = dev_.at(node->input(0)).toBool(), g = gold_.at(node->input(0)).toBool();
      if (d != g)
        return fmt::format("{}: the device takes the {} branch, the golden the other", where(node, iteration),
                           d ? "then" : "else");
      const torch::jit::Block* taken = node->blocks().at(d ? 0 : 1);
      if (auto found = block(taken, iteration)) return found;
      for (std::size_t k = 0; k < node->outputs().size(); ++k) {
        dev_[node->outputs()[k]] = dev_.at(taken->outputs()[k]);
        gold_[node->outputs()[k]] = gold_.at(taken->outputs()[k]);
      }
      return std::nullopt;
    }
    if (kind == torch::jit::prim::Loop) {
      const torch::jit::Block* body = node->blocks().at(0);
      const std::int64_t trips = dev_.at(node->input(0)).toInt();
      const std::size_t carried = node->inputs().size() - 2;
      bool cond = dev_.at(node->input(1)).toBool();
      for (std::size_t k = 0; k < carried; ++k) {
        dev_[body->inputs()[1 + k]] = dev_.at(node->input(2 + k));
        gold_[body->inputs()[1 + k]] = gold_.at(node->input(2 + k));
      }
      for (std::int64_t i = 0; cond && i < trips; ++i) {
        dev_[body->inputs()[0]] = i;
        gold_[body->inputs()[0]] = i;
        if (auto found = block(body, fmt::format("{}, iteration {}", iteration, i))) return found;
        cond = dev_.at(body->outputs()[0]).toBool();
        for (std::size_t k = 0; k < carried; ++k) {
          dev_[body->inputs()[1 + k]] = dev_.at(body->outputs()[1 + k]);
          gold_[body->inputs()[1 + k]] = gold_.at(body->outputs()[1 + k]);
        }
      }
      for (std::size_t k = 0; k < carried; ++k) {
        dev_[node->outputs()[k]] = dev_.at(body->inputs()[1 + k]);
        gold_[node->outputs()[k]] = gold_.at(body->inputs()[1 + k]);
      }
      return std::nullopt;
    }
    if (!node->blocks().empty())
      return fmt::format("none found before {}, where the node-by-node check stops", where(node, iteration));
    if (kind == torch::jit::prim::Constant) {
      const c10::IValue value = *torch::jit::toIValue(node->output());
      dev_[node->output()] = value;
      gold_[node->output()] = value;
      return std::nullopt;
    }
    std::string shapes;
    try {
      step(node, dev_, &shapes);
      step(node, gold_, nullptr);
    } catch (const std::exception& e) {  // the walk cannot go on: say where it stopped
      std::string what = e.what();
      throw std::runtime_error(fmt::format("at {}: {}", where(node, iteration), what.substr(0, what.find('\n'))));
    }
    for (const torch::jit::Value* v : node->outputs()) {
      if (!dev_.at(v).isTensor() || !gold_.at(v).isTensor()) continue;
      const at::Tensor a = cpu_double(dev_.at(v).toTensor());
      const at::Tensor g = cpu_double(gold_.at(v).toTensor());
      std::string why;
      if (a.sizes() != g.sizes()) {
        why = "shape " + shape_text(a) + " where the golden has " + shape_text(g);
      } else if (g.numel() > 0) {
        const at::Tensor c =
            at::isFloatingType(gold_.at(v).toTensor().scalar_type()) ? g.to(dtype_).to(at::kDouble) : g;
        const at::Tensor diff = (a - c).abs();
        at::Tensor allowed = tol_.atol + tol_.rtol * c.abs();
        if (scaled_ > 0) {
          const at::Tensor ca = c.abs();
          const double scale = at::where(at::isfinite(ca), ca, at::zeros_like(ca)).max().item<double>();
          allowed = at::full_like(c, scaled_ * (scale > 0 ? scale : 1.0));
        }
        const at::Tensor bad = (diff > allowed) | (at::isnan(a) != at::isnan(c));
        if (bad.any().item<bool>()) {
          const double err = at::where(at::isfinite(diff), diff, at::zeros_like(diff)).max().item<double>();
          why = fmt::format("{} of {} elements outside tolerance, max abs err {:.4g}", bad.sum().item<std::int64_t>(),
                            g.numel(), err);
        }
      }
      if (!why.empty())
        return fmt::format("{} inputs {}: {}", where(node, iteration), shapes.empty() ? "-" : shapes, why);
    }
    return std::nullopt;
  }

  // Runs one node in `env`, noting its tensor inputs' shapes.
  static void step(const torch::jit::Node* node, Env& env, std::string* shapes) {
    if (shapes) {
      for (const torch::jit::Value* v : node->inputs()) {
        if (env.at(v).isTensor()) *shapes += (shapes->empty() ? "" : ", ") + shape_text(env.at(v).toTensor());
      }
    }
    step_node(node, env);
  }

  std::string file_;
  at::ScalarType dtype_;
  Tolerance tol_;
  double scaled_ = 0;
  Env dev_, gold_;
};

std::string first_divergent_node(const ModelSpec& spec, const CaseKey& key,
                                 const std::vector<at::Tensor>& device_inputs, const std::vector<at::Tensor>& inputs64,
                                 const Tolerance& tol) {
  auto cu = compile_model(spec);
  const std::shared_ptr<torch::jit::Graph> graph = model_graph(*cu, spec);
  return DivergenceWalk(std::filesystem::path(spec.path).filename().string(),
                        model_dtype(std::string(dtype_name(key.dtype))), tol, 0)
      .run(*graph, std::vector<c10::IValue>(device_inputs.begin(), device_inputs.end()),
           std::vector<c10::IValue>(inputs64.begin(), inputs64.end()));
}

// Note [Shape sequences]: a compile case with seq=<n> feeds the compiled model, after its first
// call, batch sizes b*2, b*3, b*2, b*4, b*3, ...: n shapes it has not seen (each a recompile on a
// backend that compiles per shape) with a revisit after each (which must hit its cache). Every
// call's outputs are checked against the golden of its own inputs.
std::vector<std::int64_t> shape_sequence(int n) {
  std::vector<std::int64_t> scales;
  for (int k = 0; k < n; ++k) {
    scales.push_back(k + 2);
    if (k > 0) scales.push_back(k + 1);
  }
  return scales;
}

using Forward = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// One call through `forward`: the outputs, and in train mode the gradients of the fixed-weight
// loss with respect to every trainable weight (on the calling thread: Note [Backward on the
// calling thread] in runner.cpp).
Result call_with(const Forward& forward, const ModelSpec& spec, const std::vector<at::Tensor>& inputs,
                 const std::vector<at::Tensor>& loss_weights, bool train) {
  std::vector<at::Tensor> args = inputs;
  std::vector<at::Tensor> leaves;
  const auto trainable = spec.trainable_args();
  if (train) {
    for (std::size_t i : trainable) {
      args[i] = inputs[i].detach().requires_grad_(true);
      leaves.push_back(args[i]);
    }
  }
  Result r;
  std::vector<at::Tensor> outs = forward(args);
  for (std::size_t k = 0; k < outs.size(); ++k) {
    r.names.push_back("out" + std::to_string(k));
    r.tensors.push_back(outs[k].detach());
  }
  if (train) {
    at::Tensor loss;
    for (std::size_t k = 0; k < outs.size(); ++k) {
      if (!at::isFloatingType(outs[k].scalar_type())) continue;
      at::Tensor term = (outs[k] * loss_weights.at(k).to(outs[k].device())).sum();
      loss = loss.defined() ? loss + term : term;
    }
    std::vector<at::Tensor> grads = torch::autograd::grad({loss}, leaves, /*grad_outputs=*/{}, /*retain_graph=*/false,
                                                          /*create_graph=*/false, /*allow_unused=*/true);
    for (std::size_t j = 0; j < trainable.size(); ++j) {
      r.names.push_back("grad." + spec.args[trainable[j]].name);
      r.tensors.push_back(grads[j].defined() ? grads[j] : at::zeros_like(inputs[trainable[j]]));
    }
  }
  return r;
}

// The golden for one set of inputs: fp64 on the CPU, op by op, from the same (rounded) values.
struct Golden {
  std::vector<at::Tensor> inputs64;
  std::vector<at::Tensor> loss_weights;  // in the case dtype, for the device
  Result result;
};

Golden make_golden(const ModelSpec& spec, const CaseKey& key, const std::vector<at::Tensor>& inputs,
                   at::ScalarType dtype, bool train) {
  ScopedExecutor op_by_op(ExecutorSettings::op_by_op());
  Golden g;
  for (const at::Tensor& t : inputs) g.inputs64.push_back(at::isFloatingType(t.scalar_type()) ? t.to(at::kDouble) : t);
  std::vector<at::Tensor> loss_weights64;
  auto cu = compile_model(spec);
  const Forward eager = [&](const std::vector<at::Tensor>& a) { return run_model(*cu, spec, a); };
  const Result probe = call_with(eager, spec, g.inputs64, {}, false);
  for (std::size_t k = 0; k < probe.tensors.size(); ++k) {
    const at::Tensor w =
        splitmix_uniform(probe.tensors[k].sizes(), dtype, key.id() ^ (0x1055'0000'0000'0001ULL * (k + 1)));
    g.loss_weights.push_back(w);
    loss_weights64.push_back(w.to(at::kDouble));
  }
  auto golden_cu = compile_model(spec);
  const Forward golden_eager = [&](const std::vector<at::Tensor>& a) { return run_model(*golden_cu, spec, a); };
  g.result = call_with(golden_eager, spec, g.inputs64, loss_weights64, train);
  return g;
}

// Adds every output and gradient of `actual` to the comparison; a shape mismatch is the error.
std::optional<std::string> compare_into(Comparison& cmp, std::vector<at::Tensor>& keep, const Result& actual,
                                        const Result& golden, at::ScalarType dtype, DType d, const Tolerance& tol,
                                        const std::string& suffix) {
  for (std::size_t i = 0; i < golden.tensors.size(); ++i) {
    enter_stage(Stage::Outputs);
    const at::Tensor a = cpu_double(actual.tensors.at(i));
    enter_stage(Stage::Compare);
    const at::Tensor g = cpu_double(golden.tensors[i]);
    if (a.sizes() != g.sizes()) {
      return fmt::format("{}{}: shape [{}] where the golden has [{}]", golden.names[i], suffix,
                         fmt::join(a.sizes(), ", "), fmt::join(g.sizes(), ", "));
    }
    const at::Tensor c = g.to(dtype).to(at::kDouble).contiguous();
    keep.insert(keep.end(), {a, g, c});
    cmp.add({golden.names[i] + suffix, a.data_ptr<double>(), g.data_ptr<double>(), c.data_ptr<double>(), g.numel(), d},
            tol);
  }
  return std::nullopt;
}

}  // namespace

std::string first_divergent_node(const torch::jit::Graph& graph, const std::vector<c10::IValue>& device_inputs,
                                 const std::vector<c10::IValue>& golden_inputs, at::ScalarType dtype, double scaled) {
  return DivergenceWalk("", dtype, Tolerance{}, scaled).run(graph, device_inputs, golden_inputs);
}

void run_model_case(const CaseKey& key, Backend& backend, const RunnerConfig& cfg, Outcome& out, CaseTrace& trace,
                    CaseDetail* detail) {
  const ModelSpec& spec = model_catalog().get(key.target);
  const bool compiled = key.exec == "compile";
  const bool train = key.mode == Mode::EagerBwd;
  const at::ScalarType dtype = model_dtype(std::string(dtype_name(key.dtype)));
  const std::vector<at::Tensor> inputs = make_model_inputs(spec, key.config, dtype, key.id());
  out.work_items = spec.config(key.config).sizes.at("b");  // samples a call processes

  ScopedExecutor op_by_op(ExecutorSettings::op_by_op());
  const auto t_golden = Clock::now();
  const Golden golden = make_golden(spec, key, inputs, dtype, train);
  out.timing.golden_us = us_since(t_golden);

  // The device: op by op through a fresh compilation unit (its executor takes the settings
  // above), or the backend's compile path (Note [Compile path]).
  trace.step = "moving inputs to the device";
  enter_stage(Stage::Inputs);
  const MemoryBaseline memory_baseline(backend);  // Note [Case peak memory] in backend.h
  std::vector<at::Tensor> device_inputs;
  for (const at::Tensor& t : inputs) device_inputs.push_back(backend.to_device(t));
  trace.step.clear();
  auto cu = compile_model(spec);
  std::unique_ptr<CompiledGraph> program;
  Forward forward = [&](const std::vector<at::Tensor>& a) { return run_model(*cu, spec, a); };
  if (compiled) {
    enter_stage(Stage::Compile);
    backend.prepare_compile_path();  // before the program and the clock: Note on prepare_compile_path
    // Named by its file's name: a stored reason does not carry the checkout's path (two hosts'
    // releases compare).
    python::Program source{
        spec.source, std::filesystem::path(spec.path).filename().string(), spec.function, {}, std::nullopt};
    if (auto shapes = key.args.find("shapes"); shapes != key.args.end()) source.dynamic = shapes->second == "dynamic";
    program = backend.compile_graph(model_graph(*cu, spec), &source);
    forward = [&](const std::vector<at::Tensor>& a) {
      std::vector<c10::IValue> values = program->run(std::vector<c10::IValue>(a.begin(), a.end()));
      std::vector<at::Tensor> outs;
      for (const c10::IValue& v : values) {
        for (at::Tensor& t : flatten_model_result(v)) outs.push_back(std::move(t));
      }
      return outs;
    };
  }
  backend.take_fallback_ops();
  backend.reset_peak_memory();
  backend.reset_device_time();
  auto t0 = Clock::now();
  auto obs = observe_dispatch(backend);
  std::optional<ExecutedOps> executed(std::in_place);  // Note [Executed ops]: the first call's
  Result actual;
  enter_stage(compiled ? Stage::Compiled : Stage::Op);
  try {
    actual = call_with(forward, spec, device_inputs, golden.loss_weights, train);
    backend.synchronize();
  } catch (...) {
    trace.note_raise(obs.get());
    out.fallback_ops = case_fallbacks(backend, obs.get(), cfg.fallback_source);
    throw;
  }
  out.timing.first_us = us_since(t0);
  out.executed_ops = executed->records();
  executed.reset();
  std::vector<std::string> dispatcher_fallbacks = obs ? obs->fallback_ops() : std::vector<std::string>{};
  obs.reset();
  out.sim_time_us = backend.device_time_us();

  // The check, every output and gradient under one tolerance.
  Tolerance tol = default_tolerance(key.dtype);
  if (cfg.tolerances) tol = cfg.tolerances->lookup(key, key.dtype, backend.profile());
  out.rtol = tol.rtol;
  out.atol = tol.atol;
  out.tolerance_profile = tol.source;
  if (detail && detail->keep_tensors) {  // Note [Case tensors]
    CaseTensors& kept = detail->tensors;
    for (std::size_t i = 0; i < inputs.size(); ++i) kept.inputs.push_back({spec.args[i].name, inputs[i]});
    for (std::size_t i = 0; i < golden.result.tensors.size(); ++i) {
      kept.golden.push_back({golden.result.names[i], golden.result.tensors[i]});
      if (i < actual.tensors.size()) kept.actual.push_back({golden.result.names[i], actual.tensors[i].detach().cpu()});
      kept.dtypes.push_back(
          at::isFloatingType(golden.result.tensors[i].scalar_type()) ? dtype : golden.result.tensors[i].scalar_type());
      kept.tolerances.push_back(tol);
    }
    if (train) {
      for (std::size_t k = 0; k < golden.loss_weights.size(); ++k)
        kept.loss_weights.push_back({"out" + std::to_string(k), golden.loss_weights[k]});
    }
  }
  // What the compile path did, recorded however the case ends from here on (read once the shape
  // sequence's calls are done: their recompiles are the case's).
  auto record_compile_path = [&] {
    if (!program) return;
    record_compile_stats(program->stats(), out);
    keep_compiled_program(*program, detail);
  };
  Comparison cmp;
  std::vector<at::Tensor> keep;  // the arrays the views point into
  if (auto problem = compare_into(cmp, keep, actual, golden.result, dtype, key.dtype, tol, "")) {
    out.status = Status::Fail;
    out.error = *problem;
    record_compile_path();
    return;
  }

  // A shape sequence (Note [Shape sequences]), each call checked against its own golden.
  if (auto seq = key.args.find("seq"); seq != key.args.end()) {
    std::map<std::int64_t, Golden> goldens;
    for (std::int64_t scale : shape_sequence(std::stoi(seq->second))) {
      const std::vector<at::Tensor> in = make_model_inputs(spec, key.config, dtype, key.id(), scale);
      auto it = goldens.find(scale);
      if (it == goldens.end()) it = goldens.emplace(scale, make_golden(spec, key, in, dtype, train)).first;
      std::vector<at::Tensor> dev;
      enter_stage(Stage::Inputs);
      for (const at::Tensor& t : in) dev.push_back(backend.to_device(t));
      enter_stage(compiled ? Stage::Compiled : Stage::Op);
      const Result r = call_with(forward, spec, dev, it->second.loss_weights, train);
      if (auto problem =
              compare_into(cmp, keep, r, it->second.result, dtype, key.dtype, tol, fmt::format("@b*{}", scale))) {
        out.status = Status::Fail;
        out.error = *problem;
        record_compile_path();
        return;
      }
    }
  }
  out.metrics = cmp.metrics();
  if (out.metrics.mismatches > 0 || !out.metrics.nan_inf_ok) {
    out.status = Status::Fail;
    out.error = fmt::format("{} of {} elements outside tolerance (rtol={:g}, atol={:g}), worst {}",
                            out.metrics.mismatches, out.metrics.numel, tol.rtol, tol.atol, out.metrics.worst);
    std::string first;
    try {
      first = first_divergent_node(spec, key, device_inputs, golden.inputs64, tol);
      if (compiled && first.rfind("none", 0) == 0) {
        first += "; op by op every node agrees, so the difference comes from the compile path itself";
      }
    } catch (const std::exception& e) {
      std::string what = e.what();
      std::replace(what.begin(), what.end(), '\n', ' ');
      first = "unknown: the node-by-node check failed: " + what.substr(0, 300);
    }
    out.error += "; first divergent node: " + first.substr(0, first.find('\n'));
  }

  // Steady state, as every case is timed (Note [Timing methodology]), on the case's own inputs.
  // A compile case's first call (compilation) does not eat into the repetitions' time budget.
  std::vector<double> reps = time_repetitions(cfg, compiled ? 0.0 : out.timing.first_us / 1000, [&] {
    call_with(forward, spec, device_inputs, golden.loss_weights, train);
    backend.synchronize();
  });
  out.peak_mem_bytes = memory_baseline.peak_above(backend);
  out.fallback_ops = backend.take_fallback_ops();
  const bool use_backend = cfg.fallback_source == FallbackSource::Backend ||
                           (cfg.fallback_source == FallbackSource::Auto && backend.reports_fallbacks());
  if (!use_backend && backend.dispatch_key()) out.fallback_ops = std::move(dispatcher_fallbacks);
  if (!reps.empty()) record_repetitions(out.timing, std::move(reps));
  record_compile_path();
}

}  // namespace gauntlet

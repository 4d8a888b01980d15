// Note [Model file cases]: a case of a model file (Note [Model files] in gauntlet/models/model_file.h),
// model/<name>.<hash>/<dtype>/<config>/eager/infer:
//   - inputs from make_model_file_inputs(seed = the case id), rounded to the case dtype;
//   - the golden: the same file loaded again on the CPU, its weights refilled from the same seed
//     and rounded to the case dtype, then every floating tensor in the manifest's golden dtype
//     (f64 unless the model cannot run in it), run from the same rounded inputs;
//   - the device: the module's tensors moved slot by slot (Note [Moving modules]) and forward()
//     run under InferenceMode, as a user's inference does (custom ops such as torchvision::nms
//     reach a backend's fallback only there on libtorch 1.13);
//   - each output judged as its manifest says (Note [Output quality]);
//   - timing as for op cases (Note [Timing methodology]): the first call apart, then repetitions;
//     loading the file is not timed. Throughput counts samples: the config's batch size.
//
// Note [Migration scenarios]: what a team moving its model to the device tests, each a case of
// its own (docs/models.md "Scenarios"):
//   .../eager/infer                    batch inference at the config's batch size: throughput;
//   .../eager/infer/scenario=online    batch 1, kOnlineCalls calls (at most kOnlineBudgetS seconds,
//                                      at least kOnlineMinCalls): p50 and p99 latency, the first
//                                      call apart;
//   .../eager/train                    kTrainSteps SGD steps (lr kTrainLr, no momentum) of every
//                                      floating parameter on loss = sum_k mean((out_k - t_k)^2)
//                                      (fixed targets t_k uniform in [-1, 1] from the case id: a
//                                      loss bounded below, as a real one is), in eval mode
//                                      (dropout off, so the fp64 golden doing the same steps on
//                                      the CPU is comparable): the loss trajectory and the final
//                                      weights are judged, each step timed;
//   .../eager/train/scenario=finetune  the same with only the last top-level submodule that has
//                                      parameters trainable (a classifier's head), the rest frozen.
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "gauntlet/base/stage.h"
#include "gauntlet/core/cases/compare.h"
#include "gauntlet/core/cases/dispatch_probe.h"
#include "gauntlet/core/cases/model_case.h"
#include "gauntlet/core/cases/timing.h"
#include "gauntlet/models/model_file.h"

namespace gauntlet {

namespace {

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

std::vector<at::Tensor> call_forward(torch::jit::Module& m, const std::vector<at::Tensor>& inputs) {
  c10::InferenceMode inference;
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  return flatten_model_outputs(m.forward(args));
}

// Note [Output quality]: deep networks are not judged element by element against a fixed
// tolerance: resnet50 on `sim` has a largest error of 0.4% of its largest logit, yet 12 of 1,000
// logits (which reach 38) fall outside atol = rtol = 0.05. Per output, the manifest chooses:
//   scaled (default)  every element within tolerance * max|golden|, as Dynamo's accuracy check
//                     scales its tolerance to the output; the tolerance is the manifest's for the
//                     output, else tolerances.yaml's rule for the family model_file (its rtol),
//                     else per dtype f64 1e-6, f32 1e-2, f16 2e-2, bf16 5e-2;
//   topk              logits over the last dim (or `dim`: a segmentation's classes at every
//                     pixel): each row's top-1 class agrees (a different class whose golden logit
//                     is within the scaled tolerance of the top one is a tie, not a
//                     disagreement); the top-5 overlap is reported;
//   cosine            the cosine similarity of the whole output is at least 1 - tolerance (a
//                     tenth of the scaled one unless the manifest gives it);
//   skip              data-dependent outputs (a detector's box set): shape and values not judged.
// Every judged output's NaN/Inf must match the golden's. The error metrics (largest absolute and
// relative error, the worst element) are measured for every judged output whatever its rule.
struct Judged {
  std::int64_t bad = 0;  // elements (scaled), rows (topk) or 1 (cosine) that fail the rule
  std::string problem;   // the first line of a failure, "" when it passes
  std::string quality;   // what was measured, for the notes
};

// The scaled tolerance of the case: tolerances.yaml's rule for the family model_file on this
// backend (its rtol), else the built-in default per dtype. A cosine output allows a tenth of it.
double scaled_tolerance(const CaseKey& key, at::ScalarType dtype, const RunnerConfig& cfg, const Backend& backend,
                        std::string& source) {
  if (cfg.tolerances) {
    const Tolerance t = cfg.tolerances->lookup(key, key.dtype, backend.profile());
    if (t.source != "default") {
      source = t.source;
      return t.rtol;
    }
  }
  source = "model file default";
  switch (dtype) {
    case at::kDouble:
      return 1e-6;
    case at::kHalf:
      return 2e-2;
    case at::kBFloat16:
      return 5e-2;
    default:
      return 1e-2;
  }
}

double output_tolerance(const ModelFileOutput& o, double scaled) {
  if (o.tolerance) return *o.tolerance;
  return o.compare == OutputCompare::Cosine ? scaled / 10 : scaled;
}

std::string index_text(std::int64_t flat, at::IntArrayRef sizes) {
  std::vector<std::int64_t> idx(sizes.size());
  for (std::size_t d = sizes.size(); d-- > 0;) {
    const std::int64_t s = std::max<std::int64_t>(sizes[d], 1);
    idx[d] = flat % s;
    flat /= s;
  }
  return fmt::format("[{}]", fmt::join(idx, ","));
}

Judged judge(const ModelFileOutput& spec, const at::Tensor& actual64, const at::Tensor& golden64, double tol,
             Metrics& m, double& worst_score) {
  Judged j;
  const std::int64_t n = golden64.numel();
  const double* a = actual64.data_ptr<double>();
  const double* g = golden64.data_ptr<double>();
  double scale = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::isfinite(g[i])) scale = std::max(scale, std::fabs(g[i]));
  }
  const double allowed = tol * (scale > 0 ? scale : 1.0);
  std::int64_t outside = 0, nonfinite = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const bool fa = std::isfinite(a[i]), fg = std::isfinite(g[i]);
    if (!fa || !fg) {
      const bool same = (std::isnan(a[i]) && std::isnan(g[i])) || (!std::isnan(a[i]) && a[i] == g[i]);
      if (!same) {
        ++nonfinite;
        m.nan_inf_ok = false;
      }
      continue;
    }
    const double err = std::fabs(a[i] - g[i]);
    m.max_abs_err = std::max(m.max_abs_err, err);
    if (g[i] != 0) m.max_rel_err = std::max(m.max_rel_err, err / std::fabs(g[i]));
    if (err > allowed) ++outside;
    const double score = err / allowed;
    if (score > worst_score) {
      worst_score = score;
      m.worst = spec.name + index_text(i, golden64.sizes());
    }
  }
  const double rel_scale = scale > 0 ? m.max_abs_err / scale : 0;
  switch (spec.compare) {
    case OutputCompare::Skip:
      break;
    case OutputCompare::Scaled: {
      double largest = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        if (std::isfinite(a[i]) && std::isfinite(g[i])) largest = std::max(largest, std::fabs(a[i] - g[i]));
      }
      j.bad = outside + nonfinite;
      j.quality = fmt::format("{} largest error {:.3g} of max|golden| {:.4g} (allowed {:g})", spec.name,
                              scale > 0 ? largest / scale : largest, scale, tol);
      if (j.bad) {
        j.problem =
            fmt::format("{}: {} of {} elements outside {:g} x max|golden| ({:.4g}){}", spec.name, j.bad, n, tol, scale,
                        nonfinite ? fmt::format(", {} NaN/Inf where the golden has none", nonfinite) : "");
      }
      break;
    }
    case OutputCompare::TopK: {
      const std::int64_t classes = golden64.dim() ? golden64.size(-1) : 1;
      const std::int64_t rows = classes ? n / classes : 0;
      const std::int64_t k = std::min<std::int64_t>(5, classes);
      std::int64_t agree = 0;
      double overlap = 0;
      std::string first_bad;
      for (std::int64_t r = 0; r < rows; ++r) {
        const double* ar = a + r * classes;
        const double* gr = g + r * classes;
        std::vector<std::int64_t> ia(static_cast<std::size_t>(classes)), ig(ia.size());
        for (std::int64_t c = 0; c < classes; ++c)
          ia[static_cast<std::size_t>(c)] = ig[static_cast<std::size_t>(c)] = c;
        auto by = [](const double* v) {
          return [v](std::int64_t x, std::int64_t y) {
            const double vx = std::isnan(v[x]) ? -INFINITY : v[x], vy = std::isnan(v[y]) ? -INFINITY : v[y];
            return vx > vy || (vx == vy && x < y);
          };
        };
        std::partial_sort(ia.begin(), ia.begin() + k, ia.end(), by(ar));
        std::partial_sort(ig.begin(), ig.begin() + k, ig.end(), by(gr));
        const std::int64_t ta = ia[0], tg = ig[0];
        const bool tie = gr[ta] >= gr[tg] - allowed;
        if (ta == tg || tie) {
          ++agree;
        } else if (first_bad.empty()) {
          first_bad = fmt::format("row {}: class {} where the golden has {} (golden logits {:.4g} vs {:.4g})", r, ta,
                                  tg, gr[ta], gr[tg]);
        }
        std::int64_t common = 0;
        for (std::int64_t x = 0; x < k; ++x) {
          for (std::int64_t y = 0; y < k; ++y)
            common += ia[static_cast<std::size_t>(x)] == ig[static_cast<std::size_t>(y)];
        }
        overlap += double(common) / double(k);
      }
      j.bad = rows - agree + nonfinite;
      j.quality = fmt::format("{} top-1 {}/{}, top-{} overlap {:.2f}, largest error {:.3g} of max|golden|", spec.name,
                              agree, rows, k, rows ? overlap / double(rows) : 1.0, rel_scale);
      if (rows - agree > 0)
        j.problem =
            fmt::format("{}: top-1 class differs in {} of {} rows ({})", spec.name, rows - agree, rows, first_bad);
      else if (nonfinite)
        j.problem = fmt::format("{}: {} NaN/Inf where the golden has none", spec.name, nonfinite);
      break;
    }
    case OutputCompare::Cosine: {
      double dot = 0, na = 0, ng = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(a[i]) || !std::isfinite(g[i])) continue;
        dot += a[i] * g[i];
        na += a[i] * a[i];
        ng += g[i] * g[i];
      }
      const double cosine = na > 0 && ng > 0 ? dot / std::sqrt(na * ng) : (na == ng ? 1.0 : 0.0);
      j.bad = (cosine < 1 - tol ? 1 : 0) + nonfinite;
      j.quality = fmt::format("{} cosine {:.6f} (allowed >= {:g})", spec.name, cosine, 1 - tol);
      if (cosine < 1 - tol)
        j.problem = fmt::format("{}: cosine similarity {:.6f} below {:g}", spec.name, cosine, 1 - tol);
      else if (nonfinite)
        j.problem = fmt::format("{}: {} NaN/Inf where the golden has none", spec.name, nonfinite);
      break;
    }
  }
  return j;
}

// A golden that cannot tell a right answer from a wrong one: constant, all zero or vanishing.
std::string degenerate(const std::string& name, const at::Tensor& g64) {
  if (g64.numel() == 0) return "";
  const at::Tensor finite = g64.masked_select(at::isfinite(g64));
  if (finite.numel() == 0) return name + " has no finite value";
  const double mx = finite.abs().max().item<double>();
  if (mx < 1e-6) return fmt::format("{} is all (near) zero (max |value| {:.3g})", name, mx);
  if (finite.numel() > 1 && (finite.max() - finite.min()).item<double>() == 0) return name + " is constant";
  return "";
}

void append_note(std::string& notes, const std::string& note) {
  if (note.empty()) return;
  notes += (notes.empty() ? "" : "; ") + note;
}

constexpr int kOnlineCalls = 100, kOnlineMinCalls = 20;
constexpr double kOnlineBudgetS = 30;
constexpr int kTrainSteps = 5;
constexpr double kTrainLr = 1e-3;

// The nearest-rank quantile q of `v` (not empty).
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// The parameters a training scenario updates, by name: every floating parameter, or for
// fine-tuning those of the last top-level submodule that has any.
std::vector<std::pair<std::string, at::Tensor>> trainable(const torch::jit::Module& m, bool finetune) {
  std::string prefix;
  if (finetune) {
    for (const auto& child : m.named_children()) {
      if (child.value.parameters(/*recurse=*/true).size() > 0) prefix = child.name + ".";
    }
  }
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& p : m.named_parameters(/*recurse=*/true)) {
    if (!at::isFloatingType(p.value.scalar_type())) continue;
    if (!prefix.empty() && p.name.rfind(prefix, 0) != 0) continue;
    out.emplace_back(p.name, p.value);
  }
  return out;
}

struct Training {
  std::vector<double> losses;                               // before each step
  std::vector<double> step_us;                              // each step: forward, backward, update
  std::vector<std::pair<std::string, at::Tensor>> weights;  // the trained parameters after the last step
};

Training train_steps(torch::jit::Module& m, const std::vector<at::Tensor>& inputs,
                     const std::vector<at::Tensor>& targets, const std::vector<bool>& in_loss, bool finetune,
                     Backend* backend) {
  Training t;
  t.weights = trainable(m, finetune);
  if (t.weights.empty()) throw std::runtime_error("the model has no floating parameter to train");
  for (const auto& p : m.named_parameters(/*recurse=*/true)) {
    if (at::isFloatingType(p.value.scalar_type())) p.value.requires_grad_(false);
  }
  std::vector<at::Tensor> leaves;
  for (auto& [name, w] : t.weights) leaves.push_back(w.requires_grad_(true));
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  for (int step = 0; step < kTrainSteps; ++step) {
    const auto t0 = Clock::now();
    const std::vector<at::Tensor> outs = flatten_model_outputs(m.forward(args));
    at::Tensor loss;
    for (std::size_t k = 0; k < outs.size() && k < targets.size(); ++k) {
      if (!in_loss[k] || !at::isFloatingType(outs[k].scalar_type()) || outs[k].sizes() != targets[k].sizes()) continue;
      at::Tensor term = (outs[k] - targets[k]).pow(2).mean();
      loss = loss.defined() ? loss + term : term;
    }
    if (!loss.defined()) throw std::runtime_error("no floating output to train on");
    const std::vector<at::Tensor> grads = torch::autograd::grad({loss}, leaves, {}, /*retain_graph=*/false,
                                                                /*create_graph=*/false, /*allow_unused=*/true);
    {
      at::NoGradGuard no_grad;
      for (std::size_t i = 0; i < leaves.size(); ++i) {
        if (grads[i].defined()) leaves[i].sub_(grads[i] * kTrainLr);
      }
    }
    t.losses.push_back(loss.item<double>());  // also waits for the device
    if (backend) backend->synchronize();
    t.step_us.push_back(us_since(t0));
  }
  return t;
}

void run_training(const ModelFileSpec& spec, const CaseKey& key, Backend& backend, const RunnerConfig& cfg,
                  at::ScalarType dtype, at::ScalarType golden_dtype, const std::vector<at::Tensor>& inputs,
                  bool finetune, Outcome& out, CaseTrace& trace);

}  // namespace

namespace {

// What a model's graph pins to a device or dtype, when the backend has a device of its own
// ("" when nothing that matters): the note an error on the device gets.
std::string fixed_devices_note(const torch::jit::Module& module, Backend& backend, at::ScalarType dtype) {
  if (!backend.dispatch_key()) return "";  // a device of its own: pinned CPU tensors or dtypes matter
  const std::vector<std::string> found = fixed_devices_and_dtypes(module);
  std::vector<std::string> relevant;
  for (const std::string& f : found) {
    if (f.find("device cpu") != std::string::npos || f.find(c10::toString(dtype)) == std::string::npos)
      relevant.push_back(f);
  }
  if (relevant.empty()) return "";
  return fmt::format("the graph makes tensors on a fixed device or dtype ({})", fmt::join(relevant, ", "));
}

// The check, output by output (Note [Output quality]): problems found (none: it passes) and each
// output's quality, into `out`'s metrics and tolerance; warnings on degenerate goldens in `notes`.
struct OutputsJudged {
  std::vector<std::string> problems, quality;
};
OutputsJudged judge_outputs(const ModelFileSpec& spec, const std::vector<at::Tensor>& actual,
                            const std::vector<at::Tensor>& golden, double scaled, Outcome& out, std::string& notes) {
  OutputsJudged r;
  std::vector<std::string>& problems = r.problems;
  std::vector<std::string>& quality = r.quality;
  if (actual.size() != golden.size()) {
    problems.push_back(fmt::format("{} outputs where the golden has {}", actual.size(), golden.size()));
  }
  double worst_score = -1;
  for (std::size_t k = 0; k < std::min(actual.size(), golden.size()); ++k) {
    const ModelFileOutput o = spec.output(k);
    if (o.compare == OutputCompare::Skip) continue;
    const at::Tensor g64 = golden[k].detach().to(at::kCPU).to(at::kDouble).contiguous();
    const at::Tensor a64 = actual[k].detach().to(at::kCPU).to(at::kDouble).contiguous();
    if (a64.sizes() != g64.sizes()) {
      problems.push_back(fmt::format("{}: shape [{}] where the golden has [{}]", o.name, fmt::join(a64.sizes(), ", "),
                                     fmt::join(g64.sizes(), ", ")));
      continue;
    }
    if (o.compare == OutputCompare::TopK && g64.dim() > 0 && o.dim != -1 && o.dim != g64.dim() - 1) {
      // the class dimension last: each position's classes are one row
      if (o.dim < -g64.dim() || o.dim >= g64.dim()) {
        problems.push_back(fmt::format("{}: class dim {} of a {}-d output ({})", o.name, o.dim, g64.dim(), o.where));
        continue;
      }
    }
    const double tol = output_tolerance(o, scaled);
    if (k == 0 || o.compare != OutputCompare::Cosine) {
      out.rtol = 0;
      out.atol = tol;
    }
    const bool move = o.compare == OutputCompare::TopK && g64.dim() > 0 && o.dim != -1 && o.dim != g64.dim() - 1;
    const Judged j = move ? judge(o, a64.movedim(o.dim, -1).contiguous(), g64.movedim(o.dim, -1).contiguous(), tol,
                                  out.metrics, worst_score)
                          : judge(o, a64, g64, tol, out.metrics, worst_score);
    out.metrics.mismatches += j.bad;
    out.metrics.numel += g64.numel();
    if (!j.problem.empty()) problems.push_back(j.problem);
    quality.push_back(j.quality);
    if (auto d = degenerate(o.name, g64); !d.empty())
      append_note(notes, "warning: the golden " + d + ": this output cannot tell right from wrong");
  }
  return r;
}

// Note [Case tensors], with each output's rule.
void keep_model_file_tensors(CaseTensors& kept, const ModelFileSpec& spec, const std::vector<at::Tensor>& inputs,
                             const std::vector<at::Tensor>& golden, const std::vector<at::Tensor>& actual,
                             at::ScalarType dtype, double scaled, const std::string& tol_source) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    kept.inputs.push_back({i < spec.inputs.size() ? spec.inputs[i].name : "in" + std::to_string(i), inputs[i]});
  }
  for (std::size_t k = 0; k < golden.size(); ++k) {
    const ModelFileOutput o = spec.output(k);
    const at::Tensor g = golden[k].detach().to(at::kCPU);
    kept.golden.push_back({o.name, g});
    if (k < actual.size()) kept.actual.push_back({o.name, actual[k].detach().to(at::kCPU)});
    kept.dtypes.push_back(at::isFloatingType(g.scalar_type()) ? dtype : g.scalar_type());
    const double tol = output_tolerance(o, scaled);
    kept.tolerances.push_back({0, tol, tol_source});
    kept.rules.push_back({output_compare_name(o.compare), tol, o.dim});
  }
}

// Note [First divergent node], on the module's forward graph with its submodules inlined.
std::string first_divergence(torch::jit::Module& module, torch::jit::Module& golden_module,
                             const std::vector<at::Tensor>& device_inputs, const std::vector<at::Tensor>& golden_inputs,
                             at::ScalarType dtype, double scaled) {
  std::string first;
  try {
    std::shared_ptr<torch::jit::Graph> graph = module.get_method("forward").graph()->copy();
    torch::jit::Inline(*graph);
    std::vector<c10::IValue> dev{module._ivalue()}, gold{golden_module._ivalue()};
    dev.insert(dev.end(), device_inputs.begin(), device_inputs.end());
    gold.insert(gold.end(), golden_inputs.begin(), golden_inputs.end());
    c10::InferenceMode inference;
    first = first_divergent_node(*graph, dev, gold, dtype, scaled);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    first = "unknown: the node-by-node check failed: " + what.substr(0, 300);
  }
  return first;
}

// Steady state, as op cases are timed (Note [Timing methodology]); online: a fixed number of
// calls at batch 1, for a p99 (Note [Migration scenarios]). The repetitions' times.
std::vector<double> time_steady_state(torch::jit::Module& module, const std::vector<at::Tensor>& device_inputs,
                                      Backend& backend, const RunnerConfig& cfg, bool online, Outcome& out,
                                      std::string& notes) {
  std::vector<double> reps;
  if (online) {  // Note [Migration scenarios]: a fixed number of calls, for a p99
    const auto t_online = Clock::now();
    while (static_cast<int>(reps.size()) < kOnlineCalls &&
           (static_cast<int>(reps.size()) < kOnlineMinCalls || us_since(t_online) < kOnlineBudgetS * 1e6)) {
      auto t = Clock::now();
      call_forward(module, device_inputs);
      backend.synchronize();
      reps.push_back(us_since(t));
    }
    append_note(notes, fmt::format("online: batch 1, first call {:.4g} us, p50 {:.4g} us, p99 {:.4g} us over {} calls",
                                   out.timing.first_us, quantile(reps, 0.5), quantile(reps, 0.99), reps.size()));
  }
  if (online) return reps;
  return time_repetitions(cfg, out.timing.first_us / 1000, [&] {
    call_forward(module, device_inputs);
    backend.synchronize();
  });
}

}  // namespace

void run_model_file_case(const CaseKey& key, Backend& backend, const RunnerConfig& cfg, Outcome& out, CaseTrace& trace,
                         CaseDetail* detail) {
  const ModelFileSpec* spec = find_model_file(key.target);
  if (!spec) {
    throw std::runtime_error(
        fmt::format("model file {} is not registered in this process: pass the file with run --model "
                    "FILE, a suite's model_files group, or $GAUNTLET_MODEL_FILES",
                    key.target));
  }
  const at::ScalarType dtype = model_dtype(std::string(dtype_name(key.dtype)));
  const at::ScalarType golden_dtype = model_dtype(spec->golden);
  const std::uint64_t seed = key.id();
  const auto scenario_arg = key.args.find("scenario");
  const std::string scenario = scenario_arg != key.args.end() ? scenario_arg->second : "";
  const bool train = key.mode == Mode::EagerBwd, online = scenario == "online";
  out.work_items = online ? 1 : spec->batch(key.config);

  trace.step = "loading the model file";
  const std::vector<at::Tensor> inputs = make_model_file_inputs(*spec, key.config, dtype, seed, online ? 1 : 0);
  if (train) {
    run_training(*spec, key, backend, cfg, dtype, golden_dtype, inputs, scenario == "finetune", out, trace);
    return;
  }
  const auto t_golden = Clock::now();
  std::size_t weightless = 0;
  torch::jit::Module golden_module =
      load_model_module(*spec, dtype, golden_dtype, c10::Device(c10::kCPU), seed, &weightless);
  std::vector<at::Tensor> golden_inputs;
  for (const at::Tensor& t : inputs)
    golden_inputs.push_back(at::isFloatingType(t.scalar_type()) ? t.to(golden_dtype) : t);
  trace.step = "computing the golden on the CPU";
  const std::vector<at::Tensor> golden = call_forward(golden_module, golden_inputs);
  out.timing.golden_us = us_since(t_golden);

  std::string notes;
  if (weightless) append_note(notes, fmt::format("{} weightless tensors refilled from the case seed", weightless));
  trace.step = "moving the model to the device";
  enter_stage(Stage::Inputs);
  const MemoryBaseline memory_baseline(backend);  // Note [Case peak memory] in backend.h
  torch::jit::Module module = load_model_module(*spec, dtype, dtype, backend.device(), seed);
  std::vector<at::Tensor> device_inputs;
  for (const at::Tensor& t : inputs) device_inputs.push_back(backend.to_device(t));
  const std::string fixed = fixed_devices_note(module, backend, dtype);
  trace.step.clear();

  backend.take_fallback_ops();
  backend.reset_peak_memory();
  backend.reset_device_time();
  auto obs = observe_dispatch(backend);
  std::optional<ExecutedOps> executed(std::in_place);  // Note [Executed ops]: the first call's
  const auto t0 = Clock::now();
  std::vector<at::Tensor> actual;
  enter_stage(Stage::Op);
  try {
    actual = call_forward(module, device_inputs);
    backend.synchronize();
  } catch (const std::exception& e) {
    trace.note_raise(obs.get());
    out.fallback_ops = case_fallbacks(backend, obs.get(), cfg.fallback_source);
    if (!fixed.empty()) {
      // onto the error's last line, which is the cause in a TorchScript traceback
      std::string what = e.what();
      while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
      throw std::runtime_error(what + "; note: " + fixed);
    }
    throw;
  }
  out.timing.first_us = us_since(t0);
  out.executed_ops = executed->records();
  executed.reset();
  std::vector<std::string> dispatcher_fallbacks = obs ? obs->fallback_ops() : std::vector<std::string>{};
  obs.reset();
  out.sim_time_us = backend.device_time_us();
  append_note(notes, fixed);

  // The check, output by output (Note [Output quality]).
  std::string tol_source;
  const double scaled = scaled_tolerance(key, dtype, cfg, backend, tol_source);
  out.tolerance_profile =
      tol_source +
      (spec->outputs.empty() ? "" : "; outputs: " + std::filesystem::path(spec->manifest).filename().string());
  enter_stage(Stage::Outputs);  // judging copies each output to the host, then compares it
  const OutputsJudged judged = judge_outputs(*spec, actual, golden, scaled, out, notes);
  enter_stage(Stage::Compare);
  const std::vector<std::string>& problems = judged.problems;
  const std::vector<std::string>& quality = judged.quality;
  if (detail && detail->keep_tensors) {
    keep_model_file_tensors(detail->tensors, *spec, inputs, golden, actual, dtype, scaled, tol_source);
  }
  if (!quality.empty())
    notes = "quality: " + fmt::format("{}", fmt::join(quality, ", ")) + (notes.empty() ? "" : "; " + notes);
  if (!problems.empty()) {
    out.status = Status::Fail;
    out.error = fmt::format("{}", fmt::join(problems, "; "));
    const std::string first = first_divergence(module, golden_module, device_inputs, golden_inputs, dtype, scaled);
    out.error += "; first divergent node: " + first.substr(0, first.find('\n'));
  }

  std::vector<double> reps = time_steady_state(module, device_inputs, backend, cfg, online, out, notes);
  out.peak_mem_bytes = memory_baseline.peak_above(backend);
  out.fallback_ops = backend.take_fallback_ops();
  const bool use_backend = cfg.fallback_source == FallbackSource::Backend ||
                           (cfg.fallback_source == FallbackSource::Auto && backend.reports_fallbacks());
  if (!use_backend && backend.dispatch_key()) out.fallback_ops = std::move(dispatcher_fallbacks);
  if (!reps.empty()) record_repetitions(out.timing, std::move(reps));
  out.reason += (out.reason.empty() || notes.empty() ? "" : "; ") + notes;
}

namespace {

// Note [Migration scenarios], training: the device and the golden each take kTrainSteps steps
// from the same weights and inputs; the loss trajectory (relative to the largest loss) and each
// trained tensor (its relative error ||a - g|| / ||g||) are judged with the scaled tolerance of
// the case dtype.
void run_training(const ModelFileSpec& spec, const CaseKey& key, Backend& backend, const RunnerConfig& cfg,
                  at::ScalarType dtype, at::ScalarType golden_dtype, const std::vector<at::Tensor>& inputs,
                  bool finetune, Outcome& out, CaseTrace& trace) {
  const std::uint64_t seed = key.id();
  const auto t_golden = Clock::now();
  std::size_t weightless = 0;
  torch::jit::Module golden_module =
      load_model_module(spec, dtype, golden_dtype, c10::Device(c10::kCPU), seed, &weightless);
  std::vector<at::Tensor> golden_inputs;
  for (const at::Tensor& t : inputs)
    golden_inputs.push_back(at::isFloatingType(t.scalar_type()) ? t.to(golden_dtype) : t);
  trace.step = "training the golden on the CPU";
  std::vector<at::Tensor> shapes = call_forward(golden_module, golden_inputs);
  const MemoryBaseline memory_baseline(backend);  // Note [Case peak memory] in backend.h
  std::vector<at::Tensor> t_dev, t_gold;          // the loss targets
  std::vector<bool> in_loss;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const at::Tensor w = splitmix_uniform(shapes[k].sizes(), dtype, seed ^ (0x1055'0000'0000'0001ULL * (k + 1)));
    t_gold.push_back(w.to(golden_dtype));
    t_dev.push_back(backend.to_device(w));
    in_loss.push_back(spec.output(k).compare != OutputCompare::Skip);
  }
  const Training golden = train_steps(golden_module, golden_inputs, t_gold, in_loss, finetune, nullptr);
  out.timing.golden_us = us_since(t_golden);
  for (double l : golden.losses) {
    // A golden that diverges cannot judge a device: an ERROR, not a verdict on the backend.
    if (!std::isfinite(l)) {
      throw std::runtime_error(
          fmt::format("the golden's training diverged on the CPU (losses {:.6g}): this model's "
                      "initialisation and the scenario's learning rate ({:g}) do not train",
                      fmt::join(golden.losses, " "), kTrainLr));
    }
  }

  trace.step = "moving the model to the device";
  enter_stage(Stage::Inputs);
  torch::jit::Module module = load_model_module(spec, dtype, dtype, backend.device(), seed);
  std::vector<at::Tensor> device_inputs;
  for (const at::Tensor& t : inputs) device_inputs.push_back(backend.to_device(t));
  trace.step.clear();
  backend.take_fallback_ops();
  backend.reset_peak_memory();
  backend.reset_device_time();
  auto obs = observe_dispatch(backend);
  Training actual;
  {
    // Note [Executed ops]: every step's, as this thread runs them (a backend's autograd device
    // thread runs the backward's ops elsewhere)
    ExecutedOps executed;
    enter_stage(Stage::Op);
    try {
      actual = train_steps(module, device_inputs, t_dev, in_loss, finetune, &backend);
    } catch (const std::exception&) {
      trace.note_raise(obs.get());
      out.fallback_ops = case_fallbacks(backend, obs.get(), cfg.fallback_source);
      throw;
    }
    out.executed_ops = executed.records();
  }
  std::vector<std::string> dispatcher_fallbacks = obs ? obs->fallback_ops() : std::vector<std::string>{};
  obs.reset();
  out.sim_time_us = backend.device_time_us();
  out.timing.first_us = actual.step_us.front();
  record_repetitions(out.timing, std::vector<double>(actual.step_us.begin() + 1, actual.step_us.end()));
  out.peak_mem_bytes = memory_baseline.peak_above(backend);
  out.fallback_ops = backend.take_fallback_ops();
  if (!backend.reports_fallbacks() && backend.dispatch_key()) out.fallback_ops = std::move(dispatcher_fallbacks);

  // The loss trajectory, relative to the golden's largest loss; the weights, each relative to
  // its own largest golden value.
  std::string tol_source;
  const double tol = scaled_tolerance(key, dtype, cfg, backend, tol_source);
  out.rtol = 0;
  out.atol = tol;
  out.tolerance_profile = tol_source;
  double loss_scale = 0, loss_err = 0;
  for (double l : golden.losses) loss_scale = std::max(loss_scale, std::fabs(l));
  for (std::size_t i = 0; i < golden.losses.size(); ++i) {
    const double e = std::fabs(actual.losses[i] - golden.losses[i]);
    if (!std::isfinite(actual.losses[i])) out.metrics.nan_inf_ok = false;
    loss_err = std::max(loss_err, std::isfinite(e) ? e : INFINITY);
  }
  const double loss_rel = loss_scale > 0 ? loss_err / loss_scale : loss_err;
  std::vector<std::string> problems;
  if (!(loss_rel <= tol)) {
    problems.push_back(fmt::format(
        "loss trajectory: error {:.3g} of the largest loss {:.4g} (allowed {:g}); device {:.6g}, golden {:.6g}",
        loss_rel, loss_scale, tol, fmt::join(actual.losses, " "), fmt::join(golden.losses, " ")));
  }
  // Each trained tensor by its relative error ||a - g|| / ||g||: single elements of a small bias
  // may move by more than their share under a backend's rounding while the tensor agrees.
  double weights_rel = 0;
  std::int64_t bad_tensors = 0;
  std::string first_bad;
  for (std::size_t i = 0; i < golden.weights.size(); ++i) {
    const auto& [name, g] = golden.weights[i];
    const at::Tensor g64 = g.detach().to(at::kDouble).contiguous();
    const at::Tensor a64 = actual.weights[i].second.detach().to(at::kCPU).to(at::kDouble).contiguous();
    const double norm = g64.norm().item<double>();
    const double diff = (a64 - g64).norm().item<double>();
    const double rel = norm > 0 ? diff / norm : diff;
    const at::Tensor d = (a64 - g64).abs();
    if (d.numel()) {
      const double mx = d.max().item<double>();
      if (mx > out.metrics.max_abs_err || !std::isfinite(mx)) {
        out.metrics.max_abs_err = mx;
        out.metrics.worst = name + index_text(d.argmax().item<std::int64_t>(), g64.sizes());
      }
    }
    out.metrics.numel += g64.numel();
    weights_rel = std::max(weights_rel, std::isfinite(rel) ? rel : INFINITY);
    if (!(rel <= tol)) {
      ++out.metrics.mismatches;
      if (!std::isfinite(rel)) out.metrics.nan_inf_ok = false;
      if (++bad_tensors == 1) first_bad = fmt::format("{}: relative error {:.3g}", name, rel);
    }
  }
  if (bad_tensors)
    problems.push_back(
        fmt::format("trained weights: {} of {} tensors outside; {}", bad_tensors, golden.weights.size(), first_bad));
  out.reason += fmt::format(
      "{}quality: {} {} SGD steps (lr {:g}) of {} tensors; loss {:.6g} -> {:.6g}, trajectory error {:.3g} of "
      "max|loss|; "
      "weights' largest relative error {:.3g}{}",
      out.reason.empty() ? "" : "; ", finetune ? "fine-tuning:" : "training:", kTrainSteps, kTrainLr,
      golden.weights.size(), actual.losses.front(), actual.losses.back(), loss_rel, weights_rel,
      weightless ? fmt::format("; {} weightless tensors refilled from the case seed", weightless) : "");
  if (!problems.empty()) {
    out.status = Status::Fail;
    out.error = fmt::format("{}", fmt::join(problems, "; "));
  }
}

}  // namespace

}  // namespace gauntlet

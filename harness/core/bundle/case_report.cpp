#include "gauntlet/core/bundle/case_report.h"

#include <fmt/format.h>

#include "gauntlet/base/stage.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/suites/op_impl.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet {

namespace {

nlohmann::json summary_json(const TensorSummary& s) {
  return {{"name", s.name},
          {"dtype", s.dtype},
          {"shape", s.shape},
          {"strides", s.strides},
          {"min", json_number(s.min)},
          {"max", json_number(s.max)},
          {"mean", json_number(s.mean)},
          {"fingerprint", fmt::format("{:016x}", s.fingerprint)}};
}

std::string tensors_text(const char* title, const std::vector<TensorSummary>& ts) {
  std::string out = fmt::format("{}\n", title);
  for (const auto& s : ts) {
    out += fmt::format("  {:<12} {:<9} shape {} strides {}  min {:.6g} max {:.6g} mean {:.6g}  fp {:016x}\n", s.name,
                       s.dtype, s.shape, s.strides, s.min, s.max, s.mean, s.fingerprint);
  }
  return out;
}

}  // namespace

std::string case_title_text(const CaseKey& key, const std::string& backend) {
  if (key.kind == "model") {
    return fmt::format("case     {}\nid       {:016x}\nmodel    {} (config {}, {}, {})\nbackend  {}\n\n", key.str(),
                       key.id(), key.target, key.config, key.exec, key.mode_text(), backend);
  }
  const OpSpec* op = find_op(key.target);
  if (!op) {  // a collective: its group runs it
    return fmt::format("case     {}\nid       {:016x}\ncoll     {} over {} ranks\nbackend  {}\n\n", key.str(), key.id(),
                       key.target, key.world, backend);
  }
  return fmt::format("case     {}\nid       {:016x}\nop       {} ({}, family {})\nbackend  {}\n\n", key.str(), key.id(),
                     op->name, op->aten, op->family, backend);
}

std::string case_inputs_text(const CaseKey& key) {
  if (key.kind == "model" || !find_op(key.target)) return "";
  const OpDef* def = find_op_def(key.target);
  if (!def) return "";
  const std::vector<at::Tensor> made = make_inputs(key, def->spec);
  std::string out = "inputs (as laid out for the device)\n";
  for (std::size_t i = 0; i < made.size(); ++i) {
    const at::Tensor t = apply_layout(made[i], key.layout);
    out += fmt::format("  {:<12} {:<9} shape [{}] strides [{}]  fp {:016x}\n", def->spec.inputs[i].name,
                       c10::toString(t.scalar_type()), fmt::join(t.sizes(), ", "), fmt::join(t.strides(), ", "),
                       fingerprint({t}));
  }
  return out;
}

std::string case_explanation_text(const Outcome& out, const CaseDetail& detail, bool with_inputs) {
  std::string s;
  if (with_inputs) s += tensors_text("inputs (as laid out for the device)", detail.inputs);
  if (!detail.actual.empty()) {
    s += tensors_text("actual", detail.actual);
    s += tensors_text("golden (fp64 CPU)", detail.golden);
  }
  if (!detail.worst.empty()) {
    s += "worst elements (furthest outside tolerance first)\n";
    for (const auto& w : detail.worst) {
      s += fmt::format(
          "  {}{:<14} actual {:<14.8g} golden {:<14.8g} golden in dtype {:<14.8g} |err| {:.3g}  allowed {:.3g}\n",
          w.output, w.coords, w.actual, w.golden, w.golden_cast, w.abs_err, w.allowed);
    }
  }
  const Metrics& m = out.metrics;
  s += fmt::format("tolerance rtol={:g} atol={:g} ({})\n", out.rtol, out.atol,
                   out.tolerance_profile.empty() ? "-" : out.tolerance_profile);
  s += fmt::format(
      "metrics  max abs err {:.4g}  max rel err {:.4g}  mismatches {}/{} ({:.3g}%)  max ulp {:g}  nan/inf {}  worst "
      "{}\n",
      m.max_abs_err, m.max_rel_err, m.mismatches, m.numel, 100 * m.mismatch_frac(), m.max_ulp,
      m.nan_inf_ok ? "agree" : "DISAGREE", m.worst.empty() ? "-" : m.worst);
  s += fmt::format("time     first {:.1f} us, median {:.1f} us over {} reps\n", out.timing.first_us,
                   out.timing.median_us, out.timing.reps);
  if (out.compile_ms) {  // a compile case: what the compile path did (its breaks and guards are in `reason`)
    s += fmt::format(
        "compile  {} graph breaks, {} regions, {} recompiles, {:.1f} ms (dynamo {:.1f}, AOT {:.1f}, backend {:.1f})\n",
        out.graph_breaks.value_or(0), out.regions.value_or(0), out.recompiles.value_or(0), *out.compile_ms,
        out.dynamo_ms.value_or(0), out.aot_ms.value_or(0), out.backend_ms.value_or(0));
  }
  if (!out.fallback_ops.empty()) s += fmt::format("fallback {}\n", fmt::join(out.fallback_ops, ", "));
  if (!detail.decomposed.empty()) {
    s += fmt::format("composite {} (decomposed on the device: not fallbacks)\n", fmt::join(detail.decomposed, ", "));
  }
  s += fmt::format("golden   {}{}\n", out.golden_source, out.golden_entry.empty() ? "" : " (" + out.golden_entry + ")");
  s += fmt::format("verdict  {}{}\n", status_name(out.status), out.error.empty() ? "" : ": " + out.error);
  if (!out.stage.empty()) s += fmt::format("stage    {} ({})\n", stage_text(out.stage), out.stage);
  if (!out.reason.empty()) s += fmt::format("reason   {}\n", out.reason);
  return s;
}

nlohmann::json case_explanation_json(const CaseKey& key, const Outcome& out, const CaseDetail& detail,
                                     const std::string& backend) {
  nlohmann::json j = to_json(out);
  j["json_schema_version"] = kJsonSchemaVersion;
  j["id"] = fmt::format("{:016x}", key.id());
  j["backend"] = backend;
  j["inputs"] = nlohmann::json::array();
  for (const auto& s : detail.inputs) j["inputs"].push_back(summary_json(s));
  j["worst_elements"] = nlohmann::json::array();
  for (const auto& w : detail.worst) {
    j["worst_elements"].push_back({{"output", w.output},
                                   {"index", w.index},
                                   {"coords", w.coords},
                                   {"actual", json_number(w.actual)},
                                   {"golden", json_number(w.golden)},
                                   {"golden_cast", json_number(w.golden_cast)},
                                   {"abs_err", json_number(w.abs_err)},
                                   {"allowed", json_number(w.allowed)}});
  }
  return j;
}

}  // namespace gauntlet

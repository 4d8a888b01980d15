// gauntlet repro: one case in-process, explained: inputs, golden vs actual, the worst elements,
// the tolerance and the verdict. --json prints the outcome fields the store keeps.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/op_spec.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/runner.h"

namespace gauntlet::cli {

namespace {

nlohmann::json summary_json(const TensorSummary& s) {
  return {{"name", s.name}, {"dtype", s.dtype}, {"shape", s.shape}, {"strides", s.strides},
          {"min", json_number(s.min)}, {"max", json_number(s.max)}, {"mean", json_number(s.mean)}, {"fingerprint", fmt::format("{:016x}", s.fingerprint)}};
}

void print_tensors(const char* title, const std::vector<TensorSummary>& ts) {
  fmt::print("{}\n", title);
  for (const auto& s : ts) {
    fmt::print("  {:<12} {:<9} shape {} strides {}  min {:.6g} max {:.6g} mean {:.6g}  fp {:016x}\n", s.name,
               s.dtype, s.shape, s.strides, s.min, s.max, s.mean, s.fingerprint);
  }
}

}  // namespace

int repro(const ReproOptions& o) {
  const CaseKey key = CaseKey::parse(o.key);
  if (auto problem = validate_key(key)) throw UsageError(*problem);
  const std::string dir = suites_dir_or_default(o.suites_dir);
  const Expectations expectations = Expectations::load(dir + "/expectations.yaml");
  const ToleranceTable tolerances = ToleranceTable::load(dir + "/tolerances.yaml");
  auto backend = make_backend(o.backend);
  RunnerConfig cfg;
  cfg.tolerances = &tolerances;
  cfg.expectations = &expectations;
  enable_collectives(cfg, o.backend, dir, o.collective_timeout);
  std::unique_ptr<GoldenStore> golden_store;
  if (!o.golden_store.empty()) {
    golden_store = GoldenStore::open(o.golden_store, GoldenStore::Mode::ReadOnly);
    cfg.golden_store = golden_store.get();
    cfg.golden_release = o.golden_release;
    cfg.golden_always = true;  // one case: show the stored golden when there is one
  } else if (!o.golden_release.empty()) {
    throw UsageError("--golden-release needs --golden-store DIR");
  }
  CaseDetail detail;
  Outcome out = run_case(key, *backend, cfg, &detail);
  const int rc = is_failure(out.status) ? 1 : 0;

  if (o.json) {
    nlohmann::json j = to_json(out);
    j["json_schema_version"] = kJsonSchemaVersion;
    j["id"] = fmt::format("{:016x}", key.id());
    j["backend"] = backend->name();
    j["inputs"] = nlohmann::json::array();
    for (const auto& s : detail.inputs) j["inputs"].push_back(summary_json(s));
    j["worst_elements"] = nlohmann::json::array();
    for (const auto& w : detail.worst) {
      j["worst_elements"].push_back({{"output", w.output}, {"index", w.index}, {"coords", w.coords},
                                     {"actual", json_number(w.actual)}, {"golden", json_number(w.golden)},
                                     {"golden_cast", json_number(w.golden_cast)},
                                     {"abs_err", json_number(w.abs_err)}, {"allowed", json_number(w.allowed)}});
    }
    std::cout << j.dump(1) << "\n";
    return rc;
  }

  const OpSpec* op = find_op(key.target);
  if (key.kind == "model") {
    fmt::print("case     {}\nid       {:016x}\nmodel    {} (config {}, {}, {})\nbackend  {} ({})\n\n", out.key, key.id(),
               key.target, key.config, key.exec, key.mode_text(), backend->name(), backend->version());
  } else if (!op) {  // a collective: its group ran it; the outcome says it all
    fmt::print("case     {}\nid       {:016x}\ncoll     {} over {} ranks\nbackend  {} ({})\n\n", out.key, key.id(),
               key.target, key.world, backend->name(), backend->version());
  } else {
    fmt::print("case     {}\nid       {:016x}\nop       {} ({}, family {})\nbackend  {} ({})\n\n", out.key, key.id(),
               op->name, op->aten, op->family, backend->name(), backend->version());
  }
  print_tensors("inputs (as laid out for the device)", detail.inputs);
  if (!detail.actual.empty()) {
    print_tensors("actual", detail.actual);
    print_tensors("golden (fp64 CPU)", detail.golden);
  }
  if (!detail.worst.empty()) {
    fmt::print("worst elements (furthest outside tolerance first)\n");
    for (const auto& w : detail.worst) {
      fmt::print("  {}{:<14} actual {:<14.8g} golden {:<14.8g} golden in dtype {:<14.8g} |err| {:.3g}  allowed {:.3g}\n",
                 w.output, w.coords, w.actual, w.golden, w.golden_cast, w.abs_err, w.allowed);
    }
  }
  const Metrics& m = out.metrics;
  fmt::print("tolerance rtol={:g} atol={:g} ({})\n", out.rtol, out.atol, out.tolerance_profile.empty() ? "-" : out.tolerance_profile);
  fmt::print("metrics  max abs err {:.4g}  max rel err {:.4g}  mismatches {}/{} ({:.3g}%)  max ulp {:g}  nan/inf {}  worst {}\n",
             m.max_abs_err, m.max_rel_err, m.mismatches, m.numel, 100 * m.mismatch_frac(), m.max_ulp,
             m.nan_inf_ok ? "agree" : "DISAGREE", m.worst.empty() ? "-" : m.worst);
  fmt::print("time     first {:.1f} us, median {:.1f} us over {} reps\n", out.timing.first_us, out.timing.median_us, out.timing.reps);
  fmt::print("golden   {}{}\n", out.golden_source, out.golden_entry.empty() ? "" : " (" + out.golden_entry + ")");
  fmt::print("verdict  {}{}\n", status_name(out.status), out.error.empty() ? "" : ": " + out.error);
  if (!out.reason.empty()) fmt::print("reason   {}\n", out.reason);
  return rc;
}

}  // namespace gauntlet::cli

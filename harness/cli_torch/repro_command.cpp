// gauntlet repro: one case in-process, explained: inputs, golden vs actual, the worst elements,
// the tolerance and the verdict. --json prints the outcome fields the store keeps.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "gauntlet/analysis/judged.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/output_dir.h"
#include "gauntlet/base/stage.h"
#include "gauntlet/base/text.h"
#include "gauntlet/cli/cli.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/bundle/bundle.h"
#include "gauntlet/core/bundle/case_report.h"
#include "gauntlet/core/cases/dispatch_probe.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/core/session/run_setup.h"
#include "gauntlet/golden/golden_store.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/run/child_process.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/recorded_env.h"
#include "gauntlet/run/restore.h"

namespace gauntlet::cli {

namespace {

// Note [What was judged]: the bundle's manifest gains compare's figures and thresholds
// (`judged`), which only repro, with the database, knows; repro.py times the case against them.
void add_judged(const std::string& dir, const nlohmann::json& judged) {
  const std::string path = dir + "/manifest.json";
  nlohmann::json man;
  {
    std::ifstream in(path);
    man = nlohmann::json::parse(in);
  }
  man["judged"] = judged;
  std::ofstream out(path, std::ios::trunc);
  out << man.dump(1) << "\n";
  if (!out) throw std::runtime_error(path + ": cannot write");
}

CaseFigures figures_of(const Outcome& o) {
  CaseFigures f;
  f.present = true;
  f.status = o.status;
  f.sim_us = o.sim_time_us.value_or(NAN);
  f.median_us = o.timing.reps > 0 ? o.timing.median_us : NAN;
  f.first_us = o.timing.first_us;
  f.compile_ms = o.compile_ms.value_or(NAN);
  f.peak_mem = o.peak_mem_bytes;
  f.samples_us = o.timing.samples_us;
  return f;
}

// Note [Crash-safe repro]: a case that crashes the backend (SIGSEGV in a kernel, abort in its
// allocator) would end `repro` with a bare "free(): invalid pointer". So repro prints the header,
// then runs the case in a child (this binary, `repro ... --child`) whose output passes through;
// the parent keeps the child's last stderr lines and, when it dies by a signal, says which, shows
// them and prints the command that runs the case under gdb.
int repro_in_child(const ReproOptions& o, const Restored* restored) {
  ChildSpec spec;
  spec.exe = self_exe();
  spec.args = o.argv;
  spec.args.push_back("--child");
  spec.pipes = false;  // its stdout is ours
  // Note [Failing stage]: the child shares where it is, for when it dies.
  std::error_code ec;
  const std::string stage_path =
      (std::filesystem::temp_directory_path(ec) / fmt::format("gauntlet-repro-{}.stage", ::getpid())).string();
  spec.env.emplace_back(kStageFileEnv, stage_path);
  std::fflush(stdout);
  const auto [status, tail] = run_passing_stderr(spec, 1000);  // folded below
  const SharedStage at = read_shared_stage(stage_path);
  std::filesystem::remove(stage_path, ec);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  const char* abbrev = sigabbrev_np(sig);
  const std::string signal = std::string("SIG") + (abbrev ? abbrev : "?");
  fmt::print("verdict  CRASH: the case killed its process with {} (signal {}: {})\n", signal, sig, strsignal(sig));
  const std::string_view stage = stage_name(at.stage == Stage::None ? Stage::Op : at.stage);
  fmt::print("stage    {} ({}){}\n", stage_text(stage), stage,
             at.fallback_op.empty() ? "" : ", inside the CPU fallback of " + at.fallback_op);
  if (!tail.empty()) {
    // Note [Stderr tails]: the fatal line last, the warnings before it folded.
    std::string text;
    for (const auto& l : tail) text += l + "\n";
    fmt::print("last stderr lines:\n");
    const std::string folded = fold_stderr_tail(text, 8);
    for (std::size_t at = 0; at < folded.size();) {
      const std::size_t nl = std::min(folded.find('\n', at), folded.size());
      fmt::print("  | {}\n", std::string_view(folded).substr(at, nl - at));
      at = nl + 1;
    }
  }
  std::string debug = "gdb --args " + shell_argument(spec.exe);
  for (std::size_t i = 0; i + 1 < spec.args.size(); ++i) debug += " " + shell_argument(spec.args[i]);
  fmt::print("debug it: {} --in-process\n", debug);
  if (!o.bundle.empty())
    fmt::print("bundle   NOT written: the case killed its process before it had outputs to save\n");
  if (restored) fmt::print("{}", reproduced_line(*restored, Status::Crash, stage, signal));
  std::fflush(stdout);
  return 1;
}

// Note [Keys no suite holds] (catalog.cpp): the suites that hold the key, as a line for the header;
// a key none holds is refused unless --any-key. A key the run stored is its suite's (restored_text
// names it), and a model file's case is the suite `run --model` made of it.
std::string suites_line(const ReproOptions& o, const CaseKey& key, const Restored* restored) {
  if (o.child || (restored && restored->stored) || (key.kind == "model" && is_model_file_target(key.target))) return "";
  const std::string dir = suites_dir_or_default(o.suites_dir);
  const SuitesHolding h = suites_holding(key, dir);
  if (h.suites.empty()) {
    if (o.any_key) return fmt::format("suites   none of {} holds this case (--any-key)\n", dir);
    std::string why = fmt::format("case {} is in no suite of {}", key.str(), dir);
    if (!h.unreadable.empty()) why += fmt::format(" (unreadable: {})", one_line(h.unreadable.front()));
    throw UsageError(why + "; give --any-key to run it anyway, or --db to take it from a stored run");
  }
  constexpr std::size_t kShown = 6;
  std::string names;
  for (std::size_t i = 0; i < h.suites.size() && i < kShown; ++i) names += (i ? ", " : "") + h.suites[i];
  if (h.suites.size() > kShown) names += fmt::format(" and {} more", h.suites.size() - kShown);
  return fmt::format("suites   {}{}\n", names, dir == default_suites_dir() ? "" : " (of " + dir + ")");
}

}  // namespace

int repro(const ReproOptions& given) {
  ReproOptions o = given;
  // Before the restore, which sets GAUNTLET_* variables as the run had them (Note [Failing stage]).
  if (o.child) share_stage_from_env();
  const CaseKey key = CaseKey::parse(o.key);
  // Validated after the restore: a model file's case is known through the recorded environment
  // ($GAUNTLET_MODEL_FILES, Note [Model file registry]).
  const std::optional<Restored> restored = restore_run(o, o.db, o.run, key.str());
  if (auto problem = validate_key(key)) throw UsageError(*problem);
  if (o.backend.empty()) o.backend = "cpu";
  // The bundle's folder is written after the case ran: refuse one that cannot be claimed first
  // (Note [Output folders]), rather than run the case and then say "bundle NOT written".
  if (!o.bundle.empty() && !o.child) check_output_dir(o.bundle, "bundle");
  const std::string suites = suites_line(o, key, restored ? &*restored : nullptr);
  if (!o.in_process && !o.child) {
    if (!o.json) {
      if (restored) fmt::print("{}", restored_text(*restored, o.db));
      fmt::print("{}", suites);
      // Before anything runs, even when the case then kills the process: the case, what it runs,
      // on which backend, and its inputs (made on the CPU: no backend code).
      fmt::print("{}{}", case_title_text(key, o.backend), case_inputs_text(key));
      std::fflush(stdout);
    }
    const int rc = repro_in_child(o, restored ? &*restored : nullptr);
    return rc;
  }
  if (!o.child && !o.json) {
    if (restored) fmt::print("{}", restored_text(*restored, o.db));
    fmt::print("{}", suites);
    std::fflush(stdout);
  }
  const std::string dir = suites_dir_or_default(o.suites_dir);
  const Expectations expectations = Expectations::load(dir + "/expectations.yaml");
  const ToleranceTable tolerances = ToleranceTable::load(dir + "/tolerances.yaml");
  auto backend = make_backend(o.backend);
  // A library that is not a backend is refused as `run` refuses it (exit 2), not run into an ERROR.
  if (const CapabilityCheck c = check_capabilities(*backend, {}, /*call_fallback_needs=*/false); !c.cannot_run.empty())
    throw UsageError(c.cannot_run);
  if (restored && !o.json) {
    for (const std::string& w :
         backend_differences(*restored, backend->name(), backend->version(), backend->config_json()))
      fmt::print("warning  {}\n", w);
  }
  std::unique_ptr<GoldenStore> golden_store;
  if (!o.golden_store.empty()) {
    golden_store = GoldenStore::open(o.golden_store, GoldenStore::Mode::ReadOnly);
  } else if (!o.golden_release.empty()) {
    throw UsageError("--golden-release needs --golden-store DIR");
  }
  // One case: show the stored golden when there is one (golden_always).
  RunnerConfig cfg = runner_config(tolerances, expectations, o.timing, golden_store.get(), false, true,
                                   golden_store ? o.golden_release : "");
  enable_collectives(cfg, o.backend, dir, o.collective_timeout);
  prepare_process_for_cases();  // as a worker would run the case (Note [Intra-op threads])
  CaseDetail detail;
  detail.keep_tensors = !o.bundle.empty();
  Outcome out = run_case(key, *backend, cfg, &detail);
  const int rc = is_failure(out.status) ? 1 : 0;
  // Note [What was judged] in analysis/judged.cpp: compare's figures of a stored case.
  std::optional<CaseJudgement> judgement;
  std::string judge_error;
  if (restored && !o.json) {
    try {
      judgement = judge_case(o.db, restored->info.id, key.str());
    } catch (const std::exception& e) {
      judge_error = one_line(e.what());
    }
  }
  std::optional<BundleWritten> bundle;
  std::string bundle_error;
  if (!o.bundle.empty()) {
    BundleSource src;
    src.key = key;
    src.outcome = out;
    src.detail = &detail;
    src.tolerances = &tolerances;
    src.backend = backend->name();
    src.backend_version = backend->version();
    src.profile = backend->profile();
    src.environment = recorded_environment(record_env_patterns({}));
    src.command = "gauntlet";
    for (const std::string& a : o.argv) {
      if (a != "--child") src.command += " " + shell_argument(a);
    }
    if (restored) src.restored_from = fmt::format("run {} of {}", restored->info.id, o.db);
    try {
      bundle = write_bundle(o.bundle, src);
      if (judgement) add_judged(o.bundle, judged_json(*judgement));
    } catch (const std::exception& e) {
      bundle_error = e.what();
    }
  }

  if (o.json) {
    nlohmann::json j = case_explanation_json(key, out, detail, backend->name());
    if (restored) {
      j["restored_from"] = {{"db", o.db},
                            {"run", restored->info.id},
                            {"backend", restored->info.backend},
                            {"backend_version", restored->info.backend_version},
                            {"standalone", restored->standalone}};
      j["stored_status"] =
          restored->stored ? nlohmann::json(status_name(restored->stored->status)) : nlohmann::json(nullptr);
      j["backend_version"] = backend->version();
    }
    if (bundle) j["bundle"] = {{"dir", o.bundle}, {"files", bundle->files}, {"bytes", bundle->bytes}};
    if (!bundle_error.empty()) j["bundle"] = {{"dir", o.bundle}, {"error", bundle_error}};
    std::cout << j.dump(1) << "\n";
    return bundle_error.empty() ? rc : 2;
  }

  // The child's parent printed the case and its inputs (Note [Crash-safe repro]).
  const std::string backend_text = fmt::format("{} ({})", backend->name(), backend->version());
  if (o.child) {
    fmt::print("backend  {}\n", backend_text);
  } else {
    fmt::print("{}", case_title_text(key, backend_text));
  }
  fmt::print("{}", case_explanation_text(out, detail, !o.child));
  if (restored) fmt::print("{}", reproduced_line(*restored, out.status, out.stage));
  if (judgement) fmt::print("{}", judged_text(*judgement, figures_of(out)));
  if (!judge_error.empty()) fmt::print("judged   not shown: {}\n", judge_error);
  if (bundle) {
    // A compile case replays with the backend's own compiler: on its device, its library loaded.
    std::vector<std::string> replay = {"--device", "cpu"};
    // So does a case whose judged time is the device's own (Note [What was judged]), in the
    // environment that configured the backend.
    const bool device_time = judgement && judged_on_device_time(*judgement);
    std::string env;
    if (device_time) {
      for (const auto& [name, value] : recorded_environment(record_env_patterns({})))
        env += name + "=" + shell_argument(value) + " ";
    }
    if (device_time || std::find(bundle->files.begin(), bundle->files.end(), "program.py") != bundle->files.end())
      replay = backend->replay_arguments();
    std::string args;
    for (const std::string& a : replay) args += (args.empty() ? "" : " ") + shell_argument(a);
    fmt::print("bundle   {} ({} files, {:.1f} KiB): replay with {}python3 {}/repro.py {}\n", o.bundle,
               bundle->files.size(), static_cast<double>(bundle->bytes) / 1024, env, o.bundle, args);
  } else if (!bundle_error.empty()) {
    fmt::print("bundle   NOT written: {}\n", bundle_error);
    return 2;
  }
  return rc;
}

}  // namespace gauntlet::cli

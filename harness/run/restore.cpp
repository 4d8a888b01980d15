#include "gauntlet/run/restore.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/stage.h"
#include "gauntlet/base/text.h"
#include "gauntlet/run/recorded_env.h"
#include "gauntlet/run/run_config.h"
#include "gauntlet/run/suite.h"

namespace gauntlet {

// Note [Repro from the record]: a stored verdict depends on more than the key: the backend and
// its configuration (often environment variables: Note [Recorded environment]), the suites dir's
// expectations and tolerances, and the goldens. `repro KEY --db FILE [--run N]` takes them from
// the run's record: the backend (unless --backend), its profile (unless --profile), the suites dir
// (unless --suites-dir), the golden store and release (unless given), the timing options, and the
// recorded environment, set again, with the variables of the same patterns that the run did not
// have unset. It says what it restored, what the run stored, and, once the backend is loaded,
// whether its version or configuration differs from the run's. Every repro command Gauntlet
// prints is this form (reports.h, repro_command). The parent restores before it starts the child
// (which inherits the environment), and the child restores again, quietly, to judge alike.
std::optional<Restored> restore_run(ReproSetup& o, const std::string& db, std::int64_t run,
                                    const std::string& canonical_key) {
  if (db.empty()) {
    if (run != 0) throw Error("--run needs --db FILE (the database that holds the run)");
    return std::nullopt;
  }
  if (run < 0) throw Error(fmt::format("--run {}: a run id is a positive number", run));
  auto store = Store::open(db, Store::OpenMode::ReadOnly);
  Restored r;
  std::int64_t id = run;
  if (id == 0) {
    const std::vector<RunInfo> runs = store->runs();
    for (auto it = runs.rbegin(); it != runs.rend() && id == 0; ++it) {
      if (store->result(it->id, canonical_key)) id = it->id;
    }
    if (id == 0)
      throw Error(fmt::format("no run in {} has a result for {} (name the run with --run)", db, canonical_key));
  }
  const std::optional<RunInfo> info = store->run(id);
  if (!info) throw Error(fmt::format("no run {} in {}", id, db));
  r.info = *info;
  if (auto res = store->result(id, canonical_key)) r.stored = res->outcome;
  const RunConfig cfg = RunConfig::parse(info->config_json);  // Note [Run record]
  r.backend_config = cfg.backend_config;

  // The backend and its profile.
  if (o.backend.empty()) {
    o.backend = info->backend;
  } else if (o.backend != info->backend) {
    r.warnings.push_back(fmt::format("--backend {} given: run {} ran on {}", o.backend, id, info->backend));
  }
  std::string profile = o.profile;
  if (profile.empty()) {
    profile = cfg.backend_profile;
    if (!profile.empty()) setenv("GAUNTLET_PROFILE", profile.c_str(), 1);
  }
  r.notes.push_back(
      fmt::format("backend {}{}", o.backend, profile.empty() ? "" : fmt::format(" (profile {})", profile)));

  // The suites dir and the goldens.
  if (o.suites_dir.empty()) {
    const std::string& dir = cfg.suites_dir;
    std::error_code ec;
    if (!dir.empty() && std::filesystem::is_directory(dir, ec)) {
      o.suites_dir = dir;
      if (dir != default_suites_dir()) r.notes.push_back("suites dir " + dir);
    } else if (!dir.empty()) {
      r.warnings.push_back(
          fmt::format("run {}'s suites dir {} is not here: judging with the default one (give --suites-dir)", id, dir));
    }
  }
  if (o.golden_store.empty() && !cfg.golden_store.empty()) {
    const std::string& gs = cfg.golden_store;
    std::error_code ec;
    if (std::filesystem::is_directory(gs, ec)) {
      o.golden_store = gs;
      if (o.golden_release.empty()) o.golden_release = cfg.golden_release;
      r.notes.push_back("golden store " + gs + (o.golden_release.empty() ? "" : " (release " + o.golden_release + ")"));
    } else {
      r.warnings.push_back(fmt::format("run {}'s golden store {} is not here: computing the goldens", id, gs));
    }
  }
  cfg.apply_timing(o.timing);

  // The environment: the recorded variables set again, the others of the same patterns unset.
  const std::vector<std::string>& patterns = cfg.environment_patterns;
  const std::map<std::string, std::string>& recorded = cfg.environment;
  std::vector<std::string> set_vars, unset_vars;
  for (const auto& [name, value] : recorded_environment(patterns)) {
    if (!recorded.count(name)) {
      unsetenv(name.c_str());
      unset_vars.push_back(name);
    }
  }
  for (const auto& [name, value] : recorded) {
    setenv(name.c_str(), value.c_str(), 1);
    set_vars.push_back(name + "=" + shell_argument(value));
  }
  if (patterns.empty()) {
    r.notes.emplace_back("environment not recorded (a run stored before Gauntlet recorded it)");
  } else if (set_vars.empty()) {
    r.notes.push_back("environment: none of " + fmt::format("{}", fmt::join(patterns, ", ")) + " was set");
  } else {
    r.notes.push_back("environment " + fmt::format("{}", fmt::join(set_vars, " ")));
  }
  if (!unset_vars.empty()) {
    r.notes.push_back(fmt::format("unset {} (the run had {})", fmt::join(unset_vars, ", "),
                                  unset_vars.size() == 1 ? "none" : "none of them"));
  }

  o.profile = profile;
  r.standalone = standalone_repro_command(canonical_key, o, recorded);
  return r;
}

std::string standalone_repro_command(const std::string& key, const ReproSetup& s,
                                     const std::map<std::string, std::string>& environment) {
  std::string cmd;
  for (const auto& [name, value] : environment) cmd += name + "=" + shell_argument(value) + " ";
  cmd += "gauntlet repro " + shell_argument(key) + " --backend " + shell_argument(s.backend);
  if (!s.profile.empty() && s.profile != s.backend) cmd += " --profile " + shell_argument(s.profile);
  if (!s.suites_dir.empty() && s.suites_dir != default_suites_dir()) {
    cmd += " --suites-dir " + shell_argument(s.suites_dir);
  }
  if (!s.golden_store.empty()) cmd += " --golden-store " + shell_argument(s.golden_store);
  if (!s.golden_release.empty()) cmd += " --golden-release " + shell_argument(s.golden_release);
  return cmd;
}

std::vector<std::string> backend_differences(const Restored& r, const std::string& name, const std::string& version,
                                             const std::string& config_json) {
  std::vector<std::string> lines;
  if (name != r.info.backend) return lines;  // already said: --backend names another backend
  if (version != r.info.backend_version) {
    lines.push_back(
        fmt::format("backend {} is {} here; run {} had {}", name, version, r.info.id, r.info.backend_version));
  }
  const nlohmann::json now = nlohmann::json::parse(config_json, nullptr, false);
  if (r.backend_config.is_null() || now == r.backend_config) return lines;
  std::vector<std::string> fields;
  if (now.is_object() && r.backend_config.is_object()) {
    for (const auto& [k, v] : now.items()) {
      if (!r.backend_config.contains(k) || r.backend_config[k] != v) fields.push_back(k);
    }
    for (const auto& [k, v] : r.backend_config.items()) {
      if (!now.contains(k)) fields.push_back(k);
    }
  }
  std::string detail;
  for (const std::string& f : fields) {
    std::string here = now.contains(f) ? now[f].dump() : "absent",
                there = r.backend_config.contains(f) ? r.backend_config[f].dump() : "absent";
    if (here.size() > 80) here = here.substr(0, 77) + "...";
    if (there.size() > 80) there = there.substr(0, 77) + "...";
    detail += fmt::format("{}{} {} here, {} in the run", detail.empty() ? "" : "; ", f, here, there);
  }
  lines.push_back(fmt::format("backend {}'s configuration differs from run {}'s: {}", name, r.info.id,
                              detail.empty() ? "(not a JSON object)" : detail));
  return lines;
}

std::string restored_text(const Restored& r, const std::string& db) {
  std::string out =
      fmt::format("restored from run {} of {} (suite {}, release {}, {} {}, {}):\n", r.info.id, db,
                  r.info.suite.empty() ? "-" : r.info.suite, r.info.release.empty() ? "-" : r.info.release,
                  r.info.backend, r.info.backend_version, r.info.started_at);
  for (const std::string& n : r.notes) out += fmt::format("  {}\n", n);
  for (const std::string& w : r.warnings) out += fmt::format("warning  {}\n", w);
  out += fmt::format("elsewhere {}\n", r.standalone);
  if (r.stored) {
    out += fmt::format("stored   {}{}\n", status_name(r.stored->status),
                       r.stored->error.empty() ? "" : ": " + r.stored->error.substr(0, r.stored->error.find('\n')));
  } else {
    out += fmt::format("stored   nothing: run {} has no result for this case\n", r.info.id);
  }
  return out;
}

std::string stored_signal(std::string_view error) {
  static constexpr std::string_view kDied = "worker died with SIG";
  const std::size_t at = error.find(kDied);
  if (at == std::string_view::npos) return "";
  std::size_t end = at + kDied.size();
  while (end < error.size() &&
         (std::isupper(static_cast<unsigned char>(error[end])) || std::isdigit(static_cast<unsigned char>(error[end]))))
    ++end;
  return std::string(error.substr(at + kDied.size() - 3, end - (at + kDied.size() - 3)));
}

std::string reproduced_line(const Restored& r, Status now, std::string_view now_stage, std::string_view now_signal) {
  if (!r.stored) return "";
  if (r.stored->status != now) {
    return fmt::format("NOT reproduced: {} here, {} in run {}\n", status_name(now), status_name(r.stored->status),
                       r.info.id);
  }
  // Note [Failing stage]: the same status from another cause is said to be one.
  std::vector<std::string> but;
  const std::string then_signal = stored_signal(r.stored->error);
  if (!now_signal.empty() && !then_signal.empty() && now_signal != then_signal)
    but.push_back(fmt::format("{} where the run saw {}", now_signal, then_signal));
  if (!now_stage.empty() && !r.stored->stage.empty() && now_stage != r.stored->stage) {
    but.push_back(
        fmt::format("while {} where the run failed while {}", stage_text(now_stage), stage_text(r.stored->stage)));
  }
  return fmt::format("reproduced: {} as stored in run {}{}{}\n", status_name(now), r.info.id,
                     but.empty() ? "" : ", but ", fmt::join(but, ", and "));
}

}  // namespace gauntlet

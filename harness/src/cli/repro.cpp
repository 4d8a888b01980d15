// gauntlet repro: one case in-process, explained: inputs, golden vs actual, the worst elements,
// the tolerance and the verdict. --json prints the outcome fields the store keeps.
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/backend.h"
#include "gauntlet/bundle.h"
#include "gauntlet/inputs.h"
#include "gauntlet/op_spec.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/runner.h"
#include "restore.h"

extern char** environ;

namespace gauntlet::cli {

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

void print_tensors(const char* title, const std::vector<TensorSummary>& ts) {
  fmt::print("{}\n", title);
  for (const auto& s : ts) {
    fmt::print("  {:<12} {:<9} shape {} strides {}  min {:.6g} max {:.6g} mean {:.6g}  fp {:016x}\n", s.name, s.dtype,
               s.shape, s.strides, s.min, s.max, s.mean, s.fingerprint);
  }
}

// The header a developer needs before anything runs, even when the case then kills the process:
// the case, what it runs, on which backend, and its inputs (made on the CPU: no backend code).
void print_header(const CaseKey& key, const std::string& backend) {
  const OpSpec* op = find_op(key.target);
  if (key.kind == "model") {
    fmt::print("case     {}\nid       {:016x}\nmodel    {} (config {}, {}, {})\nbackend  {}\n\n", key.str(), key.id(),
               key.target, key.config, key.exec, key.mode_text(), backend);
  } else if (!op) {
    fmt::print("case     {}\nid       {:016x}\ncoll     {} over {} ranks\nbackend  {}\n\n", key.str(), key.id(),
               key.target, key.world, backend);
  } else {
    fmt::print("case     {}\nid       {:016x}\nop       {} ({}, family {})\nbackend  {}\n\n", key.str(), key.id(),
               op->name, op->aten, op->family, backend);
    if (const OpDef* def = find_op_def(key.target)) {
      const std::vector<at::Tensor> made = make_inputs(key, def->spec);
      fmt::print("inputs (as laid out for the device)\n");
      for (std::size_t i = 0; i < made.size(); ++i) {
        const at::Tensor t = apply_layout(made[i], key.layout);
        fmt::print("  {:<12} {:<9} shape [{}] strides [{}]  fp {:016x}\n", def->spec.inputs[i].name,
                   c10::toString(t.scalar_type()), fmt::join(t.sizes(), ", "), fmt::join(t.strides(), ", "),
                   fingerprint({t}));
      }
    }
  }
  std::fflush(stdout);
}

}  // namespace

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@+") ==
                        std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

std::string env_assignment(const std::string& name, const std::string& value) {
  return name + "=" + shell_quote(value);
}

}  // namespace

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
std::optional<Restored> restore_run(ReproOptions& o, const std::string& canonical_key) {
  if (o.db.empty()) {
    if (o.run != 0) throw UsageError("--run needs --db FILE (the database that holds the run)");
    return std::nullopt;
  }
  if (o.run < 0) throw UsageError(fmt::format("--run {}: a run id is a positive number", o.run));
  auto store = Store::open(o.db, Store::OpenMode::ReadOnly);
  Restored r;
  std::int64_t id = o.run;
  if (id == 0) {
    const std::vector<RunInfo> runs = store->runs();
    for (auto it = runs.rbegin(); it != runs.rend() && id == 0; ++it) {
      if (store->result(it->id, canonical_key)) id = it->id;
    }
    if (id == 0)
      throw UsageError(fmt::format("no run in {} has a result for {} (name the run with --run)", o.db, canonical_key));
  }
  const std::optional<RunInfo> info = store->run(id);
  if (!info) throw UsageError(fmt::format("no run {} in {}", id, o.db));
  r.info = *info;
  if (auto res = store->result(id, canonical_key)) r.stored = res->outcome;
  const nlohmann::json cfg = nlohmann::json::parse(info->config_json, nullptr, /*allow_exceptions=*/false);
  auto text = [&](const char* field) {
    return cfg.is_object() && cfg.contains(field) && cfg[field].is_string() ? cfg[field].get<std::string>()
                                                                            : std::string();
  };
  if (cfg.is_object() && cfg.contains("backend_config")) r.backend_config = cfg["backend_config"];

  // The backend and its profile.
  if (o.backend.empty()) {
    o.backend = info->backend;
  } else if (o.backend != info->backend) {
    r.warnings.push_back(fmt::format("--backend {} given: run {} ran on {}", o.backend, id, info->backend));
  }
  std::string profile = o.profile;
  if (profile.empty()) {
    profile = text("backend_profile");
    if (!profile.empty()) setenv("GAUNTLET_PROFILE", profile.c_str(), 1);
  }
  r.notes.push_back(
      fmt::format("backend {}{}", o.backend, profile.empty() ? "" : fmt::format(" (profile {})", profile)));

  // The suites dir and the goldens.
  if (o.suites_dir.empty()) {
    const std::string dir = text("suites_dir");
    std::error_code ec;
    if (!dir.empty() && std::filesystem::is_directory(dir, ec)) {
      o.suites_dir = dir;
      if (dir != default_suites_dir()) r.notes.push_back("suites dir " + dir);
    } else if (!dir.empty()) {
      r.warnings.push_back(
          fmt::format("run {}'s suites dir {} is not here: judging with the default one (give --suites-dir)", id, dir));
    }
  }
  if (o.golden_store.empty() && !text("golden_store").empty()) {
    const std::string gs = text("golden_store");
    std::error_code ec;
    if (std::filesystem::is_directory(gs, ec)) {
      o.golden_store = gs;
      if (o.golden_release.empty()) o.golden_release = text("golden_release");
      r.notes.push_back("golden store " + gs + (o.golden_release.empty() ? "" : " (release " + o.golden_release + ")"));
    } else {
      r.warnings.push_back(fmt::format("run {}'s golden store {} is not here: computing the goldens", id, gs));
    }
  }
  if (cfg.is_object()) {
    o.timing.reps = cfg.value("reps", o.timing.reps);
    o.timing.min_time_ms = cfg.value("min_time_ms", o.timing.min_time_ms);
    o.timing.max_time_ms = cfg.value("max_time_ms", o.timing.max_time_ms);
    o.timing.warmup = cfg.value("warmup", o.timing.warmup);
  }

  // The environment: the recorded variables set again, the others of the same patterns unset.
  std::vector<std::string> patterns;
  if (cfg.is_object() && cfg.contains("environment_patterns") && cfg["environment_patterns"].is_array()) {
    for (const auto& p : cfg["environment_patterns"]) {
      if (p.is_string()) patterns.push_back(p.get<std::string>());
    }
  }
  std::map<std::string, std::string> recorded;
  if (cfg.is_object() && cfg.contains("environment") && cfg["environment"].is_object()) {
    for (const auto& [name, value] : cfg["environment"].items()) {
      if (value.is_string()) recorded[name] = value.get<std::string>();
    }
  }
  std::vector<std::string> set_vars, unset_vars;
  for (const auto& [name, value] : recorded_environment(patterns)) {
    if (!recorded.count(name)) {
      unsetenv(name.c_str());
      unset_vars.push_back(name);
    }
  }
  for (const auto& [name, value] : recorded) {
    setenv(name.c_str(), value.c_str(), 1);
    set_vars.push_back(env_assignment(name, value));
  }
  if (patterns.empty()) {
    r.notes.push_back("environment not recorded (a run stored before Gauntlet recorded it)");
  } else if (set_vars.empty()) {
    r.notes.push_back("environment: none of " + fmt::format("{}", fmt::join(patterns, ", ")) + " was set");
  } else {
    r.notes.push_back("environment " + fmt::format("{}", fmt::join(set_vars, " ")));
  }
  if (!unset_vars.empty()) {
    r.notes.push_back(fmt::format("unset {} (the run had {})", fmt::join(unset_vars, ", "),
                                  unset_vars.size() == 1 ? "none" : "none of them"));
  }

  // The same case, elsewhere: the environment in front, the options after.
  std::string cmd;
  for (const std::string& a : set_vars) cmd += a + " ";
  cmd += "gauntlet repro " + shell_quote(canonical_key) + " --backend " + shell_quote(o.backend);
  if (!profile.empty() && profile != o.backend) cmd += " --profile " + shell_quote(profile);
  if (!o.suites_dir.empty() && o.suites_dir != default_suites_dir())
    cmd += " --suites-dir " + shell_quote(o.suites_dir);
  if (!o.golden_store.empty()) cmd += " --golden-store " + shell_quote(o.golden_store);
  if (!o.golden_release.empty()) cmd += " --golden-release " + shell_quote(o.golden_release);
  r.standalone = cmd;
  return r;
}

namespace {

// What the loaded backend says against what the run recorded: one line each for a version and a
// configuration that differ.
void warn_if_backend_differs(const Restored& r, const Backend& backend) {
  if (backend.name() != r.info.backend) return;  // already said: --backend names another backend
  if (backend.version() != r.info.backend_version) {
    fmt::print("warning  backend {} is {} here; run {} had {}\n", backend.name(), backend.version(), r.info.id,
               r.info.backend_version);
  }
  const nlohmann::json now = nlohmann::json::parse(backend.config_json(), nullptr, false);
  if (r.backend_config.is_null() || now == r.backend_config) return;
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
  fmt::print("warning  backend {}'s configuration differs from run {}'s: {}\n", backend.name(), r.info.id,
             detail.empty() ? "(not a JSON object)" : detail);
}

}  // namespace

void print_restored(const Restored& r, const std::string& db) {
  fmt::print("restored from run {} of {} (release {}, {} {}, {}):\n", r.info.id, db,
             r.info.release.empty() ? "-" : r.info.release, r.info.backend, r.info.backend_version, r.info.started_at);
  for (const std::string& n : r.notes) fmt::print("  {}\n", n);
  for (const std::string& w : r.warnings) fmt::print("warning  {}\n", w);
  fmt::print("elsewhere {}\n", r.standalone);
  if (r.stored) {
    fmt::print("stored   {}{}\n", status_name(r.stored->status),
               r.stored->error.empty() ? "" : ": " + r.stored->error.substr(0, r.stored->error.find('\n')));
  } else {
    fmt::print("stored   nothing: run {} has no result for this case\n", r.info.id);
  }
  std::fflush(stdout);
}

namespace {

// The line that closes a repro from the record: whether the verdict is the stored one.
void print_reproduced(const Restored& r, Status now) {
  if (!r.stored) return;
  if (r.stored->status == now) {
    fmt::print("reproduced: {} as stored in run {}\n", status_name(now), r.info.id);
  } else {
    fmt::print("NOT reproduced: {} here, {} in run {}\n", status_name(now), status_name(r.stored->status), r.info.id);
  }
}

// Note [Crash-safe repro]: a case that crashes the backend (SIGSEGV in a kernel, abort in its
// allocator) would end `repro` with a bare "free(): invalid pointer". So repro prints the header,
// then runs the case in a child (this binary, `repro ... --child`) whose output passes through;
// the parent keeps the child's last stderr lines and, when it dies by a signal, says which, shows
// them and prints the command that runs the case under gdb.
int repro_in_child(const ReproOptions& o, const Restored* restored) {
  std::vector<std::string> args = {self_exe()};
  args.insert(args.end(), o.argv.begin(), o.argv.end());
  args.push_back("--child");
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  int err_pipe[2];
  if (pipe(err_pipe) != 0) throw std::runtime_error(std::string("repro: pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&fa, err_pipe[0]);
  posix_spawn_file_actions_addclose(&fa, err_pipe[1]);
  std::fflush(stdout);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, cargs[0], &fa, nullptr, cargs.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(err_pipe[1]);
  if (rc != 0) {
    close(err_pipe[0]);
    throw std::runtime_error(std::string("repro: cannot start ") + args[0] + ": " + std::strerror(rc));
  }
  // Pass the child's stderr through, keeping its last lines.
  std::deque<std::string> tail;
  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(err_pipe[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (write(STDERR_FILENO, buf, static_cast<std::size_t>(n)) < 0) {
      // stderr is gone: keep reading so the child never blocks on a full pipe
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        tail.push_back(std::move(line));
        line.clear();
        if (tail.size() > 12) tail.pop_front();
      } else {
        line += buf[i];
      }
    }
  }
  if (!line.empty()) tail.push_back(line);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  const char* abbrev = sigabbrev_np(sig);
  fmt::print("verdict  CRASH: the case killed its process with SIG{} (signal {}: {})\n", abbrev ? abbrev : "?", sig,
             strsignal(sig));
  if (!tail.empty()) {
    fmt::print("last stderr lines:\n");
    for (const auto& l : tail) fmt::print("  | {}\n", l);
  }
  std::string debug = "gdb --args " + shell_quote(args[0]);
  for (std::size_t i = 1; i + 1 < args.size(); ++i) debug += " " + shell_quote(args[i]);
  fmt::print("debug it: {} --in-process\n", debug);
  if (!o.bundle.empty())
    fmt::print("bundle   NOT written: the case killed its process before it had outputs to save\n");
  if (restored) print_reproduced(*restored, Status::Crash);
  std::fflush(stdout);
  return 1;
}

}  // namespace

int repro(const ReproOptions& given) {
  ReproOptions o = given;
  const CaseKey key = CaseKey::parse(o.key);
  // Validated after the restore: a model file's case is known through the recorded environment
  // ($GAUNTLET_MODEL_FILES, Note [Model file registry]).
  const std::optional<Restored> restored = restore_run(o, key.str());
  if (auto problem = validate_key(key)) throw UsageError(*problem);
  if (o.backend.empty()) o.backend = "cpu";
  if (!o.in_process && !o.child) {
    if (!o.json) {
      if (restored) print_restored(*restored, o.db);
      print_header(key, o.backend);
    }
    const int rc = repro_in_child(o, restored ? &*restored : nullptr);
    return rc;
  }
  if (restored && !o.child && !o.json) print_restored(*restored, o.db);
  const std::string dir = suites_dir_or_default(o.suites_dir);
  const Expectations expectations = Expectations::load(dir + "/expectations.yaml");
  const ToleranceTable tolerances = ToleranceTable::load(dir + "/tolerances.yaml");
  auto backend = make_backend(o.backend);
  if (restored && !o.json) warn_if_backend_differs(*restored, *backend);
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
  CaseDetail detail;
  detail.keep_tensors = !o.bundle.empty();
  Outcome out = run_case(key, *backend, cfg, &detail);
  const int rc = is_failure(out.status) ? 1 : 0;
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
      if (a != "--child") src.command += " " + shell_quote(a);
    }
    if (restored) src.restored_from = fmt::format("run {} of {}", restored->info.id, o.db);
    try {
      bundle = write_bundle(o.bundle, src);
    } catch (const std::exception& e) {
      bundle_error = e.what();
    }
  }

  if (o.json) {
    nlohmann::json j = to_json(out);
    j["json_schema_version"] = kJsonSchemaVersion;
    j["id"] = fmt::format("{:016x}", key.id());
    j["backend"] = backend->name();
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

  if (o.child) {
    fmt::print("backend  {} ({})\n", backend->name(), backend->version());
  } else {
    const OpSpec* op = find_op(key.target);
    if (key.kind == "model") {
      fmt::print("case     {}\nid       {:016x}\nmodel    {} (config {}, {}, {})\nbackend  {} ({})\n\n", out.key,
                 key.id(), key.target, key.config, key.exec, key.mode_text(), backend->name(), backend->version());
    } else if (!op) {  // a collective: its group ran it; the outcome says it all
      fmt::print("case     {}\nid       {:016x}\ncoll     {} over {} ranks\nbackend  {} ({})\n\n", out.key, key.id(),
                 key.target, key.world, backend->name(), backend->version());
    } else {
      fmt::print("case     {}\nid       {:016x}\nop       {} ({}, family {})\nbackend  {} ({})\n\n", out.key, key.id(),
                 op->name, op->aten, op->family, backend->name(), backend->version());
    }
    print_tensors("inputs (as laid out for the device)", detail.inputs);
  }
  if (!detail.actual.empty()) {
    print_tensors("actual", detail.actual);
    print_tensors("golden (fp64 CPU)", detail.golden);
  }
  if (!detail.worst.empty()) {
    fmt::print("worst elements (furthest outside tolerance first)\n");
    for (const auto& w : detail.worst) {
      fmt::print(
          "  {}{:<14} actual {:<14.8g} golden {:<14.8g} golden in dtype {:<14.8g} |err| {:.3g}  allowed {:.3g}\n",
          w.output, w.coords, w.actual, w.golden, w.golden_cast, w.abs_err, w.allowed);
    }
  }
  const Metrics& m = out.metrics;
  fmt::print("tolerance rtol={:g} atol={:g} ({})\n", out.rtol, out.atol,
             out.tolerance_profile.empty() ? "-" : out.tolerance_profile);
  fmt::print(
      "metrics  max abs err {:.4g}  max rel err {:.4g}  mismatches {}/{} ({:.3g}%)  max ulp {:g}  nan/inf {}  worst "
      "{}\n",
      m.max_abs_err, m.max_rel_err, m.mismatches, m.numel, 100 * m.mismatch_frac(), m.max_ulp,
      m.nan_inf_ok ? "agree" : "DISAGREE", m.worst.empty() ? "-" : m.worst);
  fmt::print("time     first {:.1f} us, median {:.1f} us over {} reps\n", out.timing.first_us, out.timing.median_us,
             out.timing.reps);
  if (!out.fallback_ops.empty()) fmt::print("fallback {}\n", fmt::join(out.fallback_ops, ", "));
  if (!detail.decomposed.empty()) {
    fmt::print("composite {} (decomposed on the device: not fallbacks)\n", fmt::join(detail.decomposed, ", "));
  }
  fmt::print("golden   {}{}\n", out.golden_source, out.golden_entry.empty() ? "" : " (" + out.golden_entry + ")");
  fmt::print("verdict  {}{}\n", status_name(out.status), out.error.empty() ? "" : ": " + out.error);
  if (!out.reason.empty()) fmt::print("reason   {}\n", out.reason);
  if (restored) print_reproduced(*restored, out.status);
  if (bundle) {
    fmt::print("bundle   {} ({} files, {:.1f} KiB): replay with python3 {}/repro.py --device cpu\n", o.bundle,
               bundle->files.size(), static_cast<double>(bundle->bytes) / 1024, o.bundle);
  } else if (!bundle_error.empty()) {
    fmt::print("bundle   NOT written: {}\n", bundle_error);
    return 2;
  }
  return rc;
}

}  // namespace gauntlet::cli

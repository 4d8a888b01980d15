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
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/op_spec.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/inputs.h"
#include "gauntlet/runner.h"

extern char** environ;

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

// The header a developer needs before anything runs, even when the case then kills the process:
// the case, what it runs, on which backend, and its inputs (made on the CPU: no backend code).
void print_header(const CaseKey& key, const std::string& backend) {
  const OpSpec* op = find_op(key.target);
  if (key.kind == "model") {
    fmt::print("case     {}\nid       {:016x}\nmodel    {} (config {}, {}, {})\nbackend  {}\n\n", key.str(), key.id(),
               key.target, key.config, key.exec, key.mode_text(), backend);
  } else if (!op) {
    fmt::print("case     {}\nid       {:016x}\ncoll     {} over {} ranks\nbackend  {}\n\n", key.str(), key.id(), key.target,
               key.world, backend);
  } else {
    fmt::print("case     {}\nid       {:016x}\nop       {} ({}, family {})\nbackend  {}\n\n", key.str(), key.id(), op->name,
               op->aten, op->family, backend);
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

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@+") ==
                        std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Note [Crash-safe repro]: a case that crashes the backend (SIGSEGV in a kernel, abort in its
// allocator) would end `repro` with a bare "free(): invalid pointer". So repro prints the header,
// then runs the case in a child (this binary, `repro ... --child`) whose output passes through;
// the parent keeps the child's last stderr lines and, when it dies by a signal, says which, shows
// them and prints the command that runs the case under gdb.
int repro_in_child(const ReproOptions& o) {
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
  std::fflush(stdout);
  return 1;
}

}  // namespace

int repro(const ReproOptions& o) {
  const CaseKey key = CaseKey::parse(o.key);
  if (auto problem = validate_key(key)) throw UsageError(*problem);
  if (!o.in_process && !o.child) {
    if (!o.json) print_header(key, o.backend);
    return repro_in_child(o);
  }
  const std::string dir = suites_dir_or_default(o.suites_dir);
  const Expectations expectations = Expectations::load(dir + "/expectations.yaml");
  const ToleranceTable tolerances = ToleranceTable::load(dir + "/tolerances.yaml");
  auto backend = make_backend(o.backend);
  RunnerConfig cfg;
  cfg.tolerances = &tolerances;
  cfg.expectations = &expectations;
  cfg.fallback_source = fallback_source_from_env();
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

  if (o.child) {
    fmt::print("backend  {} ({})\n", backend->name(), backend->version());
  } else {
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
  }
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
  if (!out.fallback_ops.empty()) fmt::print("fallback {}\n", fmt::join(out.fallback_ops, ", "));
  if (!detail.decomposed.empty()) {
    fmt::print("composite {} (decomposed on the device: not fallbacks)\n", fmt::join(detail.decomposed, ", "));
  }
  fmt::print("golden   {}{}\n", out.golden_source, out.golden_entry.empty() ? "" : " (" + out.golden_entry + ")");
  fmt::print("verdict  {}{}\n", status_name(out.status), out.error.empty() ? "" : ": " + out.error);
  if (!out.reason.empty()) fmt::print("reason   {}\n", out.reason);
  return rc;
}

}  // namespace gauntlet::cli

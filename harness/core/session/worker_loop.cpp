#include "gauntlet/core/session/worker_loop.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <iostream>

#include "gauntlet/base/stage.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/core/session/run_setup.h"
#include "gauntlet/golden/golden_store.h"

namespace gauntlet {

namespace {

// One line, one write(2): the orchestrator must see `start` even if the case then kills us.
void emit_line(std::ostream& out, std::string line) {
  line += '\n';
  out.write(line.data(), static_cast<std::streamsize>(line.size()));
  out.flush();
}

}  // namespace

void serve_keys(std::istream& in, std::ostream& out, const std::function<Outcome(const std::string& key)>& run) {
  // Note [One write per case]: a result waits to go out with the next case's `start` when that
  // key is already here (sent ahead, Note [Queue depth] in orchestrator.cpp): one write, so one
  // wake-up of the orchestrator per case instead of two, which on a host whose cores the workers
  // keep busy each cost a worker its core for a moment. It goes out alone before the worker waits
  // for a key, so it is never held back; `start` still precedes its case.
  std::string line, message, result;
  for (;;) {
    if (!result.empty() && in.rdbuf()->in_avail() <= 0) {
      emit_line(out, std::move(result));
      result.clear();
    }
    if (!std::getline(in, line)) break;
    if (line.empty()) continue;
    message = std::move(result);
    result.clear();
    if (!message.empty()) message += '\n';
    emit_line(out, message + start_message(line));
    Outcome o;
    try {
      o = run(line);
    } catch (const std::exception& e) {  // a key that does not parse: the orchestrator's bug
      o.key = line;
      o.status = Status::Error;
      o.error = std::string("invalid case key: ") + e.what();
    }
    result = result_message(line, o);
  }
  if (!result.empty()) emit_line(out, std::move(result));
}

int run_worker(const WorkerSettings& o) {
  // A worker dies with the process that started it: an orchestrator SIGKILLed while a case hangs
  // would otherwise leave the worker hanging under PID 1 past its timeout, holding its device.
  // (The orchestrator starts workers from its main thread, which lives as long as it does.) A
  // parent that died between the two calls is caught by the second; one gone before the first
  // closed our stdin, which ends the worker at its first read.
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return 1;
  // Nothing else reads stdin or writes stdout through C stdio, so iostreams need not sync with it
  // (getline was a getc call per character). Before any I/O, as the standard asks.
  std::ios::sync_with_stdio(false);
  prepare_process_for_cases();
  const std::string dir = suites_dir_or_default(o.suites_dir);
  std::unique_ptr<Backend> backend;
  std::unique_ptr<GoldenStore> golden_store;
  Expectations expectations;
  ToleranceTable tolerances;
  try {
    share_stage_from_env();  // Note [Failing stage]: where a case was when this process died
    expectations = Expectations::load(dir + "/expectations.yaml");
    tolerances = ToleranceTable::load(dir + "/tolerances.yaml");
    backend = make_backend(o.backend);
    if (!o.golden_store.empty()) golden_store = GoldenStore::open(o.golden_store, GoldenStore::Mode::ReadOnly);
  } catch (const std::exception& e) {
    emit_line(std::cout, fatal_message(e.what()));
    return 2;
  }
  RunnerConfig cfg = runner_config(tolerances, expectations, o.timing, golden_store.get(),
                                   /*golden_add=*/false, o.golden_always, o.golden_release);
  enable_collectives(cfg, o.backend, dir, o.collective_timeout);
  emit_line(std::cout, hello_message({::getpid(), backend->name(), backend->version(), backend->profile(),
                                      backend->config_json()}));
  serve_keys(std::cin, std::cout, [&](const std::string& key) { return run_case(CaseKey::parse(key), *backend, cfg); });
  return 0;
}

void describe_options(OptionSink& s, WorkerSettings& o) {
  describe_backend(s, o.backend).show_default();
  s.option("--suites-dir", o.suites_dir, "where expectations.yaml and tolerances.yaml live");
  describe_options(s, o.timing);
  s.option("--golden-store", o.golden_store, "use precomputed goldens from this store");
  s.option("--golden-release", o.golden_release, "judge against the goldens release R froze");
  s.flag("--golden-always", o.golden_always, "read every stored golden");
  s.option("--collective-timeout", o.collective_timeout, "seconds a collective case's group of ranks may take")
      .show_default();
}

}  // namespace gauntlet

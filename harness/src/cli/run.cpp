// gauntlet run: expand a suite, run every case in-process on a backend, store every result.
// (Worker processes, timeouts and resume come with the orchestrator.)
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/environment.h"
#include "gauntlet/runner.h"
#include "gauntlet/store.h"

namespace gauntlet::cli {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) { g_interrupted = true; }

// A one-line progress display, only on a terminal.
class Progress {
 public:
  Progress(std::size_t total, bool enabled) : total_(total), enabled_(enabled && isatty(STDERR_FILENO)) {}
  void update(std::size_t done, std::size_t failures, const std::string& key) {
    if (!enabled_) return;
    fmt::print(stderr, "\r\033[K[{}/{}] {} failing  {}", done, total_, failures, key.substr(0, 80));
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) fmt::print(stderr, "\r\033[K");
  }

 private:
  std::size_t total_;
  bool enabled_;
};

}  // namespace

int run(const RunOptions& o) {
  const std::string dir = suites_dir_or_default(o.suites_dir);
  Suite suite = load_suite(o.suite, dir);
  auto [shard, shards] = parse_shard(o.shard);
  const std::vector<const Case*> cases = select_cases(suite, o.filter, o.shard);
  const Expectations expectations = Expectations::load(dir + "/expectations.yaml");
  const ToleranceTable tolerances = ToleranceTable::load(dir + "/tolerances.yaml");
  std::unique_ptr<Backend> backend = make_backend(o.backend);
  std::unique_ptr<GoldenStore> golden_store;
  if (!o.golden_store.empty()) {
    golden_store = GoldenStore::open(o.golden_store, o.golden_add ? GoldenStore::Mode::ReadWrite : GoldenStore::Mode::ReadOnly);
  } else if (o.golden_add || o.golden_always || !o.golden_release.empty()) {
    throw UsageError("--golden-add, --golden-always and --golden-release need --golden-store DIR");
  }
  // Open the store last among the checks: a bad suite or backend never touches the database.
  if (const auto parent = std::filesystem::path(o.db).parent_path(); !parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) throw UsageError(fmt::format("cannot create the folder of {}: {}", o.db, ec.message()));
  }
  auto store = Store::open(o.db, Store::OpenMode::ReadWrite);

  RunInfo info;
  describe_environment(info);
  info.release = o.release;
  info.build_id = o.build_id;
  info.backend = backend->name();
  info.backend_version = backend->version();
  info.suite = suite.name;
  info.filter = o.filter;
  info.shard = shards > 1 ? fmt::format("{}/{}", shard, shards) : "";
  info.started_at = utc_now();
  info.config_json = nlohmann::json{{"suites_dir", dir}, {"suite_file", suite.file}, {"reps", o.max_reps},
                                    {"cases", cases.size()}, {"golden_store", o.golden_store},
                                    {"golden_release", o.golden_release},
                                    {"backend_profile", backend->profile()},
                                    {"backend_config", nlohmann::json::parse(backend->config_json(), nullptr, false)}}.dump();
  const std::int64_t run_id = store->begin_run(info);

  RunnerConfig cfg;
  cfg.tolerances = &tolerances;
  cfg.expectations = &expectations;
  cfg.max_reps = o.max_reps;
  cfg.golden_store = golden_store.get();
  cfg.golden_add = o.golden_add;
  cfg.golden_always = o.golden_always;
  cfg.golden_release = o.golden_release;
  if (golden_store) cfg.golden_reference = reference_identity();

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  Progress progress(cases.size(), !o.quiet);
  std::size_t failures = 0, done = 0;
  for (const Case* c : cases) {
    if (g_interrupted) break;
    Outcome out = run_case(c->key, *backend, cfg);
    if (is_failure(out.status)) ++failures;
    store->add_result(run_id, c->key, out);
    progress.update(++done, failures, c->text);
  }
  progress.finish();
  store->finish_run(run_id, utc_now());
  if (g_interrupted) {
    fmt::print(stderr, "gauntlet: interrupted after {} of {} cases; stored results are kept\n", done, cases.size());
  }
  std::vector<std::string> statuses;
  for (Status s : kAllStatuses) {
    if (is_failure(s)) statuses.emplace_back(status_name(s));
  }
  print_summary(*store, run_id, statuses);
  fmt::print("\ndatabase: {} (run {})\n", o.db, run_id);
  if (g_interrupted) return 130;
  return (o.gate && failures > 0) ? 1 : 0;
}

}  // namespace gauntlet::cli

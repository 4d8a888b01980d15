// `run --json-lines FILE` (Note [Run reporters] in gauntlet/run/reporters.h): one JSON line per
// result, queued as each result arrives and written, flushed, when the run commits the database,
// so the file never holds a result the database lacks. A resumed run's file starts with the
// results stored before. A write that fails is a warning: the database keeps every result.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/error.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/reporters.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

namespace {

class JsonLinesReporter final : public RunListener {
 public:
  explicit JsonLinesReporter(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) throw Error(fmt::format("--json-lines {}: cannot write it: {}", path, std::strerror(errno)));
  }
  ~JsonLinesReporter() override {
    flush();
    if (file_) std::fclose(file_);
  }
  JsonLinesReporter(const JsonLinesReporter&) = delete;
  JsonLinesReporter& operator=(const JsonLinesReporter&) = delete;

  void run_started(const RunContext& run, const std::vector<const Case*>&) override {
    db_ = run.db_path;
    backend_ = run.backend;
    run_id_ = run.run_id;
    if (run.resumed && run.store) {
      for (const StoredResult& r : run.store->results(run_id_)) write(r.outcome);
      flush();
    }
  }
  void case_finished(const Case&, const Outcome& o) override { write(o); }
  void results_committed() override { flush(); }

 private:
  void write(const Outcome& o) {
    nlohmann::json j = to_json(o);
    j["json_schema_version"] = kJsonSchemaVersion;
    j["run"] = run_id_;
    j["repro"] = repro_command(o.key, db_, run_id_, backend_);
    pending_ += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    pending_ += '\n';
  }
  void flush() {
    if (!file_ || pending_.empty()) return;
    const bool ok =
        std::fwrite(pending_.data(), 1, pending_.size(), file_) == pending_.size() && std::fflush(file_) == 0;
    pending_.clear();
    if (!ok) {
      fmt::print(stderr, "gauntlet: warning: --json-lines {}: write failed ({}); the database keeps every result\n",
                 path_, std::strerror(errno));
      std::fclose(file_);
      file_ = nullptr;
    }
  }

  std::string path_, db_, backend_;
  std::int64_t run_id_ = 0;
  std::FILE* file_ = nullptr;
  std::string pending_;
};

}  // namespace

std::unique_ptr<RunListener> json_lines_reporter(const std::string& path) {
  return std::make_unique<JsonLinesReporter>(path);
}

}  // namespace gauntlet

// Note [Run reporters]: what `gauntlet run` writes besides its database, for CI systems and people.
//   --json-lines FILE  one JSON object per result (outcome_json.h's fields, plus "run", "repro" and
//                      "json_schema_version"), written as results are committed: the Committer of
//                      run.cpp queues a line with each result and writes the queue, flushed, each
//                      time it commits the database, so a killed run's file holds what its database
//                      holds (at most the last quarter second less). A resumed run rewrites the
//                      file from the run's stored results first: the file covers the whole run,
//                      each case once.
//   --junit FILE       JUnit XML of every result of the run (gauntlet/run_reports.h has the mapping
//   --markdown FILE    of statuses), and Markdown; both read back from the database when the run
//                      ends or stops, so a resumed run's reports are exact and complete.
// The report functions are pure (harness/analysis/run_reports.cpp, approval-tested); this file only
// reads the store and writes files.
//
// Note [GitHub Actions]: with --github, or when $GITHUB_ACTIONS is "true" (GitHub sets it in every
// job), run and compare append a short Markdown summary to the file $GITHUB_STEP_SUMMARY names
// (the job's summary page) and print workflow commands on stdout, one per gating finding:
// `::error title=...::message` (run: each failing case with --gate, ::warning without; compare:
// each gating regression, ::warning for an unwaived one outside the gates asked), at most
// kMaxAnnotations, then one ::notice with how many were left out. docs/ci.md has a workflow.
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/github.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/reports.h"
#include "gauntlet/run_reports.h"
#include "gauntlet/store.h"

namespace gauntlet::cli {

namespace fs = std::filesystem;

JsonLinesFile::JsonLinesFile(const std::string& path, std::string db, std::int64_t run_id, std::string backend)
    : path_(path), db_(std::move(db)), backend_(std::move(backend)), run_id_(run_id) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw UsageError(fmt::format("--json-lines {}: cannot write it: {}", path, std::strerror(errno)));
}

JsonLinesFile::~JsonLinesFile() {
  flush();
  if (file_) std::fclose(file_);
}

void JsonLinesFile::begin(const Store& store) {
  for (const StoredResult& r : store.results(run_id_)) write(r.outcome);
  flush();
}

void JsonLinesFile::write(const Outcome& o) {
  nlohmann::json j = to_json(o);
  j["json_schema_version"] = kJsonSchemaVersion;
  j["run"] = run_id_;
  j["repro"] = repro_command(o.key, db_, run_id_, backend_);
  pending_ += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  pending_ += '\n';
}

void JsonLinesFile::flush() {
  if (!file_ || pending_.empty()) return;
  const bool ok = std::fwrite(pending_.data(), 1, pending_.size(), file_) == pending_.size() && std::fflush(file_) == 0;
  pending_.clear();
  if (!ok) {
    fmt::print(stderr, "gauntlet: warning: --json-lines {}: write failed ({}); the database keeps every result\n",
               path_, std::strerror(errno));
    std::fclose(file_);
    file_ = nullptr;
  }
}

bool github_enabled(bool flag) {
  const char* env = std::getenv("GITHUB_ACTIONS");
  return flag || (env && std::string(env) == "true");
}

namespace {

void append_step_summary(const std::string& markdown) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (!path || !*path) {
    fmt::print(stderr, "gauntlet: note: $GITHUB_STEP_SUMMARY is not set: no step summary written\n");
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << markdown << "\n";
  out.close();
  if (!out) fmt::print(stderr, "gauntlet: warning: cannot append the step summary to {}\n", path);
}

// `file` relative to the repository ($GITHUB_WORKSPACE, else the working directory), for an
// annotation's file=; "" when it lies outside.
std::string repository_path(const std::string& file) {
  if (file.empty()) return "";
  std::error_code ec;
  const char* ws = std::getenv("GITHUB_WORKSPACE");
  const fs::path root = fs::weakly_canonical(ws && *ws ? fs::path(ws) : fs::current_path(ec), ec);
  const fs::path abs = fs::weakly_canonical(file, ec);
  if (ec) return "";
  const fs::path rel = abs.lexically_relative(root);
  if (rel.empty() || rel.begin()->string() == "..") return "";
  return rel.generic_string();
}

}  // namespace

void write_run_reports(const Store& store, const RunOptions& o, std::int64_t run_id, const std::string& suite_file,
                       const std::string& hollow, bool github) {
  if (o.junit.empty() && o.markdown.empty() && !github) return;
  const auto info = store.run(run_id);
  if (!info) return;
  RunReport r;
  r.id = run_id;
  r.release = info->release;
  r.backend = info->backend;
  r.backend_version = info->backend_version;
  r.suite = info->suite;
  r.started_at = info->started_at;
  r.finished_at = info->finished_at;
  r.planned = ran_summary(store, run_id).cases;
  r.db_path = o.db;
  r.gauntlet_version = GAUNTLET_VERSION_STRING;
  r.gate = o.gate;
  r.hollow = hollow;
  for (StoredResult& s : store.results(run_id)) r.results.push_back(std::move(s.outcome));
  if (!o.junit.empty()) write_report(o.junit, run_junit_report(r), "JUnit");
  if (!o.markdown.empty()) write_report(o.markdown, run_markdown_report(r), "Markdown");
  if (github) {
    append_step_summary(run_step_summary(r));
    std::cout << annotation_lines(run_annotations(r, repository_path(suite_file)), kMaxAnnotations,
                                  fmt::format("gauntlet show --db {} --run {}", shell_argument(o.db), run_id));
    std::cout.flush();
  }
}

void write_compare_github(const RunComparison& c, const ReportOptions& ro, const std::string& hollow) {
  std::string verdict = gate_verdict(c, ro.gates).summary;
  std::vector<Annotation> annotations = compare_annotations(c, ro);
  if (!hollow.empty()) {
    verdict = fmt::format("gate: FAIL: run {} is hollow: {}; {}", c.candidate.id, hollow, verdict);
    annotations.insert(annotations.begin(), Annotation{Annotation::Level::Error, "",
                                                       fmt::format("gauntlet compare: run {} hollow", c.candidate.id),
                                                       fmt::format("run {} is hollow: {}", c.candidate.id, hollow)});
  }
  append_step_summary(compare_step_summary(c, ro, verdict));
  std::cout << annotation_lines(annotations, kMaxAnnotations,
                                fmt::format("gauntlet compare --db {} --run {} --baseline {} --markdown -",
                                            shell_argument(ro.db_path), c.candidate.id, c.baseline.id));
  std::cout.flush();
}

}  // namespace gauntlet::cli

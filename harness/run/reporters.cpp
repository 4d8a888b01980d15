// Note [Run reporters] in gauntlet/run/reporters.h: the registered reporters and the checks of the
// files they are given.
#include "gauntlet/run/reporters.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "gauntlet/base/error.h"
#include "gauntlet/base/output_dir.h"

namespace gauntlet {

const std::vector<RunReporterEntry>& run_reporters() {
  // A new reporter: a RunListener in a file of its own under harness/run/, its factory declared
  // in gauntlet/run/reporters.h, and one line here (`run --<flag> FILE` then exists).
  static const std::vector<RunReporterEntry> entries = {
      {"junit", "write the run's JUnit XML here when it ends (every case; - for stdout)", true, junit_reporter},
      {"json-lines", "write one JSON line per result here, as results are stored", false, json_lines_reporter},
      {"markdown", "write the run's Markdown report here when it ends (- for stdout)", true, markdown_reporter},
      {"failed-keys", "write the keys of the run's failing cases here when it ends, for --keys-file (- for stdout)",
       true, failed_keys_reporter},
  };
  return entries;
}

void check_run_reporter_paths(const std::map<std::string, std::string>& paths) {
  for (const RunReporterEntry& e : run_reporters()) {
    const auto it = paths.find(e.flag);
    if (it == paths.end() || it->second.empty()) continue;
    const std::string& path = it->second;
    if (path == "-") {
      if (!e.allows_stdout) throw Error(fmt::format("--{} needs a file (stdout carries the run's summary)", e.flag));
      continue;
    }
    check_output_file("--" + e.flag, path);  // writable before the first case (Note [Output files])
  }
  for (const auto& [flag, path] : paths) {
    bool known = false;
    for (const RunReporterEntry& e : run_reporters()) known = known || e.flag == flag;
    if (!known) throw Error(fmt::format("no run reporter '{}'", flag));
  }
}

void add_run_reporters(const std::map<std::string, std::string>& paths, RunListeners& to) {
  check_run_reporter_paths(paths);
  for (const RunReporterEntry& e : run_reporters()) {
    const auto it = paths.find(e.flag);
    if (it != paths.end() && !it->second.empty()) to.add(e.make(it->second));
  }
}

namespace {

class ReportAtEnd final : public RunListener {
 public:
  ReportAtEnd(std::string path, const char* what, std::function<std::string(const RunEnd&)> render)
      : path_(std::move(path)), what_(what), render_(std::move(render)) {}
  void run_ended(const RunContext&, const RunEnd& end) override { write_report_file(path_, render_(end), what_); }

 private:
  std::string path_;
  const char* what_;
  std::function<std::string(const RunEnd&)> render_;
};

}  // namespace

std::unique_ptr<RunListener> report_at_end(std::string path, const char* what,
                                           std::function<std::string(const RunEnd&)> render) {
  return std::make_unique<ReportAtEnd>(std::move(path), what, std::move(render));
}

void write_report_file(const std::string& path, const std::string& text, const char* what) {
  if (path == "-") {
    std::cout << text << std::flush;
    return;
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write the {} report", path, what));
}

}  // namespace gauntlet

// Approval-test helpers for the reports' tests (reports_test.cpp, run_reports_test.cpp,
// github_test.cpp): a rendered report is compared byte for byte with its approved copy in
// harness/tests/approved/; on a mismatch the test fails, names the first difference and writes what
// it rendered next to the test binary as NAME.received.EXT. Re-bless with
//   GAUNTLET_BLESS=1 build/dev/harness/tests/gauntlet_analysis_tests --gtest_filter='RunReport*:GitHub*'
// and review the approved files' diff before committing it.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace approval {

namespace fs = std::filesystem;

inline const std::string kApproved = std::string(GAUNTLET_SOURCE_DIR) + "/harness/tests/approved";
inline const std::string kXsd = std::string(GAUNTLET_SOURCE_DIR) + "/harness/tests/junit.xsd";

inline fs::path build_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

inline std::string normalise(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;
    out += s[i];
  }
  return out;
}

inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first differing line with a few lines of context, in unified-diff style.
inline std::string first_difference(const std::string& approved, const std::string& received) {
  const auto a = lines_of(approved), r = lines_of(received);
  std::size_t first = 0;
  while (first < a.size() && first < r.size() && a[first] == r[first]) ++first;
  const std::size_t from = first >= 3 ? first - 3 : 0;
  std::ostringstream out;
  out << "first difference at line " << first + 1 << " (approved " << a.size() << " lines, received " << r.size()
      << ")\n";
  out << "@@ -" << from + 1 << " +" << from + 1 << " @@\n";
  for (std::size_t i = from; i < first; ++i) out << " " << a[i] << "\n";
  for (std::size_t i = first; i < std::min(a.size(), first + 4); ++i) out << "-" << a[i] << "\n";
  for (std::size_t i = first; i < std::min(r.size(), first + 4); ++i) out << "+" << r[i] << "\n";
  return out.str();
}

inline void expect_approved(const std::string& name, const std::string& ext, const std::string& actual) {
  const fs::path approved = fs::path(kApproved) / (name + "." + ext);
  const char* bless = std::getenv("GAUNTLET_BLESS");
  if (bless && std::string(bless) == "1") {
    fs::create_directories(approved.parent_path());
    write_file(approved, actual);
    std::printf("blessed %s\n", approved.c_str());
    return;
  }
  const fs::path received = build_dir() / (name + ".received." + ext);
  if (!fs::exists(approved)) {
    write_file(received, actual);
    ADD_FAILURE() << approved << " does not exist; the output is in " << received
                  << "; run with GAUNTLET_BLESS=1 to approve it";
    return;
  }
  const std::string expected = normalise(read_file(approved)), got = normalise(actual);
  if (expected == got) {
    fs::remove(received);
    return;
  }
  write_file(received, actual);
  ADD_FAILURE() << name << "." << ext << " differs from the approved copy.\n"
                << first_difference(expected, got) << "review: diff -u " << approved << " " << received
                << "\naccept: rerun with GAUNTLET_BLESS=1";
}

// Runs a shell command; its exit code, with stdout and stderr in `output`.
inline int run_command(const std::string& cmd, std::string* output) {
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) output->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// xmllint's schema check of `xml` against harness/tests/junit.xsd: "" when valid, else its output.
inline std::string junit_schema_errors(const std::string& xml, const std::string& name) {
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0)
    return "xmllint not found: run ci/setup.sh (libxml2-utils)";
  const fs::path file = build_dir() / name;
  write_file(file, xml);
  std::string output;
  return run_command("xmllint --noout --schema '" + kXsd + "' '" + file.string() + "'", &output) == 0 ? "" : output;
}

}  // namespace approval

// Docs that cannot go stale (Note [Checked docs]): every console block of README.md and docs/*.md
// marked `<!-- docs-test: SESSION -->` is run with the real binary, and what its commands print
// must be what the block quotes. A figure changed by hand, or a change that moves a count the docs
// quote, fails this test until the doc says what the command prints.
//
// Note [Checked docs]: a marked block is either
//   ```sh       set-up, run as a script, its output not compared;
//   ```console  `$ COMMAND` lines (a trailing `\` continues one), each followed by what it prints
//               (stdout and stderr together) up to the next `$ ` line; or
//   any block marked `<!-- docs-test: SESSION file=PATH -->`: written to PATH (a waivers file
//               the next commands read).
// A set-up the reader need not see is an HTML comment: `<!-- docs-test-setup: SESSION` on a line,
// the script, then `-->`.
// Blocks with the same SESSION share a scratch folder (relative paths such as out/c.db carry from
// one block to the next), run in the order they appear: README.md first, then docs/ by file name.
// The binary's folder is first on PATH, so `gauntlet` is the one just built. Compared after
// blanking what no doc can hold still: ISO times and dates (<time>, <date>); trailing blanks are
// ignored. An expected line `...` stands for any number of lines: the quoted output may be cut; a
// line ending in ` ...` for one line that starts with what precedes the dots (`time     first ...`). A
// marker's `cpu=FLAG` compares its block only on a CPU with that flag (figures measured with it).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Step {
  std::string cpu;       // a CPU flag the quoted output needs (cpu=FLAG): compared only where /proc/cpuinfo has it
  std::string command;   // "" for a set-up script
  std::string script;    // the set-up block's text
  std::string expected;  // what the block quotes
  std::string where;     // docs/x.md:12
};

struct Session {
  std::vector<Step> steps;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

// The marked blocks of one document, appended to their sessions.
void parse_doc(const std::string& name, const std::string& text, std::map<std::string, Session>& sessions,
               std::vector<std::string>& order) {
  static const std::regex marker(R"(^<!-- docs-test: ([A-Za-z0-9_.-]+)( file=(\S+))?( cpu=(\w+))? -->\s*$)");
  static const std::regex hidden(R"(^<!-- docs-test-setup: ([A-Za-z0-9_.-]+)\s*$)");
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, hidden)) {
      const std::string session = m[1];
      if (!sessions.count(session)) order.push_back(session);
      Step step;
      step.where = name + ":" + std::to_string(i + 1);
      for (++i; i < lines.size() && lines[i] != "-->"; ++i) step.script += lines[i] + "\n";
      sessions[session].steps.push_back(step);
      continue;
    }
    if (!std::regex_match(lines[i], m, marker)) continue;
    const std::string session = m[1], file = m[3], cpu = m[5];
    if (!sessions.count(session)) order.push_back(session);
    std::size_t open = i + 1;
    while (open < lines.size() && lines[open].empty()) ++open;
    const bool fence = open < lines.size() && lines[open].rfind("```", 0) == 0;
    const bool console = fence && lines[open] == "```console";
    const bool sh = fence && lines[open] == "```sh";
    const std::string where = name + ":" + std::to_string(i + 1);
    if (!fence || (file.empty() && !console && !sh)) {
      ADD_FAILURE() << where << ": a docs-test marker must precede a ```console or ```sh block (or name a file=)";
      continue;
    }
    std::size_t close = open + 1;
    while (close < lines.size() && lines[close] != "```") ++close;
    if (!file.empty() || sh) {
      Step step;
      std::string body;
      for (std::size_t k = open + 1; k < close; ++k) body += lines[k] + "\n";
      step.script = file.empty() ? body
                                 : "mkdir -p \"$(dirname '" + file + "')\"\ncat > '" + file + "' <<'DOCS_TEST_EOF'\n" +
                                       body + "DOCS_TEST_EOF\n";
      step.where = where;
      sessions[session].steps.push_back(step);
    } else {
      Step* step = nullptr;
      for (std::size_t k = open + 1; k < close; ++k) {
        const std::string& line = lines[k];
        if (line.rfind("$ ", 0) == 0) {
          sessions[session].steps.push_back(Step{cpu, line.substr(2), "", "", name + ":" + std::to_string(k + 1)});
          step = &sessions[session].steps.back();
          while (!step->command.empty() && step->command.back() == '\\' && k + 1 < close) {
            step->command.back() = '\n';
            step->command += lines[++k];
          }
        } else if (step != nullptr) {
          step->expected += line + "\n";
        } else {
          ADD_FAILURE() << name << ":" << k + 1 << ": output before the first `$ ` command of a checked block";
        }
      }
    }
    i = close;
  }
}

// What no doc can hold still, blanked in both texts.
std::string normalized(const std::string& text) {
  static const std::regex time(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)"), date(R"(\b\d{4}-\d{2}-\d{2}\b)");
  std::string out = std::regex_replace(std::regex_replace(text, time, "<time>"), date, "<date>");
  std::string trimmed;
  for (std::string line : lines_of(out)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    trimmed += line + "\n";
  }
  return trimmed;
}

// Whether `actual` is what `expected` quotes, `...` lines matching any run of lines. On a
// mismatch, `why` says where.
bool matches(const std::vector<std::string>& e, std::size_t i, const std::vector<std::string>& a, std::size_t j,
             std::size_t& furthest) {
  furthest = std::max(furthest, i);
  if (i == e.size()) return j == a.size();
  if (e[i] == "...") {
    for (std::size_t k = j; k <= a.size(); ++k) {
      if (matches(e, i + 1, a, k, furthest)) return true;
    }
    return false;
  }
  // A line ending in ` ...` quotes the start of a line (a time, a port: what differs run to run).
  const bool head = e[i].size() > 4 && e[i].ends_with(" ...");
  const bool same =
      j < a.size() && (head ? a[j].starts_with(std::string_view(e[i]).substr(0, e[i].size() - 4)) : e[i] == a[j]);
  return same && matches(e, i + 1, a, j + 1, furthest);
}

std::pair<int, std::string> run_in(const fs::path& dir, const std::string& script) {
  const fs::path file = dir / ".docs-step.sh";
  {
    std::ofstream out(file);
    // A reader's shell has no GAUNTLET_* variables (a run records them: they would show in the output).
    out << "cd " << dir << "\nexport PATH=" << fs::path(GAUNTLET_BIN).parent_path().string() << ":$PATH\n"
        << "for v in $(compgen -e | grep '^GAUNTLET_'); do unset \"$v\"; done\n"
        << script << "\n";
  }
  FILE* p = popen(("bash " + file.string() + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Whether /proc/cpuinfo lists `flag` (figures that depend on the CPU's instructions, such as
// bf16 accumulation, are quoted as measured with it).
bool cpu_has(const std::string& flag) {
  static const std::string info = slurp("/proc/cpuinfo");
  return std::regex_search(info, std::regex("\\b" + flag + "\\b"));
}

// GAUNTLET_BLESS=1: a step whose quoted output has no `...` is rewritten in its doc with what the
// command printed (review the diff before committing); the others are reported as without it.
struct Bless {
  std::string file;                  // relative to the source folder
  std::size_t line = 0, quoted = 0;  // the command's 1-based line, and how many lines it quotes
  std::string printed;
};
std::vector<Bless> blessings;

void bless_docs(const fs::path& src) {
  std::map<std::string, std::vector<Bless>> by_file;
  for (const Bless& b : blessings) by_file[b.file].push_back(b);
  for (auto& [file, list] : by_file) {
    std::vector<std::string> lines = lines_of(slurp(src / file));
    std::sort(list.begin(), list.end(), [](const Bless& a, const Bless& b) { return a.line > b.line; });
    for (const Bless& b : list) {
      std::vector<std::string> printed = lines_of(b.printed);
      for (std::string& l : printed) {
        while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
      }
      const auto at = lines.begin() + static_cast<std::ptrdiff_t>(b.line);  // after the command line
      lines.erase(at, at + static_cast<std::ptrdiff_t>(b.quoted));
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(b.line), printed.begin(), printed.end());
    }
    std::ofstream out(src / file);
    for (const std::string& l : lines) out << l << "\n";
  }
}

// Runs each session; returns one message per step whose output is not what its doc quotes.
std::vector<std::string> check(const std::map<std::string, Session>& sessions, const std::vector<std::string>& order,
                               const fs::path& root) {
  const char* bless = std::getenv("GAUNTLET_BLESS");
  std::vector<std::string> problems;
  for (const std::string& name : order) {
    const fs::path dir = root / name;
    fs::create_directories(dir);
    int last = 0;  // the previous command's exit code: `$ echo $?` prints it
    for (const Step& step : sessions.at(name).steps) {
      if (step.command.empty()) {
        // Its exit code is not judged: a set-up may end with a gate that fails on purpose.
        run_in(dir, step.script);
        continue;
      }
      const auto [code, out] = run_in(dir, "(exit " + std::to_string(last) + ")\n" + step.command);
      last = code;
      if (!step.cpu.empty() && !cpu_has(step.cpu)) {
        std::cout << step.where << ": not compared: this CPU lacks " << step.cpu
                  << ", which its figures were measured with\n";
        continue;
      }
      const std::vector<std::string> e = lines_of(normalized(step.expected)), a = lines_of(normalized(out));
      std::size_t furthest = 0;
      if (matches(e, 0, a, 0, furthest)) continue;
      const std::vector<std::string> quoted = lines_of(step.expected);
      if (bless != nullptr && std::string(bless) == "1" &&
          std::none_of(quoted.begin(), quoted.end(), [](const std::string& l) { return l.ends_with("..."); }) &&
          step.command.find('\n') == std::string::npos) {
        const std::size_t colon = step.where.rfind(':');
        blessings.push_back(
            {step.where.substr(0, colon), std::stoul(step.where.substr(colon + 1)), quoted.size(), out});
        continue;
      }
      std::string msg = step.where + ": `$ " + step.command + "` does not print what the doc quotes";
      if (furthest < e.size()) msg += "; first quoted line not printed: " + e[furthest];
      msg += "\n--- the command printed:\n" + out;
      problems.push_back(msg);
    }
  }
  return problems;
}

class DocsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "gauntlet_docs_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(DocsTest, EveryCheckedBlockPrintsWhatTheDocQuotes) {
  const fs::path src = GAUNTLET_SOURCE_DIR;
  std::vector<fs::path> docs = {src / "README.md"};
  std::vector<fs::path> rest;
  for (const auto& e : fs::directory_iterator(src / "docs")) {
    if (e.path().extension() == ".md") rest.push_back(e.path());
  }
  std::sort(rest.begin(), rest.end());
  docs.insert(docs.end(), rest.begin(), rest.end());
  std::map<std::string, Session> sessions;
  std::vector<std::string> order;
  std::size_t steps = 0;
  blessings.clear();
  for (const fs::path& d : docs) parse_doc(fs::relative(d, src).string(), slurp(d), sessions, order);
  for (const auto& [_, s] : sessions) steps += s.steps.size();
  EXPECT_GE(steps, 10u) << "the checked blocks went missing";
  for (const std::string& problem : check(sessions, order, root_)) ADD_FAILURE() << problem;
  bless_docs(src);
}

// The check itself: a figure changed by hand fails it, naming the file and line; `...` cuts.
TEST_F(DocsTest, AFigureChangedByHandFailsNamingTheLine) {
  const std::string good =
      "text\n<!-- docs-test: t -->\n```console\n$ gauntlet list --suite smoke --count\n2974\n```\n"
      "<!-- docs-test: t -->\n```console\n$ gauntlet list --suites\n...\nsmoke              2974 cases  Every op once "
      "or a "
      "few times; fast gate for every build\n```\n";
  std::map<std::string, Session> sessions;
  std::vector<std::string> order;
  parse_doc("good.md", good, sessions, order);
  EXPECT_TRUE(check(sessions, order, root_).empty());

  std::string bad = good;
  bad.replace(bad.find("2974\n"), 5, "2975\n");
  sessions.clear();
  order.clear();
  parse_doc("bad.md", bad, sessions, order);
  const std::vector<std::string> problems = check(sessions, order, root_);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].rfind("bad.md:4: `$ gauntlet list --suite smoke --count` does not print what the doc quotes; "
                              "first quoted line not printed: 2975",
                              0),
            0u)
      << problems[0];

  // A line ending in ` ...` quotes the start of one line, no more.
  const auto problems_of = [&](const std::string& doc) {
    sessions.clear();
    order.clear();
    parse_doc("head.md", doc, sessions, order);
    const std::vector<std::string> found = check(sessions, order, root_);
    for (const std::string& p : found) std::cerr << p << "\n";
    return found.size();
  };
  const std::string head = "<!-- docs-test: h -->\n```console\n$ gauntlet list --suite smoke | head -2\n";
  EXPECT_EQ(problems_of(head + "op/__and__/bool/17x31,17x31/contig/eager\nop/__and__/bool/7x1x5 ...\n```\n"), 0u);
  EXPECT_EQ(problems_of(head + "op/__and__/bool/17x31,17x31/contig/eager\nop/__and__/bool/8x ...\n```\n"), 1u);
  EXPECT_EQ(problems_of(head + "op/__and__/bool/ ...\n```\n"), 1u);
}

}  // namespace

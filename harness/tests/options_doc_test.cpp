// Note [Options beside their fields] (gauntlet/base/command_line.h): every command's options, as the
// library describes them, are documented in docs/cli.md, in the command's own section.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gauntlet/analysis/dashboard.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/backend/backend_info.h"
#include "gauntlet/core/bundle/repro.h"
#include "gauntlet/core/catalog/listing.h"
#include "gauntlet/core/catalog/ops_from_models.h"
#include "gauntlet/core/collective/rank_process.h"
#include "gauntlet/core/session/bench_run.h"
#include "gauntlet/core/session/golden_command.h"
#include "gauntlet/core/session/plan.h"
#include "gauntlet/core/session/run_request.h"
#include "gauntlet/core/session/worker_loop.h"
#include "gauntlet/run/compare_command.h"
#include "gauntlet/run/merge.h"
#include "gauntlet/run/run_summary.h"
#include "gauntlet/run/weekly_command.h"

namespace gauntlet {
namespace {

// The names a description declares, with what it says of each.
class Names : public OptionSink {
 public:
  struct Declared : OptionSpec {
    std::string name, help;
    bool is_required = false, is_internal = false, shows_default = false;
    OptionSpec& required() override {
      is_required = true;
      return *this;
    }
    OptionSpec& show_default() override {
      shows_default = true;
      return *this;
    }
    OptionSpec& value_optional() override { return *this; }
    OptionSpec& internal() override {
      is_internal = true;
      return *this;
    }
  };
  OptionSpec& option(const std::string& n, std::string&, const std::string& h) override { return add(n, h); }
  OptionSpec& option(const std::string& n, std::vector<std::string>&, const std::string& h) override {
    return add(n, h);
  }
  OptionSpec& option(const std::string& n, int&, const std::string& h) override { return add(n, h); }
  OptionSpec& option(const std::string& n, long&, const std::string& h) override { return add(n, h); }
  OptionSpec& option(const std::string& n, long long&, const std::string& h) override { return add(n, h); }
  OptionSpec& option(const std::string& n, unsigned long long&, const std::string& h) override { return add(n, h); }
  OptionSpec& option(const std::string& n, double&, const std::string& h) override { return add(n, h); }
  OptionSpec& flag(const std::string& n, bool&, const std::string& h) override { return add(n, h); }

  std::vector<std::unique_ptr<Declared>> declared;

 private:
  OptionSpec& add(const std::string& name, const std::string& help) {
    auto d = std::make_unique<Declared>();
    d->name = name;
    d->help = help;
    declared.push_back(std::move(d));
    return *declared.back();
  }
};

struct CommandOptions {
  std::string command;  // as docs/cli.md's heading names it
  std::function<void(Names&)> describe;
};

std::vector<CommandOptions> every_command() {
  auto of = [](auto options) {
    return
        [options, profile = std::string(), dynamo = std::string(), dynamo_options = std::string()](Names& s) mutable {
          describe_options(s, options);
          describe_profile(s, profile);  // the command line adds these to the commands that make a backend
          describe_dynamo(s, dynamo, dynamo_options);
        };
  };
  auto plain = [](auto options) { return [options](Names& s) mutable { describe_options(s, options); }; };
  std::vector<CommandOptions> all = {
      {"list", plain(ListOptions{})},
      {"run", of(RunRequest{})},
      {"show", plain(ShowOptions{})},
      {"repro", of(ReproOptions{})},
      {"reduce", of(ReduceOptions{})},
      {"ops-from-models", plain(OpsFromModelsOptions{})},
      {"plan", plain(PlanOptions{})},
      {"merge", plain(MergeOptions{})},
      {"compare", plain(CompareRequest{})},
      {"report", plain(ReportRequest{})},
      {"dashboard", plain(DashboardRequest{})},
      {"bench", of(BenchOptions{})},
      {"backend-info", of(BackendInfoOptions{})},
      {"rank", plain(RankOptions{})},
      {"worker", of(WorkerSettings{})},
  };
  for (const char* action : {"build", "verify", "freeze", "gc"}) {
    all.push_back({"golden", [action](Names& s) {
                     GoldenOptions o;
                     describe_options(s, o, action);
                   }});
  }
  return all;
}

// The section "## gauntlet COMMAND" of docs/cli.md, up to the next "## ".
std::string section(const std::string& doc, const std::string& command) {
  const std::string heading = "\n## gauntlet " + command + "\n";
  const std::size_t start = doc.find(heading);
  if (start == std::string::npos) return "";
  const std::size_t end = doc.find("\n## ", start + heading.size());
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(OptionsDoc, EveryOptionOfEveryCommandIsInItsSection) {
  std::ifstream in(std::string(GAUNTLET_SOURCE_DIR) + "/docs/cli.md");
  ASSERT_TRUE(in) << "docs/cli.md";
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  std::size_t checked = 0;
  for (const CommandOptions& c : every_command()) {
    const std::string text = section(doc, c.command);
    ASSERT_FALSE(text.empty()) << "docs/cli.md has no section \"## gauntlet " << c.command << "\"";
    Names names;
    c.describe(names);
    for (const auto& d : names.declared) {
      EXPECT_FALSE(d->help.empty()) << c.command << " " << d->name << ": no help";
      if (d->is_internal || d->name.rfind("--", 0) != 0) continue;  // positional arguments are in the synopsis
      ++checked;
      // A table's row names it "`--name`" or "`--name VALUE`".
      const bool documented =
          text.find("`" + d->name + "`") != std::string::npos || text.find("`" + d->name + " ") != std::string::npos;
      EXPECT_TRUE(documented) << "docs/cli.md, \"## gauntlet " << c.command << "\": " << d->name
                              << " is not documented (a row `" << d->name << "`)";
    }
  }
  EXPECT_GT(checked, 150u);
}

TEST(OptionsDoc, NoCommandDeclaresAnOptionTwice) {
  for (const CommandOptions& c : every_command()) {
    Names names;
    c.describe(names);
    std::vector<std::string> seen;
    for (const auto& d : names.declared) {
      EXPECT_EQ(std::count(seen.begin(), seen.end(), d->name), 0) << c.command << " declares " << d->name << " twice";
      seen.push_back(d->name);
    }
  }
}

}  // namespace
}  // namespace gauntlet

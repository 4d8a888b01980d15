// The subcommands as values (Note [Two binaries] in front.cpp): each add_<command> declares its
// subcommand and options on the app and returns what runs once parsed. The commands that read
// stored runs (commands.cpp) are torch-free and serve both binaries; the others are in main.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gauntlet/cli/cli.h"
#include "gauntlet/core/backend/backend_info.h"
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
#include "gauntlet/run/triage_command.h"
#include "gauntlet/run/weekly_command.h"

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace gauntlet::cli {

// Every command's options, alive from parsing to the command's end.
struct Options {
  std::vector<std::string> argv;  // the arguments after the program's name
  std::string profile;            // --profile, of the commands that make a backend
  std::string dynamo_backend;     // --dynamo-backend, of the same
  std::string dynamo_options;     // --dynamo-options, of the same
  ListOptions lo;
  RunRequest ro;
  GoldenOptions go;
  ShowOptions so;
  ReproOptions po;
  ReduceOptions rdo;
  OpsFromModelsOptions fm;
  PlanOptions pl;
  MergeOptions mo;
  CompareRequest co;
  ReportRequest rp;
  TriageRequest tr;
  DashboardRequest dso;
  BenchOptions be;
  BackendInfoOptions bo;
  RankOptions rko;
  WorkerSettings wo;
};

// A command (DuckDB's Command subclasses, as a value): its subcommand and what it does once parsed.
struct Command {
  CLI::App* app;
  std::function<int()> action;
};

// Writes a command's text to stdout; returns exit_code.
int print(const std::string& text, int exit_code = 0);

// The torch-free commands (commands.cpp): they read stored runs. (plan and dashboard read the
// suites' op table, whose kernels are torch's: they are in main.cpp.)
Command add_show(CLI::App& app, Options& all);
Command add_merge(CLI::App& app, Options& all);
Command add_compare(CLI::App& app, Options& all);
Command add_report(CLI::App& app, Options& all);
Command add_triage(CLI::App& app, Options& all);
// Their names, for the front binary's dispatch.
const std::vector<std::string>& torch_free_commands();

// A parse error in one line, naming the (sub)command's help; returns the exit code.
int parse_failure(CLI::App& app, const CLI::ParseError& e);
// Whether `word` is a subcommand of app; if not, says so with the nearest one.
bool known_command(CLI::App& app, const std::string& word);
// Runs the parsed command; every error ends here, once (Note [Error family] in gauntlet/base/error.h).
int run_command(const Command& command, const Options& all);
// Parses argv into the commands and runs the one given: the whole of main() in either binary.
int parse_and_run(CLI::App& app, Options& all, const std::vector<Command>& commands, int argc, char** argv);

}  // namespace gauntlet::cli

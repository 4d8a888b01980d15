// gauntlet-torch: every command (Note [Two binaries] in front.cpp). Each command's options are the
// library's (Note [Options beside their fields]); here they are declared and the command called.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "gauntlet/cli/cli_sink.h"
#include "gauntlet/cli/commands.h"
#include "gauntlet/run/reporters.h"

namespace gauntlet::cli {

namespace {

Command add_list(CLI::App& app, Options& all) {
  auto* sub = declare(app, "list", "list the cases of a suite, the op table, or the suites", all.lo);
  return {sub, [&all, sub] {
            all.lo.ops_of_models_given = sub->count("--ops-of-models") > 0;
            const Listing l = listing(all.lo);
            return print(l.text, l.exit_code);
          }};
}

Command add_run(CLI::App& app, Options& all) {
  auto* sub = declare(app, "run", "run a suite on a backend and store every result", all.ro);
  add_profile(*sub, all.profile, all.dynamo_backend, all.dynamo_options);
  return {sub, [&all, sub] {
            all.ro.backend_given = sub->count("--backend") > 0;
            return PreparedRun::prepare(all.ro)->run();
          }};
}

Command add_golden(CLI::App& app, Options& all) {
  auto* golden = app.add_subcommand("golden", "the golden store: build, verify, freeze, gc (docs/golden.md)");
  golden->require_subcommand(1);
  for (const auto& [action, about] : std::vector<std::pair<std::string, std::string>>{
           {"build", "compute and store the goldens of a suite (incremental)"},
           {"verify", "check every object, recompute a sample, report drift"},
           {"freeze", "record the goldens a release was qualified with"},
           {"gc", "drop entries no manifest or suite references"}}) {
    declare(*golden, action, about, all.go, action);
  }
  return {golden, [&all, golden] {
            for (auto* sub : golden->get_subcommands()) all.go.action = sub->get_name();
            const GoldenDone d = golden_command(all.go);
            return print(d.text, d.exit_code);
          }};
}

Command add_repro(CLI::App& app, Options& all) {
  auto* sub = declare(app, "repro", "run one case (in a child process) and explain its verdict", all.po);
  add_profile(*sub, all.profile, all.dynamo_backend, all.dynamo_options);
  return {sub, [&all] {
            all.po.argv = all.argv;
            all.po.profile = all.profile;
            return repro(all.po);
          }};
}

Command add_reduce(CLI::App& app, Options& all) {
  auto* sub = declare(app, "reduce",
                      "shrink a failing op case to the smallest shapes that still fail the same way, in worker "
                      "processes (docs/repro.md)",
                      all.rdo);
  add_profile(*sub, all.profile, all.dynamo_backend, all.dynamo_options);
  return {sub, [&all] {
            all.rdo.profile = all.profile;
            if (all.rdo.run != 0 && all.rdo.db.empty()) throw UsageError("reduce --run needs --db FILE");
            return reduce(all.rdo);
          }};
}

Command add_ops_from_models(CLI::App& app, Options& all) {
  auto* sub =
      declare(app, "ops-from-models",
              "write a suite of op cases cut from the ops real models execute (docs/writing-suites.md)", all.fm);
  return {sub, [&all] {
            const CutSuite cut = cut_ops_suite(all.fm);
            for (const std::string& w : cut.warnings) fmt::print(stderr, "gauntlet: warning: {}\n", w);
            write_report_file(all.fm.out.empty() ? "-" : all.fm.out, cut.text, "suite");
            fmt::print(stderr, "{}", cut.summary);
            return 0;
          }};
}

Command add_plan(CLI::App& app, Options& all) {
  auto* sub = declare(app, "plan", "assign a suite's cases to shards by expected cost (docs/scaling.md)", all.pl);
  return {sub, [&all] { return print(write_plan(all.pl)); }};
}

Command add_dashboard(CLI::App& app, Options& all) {
  auto* sub = declare(app, "dashboard", "write the static trend site of a database (open DIR/index.html)", all.dso);
  return {sub, [&all] { return dashboard(all.dso); }};
}

Command add_bench(CLI::App& app, Options& all) {
  auto* sub = declare(app, "bench", "time a suite's cases with Google Benchmark and store them as a run", all.be);
  add_profile(*sub, all.profile, all.dynamo_backend, all.dynamo_options);
  return {sub, [&all] { return print(run_bench(all.be)); }};
}

Command add_backend_info(CLI::App& app, Options& all) {
  auto* sub = declare(app, "backend-info", "what a backend reports: version, configuration, native kernels", all.bo);
  add_profile(*sub, all.profile, all.dynamo_backend, all.dynamo_options);
  return {sub, [&all] { return print(backend_info(all.bo)); }};
}

Command add_rank(CLI::App& app, Options& all) {
  auto* sub = declare(app, "rank", "one rank of a collective case's group (started by the group)", all.rko);
  return {sub, [&all] {
            std::cout << rank_process(all.rko) << std::endl;
            return 0;
          }};
}

Command add_worker(CLI::App& app, Options& all) {
  auto* sub = declare(app, "worker", "run the case keys read on stdin, answer JSON lines (used by run)", all.wo);
  add_profile(*sub, all.profile, all.dynamo_backend, all.dynamo_options);
  return {sub, [&all] { return run_worker(all.wo); }};
}

}  // namespace

}  // namespace gauntlet::cli

// Note [Two binaries] (front.cpp): this is gauntlet-torch, every command; `gauntlet` runs the
// torch-free ones itself and hands the others here.
int main(int argc, char** argv) {
  using namespace gauntlet::cli;
  CLI::App app{"gauntlet: conformance and performance qualification of PyTorch device backends"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gauntlet " GAUNTLET_VERSION_STRING);
  Options all;
  all.argv.assign(argv + 1, argv + argc);
  const std::vector<Command> commands = {
      add_list(app, all),      add_run(app, all),     add_golden(app, all),          add_show(app, all),
      add_repro(app, all),     add_reduce(app, all),  add_ops_from_models(app, all), add_plan(app, all),
      add_merge(app, all),     add_compare(app, all), add_report(app, all),          add_triage(app, all),
      add_dashboard(app, all), add_bench(app, all),   add_backend_info(app, all),    add_rank(app, all),
      add_worker(app, all)};
  return parse_and_run(app, all, commands, argc, argv);
}

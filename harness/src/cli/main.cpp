// gauntlet: the command-line entry point. Parses options into structs and dispatches.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "cli.h"
#include "gauntlet/catalog.h"
#include "gauntlet/store.h"

int main(int argc, char** argv) {
  using namespace gauntlet;
  CLI::App app{"gauntlet: conformance and performance qualification of PyTorch device backends"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gauntlet " GAUNTLET_VERSION_STRING);

  cli::ListOptions lo;
  auto* list = app.add_subcommand("list", "list the cases of a suite, the op table, or the suites");
  list->add_option("--suite", lo.suite, "suite name (suites/yaml/NAME.yaml) or path to a .yaml file");
  list->add_option("--filter", lo.filter, "gtest-style globs on case keys: POS1:POS2:-NEG1:NEG2");
  list->add_option("--shard", lo.shard, "i/N: only the i-th of N shards");
  list->add_option("--suites-dir", lo.suites_dir, "where suites live (default: $GAUNTLET_SUITES or the source tree)");
  list->add_flag("--count", lo.count, "print the number of cases only");
  list->add_flag("--json", lo.json, "print JSON");
  list->add_flag("--ops", lo.ops, "print the op table, one op a line");
  list->add_flag("--suites", lo.suites, "print the suites, one a line");

  cli::RunOptions ro;
  auto* run = app.add_subcommand("run", "run a suite on a backend and store every result");
  run->add_option("--suite", ro.suite, "suite name or .yaml path")->required();
  run->add_option("--backend", ro.backend, "cpu | sim | plugin:<path.so>")->capture_default_str();
  run->add_option("--db", ro.db, "SQLite database to write (created if missing)")->required();
  run->add_option("--filter", ro.filter, "gtest-style globs on case keys");
  run->add_option("--shard", ro.shard, "i/N: only the i-th of N shards");
  run->add_option("--release", ro.release, "release name recorded with the run");
  run->add_option("--build-id", ro.build_id, "build id recorded with the run");
  run->add_option("--suites-dir", ro.suites_dir, "where suites live");
  run->add_option("--reps", ro.max_reps, "steady-state timing repetitions per case")->capture_default_str();
  run->add_flag("--gate", ro.gate, "exit 1 when any case fails (FAIL, ERROR, CRASH, TIMEOUT, XPASS)");
  run->add_flag("--quiet", ro.quiet, "no progress line");

  run->add_option("--golden-store", ro.golden_store, "use precomputed goldens from this store when present and intact");
  run->add_flag("--golden-add", ro.golden_add, "add the goldens the store lacks (opens it for writing)");
  run->add_option("--golden-release", ro.golden_release, "judge against the goldens release R froze");
  run->add_flag("--golden-always", ro.golden_always,
                "read every stored golden, even those cheaper to recompute than to read");

  cli::GoldenOptions go;
  auto* golden = app.add_subcommand("golden", "the golden store: build, verify, freeze, gc (docs/golden.md)");
  golden->require_subcommand(1);
  auto add_store = [&go](CLI::App* sub) {
    sub->add_option("--store", go.store, "golden store folder")->required();
    sub->add_option("--suites-dir", go.suites_dir, "where suites live");
    sub->add_flag("--quiet", go.quiet, "no progress line");
  };
  auto* gbuild = golden->add_subcommand("build", "compute and store the goldens of a suite (incremental)");
  add_store(gbuild);
  gbuild->add_option("--suite", go.suite, "suite name or .yaml path")->required();
  gbuild->add_option("--filter", go.filter, "gtest-style globs on case keys");
  gbuild->add_option("--shard", go.shard, "i/N: only the i-th of N shards");
  gbuild->add_option("--workers", go.workers, "threads computing goldens")->capture_default_str();
  auto* gverify = golden->add_subcommand("verify", "check every object, recompute a sample, report drift");
  add_store(gverify);
  gverify->add_option("--sample", go.sample, "entries to recompute (-1: all)")->capture_default_str();
  gverify->add_option("--seed", go.seed, "which sample")->capture_default_str();
  auto* gfreeze = golden->add_subcommand("freeze", "record the goldens a release was qualified with");
  add_store(gfreeze);
  gfreeze->add_option("--release", go.release, "release name")->required();
  gfreeze->add_option("--suite", go.suite, "the suite the release was qualified on")->required();
  gfreeze->add_option("--filter", go.filter, "gtest-style globs on case keys");
  auto* ggc = golden->add_subcommand("gc", "drop entries no manifest or suite references");
  add_store(ggc);

  cli::ShowOptions so;
  auto* show = app.add_subcommand("show", "summarize a stored run: counts by status, then failures");
  show->add_option("--db", so.db, "SQLite database")->required();
  show->add_option("--run", so.run, "run id (default: the latest)");
  show->add_option("--status", so.statuses, "statuses to list, e.g. FAIL,ERROR (default: failures)");
  show->add_flag("--json", so.json, "print JSON");

  cli::ReproOptions po;
  auto* repro = app.add_subcommand("repro", "run one case in-process and explain its verdict");
  repro->add_option("key", po.key, "the case key")->required();
  repro->add_option("--backend", po.backend, "cpu | sim | plugin:<path.so>")->capture_default_str();
  repro->add_option("--suites-dir", po.suites_dir, "where expectations.yaml and tolerances.yaml live");
  repro->add_flag("--json", po.json, "print the outcome as the store keeps it");
  repro->add_option("--golden-store", po.golden_store, "use the golden from this store when present");
  repro->add_option("--golden-release", po.golden_release, "use the golden release R froze");

  cli::BackendInfoOptions bo;
  auto* binfo = app.add_subcommand("backend-info", "what a backend reports: version, configuration, native kernels");
  binfo->add_option("--backend", bo.backend, "cpu | sim | plugin:<path.so>")->capture_default_str();
  binfo->add_flag("--json", bo.json, "print JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gauntlet: error: " << e.what() << " (see gauntlet --help)\n";
    return 2;
  }

  try {
    if (*list) return cli::list(lo);
    if (*run) return cli::run(ro);
    if (*show) return cli::show(so);
    if (*repro) return cli::repro(po);
    if (*binfo) return cli::backend_info(bo);
    if (*golden) {
      for (auto* sub : golden->get_subcommands()) go.action = sub->get_name();
      return cli::golden(go);
    }
  } catch (const cli::UsageError& e) {
    std::cerr << "gauntlet: error: " << e.what() << "\n";
  } catch (const CatalogError& e) {
    std::cerr << "gauntlet: error: " << e.what() << "\n";
  } catch (const StoreError& e) {
    std::cerr << "gauntlet: error: " << e.what() << "\n";
  } catch (const KeyError& e) {
    std::cerr << "gauntlet: error: " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << "gauntlet: error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "gauntlet: internal error: " << e.what() << "\n";
    return 3;
  }
  return 2;
}

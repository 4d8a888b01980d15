// gauntlet-torch: every command (Note [Two binaries] in front.cpp). Parses options into structs
// and dispatches.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <iostream>

#include "commands.h"
#include "gauntlet/backend.h"
#include "gauntlet/catalog.h"
#include "gauntlet/golden_store.h"
#include "gauntlet/run/reporters.h"
#include "gauntlet/runner.h"
#include "gauntlet/store.h"
#include "reduce_command.h"

namespace gauntlet::cli {

namespace {

void add_profile(CLI::App* sub, std::string& profile) {
  sub->add_option("--profile", profile,
                  "the backend's tolerance and expectation profile (default: the name its library exports, else its "
                  "file's stem: libfoo.so -> foo; or $GAUNTLET_PROFILE)");
}

void add_timing(CLI::App* sub, TimingOptions& t) {
  sub->add_option("--reps", t.reps,
                  "timed repetitions per case at least, after the first call (0: time the first call only)")
      ->capture_default_str();
  sub->add_option("--min-time", t.min_time_ms, "repeat until the repetitions took this many ms")->capture_default_str();
  sub->add_option("--max-time", t.max_time_ms, "stop repeating once the case took this many ms (wins over the others)")
      ->capture_default_str();
  sub->add_option("--warmup", t.warmup, "untimed calls between the first call and the repetitions")
      ->capture_default_str();
}

Command add_list(CLI::App& app, Options& all) {
  auto& lo = all.lo;
  auto* list = app.add_subcommand("list", "list the cases of a suite, the op table, or the suites");
  list->add_option("--suite", lo.suite, "suite name (suites/yaml/NAME.yaml) or path to a .yaml file");
  list->add_option("--filter", lo.filter, "gtest-style globs on case keys: POS1:POS2:-NEG1:NEG2");
  list->add_option("--shard", lo.shard, "i/N: only the i-th of N shards");
  list->add_option("--suites-dir", lo.suites_dir, "where suites live (default: $GAUNTLET_SUITES or the source tree)");
  list->add_flag("--count", lo.count, "print the number of cases only");
  list->add_flag("--parts", lo.parts, "print the suites it includes, each with its count, and the keys two make");
  list->add_flag("--json", lo.json, "print JSON");
  list->add_flag("--ops", lo.ops, "print the op table, one op a line");
  list->add_flag("--colls", lo.colls, "print the collectives, one a line");
  list->add_flag("--models", lo.models,
                 "print the model zoo and the model files of --suite and $GAUNTLET_MODEL_FILES, one model a line");
  list->add_flag("--suites", lo.suites, "print the suites, one a line");
  auto* ops_of_models =
      list->add_option("--ops-of-models", lo.ops_of_models,
                       "[SUITE] the ops models execute, with counts, and which the op table lacks: every "
                       "model of SUITE run once on the CPU, or with --db what a stored run's model "
                       "cases recorded on their device (of SUITE when given)")
          ->expected(0, 1);
  list->add_option("--db", lo.db, "with --ops-of-models: the database of a stored run");
  list->add_option("--run", lo.run, "with --ops-of-models --db: that run (default: the latest)");
  return {list, [&all, ops_of_models] {
            cli::ListOptions& lo = all.lo;
            lo.ops_of_models_given = ops_of_models->count() > 0;
            if ((!lo.db.empty() || lo.run != 0) && !lo.ops_of_models_given) {
              throw cli::UsageError("list --db and --run go with --ops-of-models (a stored run's executed ops)");
            }
            if (lo.run != 0 && lo.db.empty()) throw cli::UsageError("list --run needs --db FILE");
            return cli::list(lo);
          }};
}

Command add_run(CLI::App& app, Options& all) {
  auto& ro = all.ro;
  auto* run = app.add_subcommand("run", "run a suite on a backend and store every result");
  run->add_option("--suite", ro.suite, "suite name or .yaml path (required unless --resume)");
  run->add_option("--model", all.run_model,
                  "qualify a TorchScript model file: a .pt with its manifest <stem>.yaml beside it, a manifest, or a "
                  "folder of them (docs/models.md, \"Qualify your own model\"); instead of --suite");
  auto* run_backend = run->add_option("--backend", ro.backend, backend_usages())->capture_default_str();
  add_profile(run, all.profile);
  run->add_option("--db", ro.db, "SQLite database to write (created if missing)")->required();
  run->add_option("--filter", ro.filter, "gtest-style globs on case keys");
  run->add_option("--keys-file", ro.keys_file,
                  "run exactly the case keys in FILE, one a line (with --filter: those it matches)");
  run->add_option("--shard", ro.shard, "i/N: only the i-th of N shards");
  run->add_option("--release", ro.release, "release name recorded with the run");
  run->add_option("--build-id", ro.build_id, "build id recorded with the run");
  run->add_option(
      "--price-per-device-hour", ro.price,
      "what one device-hour costs, for cost per million samples (default: $GAUNTLET_PRICE_PER_DEVICE_HOUR)");
  run->add_option("--suites-dir", ro.suites_dir, "where suites live");
  add_timing(run, ro.timing);
  run->add_flag("--gate", ro.gate,
                "exit 1 when any case fails (FAIL, ERROR, CRASH, TIMEOUT, XPASS) or the run is hollow (--min-ran)");
  run->add_option(
         "--min-ran", ro.min_ran,
         "--gate: fail when fewer than this fraction of the cases ran (PASS, FAIL, XFAIL, XPASS), or none passed")
      ->capture_default_str();
  run->add_flag("--quiet", ro.quiet, "no progress line");
  run->add_flag("--skip-db-check", ro.skip_db_check,
                "skip the PRAGMA quick_check of an existing database before writing (about 0.5 s per million results)");
  for (const RunReporterEntry& e : run_reporters()) run->add_option("--" + e.flag, ro.reports[e.flag], e.help);
  run->add_flag("--github", ro.github,
                "GitHub Actions: append a summary to $GITHUB_STEP_SUMMARY and print ::error lines for failures "
                "(on by default when GITHUB_ACTIONS=true)");
  run->add_option("--max-failures", ro.max_failures,
                  "stop the run (resumable) once this many cases have failed (FAIL, ERROR, CRASH, TIMEOUT, XPASS)");
  run->add_option("--workers", ro.workers,
                  "worker processes (default: one per --devices slot, else one per core; 0: in-process)");
  run->add_flag("--in-process", ro.in_process, "run cases in this process (same as --workers 0)");
  run->add_option("--timeout", ro.timeout, "seconds a case may run in a worker (default: the suite's, else 60)");
  run->add_option("--collective-timeout", ro.collective_timeout,
                  "seconds a collective case's group of rank processes may take (below --timeout)")
      ->capture_default_str();
  run->add_option("--retries", ro.retries, "times a crashed or timed-out case runs again, alone")
      ->capture_default_str();
  run->add_option("--devices", ro.devices, "device slots, e.g. 0-7 or 0,2,4: one worker per slot");
  run->add_option("--device-env", ro.device_env, "variable binding a worker to its slot (NEURON_RT_VISIBLE_CORES)");
  run->add_option("--plan", ro.plan, "run shard --shard i of this plan file (gauntlet plan)");
  run->add_option("--resume", ro.resume, "finish run RUN_ID of --db: only the cases without a result");
  run->add_option("--run-id", ro.run_id, "use this run id: resumes it when --db has it, else creates it");

  run->add_option("--golden-store", ro.golden_store, "use precomputed goldens from this store when present and intact");
  run->add_flag("--golden-add", ro.golden_add, "add the goldens the store lacks (opens it for writing)");
  run->add_option("--golden-release", ro.golden_release, "judge against the goldens release R froze");
  run->add_option("--record-env", ro.record_env,
                  "also record these environment variables with the run, for repro (globs: 'NEURON_*,XLA_FLAGS'; "
                  "GAUNTLET_* always)");
  run->add_flag("--golden-always", ro.golden_always,
                "read every stored golden, even those cheaper to recompute than to read");
  return {run, [&all, run_backend] {
            cli::RunOptions& ro = all.ro;
            ro.backend_given = run_backend->count() > 0;
            if (!all.run_model.empty()) {
              if (!ro.suite.empty())
                throw cli::UsageError("--model and --suite: give one (--model FILE is the suite of that model)");
              ro.suite = "model:" + all.run_model;
            }
            return cli::run(ro);
          }};
}

Command add_golden(CLI::App& app, Options& all) {
  auto& go = all.go;
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
  return {golden, [&all, golden] {
            for (auto* sub : golden->get_subcommands()) all.go.action = sub->get_name();
            return cli::golden(all.go);
          }};
}

Command add_repro(CLI::App& app, Options& all) {
  auto& po = all.po;
  auto* repro = app.add_subcommand("repro", "run one case (in a child process) and explain its verdict");
  repro->add_option("key", po.key, "the case key")->required();
  repro->add_option("--backend", po.backend, backend_usages() + " (default: the run's with --db, else cpu)");
  repro->add_option("--db", po.db, "restore the backend, environment, suites dir and goldens of a stored run");
  repro->add_option("--run", po.run, "with --db: that run (default: the latest with a result for the case)");
  repro->add_option("--suites-dir", po.suites_dir, "where expectations.yaml and tolerances.yaml live");
  repro
      ->add_option("--collective-timeout", po.collective_timeout, "seconds a collective case's group of ranks may take")
      ->capture_default_str();
  add_profile(repro, all.profile);
  repro->add_flag("--in-process", po.in_process,
                  "run the case in this process, not in a child (a crash then ends gauntlet)");
  repro->add_flag("--child", po.child, "(internal) the child of a repro: no header")->group("");
  repro->add_flag("--json", po.json, "print the outcome as the store keeps it");
  repro->add_option("--bundle", po.bundle,
                    "also write a standalone bundle into DIR: the case's tensors, manifest, repro.py and a C++ program "
                    "that replay it without Gauntlet (docs/repro.md, Bundles)");
  repro->add_option("--golden-store", po.golden_store, "use the golden from this store when present");
  repro->add_option("--golden-release", po.golden_release, "use the golden release R froze");
  return {repro, [&all] {
            all.po.argv = all.argv;
            all.po.profile = all.profile;
            return cli::repro(all.po);
          }};
}

Command add_reduce(CLI::App& app, Options& all) {
  auto& rdo = all.rdo;
  auto* reduce = app.add_subcommand("reduce",
                                    "shrink a failing op case to the smallest shapes that still fail the same way, in "
                                    "worker processes (docs/repro.md)");
  reduce->add_option("key", rdo.key, "the failing case key")->required();
  reduce->add_option("--backend", rdo.backend, backend_usages() + " (default: the run's with --db, else cpu)");
  reduce->add_option("--db", rdo.db,
                     "restore the backend, environment, suites dir and goldens of a stored run (as repro --db)");
  reduce->add_option("--run", rdo.run, "with --db: that run (default: the latest with a result for the case)");
  reduce->add_option("--suites-dir", rdo.suites_dir, "where expectations.yaml and tolerances.yaml live");
  add_profile(reduce, all.profile);
  reduce->add_option("--golden-store", rdo.golden_store, "use goldens from this store when present");
  reduce->add_option("--golden-release", rdo.golden_release, "use the goldens release R froze");
  reduce->add_option("--workers", rdo.workers, "worker processes running a batch of candidates")->capture_default_str();
  reduce->add_option("--timeout", rdo.timeout, "seconds a candidate may take before it is a TIMEOUT")
      ->capture_default_str();
  reduce->add_option("--max-candidates", rdo.max_candidates, "candidates run at most")->capture_default_str();
  reduce->add_flag("--json", rdo.json, "print the result as JSON");
  return {reduce, [&all] {
            all.rdo.profile = all.profile;
            if (all.rdo.run != 0 && all.rdo.db.empty()) throw cli::UsageError("reduce --run needs --db FILE");
            return cli::reduce(all.rdo);
          }};
}

Command add_ops_from_models(CLI::App& app, Options& all) {
  auto& fm = all.fm;
  auto* from_models = app.add_subcommand(
      "ops-from-models", "write a suite of op cases cut from the ops real models execute (docs/writing-suites.md)");
  from_models->add_option("--suite", fm.suite,
                          "the model suite whose models run once on the CPU (with --db: whose stored cases to read)");
  from_models->add_option("--db", fm.db, "read what a stored run's model cases executed on their device instead");
  from_models->add_option("--run", fm.run, "with --db: that run (default: the latest)");
  from_models->add_option("--out", fm.out, "the suite file to write (default: standard output)");
  from_models->add_option("--name", fm.name, "the generated suite's name")->capture_default_str();
  from_models->add_option("--suites-dir", fm.suites_dir, "where suites live");
  return {from_models, [&all] {
            const cli::OpsFromModelsOptions& fm = all.fm;
            if (fm.suite.empty() && fm.db.empty())
              throw cli::UsageError("ops-from-models needs --suite NAME or --db FILE");
            if (fm.run != 0 && fm.db.empty()) throw cli::UsageError("ops-from-models --run needs --db FILE");
            return cli::ops_from_models(fm);
          }};
}

Command add_plan(CLI::App& app, Options& all) {
  auto& pl = all.pl;
  auto* plan = app.add_subcommand("plan", "assign a suite's cases to shards by expected cost (docs/scaling.md)");
  plan->add_option("--suite", pl.suite, "suite name or .yaml path")->required();
  plan->add_option("--shards", pl.shards, "number of shards")->required();
  plan->add_option("--out", pl.out, "plan file to write")->required();
  plan->add_option("--history", pl.history, "a results database: past durations of the cases");
  plan->add_option("--backend", pl.backend, "whose past runs the history uses")->capture_default_str();
  plan->add_option("--filter", pl.filter, "gtest-style globs on case keys");
  plan->add_option("--suites-dir", pl.suites_dir, "where suites live");
  return {plan, [&all] { return cli::plan(all.pl); }};
}

Command add_dashboard(CLI::App& app, Options& all) {
  auto& dso = all.dso;
  auto* dash = app.add_subcommand("dashboard", "write the static trend site of a database (open DIR/index.html)");
  dash->add_option("--db", dso.db, "SQLite database, opened read-only")->required();
  dash->add_option("--out", dso.out, "directory of the site (created; its data/ is replaced)")->required();
  dash->add_option("--since", dso.since, "only runs started on this day or later, YYYY-MM-DD");
  dash->add_option("--backend", dso.backend, "only runs of this backend (runs.backend)");
  dash->add_option("--suite", dso.suite, "only runs of this suite");
  dash->add_option("--metric", dso.metric, "regressions judged on: auto | sim | host (as compare)")
      ->capture_default_str();
  dash->add_option("--compare-pairs", dso.compare_pairs, "newest release pairs judged by compare (regression counts)")
      ->capture_default_str();
  dash->add_option("--grid-releases", dso.grid_releases, "newest releases in the status grid (cases x releases)")
      ->capture_default_str();
  return {dash, [&all] { return cli::dashboard(all.dso); }};
}

Command add_bench(CLI::App& app, Options& all) {
  auto& be = all.be;
  auto* bench = app.add_subcommand("bench", "time a suite's cases with Google Benchmark and store them as a run");
  bench->add_option("--suite", be.suite, "suite name or .yaml path")->required();
  bench->add_option("--db", be.db, "SQLite database to write (created if missing)")->required();
  bench->add_option("--backend", be.backend, backend_usages())->capture_default_str();
  add_profile(bench, all.profile);
  bench->add_option("--filter", be.filter, "gtest-style globs on case keys");
  bench->add_option("--shard", be.shard, "i/N: only the i-th of N shards");
  bench->add_option("--release", be.release, "release name recorded with the run");
  bench->add_option("--build-id", be.build_id, "build id recorded with the run");
  bench->add_option(
      "--price-per-device-hour", be.price,
      "what one device-hour costs, for cost per million samples (default: $GAUNTLET_PRICE_PER_DEVICE_HOUR)");
  bench->add_option("--suites-dir", be.suites_dir, "where suites live");
  bench->add_option("--out", be.out, "write Google Benchmark's JSON here");
  bench->add_option("--repetitions", be.repetitions, "repetitions per case (one sample each)")->capture_default_str();
  bench->add_option("--min-time", be.min_time_s, "seconds each repetition runs at least")->capture_default_str();
  bench->add_flag("--quiet", be.quiet, "no per-benchmark lines");
  bench->add_flag(
      "--skip-db-check", be.skip_db_check,
      "skip the PRAGMA quick_check of an existing database before writing (about 0.5 s per million results)");
  return {bench, [&all] { return cli::bench(all.be); }};
}

Command add_backend_info(CLI::App& app, Options& all) {
  auto& bo = all.bo;
  auto* binfo = app.add_subcommand("backend-info", "what a backend reports: version, configuration, native kernels");
  binfo->add_option("--backend", bo.backend, backend_usages())->capture_default_str();
  binfo->add_flag("--json", bo.json, "print JSON");
  binfo->add_flag("--list", bo.list, "list the backends --backend can name, with a line on each");
  add_profile(binfo, all.profile);
  return {binfo, [&all] { return cli::backend_info(all.bo); }};
}

Command add_rank(CLI::App& app, Options& all) {
  auto& rko = all.rko;
  auto* rank = app.add_subcommand("rank", "one rank of a collective case's group (started by the group)");
  rank->add_option("--key", rko.key, "the collective case")->required();
  rank->add_option("--rank", rko.rank, "this rank")->required();
  rank->add_option("--port", rko.port, "the group's store on 127.0.0.1")->required();
  rank->add_option("--backend", rko.backend, backend_usages())->capture_default_str();
  rank->add_option("--suites-dir", rko.suites_dir, "where tolerances.yaml lives");
  rank->add_option("--store-timeout", rko.store_timeout, "seconds to wait for the other ranks")->capture_default_str();
  rank->add_option("--startup-timeout", rko.startup_timeout, "seconds for every rank of the group to start")
      ->capture_default_str();
  return {rank, [&all] { return cli::rank(all.rko); }};
}

Command add_worker(CLI::App& app, Options& all) {
  auto& wo = all.wo;
  auto* worker = app.add_subcommand("worker", "run the case keys read on stdin, answer JSON lines (used by run)");
  worker->add_option("--backend", wo.backend, backend_usages())->capture_default_str();
  worker->add_option("--suites-dir", wo.suites_dir, "where expectations.yaml and tolerances.yaml live");
  add_timing(worker, wo.timing);
  add_profile(worker, all.profile);
  worker->add_option("--golden-store", wo.golden_store, "use precomputed goldens from this store");
  worker->add_option("--golden-release", wo.golden_release, "judge against the goldens release R froze");
  worker->add_flag("--golden-always", wo.golden_always, "read every stored golden");
  worker
      ->add_option("--collective-timeout", wo.collective_timeout, "seconds a collective case's group of ranks may take")
      ->capture_default_str();
  return {worker, [&all] { return cli::worker(all.wo); }};
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
  const std::vector<Command> commands = {add_list(app, all),
                                         add_run(app, all),
                                         add_golden(app, all),
                                         add_show(app, all),
                                         add_repro(app, all),
                                         add_reduce(app, all),
                                         add_ops_from_models(app, all),
                                         add_plan(app, all),
                                         add_merge(app, all),
                                         add_compare(app, all),
                                         add_report(app, all),
                                         add_dashboard(app, all),
                                         add_bench(app, all),
                                         add_backend_info(app, all),
                                         add_rank(app, all),
                                         add_worker(app, all)};
  return parse_and_run(app, all, commands, argc, argv);
}

// The options of `gauntlet repro` and `gauntlet reduce` (gauntlet/core/bundle/repro.h).
#include "gauntlet/core/bundle/repro.h"

#include "gauntlet/core/backend/backend.h"

namespace gauntlet {

namespace {

// What repro and reduce share: the case, and the stored run whose configuration they restore
// (Note [Repro from the record]) or the parts of it given by hand.
void describe_case_and_setup(OptionSink& s, std::string& key, ReproSetup& setup, std::string& db, long long& run) {
  s.option("key", key, "the case key").required();
  describe_backend(s, setup.backend, " (default: the run's with --db, else cpu)");
  s.option("--db", db, "restore the backend, environment, suites dir and goldens of a stored run");
  s.option("--run", run, "with --db: that run (default: the latest with a result for the case)");
  s.option("--suites-dir", setup.suites_dir, "where expectations.yaml and tolerances.yaml live");
  s.option("--golden-store", setup.golden_store, "use goldens from this store when present");
  s.option("--golden-release", setup.golden_release, "use the goldens release R froze");
}

}  // namespace

void describe_options(OptionSink& s, ReproOptions& o) {
  describe_case_and_setup(s, o.key, o, o.db, o.run);
  s.option("--collective-timeout", o.collective_timeout, "seconds a collective case's group of ranks may take")
      .show_default();
  s.flag("--any-key", o.any_key,
         "run a key that no suite of the suites folder holds (a shape typed by hand, a reduced case)");
  s.flag("--in-process", o.in_process, "run the case in this process, not in a child (a crash then ends gauntlet)");
  s.flag("--child", o.child, "(internal) the child of a repro: no header").internal();
  s.flag("--json", o.json, "print the outcome as the store keeps it");
  s.option("--bundle", o.bundle,
           "also write a standalone bundle into DIR: the case's tensors, manifest, repro.py and a C++ program that "
           "replay it without Gauntlet (docs/repro.md, Bundles)");
}

void describe_options(OptionSink& s, ReduceOptions& o) {
  describe_case_and_setup(s, o.key, o, o.db, o.run);
  s.option("--workers", o.workers, "worker processes running a batch of candidates").show_default();
  s.option("--timeout", o.timeout, "seconds a candidate may take before it is a TIMEOUT").show_default();
  s.option("--max-candidates", o.max_candidates, "candidates run at most").show_default();
  s.flag("--json", o.json, "print the result as JSON");
}

}  // namespace gauntlet

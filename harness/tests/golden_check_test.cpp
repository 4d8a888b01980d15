// Every case of the suites has a golden the CPU can compute (issue 16, item 5). A case whose fp64
// golden raises is a catalog bug, not a backend result: it would end ERROR (or UNSUPPORTED) on
// every backend, or need an xfail per backend. This computes every case's golden as a run does:
//   - op cases: make_inputs + compute_golden (what the runner and `golden build` do);
//   - model cases: the fp64 forward (and, for train, the gradients of the fixed-weight loss) of
//     make_golden in harness/core/cases/model_case.cpp, for the case's batch size and every batch size
//     of its shape sequence (Note [Shape sequences]);
//   - collective cases: coll_golden of every rank (a rank process computes its own from every
//     rank's regenerated inputs, without any device or process group).
// GoldenCheck.Smoke, .CompileSmoke, .ModelsSmoke and .CollSmoke run in ctest; the big suites run
// with ci/golden_check.sh (GoldenCheck.NamedSuites with GAUNTLET_GOLDEN_CHECK_SUITES=a,b,...).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gauntlet/base/text.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/core/collective/collective.h"
#include "gauntlet/golden/golden.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/models/models.h"
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {
namespace {

const std::string kSuitesDir = std::string(GAUNTLET_SOURCE_DIR) + "/suites/yaml";

void op_golden(const CaseKey& key) {
  const OpDef* def = find_op_def(key.target);
  if (!def) throw std::invalid_argument("unknown op " + key.target);
  compute_golden(*def, key, make_inputs(key, def->spec));
}

// As make_golden in model_case.cpp: the case's inputs rounded to its dtype then upcast, run op by
// op in fp64; in train mode, the gradient of sum_k sum(out_k * w_k) with respect to every weight.
// The caller holds a ScopedExecutor(op_by_op) (process-wide settings: model cases run on one thread).
void model_golden(const CaseKey& key) {
  const ModelSpec& spec = model_catalog().get(key.target);
  const at::ScalarType dtype = model_dtype(std::string(dtype_name(key.dtype)));
  const bool train = key.mode == Mode::EagerBwd;
  // The first call's batch size, then a shape sequence's: b*2 .. b*(n+1) (revisits repeat these).
  std::set<std::int64_t> scales{1};
  if (auto seq = key.args.find("seq"); seq != key.args.end()) {
    for (int k = 0, n = std::stoi(seq->second); k < n; ++k) scales.insert(k + 2);
  }
  for (std::int64_t scale : scales) {
    std::vector<at::Tensor> args;
    for (const at::Tensor& t : make_model_inputs(spec, key.config, dtype, key.id(), scale)) {
      args.push_back(at::isFloatingType(t.scalar_type()) ? t.to(at::kDouble) : t);
    }
    std::vector<at::Tensor> leaves;
    if (train) {
      for (std::size_t i : spec.trainable_args()) {
        args[i] = args[i].detach().requires_grad_(true);
        leaves.push_back(args[i]);
      }
    }
    auto cu = compile_model(spec);
    const std::vector<at::Tensor> outs = run_model(*cu, spec, args);
    if (!train) continue;
    at::Tensor loss;
    for (std::size_t k = 0; k < outs.size(); ++k) {
      if (!at::isFloatingType(outs[k].scalar_type())) continue;
      const at::Tensor w = splitmix_uniform(outs[k].sizes(), dtype, key.id() ^ (0x1055'0000'0000'0001ULL * (k + 1)));
      at::Tensor term = (outs[k] * w.to(at::kDouble)).sum();
      loss = loss.defined() ? loss + term : term;
    }
    if (!loss.defined()) throw std::runtime_error("train mode, but the model has no floating output");
    torch::autograd::grad({loss}, leaves, /*grad_outputs=*/{}, /*retain_graph=*/false, /*create_graph=*/false,
                          /*allow_unused=*/true);
  }
}

void coll_goldens(const CaseKey& key) {
  for (int rank = 0; rank < key.world; ++rank) coll_golden(key, rank);
}

struct SuiteCheck {
  std::size_t ops = 0, models = 0, colls = 0;
  std::vector<std::string> failures;  // "key: error", sorted
  double seconds = 0;
};

// Computes the golden of every case of a suite; op cases on `workers` threads (as `golden build`
// does), model and collective cases on this one.
SuiteCheck check_suite(const std::string& name, int workers) {
  const auto t0 = std::chrono::steady_clock::now();
  const Suite suite = load_suite(name, kSuitesDir);
  SuiteCheck r;
  std::vector<const Case*> ops, others;
  for (const Case& c : suite.cases) (c.key.kind == "op" ? ops : others).push_back(&c);
  r.ops = ops.size();
  std::mutex mu;
  auto fail = [&](const Case& c, const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    r.failures.push_back(c.text + ": " + first_line(what));
  };
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < ops.size(); i = next++) {
      try {
        op_golden(ops[i]->key);
      } catch (const std::exception& e) {
        fail(*ops[i], e.what());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  {
    ScopedExecutor op_by_op(ExecutorSettings::op_by_op());
    for (const Case* c : others) {
      try {
        if (c->key.kind == "model") {
          ++r.models;
          model_golden(c->key);
        } else if (c->key.kind == "coll") {
          ++r.colls;
          coll_goldens(c->key);
        } else {
          throw std::runtime_error("unknown case kind " + c->key.kind);
        }
      } catch (const std::exception& e) {
        fail(*c, e.what());
      }
    }
  }
  std::sort(r.failures.begin(), r.failures.end());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

int workers_from_env() {
  const char* w = std::getenv("GAUNTLET_GOLDEN_CHECK_WORKERS");
  return w && *w ? std::max(1, std::atoi(w)) : 1;
}

// Checks the suite and reports: one summary line, then every case without a golden.
void expect_every_golden(const std::string& name) {
  SCOPED_TRACE("suite " + name);
  SuiteCheck r;
  ASSERT_NO_THROW(r = check_suite(name, workers_from_env()));
  fmt::print("golden check: suite {}: {} cases ({} op, {} model, {} collective), {} without a golden, {:.1f} s\n", name,
             r.ops + r.models + r.colls, r.ops, r.models, r.colls, r.failures.size(), r.seconds);
  std::fflush(stdout);
  EXPECT_GT(r.ops + r.models + r.colls, 0u) << "suite " << name << " has no case";
  if (r.failures.empty()) return;
  std::ostringstream list;
  for (const auto& f : r.failures) list << "\n  NO GOLDEN   " << f;
  ADD_FAILURE() << r.failures.size() << " case(s) of suite " << name
                << " have no golden: the CPU reference raises, so they end ERROR (or UNSUPPORTED) on every "
                   "backend. Fix or drop them in the catalog (docs/writing-suites.md#every-case-has-a-golden):"
                << list.str();
}

TEST(GoldenCheck, Smoke) { expect_every_golden("smoke"); }
TEST(GoldenCheck, CompileSmoke) { expect_every_golden("compile_smoke"); }
TEST(GoldenCheck, ModelsSmoke) { expect_every_golden("models_smoke"); }
TEST(GoldenCheck, CollSmoke) { expect_every_golden("coll_smoke"); }

// The big suites, by name (ci/golden_check.sh): GAUNTLET_GOLDEN_CHECK_SUITES=nightly,full,...
TEST(GoldenCheck, NamedSuites) {
  const char* names = std::getenv("GAUNTLET_GOLDEN_CHECK_SUITES");
  if (!names || !*names) GTEST_SKIP() << "set GAUNTLET_GOLDEN_CHECK_SUITES (ci/golden_check.sh)";
  std::stringstream in(names);
  for (std::string name; std::getline(in, name, ',');) {
    if (!name.empty()) expect_every_golden(name);
  }
}

}  // namespace
}  // namespace gauntlet

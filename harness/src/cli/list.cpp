// gauntlet list: cases of a suite; the op table, the collectives, the models, the suites, a
// suite's parts and the ops models execute (gauntlet/listing.h).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/catalog.h"
#include "gauntlet/listing.h"
#include "gauntlet/ops_from_models.h"
#include "gauntlet/outcome_json.h"

namespace gauntlet::cli {

namespace {

int print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

int list(const ListOptions& o) {
  const std::string dir = suites_dir_or_default(o.suites_dir);
  if (o.ops) return print(ops_listing(o.json));
  if (o.colls) return print(colls_listing(o.json));
  if (o.ops_of_models_given) {
    const ExecutedOpsOfModels g = gather_executed_ops(o.ops_of_models, dir, o.db, o.run);
    print(executed_ops_listing(g, o.json));
    return g.failed.empty() ? 0 : 1;
  }
  if (o.models) {
    if (!o.suite.empty()) load_suite(o.suite, dir);  // registers the suite's model files
    return print(models_listing(o.json));
  }
  if (o.suites) return print(suites_listing(dir));
  if (o.suite.empty()) throw UsageError("list needs --suite NAME, --ops or --suites");
  Suite suite = load_suite(o.suite, dir);
  std::vector<const Case*> cases;
  try {
    cases = select_cases(suite, o.filter, o.shard);
  } catch (const Error&) {
    if (o.filter.empty()) throw;  // an empty suite or a bad shard
    // Listing what a filter matches may rightly find nothing.
  }
  if (o.parts) return print(parts_listing(suite, o.json));
  if (o.count) {
    if (o.json) {
      std::cout << nlohmann::json{{"json_schema_version", kJsonSchemaVersion},
                                  {"suite", suite.name},
                                  {"count", cases.size()}}
                       .dump()
                << "\n";
    } else {
      fmt::print("{}\n", cases.size());
    }
    return 0;
  }
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const Case* c : cases) arr.push_back({{"key", c->text}, {"id", fmt::format("{:016x}", c->id)}});
    std::cout
        << nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"suite", suite.name}, {"cases", arr}}.dump(1)
        << "\n";
    return 0;
  }
  std::string out;
  for (const Case* c : cases) {
    out += c->text;
    out += '\n';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gauntlet::cli

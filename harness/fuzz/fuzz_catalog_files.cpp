// The catalog's YAML files (gauntlet/core/catalog/catalog.h): a suite, expectations.yaml and tolerances.yaml
// load or throw CatalogError, one line naming the file (read from a file, as the harness does).
#include <cstdlib>

#include "fuzz_target.h"
#include "gauntlet/core/catalog/catalog.h"

namespace {

template <typename Load>
void load_or_one_line_error(std::string_view data, const std::string& suffix, Load load) {
  const std::string path = gauntlet::fuzz::write_temp(data, suffix);
  try {
    load(path);
  } catch (const gauntlet::Error& e) {  // CatalogError, or a model's error from a model suite
    gauntlet::fuzz::require_one_line(e.what());
    gauntlet::fuzz::require(std::string(e.what()).find(path) != std::string::npos ||
                                std::string(e.what()).find(suffix) != std::string::npos,
                            std::string("an error that does not name the file: ") + e.what());
  }
}

// The real suites, for a suite that includes one (GAUNTLET_SOURCE_SUITES_DIR).
const std::string kSuitesDir = GAUNTLET_FUZZ_SUITES_DIR;

}  // namespace

GAUNTLET_FUZZ_TARGET(suite) {
  load_or_one_line_error(data, ".yaml", [](const std::string& path) {
    const gauntlet::Suite s = gauntlet::load_suite(path, kSuitesDir);
    (void)s;
  });
}

GAUNTLET_FUZZ_TARGET(expectations) {
  load_or_one_line_error(data, "expectations.yaml", [](const std::string& path) {
    const auto e = gauntlet::Expectations::load(path);
    (void)e.lookup("op/add/f32/4/contig/eager", "sim");
  });
}

GAUNTLET_FUZZ_TARGET(tolerances) {
  load_or_one_line_error(data, "tolerances.yaml", [](const std::string& path) {
    const auto t = gauntlet::ToleranceTable::load(path);
    (void)t.lookup(gauntlet::CaseKey::parse("op/add/f32/4/contig/eager"), gauntlet::DType::F32, "sim");
  });
}

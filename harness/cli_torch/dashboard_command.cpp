// gauntlet dashboard: the static trend site of a results database (docs/dashboard.md): the page
// and its assets (embedded in this binary) and the data (dashboards/FORMAT.md) into --out. It
// reads only: exit 0, or 2 on bad input.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "dashboard_assets.h"
#include "gauntlet/analysis/dashboard.h"
#include "gauntlet/cli/cli.h"
#include "gauntlet/core/backend/environment.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet::cli {

namespace fs = std::filesystem;

namespace {

// The op family of a case from the op table; models and collectives are families of their own.
std::string family_of(std::string_view kind, std::string_view target) {
  if (kind != "op") return std::string(kind);
  const OpSpec* spec = find_op(std::string(target));
  return spec ? spec->family : std::string();
}

void write_file(const fs::path& path, const char* bytes, std::size_t size) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw UsageError(fmt::format("{}: cannot create directory: {}", path.parent_path().string(), ec.message()));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes, static_cast<std::streamsize>(size));
  out.close();
  if (!out) throw UsageError(fmt::format("{}: cannot write", path.string()));
}

}  // namespace

int dashboard(const DashboardRequest& o) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  if (fs::exists(o.out, ec) && !fs::is_directory(o.out, ec))
    throw UsageError(fmt::format("{}: --out is a file, not a directory", o.out));
  DashboardOptions opt;
  opt.since = o.since;
  opt.backend = o.backend;
  opt.suite = o.suite;
  opt.compare_pairs = o.compare_pairs;
  opt.grid_releases = o.grid_releases;
  opt.family = family_of;
  opt.gauntlet_version = GAUNTLET_VERSION_STRING;
  opt.generated_at = utc_now();
  const auto metric = parse_metric(o.metric);
  if (!metric) throw UsageError(fmt::format("--metric: '{}' is not auto, sim or host", o.metric));
  opt.compare.metric = *metric;
  const DashboardSummary s = write_dashboard_data(o.db, o.out, opt);
  for (std::size_t i = 0; i < kDashboardAssetCount; ++i) {
    const DashboardAsset& a = kDashboardAssets[i];
    write_file(fs::path(o.out) / a.path, a.bytes, a.size);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(
      "dashboard: {} group{}, {} release{}, {} cases, {} results -> {} data files ({:.1f} MB) in "
      "{:.1f} s\n",
      s.groups, s.groups == 1 ? "" : "s", s.releases, s.releases == 1 ? "" : "s", s.cases, s.results, s.files,
      double(s.bytes) / 1e6, seconds);
  if (s.groups == 0) fmt::print(stderr, "gauntlet: warning: {} holds no runs yet: the site is empty\n", o.db);
  fmt::print("dashboard: open {}\n", (fs::absolute(o.out) / "index.html").lexically_normal().string());
  return 0;
}

}  // namespace gauntlet::cli

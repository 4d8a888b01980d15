// The dashboard's page and assets, embedded in the binary at build time (cmake/embed_files.cmake)
// from dashboards/site/ and the chart library dashboards/package.json pins.
#pragma once

#include <cstddef>

namespace gauntlet::cli {

struct DashboardAsset {
  const char* path;  // relative to the site's directory: "index.html", "assets/app.js"
  const char* bytes;
  std::size_t size;
};
extern const DashboardAsset kDashboardAssets[];
extern const std::size_t kDashboardAssetCount;

}  // namespace gauntlet::cli

// Standalone repro bundles (Note [Bundles] in harness/core/bundle/bundle.cpp, docs/repro.md "Bundles"):
// one case's inputs, golden, device outputs, tolerance and metrics in a folder, with a Python
// script and a C++ program that replay it with plain PyTorch / libtorch, no Gauntlet installed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"

namespace gauntlet {

inline constexpr int kBundleSchemaVersion = 1;

// What the case that made the bundle knew.
struct BundleSource {
  CaseKey key;
  Outcome outcome;                             // Gauntlet's verdict and metrics
  const CaseDetail* detail = nullptr;          // op and zoo model cases: kept tensors (Note [Case tensors])
  const ToleranceTable* tolerances = nullptr;  // collective cases: their tolerance
  std::string backend, backend_version, profile;
  std::map<std::string, std::string> environment;  // the variables that configure the backend
  std::string command;                             // the gauntlet command that made the bundle
  std::string restored_from;                       // "run N of FILE", or ""
};

struct BundleWritten {
  std::vector<std::string> files;  // relative to the folder
  std::uintmax_t bytes = 0;        // all of them
};

// Writes the bundle into `dir` (created; files of an earlier bundle there are replaced). Throws
// std::runtime_error when the case cannot be bundled (a model file case, an op whose call cannot
// be traced), saying why.
BundleWritten write_bundle(const std::string& dir, const BundleSource& src);

}  // namespace gauntlet

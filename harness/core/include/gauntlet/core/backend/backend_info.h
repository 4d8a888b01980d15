// `gauntlet backend-info`: what a backend reports and what the dispatcher knows of it, so that a
// user sees what `run` will record, and what it cannot run, before running anything. As text, or
// with `json` as the JSON document backend-info --json prints.
#pragma once

#include <string>

#include "gauntlet/base/command_line.h"

namespace gauntlet {

class Backend;

// Its name, profile, version, device, configuration and kernels; for a device of its own, the
// dispatcher's view: fallback, autograd, what the harness needs (Note [Device plumbing]). As
// text, its problems first and the kernels counted by namespace; `verbose`: every kernel listed.
std::string backend_info(Backend& backend, bool json, bool verbose = false);
// The backends --backend can name (Note [Backend registry]), with a line on each.
std::string backends_listing(bool json);

// `gauntlet backend-info`'s options (Note [Options beside their fields]).
struct BackendInfoOptions {
  std::string backend = "cpu";
  bool json = false;
  bool list = false;     // the registered backends instead (Note [Backend registry])
  bool verbose = false;  // every kernel listed, not their counts
};
void describe_options(OptionSink& s, BackendInfoOptions& o);
// What `gauntlet backend-info` prints.
std::string backend_info(const BackendInfoOptions& o);

}  // namespace gauntlet

// `gauntlet backend-info`: what a backend reports and what the dispatcher knows of it, so that a
// user sees what `run` will record, and what it cannot run, before running anything. As text, or
// with `json` as the JSON document backend-info --json prints.
#pragma once

#include <string>

namespace gauntlet {

class Backend;

// Its name, profile, version, device, configuration and kernels; for a device of its own, the
// dispatcher's view: fallback, autograd, what the harness needs (Note [Device plumbing]).
std::string backend_info(Backend& backend, bool json);
// The backends --backend can name (Note [Backend registry]), with a line on each.
std::string backends_listing(bool json);

}  // namespace gauntlet

// gauntlet backend-info: what a backend says about itself and what the dispatcher knows of it
// (gauntlet/backend_info.h); --list: the backends --backend can name.
#include "gauntlet/backend_info.h"

#include <cstdio>

#include "cli.h"
#include "gauntlet/backend.h"

namespace gauntlet::cli {

int backend_info(const BackendInfoOptions& o) {
  const std::string text =
      o.list ? backends_listing(o.json) : ::gauntlet::backend_info(*make_backend(o.backend), o.json);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace gauntlet::cli

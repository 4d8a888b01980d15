// Facts about the host process that runs and goldens record.
#pragma once

#include <string>

namespace gauntlet {

// The resolved path of the BLAS library loaded into this process ("" when none): Debian switches
// libblas.so.3 through alternatives, and the reference BLAS is 15-20x slower than OpenBLAS.
std::string loaded_blas_path();
// Now, in UTC, as strftime's `format` writes it; by default ISO 8601 to the second
// ("2026-12-04T18:50:06Z"): when runs start and end.
std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace gauntlet

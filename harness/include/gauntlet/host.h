// Facts about the host process that runs and goldens record.
#pragma once

#include <string>

namespace gauntlet {

// The resolved path of the BLAS library loaded into this process ("" when none): Debian switches
// libblas.so.3 through alternatives, and the reference BLAS is 15-20x slower than OpenBLAS.
std::string loaded_blas_path();

}  // namespace gauntlet

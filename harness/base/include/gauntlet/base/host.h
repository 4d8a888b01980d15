// Facts about the host process that runs and goldens record.
#pragma once

#include <string>

namespace gauntlet {

// The resolved path of the BLAS library loaded into this process ("" when none): Debian switches
// libblas.so.3 through alternatives, and the reference BLAS is 15-20x slower than OpenBLAS.
std::string loaded_blas_path();
// Note [Intra-op threads]: on torch 2.x the CPU's reductions split their work by libtorch's
// intra-op thread count (layer_norm's backward, an f64 mm's blocking), so a case's outputs and its
// golden change with it: 1 thread and 2 gave max errors of 0.090 and 0.032 for the same
// layer_norm bf16 backward. A case must come out the same wherever it runs (a worker, a run
// --in-process, repro, a collective's rank, golden build's threads, another host), so every process
// and thread that runs cases or computes goldens uses this count: $OMP_NUM_THREADS when the user
// set it, else 1 (parallelism comes from workers, one per core by default). Runs record it
// (runs.threads).
int case_intra_op_threads();
// Now, in UTC, as strftime's `format` writes it; by default ISO 8601 to the second
// ("2026-12-04T18:50:06Z"): when runs start and end.
std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace gauntlet

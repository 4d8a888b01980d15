// The simulator's configuration, read once when the library loads: its release string, the
// accelerator numerics it models, its memory capacity and the faults to inject. No torch here.
#pragma once

#include <cstdint>
#include <string>

#include "fault_spec.h"

namespace gauntlet::sim {

// Note [Accelerator numerics]: the deviations from CPU results a Trainium-class device really
// shows, each switchable (docs/simulator.md states each one's error bound):
//   bf16_matmul            fp32 matrix products and convolutions take bf16-rounded operands and
//                          accumulate in fp32 (the Neuron compiler's default --auto-cast matmult)
//   approx_transcendental  exp, tanh, sigmoid, gelu, silu, erf and softmax's exp come from a
//                          reduced-precision unit: relative error <= 2^-(approx_bits+1)
//   tree_reduction         sum and mean add pairwise in a balanced tree, in fp32 for 16-bit inputs
struct Numerics {
  bool bf16_matmul = true;
  bool approx_transcendental = true;
  bool tree_reduction = true;
  int approx_bits = 12;  // fraction bits the transcendental unit keeps
  bool operator==(const Numerics& o) const {
    return bf16_matmul == o.bf16_matmul && approx_transcendental == o.approx_transcendental &&
           tree_reduction == o.tree_reduction && approx_bits == o.approx_bits;
  }
  std::string str() const;  // "bf16_matmul=on,approx_transcendental=on,tree_reduction=on,approx_bits=12"
};

// GAUNTLET_SIM_NUMERICS: "default", "none" (exact CPU numerics), or a comma-separated list of
// name=on|off and approx_bits=N applied to the defaults. Throws std::invalid_argument naming the
// item and its column.
Numerics parse_numerics(const std::string& text);

// GAUNTLET_SIM_MEMORY: bytes, or a number with a unit (KiB MiB GiB TiB, KB MB GB TB, B).
std::int64_t parse_bytes(const std::string& text, const std::string& origin);

struct Config {
  std::string base_version;  // the build's release, e.g. "sim-0.3.1"
  std::string version;       // what runs record: base, or GAUNTLET_SIM_VERSION, or base+<config hash>
  Numerics numerics;
  std::int64_t capacity_bytes = 0;
  FaultSpec faults;
  std::string json() const;  // recorded with every run
};

// Reads GAUNTLET_SIM_VERSION, GAUNTLET_SIM_NUMERICS, GAUNTLET_SIM_MEMORY, GAUNTLET_SIM_FAULTS and
// GAUNTLET_SIM_FAULTS_FILE over the build's defaults. A configuration that differs from the
// defaults and names no version of its own gets base+<hash of the configuration> as its version,
// so two configurations never pass for the same release. Throws std::invalid_argument.
Config config_from_env(const std::string& base_version, const Numerics& build_numerics,
                       const std::string& build_faults);

}  // namespace gauntlet::sim

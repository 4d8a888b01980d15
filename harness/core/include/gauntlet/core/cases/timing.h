// A case's steady state, timed the same way for every case kind: op, model, model file and
// compile cases (Note [Timing methodology] in runner.h).
#pragma once

#include <functional>
#include <vector>

namespace gauntlet {

struct RunnerConfig;

// `call` runs the case once and synchronizes its device. `spent_ms` is what the case has taken so
// far against --max-time: its first call (0 for a compile case: compilation does not eat into the
// budget). Runs the --warmup calls untimed, then the timed repetitions (at least --reps, and until
// they took --min-time in all; the first call and warm-up never count towards --min-time); returns
// each repetition's time in microseconds.
std::vector<double> time_repetitions(const RunnerConfig& cfg, double spent_ms, const std::function<void()>& call);

}  // namespace gauntlet

// The command line's own pieces: its usage error, the checks of option values, and the commands
// whose printing is still here (repro, reduce, dashboard). Every other command is a library call
// (the options structs and their descriptions are the library's: Note [Options beside their
// fields] in gauntlet/base/command_line.h). Exit codes: 0 clean, 1 failures found where gating was
// asked (or a repro that fails), 2 bad input.
#pragma once

#include <string>
#include <vector>

#include "gauntlet/analysis/dashboard.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/strings.h"
#include "gauntlet/core/bundle/repro.h"

namespace CLI {
class App;
}

namespace gauntlet::cli {

// Note [Option values] (checks.cpp): range and emptiness checks on every subcommand's options, by
// name; call after declaring them, before parsing.
void add_value_checks(CLI::App& app);
// A --profile value (or $GAUNTLET_PROFILE's, `where` naming it): letters, digits, '_', '-', '.';
// a UsageError otherwise (checks.cpp).
void check_profile_name(const std::string& profile, const std::string& where = "--profile");

// Bad usage or input: main() prints "gauntlet: error: <what>" and exits 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

int repro(const ReproOptions& o);
// Exit codes: 0 reduced (the smallest case that fails the same way printed, the case itself when
// no smaller one does), 2 bad input: an unknown or invalid key, a case that does not fail
// ("case passes; nothing to reduce"), a collective case, a model case that does not FAIL or whose
// first divergent node has no op case (Note [Model reduction]), a backend that cannot start.
int reduce(const ReduceOptions& o);
int dashboard(const DashboardRequest& o);

}  // namespace gauntlet::cli

// gauntlet: the command-line entry point, without libtorch.
//
// Note [Two binaries]: loading libtorch costs about 0.46 s and 166 MiB before main() runs (its
// relocations and the static registration of every operator), which is most of a `show` and a
// fifth of `compare` on two runs of a million results (ci/compare_bench.sh). The commands that
// only read stored runs never touch torch, so there are two binaries, built together side by side:
//  - `gauntlet` (this file) is torch-free (5 MiB, milliseconds to start): show, merge, compare and
//    report run here (commands.cpp), parsed and checked by the same code as in the other binary;
//  - every other word (run, worker, repro, list, --help, --version, a typo) is handed to
//    `gauntlet-torch` beside it, with the same arguments (execv: same pid, same argv[0], so the
//    same messages, signals and exit codes).
// gauntlet-torch (main.cpp) has every command, and starts its own workers and rank processes by
// its own path (gauntlet::self_exe), so a run pays the hand-over once. A worker that `compare
// --confirm` starts from here is handed over in turn.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "gauntlet/cli/commands.h"
#include "gauntlet/run/child_process.h"

namespace {

// gauntlet-torch, beside this binary.
std::string torch_binary() {
  return (std::filesystem::path(gauntlet::self_exe()).parent_path() / "gauntlet-torch").string();
}

int front_main(int argc, char** argv) {
  using namespace gauntlet::cli;
  const std::vector<std::string>& here = torch_free_commands();
  if (argc > 1 && std::find(here.begin(), here.end(), argv[1]) != here.end()) {
    CLI::App app{"gauntlet: conformance and performance qualification of PyTorch device backends"};
    app.require_subcommand(1);
    Options all;
    all.argv.assign(argv + 1, argv + argc);
    const std::vector<Command> commands = {add_show(app, all), add_merge(app, all), add_compare(app, all),
                                           add_report(app, all), add_triage(app, all)};
    return parse_and_run(app, all, commands, argc, argv);
  }
  const std::string torch = torch_binary();
  execv(torch.c_str(), argv);
  std::cerr << "gauntlet: error: cannot start " << torch << ": " << std::strerror(errno)
            << " (it is built beside gauntlet: cmake --build BUILD_DIR --target gauntlet)\n";
  return gauntlet::kExitEnvironment;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return front_main(argc, argv);
  } catch (const std::exception& e) {  // what parse_and_run's own catch cannot reach (setting up the parser)
    std::cerr << "gauntlet: internal error: " << e.what() << "\n";
    return gauntlet::kExitInternal;
  }
}

// The torch-free commands (show, merge, compare, report, triage) and the parsing and
// error handling both binaries share (Note [Two binaries] in front.cpp).
#include "gauntlet/cli/commands.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <tuple>

#include "gauntlet/cli/cli_sink.h"

namespace gauntlet::cli {

int print(const std::string& text, int exit_code) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  return exit_code;
}

Command add_show(CLI::App& app, Options& all) {
  auto* sub = declare(app, "show", "summarize a stored run: counts by status, then failures", all.so);
  return {sub, [&all] { return print(show_run(all.so)); }};
}

Command add_merge(CLI::App& app, Options& all) {
  auto* sub = declare(app, "merge", "merge shard databases into one (idempotent)", all.mo);
  return {sub, [&all] { return print(merge_text(all.mo)); }};
}

Command add_compare(CLI::App& app, Options& all) {
  auto* sub = declare(app, "compare", "judge a run against a baseline release: regressions, reports, gate", all.co);
  return {sub, [&all] {
            const Judged j = judge_run(all.co);
            return print(j.text, j.exit_code);
          }};
}

Command add_report(CLI::App& app, Options& all) {
  auto* sub = declare(app, "report",
                      "summarise a database: --weekly, the last 7 days across releases, with change points", all.rp);
  return {sub, [&all] { return print(weekly_command(all.rp)); }};
}

Command add_triage(CLI::App& app, Options& all) {
  auto* sub = declare(app, "triage",
                      "acknowledge a regression (ack), take it back (unack), list them: kept in the database", all.tr);
  return {sub, [&all] { return print(triage_command(all.tr)); }};
}

// A parse error in one line: the (sub)command's help to see, and an unknown option named even when
// a required one is missing too (run --bogus: not "--db is required").
int parse_failure(CLI::App& app, const CLI::ParseError& e) {
  std::string path = "gauntlet";
  CLI::App* sub = &app;
  for (;;) {
    const std::vector<CLI::App*> parsed = sub->get_subcommands();
    if (parsed.empty()) break;
    sub = parsed.front();
    path += " " + sub->get_name();
  }
  std::string message = e.what();
  // A number past what the option's type holds (--workers 99999999999) passes the checks of
  // Note [Option values] and fails CLI11's conversion: say so in the checks' words.
  if (const std::string prefix = "Could not convert: "; message.rfind(prefix, 0) == 0) {
    const std::size_t eq = message.find(" = ", prefix.size());
    if (eq != std::string::npos) {
      message = fmt::format("{}: '{}' is out of range", message.substr(prefix.size(), eq - prefix.size()),
                            message.substr(eq + 3));
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr || dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    for (const std::string& extra : sub->remaining()) {
      if (extra.size() > 1 && extra[0] == '-') {
        std::vector<std::string> names;
        for (const CLI::Option* opt : sub->get_options()) {
          for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
        }
        message = "unknown option " + extra + nearest_hint(extra.substr(0, extra.find('=')), names);
        break;
      }
    }
  }
  std::cerr << "gauntlet: error: " << message << " (see " << path << " --help)\n";
  return kExitBadInput;
}

// A first word that is no command: named, with the nearest command (CLI11 would say only that a
// subcommand is required). Returns whether it is one.
bool known_command(CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), word) != names.end()) return true;
  std::cerr << "gauntlet: error: unknown command '" << word << "'" << nearest_hint(word, names)
            << " (see gauntlet --help)\n";
  return false;
}

// Runs the parsed command; every error ends here, once (Note [Error family] in gauntlet/base/error.h).
int run_command(const Command& command, const Options& all) {
  try {
    // The profile travels to every process this one starts (workers, ranks) in the environment.
    const std::string& profile = all.profile;
    if (!profile.empty()) {
      check_profile_name(profile);
      setenv("GAUNTLET_PROFILE", profile.c_str(), 1);
    } else if (const char* env = std::getenv("GAUNTLET_PROFILE");
               env && *env && command.app->get_option_no_throw("--profile") != nullptr) {
      check_profile_name(env, "$GAUNTLET_PROFILE");  // as the option is, where it applies (Note [Option values])
    }
    // So do the dynamo backend and torch.compile's options (read where a compile case compiles).
    for (const auto& [value, option, variable, check] :
         {std::tuple{&all.dynamo_backend, "--dynamo-backend", "GAUNTLET_DYNAMO_BACKEND", &check_dynamo_backend},
          std::tuple{&all.dynamo_options, "--dynamo-options", "GAUNTLET_DYNAMO_OPTIONS", &check_dynamo_options}}) {
      if (!value->empty()) {
        check(*value, option);
        setenv(variable, value->c_str(), 1);
      } else if (const char* env = std::getenv(variable);
                 env && *env && command.app->get_option_no_throw(option) != nullptr) {
        check(env, std::string("$") + variable);
      }
    }
    return command.action();
  } catch (const Error& e) {
    std::cerr << "gauntlet: " << (e.exit_code() == kExitInternal ? "internal error: " : "error: ") << e.what() << "\n";
    return e.exit_code();
  } catch (const std::invalid_argument& e) {
    std::cerr << "gauntlet: error: " << one_line(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gauntlet: internal error: " << one_line(e.what()) << "\n";
    return kExitInternal;
  }
}

const std::vector<std::string>& torch_free_commands() {
  static const std::vector<std::string> names = {"show", "merge", "compare", "report", "triage"};
  return names;
}

int parse_and_run(CLI::App& app, Options& all, const std::vector<Command>& commands, int argc, char** argv) {
  add_value_checks(app);
  if (argc > 1 && argv[1][0] != '-' && !known_command(app, argv[1])) return kExitBadInput;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e);
  }
  for (const Command& command : commands) {
    if (*command.app) return run_command(command, all);
  }
  return kExitBadInput;
}

}  // namespace gauntlet::cli

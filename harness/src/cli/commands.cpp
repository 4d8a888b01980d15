// The torch-free commands (show, merge, compare, report) and the parsing and
// error handling both binaries share (Note [Two binaries] in front.cpp).
#include "commands.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>

namespace gauntlet::cli {

Command add_show(CLI::App& app, Options& all) {
  auto& so = all.so;
  auto* show = app.add_subcommand("show", "summarize a stored run: counts by status, then failures");
  show->add_option("--db", so.db, "SQLite database")->required();
  show->add_option("--run", so.run, "run id (default: the latest)");
  show->add_option("--status", so.statuses, "statuses to list, e.g. FAIL,ERROR (default: failures)");
  show->add_flag("--json", so.json, "print JSON");
  return {show, [&all] { return cli::show(all.so); }};
}

Command add_merge(CLI::App& app, Options& all) {
  auto& mo = all.mo;
  auto* merge = app.add_subcommand("merge", "merge shard databases into one (idempotent)");
  merge->add_option("inputs", mo.inputs, "shard databases")->required();
  merge->add_option("--into", mo.into, "the database to merge into (created if missing)")->required();
  merge->add_flag(
      "--skip-db-check", mo.skip_db_check,
      "skip the PRAGMA quick_check of an existing database before writing (about 0.5 s per million results)");
  return {merge, [&all] { return cli::merge(all.mo); }};
}

Command add_compare(CLI::App& app, Options& all) {
  auto& co = all.co;
  auto* compare = app.add_subcommand("compare", "judge a run against a baseline release: regressions, reports, gate");
  compare->add_option("--db", co.db, "SQLite database holding both runs")->required();
  compare->add_option("--run", co.run, "the candidate run id (default: the latest run)");
  compare
      ->add_option("--baseline", co.baseline,
                   "baseline run id, or auto: the previous release of the same backend and suite")
      ->capture_default_str();
  compare
      ->add_option("--metric", co.metric,
                   "speed judged on: auto (simulated time when both runs have it, else host time) | sim | host")
      ->capture_default_str();
  compare->add_option("--min-effect", co.min_effect, "smallest speed change flagged (fraction)")->capture_default_str();
  compare
      ->add_option("--significance", co.significance,
                   "Mann-Whitney U p-value below which a host-time change is significant")
      ->capture_default_str();
  compare->add_option("--min-samples", co.min_samples, "host time: repetitions needed on each side to judge a case")
      ->capture_default_str();
  compare
      ->add_option("--error-growth", co.error_growth,
                   "flag a passing case whose max_abs_err grew more than this factor")
      ->capture_default_str();
  compare->add_option("--history", co.history, "earlier releases used for noise bands and change points (0: none)")
      ->capture_default_str();
  compare->add_option("--waivers", co.waivers, "waivers file (docs/waivers.md)");
  compare->add_option("--gate", co.gate, "exit 1 when regressions of these kinds remain: accuracy,speed,coverage");
  compare->add_option("--min-ran", co.min_ran, "--gate: the candidate is hollow below this fraction of cases that ran")
      ->capture_default_str();
  compare
      ->add_option("--max-ran-drop", co.max_ran_drop,
                   "--gate: the candidate is hollow when its ran fraction fell more than this below the baseline's")
      ->capture_default_str();
  compare->add_option("--markdown", co.markdown, "write the Markdown report here (- for stdout)");
  compare->add_option("--junit", co.junit, "write the JUnit XML report here (- for stdout)");
  compare->add_option("--json", co.json, "write the JSON report here (- for stdout)");
  compare->add_option("--top", co.top, "rows per Markdown table")->capture_default_str();
  compare->add_flag("--quiet", co.quiet, "print only the gate verdict");
  compare->add_flag("--github", co.github,
                    "GitHub Actions: append a summary to $GITHUB_STEP_SUMMARY and print ::error lines for gating "
                    "regressions (on by default when GITHUB_ACTIONS=true)");
  compare->add_flag(
      "--confirm", co.confirm,
      "re-run flagged host-time speed cases alternating baseline and candidate (A B B A ...); keep confirmed flags");
  compare->add_option("--baseline-backend", co.baseline_backend,
                      "--confirm: the baseline release's backend (default: the baseline run's)");
  compare->add_option("--candidate-backend", co.candidate_backend,
                      "--confirm: the candidate release's backend (default: the run's)");
  compare->add_option("--baseline-env", co.baseline_env,
                      "--confirm: NAME=VALUE set for the baseline's worker (repeatable)");
  compare->add_option("--candidate-env", co.candidate_env,
                      "--confirm: NAME=VALUE set for the candidate's worker (repeatable)");
  compare->add_option("--confirm-rounds", co.confirm_rounds, "--confirm: A/B rounds per case")->capture_default_str();
  return {compare, [&all] { return cli::compare(all.co); }};
}

Command add_report(CLI::App& app, Options& all) {
  auto& rp = all.rp;
  auto* report = app.add_subcommand(
      "report", "summarise a database: --weekly, the last 7 days across releases, with change points");
  report
      ->add_flag("--weekly", rp.weekly,
                 "the releases of a week per backend and suite: rates, speed index, regressions, change points")
      ->required();
  report->add_option("--db", rp.db, "SQLite database, opened read-only")->required();
  report->add_option("--since", rp.since, "first day, YYYY-MM-DD (default: 6 days before --until)");
  report->add_option("--until", rp.until, "last day, YYYY-MM-DD (default: today, UTC, or $GAUNTLET_TODAY)");
  report->add_option("--backend", rp.backend, "only runs of this backend (runs.backend: sim, plugin:<path.so>)");
  report->add_option("--suite", rp.suite, "only runs of this suite");
  report->add_option("--markdown", rp.markdown, "write the Markdown report here (- for stdout)");
  report->add_option("--json", rp.json, "write the JSON report here (- for stdout)");
  return {report, [&all] { return cli::report(all.rp); }};
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

// Runs the parsed command; every error ends here, once (Note [Error family] in gauntlet/error.h).
int run_command(const Command& command, const std::string& profile) {
  try {
    // The profile travels to every process this one starts (workers, ranks) in the environment.
    if (!profile.empty()) {
      check_profile_name(profile);
      setenv("GAUNTLET_PROFILE", profile.c_str(), 1);
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
  static const std::vector<std::string> names = {"show", "merge", "compare", "report"};
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
    if (*command.app) return run_command(command, all.profile);
  }
  return kExitBadInput;
}

}  // namespace gauntlet::cli

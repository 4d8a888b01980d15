// A command's options, described beside the fields they set (Note [Options beside their fields]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gauntlet {

// Note [Options beside their fields]: each command's options struct is declared in the library
// beside the function that reads it, and its command-line options (name, help, required, default
// shown) are described there too, by `describe_options(OptionSink&, Struct&)`, as clap's derive
// or Abseil's flags keep a flag beside its field. The command line (harness/cli/) binds the
// description to CLI11 and adds only what spans options (checks, the command's action); tests bind
// it to a list of names, so that docs/cli.md is checked to document every option of every command
// (harness/tests/options_doc_test.cpp). A new option is one line here, one row in docs/cli.md.
// Names with "--" are options, names without are positional arguments.
class OptionSpec {
 public:
  virtual ~OptionSpec() = default;
  virtual OptionSpec& required() = 0;        // parsing fails without it
  virtual OptionSpec& show_default() = 0;    // --help shows the field's value as its default
  virtual OptionSpec& value_optional() = 0;  // given alone or with one value (--ops-of-models [SUITE])
  virtual OptionSpec& internal() = 0;        // left out of --help (and of the documented options)
};

class OptionSink {
 public:
  virtual ~OptionSink() = default;
  virtual OptionSpec& option(const std::string& name, std::string& field, const std::string& help) = 0;
  virtual OptionSpec& option(const std::string& name, std::vector<std::string>& field, const std::string& help) = 0;
  virtual OptionSpec& option(const std::string& name, int& field, const std::string& help) = 0;
  virtual OptionSpec& option(const std::string& name, long& field, const std::string& help) = 0;
  virtual OptionSpec& option(const std::string& name, long long& field, const std::string& help) = 0;
  virtual OptionSpec& option(const std::string& name, unsigned long long& field, const std::string& help) = 0;
  virtual OptionSpec& option(const std::string& name, double& field, const std::string& help) = 0;
  virtual OptionSpec& flag(const std::string& name, bool& field, const std::string& help) = 0;
};

// Options several commands share, described once.
void describe_profile(OptionSink& s, std::string& profile);  // --profile
// --price-per-device-hour
void describe_price(OptionSink& s, std::string& price);
// --skip-db-check
void describe_skip_db_check(OptionSink& s, bool& skip);
// --dynamo-backend and --dynamo-options, of the commands that make a backend (Note [Compile path]
// in harness/python/compiled.cpp): they set $GAUNTLET_DYNAMO_BACKEND and $GAUNTLET_DYNAMO_OPTIONS,
// which every process of the command reads.
void describe_dynamo(OptionSink& s, std::string& backend, std::string& options);
// Throw gauntlet::Error naming `where` (the option or the variable) for a value that is not
// NAME or NAME@MODULE (a dynamo backend's registered name: letters, digits, '_', '-', '.'; MODULE a
// Python module or .py file, no control characters), or not a JSON object.
void check_dynamo_backend(const std::string& value, const std::string& where);
void check_dynamo_options(const std::string& value, const std::string& where);

}  // namespace gauntlet

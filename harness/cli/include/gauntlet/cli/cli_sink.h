// A command's options, as the library describes them (Note [Options beside their fields] in
// gauntlet/base/command_line.h), declared on a CLI11 subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "gauntlet/base/command_line.h"

namespace gauntlet::cli {

class CliSink : public OptionSink {
 public:
  explicit CliSink(CLI::App& app) : app_(app) {}
  OptionSpec& option(const std::string& n, std::string& f, const std::string& h) override { return add(n, f, h); }
  OptionSpec& option(const std::string& n, std::vector<std::string>& f, const std::string& h) override {
    return add(n, f, h);
  }
  OptionSpec& option(const std::string& n, int& f, const std::string& h) override { return add(n, f, h); }
  OptionSpec& option(const std::string& n, long& f, const std::string& h) override { return add(n, f, h); }
  OptionSpec& option(const std::string& n, long long& f, const std::string& h) override { return add(n, f, h); }
  OptionSpec& option(const std::string& n, unsigned long long& f, const std::string& h) override {
    return add(n, f, h);
  }
  OptionSpec& option(const std::string& n, double& f, const std::string& h) override { return add(n, f, h); }
  OptionSpec& flag(const std::string& n, bool& f, const std::string& h) override {
    return keep(app_.add_flag(n, f, h));
  }

 private:
  class Spec : public OptionSpec {
   public:
    explicit Spec(CLI::Option* o) : o_(o) {}
    OptionSpec& required() override {
      o_->required();
      return *this;
    }
    OptionSpec& show_default() override {
      o_->capture_default_str();
      return *this;
    }
    OptionSpec& value_optional() override {
      o_->expected(0, 1);
      return *this;
    }
    OptionSpec& internal() override {
      o_->group("");
      return *this;
    }

   private:
    CLI::Option* o_;
  };
  template <class T>
  OptionSpec& add(const std::string& name, T& field, const std::string& help) {
    return keep(app_.add_option(name, field, help));
  }
  OptionSpec& keep(CLI::Option* o) { return *specs_.emplace_back(std::make_unique<Spec>(o)); }

  CLI::App& app_;
  std::vector<std::unique_ptr<Spec>> specs_;
};

// A subcommand `name` of `parent` with the options the library describes for `o`.
template <class O, class... More>
CLI::App* declare(CLI::App& parent, const std::string& name, const std::string& about, O& o, More&... more) {
  CLI::App* sub = parent.add_subcommand(name, about);
  CliSink sink(*sub);
  describe_options(sink, o, more...);
  return sub;
}

// --profile, --dynamo-backend and --dynamo-options (of the commands that make a backend) on `sub`.
inline void add_profile(CLI::App& sub, std::string& profile, std::string& dynamo_backend, std::string& dynamo_options) {
  CliSink sink(sub);
  describe_profile(sink, profile);
  describe_dynamo(sink, dynamo_backend, dynamo_options);
}

}  // namespace gauntlet::cli

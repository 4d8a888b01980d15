#include "config.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "trn2_constants.h"

namespace gauntlet::sim {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// FNV-1a: stable across compilers and runs, unlike std::hash.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string Numerics::str() const {
  return fmt::format("bf16_matmul={},approx_transcendental={},tree_reduction={},approx_bits={}",
                     bf16_matmul ? "on" : "off", approx_transcendental ? "on" : "off", tree_reduction ? "on" : "off",
                     approx_bits);
}

Numerics parse_numerics(const std::string& text) {
  Numerics n;
  const std::string t = trim(text);
  if (t.empty() || t == "default") return n;
  if (t == "none" || t == "off") {
    n.bf16_matmul = n.approx_transcendental = n.tree_reduction = false;
    return n;
  }
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = trim(text.substr(pos, end - pos));
    const std::size_t column = pos + 1;
    pos = end + 1;
    if (item.empty()) continue;
    auto fail = [&](const std::string& problem) {
      throw std::invalid_argument(fmt::format("GAUNTLET_SIM_NUMERICS (column {}): {}", column, problem));
    };
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) fail(fmt::format("expected name=on|off, got '{}'", item));
    const std::string name = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (name == "approx_bits") {
      char* rest = nullptr;
      long bits = std::strtol(value.c_str(), &rest, 10);
      if (value.empty() || *rest != '\0' || bits < 1 || bits > 23) {
        fail(fmt::format("approx_bits must be an integer from 1 to 23, got '{}'", value));
      }
      n.approx_bits = static_cast<int>(bits);
      continue;
    }
    bool* flag = name == "bf16_matmul"             ? &n.bf16_matmul
                 : name == "approx_transcendental" ? &n.approx_transcendental
                 : name == "tree_reduction"        ? &n.tree_reduction
                                                   : nullptr;
    if (!flag) {
      fail(fmt::format("unknown numerics '{}' (known: bf16_matmul, approx_transcendental, tree_reduction, approx_bits)",
                       name));
    }
    if (value == "on" || value == "true" || value == "1") {
      *flag = true;
    } else if (value == "off" || value == "false" || value == "0") {
      *flag = false;
    } else {
      fail(fmt::format("{} must be on or off, got '{}'", name, value));
    }
  }
  return n;
}

std::int64_t parse_bytes(const std::string& text, const std::string& origin) {
  const std::string t = trim(text);
  std::size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  const std::string number = t.substr(0, i), unit = trim(t.substr(i));
  char* rest = nullptr;
  const double v = std::strtod(number.c_str(), &rest);
  if (number.empty() || *rest != '\0' || !(v > 0)) {
    throw std::invalid_argument(fmt::format("{}: expected a positive size such as 16GiB, got '{}'", origin, text));
  }
  static const std::pair<const char*, double> kUnits[] = {{"", 1},
                                                          {"B", 1},
                                                          {"KiB", 1024.0},
                                                          {"MiB", 1024.0 * 1024},
                                                          {"GiB", 1024.0 * 1024 * 1024},
                                                          {"TiB", 1024.0 * 1024 * 1024 * 1024},
                                                          {"KB", 1e3},
                                                          {"MB", 1e6},
                                                          {"GB", 1e9},
                                                          {"TB", 1e12}};
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    // 2^62 bytes (4 EiB): far past any device, and still a positive int64 after rounding.
    if (!(v * scale < 4.6e18)) {
      throw std::invalid_argument(fmt::format("{}: '{}' is too large (at most 4 EiB)", origin, text));
    }
    if (v * scale < 1) throw std::invalid_argument(fmt::format("{}: '{}' is less than one byte", origin, text));
    return static_cast<std::int64_t>(std::llround(v * scale));
  }
  throw std::invalid_argument(
      fmt::format("{}: unknown unit '{}' (known: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", origin, unit));
}

std::string Config::json() const {
  return fmt::format(R"({{"version":"{}","base_version":"{}","numerics":{{"bf16_matmul":{},"approx_transcendental":{},)"
                     R"("tree_reduction":{},"approx_bits":{}}},"memory_capacity_bytes":{},"faults":"{}"}})",
                     json_escape(version), json_escape(base_version), numerics.bf16_matmul,
                     numerics.approx_transcendental, numerics.tree_reduction, numerics.approx_bits, capacity_bytes,
                     json_escape(faults.canonical()));
}

Config config_from_env(const std::string& base_version, const Numerics& build_numerics,
                       const std::string& build_faults) {
  Config c;
  c.base_version = base_version;
  c.numerics = build_numerics;
  const std::string numerics = env("GAUNTLET_SIM_NUMERICS");
  if (!trim(numerics).empty()) {
    // Items apply over the build's numerics; "default" means the build's, "none" exact numerics.
    const std::string t = trim(numerics);
    if (t == "none" || t == "off") {
      c.numerics = parse_numerics(t);
    } else if (t != "default") {
      Numerics parsed = parse_numerics(numerics);
      // parse_numerics starts from the library defaults; re-apply the explicit items only.
      Numerics base = build_numerics;
      Numerics lib;
      if (parsed.bf16_matmul != lib.bf16_matmul) base.bf16_matmul = parsed.bf16_matmul;
      if (parsed.approx_transcendental != lib.approx_transcendental)
        base.approx_transcendental = parsed.approx_transcendental;
      if (parsed.tree_reduction != lib.tree_reduction) base.tree_reduction = parsed.tree_reduction;
      if (parsed.approx_bits != lib.approx_bits) base.approx_bits = parsed.approx_bits;
      c.numerics = base;
    }
  }
  const std::string memory = env("GAUNTLET_SIM_MEMORY");
  c.capacity_bytes = trim(memory).empty() ? static_cast<std::int64_t>(trn2::kHbmCapacityBytes)
                                          : parse_bytes(memory, "GAUNTLET_SIM_MEMORY");
  c.faults = parse_fault_spec(build_faults, "the build's GAUNTLET_SIM_BUILD_FAULTS");
  FaultSpec from_env = fault_spec_from_env();
  c.faults.rules.insert(c.faults.rules.end(), from_env.rules.begin(), from_env.rules.end());

  const std::string version = trim(env("GAUNTLET_SIM_VERSION"));
  if (!version.empty()) {
    c.version = version;
  } else if (c.numerics == build_numerics && from_env.empty()) {
    c.version = base_version;
  } else {
    c.version = fmt::format("{}+{:08x}", base_version,
                            static_cast<std::uint32_t>(fnv1a(c.numerics.str() + "|" + c.faults.canonical())));
  }
  return c;
}

}  // namespace gauntlet::sim

#include "gauntlet/run/outcome_json.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "gauntlet/base/error.h"
#include "gauntlet/base/outcome_fields.h"
#include "outcome_dom.h"

namespace gauntlet {

nlohmann::json json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
double number_from_json(const nlohmann::json& j) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "-inf" ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return j.get<double>();
}

namespace {
nlohmann::json num(double v) { return json_number(v); }
double num_of(const nlohmann::json& j) { return number_from_json(j); }
}  // namespace

namespace {
// The library's JSON of one member (Note [One field table]).
nlohmann::json json_of(Status v) { return status_name(v); }
nlohmann::json json_of(double v) { return num(v); }
nlohmann::json json_of(int v) { return v; }
nlohmann::json json_of(std::int64_t v) { return v; }
nlohmann::json json_of(bool v) { return v; }
nlohmann::json json_of(const std::string& v) { return v; }
nlohmann::json json_of(const std::vector<std::string>& v) { return v; }
nlohmann::json json_of(const std::vector<double>& v) { return v; }
template <class T>
nlohmann::json json_of(const std::optional<T>& v) {
  return v ? json_of(*v) : nlohmann::json(nullptr);
}

// One member from the library's JSON.
void read_json(const nlohmann::json& j, Status& v) {
  const auto st = parse_status(j.get<std::string>());
  if (!st) throw std::invalid_argument("unknown status " + one_line(j.get<std::string>()));
  v = *st;
}
void read_json(const nlohmann::json& j, double& v) { v = num_of(j); }
template <class T>
void read_json(const nlohmann::json& j, T& v) {
  v = j.get<T>();
}
template <class T>
void read_json(const nlohmann::json& j, std::optional<T>& v) {
  if (j.is_null()) return;
  T value{};
  read_json(j, value);
  v = value;
}
}  // namespace

nlohmann::json to_json(const Outcome& o) {
  nlohmann::json j = nlohmann::json::object();
  fields::visit_fields(o, [&](const fields::Field& f, const auto& v) { j[std::string(f.json)] = json_of(v); });
  return j;
}

void append_json_string(std::string& out, std::string_view s) {
  if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

namespace {

// Builds one JSON object field by field, in the order to_json() lists them.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  ~ObjectWriter() { out_ += '}'; }
  void field(std::string_view name, std::string_view v) { append_json_string(name_(name), v); }
  void field(std::string_view name, const std::string& v) { field(name, std::string_view(v)); }
  void field(std::string_view name, const char* v) { field(name, std::string_view(v)); }
  void field(std::string_view name, bool v) { name_(name) += v ? "true" : "false"; }
  void field(std::string_view name, int v) { fmt::format_to(std::back_inserter(name_(name)), "{}", v); }
  void field(std::string_view name, std::int64_t v) { fmt::format_to(std::back_inserter(name_(name)), "{}", v); }
  void field(std::string_view name, double v) { number(name_(name), v); }
  void field(std::string_view name, const std::vector<std::string>& v) {
    std::string& o = name_(name);
    o += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) o += ',';
      append_json_string(o, v[i]);
    }
    o += ']';
  }
  void field(std::string_view name, const std::vector<double>& v) {
    std::string& o = name_(name);
    o += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) o += ',';
      number(o, v[i]);
    }
    o += ']';
  }
  void field(std::string_view name, Status v) { field(name, status_name(v)); }
  template <class T>
  void field(std::string_view name, const std::optional<T>& v) {
    if (v) {
      field(name, *v);
    } else {
      null(name);
    }
  }
  void null(std::string_view name) { name_(name) += "null"; }

 private:
  std::string& name_(std::string_view name) {
    if (!first_) out_ += ',';
    first_ = false;
    append_json_string(out_, name);
    out_ += ':';
    return out_;
  }
  // As json_number(): non-finite values travel as strings; finite ones in the shortest form that
  // reads back to the same double.
  static void number(std::string& o, double v) {
    if (std::isnan(v)) {
      o += "\"nan\"";
    } else if (std::isinf(v)) {
      o += v > 0 ? "\"inf\"" : "\"-inf\"";
    } else if (v == 0 && std::signbit(v)) {
      o += "-0.0";  // "-0" would read back as the integer 0 (found by fuzzing the worker protocol)
    } else {
      fmt::format_to(std::back_inserter(o), "{}", v);
    }
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace

std::string to_json_text(const Outcome& o) {
  std::string out;
  out.reserve(768 + o.error.size());
  {
    ObjectWriter w(out);
    fields::visit_fields(o, [&](const fields::Field& f, const auto& v) { w.field(f.json, v); });
  }
  return out;
}

Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  fields::visit_fields(o, [&](const fields::Field& f, auto&& member) {
    if (f.has(fields::kDerived)) return;
    const std::string name(f.json);
    if (f.has(fields::kRequired)) {
      read_json(j.at(name), member);
      return;
    }
    if (const auto it = j.find(name); it != j.end()) read_json(*it, member);
  });
  return o;
}

}  // namespace gauntlet

namespace gauntlet {

namespace {

using simdjson::dom::element;

[[noreturn]] void bad_field(std::string_view name, const char* why) {
  throw std::runtime_error(fmt::format("outcome field {}: {}", one_line(name), why));
}

double dom_number(std::string_view name, element e) {
  if (double d; e.get_double().get(d) == simdjson::SUCCESS) return d;
  if (std::int64_t i; e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  if (std::uint64_t u; e.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  if (std::string_view s; e.get_string().get(s) == simdjson::SUCCESS) {
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  bad_field(name, "not a number");
}
std::int64_t dom_int(std::string_view name, element e) {
  if (std::int64_t i; e.get_int64().get(i) == simdjson::SUCCESS) return i;
  bad_field(name, "not an integer");
}
std::string dom_string(std::string_view name, element e) {
  if (std::string_view s; e.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  bad_field(name, "not a string");
}
bool dom_bool(std::string_view name, element e) {
  if (bool b; e.get_bool().get(b) == simdjson::SUCCESS) return b;
  bad_field(name, "not a boolean");
}

// One member from simdjson's DOM.
void read_dom(std::string_view name, element e, std::string& v) { v = dom_string(name, e); }
void read_dom(std::string_view name, element e, Status& v) {
  const std::string st = dom_string(name, e);
  const auto parsed = parse_status(st);
  if (!parsed) throw std::runtime_error("unknown status " + one_line(st));  // a worker's bytes: one line
  v = *parsed;
}
void read_dom(std::string_view name, element e, double& v) { v = dom_number(name, e); }
void read_dom(std::string_view name, element e, int& v) { v = static_cast<int>(dom_int(name, e)); }
void read_dom(std::string_view name, element e, std::int64_t& v) { v = dom_int(name, e); }
void read_dom(std::string_view name, element e, bool& v) { v = dom_bool(name, e); }
template <class T>
void read_dom(std::string_view name, element e, std::vector<T>& v) {
  simdjson::dom::array items;
  if (e.get_array().get(items) != simdjson::SUCCESS) bad_field(name, "not an array");
  v.clear();
  for (element item : items) read_dom(name, item, v.emplace_back());
}
template <class T>
void read_dom(std::string_view name, element e, std::optional<T>& v) {
  if (e.is_null()) return;
  T value{};
  read_dom(name, e, value);
  v = value;
}

// The fields' JSON names, in visit_fields() order.
const std::vector<std::string_view>& field_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    const Outcome o;
    fields::visit_fields(o, [&](const fields::Field& f, const auto&) { out.push_back(f.json); });
    return out;
  }();
  return names;
}

}  // namespace

// The fields outcome_from_json() reads, with the same defaults; unknown fields are ignored, as
// outcome_from_json does. The writers list fields in visit_fields() order, so each name is
// looked for first where the previous one was found.
Outcome outcome_from_dom(simdjson::dom::object obj) {
  const std::vector<std::string_view>& names = field_names();
  const std::size_t n = names.size();
  thread_local std::vector<element> found;
  thread_local std::vector<char> has;
  found.assign(n, element());
  has.assign(n, 0);
  std::size_t next = 0;
  for (auto [name, v] : obj) {
    std::size_t k =
        next < n && names[next] == name ? next : std::find(names.begin(), names.end(), name) - names.begin();
    if (k == n) continue;
    found[k] = v;
    has[k] = 1;
    next = k + 1;
  }
  Outcome o;
  bool has_status = false;
  std::size_t k = 0;
  fields::visit_fields(o, [&](const fields::Field& f, auto&& member) {
    const std::size_t i = k++;
    if (!has[i] || f.has(fields::kDerived)) return;
    read_dom(f.json, found[i], member);
    has_status = has_status || f.json == "status";
  });
  if (!has_status) throw std::runtime_error("outcome has no status");
  return o;
}

}  // namespace gauntlet

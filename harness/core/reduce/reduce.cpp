#include "gauntlet/core/reduce/reduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "gauntlet/base/text.h"
#include "gauntlet/core/catalog/ops_from_models.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet {

// Note [Failing-shape reduction]: a failure found on 1x3x224x224 is easier to debug at the
// smallest shape that still fails the same way. `gauntlet reduce` searches for it greedily:
//
// - Moves. From the current case, one step smaller in each of these ways (docs/repro.md):
//   a *shared dim*: every dim of every input with size v (mm's K, conv's channels, the dims of
//   same-shaped inputs) set to 1, v/2 or v-1 together; an *aligned dim*: the dim at one position
//   counted from the right, in every input where it is the largest there (broadcast-compatible
//   shapes stay so: a broadcast 1 stays 1); a *single dim* of one input; *dropping the leading
//   dim* of every input of the highest rank, or of one input. Dims are never set to 0 (an empty
//   tensor tests little). Scalar arguments, dtype, layout and mode stay as they are.
// - Validity. A candidate validate_key rejects is counted, not run. One whose golden the CPU
//   cannot compute ends ERROR with the CPU's message, which is not "the same way".
// - Same way. The same status; for FAIL the same outputs out of tolerance; for ERROR the same
//   error's failure signature (Note [Failure signature]); for CRASH the same signal (failure_signature).
// - Order and cost. Candidates run smallest first (elements over all inputs, then dims, then
//   key), in batches of 1, 2, 4, ...: a batch is one call of the runner, i.e. one start of
//   worker processes, so a case that crashes its worker costs a start per candidate, while
//   a round whose smallest candidate already fails (typical for a crash anywhere) costs one.
//   The first batch holding a candidate that fails the same way ends the round; the smallest
//   such becomes the current case. A round with none ends the search: the result is 1-minimal
//   for the moves (no single move keeps the failure), not a global minimum. A candidate
//   already run is never run again.

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// "out0: 3 of 64 elements outside tolerance ..." -> "out0"; "" when the error names no output.
std::string leading_output(const std::string& error) {
  std::size_t i = 0;
  while (i < error.size() && is_name_char(error[i])) ++i;
  if (i == 0 || i + 1 >= error.size() || error[i] != ':' || error[i + 1] != ' ') return "";
  return error.substr(0, i);
}

std::int64_t rank_sum(const CaseKey& k) {
  std::int64_t r = 0;
  for (const Shape& s : k.shapes) r += static_cast<std::int64_t>(s.size());
  return r;
}

bool smaller(const CaseKey& a, const std::string& as, const CaseKey& b, const std::string& bs) {
  const std::int64_t ea = total_elements(a), eb = total_elements(b);
  if (ea != eb) return ea < eb;
  const std::int64_t ra = rank_sum(a), rb = rank_sum(b);
  if (ra != rb) return ra < rb;
  return as < bs;
}

// The sizes a dim of size v may shrink to in one step.
std::vector<std::int64_t> smaller_sizes(std::int64_t v) {
  std::vector<std::int64_t> out;
  for (std::int64_t n : {std::int64_t{1}, v / 2, v - 1}) {
    if (n >= 1 && n < v && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

}  // namespace

std::string FailureSignature::str() const {
  std::string s(status_name(status));
  if (!outputs.empty())
    s += fmt::format(" ({} out of tolerance)", fmt::join(outputs, ", "));
  else if (status == Status::Crash && !detail.empty())
    s += " (" + detail + ")";
  else if (!detail.empty())
    s += ": " + detail;
  return s;
}

FailureSignature failure_signature(const Outcome& o) {
  FailureSignature sig;
  sig.status = o.status;
  if (o.status == Status::Fail) {
    // The outputs the verdict names: the first one out of tolerance (the error's subject) and
    // the one holding the worst element (Metrics::worst, "grad.self[3]").
    std::set<std::string> names;
    if (std::string lead = leading_output(o.error); !lead.empty()) names.insert(lead);
    if (o.metrics.mismatches > 0 && !o.metrics.worst.empty())
      names.insert(o.metrics.worst.substr(0, o.metrics.worst.find('[')));
    sig.outputs.assign(names.begin(), names.end());
    // A failure that names no output (a shape or output-count problem): its text is the signature.
    if (sig.outputs.empty()) sig.detail = error_signature(o.error);
  } else if (o.status == Status::Error) {
    sig.detail = error_signature(o.error);
  } else if (o.status == Status::Crash) {
    const std::string line = first_line(o.error);
    const std::string with = "died with ";
    const std::size_t a = line.find(with);
    if (a != std::string::npos) {
      const std::size_t b = line.find(" while", a);
      sig.detail = line.substr(a + with.size(), b == std::string::npos ? std::string::npos : b - a - with.size());
    }
  }
  return sig;
}

bool reducible_status(Status s) {
  return s == Status::Fail || s == Status::Error || s == Status::Crash || s == Status::Timeout;
}

std::int64_t total_elements(const CaseKey& key) {
  std::int64_t n = 0;
  for (const Shape& s : key.shapes) n += numel(s);
  return n;
}

std::int64_t largest_input_elements(const CaseKey& key) {
  std::int64_t n = 0;
  for (const Shape& s : key.shapes) n = std::max(n, numel(s));
  return n;
}

Candidates shrink_candidates(const CaseKey& key) {
  std::vector<Candidate> raw;
  auto add = [&](std::vector<Shape> shapes, std::string move) {
    if (shapes == key.shapes) return;
    CaseKey k = key;
    k.shapes = std::move(shapes);
    raw.push_back({std::move(k), std::move(move)});
  };
  const std::vector<Shape>& in = key.shapes;
  std::size_t max_rank = 0;
  for (const Shape& s : in) max_rank = std::max(max_rank, s.size());

  // Shared dims: every dim of size v, in every input.
  std::set<std::int64_t> sizes;
  for (const Shape& s : in) sizes.insert(s.begin(), s.end());
  for (std::int64_t v : sizes) {
    for (std::int64_t n : smaller_sizes(v)) {
      std::vector<Shape> out = in;
      for (Shape& s : out) std::replace(s.begin(), s.end(), v, n);
      add(std::move(out), fmt::format("every dim of size {} -> {}", v, n));
    }
  }
  // Aligned dims: position p from the right, where an input has the position's largest size.
  for (std::size_t p = 1; p <= max_rank; ++p) {
    std::int64_t v = 0;
    for (const Shape& s : in) {
      if (s.size() >= p) v = std::max(v, s[s.size() - p]);
    }
    for (std::int64_t n : smaller_sizes(v)) {
      std::vector<Shape> out = in;
      for (Shape& s : out) {
        if (s.size() >= p && s[s.size() - p] == v) s[s.size() - p] = n;
      }
      add(std::move(out), fmt::format("dim -{} {} -> {} in every input", p, v, n));
    }
  }
  // A single dim of one input.
  for (std::size_t i = 0; i < in.size(); ++i) {
    for (std::size_t d = 0; d < in[i].size(); ++d) {
      for (std::int64_t n : smaller_sizes(in[i][d])) {
        std::vector<Shape> out = in;
        out[i][d] = n;
        add(std::move(out), fmt::format("input {} dim {} {} -> {}", i, d, in[i][d], n));
      }
    }
  }
  // Dropping leading dims: of every input of the highest rank, or of one input.
  if (max_rank > 0) {
    std::vector<Shape> out = in;
    for (Shape& s : out) {
      if (s.size() == max_rank) s.erase(s.begin());
    }
    add(std::move(out), "leading dim dropped from every input of rank " + std::to_string(max_rank));
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i].empty()) continue;
    std::vector<Shape> out = in;
    out[i].erase(out[i].begin());
    add(std::move(out), fmt::format("input {} leading dim dropped", i));
  }

  Candidates c;
  std::set<std::string> seen;
  std::vector<std::pair<std::string, Candidate>> valid;
  for (Candidate& cand : raw) {
    std::string text = cand.key.str();
    if (!seen.insert(text).second) continue;
    if (validate_key(cand.key)) {
      ++c.invalid;
      continue;
    }
    valid.emplace_back(std::move(text), std::move(cand));
  }
  std::stable_sort(valid.begin(), valid.end(),
                   [](const auto& a, const auto& b) { return smaller(a.second.key, a.first, b.second.key, b.first); });
  for (auto& [text, cand] : valid) c.valid.push_back(std::move(cand));
  return c;
}

ReduceResult reduce_case(const CaseKey& start, const Outcome& start_outcome, const RunCases& run,
                         const ReduceConfig& cfg) {
  ReduceResult r;
  r.smallest = start;
  r.outcome = start_outcome;
  const FailureSignature want = failure_signature(start_outcome);
  std::set<std::string> tried = {start.str()};
  for (;;) {
    ++r.stats.rounds;
    Candidates cands = shrink_candidates(r.smallest);
    r.stats.invalid += cands.invalid;
    std::vector<Candidate> todo;
    for (Candidate& c : cands.valid) {
      if (!tried.count(c.key.str())) todo.push_back(std::move(c));
    }
    bool moved = false;
    std::size_t next = 0;
    for (std::size_t batch = 1; next < todo.size() && !moved; batch *= 2) {
      const int left = cfg.max_candidates - r.stats.tried;
      if (left <= 0) {
        r.budget_spent = true;
        return r;
      }
      const std::size_t n = std::min({batch, todo.size() - next, static_cast<std::size_t>(left)});
      std::vector<std::string> keys;
      for (std::size_t i = next; i < next + n; ++i) {
        keys.push_back(todo[i].key.str());
        tried.insert(keys.back());
      }
      std::vector<Outcome> outs = run(keys);
      ++r.stats.batches;
      r.stats.tried += static_cast<int>(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (i >= outs.size()) {  // the runner stopped early: what it did not run is no failure
          ++r.stats.other;
          continue;
        }
        const Outcome& o = outs[i];
        if (failure_signature(o) == want) {
          ++r.stats.reproduced;
          if (!moved) {  // candidates are smallest first: the first is the smallest
            const Candidate& c = todo[next + i];
            r.steps.push_back({r.smallest.str(), c.key.str(), c.move});
            r.smallest = c.key;
            r.outcome = o;
            moved = true;
          }
        } else if (o.status == Status::Pass) {
          ++r.stats.passed;
        } else {
          ++r.stats.other;
        }
      }
      next += n;
    }
    if (!moved) return r;
  }
}

std::string reduce_strategy() {
  return "greedy descent, smallest candidate first: per step, a shared dim (every dim of one size, all inputs), "
         "an aligned dim (one position from the right, broadcast-safe) or one input's dim -> 1, v/2 or v-1, or a "
         "leading dim dropped; batches of 1, 2, 4, ... candidates; stop when no step fails the same way";
}

// Note [Model reduction] in reduce.h.
std::optional<DivergentNode> divergent_node(const std::string& error) {
  const std::string mark = "first divergent node: ";
  const std::size_t at = error.find(mark);
  if (at == std::string::npos) return std::nullopt;
  DivergentNode n;
  n.text = first_line(error.substr(at + mark.size()));
  n.kind = n.text.substr(0, n.text.find(' '));
  const std::string inputs = ") inputs ";
  const std::size_t in = n.text.find(inputs);
  if (in == std::string::npos) return n;
  n.has_inputs = true;
  const std::size_t from = in + inputs.size();
  const std::string list = n.text.substr(from, n.text.find(": ", from) - from);  // "[1, 3], [3]" or "-"
  for (std::size_t open = list.find('['); open != std::string::npos; open = list.find('[', open + 1)) {
    const std::size_t close = list.find(']', open);
    if (close == std::string::npos) break;
    Shape sh;
    const std::string inner = list.substr(open + 1, close - open - 1);
    for (std::size_t i = 0; i < inner.size();) {
      std::size_t j = inner.find(',', i);
      if (j == std::string::npos) j = inner.size();
      sh.push_back(std::stoll(inner.substr(i, j - i)));
      i = j + 1;
    }
    n.shapes.push_back(std::move(sh));
  }
  return n;
}

std::vector<std::string> op_cases_of_node(const DivergentNode& n, const std::vector<std::string>& records,
                                          std::string& why) {
  std::vector<std::string> keys;
  std::size_t matched = 0;
  for (const std::string& text : records) {
    const std::optional<ExecutedOp> e = parse_executed_op(text);
    if (!e || e->op.substr(0, e->op.find('.')) != n.kind || record_tensor_shapes(*e) != n.shapes) continue;
    ++matched;
    const OpCaseCut cut = op_case_of(*e, /*train=*/false);  // the node diverged in the forward
    if (cut.key) {
      const std::string k = cut.key->str();
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    } else if (why.empty()) {
      why = cut.problem;
    }
  }
  if (matched == 0 && why.empty()) {
    why = records.empty() ? "the case recorded no executed ops"
                          : "no executed-op record of the case has that op and those shapes";
  }
  return keys;
}

}  // namespace gauntlet

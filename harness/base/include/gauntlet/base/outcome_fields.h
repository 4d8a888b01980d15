// Note [One field table]: every field of an Outcome that leaves the process is listed once, in
// visit_fields() below, with its JSON name, its column of `results` and how it is encoded. The
// JSON writers and readers (outcome_json.cpp: the library's to_json/outcome_from_json, the
// worker's fast to_json_text and the orchestrator's simdjson reader) and the store's column list,
// binder and reader (store.cpp) are all loops over it, so adding a field is one line here plus
// the migration that adds its column (store.cpp, kMigrations). The member's C++ type chooses the
// encoding (a double travels as JSON "nan"/"inf"/"-inf" when not finite and as SQL NULL when NaN;
// an optional is JSON null / SQL NULL when absent; a list of strings is a JSON array, stored as
// its JSON text; the samples are a JSON array, stored as float32 bytes; a Status is its name);
// the flags say the rest. StoreTest.EveryFieldOfTheFieldTableRoundTripsThroughJsonAndSqlite
// fills every field through this table, so a new field is tested without a new test. Anchor:
// Google Benchmark's BenchmarkReporter::Run, one plain struct written in one place. The run
// record has its own table, visit_run_fields in store.cpp (its only reader and writer).
#pragma once

#include <string_view>

#include "gauntlet/base/outcome.h"

namespace gauntlet::fields {

enum Flag : unsigned {
  kNone = 0,
  kRequired = 1u << 0,       // outcome_from_json: absent is an error (the other readers: the default)
  kDerived = 1u << 1,        // written (JSON and SQL) for queries, never read: computed from others
  kJsonOnly = 1u << 2,       // not a column of `results` (the key is cases.key)
  kZeroIsNull = 1u << 3,     // SQL: a value <= 0 is stored as NULL ("not known")
  kNullIsDefault = 1u << 4,  // SQL: NULL (rows from before the column existed) reads as the default
};

struct Field {
  std::string_view json;    // name in JSON
  std::string_view column;  // column of `results` ("" for kJsonOnly)
  unsigned flags = kNone;
  bool has(Flag f) const { return (flags & f) != 0; }
};

// Calls f(field, member) for every field of `o` (an Outcome or a const Outcome), in the order of
// the JSON writers and of the store's columns. `member` is a reference to o's member, or, for a
// kDerived field, its value.
template <class O, class F>
void visit_fields(O& o, F&& f) {
  f(Field{"key", "", kJsonOnly | kRequired}, o.key);
  f(Field{"status", "status", kRequired}, o.status);
  f(Field{"attempt", "attempt"}, o.attempt);
  f(Field{"rtol", "rtol", kRequired}, o.rtol);
  f(Field{"atol", "atol", kRequired}, o.atol);
  f(Field{"tolerance_profile", "tolerance_profile"}, o.tolerance_profile);
  f(Field{"max_abs_err", "max_abs_err", kRequired}, o.metrics.max_abs_err);
  f(Field{"max_rel_err", "max_rel_err", kRequired}, o.metrics.max_rel_err);
  f(Field{"mismatches", "mismatches", kRequired}, o.metrics.mismatches);
  f(Field{"numel", "numel", kRequired}, o.metrics.numel);
  f(Field{"mismatch_frac", "mismatch_frac", kDerived}, o.metrics.mismatch_frac());
  f(Field{"max_ulp", "max_ulp", kRequired}, o.metrics.max_ulp);
  f(Field{"nan_inf_ok", "nan_inf_ok", kRequired}, o.metrics.nan_inf_ok);
  f(Field{"worst", "worst"}, o.metrics.worst);
  f(Field{"error", "error"}, o.error);
  f(Field{"reason", "reason"}, o.reason);
  f(Field{"stage", "stage"}, o.stage);
  f(Field{"first_us", "first_us", kRequired}, o.timing.first_us);
  f(Field{"median_us", "median_us", kRequired}, o.timing.median_us);
  f(Field{"p10_us", "p10_us", kRequired}, o.timing.p10_us);
  f(Field{"p90_us", "p90_us", kRequired}, o.timing.p90_us);
  f(Field{"cv", "cv", kNullIsDefault}, o.timing.cv);
  f(Field{"reps", "reps"}, o.timing.reps);
  f(Field{"peak_mem_bytes", "peak_mem_bytes"}, o.peak_mem_bytes);
  f(Field{"fallback_ops", "fallback_ops"}, o.fallback_ops);
  f(Field{"golden_source", "golden_source"}, o.golden_source);
  f(Field{"golden_entry", "golden_entry"}, o.golden_entry);
  f(Field{"golden_us", "golden_us"}, o.timing.golden_us);
  f(Field{"sim_time_us", "sim_time_us"}, o.sim_time_us);
  f(Field{"device_slot", "device_slot"}, o.device_slot);
  f(Field{"flaky", "flaky"}, o.flaky);
  f(Field{"samples_us", "samples"}, o.timing.samples_us);
  f(Field{"work_items", "work_items", kZeroIsNull | kNullIsDefault}, o.work_items);
  f(Field{"executed_ops", "executed_ops"}, o.executed_ops);
  f(Field{"graph_breaks", "graph_breaks"}, o.graph_breaks);
  f(Field{"recompiles", "recompiles"}, o.recompiles);
  f(Field{"regions", "regions"}, o.regions);
  f(Field{"algbw_gbps", "algbw_gbps"}, o.algbw_gbps);
  f(Field{"busbw_gbps", "busbw_gbps"}, o.busbw_gbps);
  f(Field{"compile_ms", "compile_ms"}, o.compile_ms);
  f(Field{"dynamo_ms", "dynamo_ms"}, o.dynamo_ms);
  f(Field{"aot_ms", "aot_ms"}, o.aot_ms);
  f(Field{"backend_ms", "backend_ms"}, o.backend_ms);
  f(Field{"cache_hits", "cache_hits"}, o.cache_hits);
}

}  // namespace gauntlet::fields

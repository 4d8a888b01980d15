// Note [Collective ranks]: what one rank of a collective case does, in its own process
// (`gauntlet rank`, started by the group: Note [Collective groups] in coll_group.cpp):
//   1. joins the group through the TCPStore the group's launcher serves on 127.0.0.1;
//   2. makes the backend's process group: Gloo for `cpu`, the library's own for a plugin that
//      exports one (Note [Plugin process groups]); none: UNSUPPORTED;
//   3. makes its input (Note [Collective inputs]) on the device, with the key's layout;
//   4. runs the collective once (first_us), compares its own output with the fp64 golden of that
//      output, computed from every rank's inputs regenerated here (Note [Collective tolerance]);
//   5. times it (Note [Collective timing]) and answers one outcome.
#include "gauntlet/core/collective/collective.h"

#include <fmt/format.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <thread>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/collective/rank_process.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/plugin/torch_compat.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/suites/coll_spec.h"
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

std::string reduce_op(const CaseKey& key) {
  const auto it = key.args.find("op");
  return it == key.args.end() ? "" : it->second;
}

int root_of(const CaseKey& key) {
  const auto it = key.args.find("root");
  return it == key.args.end() ? 0 : std::stoi(it->second);
}

bool uneven(const CaseKey& key) {
  const auto it = key.args.find("split");
  return it != key.args.end() && it->second == "uneven";
}

std::int64_t elements(const CaseKey& key) { return key.shapes.at(0).at(0); }

// Elements of rank r's input buffer: all_gather contributes one chunk, the others a whole buffer.
std::int64_t input_elements(const CaseKey& key) {
  if (key.target == "all_gather") return elements(key) / key.world;
  return elements(key);
}

}  // namespace

// Note [Collective inputs]: rank r's values are a splitmix64 stream seeded with (case id, rank),
// so any rank (and the golden) can regenerate any other's. Floating: uniform in [-1, 1], except
// product: [0.5, 1.5] (a product of 8 stays in range); integers: [-100, 100], product: {-2, -1,
// 1, 2}. Values are rounded to the case dtype, so the fp64 golden sees exactly what was sent.
at::Tensor coll_input(const CaseKey& key, int rank) {
  SplitMix64 rng(key.id() ^ (0xc011'0000'0000'0001ULL * static_cast<std::uint64_t>(rank + 1)));
  const std::int64_t n = input_elements(key);
  const bool product = reduce_op(key) == "product";
  const bool floating = contains(kFloatDTypes, key.dtype);
  at::Tensor t = at::empty({n}, at::kDouble);
  double* p = t.data_ptr<double>();
  for (std::int64_t i = 0; i < n; ++i) {
    if (floating) {
      p[i] = product ? 0.5 + rng.uniform() : 2 * rng.uniform() - 1;
    } else if (product) {
      constexpr double kPick[] = {-2, -1, 1, 2};
      p[i] = kPick[rng.below(4)];
    } else {
      p[i] = static_cast<double>(rng.below(201) - 100);
    }
  }
  return t.to(to_scalar_type(key.dtype));
}

namespace {

// Rank r's input in fp64 (the rounded values).
at::Tensor input64(const CaseKey& key, int r) { return coll_input(key, r).to(at::kDouble); }

// The fp64 reduction of every rank's input, one rank's input at a time (64 MiB buffers over 8
// ranks would otherwise hold 8 fp64 copies in every rank).
at::Tensor reduce(const CaseKey& key, const std::string& op) {
  at::Tensor acc = input64(key, 0);
  for (int r = 1; r < key.world; ++r) {
    const at::Tensor x = input64(key, r);
    if (op == "sum" || op == "avg")
      acc.add_(x);
    else if (op == "product")
      acc.mul_(x);
    else if (op == "max")
      acc = at::maximum(acc, x);
    else if (op == "min")
      acc = at::minimum(acc, x);
  }
  if (op == "avg") acc.div_(static_cast<double>(key.world));
  return acc;
}

}  // namespace

at::Tensor coll_golden(const CaseKey& key, int rank) {
  const int w = key.world;
  const std::string& c = key.target;
  if (c == "barrier") return at::empty({0}, at::kDouble);
  if (c == "all_reduce") return reduce(key, reduce_op(key));
  if (c == "broadcast") return input64(key, root_of(key));
  if (c == "send_recv") return input64(key, (rank + w - 1) % w);
  if (c == "all_gather") {
    std::vector<at::Tensor> parts;
    for (int i = 0; i < w; ++i) parts.push_back(input64(key, i));
    return at::cat(parts);
  }
  const std::int64_t chunk = elements(key) / w;
  if (c == "reduce_scatter") return reduce(key, reduce_op(key)).slice(0, rank * chunk, (rank + 1) * chunk).clone();
  if (c == "all_to_all") {
    std::vector<at::Tensor> parts;
    for (int i = 0; i < w; ++i) {
      const auto splits = all_to_all_splits(elements(key), w, i, uneven(key));
      std::int64_t offset = 0;
      for (int j = 0; j < rank; ++j) offset += splits[static_cast<std::size_t>(j)];
      parts.push_back(input64(key, i).slice(0, offset, offset + splits[static_cast<std::size_t>(rank)]));
    }
    return at::cat(parts);
  }
  throw std::invalid_argument("unknown collective '" + c + "'");
}

// Note [Collective tolerance]: data movement (broadcast, all_gather, all_to_all, send_recv) and
// max / min pick values and must be exact: tolerance 0. A sum, average or product is reduced in
// the tensor's dtype by the backend (a ring rounds a partial result at each of its world - 1
// steps; another algorithm, a tree, rounds as often or less), so its tolerance grows with the
// world size w:
//   sum, avg:  atol = atol_dtype + (w - 1) * u * max_e sum_i |x_i[e]|,  rtol = rtol_dtype
//   product:   rtol = rtol_dtype + (w - 1) * u,                           atol = atol_dtype
// where u = 2^-(mantissa bits + 1) is the dtype's unit roundoff (bf16 2^-8, f16 2^-11, f32 2^-24,
// f64 2^-53; 0 for integers, which are exact), and max_e sum_i |x_i[e]| bounds every partial sum.
// rtol_dtype / atol_dtype are the dtype's defaults, or what tolerances.yaml says for the
// collective (its `ops` name collectives too).
Tolerance coll_tolerance(const CaseKey& key, const Tolerance& base) {
  const std::string& c = key.target;
  const std::string op = reduce_op(key);
  if (c == "broadcast" || c == "all_gather" || c == "all_to_all" || c == "send_recv" || c == "barrier" || op == "max" ||
      op == "min") {
    return {0, 0, "exact: " + (op.empty() ? c : "op=" + op) + " moves values"};
  }
  double u = 0;
  switch (key.dtype) {
    case DType::BF16:
      u = 0x1p-8;
      break;
    case DType::F16:
      u = 0x1p-11;
      break;
    case DType::F32:
      u = 0x1p-24;
      break;
    case DType::F64:
      u = 0x1p-53;
      break;
    default:
      return {0, 0, "exact: integers"};
  }
  const double steps = key.world - 1;
  Tolerance t = base;
  if (op == "product") {
    t.rtol += steps * u;
  } else {
    double bound = 0;
    at::Tensor abs_sum = at::zeros({input_elements(key)}, at::kDouble);
    for (int r = 0; r < key.world; ++r) abs_sum.add_(input64(key, r).abs());
    bound = abs_sum.numel() ? abs_sum.max().item<double>() : 0;
    // reduce_scatter sums chunks of the same buffers: the same bound holds.
    t.atol += steps * u * bound;
  }
  t.source = fmt::format("{} scaled for {} ring steps (Note [Collective tolerance])", base.source, key.world - 1);
  return t;
}

namespace {

c10d::ReduceOp to_reduce_op(const std::string& op) {
  if (op == "sum") return c10d::ReduceOp::SUM;
  if (op == "avg") return c10d::ReduceOp::AVG;
  if (op == "product") return c10d::ReduceOp::PRODUCT;
  if (op == "max") return c10d::ReduceOp::MAX;
  return c10d::ReduceOp::MIN;
}

// The buffers of one rank on the device, and the call that runs the collective on them.
class Call {
 public:
  Call(const CaseKey& key, int rank, Backend& backend, c10d::Backend& pg) : key_(key), rank_(rank), pg_(pg) {
    const auto dev = backend.device();
    const at::Tensor cpu = coll_input(key, rank);
    input_ = backend.to_device(apply_layout(cpu, key.layout));
    const std::int64_t n = elements(key), w = key.world, chunk = n / w;
    const auto opts = input_.options().device(dev);
    const std::string& c = key.target;
    if (c == "all_gather") {
      for (std::int64_t i = 0; i < w; ++i) gathered_.push_back(at::empty({chunk}, opts));
    } else if (c == "reduce_scatter") {
      for (std::int64_t i = 0; i < w; ++i) scattered_.push_back(input_.slice(0, i * chunk, (i + 1) * chunk));
      output_ = at::empty({chunk}, opts);
    } else if (c == "all_to_all") {
      in_splits_ = all_to_all_splits(n, key.world, rank, uneven(key));
      for (int i = 0; i < key.world; ++i)
        out_splits_.push_back(all_to_all_splits(n, key.world, i, uneven(key))[static_cast<std::size_t>(rank)]);
      std::int64_t total = 0;
      for (auto s : out_splits_) total += s;
      output_ = at::empty({total}, opts);
    } else if (c == "send_recv") {
      output_ = at::empty({n}, opts);
    }
    fresh_ = input_.clone();  // all_reduce and broadcast work in place: restored before each call
  }

  // Runs the collective once and waits for it.
  void run() {
    const std::string& c = key_.target;
    std::vector<c10::intrusive_ptr<c10d::Work>> work;
    if (c == "all_reduce" || c == "broadcast") input_.copy_(fresh_);
    if (c == "all_reduce") {
      std::vector<at::Tensor> t{input_};
      c10d::AllreduceOptions o;
      o.reduceOp = to_reduce_op(reduce_op(key_));
      work.push_back(pg_.allreduce(t, o));
    } else if (c == "broadcast") {
      std::vector<at::Tensor> t{input_};
      c10d::BroadcastOptions o;
      o.rootRank = root_of(key_);
      work.push_back(pg_.broadcast(t, o));
    } else if (c == "all_gather") {
      std::vector<std::vector<at::Tensor>> out{gathered_};
      std::vector<at::Tensor> in{input_};
      work.push_back(pg_.allgather(out, in));
    } else if (c == "reduce_scatter") {
      std::vector<at::Tensor> out{output_};
      std::vector<std::vector<at::Tensor>> in{scattered_};
      c10d::ReduceScatterOptions o;
      o.reduceOp = to_reduce_op(reduce_op(key_));
      work.push_back(pg_.reduce_scatter(out, in, o));
    } else if (c == "all_to_all") {
      work.push_back(pg_.alltoall_base(output_, input_, out_splits_, in_splits_));
    } else if (c == "barrier") {
      work.push_back(pg_.barrier());
    } else if (c == "send_recv") {
      const int w = key_.world;
      std::vector<at::Tensor> send{input_}, recv{output_};
      work.push_back(pg_.send(send, (rank_ + 1) % w, 0));
      work.push_back(pg_.recv(recv, (rank_ + w - 1) % w, 0));
    }
    for (auto& wk : work) wk->wait();
  }

  // This rank's output on the CPU, contiguous, in fp64.
  at::Tensor output() const {
    const std::string& c = key_.target;
    at::Tensor out;
    if (c == "all_reduce" || c == "broadcast")
      out = input_;
    else if (c == "all_gather")
      out = cat_cpu(gathered_);
    else if (c == "barrier")
      out = at::empty({0}, at::kDouble);
    else
      out = output_;
    return out.to(at::kCPU).contiguous().to(at::kDouble);
  }

  // Bytes of the buffer the key sizes (nccl-tests' "size").
  double bytes() const { return static_cast<double>(elements(key_)) * static_cast<double>(input_.element_size()); }

 private:
  static at::Tensor cat_cpu(const std::vector<at::Tensor>& parts) {
    std::vector<at::Tensor> cpu;
    for (const auto& p : parts) cpu.push_back(p.to(at::kCPU));
    return at::cat(cpu);
  }

  const CaseKey& key_;
  int rank_;
  c10d::Backend& pg_;
  at::Tensor input_, fresh_, output_;
  std::vector<at::Tensor> gathered_, scattered_;
  std::vector<std::int64_t> in_splits_, out_splits_;
};

// Note [Collective outcomes]: what a process group refuses is UNSUPPORTED, never emulated: an
// op it does not implement (c10::NotImplementedError; "does not support ..."; Gloo's "Cannot use
// ReduceOp.AVG", "Invalid scalar type", "Unsupported", its contiguity checks). Anything else
// thrown is ERROR. Both keep the message without the C++ backtrace.
Status classify(const std::string& message) {
  for (const char* s : {"does not support", "not supported", "Unsupported", "unsupported", "Cannot use ReduceOp",
                        "Invalid scalar type", "contiguous", "not implemented for"}) {
    if (message.find(s) != std::string::npos) return Status::Unsupported;
  }
  return Status::Error;
}

// `stage` says how far the rank got, for its error message ("rank 1 (timing): ...").
void run_checked(const CaseKey& key, int rank, int port, Backend& backend, const RankConfig& cfg, Outcome& out,
                 const char*& stage) {
  stage = "rendezvous";
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(cfg.store_timeout_s * 1000));
  const auto startup = std::chrono::milliseconds(static_cast<std::int64_t>(cfg.startup_timeout_s * 1000));
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(port);
  so.isServer = false;
  so.waitWorkers = false;
  so.timeout = startup;
  auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
  // Note [Group start-up]: every rank waits for all to have started before Gloo's rendezvous
  // (whose timeout is the collective one), then says it joined; the launcher's deadline for the
  // case counts from the moment all have joined (coll_group.cpp).
  if (store->add("gauntlet/started", 1) == key.world) store->set("gauntlet/all-started", std::vector<std::uint8_t>{1});
  store->wait({"gauntlet/all-started"}, startup);
  store->setTimeout(timeout);
  auto pg = backend.new_process_group(store, rank, key.world, timeout);
  store->set(fmt::format("gauntlet/joined/{}", rank), std::vector<std::uint8_t>{1});
  store->add("gauntlet/joined", 1);

  stage = "first call";
  const MemoryBaseline memory_baseline(backend);  // Note [Case peak memory] in backend.h
  Call call(key, rank, backend, *pg);
  backend.reset_peak_memory();
  backend.reset_device_time();
  auto t0 = Clock::now();
  call.run();
  backend.synchronize();
  out.timing.first_us = us_since(t0);

  // The check: this rank's output against its golden.
  stage = "check";
  DType d = key.dtype;
  Tolerance base = default_tolerance(d);
  if (cfg.tolerances) base = cfg.tolerances->lookup(key, d, backend.profile());
  const Tolerance tol = coll_tolerance(key, base);
  out.rtol = tol.rtol;
  out.atol = tol.atol;
  out.tolerance_profile = tol.source;
  const at::Tensor actual = call.output();
  const at::Tensor golden = coll_golden(key, rank).contiguous();
  if (actual.numel() != golden.numel()) {
    out.status = Status::Fail;
    out.error = fmt::format("rank {}: output has {} elements, the golden {}", rank, actual.numel(), golden.numel());
  } else if (golden.numel() > 0) {
    const at::Tensor cast = golden.to(to_scalar_type(d)).to(at::kDouble).contiguous();
    Comparison cmp;
    cmp.add({"out" + std::to_string(rank), actual.data_ptr<double>(), golden.data_ptr<double>(),
             cast.data_ptr<double>(), golden.numel(), d},
            tol);
    out.metrics = cmp.metrics();
    if (out.metrics.mismatches > 0 || !out.metrics.nan_inf_ok) {
      out.status = Status::Fail;
      out.error = fmt::format("rank {}: {} of {} elements outside tolerance (rtol={:g}, atol={:g}), worst {}", rank,
                              out.metrics.mismatches, out.metrics.numel, tol.rtol, tol.atol, out.metrics.worst);
    }
  }

  // Note [Collective timing]: as nccl-tests measures: `warmup` untimed calls, then timed calls,
  // each waited for. Every rank must make the same calls, so rank 0 decides how many from its
  // first call (enough for min_time_ms, within [min_reps, max_reps]) and tells the others
  // through the store. time = the median call; algbw = bytes / time; busbw = algbw * the
  // collective's bus factor (coll_spec.h).
  stage = "timing";
  for (int i = 0; i < cfg.warmup; ++i) call.run();
  int reps = cfg.min_reps;
  if (rank == 0) {
    const double per_ms = std::max(out.timing.first_us / 1000, 1e-3);
    reps = std::clamp(static_cast<int>(std::ceil(cfg.min_time_ms / per_ms)), cfg.min_reps, cfg.max_reps);
    const std::string text = std::to_string(reps);
    store->set("gauntlet/reps", std::vector<std::uint8_t>(text.begin(), text.end()));
  } else {
    const auto v = store->get("gauntlet/reps");
    reps = std::stoi(std::string(v.begin(), v.end()));
  }
  backend.reset_device_time();
  std::vector<double> samples;
  for (int i = 0; i < reps; ++i) {
    auto t = Clock::now();
    call.run();
    backend.synchronize();
    samples.push_back(us_since(t));
  }
  if (auto sim = backend.device_time_us()) out.sim_time_us = *sim / reps;
  record_repetitions(out.timing, std::move(samples));
  out.peak_mem_bytes = memory_baseline.peak_above(backend);
  const double seconds = (out.sim_time_us ? *out.sim_time_us : out.timing.median_us) / 1e6;
  if (key.target != "barrier" && seconds > 0) {
    out.algbw_gbps = call.bytes() / seconds / 1e9;
    out.busbw_gbps = *out.algbw_gbps * find_coll(key.target)->bus_factor(key.world);
  }
  // Leave together: a rank that exits while another still reads from it makes that one fail.
  // The Gloo barrier first (every collective call done everywhere), then one through the store,
  // so that no rank closes its connections while another is still inside the barrier.
  stage = "exit barrier";
  pg->barrier()->wait();
  const auto exit_start = Clock::now();
  store->add("gauntlet/left", 1);
  while (store->add("gauntlet/left", 0) < key.world) {
    if (Clock::now() - exit_start > timeout) throw std::runtime_error("the other ranks did not reach the exit barrier");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stage = "done";
}

}  // namespace

Outcome run_rank(const CaseKey& key, int rank, int port, Backend& backend, const RankConfig& cfg) {
  Outcome out;
  out.key = key.str();
  out.golden_source = "computed";
  const char* stage = "set-up";
  try {
    if (auto problem = validate_coll_key(key)) throw std::invalid_argument("invalid case: " + *problem);
    if (rank < 0 || rank >= key.world)
      throw std::invalid_argument(fmt::format("rank {} is not in 0 .. {}", rank, key.world - 1));
    run_checked(key, rank, port, backend, cfg, out, stage);
  } catch (const c10::NotImplementedError& e) {
    out.status = Status::Unsupported;
    out.error = fmt::format("rank {} ({}): {}", rank, stage, e.what_without_backtrace());
  } catch (const c10::Error& e) {
    out.status = classify(e.what_without_backtrace());
    out.error = fmt::format("rank {} ({}): {}", rank, stage, e.what_without_backtrace());
  } catch (const std::exception& e) {
    out.status = classify(e.what());
    out.error = fmt::format("rank {} ({}): {}", rank, stage, e.what());
  }
  return out;
}

void describe_options(OptionSink& s, RankOptions& o) {
  s.option("--key", o.key, "the collective case").required();
  s.option("--rank", o.rank, "this rank").required();
  s.option("--port", o.port, "the group's store on 127.0.0.1").required();
  describe_backend(s, o.backend).show_default();
  s.option("--suites-dir", o.suites_dir, "where tolerances.yaml lives");
  s.option("--store-timeout", o.store_timeout, "seconds to wait for the other ranks").show_default();
  s.option("--startup-timeout", o.startup_timeout, "seconds for every rank of the group to start").show_default();
}

std::string rank_process(const RankOptions& o) {
  // If the launcher dies (killed at its own timeout, or the worker that ran it), so does the rank.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  prepare_process_for_cases();
  const CaseKey key = CaseKey::parse(o.key);
  const ToleranceTable tolerances = ToleranceTable::load(suites_dir_or_default(o.suites_dir) + "/tolerances.yaml");
  auto backend = make_backend(o.backend);
  RankConfig cfg;
  cfg.tolerances = &tolerances;
  cfg.store_timeout_s = o.store_timeout;
  cfg.startup_timeout_s = o.startup_timeout;
  return to_json_text(run_rank(key, o.rank, o.port, *backend, cfg));
}

}  // namespace gauntlet

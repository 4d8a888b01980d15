// The simulated device's process group (Note [Plugin process groups]): collectives on `sim`
// tensors between rank processes.
//
// Note [Simulated collectives]: data moves through host memory over a Gloo process group on the
// CPU (the transport); the arithmetic is the simulated device's: reductions (allreduce,
// reduce_scatter) run a ring in the tensor's own dtype, so a bf16 sum rounds each partial
// result, once per step, as a device that reduces in bf16 would (its error grows with the world
// size: Note [Collective tolerance] in the harness). Data movement (allgather, alltoall,
// broadcast, send/recv) is exact: payloads travel as raw bytes, whatever the dtype.
//
// Note [Collective cost]: simulated time follows the alpha-beta model with the link constants of
// trn2_constants.h: a message of b bytes costs alpha + b / beta; a ring allreduce of B bytes over
// w ranks takes 2 (w - 1) steps of B / w bytes, reduce_scatter and allgather (w - 1) steps,
// alltoall (w - 1) messages of B / w, broadcast (a pipelined ring) (w - 1) alpha + B / beta,
// send/recv one message, barrier 2 (w - 1) alpha. Deterministic, like every simulated time.
//
// Faults (fault_spec.h) reach collectives by the op names c10d::<call> with rank=: segv, abort
// and hang stop that rank at the call; bias adds to that rank's result (a wrong result on one
// rank); slow multiplies its simulated time; sleep sleeps.
#define GAUNTLET_GLOO  // the transport is a Gloo backend (Note [Gloo headers])
#include <ATen/ATen.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "fault_spec.h"
#include "gauntlet/plugin/torch_compat.h"
#include "state.h"
#include "trn2_constants.h"

namespace gauntlet::sim {

namespace {

// A finished piece of work: the simulated device runs collectives synchronously.
class DoneWork final : public c10d::Work {
 public:
  DoneWork() : c10d::Work(-1, c10d::OpType::UNKNOWN) { finish(); }
  bool wait(std::chrono::milliseconds) override { return true; }
};

// What the faults ask of this call, acting on those that stop it now.
struct CallFaults {
  double slowdown = 1;
  double bias = 0;
};

CallFaults faults_for(const std::string& op, const at::Tensor* t) {
  CallFaults f;
  const FaultSpec& spec = State::get().config().faults;
  if (spec.empty()) return f;
  const std::string dtype = t ? std::string(c10::toString(t->scalar_type())) : "";
  for (const FaultRule* r : spec.match(op, dtype, t ? t->numel() : 0)) {
    switch (r->kind) {
      case FaultKind::Segv:
        std::raise(SIGSEGV);
        break;
      case FaultKind::Abort:
        std::abort();
      case FaultKind::Hang:
        for (;;) pause();
      case FaultKind::Sleep:
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(r->factor));
        break;
      case FaultKind::Slow:
        f.slowdown *= r->factor;
        break;
      case FaultKind::Bias:
        f.bias += r->factor;
        break;
      default:
        break;  // the other kinds are about kernels
    }
  }
  return f;
}

double message_seconds(double bytes) { return trn2::kLinkLatencySeconds + bytes / trn2::kLinkBytesPerSec; }

at::Tensor as_bytes(const at::Tensor& t) {
  // Raw bytes of a contiguous CPU tensor: Gloo moves any dtype as uint8. A contiguous tensor's
  // elements are adjacent whatever the strides of its size-1 dims (a 1-element view of every
  // other element has stride 2 and is contiguous), so it is re-strided to 1 first.
  TORCH_INTERNAL_ASSERT(t.is_contiguous());
  return t.as_strided({t.numel()}, {1}, t.storage_offset()).view(at::kByte);
}

class SimProcessGroup final : public c10d::Backend {
 public:
  SimProcessGroup(c10::intrusive_ptr<c10d::Backend> transport, int rank, int size)
      : c10d::Backend(rank, size), net_(std::move(transport)) {}

  const std::string getBackendName() const override { return "gauntlet_sim"; }

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& o) override {
    at::Tensor& t = one(tensors, "allreduce");
    const CallFaults f = faults_for("c10d::allreduce", &t);
    at::Tensor buf = host(t);
    std::vector<at::Tensor> chunks = at::tensor_split(buf.view({-1}), size_);
    reduce_scatter_ring(chunks, o.reduceOp, /*shift=*/0);
    allgather_ring(chunks);
    finish_reduction(buf, o.reduceOp);
    charge(2.0 * (size_ - 1) * message_seconds(bytes(t) / size_), f);
    store_back(t, buf, f);
    return c10::make_intrusive<DoneWork>();
  }

  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& o) override {
    at::Tensor& out = one(outputs, "reduce_scatter");
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "gauntlet_sim: reduce_scatter takes one list of world-size inputs");
    const CallFaults f = faults_for("c10d::reduce_scatter", &out);
    std::vector<at::Tensor> chunks;
    for (const at::Tensor& in : inputs[0]) chunks.push_back(host(in).view({-1}));
    reduce_scatter_ring(chunks, o.reduceOp, /*shift=*/0);
    at::Tensor mine = chunks[static_cast<std::size_t>(rank_)];
    finish_reduction(mine, o.reduceOp);
    charge((size_ - 1) * message_seconds(bytes(out)), f);
    store_back(out, mine.view(out.sizes()), f);
    return c10::make_intrusive<DoneWork>();
  }

  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions&) override {
    at::Tensor& in = one(inputs, "allgather");
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "gauntlet_sim: allgather takes one list of world-size outputs");
    const CallFaults f = faults_for("c10d::allgather", &in);
    std::vector<at::Tensor> parts(static_cast<std::size_t>(size_));
    for (int i = 0; i < size_; ++i) parts[static_cast<std::size_t>(i)] = at::empty_like(host(in));
    parts[static_cast<std::size_t>(rank_)] = host(in);
    std::vector<at::Tensor> flat;
    for (auto& p : parts) flat.push_back(p.view({-1}));
    allgather_ring(flat);
    charge((size_ - 1) * message_seconds(bytes(in)), f);
    for (int i = 0; i < size_; ++i)
      store_back(outputs[0][static_cast<std::size_t>(i)], parts[static_cast<std::size_t>(i)], f);
    return c10::make_intrusive<DoneWork>();
  }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& o) override {
    at::Tensor& t = one(tensors, "broadcast");
    const CallFaults f = faults_for("c10d::broadcast", &t);
    at::Tensor buf = host(t);
    std::vector<at::Tensor> b{as_bytes(buf)};
    c10d::BroadcastOptions bo;
    bo.rootRank = o.rootRank;
    net_->broadcast(b, bo)->wait();
    charge((size_ - 1) * trn2::kLinkLatencySeconds + bytes(t) / trn2::kLinkBytesPerSec, f);
    store_back(t, buf, f);
    return c10::make_intrusive<DoneWork>();
  }

  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& out_splits,
                                               std::vector<int64_t>& in_splits, const c10d::AllToAllOptions&) override {
    const CallFaults f = faults_for("c10d::alltoall_base", &input);
    at::Tensor in = host(input), out = at::empty_like(host(output));
    const std::int64_t esize = input.element_size();
    std::vector<int64_t> ib, ob;
    for (auto s : in_splits) ib.push_back(s * esize);
    for (auto s : out_splits) ob.push_back(s * esize);
    at::Tensor ibytes = as_bytes(in), obytes = as_bytes(out);
    net_->alltoall_base(obytes, ibytes, ob, ib)->wait();
    charge((size_ - 1) * message_seconds(bytes(input) / size_), f);
    store_back(output, out, f);
    return c10::make_intrusive<DoneWork>();
  }

  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& o) override {
    const CallFaults f = faults_for("c10d::barrier", nullptr);
    net_->barrier(o)->wait();
    charge(2.0 * (size_ - 1) * trn2::kLinkLatencySeconds, f);
    return c10::make_intrusive<DoneWork>();
  }

  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override {
    at::Tensor& t = one(tensors, "send");
    const CallFaults f = faults_for("c10d::send", &t);
    std::vector<at::Tensor> b{as_bytes(host(t))};
    auto sent = net_->send(b, dst, tag);  // completes when the peer receives
    charge(message_seconds(bytes(t)), f);
    return c10::make_intrusive<SendWork>(std::move(sent));
  }

  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override {
    at::Tensor& t = one(tensors, "recv");
    const CallFaults f = faults_for("c10d::recv", &t);
    at::Tensor buf = at::empty_like(host(t));
    std::vector<at::Tensor> b{as_bytes(buf)};
    net_->recv(b, src, tag)->wait();
    store_back(t, buf, f);
    return c10::make_intrusive<DoneWork>();
  }

 private:
  // Waits for a send when asked: the peer's recv may come after this rank's own recv.
  class SendWork final : public c10d::Work {
   public:
    explicit SendWork(c10::intrusive_ptr<c10d::Work> w) : c10d::Work(-1, c10d::OpType::SEND), w_(std::move(w)) {}
    bool wait(std::chrono::milliseconds timeout) override { return w_->wait(timeout); }

   private:
    c10::intrusive_ptr<c10d::Work> w_;
  };

  static at::Tensor& one(std::vector<at::Tensor>& ts, const char* call) {
    TORCH_CHECK(ts.size() == 1, "gauntlet_sim: ", call, " takes one tensor per rank");
    return ts[0];
  }

  // The device tensor's values in host memory, contiguous (the simulator's memory is host memory;
  // the copy is the DMA a real device would make).
  static at::Tensor host(const at::Tensor& t) { return t.to(at::kCPU).contiguous(); }
  static double bytes(const at::Tensor& t) {
    return static_cast<double>(t.numel()) * static_cast<double>(t.element_size());
  }

  void charge(double seconds, const CallFaults& f) { State::get().charge_seconds(seconds * f.slowdown); }

  // Writes the result into the device tensor, with an injected bias when asked.
  static void store_back(at::Tensor& dst, at::Tensor src, const CallFaults& f) {
    if (f.bias != 0 && src.numel() > 0) {
      src = src.clone();
      if (at::isFloatingType(src.scalar_type())) {
        src.add_(f.bias * std::max(1.0, src.abs().max().item<double>()));
      } else {
        src.add_(1);
      }
    }
    dst.copy_(src.view(dst.sizes()));
  }

  // Ring reduce-scatter in the chunks' dtype: after w - 1 steps, chunk r holds the reduction of
  // every rank's chunk r. Step s: send chunk (r - s - 1), receive the partial of chunk (r - s - 2)
  // from rank r - 1 and reduce it into ours.
  void reduce_scatter_ring(std::vector<at::Tensor>& chunks, c10d::ReduceOp op, int shift) {
    const int w = size_, r = rank_;
    auto at_ = [&](int i) -> at::Tensor& { return chunks[static_cast<std::size_t>(((i + shift) % w + w) % w)]; };
    for (int s = 0; s < w - 1; ++s) {
      at::Tensor& out = at_(r - s - 1);
      at::Tensor& mine = at_(r - s - 2);
      at::Tensor incoming = at::empty_like(mine);
      exchange(out, incoming);
      reduce_into(mine, incoming, op);
    }
  }

  // Ring allgather: rank r holds chunk r; step s sends chunk (r - s), receives chunk (r - s - 1).
  void allgather_ring(std::vector<at::Tensor>& chunks) {
    const int w = size_, r = rank_;
    auto at_ = [&](int i) -> at::Tensor& { return chunks[static_cast<std::size_t>((i % w + w) % w)]; };
    for (int s = 0; s < w - 1; ++s) {
      at::Tensor incoming = at::empty_like(at_(r - s - 1));
      exchange(at_(r - s), incoming);
      at_(r - s - 1).copy_(incoming);
    }
  }

  // Sends `out` to the next rank and receives `in` from the previous one (both in flight at once).
  void exchange(const at::Tensor& out, at::Tensor& in) {
    const int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
    std::vector<at::Tensor> s{as_bytes(out.contiguous())}, rv{as_bytes(in)};
    c10::intrusive_ptr<c10d::Work> sent, received;
    if (out.numel() > 0) sent = net_->send(s, next, tag_);
    if (in.numel() > 0) received = net_->recv(rv, prev, tag_);
    if (received) received->wait();
    if (sent) sent->wait();
    ++tag_;
  }

  // mine = mine (op) incoming, computed in their dtype (a bf16 sum rounds to bf16).
  static void reduce_into(at::Tensor& mine, const at::Tensor& incoming, c10d::ReduceOp op) {
    if (op == c10d::ReduceOp::SUM || op == c10d::ReduceOp::AVG) {
      mine.add_(incoming);
    } else if (op == c10d::ReduceOp::PRODUCT) {
      mine.mul_(incoming);
    } else if (op == c10d::ReduceOp::MAX) {
      mine.copy_(at::maximum(mine, incoming));
    } else if (op == c10d::ReduceOp::MIN) {
      mine.copy_(at::minimum(mine, incoming));
    } else {
      TORCH_CHECK_NOT_IMPLEMENTED(false, "gauntlet_sim does not support this reduce op");
    }
  }

  void finish_reduction(at::Tensor& t, c10d::ReduceOp op) const {
    if (op == c10d::ReduceOp::AVG) t.div_(size_);
  }

  c10::intrusive_ptr<c10d::Backend> net_;
  int tag_ = 1000;
};

}  // namespace

}  // namespace gauntlet::sim

extern "C" __attribute__((visibility("default"))) void* gauntlet_backend_new_process_group(void* store, int rank,
                                                                                           int world, int timeout_ms) {
  using namespace gauntlet::sim;
  set_process_rank(rank);
  auto s = c10::intrusive_ptr<c10d::Store>::unsafe_reclaim_from_nonowning(static_cast<c10d::Store*>(store));
  auto transport = gauntlet::compat::make_gloo_backend(s, rank, world, std::chrono::milliseconds(timeout_ms));
  return c10::make_intrusive<SimProcessGroup>(std::move(transport), rank, world).release();
}

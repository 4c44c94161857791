// `parasol allreduce-bench`: every allreduce algorithm side by side with MPI_Allreduce in one run,
// a table like nccl-tests (median time per call, algorithm and bus bandwidth).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/collective/topology.h"
#include "parasol/comm/context.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/stats.h"
#include "parasol/core/units.h"
#include "tools/command.h"

namespace parasol::tools {
namespace {

using collective::AllreduceAlgorithm;

struct Candidate {
  std::string name;
  std::optional<AllreduceAlgorithm> algo;  // nullopt: MPI_Allreduce
};

MPI_Datatype MpiType(DType t) {
  switch (t) {
    case DType::kFloat32: return MPI_FLOAT;
    case DType::kFloat64: return MPI_DOUBLE;
    case DType::kInt32: return MPI_INT32_T;
    case DType::kInt64: return MPI_INT64_T;
  }
  return MPI_BYTE;
}

MPI_Op MpiOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kProduct: return MPI_PROD;
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kMax: return MPI_MAX;
  }
  return MPI_SUM;
}

class AllreduceBench : public Command {
 public:
  explicit AllreduceBench(CLI::App& parent) {
    app_ = parent.add_subcommand("allreduce-bench",
                                 "Benchmark allreduce algorithms against MPI_Allreduce (run under mpirun)");
    app_->add_option(
            "--algos", algos_,
            "Comma-separated: ring, halving-doubling, torus2d, multiring, treepack, ft-mesh, auto, mpi")
        ->capture_default_str();
    app_->add_option("--sizes", sizes_, "Comma-separated message sizes in bytes (8, 4K, 64K, 1M, 256M, ...)")
        ->capture_default_str();
    app_->add_option("--iters", iters_, "Timed samples per size and algorithm (the median is reported)")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app_->add_option("--warmup", warmup_, "Untimed calls first (the first one is checked)")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app_->add_option("--dtype", dtype_, "float32, float64, int32 or int64")->capture_default_str();
    app_->add_option("--op", op_, "sum, product, min or max")->capture_default_str();
    app_->add_option("--segment-bytes", segment_, "Pipelining segment size (0: each algorithm's default)");
    app_->add_option("--rings", rings_, "Rings for multiring")
        ->check(CLI::Range(1, 32))
        ->capture_default_str();
    app_->add_option("--topology", topology_,
                     "Topology for treepack/ft-mesh (e.g. mesh:2x2); default fully connected");
    app_->add_option("--timeout-ms", timeout_ms_, "Deadline per call")
        ->check(CLI::Range(1, 86400000))
        ->capture_default_str();
    app_->add_option("--csv", csv_, "Write algo,ranks,bytes,time_us,algbw_gbps,busbw_gbps to this file");
    app_->add_flag("--in-place", in_place_,
                   "Reduce in place (input buffer = output buffer) instead of out of place");
  }

  bool NeedsMpi() const override { return true; }
  comm::MpiStart MpiStartAlone() const override { return comm::MpiStart::kAlways; }  // MPI_Allreduce too

  int Run(comm::MpiRuntime* mpi) override {
    comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = std::chrono::milliseconds(timeout_ms_)});
    Setup(ctx);
    std::unique_ptr<CsvWriter> csv;
    if (!csv_.empty() && ctx.rank() == 0) {
      csv = std::make_unique<CsvWriter>(
          csv_, std::vector<std::string>{"algo", "ranks", "bytes", "time_us", "algbw_gbps", "busbw_gbps"});
    }
    if (ctx.rank() == 0) {
      std::cout
          << fmt::format(
                 "# parasol allreduce-bench: {} ranks, {}, {}; median of {} samples after {} warm-up calls\n",
                 ctx.size(), DTypeName(dtype_value_), ReduceOpName(op_value_), iters_, warmup_)
          << fmt::format("# {:>10} {:>11} {:>8} {:<17} {:>11} {:>11} {:>11} {:>8}\n", "size(B)", "count",
                         "type", "algo", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "vs-mpi");
    }
    for (uint64_t bytes : size_values_) BenchSize(ctx, bytes, csv.get());
    if (csv) csv->Commit();
    return 0;
  }

 private:
  void Setup(comm::Context& ctx) {
    dtype_value_ = ParseDType(dtype_);
    op_value_ = ParseReduceOp(op_);
    for (const auto& s : SplitList(sizes_, "--sizes")) {
      uint64_t b = ParseBytes(s, "--sizes");
      if (b % DTypeSize(dtype_value_) != 0) {
        throw InvalidArgumentError(fmt::format("--sizes: {} bytes is not a whole number of {} elements", b,
                                               DTypeName(dtype_value_)));
      }
      size_values_.push_back(b);
    }
    for (const auto& a : SplitList(algos_, "--algos")) {
      if (a == "mpi")
        candidates_.push_back({"mpi", std::nullopt});
      else
        candidates_.push_back({a, collective::ParseAllreduceAlgorithm(a)});
    }
    if (!topology_.empty()) {
      topology_value_ = std::make_shared<collective::Topology>(collective::Topology::Parse(topology_));
      if (topology_value_->num_ranks() != ctx.size()) {
        throw InvalidArgumentError(fmt::format("--topology {} has {} ranks, the job has {}", topology_,
                                               topology_value_->num_ranks(), ctx.size()));
      }
    }
    uint64_t max_bytes = *std::max_element(size_values_.begin(), size_values_.end());
    in_.resize(max_bytes / 8 + 1);
    out_.resize(max_bytes / 8 + 1);
  }

  void Call(comm::Context& ctx, const Candidate& c, size_t count) {
    if (!c.algo) {
      int rc = MPI_Allreduce(in_place_ ? MPI_IN_PLACE : in_.data(), out_.data(), static_cast<int>(count),
                             MpiType(dtype_value_), MpiOp(op_value_), MPI_COMM_WORLD);
      if (rc != MPI_SUCCESS) throw InternalError("MPI_Allreduce failed");
      return;
    }
    collective::AllreduceOptions o;
    o.algorithm = *c.algo;
    o.op = op_value_;
    o.segment_bytes = segment_;
    o.rings = rings_;
    o.topology = topology_value_;
    collective::Allreduce(ctx, in_place_ ? out_.data() : in_.data(), out_.data(), count, dtype_value_, o);
  }

  // Every rank holds rank+1 everywhere: the sum is n(n+1)/2, exact in every type. In place, the
  // output holds the input before a checked call (timed calls just keep reducing their result).
  void Fill(comm::Context& ctx, size_t count) {
    auto* p = reinterpret_cast<std::byte*>(in_place_ ? out_.data() : in_.data());
    for (size_t i = 0; i < count; ++i) Store(p, i, static_cast<double>(ctx.rank() + 1));
  }
  void Store(std::byte* p, size_t i, double v) const {
    switch (dtype_value_) {
      case DType::kFloat32: {
        float f = static_cast<float>(v);
        std::memcpy(p + 4 * i, &f, 4);
        break;
      }
      case DType::kFloat64: std::memcpy(p + 8 * i, &v, 8); break;
      case DType::kInt32: {
        int32_t x = static_cast<int32_t>(v);
        std::memcpy(p + 4 * i, &x, 4);
        break;
      }
      case DType::kInt64: {
        int64_t x = static_cast<int64_t>(v);
        std::memcpy(p + 8 * i, &x, 8);
        break;
      }
    }
  }

  void Check(comm::Context& ctx, const Candidate& c, size_t count) {
    if (op_value_ != ReduceOp::kSum || count == 0) return;
    std::vector<std::byte> want(DTypeSize(dtype_value_));
    double n = ctx.size();
    Store(want.data(), 0, n * (n + 1) / 2);
    const auto* got = reinterpret_cast<const std::byte*>(out_.data());
    for (size_t i : {size_t{0}, count / 2, count - 1}) {
      if (std::memcmp(got + i * want.size(), want.data(), want.size()) != 0) {
        throw InternalError(
            fmt::format("rank {}: {} gave a wrong result at element {} of {}", ctx.rank(), c.name, i, count));
      }
    }
  }

  // Calls per timed sample: enough that one sample lasts well above the clock's resolution.
  static int Batch(uint64_t bytes) {
    return static_cast<int>(std::clamp<uint64_t>((1u << 20) / std::max<uint64_t>(bytes, 1), 1, 200));
  }

  void BenchSize(comm::Context& ctx, uint64_t bytes, CsvWriter* csv) {
    const size_t count = bytes / DTypeSize(dtype_value_);
    Fill(ctx, count);
    for (const auto& c : candidates_) {
      for (int w = 0; w < warmup_; ++w) {
        if (w == 0 && in_place_) Fill(ctx, count);
        Call(ctx, c, count);
        if (w == 0) Check(ctx, c, count);
      }
    }
    const int batch = Batch(bytes);
    // Samples alternate between candidates so they see the same machine noise, and the first
    // candidate rotates so none always runs right after another.
    std::vector<std::vector<double>> samples(candidates_.size(),
                                             std::vector<double>(static_cast<size_t>(iters_)));
    for (int s = 0; s < iters_; ++s) {
      for (size_t turn = 0; turn < candidates_.size(); ++turn) {
        size_t c = (turn + static_cast<size_t>(s)) % candidates_.size();
        MPI_Barrier(MPI_COMM_WORLD);
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < batch; ++k) Call(ctx, candidates_[c], count);
        std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
        samples[c][static_cast<size_t>(s)] = dt.count() / batch;
      }
    }
    std::vector<double> medians;
    for (auto& v : samples) {  // a sample lasts as long as its slowest rank
      MPI_Allreduce(MPI_IN_PLACE, v.data(), iters_, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      medians.push_back(Median(v));
    }
    if (ctx.rank() != 0) return;
    const double n = ctx.size();
    std::optional<double> mpi_busbw;
    for (size_t c = 0; c < candidates_.size(); ++c) {
      if (!candidates_[c].algo) mpi_busbw = static_cast<double>(bytes) / medians[c] / 1e9 * 2 * (n - 1) / n;
    }
    for (size_t c = 0; c < candidates_.size(); ++c) {
      double algbw = static_cast<double>(bytes) / medians[c] / 1e9;
      double busbw = algbw * 2 * (n - 1) / n;
      std::string vs = mpi_busbw && *mpi_busbw > 0 ? fmt::format("{:.2f}", busbw / *mpi_busbw) : "-";
      std::cout << fmt::format("  {:>10} {:>11} {:>8} {:<17} {:>11.2f} {:>11.3f} {:>11.3f} {:>8}\n", bytes,
                               count, DTypeName(dtype_value_), candidates_[c].name, medians[c] * 1e6, algbw,
                               busbw, vs);
      if (csv) {
        csv->Row({candidates_[c].name, fmt::format("{}", ctx.size()), fmt::format("{}", bytes),
                  fmt::format("{:.3f}", medians[c] * 1e6), fmt::format("{:.4f}", algbw),
                  fmt::format("{:.4f}", busbw)});
      }
    }
    std::cout.flush();
  }

  std::string algos_ = "ring,halving-doubling,torus2d,multiring,treepack,mpi";
  std::string sizes_ = "8,4K,64K,1M,16M,64M";
  int iters_ = 20;
  int warmup_ = 3;
  std::string dtype_ = "float32";
  std::string op_ = "sum";
  uint64_t segment_ = 0;
  int rings_ = 2;
  std::string topology_;
  int64_t timeout_ms_ = 60000;
  std::string csv_;
  bool in_place_ = false;

  DType dtype_value_ = DType::kFloat32;
  ReduceOp op_value_ = ReduceOp::kSum;
  std::vector<uint64_t> size_values_;
  std::vector<Candidate> candidates_;
  std::shared_ptr<const collective::Topology> topology_value_;
  std::vector<double> in_, out_;  // double: 8-byte aligned for every dtype
};

}  // namespace

std::unique_ptr<Command> MakeAllreduceBench(CLI::App& parent) {
  return std::make_unique<AllreduceBench>(parent);
}

}  // namespace parasol::tools

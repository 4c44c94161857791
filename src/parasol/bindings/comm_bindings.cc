// parasol._parasol: the World (MPI and the job's context) and the collective library on tensors.
#include <cstdio>

#include <fmt/format.h>
#include <mpi.h>
#include <torch/extension.h>

#include "parasol/bindings/world.h"
#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"

namespace py = pybind11;

namespace parasol::bindings {

World::World(std::chrono::milliseconds timeout_ms) : timeout_ms_(timeout_ms) {
  if (timeout_ms.count() <= 0) throw InvalidArgumentError("timeout_ms must be positive");
  runtime_ = std::make_unique<comm::MpiRuntime>(nullptr, nullptr);
  ctx_ = std::make_unique<comm::Context>(runtime_->CreateWorldTransport(),
                                         comm::ContextOptions{.timeout_ms = timeout_ms});
  rank_ = ctx_->rank();
  size_ = ctx_->size();
  // The ranks on this node: for choosing a device or a share of the cores.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

World::~World() { Close(); }

void World::set_timeout_ms(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) throw InvalidArgumentError("timeout_ms must be positive");
  timeout_ms_ = timeout;
  ctx().set_timeout(timeout);
}

comm::Context& World::ctx() {
  if (!ctx_) throw UnavailableError("parasol is shut down (parasol.shutdown() ran)");
  return *ctx_;
}

void World::Close() {
  if (failed_ && runtime_ && size_ > 1) {
    std::fflush(nullptr);
    runtime_->Abort(1);
  }
  ctx_.reset();
  runtime_.reset();
}

bool World::IsCommunicationFailure(const Error& e) {
  switch (e.code()) {
    case ErrorCode::kTimeout:
    case ErrorCode::kPeerGone:
    case ErrorCode::kMismatch:
    case ErrorCode::kAborted: return true;
    default: return false;
  }
}

namespace {

DType DTypeOf(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat32: return DType::kFloat32;
    case torch::kFloat64: return DType::kFloat64;
    case torch::kInt32: return DType::kInt32;
    case torch::kInt64: return DType::kInt64;
    default:
      throw InvalidArgumentError(
          fmt::format("tensors of {} cannot be communicated: float32, float64, int32 or int64",
                      std::string(c10::toString(t.scalar_type()))));
  }
}

// The collectives work on contiguous CPU memory: a tensor that is not gets a contiguous copy.
torch::Tensor Dense(const torch::Tensor& t) {
  if (!t.device().is_cpu())
    throw InvalidArgumentError("parasol communicates CPU tensors (move it with .cpu())");
  return t.contiguous();
}

std::chrono::milliseconds Ms(int64_t ms) { return std::chrono::milliseconds(ms); }

// out = op over ranks of t ("avg": the sum divided by the number of ranks).
torch::Tensor Allreduce(World& w, const torch::Tensor& t, const std::string& op, const std::string& algorithm,
                        int64_t timeout_ms) {
  torch::Tensor in = Dense(t);
  torch::Tensor out = torch::empty_like(in);
  collective::AllreduceOptions o{.op = op == "avg" ? ReduceOp::kSum : ParseReduceOp(op),
                                 .algorithm = collective::ParseAllreduceAlgorithm(algorithm),
                                 .timeout_ms = Ms(timeout_ms)};
  {
    py::gil_scoped_release release;
    w.Guard([&] {
      collective::Allreduce(w.ctx(), in.data_ptr(), out.data_ptr(), static_cast<size_t>(in.numel()),
                            DTypeOf(in), o);
    });
  }
  if (op == "avg") out.div_(w.size());
  return out;
}

// Writes the root's values into t on every rank (t itself when it is contiguous).
torch::Tensor Broadcast(World& w, torch::Tensor t, int root, int64_t timeout_ms) {
  torch::Tensor buf = Dense(t);
  if (root < 0 || root >= w.size())
    throw InvalidArgumentError(fmt::format("root {} is not a rank of {}", root, w.size()));
  {
    py::gil_scoped_release release;
    w.Guard([&] {
      collective::Broadcast(w.ctx(), buf.data_ptr(), static_cast<size_t>(buf.numel()), DTypeOf(buf),
                            {.root = root, .timeout_ms = Ms(timeout_ms)});
    });
  }
  if (!buf.is_same(t)) t.copy_(buf);
  return t;
}

// Every rank's tensor (same shape everywhere), concatenated along the first dimension in rank order.
torch::Tensor Allgather(World& w, const torch::Tensor& t, int64_t timeout_ms) {
  torch::Tensor in = Dense(t);
  std::vector<int64_t> shape = in.sizes().vec();
  if (shape.empty()) shape.push_back(1);
  shape[0] *= w.size();
  torch::Tensor out = torch::empty(shape, in.options());
  py::gil_scoped_release release;
  w.Guard([&] {
    collective::Allgather(w.ctx(), in.data_ptr(), out.data_ptr(), static_cast<size_t>(in.numel()),
                          DTypeOf(in), {.timeout_ms = Ms(timeout_ms)});
  });
  return out;
}

// The first dimension cut into size equal blocks: block d goes to rank d, which keeps it at block
// `rank` of its result.
torch::Tensor Alltoall(World& w, const torch::Tensor& t, int64_t timeout_ms) {
  torch::Tensor in = Dense(t);
  if (in.dim() == 0 || in.size(0) % w.size() != 0) {
    throw InvalidArgumentError(
        fmt::format("alltoall: the first dimension ({}) must divide into {} equal blocks",
                    in.dim() == 0 ? 0 : in.size(0), w.size()));
  }
  torch::Tensor out = torch::empty_like(in);
  py::gil_scoped_release release;
  w.Guard([&] {
    collective::Alltoall(w.ctx(), in.data_ptr(), out.data_ptr(), static_cast<size_t>(in.numel() / w.size()),
                         DTypeOf(in), {.timeout_ms = Ms(timeout_ms)});
  });
  return out;
}

}  // namespace

void RegisterComm(py::module_& m) {
  py::class_<World, std::shared_ptr<World>>(m, "World")
      .def(py::init([](int64_t timeout_ms) { return std::make_shared<World>(Ms(timeout_ms)); }),
           py::arg("timeout_ms") = 60000)
      .def_property_readonly("rank", &World::rank)
      .def_property_readonly("size", &World::size)
      .def_property_readonly("local_rank", &World::local_rank)
      .def_property_readonly("local_size", &World::local_size)
      .def_property_readonly("closed", &World::closed)
      .def_property(
          "timeout_ms", [](World& w) { return w.timeout_ms().count(); },
          [](World& w, int64_t ms) { w.set_timeout_ms(Ms(ms)); })
      .def("close", &World::Close)
      .def("allreduce", &Allreduce, py::arg("tensor"), py::arg("op") = "sum", py::arg("algorithm") = "auto",
           py::arg("timeout_ms") = 0)
      .def("broadcast", &Broadcast, py::arg("tensor"), py::arg("root") = 0, py::arg("timeout_ms") = 0)
      .def("allgather", &Allgather, py::arg("tensor"), py::arg("timeout_ms") = 0)
      .def("alltoall", &Alltoall, py::arg("tensor"), py::arg("timeout_ms") = 0)
      .def(
          "barrier",
          [](World& w, int64_t timeout_ms) {
            py::gil_scoped_release release;
            w.Guard([&] { collective::Barrier(w.ctx(), Ms(timeout_ms)); });
          },
          py::arg("timeout_ms") = 0);
}

}  // namespace parasol::bindings

// parasol._parasol.ParameterServer: the parameter server from Python, one worker per process (the
// Python thread), dense rows of float32 or float64 read as tensors, any consistency model.
#include <map>

#include <fmt/format.h>
#include <torch/extension.h>

#include "parasol/bindings/world.h"
#include "parasol/core/error.h"
#include "parasol/ps/parameter_server.h"
#include "parasol/ps/worker.h"

namespace py = pybind11;

namespace parasol::bindings {
namespace {

class PyParameterServer {
 public:
  PyParameterServer(std::shared_ptr<World> world, int64_t timeout_ms) : world_(std::move(world)) {
    const auto timeout =
        std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms : world_->timeout_ms().count());
    comm::Context& ctx = world_->ctx();
    py::gil_scoped_release release;
    ps_ = std::make_unique<ps::ParameterServer>(
        ctx, ps::PsOptions{.workers_per_process = 1, .timeout_ms = timeout});
  }
  ~PyParameterServer() { Close(); }

  // Collective: every process creates the same tables in the same order, before its first read.
  void CreateTable(uint32_t id, uint64_t width, uint64_t rows, const std::string& consistency,
                   const std::string& dtype, const std::string& reads) {
    if (worker_) throw InvalidArgumentError("create every table before the first read, update or clock");
    if (dtype != "float32" && dtype != "float64")
      throw InvalidArgumentError("dtype '" + dtype + "': float32 or float64");
    if (reads != "two-sided" && reads != "one-sided")
      throw InvalidArgumentError("reads '" + reads + "': two-sided or one-sided");
    const bool one_sided = reads == "one-sided";
    const ps::ConsistencySpec spec = ps::ParseConsistencySpec(consistency);
    const ps::TableConfig config{
        .id = id,
        .kind = ps::RowKind::kDense,
        .dtype = dtype == "float32" ? DType::kFloat32 : DType::kFloat64,
        .width = width,
        .num_rows = rows,
        .consistency = spec.model,
        .staleness = spec.staleness,
        .vap_threshold = spec.vap_threshold,
        .partitioning = one_sided ? ps::Partitioning::kRange : ps::Partitioning::kHash,
        .one_sided_reads = one_sided};
    py::gil_scoped_release release;
    server().CreateTable(config);
    dtypes_[id] = config.dtype;
  }

  torch::Tensor Get(uint32_t table, const std::vector<uint64_t>& rows) {
    const DType dtype = DTypeOf(table);
    ps::Worker& w = worker();
    const auto width = static_cast<int64_t>(Width(table));
    torch::Tensor out = torch::empty({static_cast<int64_t>(rows.size()), width},
                                     dtype == DType::kFloat32 ? torch::kFloat32 : torch::kFloat64);
    py::gil_scoped_release release;
    world_->Guard([&] {
      if (dtype == DType::kFloat32) {
        Read<float>(w, table, rows, out);
      } else {
        Read<double>(w, table, rows, out);
      }
    });
    return out;
  }

  // Adds deltas (rows x width, or one row of width) to the given rows.
  void Inc(uint32_t table, const std::vector<uint64_t>& rows, const torch::Tensor& deltas) {
    const DType dtype = DTypeOf(table);
    const auto width = static_cast<int64_t>(Width(table));
    torch::Tensor d = deltas.to(dtype == DType::kFloat32 ? torch::kFloat32 : torch::kFloat64).contiguous();
    if (d.dim() == 1) d = d.unsqueeze(0);
    if (d.dim() != 2 || d.size(0) != static_cast<int64_t>(rows.size()) || d.size(1) != width) {
      throw InvalidArgumentError(fmt::format("inc: {} rows of width {} need deltas of shape [{}, {}]",
                                             rows.size(), width, rows.size(), width));
    }
    ps::Worker& w = worker();
    if (dtype == DType::kFloat32) {
      Write<float>(w, table, rows, d);
    } else {
      Write<double>(w, table, rows, d);
    }
  }

  void Clock() {
    ps::Worker& w = worker();
    py::gil_scoped_release release;
    world_->Guard([&] { w.Clock(); });
  }
  uint64_t clock() { return worker().clock(); }
  void GlobalBarrier() {
    ps::Worker& w = worker();
    py::gil_scoped_release release;
    world_->Guard([&] { w.GlobalBarrier(); });
  }
  double wait_seconds() { return worker().wait_seconds(); }

  // Collective: waits for every process, then stops the server.
  void Close() {
    if (!ps_) return;
    py::gil_scoped_release release;
    worker_.reset();
    if (!world_->failed()) world_->Guard([&] { ps_->Shutdown(); });
    ps_.reset();
  }

 private:
  ps::ParameterServer& server() {
    if (!ps_) throw UnavailableError("the parameter server is shut down");
    return *ps_;
  }
  ps::Worker& worker() {
    if (!worker_) worker_ = server().CreateWorker(0);
    return *worker_;
  }
  DType DTypeOf(uint32_t table) const {
    auto it = dtypes_.find(table);
    if (it == dtypes_.end()) throw InvalidArgumentError(fmt::format("no table {}", table));
    return it->second;
  }
  uint64_t Width(uint32_t table) {
    return DTypeOf(table) == DType::kFloat32 ? worker().GetTable<float>(table).config().width
                                             : worker().GetTable<double>(table).config().width;
  }
  template <typename V>
  static void Read(ps::Worker& w, uint32_t table, const std::vector<uint64_t>& rows, torch::Tensor& out) {
    auto t = w.GetTable<V>(table);
    t.Prefetch(rows);
    V* o = out.data_ptr<V>();
    const auto width = static_cast<size_t>(out.size(1));
    for (size_t i = 0; i < rows.size(); ++i) t.Get(rows[i]).CopyTo(std::span<V>(o + i * width, width));
  }
  template <typename V>
  static void Write(ps::Worker& w, uint32_t table, const std::vector<uint64_t>& rows,
                    const torch::Tensor& d) {
    auto t = w.GetTable<V>(table);
    const V* p = d.data_ptr<V>();
    const auto width = static_cast<size_t>(d.size(1));
    for (size_t i = 0; i < rows.size(); ++i) t.IncRow(rows[i], std::span<const V>(p + i * width, width));
  }

  std::shared_ptr<World> world_;  // MPI outlives the server
  std::unique_ptr<ps::ParameterServer> ps_;
  std::unique_ptr<ps::Worker> worker_;
  std::map<uint32_t, DType> dtypes_;
};

}  // namespace

void RegisterPs(py::module_& m) {
  py::class_<PyParameterServer>(m, "ParameterServer")
      .def(py::init<std::shared_ptr<World>, int64_t>(), py::arg("world"), py::arg("timeout_ms") = 0)
      .def("create_table", &PyParameterServer::CreateTable, py::arg("id"), py::arg("width"), py::arg("rows"),
           py::arg("consistency") = "ssp:0", py::arg("dtype") = "float32", py::arg("reads") = "two-sided")
      .def("get", &PyParameterServer::Get, py::arg("table"), py::arg("rows"))
      .def("inc", &PyParameterServer::Inc, py::arg("table"), py::arg("rows"), py::arg("deltas"))
      .def("clock", &PyParameterServer::Clock)
      .def_property_readonly("clock_count", &PyParameterServer::clock)
      .def_property_readonly("wait_seconds", &PyParameterServer::wait_seconds)
      .def("global_barrier", &PyParameterServer::GlobalBarrier)
      .def("close", &PyParameterServer::Close);
}

}  // namespace parasol::bindings

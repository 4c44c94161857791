// parasol._parasol.GradSync: the deep-learning engine's gradient synchroniser over any module's
// parameters, and FactorPort, through which a Python fully-connected layer hands the synchroniser
// its sufficient factors.
#include <torch/extension.h>

#include "parasol/bindings/world.h"
#include "parasol/core/error.h"
#include "parasol/dl/grad_sync.h"

namespace py = pybind11;

namespace parasol::bindings {
namespace {

// Set by the synchroniser when it runs a layer by sufficient factors; the layer's backward then
// calls Send instead of forming its weight and bias gradients.
class FactorPort {
 public:
  bool active() const { return static_cast<bool>(sink_); }
  void Send(const torch::Tensor& g, const torch::Tensor& x) {
    if (!sink_) throw InternalError("factors sent to a layer the synchroniser does not run by factors");
    sink_(g, x);
  }
  void set_sink(dl::FactorSink sink) { sink_ = std::move(sink); }

 private:
  dl::FactorSink sink_;
};

dl::OptimizerOptions OptimizerFrom(const py::dict& o) {
  dl::OptimizerOptions opt;
  const std::string kind = o.contains("kind") ? o["kind"].cast<std::string>() : "sgd";
  if (kind == "sgd") {
    opt.kind = dl::OptimizerKind::kSgd;
  } else if (kind == "adamw") {
    opt.kind = dl::OptimizerKind::kAdam;
  } else if (kind == "external") {
    opt.kind = dl::OptimizerKind::kExternal;
  } else {
    throw InvalidArgumentError("optimizer kind '" + kind + "': sgd, adamw or external");
  }
  if (o.contains("lr")) opt.lr = o["lr"].cast<double>();
  if (o.contains("momentum")) opt.momentum = o["momentum"].cast<double>();
  if (o.contains("weight_decay")) opt.weight_decay = o["weight_decay"].cast<double>();
  if (o.contains("beta1")) opt.adam_beta1 = o["beta1"].cast<double>();
  if (o.contains("beta2")) opt.adam_beta2 = o["beta2"].cast<double>();
  if (o.contains("eps")) opt.adam_eps = o["eps"].cast<double>();
  return opt;
}

class PyGradSync {
 public:
  PyGradSync(std::shared_ptr<World> world, const std::vector<std::vector<torch::Tensor>>& stages,
             const std::vector<std::tuple<int, std::string, torch::Tensor, torch::Tensor>>& fc_layers,
             const std::vector<torch::Tensor>& buffers, const py::dict& optimizer, const std::string& mode,
             const std::string& backend, uint64_t bucket_bytes, int64_t slice_elements, bool shard_updates,
             uint32_t ps_staleness, int64_t batch_per_rank, int64_t timeout_ms, bool mirror_parameters)
      : world_(std::move(world)) {
    dl::SyncLayout layout{.stage_params = stages, .buffers = buffers};
    for (const auto& [stage, name, weight, bias] : fc_layers) {
      auto port = std::make_shared<FactorPort>();
      ports_.push_back(port);
      layout.fc_layers.push_back(
          {.stage = stage,
           .name = name,
           .weight = weight,
           .bias = bias,
           .set_sink = [port](dl::FactorSink sink) { port->set_sink(std::move(sink)); }});
    }
    const dl::SyncOptions options{
        .mode = dl::ParseSyncMode(mode),
        .backend = dl::ParseBackend(backend),
        .bucket_bytes = bucket_bytes,
        .slice_elements = slice_elements,
        .shard_updates = shard_updates,
        .ps_staleness = ps_staleness,
        .batch_per_rank = batch_per_rank,
        .timeout_ms = std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms : world_->timeout_ms().count()),
        .mirror_parameters = mirror_parameters};
    const dl::OptimizerOptions opt = OptimizerFrom(optimizer);
    comm::Context& ctx = world_->ctx();
    py::gil_scoped_release release;
    sync_ = std::make_unique<dl::GradSync>(ctx, layout, opt, options);
  }

  dl::GradSync& sync() {
    if (!sync_) throw UnavailableError("the synchroniser is closed");
    return *sync_;
  }
  void Close() {
    py::gil_scoped_release release;
    sync_.reset();
  }
  const std::vector<std::shared_ptr<FactorPort>>& ports() const { return ports_; }
  // Runs f on the synchroniser with the GIL released; a communication failure marks the world.
  template <typename F>
  auto Talk(F&& f) {
    dl::GradSync& s = sync();
    py::gil_scoped_release release;
    return world_->Guard([&] { return f(s); });
  }

 private:
  std::shared_ptr<World> world_;  // MPI outlives the synchroniser
  std::vector<std::shared_ptr<FactorPort>> ports_;
  std::unique_ptr<dl::GradSync> sync_;
};

py::dict StatsOf(PyGradSync& s) {
  const dl::SyncStats st = s.sync().stats();
  py::dict d;
  d["wait_seconds"] = st.wait_seconds;
  d["bytes_sent"] = st.bytes_sent;
  d["units_done"] = st.units_done;
  return d;
}

py::list ChoicesOf(PyGradSync& s) {
  py::list out;
  for (const dl::LayerChoice& c : s.sync().layer_choices()) {
    py::dict d;
    d["layer"] = c.layer;
    d["rows"] = c.rows;
    d["cols"] = c.cols;
    d["sfb_bytes"] = c.sfb_bytes;
    d["ps_bytes"] = c.ps_bytes;
    d["allreduce_bytes"] = c.allreduce_bytes;
    d["sfb"] = c.sfb;
    out.append(d);
  }
  return out;
}

}  // namespace

void RegisterSync(py::module_& m) {
  py::class_<FactorPort, std::shared_ptr<FactorPort>>(m, "FactorPort")
      .def_property_readonly("active", &FactorPort::active)
      .def("send", &FactorPort::Send, py::arg("g"), py::arg("x"));
  py::class_<PyGradSync>(m, "GradSync")
      .def(py::init<std::shared_ptr<World>, const std::vector<std::vector<torch::Tensor>>&,
                    const std::vector<std::tuple<int, std::string, torch::Tensor, torch::Tensor>>&,
                    const std::vector<torch::Tensor>&, const py::dict&, const std::string&,
                    const std::string&, uint64_t, int64_t, bool, uint32_t, int64_t, int64_t, bool>(),
           py::arg("world"), py::arg("stages"), py::arg("fc_layers"), py::arg("buffers"),
           py::arg("optimizer"), py::arg("mode"), py::arg("backend"), py::arg("bucket_bytes"),
           py::arg("slice_elements"), py::arg("shard_updates"), py::arg("ps_staleness"),
           py::arg("batch_per_rank"), py::arg("timeout_ms"), py::arg("mirror_parameters") = false)
      .def_property_readonly("ports", &PyGradSync::ports)
      .def_property_readonly("num_units", [](PyGradSync& s) { return s.sync().num_units(); })
      .def_property_readonly("num_parameters", [](PyGradSync& s) { return s.sync().num_parameters(); })
      .def_property_readonly("mirrored", [](PyGradSync& s) { return s.sync().mirrored(); })
      .def_property_readonly("spans",
                             [](PyGradSync& s) {
                               std::vector<std::pair<int64_t, int64_t>> out;
                               for (const dl::ParamSpan& p : s.sync().optimizer().spans())
                                 out.emplace_back(p.begin, p.numel);
                               return out;
                             })
      .def("before_stage",
           [](PyGradSync& s, int stage) { s.Talk([&](dl::GradSync& g) { g.BeforeStage(stage); }); })
      .def(
          "before_backward",
          [](PyGradSync& s, int64_t step, double lr_scale) {
            s.Talk([&](dl::GradSync& g) { g.BeforeBackward(step, lr_scale); });
          },
          py::arg("step"), py::arg("lr_scale") = 1.0)
      .def("after_backward", [](PyGradSync& s) { s.Talk([](dl::GradSync& g) { g.AfterBackward(); }); })
      .def("flush", [](PyGradSync& s) { s.Talk([](dl::GradSync& g) { g.Flush(); }); })
      .def("optimizer_state",
           [](PyGradSync& s) {
             // Collective (the momentum is gathered from the shards under weight-update sharding).
             return s.Talk([](dl::GradSync& g) {
               torch::Tensor second = g.optimizer().second_moment();
               // SGD has no second moment: an empty tensor stands for it.
               return std::vector<torch::Tensor>{g.GatherMomentum(),
                                                 second.defined() ? second.clone() : torch::zeros({0})};
             });
           })
      .def("load_optimizer_state",
           [](PyGradSync& s, const std::vector<torch::Tensor>& state) {
             dl::Optimizer& o = s.sync().optimizer();
             const auto fits = [](const torch::Tensor& t, const torch::Tensor& into) {
               return into.defined() ? t.sizes().equals(into.sizes()) : t.numel() == 0;
             };
             if (state.size() != 2 || !fits(state[0], o.momentum_buffer()) ||
                 !fits(state[1], o.second_moment())) {
               throw InvalidArgumentError(
                   "the optimizer state is not this model's (another model or optimizer)");
             }
             o.momentum_buffer().copy_(state[0]);
             if (o.second_moment().defined()) o.second_moment().copy_(state[1]);
           })
      .def("stats", &StatsOf)
      .def("layer_choices", &ChoicesOf)
      .def("close", &PyGradSync::Close);
}

}  // namespace parasol::bindings

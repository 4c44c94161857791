// The data-parallel synchroniser: flattens a model's parameters and gradients into one buffer
// each, cuts them into units (one for the whole model, DDP-like buckets, layers, or P3 slices),
// starts a unit's reduction from the gradient-ready hooks the moment its last gradient is final,
// and runs reductions and the optimizer on its own communication thread (on a duplicate of the
// job's context) while backward goes on. Backends: allreduce (the collectives), the parameter
// server (BSP or SSP), and hybrid (sufficient-factor broadcasting for the fully-connected layers
// where it moves fewer bytes than a parameter server would, allreduce elsewhere). Weight-update
// sharding reduce-scatters a unit, updates this rank's block and all-gathers the parameters.
//
// Per step, on the training thread:
//   BeforeStage(i) before stage i's forward (P3: waits for that stage's update from the last step)
//   BeforeBackward(step) (waits for every update, zeroes the gradients, makes every parameter's
//                        .grad its view of the flat buffer again, sets the learning rate; with
//                        one rank and an external optimizer, only the last)
//   loss.backward()      (hooks start units)
//   AfterBackward()      (after-backward: starts the one unit; all but P3: waits for every update)
// Errors on the communication thread (peer gone, timeout, mismatch) are rethrown by the next wait.
//
// Parameters on a GPU (or anywhere but CPU memory) are mirrored: the flat buffers stay in host
// memory beside them instead of the parameters becoming views of them. A gradient is copied in
// when its accumulator hook fires; when a parameter is final, its new values (or, under an
// external optimizer, its averaged gradient) are copied back before its unit counts as done, so
// a stage's next forward, which waits for its units, reads them. A parameter changed by its owner
// between steps (load_state_dict, say; its version counter tells) is copied in again when the
// next backward starts. The copies are synchronous: the GPU's work before them is finished.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "parasol/comm/context.h"
#include "parasol/core/service_thread.h"
#include "parasol/dl/models.h"
#include "parasol/dl/noise_scale.h"
#include "parasol/dl/optimizer.h"
#include "parasol/dl/unit_board.h"

namespace parasol::ps {
class ParameterServer;
class Worker;
}  // namespace parasol::ps

namespace parasol::dl {

enum class SyncMode { kAfterBackward, kBuckets, kWfbp, kP3 };
enum class Backend { kAllreduce, kPs, kHybrid, kNone };

SyncMode ParseSyncMode(const std::string& s);  // throws InvalidArgumentError
Backend ParseBackend(const std::string& s);
std::string ToString(SyncMode m);
std::string ToString(Backend b);

struct SyncOptions {
  SyncMode mode = SyncMode::kWfbp;
  Backend backend = Backend::kAllreduce;
  uint64_t bucket_bytes = 25ull << 20;  // buckets
  int64_t slice_elements = 50000;       // p3
  bool shard_updates = false;           // weight-update sharding (allreduce backend)
  uint32_t ps_staleness = 0;            // ps: 0 = BSP, s > 0 = SSP(s)
  int64_t batch_per_rank = 32;          // hybrid: K in the byte model
  std::chrono::milliseconds timeout_ms{60000};
  // Squared norms of the gradients before and after averaging, each step (see GradientNorms):
  // two passes over the gradient and a two-number all-reduce per step.
  bool measure_gradient_norms = false;
  // Parameters this synchroniser leaves alone: their owner reduces and updates them over another
  // group (a mixture-of-experts layer's experts, reduced only among the replicas of each expert).
  std::vector<torch::Tensor> excluded;
  // Mirror the parameters (see above) even when they are in CPU memory: the GPU path, testable
  // without a GPU. Automatic when a parameter is not in CPU memory.
  bool mirror_parameters = false;
};

// A fully-connected layer the synchroniser may run by sufficient factors: its weight (out x in) and
// bias, registered one after the other in their stage, and how to hand it a FactorSink (with one,
// its backward must send the factors instead of forming the weight and bias gradients).
struct FcSlot {
  int stage = 0;
  std::string name;
  torch::Tensor weight, bias;
  std::function<void(FactorSink)> set_sink;
};

// What the synchroniser needs of a model: its parameters stage by stage in forward order (a stage
// is the unit whose forward may wait for its parameters: P3's priority), its fully-connected
// layers, and the buffers (batch-norm statistics) every rank starts from rank 0's copy of. A
// parameter belongs to one stage; parameters of no stage are not synchronised.
struct SyncLayout {
  std::vector<std::vector<torch::Tensor>> stage_params;
  std::vector<FcSlot> fc_layers;
  std::vector<torch::Tensor> buffers;
  int num_stages() const { return static_cast<int>(stage_params.size()); }
};
// A Model's layout; throws InternalError if a parameter lies outside its stages.
SyncLayout LayoutOf(Model& model);

// Hybrid's decision for one fully-connected layer: bytes each would move per step.
struct LayerChoice {
  std::string layer;
  int64_t rows = 0, cols = 0;    // M x N
  uint64_t sfb_bytes = 0;        // 2K(P-1)(M+N) floats per worker
  uint64_t ps_bytes = 0;         // 2MN(P1+P2-2)/P2 floats per node, servers on every worker
  uint64_t allreduce_bytes = 0;  // ring: 2MN(P-1)/P floats
  bool sfb = false;
};

struct SyncStats {
  double wait_seconds = 0;  // training thread blocked on synchronisation (exposed)
  uint64_t bytes_sent = 0;  // payload this rank sent, by the algorithms' counts
  uint64_t units_done = 0;
};

class GradSync {
 public:
  // Collective: broadcasts rank 0's parameters and buffers, and (ps) creates the tables. With
  // one rank nothing is synchronised whatever the options say.
  GradSync(comm::Context& ctx, Model& model, const OptimizerOptions& optimizer, const SyncOptions& options)
      : GradSync(ctx, LayoutOf(model), optimizer, options) {}
  GradSync(comm::Context& ctx, const SyncLayout& layout, const OptimizerOptions& optimizer,
           const SyncOptions& options);
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  void BeforeStage(int stage);
  void BeforeBackward(int64_t step, double lr_scale = 1.0);
  void AfterBackward();
  // Waits for every pending update (before evaluation and checkpoints).
  void Flush();
  // The steps after this one take `batch_per_rank` samples per rank (an in-place batch change):
  // the gradient norms are measured at it, and one rank's unpaired gradient is dropped (it was
  // over the old batch). The hybrid plan made at construction stays. REQUIRES: after Flush.
  void SetBatchPerRank(int64_t batch_per_rank);

  const std::vector<LayerChoice>& layer_choices() const { return choices_; }
  // The training thread's view: call it between steps (after Flush or AfterBackward).
  SyncStats stats() const;
  int64_t num_parameters() const { return params_.numel(); }
  // Whether the parameters are mirrored (on a GPU) rather than views of the flat buffer.
  bool mirrored() const { return mirror_; }
  int num_units() const { return static_cast<int>(units_.size()); }
  torch::Tensor flat_parameters() const { return params_; }
  // After the caller wrote flat_parameters() (a resume): mirrored parameters take the new values.
  void FlatParametersChanged();
  // Collective: the full momentum buffer (gathered from the shards under weight-update sharding).
  torch::Tensor GatherMomentum();
  Optimizer& optimizer() { return *optimizer_; }
  // The norms of the latest step whose synchronisation a wait for every unit has seen (the next
  // BeforeBackward, AfterBackward but under P3, Flush). None under the parameter-server backend
  // (the averaged gradient is never formed) or --comm none on several ranks, or when not asked for.
  const GradientNorms& gradient_norms() const { return norms_; }

  // Defined in grad_sync_internal.h, for the implementation files only.
  struct Unit;
  struct Impl;

 private:
  void Flatten(const SyncLayout& layout);
  void AttachGradients();
  void ZeroGradients();
  // Mirrored parameters: a gradient in, a final parameter (or averaged gradient) out, the flat
  // range [begin, end) of the parameters out, the parameters their owner changed back in.
  void MirrorGradIn(int param);
  void MirrorOut(int param);
  void MirrorRangeOut(int64_t begin, int64_t end);
  void MirrorChangedIn();
  void PlanHybrid(const SyncLayout& layout);
  void PlanUnits(const SyncLayout& layout);
  void AddDenseRun(int first_param, int end_param);
  void RegisterHooks();
  void OnGradReady(int param);
  void OnFactors(int unit, const torch::Tensor& g, const torch::Tensor& x);
  void Launch(int unit);
  void WaitUnits(int first, int end);
  // Communication thread.
  void CommLoop();
  bool RunStep();
  bool RunStepByPriority();
  void AgreeFrontier(float* data, int64_t n);
  void RunUnit(Unit& u);
  void RunDense(Unit& u);
  void RunSharded(Unit& u);
  void RunSfb(Unit& u);
  void PushPs(const Unit& u);
  void RunPsStep();
  void FinishParams(const Unit& u);
  void MeasureLocal(const Unit& u);
  void MeasureAveraged(const Unit& u);
  void FinishNorms();
  void MeasureAlone();  // one rank: pairs of consecutive steps
  bool WaitsPerStage() const {
    return options_.backend == Backend::kPs ||
           (options_.mode == SyncMode::kP3 && options_.backend != Backend::kNone);
  }

  comm::Context& ctx_;
  SyncOptions options_;
  std::unique_ptr<comm::Context> comm_ctx_;  // the communication thread's
  torch::Tensor params_;
  torch::Tensor grads_;
  std::vector<ParamSpan> spans_;
  std::vector<torch::Tensor> param_tensors_;
  bool mirror_ = false;
  std::vector<int64_t> mirrored_version_;  // each parameter's version when last written or read
  std::vector<std::vector<int>> units_of_param_;
  std::vector<int> stage_first_unit_, stage_end_unit_;  // units covering a stage's params
  std::vector<std::unique_ptr<Unit>> units_;
  std::vector<LayerChoice> choices_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<Impl> impl_;
  SyncStats stats_;
  int64_t step_ = 0;              // set before the board's BeginStep, read by the comm thread
  GradientNorms norms_;           // training thread
  torch::Tensor previous_grads_;  // one rank: the unpaired step's gradient
  int64_t previous_step_ = -1;
  double previous_sqr_ = 0;  // its squared norm

  std::vector<int> param_pending_;    // comm thread only: units left before a parameter is final
  std::unique_ptr<UnitBoard> board_;  // null when nothing is synchronised
  ServiceThread thread_;              // the communication thread: CommLoop; its error fails the board
};

}  // namespace parasol::dl

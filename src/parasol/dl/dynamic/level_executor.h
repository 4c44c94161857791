// Runs a vertex program over a schedule (Cavs's engine). Forward, level after level: the level's
// children states are gathered from the state buffer into one dense tensor, F runs once, its
// states are written to their rows. The buffer is allocated once per batch and written in place,
// outside autograd; each level keeps only its own small graph. Backward, levels in reverse with
// the same batching: a level's gradient rows are read from a gradient buffer, its graph's
// backward gives its parameters' and its children's gradients, and the children's are added to
// their rows, complete before their own level is reached.
//
// Threading: one thread (the one that runs the model).
#pragma once

#include <vector>

#include <torch/torch.h>

#include "parasol/dl/dynamic/schedule.h"
#include "parasol/dl/dynamic/vertex_program.h"

namespace parasol::dl::dynamic {

struct LevelExecutorOptions {
  // Project every input of the batch in one product before the levels (Cavs's lazy batching of the
  // input-only part of F); off: each level projects its own.
  bool hoist_inputs = true;
};

class LevelExecutor {
 public:
  LevelExecutor(VertexProgramImpl& program, LevelExecutorOptions options = {});

  // The states of every vertex [vertices + 1, state] (the last row zeros). `inputs` [inputs, input
  // size] are the schedule's input vectors, in its input order, as autograd computed them (an
  // embedding). With autograd on, keeps what Backward needs; REQUIRES: `s` outlives that.
  torch::Tensor Forward(const Schedule& s, const torch::Tensor& inputs);
  // d(loss)/d(states) of the last Forward: accumulates the gradients of the program's parameters
  // and of `inputs`' graph.
  void Backward(const torch::Tensor& d_states);

 private:
  struct LevelRun {
    torch::Tensor children, projected, states;  // the level's leaves and its output
  };
  VertexProgramImpl& program_;
  LevelExecutorOptions options_;
  const Schedule* schedule_ = nullptr;
  std::vector<LevelRun> runs_;
  torch::Tensor projected_;             // hoisted: [vertices + 1, projected], with its graph to the inputs
  torch::Tensor inputs_, inputs_leaf_;  // not hoisted: the inputs and the leaf the levels read
};

}  // namespace parasol::dl::dynamic

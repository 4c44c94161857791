// Custom autograd functions reach the layer (or group) that created them through a pointer kept
// in the autograd context as an integer: the function's backward runs while its creator is alive
// (the model owns the graph, and the model owns its layers).
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace parasol::dl {

template <typename T>
int64_t AsHandle(T* p) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(p));
}
template <typename T>
T* FromHandle(const c10::IValue& v) {
  return reinterpret_cast<T*>(static_cast<intptr_t>(v.toInt()));
}

}  // namespace parasol::dl

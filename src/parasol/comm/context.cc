#include "parasol/comm/context.h"

#include <atomic>

namespace parasol::comm {

Context::Context(std::unique_ptr<Transport> transport, ContextOptions options)
    : transport_(std::move(transport)), options_(options) {}

size_t Context::NextStateSlot() {
  static std::atomic<size_t> next{0};
  return next++;
}

std::unique_ptr<Context> Context::Duplicate(Deadline deadline) {
  return std::make_unique<Context>(transport_->Duplicate(deadline), options_);
}

std::unique_ptr<Context> Context::Split(int color, Deadline deadline) {
  return std::make_unique<Context>(transport_->Split(color, deadline), options_);
}

}  // namespace parasol::comm

// This process's resident memory, as Linux's /proc tells it: the memory a step of training holds
// at its peak (activations, gradients) is the peak less the resident size before the step, once
// the peak has been reset.
#pragma once

#include <cstdint>

namespace parasol {

struct ResidentMemorySizes {
  int64_t current = 0;  // bytes; 0 where /proc/self/status does not say
  int64_t peak = 0;     // since the process started or the last reset
};

ResidentMemorySizes ResidentMemory();

// Makes the peak the current size (/proc/self/clear_refs). False where that cannot be done: then
// the peak is the process's whole life's.
bool ResetPeakResidentMemory();

}  // namespace parasol

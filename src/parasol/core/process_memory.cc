#include "parasol/core/process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace parasol {

ResidentMemorySizes ResidentMemory() {
  ResidentMemorySizes sizes;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (!(fields >> key >> kib)) continue;
    if (key == "VmRSS:") sizes.current = kib * 1024;
    if (key == "VmHWM:") sizes.peak = kib * 1024;
  }
  return sizes;
}

bool ResetPeakResidentMemory() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5" << std::flush;
  return static_cast<bool>(clear);
}

}  // namespace parasol

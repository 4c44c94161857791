#include "parasol/core/wire.h"

#include <fmt/format.h>

namespace parasol {

void WireReader::Fail(const std::string& what) const {
  throw MalformedMessage(fmt::format("message from rank {} ({} bytes): {} at byte {}", src_, n_, what, pos_));
}

}  // namespace parasol

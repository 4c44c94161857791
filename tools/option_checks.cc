#include "tools/option_checks.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol::tools {

namespace fs = std::filesystem;

namespace {

CLI::Validator NumberCheck(double lo, bool lo_open, double hi, std::string description) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!ParseNumber(text, &v)) return fmt::format("'{}' is not a finite number", text);
        if (lo_open ? !(v > lo) : !(v >= lo))
          return fmt::format("{} must be {} {}", text, lo_open ? ">" : ">=", lo);
        if (!(v <= hi)) return fmt::format("{} must be <= {}", text, hi);
        return "";
      },
      description);
}

}  // namespace

CLI::Validator Positive() { return NumberCheck(0, true, HUGE_VAL, "POSITIVE"); }
CLI::Validator NonNegative() { return NumberCheck(0, false, HUGE_VAL, "NONNEGATIVE"); }
CLI::Validator Between(double lo, double hi) {
  return NumberCheck(lo, false, hi, fmt::format("[{} - {}]", lo, hi));
}

void CheckOutputFile(const std::string& option, const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw IoError(fmt::format("{} {}: is a folder", option, path));
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec))
    throw IoError(fmt::format("{} {}: no folder {}", option, path, dir.string()));
  if (access(dir.c_str(), W_OK) != 0) {
    throw IoError(
        fmt::format("{} {}: cannot write in {}: {}", option, path, dir.string(), std::strerror(errno)));
  }
  if (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0) {
    throw IoError(fmt::format("{} {}: cannot overwrite: {}", option, path, std::strerror(errno)));
  }
}

void CheckOutputFolder(const std::string& option, const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw IoError(fmt::format("{} {}: exists and is not a folder", option, dir));
  }
  fs::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{} {}: cannot create: {}", option, dir, ec.message()));
  if (access(dir.c_str(), W_OK) != 0) {
    throw IoError(fmt::format("{} {}: cannot write in it: {}", option, dir, std::strerror(errno)));
  }
}

void CheckCheckpointOptions(const std::string& dir, uint64_t* every, uint64_t default_every) {
  if (!dir.empty()) {
    CheckOutputFolder("--checkpoint", dir);
    if (*every == 0) *every = default_every;
  } else if (*every != 0) {
    throw InvalidArgumentError("--checkpoint-every needs --checkpoint");
  }
}

}  // namespace parasol::tools

#include "parasol/core/error.h"

#include <fmt/format.h>

namespace parasol {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kParse: return "parse error";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kPeerGone: return "peer gone";
    case ErrorCode::kMismatch: return "mismatch";
    case ErrorCode::kAborted: return "aborted";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kDiverged: return "diverged";
  }
  return "unknown error";
}

static std::string ParseMessage(std::string_view file, long line, std::string_view what) {
  if (line <= 0) return fmt::format("{}: {}", file, what);
  return fmt::format("{}:{}: {}", file, line, what);
}

ParseError::ParseError(std::string_view file, long line, std::string_view what)
    : Error(ErrorCode::kParse, ParseMessage(file, line, what)) {}

}  // namespace parasol

namespace parasol {

void ThrowError(ErrorCode code, const std::string& message) {
  switch (code) {
    case ErrorCode::kInvalidArgument: throw InvalidArgumentError(message);
    case ErrorCode::kParse: throw Error(code, message);
    case ErrorCode::kIo: throw IoError(message);
    case ErrorCode::kTimeout: throw TimeoutError(message);
    case ErrorCode::kPeerGone: throw PeerGoneError(message);
    case ErrorCode::kMismatch: throw MismatchError(message);
    case ErrorCode::kAborted: throw AbortedError(message);
    case ErrorCode::kUnavailable: throw UnavailableError(message);
    case ErrorCode::kInternal: throw InternalError(message);
    case ErrorCode::kDiverged: throw DivergedError(message);
  }
  throw Error(code, message);
}

}  // namespace parasol

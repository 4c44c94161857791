// Typed errors for expected failures: a peer that is gone, a deadline that passed, ranks that
// disagree, bad input. Programmer bugs use assertions instead.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace parasol {

enum class ErrorCode {
  kInvalidArgument,  // a bad option or argument from the caller
  kParse,            // a malformed file: the message is "file:line: what is wrong"
  kIo,               // a file that cannot be read or written
  kTimeout,          // a deadline passed
  kPeerGone,         // a peer rank stopped (killed, exited, unreachable)
  kMismatch,         // ranks disagree on a collective's arguments, or a message had the wrong size
  kAborted,          // another rank failed and told this one
  kUnavailable,      // a facility the runtime does not offer (e.g. MPI windows not configured)
  kInternal,         // a failure inside a library we call
  kDiverged,         // a loss or objective became non-finite or ran away: the run's options are wrong
};

std::string_view ErrorCodeName(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

class InvalidArgumentError : public Error {
 public:
  explicit InvalidArgumentError(const std::string& m) : Error(ErrorCode::kInvalidArgument, m) {}
};

// "file:line: what is wrong". line 0 means the whole file.
class ParseError : public Error {
 public:
  ParseError(std::string_view file, long line, std::string_view what);
};

class IoError : public Error {
 public:
  explicit IoError(const std::string& m) : Error(ErrorCode::kIo, m) {}
};

class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& m) : Error(ErrorCode::kTimeout, m) {}
};

class PeerGoneError : public Error {
 public:
  explicit PeerGoneError(const std::string& m) : Error(ErrorCode::kPeerGone, m) {}
};

class MismatchError : public Error {
 public:
  explicit MismatchError(const std::string& m) : Error(ErrorCode::kMismatch, m) {}
};

class AbortedError : public Error {
 public:
  explicit AbortedError(const std::string& m) : Error(ErrorCode::kAborted, m) {}
};

class UnavailableError : public Error {
 public:
  explicit UnavailableError(const std::string& m) : Error(ErrorCode::kUnavailable, m) {}
};

class InternalError : public Error {
 public:
  explicit InternalError(const std::string& m) : Error(ErrorCode::kInternal, m) {}
};

// The message names the step, the value and the option to look at (see core/divergence_guard.h).
class DivergedError : public Error {
 public:
  explicit DivergedError(const std::string& m) : Error(ErrorCode::kDiverged, m) {}
};

}  // namespace parasol

namespace parasol {
// Throws the typed error that belongs to `code` with `message`.
[[noreturn]] void ThrowError(ErrorCode code, const std::string& message);
}  // namespace parasol

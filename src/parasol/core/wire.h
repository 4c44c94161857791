// Binary encoding of parameter-server messages (and other messages between ranks): a WireWriter that
// appends plain values and varints and a WireReader that checks every read against the end, so a
// malformed message is an error, not a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "parasol/core/error.h"

namespace parasol {

class WireWriter {
 public:
  template <typename T>
  void Put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    size_t at = buf_.size();
    buf_.resize(at + sizeof(T));
    std::memcpy(buf_.data() + at, &v, sizeof(T));
  }
  void PutBytes(const void* p, size_t n) {
    size_t at = buf_.size();
    buf_.resize(at + n);
    if (n) std::memcpy(buf_.data() + at, p, n);
  }
  void PutString(const std::string& s) {
    Put<uint32_t>(static_cast<uint32_t>(s.size()));
    PutBytes(s.data(), s.size());
  }
  // An unsigned integer in 7-bit groups, low group first, the high bit set on all but the last
  // byte: one byte below 128, for counts and gaps between sorted ids.
  void PutVarint(uint64_t v) {
    for (; v >= 0x80; v >>= 7) buf_.push_back(static_cast<std::byte>((v & 0x7f) | 0x80));
    buf_.push_back(static_cast<std::byte>(v));
  }
  // Overwrites a value Put earlier at byte `at` (a count known only once the items are written).
  template <typename T>
  void PatchAt(size_t at, T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(buf_.data() + at, &v, sizeof(T));
  }
  void Reserve(size_t n) { buf_.reserve(n); }
  size_t size() const { return buf_.size(); }
  std::vector<std::byte>& bytes() { return buf_; }
  std::vector<std::byte> Take() { return std::move(buf_); }

 private:
  std::vector<std::byte> buf_;
};

// Thrown for a message that does not decode: names the sender.
class MalformedMessage : public Error {
 public:
  explicit MalformedMessage(const std::string& m) : Error(ErrorCode::kParse, m) {}
};

class WireReader {
 public:
  WireReader(const std::byte* data, size_t size, int src) : p_(data), n_(size), src_(src) {}

  template <typename T>
  T Get() {
    static_assert(std::is_trivially_copyable_v<T>);
    Need(sizeof(T));
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  void GetBytes(void* out, size_t n) {
    Need(n);
    if (n) std::memcpy(out, p_ + pos_, n);
    pos_ += n;
  }
  uint64_t GetVarint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      Need(1);
      const auto b = static_cast<uint64_t>(p_[pos_++]);
      v |= (b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    Fail("a varint longer than 10 bytes");
  }
  std::string GetString() {
    auto n = Get<uint32_t>();
    Need(n);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return s;
  }
  bool done() const { return pos_ == n_; }
  size_t remaining() const { return n_ - pos_; }
  int src() const { return src_; }
  [[noreturn]] void Fail(const std::string& what) const;

 private:
  void Need(size_t n) const {
    if (n > n_ - pos_) Fail("truncated");
  }

  const std::byte* p_;
  size_t n_;
  size_t pos_ = 0;
  int src_;
};

}  // namespace parasol

#include "parasol/core/section_file.h"

#include <fmt/format.h>

#include <array>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "parasol/core/atomic_file.h"
#include "parasol/core/checksum.h"
#include "parasol/core/error.h"

namespace parasol {

namespace {

constexpr char kMagic[8] = {'P', 'A', 'R', 'A', 'S', 'O', 'L', 'S'};
constexpr size_t kNameBytes = 16;
constexpr uint64_t kHeaderBytes = 8 + kNameBytes + 8;         // magic, kind, count
constexpr uint64_t kSectionHeaderBytes = kNameBytes + 8 + 8;  // name, element size, count

uint64_t Padding(uint64_t bytes) { return (8 - bytes % 8) % 8; }

std::array<char, kNameBytes> Name(std::string_view s) {
  assert(!s.empty() && s.size() <= kNameBytes);
  std::array<char, kNameBytes> n{};
  std::memcpy(n.data(), s.data(), s.size());
  return n;
}

std::string_view Trimmed(const char* name) { return {name, strnlen(name, kNameBytes)}; }

// Writes and checksums as it goes.
class SummingStream {
 public:
  explicit SummingStream(std::ostream& out) : out_(out) {}
  void Put(const void* data, size_t n) {
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    sum_ = Fnv1a64(data, n, sum_);
  }
  template <typename T>
  void PutValue(const T& v) {
    Put(&v, sizeof v);
  }
  void Finish() { out_.write(reinterpret_cast<const char*>(&sum_), sizeof sum_); }

 private:
  std::ostream& out_;
  uint64_t sum_ = kFnvSeed;
};

}  // namespace

SectionWriter::SectionWriter(std::string_view kind) : kind_(kind) {
  assert(!kind.empty() && kind.size() <= kNameBytes);
}

void SectionWriter::Add(std::string_view name, const void* data, size_t elem_size, uint64_t count) {
  assert(!name.empty() && name.size() <= kNameBytes && elem_size > 0);
  sections_.push_back({std::string(name), data, elem_size, count});
}

void SectionWriter::Write(FileSystem& fs, const std::string& path) const {
  WriteFileAtomically(fs, path, [&](std::ostream& out) {
    SummingStream w(out);
    w.Put(kMagic, sizeof kMagic);
    w.PutValue(Name(kind_));
    w.PutValue(static_cast<uint64_t>(sections_.size()));
    const char zeros[8] = {};
    for (const Section& s : sections_) {
      w.PutValue(Name(s.name));
      w.PutValue(static_cast<uint64_t>(s.elem_size));
      w.PutValue(s.count);
      const uint64_t bytes = s.count * s.elem_size;
      if (bytes > 0) w.Put(s.data, bytes);
      w.Put(zeros, Padding(bytes));
    }
    w.Finish();
  });
}

void SectionWriter::Write(const std::string& path) const {
  LocalFileSystem local;
  Write(local, path);
}

SectionReader::SectionReader(const std::string& path, std::string_view kind) : path_(path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  const auto end = in.tellg();
  if (end < 0) throw IoError(fmt::format("{}: cannot read", path));
  const auto size = static_cast<uint64_t>(end);
  in.seekg(0);
  uint64_t sum = kFnvSeed, at = 0;
  // Reads n bytes at the current position (n checked against the file's size first).
  auto read = [&](void* dst, uint64_t n, std::string_view what) {
    if (n > size - at) Fail(fmt::format("truncated in {}", what));
    in.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (!in) Fail(fmt::format("truncated in {}", what));
    sum = Fnv1a64(dst, n, sum);
    at += n;
  };
  char header[kHeaderBytes];
  if (size < kHeaderBytes + 8) Fail(fmt::format("{} bytes: too short for a parasol file", size));
  read(header, kHeaderBytes, "the header");
  if (std::memcmp(header, kMagic, sizeof kMagic) != 0) Fail("not a parasol section file");
  const std::string_view stored_kind = Trimmed(header + 8);
  if (stored_kind != kind) Fail(fmt::format("a file of kind '{}', not '{}'", stored_kind, kind));
  uint64_t sections = 0;
  std::memcpy(&sections, header + 8 + kNameBytes, sizeof sections);
  if (sections > (size - kHeaderBytes) / kSectionHeaderBytes) Fail("corrupt header (section count)");
  std::vector<char> chunk(1 << 20);
  for (uint64_t i = 0; i < sections; ++i) {
    char h[kSectionHeaderBytes];
    read(h, kSectionHeaderBytes, "a section header");
    Section s{};
    std::memcpy(&s.elem_size, h + kNameBytes, 8);
    std::memcpy(&s.count, h + kNameBytes + 8, 8);
    const std::string name(Trimmed(h));
    // Bounded before it is multiplied: a crafted count must not wrap the size check.
    if (name.empty() || s.elem_size == 0 || s.elem_size > size || s.count > size / s.elem_size)
      Fail(fmt::format("corrupt section header ({})", i));
    if (!sections_.emplace(name, Section{s.elem_size, s.count, at}).second)
      Fail(fmt::format("section '{}' twice", name));
    uint64_t left = s.count * s.elem_size;
    left += Padding(left);
    while (left > 0) {
      const uint64_t n = std::min<uint64_t>(left, chunk.size());
      read(chunk.data(), n, fmt::format("section '{}'", name));
      left -= n;
    }
  }
  uint64_t stored = 0;
  if (size - at != sizeof stored)
    Fail(size - at < sizeof stored ? "truncated" : "trailing bytes after the checksum");
  in.read(reinterpret_cast<char*>(&stored), sizeof stored);
  if (!in || stored != sum) Fail("checksum mismatch: the file is corrupt or truncated");
}

const SectionReader::Section& SectionReader::Find(std::string_view name) const {
  auto it = sections_.find(name);
  if (it == sections_.end()) Fail(fmt::format("no section '{}'", name));
  return it->second;
}

uint64_t SectionReader::Count(std::string_view name) const { return Find(name).count; }

void SectionReader::ReadInto(std::string_view name, void* dst, size_t elem_size, uint64_t count) const {
  const Section& s = Find(name);
  if (s.elem_size != elem_size)
    Fail(fmt::format("section '{}' holds {}-byte values, not {}-byte ones", name, s.elem_size, elem_size));
  if (s.count != count) Fail(fmt::format("section '{}' holds {} values; {} expected", name, s.count, count));
  if (count == 0) return;
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(s.offset));
  in.read(static_cast<char*>(dst), static_cast<std::streamsize>(count * elem_size));
  if (!in)
    throw IoError(fmt::format("{}: cannot read section '{}' again (changed while read?)", path_, name));
}

void SectionReader::Fail(std::string_view what) const { throw ParseError(path_, 0, what); }

}  // namespace parasol

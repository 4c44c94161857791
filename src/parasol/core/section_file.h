// The one binary file format of parasol's checkpoints and binary data files: named sections of
// fixed-size elements and a checksum over the whole, written whole or not at all through a
// FileSystem (so a test can make any writer's disk fail). A reader checks the kind, every size
// against the file's length before anything is allocated from it, and the checksum before a
// section is handed out: no file of ours is parsed by hand-written header code.
//
// Layout, machine byte order, every part a multiple of 8 bytes:
//   "PARASOLS" | kind: 16 bytes, zero-padded | section count: u64
//   per section: name: 16 bytes, zero-padded | element size: u64 | count: u64 | the elements,
//                zero-padded to a multiple of 8
//   FNV-1a 64 (core/checksum.h) of everything before it
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "parasol/core/file_system.h"

namespace parasol {

class SectionWriter {
 public:
  // REQUIRES: 1 <= kind.size() <= 16.
  explicit SectionWriter(std::string_view kind);

  // A section of `count` elements of `elem_size` bytes at `data`, which must stay alive and unchanged
  // until Write: the writer streams it (a checkpoint can be most of memory; it is not copied).
  // REQUIRES: 1 <= name.size() <= 16, names unique.
  void Add(std::string_view name, const void* data, size_t elem_size, uint64_t count);
  template <typename T>
  void Add(std::string_view name, std::span<const T> values) {
    static_assert(std::is_trivially_copyable_v<T>);
    Add(name, values.data(), sizeof(T), values.size());
  }
  template <typename T>
  void Add(std::string_view name, const std::vector<T>& values) {
    Add(name, std::span<const T>(values));
  }
  // A section of one value, copied into the writer.
  template <typename T>
  void AddValue(std::string_view name, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::string& copy = copies_.emplace_back(reinterpret_cast<const char*>(&value), sizeof(T));
    Add(name, copy.data(), sizeof(T), 1);
  }

  // Atomic (atomic_file.h): IoError naming the file when it cannot be written; the previous file
  // at `path`, if any, stays whole.
  void Write(FileSystem& fs, const std::string& path) const;
  void Write(const std::string& path) const;  // the local file system

 private:
  struct Section {
    std::string name;
    const void* data;
    size_t elem_size;
    uint64_t count;
  };
  std::string kind_;
  std::vector<Section> sections_;
  std::deque<std::string> copies_;  // AddValue's values (a deque: their addresses never move)
};

class SectionReader {
 public:
  // Reads `path` through once: IoError when it cannot be opened or read; ParseError "path: what"
  // when it is not a parasol section file of `kind`, is truncated or padded, or fails its
  // checksum. The sections are read again, by name, when asked for.
  SectionReader(const std::string& path, std::string_view kind);

  const std::string& path() const { return path_; }
  bool Has(std::string_view name) const { return sections_.find(name) != sections_.end(); }
  // ParseError "path: no section 'name'" when missing.
  uint64_t Count(std::string_view name) const;

  // The section's elements into `dst`: ParseError when the section is missing, its elements are
  // not `elem_size` bytes, or it does not hold exactly `count` of them.
  void ReadInto(std::string_view name, void* dst, size_t elem_size, uint64_t count) const;
  template <typename T>
  std::vector<T> Get(std::string_view name, uint64_t count) const {
    std::vector<T> v(count);
    ReadInto(name, v.data(), sizeof(T), count);
    return v;
  }
  // Of any count (bounded by the file's size, which was read whole).
  template <typename T>
  std::vector<T> Get(std::string_view name) const {
    return Get<T>(name, Count(name));
  }
  template <typename T>
  T GetValue(std::string_view name) const {
    T v{};
    ReadInto(name, &v, sizeof(T), 1);
    return v;
  }
  // ParseError "path: what" (a value the caller finds wrong).
  [[noreturn]] void Fail(std::string_view what) const;

 private:
  struct Section {
    uint64_t elem_size, count, offset;
  };
  const Section& Find(std::string_view name) const;

  std::string path_;
  std::map<std::string, Section, std::less<>> sections_;
};

}  // namespace parasol

// "key value" text files: the meta files of checkpoints (LDA, MLR, MTRL, SVM) and a job's status
// file. An optional first line "HEADER VERSION" says what the file is; then one key per line,
// each key once. Errors name the file and the line of the key. KeyValueWriter writes them.
#pragma once

#include <concepts>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "parasol/core/file_system.h"
#include "parasol/core/text_fields.h"

namespace parasol {

class KeyValueFile {
 public:
  // Reads `path`. With a non-empty `header` the first line must be "HEADER VERSION" (ParseError
  // "not a HEADER file (version V)" otherwise). Every other line is "key value" with a key of
  // `keys`, given once. IoError when the file cannot be opened; ParseError otherwise.
  static KeyValueFile Read(const std::string& path, std::string_view header, int version,
                           const std::vector<std::string_view>& keys);

  const std::string& path() const { return path_; }
  bool Has(std::string_view key) const { return entries_.find(key) != entries_.end(); }

  // A key's value; ParseError "path: no 'key' line" when it is missing.
  std::string_view Text(std::string_view key) const { return Find(key).value; }
  // A key's value as a number; ParseError "path:line: key 'x' is not ..." when it is not one.
  template <typename T>
  T Number(std::string_view key) const {
    const Entry& e = Find(key);
    return ParseField<T>(e.value, path_, e.line, key);
  }
  template <typename T>
  T NumberIn(std::string_view key, T lo, T hi) const {
    const Entry& e = Find(key);
    return ParseFieldIn<T>(e.value, path_, e.line, key, lo, hi);
  }
  // ParseError "path: no 'key' line" for the first of `keys` the file lacks (after parsing the
  // values it has, so that a malformed line is reported before a missing one).
  void Require(const std::vector<std::string_view>& keys) const;
  // ParseError at the key's line, for a value that parses but is not acceptable.
  [[noreturn]] void Fail(std::string_view key, std::string_view what) const;

 private:
  struct Entry {
    std::string value;
    long line = 0;
  };
  const Entry& Find(std::string_view key) const;

  std::string path_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// The writer of such a file: "HEADER VERSION" (if a header is given), then the keys in the order
// added. Written whole or not at all (atomic_file.h), through a FileSystem.
class KeyValueWriter {
 public:
  explicit KeyValueWriter(std::string_view header = {}, int version = 0);
  // REQUIRES: key and value are single words (no blanks), keys unique.
  KeyValueWriter& Add(std::string_view key, std::string_view value);
  template <std::integral T>
  KeyValueWriter& Add(std::string_view key, T value) {
    return Add(key, std::string_view(std::to_string(value)));
  }
  // Shortest form that reads back to the same double ({:.17g}).
  KeyValueWriter& Add(std::string_view key, double value);
  // IoError naming the file when it cannot be written; the previous file stays whole.
  void Write(FileSystem& fs, const std::string& path) const;
  void Write(const std::string& path) const;  // the local file system

 private:
  std::string text_;
};

}  // namespace parasol

#include "parasol/core/key_value_file.h"

#include <fmt/format.h>

#include <algorithm>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"

namespace parasol {

KeyValueFile KeyValueFile::Read(const std::string& path, std::string_view header, int version,
                                const std::vector<std::string_view>& keys) {
  LineReader in(path);
  KeyValueFile file;
  file.path_ = path;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string_view key = NextField(line, pos), value = NextField(line, pos);
    if (!header.empty() && in.line_number() == 1) {
      if (key != header || value != std::to_string(version) || !NextField(line, pos).empty())
        in.Fail(fmt::format("not a {} file (version {})", header, version));
      continue;
    }
    if (key.empty() || value.empty() || !NextField(line, pos).empty()) in.Fail("expected 'key value'");
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) in.Fail(fmt::format("unknown key '{}'", key));
    if (!file.entries_.emplace(std::string(key), Entry{std::string(value), in.line_number()}).second)
      in.Fail(fmt::format("'{}' is given twice", key));
  }
  if (in.line_number() == 0) throw ParseError(path, 0, "empty file");
  return file;
}

const KeyValueFile::Entry& KeyValueFile::Find(std::string_view key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) throw ParseError(path_, 0, fmt::format("no '{}' line", key));
  return it->second;
}

void KeyValueFile::Require(const std::vector<std::string_view>& keys) const {
  for (std::string_view key : keys) (void)Find(key);
}

void KeyValueFile::Fail(std::string_view key, std::string_view what) const {
  throw ParseError(path_, Find(key).line, what);
}

KeyValueWriter::KeyValueWriter(std::string_view header, int version) {
  if (!header.empty()) text_ = fmt::format("{} {}\n", header, version);
}

KeyValueWriter& KeyValueWriter::Add(std::string_view key, std::string_view value) {
  text_ += fmt::format("{} {}\n", key, value);
  return *this;
}

KeyValueWriter& KeyValueWriter::Add(std::string_view key, double value) {
  return Add(key, std::string_view(fmt::format("{:.17g}", value)));
}

void KeyValueWriter::Write(FileSystem& fs, const std::string& path) const {
  WriteFileAtomically(fs, path, [&](std::ostream& out) { out << text_; });
}

void KeyValueWriter::Write(const std::string& path) const {
  LocalFileSystem local;
  Write(local, path);
}

}  // namespace parasol

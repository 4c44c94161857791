#include "parasol/core/line_reader.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace parasol {

LineReader::LineReader(std::string path, Options options) : path_(std::move(path)), options_(options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec))
    throw IoError(fmt::format("{}: is a folder, not a file", path_));
  in_.open(path_, std::ios::binary);
  if (!in_) throw IoError(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)));
  const auto size = std::filesystem::file_size(path_, ec);
  file_size_bytes_ = ec ? 0 : size;
}

bool LineReader::Next(std::string_view* line) {
  for (;;) {
    if (!std::getline(in_, buffer_)) {
      if (in_.bad()) throw IoError(fmt::format("{}:{}: read error", path_, line_number_ + 1));
      return false;
    }
    ++line_number_;
    std::string_view view = buffer_;
    if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
    if (options_.trailing_comment && options_.comment != '\0')
      view = view.substr(0, view.find(options_.comment));
    const size_t first = view.find_first_not_of(" \t");
    if (first == std::string_view::npos ? options_.skip_blank
                                        : options_.comment != '\0' && view[first] == options_.comment) {
      continue;
    }
    *line = view;
    return true;
  }
}

}  // namespace parasol

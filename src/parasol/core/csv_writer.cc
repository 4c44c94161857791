#include "parasol/core/csv_writer.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol {
namespace {

std::string Quote(const std::string& cell) {
  if (cell.find_first_of(",\"\n") == std::string::npos) return cell;
  std::string q = "\"";
  for (char c : cell) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace

CsvWriter::CsvWriter(std::string path, std::vector<std::string> columns)
    : path_(std::move(path)), columns_(columns.size()) {
  out_.open(path_, std::ios::out | std::ios::trunc);
  if (!out_) throw IoError(fmt::format("{}: cannot create file: {}", path_, std::strerror(errno)));
  Row(columns);
}

void CsvWriter::Row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_) {
    throw InvalidArgumentError(
        fmt::format("{}: row has {} cells, header has {}", path_, cells.size(), columns_));
  }
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    line += Quote(cells[i]);
  }
  line += '\n';
  out_ << line << std::flush;
  if (!out_) throw IoError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
}

void CsvWriter::Commit() {
  out_.close();
  if (!out_) throw IoError(fmt::format("{}: write failed", path_));
}

}  // namespace parasol

#include "parasol/core/csv_writer.h"

#include <cerrno>
#include <cstdio>
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
    : path_(std::move(path)), tmp_path_(path_ + ".tmp"), columns_(columns.size()) {
  out_.open(tmp_path_, std::ios::out | std::ios::trunc);
  if (!out_) throw IoError(fmt::format("{}: cannot create file: {}", path_, std::strerror(errno)));
  Row(columns);
}

CsvWriter::~CsvWriter() {
  if (!committed_) {
    out_.close();
    std::remove(tmp_path_.c_str());
  }
}

void CsvWriter::Row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_) {
    throw InvalidArgumentError(fmt::format("{}: row has {} cells, header has {}", path_,
                                           cells.size(), columns_));
  }
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out_ << ',';
    out_ << Quote(cells[i]);
  }
  out_ << '\n';
}

void CsvWriter::Commit() {
  out_.flush();
  if (!out_) throw IoError(fmt::format("{}: write failed", tmp_path_));
  out_.close();
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    throw IoError(fmt::format("{}: cannot move {} into place", path_, tmp_path_));
  }
  committed_ = true;
}

}  // namespace parasol

#include "parasol/core/csv_reader.h"

#include <fstream>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol {

long ReadCsvRecords(const std::string& path, const std::string& header, size_t fields,
                    const std::function<void(long, const std::vector<std::string>&)>& record) {
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("{}: cannot open", path));
  std::string line;
  if (!std::getline(in, line) || line.substr(0, header.size()) != header) {
    throw ParseError(path, 1, fmt::format("expected the header '{}'", header));
  }
  long lineno = 1;
  std::vector<std::string> cells;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    cells.clear();
    for (std::string_view f : SplitFields(line, ',')) cells.emplace_back(f);
    if (cells.size() != fields) throw ParseError(path, lineno, fmt::format("{} fields, expected {}", cells.size(), fields));
    record(lineno, cells);
  }
  return lineno;
}

}  // namespace parasol

#include "parasol/core/csv_reader.h"

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"

namespace parasol {

long ReadCsvRecords(const std::string& path, const std::string& header, size_t fields,
                    const std::function<void(long, const std::vector<std::string>&)>& record) {
  LineReader in(path);
  std::string_view line;
  if (!in.Next(&line) || line.substr(0, header.size()) != header) {
    throw ParseError(path, 1, fmt::format("expected the header '{}'", header));
  }
  std::vector<std::string> cells;
  while (in.Next(&line)) {
    if (line.empty()) continue;
    cells.clear();
    for (std::string_view f : SplitFields(line, ',')) cells.emplace_back(f);
    if (cells.size() != fields) in.Fail(fmt::format("{} fields, expected {}", cells.size(), fields));
    record(in.line_number(), cells);
  }
  return in.line_number();
}

long ReadCsvTable(const std::string& path,
                  const std::function<void(const std::vector<std::string_view>&)>& header,
                  const std::function<void(long, const std::vector<std::string_view>&)>& record) {
  LineReader in(path);
  std::string_view line;
  if (!in.Next(&line) || line.empty()) throw ParseError(path, 1, "expected a header line naming the columns");
  std::vector<std::string_view> cells = SplitFields(line, ',');
  const size_t fields = cells.size();
  header(cells);
  while (in.Next(&line)) {
    if (line.empty()) continue;
    cells = SplitFields(line, ',');
    if (cells.size() != fields)
      in.Fail(fmt::format("{} fields, where the header has {}", cells.size(), fields));
    record(in.line_number(), cells);
  }
  return in.line_number();
}

}  // namespace parasol

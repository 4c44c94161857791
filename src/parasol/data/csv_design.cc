#include "parasol/data/csv_design.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "parasol/core/csv_reader.h"
#include "parasol/core/text_fields.h"

namespace parasol::data {

Dataset ReadCsvDesign(const std::string& path, const std::string& label_column) {
  Dataset d;
  size_t label = 0;
  std::vector<uint32_t> ids;
  std::vector<double> vals;
  auto header = [&](const std::vector<std::string_view>& fields) {
    auto it = std::find(fields.begin(), fields.end(), label_column);
    if (it == fields.end()) {
      throw ParseError(path, 1, fmt::format("no column named '{}' (the label) in the header", label_column));
    }
    label = static_cast<size_t>(it - fields.begin());
    d.cols = fields.size() - 1;
  };
  ReadCsvTable(path, header, [&](long lineno, const std::vector<std::string_view>& fields) {
    ids.clear();
    vals.clear();
    double y = 0;
    for (size_t c = 0, feature = 0; c < fields.size(); ++c) {
      if (c == label) {
        y = ParseField<double>(fields[c], path, lineno, "label");
        continue;
      }
      double v = 0;
      if (!ParseNumber(fields[c], &v)) {  // the message is formatted only when it is needed
        throw ParseError(path, lineno,
                         fmt::format("column {} '{}' is not a finite number", c + 1, fields[c]));
      }
      if (v != 0) ids.push_back(static_cast<uint32_t>(feature)), vals.push_back(v);
      ++feature;
    }
    d.AddRow(y, ids, vals);
  });
  if (d.rows() == 0) throw ParseError(path, 0, "no samples after the header");
  return d;
}

}  // namespace parasol::data

#include "parasol/data/libsvm_reader.h"

#include <fmt/format.h>

#include <iterator>
#include <limits>
#include <vector>

#include "parasol/core/atomic_file.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/text_fields.h"

namespace parasol::data {

namespace {
// LIBSVM files write "+1" for the positive class; the number parser takes no sign '+'.
std::string_view DropPlus(std::string_view f) { return f.size() > 1 && f[0] == '+' ? f.substr(1) : f; }
}  // namespace

Dataset ReadLibsvm(const std::string& path) {
  LineReader in(path, {.comment = '#', .skip_blank = true, .trailing_comment = true});
  Dataset d;
  std::vector<uint32_t> ids;
  std::vector<double> vals;
  std::string_view line;
  constexpr uint32_t kMaxIndex = std::numeric_limits<int32_t>::max();
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string_view label = NextField(line, pos);
    const auto y = in.Number<double>(DropPlus(label), "label");
    ids.clear();
    vals.clear();
    for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) {
      const size_t colon = f.find(':');
      if (colon == std::string_view::npos) in.Fail(fmt::format("'{}' is not index:value", f));
      const auto index = in.NumberIn<uint32_t>(f.substr(0, colon), "feature index", 1, kMaxIndex);
      if (!ids.empty() && index - 1 <= ids.back()) {
        in.Fail(fmt::format("feature index {} after {}: indices must be strictly ascending", index,
                            ids.back() + 1));
      }
      // The error's context is formatted only for an error (for every entry it was 4% of an L1
      // logistic regression on a9a, the whole command).
      const std::string_view text = DropPlus(f.substr(colon + 1));
      double value = 0;
      if (!ParseNumber(text, &value)) in.Number<double>(text, fmt::format("value of feature {}", index));
      if (value == 0) continue;  // explicit zeros carry nothing
      ids.push_back(index - 1);
      vals.push_back(value);
    }
    d.AddRow(y, ids, vals);
  }
  if (d.rows() == 0) throw ParseError(path, 0, "no samples (expected lines of 'label index:value ...')");
  return d;
}

void WriteLibsvm(const std::string& path, const Dataset& d) {
  WriteFileAtomically(path, [&](std::ostream& out) {
    std::string line;
    for (size_t r = 0; r < d.rows(); ++r) {
      line = fmt::format("{}", d.labels[r]);
      for (size_t k = 0; k < d.row_indices(r).size(); ++k) {
        fmt::format_to(std::back_inserter(line), " {}:{}", d.row_indices(r)[k] + 1, d.row_values(r)[k]);
      }
      line += '\n';
      out << line;
    }
  });
}

}  // namespace parasol::data

// Reads a comma-separated file with a fixed header, one record per line (no quoting: fields
// hold no commas), for the small input files users write by hand.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace parasol {

// Calls `record(line number, fields)` for each non-empty line after the header (a trailing '\r'
// dropped). Throws IoError when the file cannot be opened, ParseError "path:line: ..." when the
// first line does not start with `header` or a line has other than `fields` fields (and whatever
// `record` throws). Returns the number of the last line read.
long ReadCsvRecords(const std::string& path, const std::string& header, size_t fields,
                    const std::function<void(long, const std::vector<std::string>&)>& record);

// For files whose columns are named by their header (a data set's CSV): calls `header(fields)`
// with the first line's fields, then `record(line number, fields)` for each non-empty line after
// it. The views stay valid during the call only. ParseError "path:line: ..." when the file is
// empty or a line has another number of fields than the header. Returns the last line's number.
long ReadCsvTable(const std::string& path,
                  const std::function<void(const std::vector<std::string_view>&)>& header,
                  const std::function<void(long, const std::vector<std::string_view>&)>& record);

}  // namespace parasol

// Reads a data set from a CSV file with a header: one column is the label, every other column a
// feature (dense; zero entries are dropped).
#pragma once

#include <string>

#include "parasol/data/dataset.h"

namespace parasol::data {

// ParseError "path:line: what is wrong" when no column is named `label_column`, a field is not
// a finite number or a line has another number of fields than the header.
Dataset ReadCsvDesign(const std::string& path, const std::string& label_column = "y");

}  // namespace parasol::data

// Reads LIBSVM's sparse text format: one sample per line, "label index:value index:value ...",
// indices from 1 and strictly ascending, '#' starting a comment.
#pragma once

#include <string>

#include "parasol/data/dataset.h"

namespace parasol::data {

// Feature index i in the file is feature i - 1 in the data set. Throws IoError when the file
// cannot be read and ParseError "path:line: what is wrong" for a malformed line: a label or value
// that is not a finite number, an index that is not a whole number in [1, 2^31 - 1], indices not
// ascending, a field without ':'. Blank and comment lines are skipped; a file with no sample is
// an error.
Dataset ReadLibsvm(const std::string& path);

// Writes a data set in the same format (atomically; values with 17 significant digits, so that
// reading it back gives the same doubles). IoError when the file cannot be written.
void WriteLibsvm(const std::string& path, const Dataset& d);

}  // namespace parasol::data

// The commands that apply a saved model to data (mlr-predict, linear-predict, mf-predict): one
// process without MPI, the same --model, --data, --label-column and --output, the output written
// whole or not at all, one line a row.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "tools/command.h"

namespace parasol::tools {

class PredictCommand : public Command {
 public:
  bool NeedsMpi() const final { return false; }
  void Validate() override;

 protected:
  struct Help {
    const char* name;         // the subcommand
    const char* description;  // its line in `parasol --help`
    const char* data;         // what --data holds
    const char* output;       // what --output receives
    bool label_column;        // --data may be a CSV file: --label-column names the label's column
  };
  PredictCommand(CLI::App& parent, const Help& help);

  // Writes line(row) for every row below `rows` into --output, where it was given.
  void WriteOutput(size_t rows, const std::function<std::string(size_t row)>& line) const;

  std::string model_, data_, label_column_ = "y", output_;
};

}  // namespace parasol::tools

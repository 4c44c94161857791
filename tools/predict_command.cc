#include "tools/predict_command.h"

#include <ostream>

#include "parasol/core/atomic_file.h"
#include "tools/option_checks.h"

namespace parasol::tools {

PredictCommand::PredictCommand(CLI::App& parent, const Help& help) {
  app_ = parent.add_subcommand(help.name, help.description);
  app_->add_option("--model", model_, "The model file")->required();
  app_->add_option("--data", data_, help.data)->required();
  if (help.label_column) {
    app_->add_option("--label-column", label_column_, "The label's column in a CSV file")
        ->capture_default_str();
  }
  app_->add_option("--output", output_, help.output);
}

void PredictCommand::Validate() {
  if (!output_.empty()) CheckOutputFile("--output", output_);
}

void PredictCommand::WriteOutput(size_t rows, const std::function<std::string(size_t)>& line) const {
  if (output_.empty()) return;
  WriteFileAtomically(output_, [&](std::ostream& out) {
    for (size_t r = 0; r < rows; ++r) out << line(r);
  });
}

}  // namespace parasol::tools

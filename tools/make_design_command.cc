// `parasol make-design`: writes a synthetic regression or classification problem (correlated
// feature blocks, a sparse true coefficient vector) as a LIBSVM file, so that parasol and the
// systems it is compared with read the same data.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "parasol/data/design_generator.h"
#include "parasol/data/libsvm_reader.h"
#include "tools/command.h"
#include "tools/option_checks.h"

namespace parasol::tools {
namespace {

class MakeDesignCommand : public Command {
 public:
  explicit MakeDesignCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("make-design",
                                 "Write a synthetic sparse design with correlated blocks (LIBSVM)");
    app_->add_option("--rows", o_.rows, "Samples")->check(Positive())->capture_default_str();
    app_->add_option("--cols", o_.cols, "Features")->check(Positive())->capture_default_str();
    app_->add_option("--block-size", o_.block_size, "Features per correlated block")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--correlation", o_.correlation, "Correlation within a block")
        ->check(Between(0, 0.999))
        ->capture_default_str();
    app_->add_option("--blocks-per-row", o_.blocks_per_row, "Blocks present in each sample")
        ->check(Positive())
        ->capture_default_str();
    app_->add_option("--true-nonzeros", o_.true_nonzeros, "Nonzeros of the true coefficients")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--noise", o_.noise, "Label noise (standard deviation)")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_flag("--classify", o_.classify, "Labels -1/+1 (the sign) instead of real values");
    app_->add_option("--seed", o_.seed, "Seed")->capture_default_str();
    app_->add_option("--output", output_, "The LIBSVM file to write")->required();
  }

  bool NeedsMpi() const override { return false; }
  void Validate() override { CheckOutputFile("--output", output_); }

  int Run(comm::MpiRuntime*) override {
    const data::Design g = data::GenerateDesign(o_);
    data::WriteLibsvm(output_, g.data);
    std::cout << fmt::format("{}: {} samples, {} features, {} nonzeros\n", output_, g.data.rows(), o_.cols,
                             g.data.nonzeros());
    return 0;
  }

 private:
  data::DesignOptions o_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> MakeMakeDesignCommand(CLI::App& parent) {
  return std::make_unique<MakeDesignCommand>(parent);
}

}  // namespace parasol::tools

// `parasol gnn`: node classification with a graph convolutional network, the graph partitioned
// by vertex over MPI ranks (ghost rows exchanged each layer, forward and backward).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "parasol/apps/gnn/gnn_model_file.h"
#include "parasol/apps/gnn/gnn_trainer.h"
#include "parasol/apps/gnn/graph.h"
#include "parasol/comm/context.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "tools/command.h"
#include "tools/option_checks.h"
#include "tools/run_options.h"

namespace parasol::tools {
namespace {

using apps::gnn::GnnEpoch;
using apps::gnn::Split;

class GnnCommand : public Command {
 public:
  explicit GnnCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("gnn", "Graph neural network: classify a graph's vertices (GCN, GAT)");
    app_->add_option("--graph", graph_,
                     "Folder with NAME.content (vertex label split id:value ...) and NAME.cites")
        ->required();
    app_->add_option("--model", model_,
                     "gcn (Kipf and Welling) or gat (Velickovic et al., one attention head per layer)")
        ->check(CLI::IsMember({"gcn", "gat"}))
        ->capture_default_str();
    app_->add_option("--layers", layers_, "Layers (hidden layers + 1)")
        ->check(CLI::Range(1, 16))
        ->capture_default_str();
    app_->add_option("--hidden", hidden_, "Width of each hidden layer")
        ->check(CLI::Range(1, 1 << 16))
        ->capture_default_str();
    app_->add_option("--model-file", model_file_,
                     "Write the reported parameters here (what the model is, its widths and weights)");
    app_->add_option("--predictions", predictions_,
                     "Write each vertex's class under the reported parameters here: 'vertex predicted label "
                     "split' per line (label -1: unlabeled)");
    app_->add_flag("--raw-features", raw_features_,
                   "Keep feature values as given (default: each vertex's sum to 1)");
    app_->add_option("--dropout", o_.dropout, "Dropout rate of every layer's input (and of GAT's attention)")
        ->check(Between(0, 0.95))
        ->capture_default_str();
    app_->add_option("--lr", o_.lr, "Adam's learning rate")->check(Positive())->capture_default_str();
    app_->add_option("--weight-decay", o_.weight_decay, "L2 weight on the first layer's weights")
        ->check(NonNegative())
        ->capture_default_str();
    app_->add_option("--epochs", o_.epochs, "Epochs at most")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    app_->add_option("--patience", o_.patience,
                     "Stop when the validation loss has not improved for this many epochs (0: never)")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    app_->add_option("--partition", partition_,
                     "How vertices are spread over processes: hash, range or metis")
        ->check(CLI::IsMember({"hash", "range", "metis"}))
        ->capture_default_str();
    run_.seed = o_.seed;
    AddRunOptions(
        app_, &run_,
        {.which = RunOptions::kAll & ~RunOptions::kThreads,
         .unit = "epoch",
         .metrics_columns =
             "epoch,seconds,train_loss,train_accuracy,val_loss,val_accuracy,test_accuracy,bytes_sent",
         .seed = "Seed of the initial weights and the dropout masks"});
    app_->add_option("--staleness", o_.staleness,
                     "Epochs by which ghost rows and weight updates may lag (Dorylus; 0: synchronous)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    app_->add_option("--ghosts", ghosts_,
                     "How ghost rows move with staleness 0: two-sided (their owners send them) or one-sided "
                     "(each process reads them from the owners' registered memory)")
        ->check(CLI::IsMember({"two-sided", "one-sided"}))
        ->capture_default_str();
    app_->add_option("--graph-threads", o_.pipeline.graph_threads,
                     "Threads per process for the graph tasks (gathers over edges; 0: the main thread)")
        ->check(CLI::Range(0, 256))
        ->capture_default_str();
    app_->add_option("--tensor-threads", o_.pipeline.tensor_threads,
                     "Threads per process for the tensor tasks (dense products, activations), which overlap "
                     "the next interval's graph task (0: the main thread)")
        ->check(CLI::Range(0, 256))
        ->capture_default_str();
    app_->add_option("--tensor-workers", o_.tensor_workers,
                     "The last N processes run only the others' tensor tasks (Dorylus's cheap workers; gcn)")
        ->check(CLI::Range(0, 1 << 20))
        ->capture_default_str();
    app_->add_option("--interval-rows", o_.pipeline.interval_rows, "Vertices per interval of the pipeline")
        ->check(CLI::Range(1, 1 << 30))
        ->capture_default_str();
  }

  bool NeedsMpi() const override { return true; }

  void Validate() override {
    if (!model_file_.empty()) CheckOutputFile("--model-file", model_file_);
    if (!predictions_.empty()) CheckOutputFile("--predictions", predictions_);
    o_.predict = !predictions_.empty();
    o_.hidden.assign(static_cast<size_t>(layers_ - 1), static_cast<size_t>(hidden_));
    o_.model = model_;
    o_.partition = apps::gnn::ParsePartitionKind(partition_);
    o_.normalize_features = !raw_features_;
    o_.ghost_transfer =
        ghosts_ == "one-sided" ? apps::gnn::GhostTransfer::kOneSided : apps::gnn::GhostTransfer::kTwoSided;
    if (o_.ghost_transfer == apps::gnn::GhostTransfer::kOneSided && o_.staleness > 0)
      throw InvalidArgumentError("--ghosts one-sided needs --staleness 0 (stale rows travel two-sided)");
    if (o_.tensor_workers > 0 && model_ != "gcn")
      throw InvalidArgumentError(fmt::format("--tensor-workers runs GCN's tensor tasks, not {}'s", model_));
    CheckRunOptions(&run_, static_cast<uint64_t>(o_.epochs));
    ApplyRunOptions(run_, &o_);
  }

  int Run(comm::MpiRuntime* mpi) override;

 private:
  apps::gnn::GnnOptions o_;
  RunOptions run_;
  std::string graph_, model_ = "gcn", partition_ = "hash", model_file_, predictions_, ghosts_ = "two-sided";
  int layers_ = 2, hidden_ = 16;
  bool raw_features_ = false;
};

int GnnCommand::Run(comm::MpiRuntime* mpi) {
  comm::Context ctx(mpi->CreateWorldTransport(), {.timeout_ms = run_.timeout()});
  const bool root = ctx.rank() == 0;
  if (o_.tensor_workers >= static_cast<uint32_t>(ctx.size())) {
    throw InvalidArgumentError(
        fmt::format("--tensor-workers {} leaves no graph process of {}", o_.tensor_workers, ctx.size()));
  }
  apps::gnn::Graph g = apps::gnn::ReadGraphDir(graph_);
  const std::vector<int32_t> labels = predictions_.empty() ? std::vector<int32_t>() : g.labels;
  const std::vector<Split> splits = predictions_.empty() ? std::vector<Split>() : g.split;
  std::vector<uint64_t> widths{g.features};
  for (int l = 0; l + 1 < layers_; ++l) widths.push_back(static_cast<uint64_t>(hidden_));
  widths.push_back(static_cast<uint64_t>(g.classes));
  std::unique_ptr<CsvWriter> csv;
  if (root) {
    std::cout
        << fmt::format(
               "# parasol gnn: {} vertices, {} edges, {} features, {} classes; {} train / {} val / {} test; "
               "{}: {} layers, hidden {}; {} ({}), {} partition, staleness {}\n",
               g.vertices, g.edges(), g.features, g.classes, g.CountSplit(Split::kTrain),
               g.CountSplit(Split::kValidation), g.CountSplit(Split::kTest), model_, layers_, hidden_,
               Count(ctx.size(), "process"), Count(o_.tensor_workers, "tensor worker"), partition_,
               o_.staleness)
        << fmt::format("{:>6} {:>8} {:>10} {:>9} {:>8} {:>7} {:>8} {:>9}\n", "epoch", "seconds", "train_loss",
                       "train_acc", "val_loss", "val_acc", "test_acc", "MB_sent");
    if (!run_.metrics.empty()) {
      csv = std::make_unique<CsvWriter>(
          run_.metrics, std::vector<std::string>{"epoch", "seconds", "train_loss", "train_accuracy",
                                                 "val_loss", "val_accuracy", "test_accuracy", "bytes_sent"});
    }
  }
  auto on_epoch = [&](const GnnEpoch& e) {
    if (!root) return;
    std::cout << fmt::format("{:>6} {:>8.3f} {:>10.4f} {:>9.4f} {:>8.4f} {:>7.4f} {:>8.4f} {:>9.3f}\n",
                             e.epoch, e.seconds, e.train_loss, e.train_accuracy, e.val_loss, e.val_accuracy,
                             e.test_accuracy, static_cast<double>(e.bytes_sent) / 1e6);
    if (csv) {
      csv->Row({std::to_string(e.epoch), fmt::format("{:.6f}", e.seconds),
                fmt::format("{:.6f}", e.train_loss), fmt::format("{:.6f}", e.train_accuracy),
                fmt::format("{:.6f}", e.val_loss), fmt::format("{:.6f}", e.val_accuracy),
                fmt::format("{:.6f}", e.test_accuracy), std::to_string(e.bytes_sent)});
    }
  };
  if (root && !o_.resume_dir.empty()) std::cout << fmt::format("# resuming from {}\n", o_.resume_dir);
  const apps::gnn::GnnResult r = apps::gnn::TrainGnn(ctx, std::move(g), o_, on_epoch);
  if (!root) return 0;
  if (csv) csv->Commit();
  const int last = r.epochs.empty() ? r.first_epoch - 1 : r.epochs.back().epoch;
  const GnnEpoch& at = r.reported;
  std::cout << fmt::format(
      "final: epoch {}{} of {}{}, {:.3f} s: validation accuracy {:.4f}, test accuracy {:.4f}\n", at.epoch,
      o_.patience > 0 ? " (lowest validation loss)" : "", last, r.stopped_early ? " (stopped early)" : "",
      r.seconds, at.val_accuracy, at.test_accuracy);
  if (!model_file_.empty()) {
    apps::gnn::WriteGnnModel(ctx.env().files(), model_file_,
                             {.model = model_, .widths = widths, .parameters = r.parameters});
  }
  if (!predictions_.empty()) {
    WriteFileAtomically(ctx.env().files(), predictions_, [&](std::ostream& out) {
      for (size_t v = 0; v < r.predictions.size(); ++v) {
        out << fmt::format("{} {} {} {}\n", v, r.predictions[v], labels[v], apps::gnn::SplitName(splits[v]));
      }
    });
  }
  return 0;
}

}  // namespace

std::unique_ptr<Command> MakeGnnCommand(CLI::App& parent) { return std::make_unique<GnnCommand>(parent); }

}  // namespace parasol::tools

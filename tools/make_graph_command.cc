// `parasol make-graph`: writes a synthetic graph with planted communities (power-law degrees,
// community-leaning features) as NAME.content and a binary NAME.edges, so that parasol gnn and
// the systems it is compared with read the same big graph.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "parasol/apps/gnn/graph_generator.h"
#include "parasol/core/error.h"
#include "tools/command.h"
#include "tools/option_checks.h"

namespace parasol::tools {
namespace {

class MakeGraphCommand : public Command {
 public:
  explicit MakeGraphCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("make-graph", "Write a synthetic graph with planted communities (for gnn)");
    app_->add_option("--vertices", o_.vertices, "Vertices")
        ->check(CLI::Range(2, 1 << 30))
        ->capture_default_str();
    app_->add_option("--edges", o_.edges, "Edges drawn (repeats and self-loops are dropped)")
        ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 32))
        ->capture_default_str();
    app_->add_option("--classes", o_.classes, "Communities (the labels)")
        ->check(CLI::Range(1, 1 << 16))
        ->capture_default_str();
    app_->add_option("--features", o_.features, "Words in the vocabulary")
        ->check(CLI::Range(1, 1 << 24))
        ->capture_default_str();
    app_->add_option("--features-per-vertex", o_.features_per_vertex, "Words per vertex")
        ->check(CLI::Range(1, 1 << 16))
        ->capture_default_str();
    app_->add_option("--feature-signal", o_.feature_signal, "Share of a vertex's words from its community's")
        ->check(Between(0, 1))
        ->capture_default_str();
    app_->add_option("--edge-signal", o_.edge_signal, "Share of edges inside a community")
        ->check(Between(0, 1))
        ->capture_default_str();
    app_->add_option("--seed", o_.seed, "Seed")->capture_default_str();
    app_->add_option("--name", name_, "Files NAME.content and NAME.edges")->capture_default_str();
    app_->add_option("--output", output_, "Folder to write them to (made if missing)")->required();
  }

  bool NeedsMpi() const override { return false; }
  void Validate() override {
    if (name_.empty() || name_.find('/') != std::string::npos)
      throw InvalidArgumentError(fmt::format("--name '{}' is not a file name", name_));
  }

  int Run(comm::MpiRuntime*) override {
    const apps::gnn::GeneratedGraph g = apps::gnn::GenerateGraph(o_);
    std::error_code ec;
    std::filesystem::create_directories(output_, ec);
    if (ec) throw IoError(fmt::format("{}: cannot create folder: {}", output_, ec.message()));
    const std::string stem = (std::filesystem::path(output_) / name_).string();
    apps::gnn::WriteContent(stem + ".content", g.graph);
    apps::gnn::WriteEdgesBinary(stem + ".edges", g.edges);
    std::cout << fmt::format(
        "{}.content, {}.edges: {} vertices, {} edges ({} drawn), {} classes, {} features\n", stem, stem,
        g.graph.vertices, g.graph.edges(), g.edges.size(), g.graph.classes, g.graph.features);
    return 0;
  }

 private:
  apps::gnn::GeneratorOptions o_;
  std::string name_ = "synthetic", output_;
};

}  // namespace

std::unique_ptr<Command> MakeMakeGraphCommand(CLI::App& parent) {
  return std::make_unique<MakeGraphCommand>(parent);
}

}  // namespace parasol::tools

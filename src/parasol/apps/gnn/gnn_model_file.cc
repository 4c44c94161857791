#include "parasol/apps/gnn/gnn_model_file.h"

#include "parasol/core/error.h"
#include "parasol/core/section_file.h"

namespace parasol::apps::gnn {

constexpr std::string_view kKind = "gnn-model";

void WriteGnnModel(FileSystem& fs, const std::string& path, const GnnModelFile& m) {
  SectionWriter w(kKind);
  w.Add("model", m.model.data(), 1, m.model.size());
  w.Add("widths", m.widths);
  w.Add("parameters", m.parameters);
  w.Write(fs, path);
}

GnnModelFile ReadGnnModel(const std::string& path) {
  const SectionReader r(path, kKind);
  GnnModelFile m;
  const std::vector<char> name = r.Get<char>("model");
  m.model.assign(name.begin(), name.end());
  if (m.model != "gcn" && m.model != "gat")
    throw ParseError(path, 0, "model '" + m.model + "' is not gcn or gat");
  m.widths = r.Get<uint64_t>("widths");
  if (m.widths.size() < 2) throw ParseError(path, 0, "fewer than one layer");
  m.parameters = r.Get<float>("parameters");
  return m;
}

}  // namespace parasol::apps::gnn

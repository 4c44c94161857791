#include "parasol/apps/mlr/text_features.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "parasol/apps/lda/corpus.h"
#include "parasol/core/error.h"

namespace parasol::apps::mlr {
namespace {

// The folder a document's file sits in: "20news-bydate-train/alt.atheism/49960" -> "alt.atheism".
std::string ClassOf(const std::string& path, const std::string& name) {
  const size_t last = name.rfind('/');
  if (last == std::string::npos || last == 0) {
    throw ParseError(path, 0, fmt::format("'{}' is not in a folder naming its class", name));
  }
  const size_t before = name.rfind('/', last - 1);
  return name.substr(before == std::string::npos ? 0 : before + 1,
                     last - (before == std::string::npos ? 0 : before + 1));
}

// Rows of tf-idf for every document, with the class index of each.
data::Dataset ToRows(const std::string& path, const lda::Corpus& c, const std::vector<double>& idf,
                     const std::map<std::string, size_t>& class_index) {
  data::Dataset d;
  d.cols = idf.size();
  std::map<uint32_t, double> counts;
  std::vector<uint32_t> ids;
  std::vector<double> values;
  for (size_t doc = 0; doc < c.num_docs(); ++doc) {
    const std::string cls = ClassOf(path, c.doc_names[doc]);
    auto it = class_index.find(cls);
    if (it == class_index.end())
      throw ParseError(path, 0, fmt::format("class '{}' is not in the training set", cls));
    counts.clear();
    for (uint32_t w : c.doc(doc)) counts[w] += 1;
    ids.clear();
    values.clear();
    double norm = 0;
    for (const auto& [w, n] : counts) {
      ids.push_back(w);
      values.push_back(n * idf[w]);
      norm += values.back() * values.back();
    }
    for (double& v : values) v /= norm > 0 ? std::sqrt(norm) : 1.0;
    d.AddRow(static_cast<double>(it->second), ids, values);
  }
  return d;
}

}  // namespace

TextFeatures ReadTextFeatures(const std::string& train_path, const std::string& test_path,
                              uint32_t min_count) {
  lda::TextOptions options;
  options.min_count = min_count;
  const lda::Corpus train = lda::ReadText(train_path, options);
  TextFeatures f;
  f.vocab = train.vocab;
  std::map<std::string, size_t> class_index;
  for (const std::string& name : train.doc_names) class_index[ClassOf(train_path, name)] = 0;
  for (auto& [name, index] : class_index) {
    index = f.classes.size();
    f.classes.push_back(name);
  }
  // Document frequencies -> smoothed idf.
  std::vector<uint64_t> df(train.vocab.size(), 0);
  std::vector<uint32_t> seen;
  for (size_t doc = 0; doc < train.num_docs(); ++doc) {
    seen.assign(train.doc(doc).begin(), train.doc(doc).end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (uint32_t w : seen) ++df[w];
  }
  const double n = static_cast<double>(train.num_docs());
  std::vector<double> idf(df.size());
  for (size_t w = 0; w < df.size(); ++w) idf[w] = std::log((1 + n) / (1 + static_cast<double>(df[w]))) + 1;
  f.train = ToRows(train_path, train, idf, class_index);
  if (!test_path.empty()) {
    std::unordered_map<std::string, uint32_t> vocab;
    for (size_t w = 0; w < train.vocab.size(); ++w) vocab[train.vocab[w]] = static_cast<uint32_t>(w);
    lda::TextOptions fixed = options;
    fixed.fixed_vocab = &vocab;
    f.test = ToRows(test_path, lda::ReadText(test_path, fixed), idf, class_index);
  }
  return f;
}

}  // namespace parasol::apps::mlr

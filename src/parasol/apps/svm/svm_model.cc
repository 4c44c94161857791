#include "parasol/apps/svm/svm_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"

namespace parasol::apps::svm {

std::vector<double> ClassOrder(const data::Dataset& d) {
  std::vector<double> labels;
  std::map<double, bool> seen;
  for (double l : d.labels) {
    if (seen.emplace(l, true).second) labels.push_back(l);
  }
  if (labels.size() < 2) {
    throw InvalidArgumentError(
        fmt::format("every label is {}: two classes at least are needed", labels.empty() ? 0.0 : labels[0]));
  }
  if (labels.size() == 2 && labels[0] == -1 && labels[1] == 1) std::swap(labels[0], labels[1]);
  return labels;
}

SvmModel AssembleModel(const data::Dataset& d, std::vector<double> labels,
                       std::span<const PairSolution> pairs, const KernelParams& kernel) {
  const size_t k = labels.size();
  std::map<double, size_t> class_of;
  for (size_t c = 0; c < k; ++c) class_of[labels[c]] = c;
  std::vector<uint8_t> support(d.rows(), 0);
  for (const PairSolution& p : pairs)
    for (size_t t = 0; t < p.rows.size(); ++t) support[p.rows[t]] |= p.alpha[t] > 0;
  SvmModel m{.kernel = kernel, .labels = std::move(labels)};
  m.support_vectors.cols = d.cols;
  m.per_class.assign(k, 0);
  std::vector<int64_t> index(d.rows(), -1);  // row -> its place among the support vectors
  for (size_t c = 0; c < k; ++c) {
    for (size_t r = 0; r < d.rows(); ++r) {
      if (!support[r] || class_of.at(d.labels[r]) != c) continue;
      index[r] = static_cast<int64_t>(m.support_vectors.rows());
      m.support_vectors.AddRow(d.labels[r], d.row_indices(r), d.row_values(r));
      ++m.per_class[c];
    }
  }
  m.coefficients.assign(k - 1, std::vector<double>(m.support_vectors.rows(), 0.0));
  for (const PairSolution& p : pairs) {
    m.rho.push_back(p.rho);
    for (size_t t = 0; t < p.rows.size(); ++t) {
      if (p.alpha[t] <= 0) continue;
      const auto s = static_cast<size_t>(index[p.rows[t]]);
      if (class_of.at(d.labels[p.rows[t]]) == p.first)
        m.coefficients[p.second - 1][s] = p.alpha[t];
      else
        m.coefficients[p.first][s] = -p.alpha[t];
    }
  }
  return m;
}

namespace {

template <typename T>
std::string Joined(const std::vector<T>& v) {
  return fmt::format("{}", fmt::join(v, " "));
}

}  // namespace

void WriteSvmModel(const std::string& path, const SvmModel& m) {
  WriteFileAtomically(path, [&](std::ostream& out) {
    const KernelType type = m.kernel.type;
    out << "svm_type c_svc\nkernel_type " << KernelName(type) << "\n";
    if (type == KernelType::kPolynomial) out << "degree " << m.kernel.degree << "\n";
    if (type != KernelType::kLinear) out << fmt::format("gamma {:.17g}\n", m.kernel.gamma);
    if (type == KernelType::kPolynomial || type == KernelType::kSigmoid)
      out << fmt::format("coef0 {:.17g}\n", m.kernel.coef0);
    out << fmt::format("nr_class {}\ntotal_sv {}\nrho {:.17g}\nlabel {}\nnr_sv {}\nSV\n", m.labels.size(),
                       m.support_vectors.rows(), fmt::join(m.rho, " "), Joined(m.labels),
                       Joined(m.per_class));
    const data::Dataset& sv = m.support_vectors;
    for (size_t s = 0; s < sv.rows(); ++s) {
      for (const auto& row : m.coefficients) out << fmt::format("{:.17g} ", row[s]);
      for (size_t e = 0; e < sv.row_indices(s).size(); ++e)
        out << fmt::format("{}:{:.17g} ", sv.row_indices(s)[e] + uint64_t{1}, sv.row_values(s)[e]);
      out << "\n";
    }
  });
}

namespace {

// The numbers of a header line after its key; each list must have the length the model implies.
template <typename T>
std::vector<T> Numbers(LineReader& in, std::string_view line, size_t pos, std::string_view what) {
  std::vector<T> v;
  for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos))
    v.push_back(in.Number<T>(f, what));
  return v;
}

struct Header {
  SvmModel model;
  uint64_t total_sv = 0;
  int64_t classes = 0;
};

void ReadKey(LineReader& in, const std::string& key, std::string_view line, size_t pos, Header* h) {
  const size_t after_key = pos;
  const std::string_view a = NextField(line, pos);
  SvmModel& m = h->model;
  if (key == "svm_type") {
    if (a != "c_svc") in.Fail(fmt::format("svm_type '{}': only c_svc models are supported", a));
  } else if (key == "kernel_type") {
    try {
      m.kernel.type = ParseKernelType(a);
    } catch (const InvalidArgumentError& e) {
      in.Fail(e.what());
    }
  } else if (key == "degree") {
    m.kernel.degree = in.NumberIn<int>(a, "degree", 0, 1000);
  } else if (key == "gamma") {
    m.kernel.gamma = in.Number<double>(a, "gamma");
  } else if (key == "coef0") {
    m.kernel.coef0 = in.Number<double>(a, "coef0");
  } else if (key == "nr_class") {
    h->classes = in.NumberIn<int64_t>(a, "nr_class", 2, 1 << 16);
  } else if (key == "total_sv") {
    h->total_sv = in.Number<uint64_t>(a, "total_sv");
  } else if (key == "rho") {
    m.rho = Numbers<double>(in, line, after_key, "rho");
  } else if (key == "label") {
    m.labels = Numbers<double>(in, line, after_key, "label");
  } else if (key == "nr_sv") {
    m.per_class = Numbers<uint64_t>(in, line, after_key, "nr_sv");
  } else if (key != "probA" && key != "probB") {
    in.Fail(fmt::format("unknown key '{}'", key));
  }
  const bool list = key == "rho" || key == "label" || key == "nr_sv" || key == "probA" || key == "probB";
  if (!list && !NextField(line, pos).empty()) in.Fail("too many fields");
}

// Reads the header up to "SV" and checks that its lists agree with nr_class and total_sv.
Header ReadHeader(LineReader& in) {
  Header h;
  std::map<std::string, bool> seen;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string key(NextField(line, pos));
    if (key.empty()) continue;
    if (key != "SV") {
      if (seen[key]) in.Fail(fmt::format("'{}' given twice", key));
      seen[key] = true;
      ReadKey(in, key, line, pos, &h);
      continue;
    }
    for (const char* needed : {"svm_type", "kernel_type", "nr_class", "total_sv", "rho", "label", "nr_sv"})
      if (!seen.contains(needed)) in.Fail(fmt::format("no '{}' line before 'SV'", needed));
    const auto k = static_cast<size_t>(h.classes);
    if (h.model.labels.size() != k)
      in.Fail(fmt::format("'label' lists {} classes, nr_class is {}", h.model.labels.size(), k));
    if (h.model.rho.size() != k * (k - 1) / 2) in.Fail(fmt::format("'rho' needs {} values", k * (k - 1) / 2));
    if (h.model.per_class.size() != k) in.Fail(fmt::format("'nr_sv' needs {} values", k));
    uint64_t sum = 0;
    for (uint64_t n : h.model.per_class) sum += n;
    if (sum != h.total_sv) in.Fail("nr_sv does not add up to total_sv");
    return h;
  }
  in.Fail("the file ends before 'SV'");
}

}  // namespace

SvmModel ReadSvmModel(const std::string& path) {
  LineReader in(path);
  Header h = ReadHeader(in);
  SvmModel& m = h.model;
  const size_t k = m.labels.size();
  m.coefficients.assign(k - 1, {});
  std::vector<uint32_t> ids;
  std::vector<double> values;
  size_t cls = 0, in_class = 0;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    if (NextField(line, pos).empty()) continue;
    pos = 0;
    if (m.support_vectors.rows() == h.total_sv)
      in.Fail(fmt::format("more than total_sv = {} vectors", h.total_sv));
    for (auto& row : m.coefficients) row.push_back(in.Number<double>(NextField(line, pos), "coefficient"));
    ids.clear();
    values.clear();
    for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) {
      const size_t colon = f.find(':');
      if (colon == std::string_view::npos) in.Fail(fmt::format("'{}' is not index:value", f));
      const auto id = in.NumberIn<uint32_t>(f.substr(0, colon), "index", 1, 0x7fffffff) - 1;
      if (!ids.empty() && id <= ids.back()) in.Fail("indices must ascend");
      ids.push_back(id);
      values.push_back(in.Number<double>(f.substr(colon + 1), "value"));
    }
    if (!ids.empty())
      m.support_vectors.cols = std::max<uint64_t>(m.support_vectors.cols, ids.back() + uint64_t{1});
    while (in_class == m.per_class[cls]) ++cls, in_class = 0;
    ++in_class;
    m.support_vectors.AddRow(m.labels[cls], ids, values);
  }
  if (m.support_vectors.rows() != h.total_sv) {
    throw ParseError(path, in.line_number(),
                     fmt::format("{} vectors, but total_sv says {}", m.support_vectors.rows(), h.total_sv));
  }
  return m;
}

std::vector<double> DecisionValues(const SvmModel& m, const data::Dataset& d, size_t begin, size_t end) {
  const KernelMatrix kernel(m.support_vectors, m.kernel);
  const size_t k = m.labels.size();
  std::vector<uint32_t> rows(kernel.rows());
  for (size_t s = 0; s < rows.size(); ++s) rows[s] = static_cast<uint32_t>(s);
  std::vector<uint64_t> start(k + 1, 0);  // class c's support vectors are [start[c], start[c + 1])
  for (size_t c = 0; c < k; ++c) start[c + 1] = start[c] + m.per_class[c];
  KernelMatrix::Scratch scratch;
  std::vector<double> column(rows.size()), out;
  end = std::min(end, d.rows());
  begin = std::min(begin, end);
  out.reserve((end - begin) * m.rho.size());
  for (size_t r = begin; r < end; ++r) {
    kernel.Column(d.row_indices(r), d.row_values(r), rows, column.data(), scratch);
    size_t p = 0;
    for (size_t a = 0; a < k; ++a) {
      for (size_t b = a + 1; b < k; ++b, ++p) {
        double sum = 0;
        for (uint64_t s = start[a]; s < start[a + 1]; ++s) sum += m.coefficients[b - 1][s] * column[s];
        for (uint64_t s = start[b]; s < start[b + 1]; ++s) sum += m.coefficients[a][s] * column[s];
        out.push_back(sum - m.rho[p]);
      }
    }
  }
  return out;
}

std::vector<double> Predict(const SvmModel& m, const data::Dataset& d, size_t begin, size_t end) {
  const std::vector<double> dec = DecisionValues(m, d, begin, end);
  const size_t k = m.labels.size(), pairs = m.rho.size();
  std::vector<double> predicted;
  std::vector<uint32_t> votes(k);
  for (size_t r = 0; r < dec.size() / pairs; ++r) {
    std::fill(votes.begin(), votes.end(), 0);
    size_t p = 0;
    for (size_t a = 0; a < k; ++a)
      for (size_t b = a + 1; b < k; ++b, ++p) ++votes[dec[r * pairs + p] > 0 ? a : b];
    predicted.push_back(
        m.labels[static_cast<size_t>(std::max_element(votes.begin(), votes.end()) - votes.begin())]);
  }
  return predicted;
}

}  // namespace parasol::apps::svm

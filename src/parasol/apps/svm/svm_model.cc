#include "parasol/apps/svm/svm_model.h"

#include <fmt/format.h>

#include <map>
#include <ostream>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"

namespace parasol::apps::svm {

size_t SvmModel::class_count(int c) const {
  size_t n = 0;
  for (double l : support_vectors.labels) n += l == labels[static_cast<size_t>(c)];
  return n;
}

std::array<double, 2> TwoClasses(const data::Dataset& d, std::vector<int8_t>* y) {
  std::vector<double> seen;
  for (double l : d.labels) {
    if (std::find(seen.begin(), seen.end(), l) != seen.end()) continue;
    seen.push_back(l);
    if (seen.size() > 2) {
      throw InvalidArgumentError(
          fmt::format("labels {}, {}, {}, ...: only two classes are supported", seen[0], seen[1], seen[2]));
    }
  }
  if (seen.size() < 2) throw InvalidArgumentError(fmt::format("every label is {}: two classes are needed", seen[0]));
  std::array<double, 2> labels{seen[0], seen[1]};
  // As LIBSVM: classes in order of first appearance, except that -1/+1 data keeps +1 positive.
  if (labels[0] == -1 && labels[1] == 1) std::swap(labels[0], labels[1]);
  y->clear();
  for (double l : d.labels) y->push_back(l == labels[0] ? 1 : -1);
  return labels;
}

SvmModel MakeModel(const data::Dataset& d, const std::array<double, 2>& labels, std::span<const int8_t> y,
                   std::span<const double> alpha, double rho, const KernelParams& kernel) {
  SvmModel m{.kernel = kernel, .labels = labels, .rho = rho};
  m.support_vectors.cols = d.cols;
  for (int8_t cls : {1, -1}) {
    for (size_t t = 0; t < d.rows(); ++t) {
      if (y[t] != cls || alpha[t] <= 0) continue;
      m.support_vectors.AddRow(d.labels[t], d.row_indices(t), d.row_values(t));
      m.coefficients.push_back(cls * alpha[t]);
    }
  }
  return m;
}

void WriteSvmModel(const std::string& path, const SvmModel& m) {
  WriteFileAtomically(path, [&](std::ostream& out) {
    const KernelType type = m.kernel.type;
    out << "svm_type c_svc\nkernel_type " << KernelName(type) << "\n";
    if (type == KernelType::kPolynomial) out << "degree " << m.kernel.degree << "\n";
    if (type != KernelType::kLinear) out << fmt::format("gamma {:.17g}\n", m.kernel.gamma);
    if (type == KernelType::kPolynomial || type == KernelType::kSigmoid)
      out << fmt::format("coef0 {:.17g}\n", m.kernel.coef0);
    out << fmt::format("nr_class 2\ntotal_sv {}\nrho {:.17g}\nlabel {} {}\nnr_sv {} {}\nSV\n",
                       m.coefficients.size(), m.rho, m.labels[0], m.labels[1], m.class_count(0),
                       m.class_count(1));
    const data::Dataset& sv = m.support_vectors;
    for (size_t t = 0; t < sv.rows(); ++t) {
      out << fmt::format("{:.17g}", m.coefficients[t]);
      for (size_t k = 0; k < sv.row_indices(t).size(); ++k)
        out << fmt::format(" {}:{:.17g}", sv.row_indices(t)[k] + uint64_t{1}, sv.row_values(t)[k]);
      out << "\n";
    }
  });
}

namespace {

// Reads the header up to "SV": the kernel, labels, rho and the counts the lines must match.
struct Header {
  SvmModel model;
  uint64_t total_sv = 0;
  std::array<uint64_t, 2> per_class{};
};

Header ReadHeader(LineReader& in) {
  Header h;
  std::map<std::string, bool> seen;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string key(NextField(line, pos));
    if (key.empty()) continue;
    if (key == "SV") {
      for (const char* needed : {"svm_type", "kernel_type", "nr_class", "total_sv", "rho", "label", "nr_sv"})
        if (!seen.contains(needed)) in.Fail(fmt::format("no '{}' line before 'SV'", needed));
      return h;
    }
    if (seen[key]) in.Fail(fmt::format("'{}' given twice", key));
    seen[key] = true;
    const std::string_view a = NextField(line, pos), b = NextField(line, pos);
    if (key == "svm_type") {
      if (a != "c_svc") in.Fail(fmt::format("svm_type '{}': only c_svc models are supported", a));
    } else if (key == "kernel_type") {
      try {
        h.model.kernel.type = ParseKernelType(a);
      } catch (const InvalidArgumentError& e) {
        in.Fail(e.what());
      }
    } else if (key == "degree") {
      h.model.kernel.degree = in.NumberIn<int>(a, "degree", 0, 1000);
    } else if (key == "gamma") {
      h.model.kernel.gamma = in.Number<double>(a, "gamma");
    } else if (key == "coef0") {
      h.model.kernel.coef0 = in.Number<double>(a, "coef0");
    } else if (key == "nr_class") {
      if (in.Number<int>(a, "nr_class") != 2) in.Fail("only two-class models are supported");
    } else if (key == "total_sv") {
      h.total_sv = in.Number<uint64_t>(a, "total_sv");
    } else if (key == "rho") {
      h.model.rho = in.Number<double>(a, "rho");
    } else if (key == "label") {
      h.model.labels = {in.Number<double>(a, "label"), in.Number<double>(b, "label")};
    } else if (key == "nr_sv") {
      h.per_class = {in.Number<uint64_t>(a, "nr_sv"), in.Number<uint64_t>(b, "nr_sv")};
    } else if (key != "probA" && key != "probB") {
      in.Fail(fmt::format("unknown key '{}'", key));
    }
    if (key != "svm_type" && key != "kernel_type" && !NextField(line, pos).empty()) in.Fail("too many fields");
  }
  in.Fail("the file ends before 'SV'");
}

}  // namespace

SvmModel ReadSvmModel(const std::string& path) {
  LineReader in(path);
  Header h = ReadHeader(in);
  if (h.per_class[0] + h.per_class[1] != h.total_sv) in.Fail("nr_sv does not add up to total_sv");
  SvmModel& m = h.model;
  m.support_vectors.cols = 0;
  std::vector<uint32_t> ids;
  std::vector<double> values;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string_view coef = NextField(line, pos);
    if (coef.empty()) continue;
    if (m.coefficients.size() == h.total_sv) in.Fail(fmt::format("more than total_sv = {} vectors", h.total_sv));
    m.coefficients.push_back(in.Number<double>(coef, "coefficient"));
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
    if (!ids.empty()) m.support_vectors.cols = std::max<uint64_t>(m.support_vectors.cols, ids.back() + uint64_t{1});
    const bool first = m.coefficients.size() <= h.per_class[0];
    m.support_vectors.AddRow(m.labels[first ? 0 : 1], ids, values);
  }
  if (m.coefficients.size() != h.total_sv)
    throw ParseError(path, in.line_number(), fmt::format("{} vectors, but total_sv says {}", m.coefficients.size(), h.total_sv));
  return m;
}

std::vector<double> DecisionValues(const SvmModel& m, const data::Dataset& d) {
  const KernelMatrix k(m.support_vectors, m.kernel);
  std::vector<uint32_t> rows(k.rows());
  for (size_t t = 0; t < rows.size(); ++t) rows[t] = static_cast<uint32_t>(t);
  KernelMatrix::Scratch scratch;
  std::vector<double> column(rows.size()), out;
  out.reserve(d.rows());
  for (size_t r = 0; r < d.rows(); ++r) {
    k.Column(d.row_indices(r), d.row_values(r), rows, column.data(), scratch);
    double sum = 0;
    for (size_t t = 0; t < rows.size(); ++t) sum += m.coefficients[t] * column[t];
    out.push_back(sum - m.rho);
  }
  return out;
}

}  // namespace parasol::apps::svm

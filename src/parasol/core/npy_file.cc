#include "parasol/core/npy_file.h"

#include <bit>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"

namespace parasol {

static_assert(std::endian::native == std::endian::little, "the values are written as they lie in memory");

template <>
std::string NpyType<float>() {
  return "<f4";
}
template <>
std::string NpyType<double>() {
  return "<f8";
}
template <>
std::string NpyType<int64_t>() {
  return "<i8";
}
template <>
std::string NpyType<uint32_t>() {
  return "<u4";
}

std::string NpyHeader(const std::string& type, std::span<const uint64_t> shape) {
  std::string dims;
  for (uint64_t d : shape) dims += fmt::format("{}, ", d);
  // Python's tuples: "(2, 3)", and a 1-tuple keeps its comma: "(5,)".
  dims.resize(dims.size() - (shape.size() > 1 ? 2 : shape.size()));
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", type, dims);
  // Magic (6 bytes), version (2), header length (2), the header; padded with spaces to a multiple
  // of 64 bytes and ended by a newline.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  const auto len = static_cast<uint16_t>(dict.size());
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  return out + dict;
}

template <typename T>
void WriteNpy(const std::string& path, std::span<const uint64_t> shape,
              const std::function<void(const NpyRows<T>& rows)>& fill) {
  uint64_t expected = 1;
  for (uint64_t d : shape) expected *= d;
  WriteFileAtomically(path, [&](std::ostream& out) {
    out << NpyHeader(NpyType<T>(), shape);
    uint64_t written = 0;
    fill([&](std::span<const T> values) {
      written += values.size();
      if (written > expected) {
        throw InvalidArgumentError(fmt::format("{}: more values than its shape holds ({})", path, expected));
      }
      out.write(reinterpret_cast<const char*>(values.data()),
                static_cast<std::streamsize>(values.size_bytes()));
    });
    if (written != expected) {
      throw InvalidArgumentError(
          fmt::format("{}: {} values for a shape that holds {}", path, written, expected));
    }
  });
}

template void WriteNpy<float>(const std::string&, std::span<const uint64_t>,
                              const std::function<void(const NpyRows<float>&)>&);
template void WriteNpy<double>(const std::string&, std::span<const uint64_t>,
                               const std::function<void(const NpyRows<double>&)>&);
template void WriteNpy<int64_t>(const std::string&, std::span<const uint64_t>,
                                const std::function<void(const NpyRows<int64_t>&)>&);

}  // namespace parasol

// NumPy's .npy files (format version 1.0), for arrays other tools read with numpy.load: the magic
// string, a header naming the element type, C order and the shape, padded so the values start at a
// multiple of 64 bytes, then the values in C order, little-endian. Written row by row, so that an
// array need not be held whole; through WriteFileAtomically, so a failed write leaves no half file.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace parasol {

// NumPy's name for the element type: "<f4", "<f8", "<i8", "<u4" and so on.
template <typename T>
std::string NpyType();

// The bytes before the values of an array of `shape` with elements of NumPy type `type`.
std::string NpyHeader(const std::string& type, std::span<const uint64_t> shape);

// Writes PATH: fill(rows) is called once and hands the values over in C order, a span at a time,
// through rows(span). Throws IoError naming the file, and InvalidArgumentError when the values
// handed over are not as many as the shape holds (the file is then not written).
template <typename T>
using NpyRows = std::function<void(std::span<const T>)>;
template <typename T>
void WriteNpy(const std::string& path, std::span<const uint64_t> shape,
              const std::function<void(const NpyRows<T>& rows)>& fill);

}  // namespace parasol

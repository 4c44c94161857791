// An array of doubles in a file of its own, written whole or not at all, with a checksum: the
// binary part of a checkpoint. A section file (section_file.h) of kind MAGIC with one section,
// "values".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parasol/core/file_system.h"

namespace parasol {

// REQUIRES: magic.size() == 8. Atomic (atomic_file.h); throws IoError.
void WriteArrayFile(FileSystem& fs, const std::string& path, std::string_view magic,
                    std::span<const double> values);
void WriteArrayFile(const std::string& path, std::string_view magic, std::span<const double> values);

// Reads an array of kind `magic` that must hold `count` values: the caller knows the shape from
// its own data, so nothing is sized by the file. IoError when it cannot be opened; ParseError
// "path: ..." when it is of another kind or size, truncated or corrupt.
std::vector<double> ReadArrayFile(const std::string& path, std::string_view magic, uint64_t count);

}  // namespace parasol

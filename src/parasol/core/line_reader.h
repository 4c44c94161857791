// Reads a user's text file line by line and knows where it is, so that every error about its
// contents reads "file:line: what is wrong" (text_fields.h parses the fields).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol {

class LineReader {
 public:
  struct Options {
    // Lines whose first non-blank character is this one are skipped ('\0': none).
    char comment = '\0';
    // Skip lines with nothing but blanks.
    bool skip_blank = false;
    // With `comment`: a comment may also end a line (the text from it on is dropped, and a line
    // left with blanks only is a blank one). The host, topology, stop-word and LIBSVM files'.
    bool trailing_comment = false;
  };

  // Throws IoError "path: cannot open: reason" when the file cannot be opened.
  explicit LineReader(std::string path) : LineReader(std::move(path), Options{}) {}
  LineReader(std::string path, Options options);

  // The next line, without "\n" or "\r\n"; false at the end of the file. The view stays valid
  // until the next call. Throws IoError when reading fails (a file that ends early is not a
  // failure; a disk error is).
  bool Next(std::string_view* line);

  const std::string& path() const { return path_; }
  // The number of the line Next() returned last (1-based; 0 before the first).
  long line_number() const { return line_number_; }
  // The file's size, for bounding what a header may ask to allocate.
  uint64_t file_size_bytes() const { return file_size_bytes_; }

  // ParseError at the current line.
  [[noreturn]] void Fail(std::string_view what) const { throw ParseError(path_, line_number_, what); }
  template <typename T>
  T Number(std::string_view field, std::string_view what) const {
    return ParseField<T>(field, path_, line_number_, what);
  }
  template <typename T>
  T NumberIn(std::string_view field, std::string_view what, T lo, T hi) const {
    return ParseFieldIn<T>(field, path_, line_number_, what, lo, hi);
  }

 private:
  std::string path_;
  Options options_;
  std::ifstream in_;
  std::string buffer_;
  long line_number_ = 0;
  uint64_t file_size_bytes_ = 0;
};

}  // namespace parasol

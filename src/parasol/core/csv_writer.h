// CSV output for metrics and benchmarks. Rows go to FILE.tmp; Commit() renames it to FILE, so a
// run that fails part-way leaves no half-written FILE behind.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace parasol {

class CsvWriter {
 public:
  // Opens path.tmp and writes the header. Throws IoError if the file cannot be created.
  CsvWriter(std::string path, std::vector<std::string> columns);
  // Removes the temporary file if Commit() was not called.
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  // REQUIRES: cells.size() == number of columns. Cells are quoted when they need it.
  void Row(const std::vector<std::string>& cells);
  // Flushes and moves the file into place. Throws IoError on failure.
  void Commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string tmp_path_;
  size_t columns_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace parasol

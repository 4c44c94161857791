// CSV output for metrics and benchmark results, written as a log: the header at once, then each
// row flushed as it comes, so that a run can be watched (`tail -f`) and a killed run leaves the
// complete rows it made. (Models and checkpoints are not logs: they go through atomic_file.h.)
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace parasol {

class CsvWriter {
 public:
  // Creates (truncates) path and writes the header. Throws IoError if the file cannot be created,
  // so a bad path is found before the work whose results it would hold.
  CsvWriter(std::string path, std::vector<std::string> columns);
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  // REQUIRES: cells.size() == number of columns. Cells are quoted when they need it. The row is
  // on disk (in the kernel's cache) when this returns. Throws IoError when the write fails.
  void Row(const std::vector<std::string>& cells);
  // Closes the file. Throws IoError on failure.
  void Commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  size_t columns_;
  std::ofstream out_;
};

}  // namespace parasol

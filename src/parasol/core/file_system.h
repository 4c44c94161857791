// The file operations parasol's durable writes go through (LevelDB's Env, files only), so a test
// can put a failing write, a full disk or a crash half-way through a file under any writer of
// checkpoints, models or status files. LocalFileSystem is the real one; FaultyFileSystem
// (faulty_file_system.h) injects faults. Readers use the input kit directly: a torn file is found
// by its checksum, whatever wrote it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace parasol {

// A file being written. Every method throws IoError naming the file.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual void Append(std::string_view data) = 0;
  // Makes what was appended durable (fsync).
  virtual void Sync() = 0;
  // Closes the file; appends still buffered are written first (a full disk can show here).
  virtual void Close() = 0;
};

// Implementations are thread-safe: the parameter server's shards write from their own threads.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // Creates PATH, or empties it. Throws IoError.
  virtual std::unique_ptr<WritableFile> NewWritableFile(const std::string& path) = 0;
  // Replaces TO with FROM in one step (rename(2)). Throws IoError.
  virtual void Rename(const std::string& from, const std::string& to) = 0;
  // Makes the folder's entries (a rename into it) durable. Throws IoError.
  virtual void SyncFolder(const std::string& path) = 0;
  // Removes PATH if it exists; errors are ignored (used to clean up after another error).
  virtual void RemoveIfExists(const std::string& path) noexcept = 0;
};

// The machine's own file system (POSIX calls). Holds no state: make one where it is needed.
class LocalFileSystem final : public FileSystem {
 public:
  std::unique_ptr<WritableFile> NewWritableFile(const std::string& path) override;
  void Rename(const std::string& from, const std::string& to) override;
  void SyncFolder(const std::string& path) override;
  void RemoveIfExists(const std::string& path) noexcept override;
};

}  // namespace parasol

#include "parasol/core/atomic_file.h"

#include <array>
#include <exception>
#include <filesystem>
#include <streambuf>

#include "parasol/core/error.h"

namespace parasol {

namespace {

// An ostream's buffer over a WritableFile. A failing append cannot throw through the stream (it
// would become a bad bit), so the error is kept and rethrown once fill returns.
class FileStreamBuf final : public std::streambuf {
 public:
  explicit FileStreamBuf(WritableFile& file) : file_(file) { setp(buf_.data(), buf_.data() + buf_.size()); }

  // Writes what is buffered; rethrows the first error of any append.
  void Finish() {
    Drain();
    if (error_) std::rethrow_exception(error_);
  }

 protected:
  int_type overflow(int_type c) override {
    if (!Drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return Drain() ? 0 : -1; }

 private:
  bool Drain() {
    if (error_) return false;
    try {
      file_.Append(std::string_view(pbase(), static_cast<size_t>(pptr() - pbase())));
    } catch (...) {
      error_ = std::current_exception();
      return false;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return true;
  }

  WritableFile& file_;
  std::array<char, 1 << 16> buf_;
  std::exception_ptr error_;
};

void WriteSynced(FileSystem& fs, const std::string& tmp, const std::function<void(std::ostream&)>& fill) {
  std::unique_ptr<WritableFile> file = fs.NewWritableFile(tmp);
  FileStreamBuf buf(*file);
  std::ostream out(&buf);
  fill(out);
  buf.Finish();
  if (!out) throw IoError(tmp + ": write failed");
  file->Sync();
  file->Close();
}

}  // namespace

void WriteFileAtomically(FileSystem& fs, const std::string& path,
                         const std::function<void(std::ostream&)>& fill) {
  const std::string tmp = path + ".tmp";
  try {
    WriteSynced(fs, tmp, fill);
  } catch (...) {
    fs.RemoveIfExists(tmp);  // nothing half-written stays behind
    throw;
  }
  fs.Rename(tmp, path);
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  fs.SyncFolder(folder.empty() ? "." : folder.string());
}

void WriteFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  LocalFileSystem local;
  WriteFileAtomically(local, path, fill);
}

}  // namespace parasol

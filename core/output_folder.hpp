// Writing a set of files into one folder, never outside it, each file
// complete or absent (the `tenact run --out DIR` contract).
//
// Contract:
// - open() creates the folder (and missing parents) when absent and holds
//   a descriptor of it; the folder's own path is the caller's and may
//   pass through symbolic links. Everything inside is opened relative to
//   that descriptor by a plain file name (no '/', not "." or "..", not
//   starting with '.': value_file_name.hpp makes such names).
// - stage() writes the bytes to a fresh hidden temporary file of the folder
//   (O_EXCL | O_NOFOLLOW: it never opens an existing file or follows a
//   link planted there) and flushes it to disk.
// - commit() renames each staged file to its name, in staging order. Each
//   rename is atomic: a reader sees the old file or the complete new one,
//   and a symbolic link already at that name is replaced, never followed.
// - Whatever is staged and not committed (a failure, an early return) is
//   removed when the OutputFolder is destroyed: a failed command leaves no
//   temporary and no half-written file behind.
// Not thread-safe: one thread uses an OutputFolder.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace tenact {

class OutputFolder {
 public:
  static Result<OutputFolder> open(const std::string& path);

  OutputFolder(OutputFolder&& other) noexcept;
  OutputFolder& operator=(OutputFolder&&) = delete;
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  ~OutputFolder();

  /// Writes `bytes` to a temporary file that commit() names `file_name`.
  /// Errors: Io naming the folder and file; InvalidAttribute for a
  /// `file_name` that is not a plain name.
  Status stage(const std::string& file_name, std::string_view bytes);
  /// Renames every staged file into place (see above). On a failure the
  /// files not yet renamed are removed and the error names the file.
  Status commit();

  const std::string& path() const { return path_; }

 private:
  OutputFolder(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void discard_staged() noexcept;

  struct Staged {
    std::string temporary;
    std::string final_name;
  };
  std::string path_;
  int fd_ = -1;
  std::vector<Staged> staged_;
};

}  // namespace tenact

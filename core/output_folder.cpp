#include "core/output_folder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tenact {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name.front() != '.' && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// Distinct temporary names within the process; O_EXCL settles the rest.
std::atomic<uint64_t> g_temporary_counter{0};

Status write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{ErrorCode::Io, errno_text(errno)};
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return Error{ErrorCode::Io, "flush to disk failed: " + errno_text(errno)};
  return ok_status();
}

}  // namespace

Result<OutputFolder> OutputFolder::open(const std::string& path) {
  if (path.empty()) return Error{ErrorCode::Io, "an output folder needs a path"};
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Error{ErrorCode::Io, "cannot create the folder '" + path + "': " + ec.message()};
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error{ErrorCode::Io, "cannot open the folder '" + path + "': " + errno_text(errno)};
  return OutputFolder{path, fd};
}

OutputFolder::OutputFolder(OutputFolder&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), staged_(std::move(other.staged_)) {
  other.fd_ = -1;
  other.staged_.clear();
}

OutputFolder::~OutputFolder() {
  discard_staged();
  if (fd_ >= 0) ::close(fd_);
}

void OutputFolder::discard_staged() noexcept {
  for (const Staged& s : staged_) ::unlinkat(fd_, s.temporary.c_str(), 0);
  staged_.clear();
}

Status OutputFolder::stage(const std::string& file_name, std::string_view bytes) {
  if (!is_plain_file_name(file_name))
    return Error{ErrorCode::InvalidAttribute,
                 "'" + file_name + "' is not a plain file name inside '" + path_ + "'"};
  std::string temporary;
  int fd = -1;
  while (fd < 0) {
    temporary = ".tenact-" + std::to_string(::getpid()) + "-" +
                std::to_string(g_temporary_counter.fetch_add(1)) + ".tmp";
    fd = ::openat(fd_, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST)
      return Error{ErrorCode::Io, "cannot create a file in '" + path_ + "' for '" + file_name +
                                      "': " + errno_text(errno)};
  }
  staged_.push_back(Staged{temporary, file_name});
  Status written = write_all(fd, bytes);
  ::close(fd);
  if (!written.ok())
    return Error{ErrorCode::Io, "cannot write '" + file_name + "' in '" + path_ + "': " +
                                    written.error().message()};
  return ok_status();
}

Status OutputFolder::commit() {
  for (size_t i = 0; i < staged_.size(); ++i) {
    if (::renameat(fd_, staged_[i].temporary.c_str(), fd_, staged_[i].final_name.c_str()) != 0) {
      const int err = errno;
      const std::string name = staged_[i].final_name;
      staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(i));
      discard_staged();
      return Error{ErrorCode::Io, "cannot put '" + name + "' in place in '" + path_ +
                                      "': " + errno_text(err)};
    }
  }
  staged_.clear();
  return ok_status();
}

}  // namespace tenact

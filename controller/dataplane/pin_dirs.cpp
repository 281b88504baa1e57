#include "dataplane/pin_dirs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "dataplane/errno_message.h"
#include "edgeshed/abi.h"

namespace edgeshed {

bool path_exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }
namespace {

constexpr long kBpfFsMagic = 0xcafe4a11;
constexpr const char* kBpfFsRoot = "/sys/fs/bpf";

}  // namespace

Status ensure_bpffs() {
  struct statfs st {};
  if (statfs(kBpfFsRoot, &st) == 0 && st.f_type == kBpfFsMagic) return {};
  // A daemon run as a dedicated user sees the host's bpffs only at the pin
  // root, bound into a mount namespace where /sys/fs/bpf itself is not
  // bpffs (deploy/systemd: BindPaths=).
  if (statfs(EDGESHED_PIN_ROOT, &st) == 0 && st.f_type == kBpfFsMagic) return {};
  if (mount("bpf", kBpfFsRoot, "bpf", 0, "mode=0700") != 0) {
    return make_error(std::string("bpffs unavailable: cannot mount it on ") + kBpfFsRoot + ": " +
                      errno_text(errno));
  }
  return {};
}

Status owned_by_us(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    return make_error("cannot stat " + path + ": " + errno_text(errno));
  }
  if (!S_ISDIR(st.st_mode)) return make_error(path + " is not a directory: refusing to pin there");
  if (st.st_uid != geteuid()) {
    return make_error(path + " belongs to uid " + std::to_string(st.st_uid) + ", not to uid " +
                      std::to_string(geteuid()) +
                      ": refusing to trust its pins (remove it, or chown it if it is ours)");
  }
  return {};
}

Status make_private_dir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return make_error("cannot create " + path + ": " + errno_text(errno));
  }
  if (auto s = owned_by_us(path); !s) return s;
  if (chmod(path.c_str(), 0700) != 0) {
    return make_error("cannot make " + path + " private: " + errno_text(errno));
  }
  return {};
}

std::string host_pin_dir(const std::string& pin_root) {
  return pin_root + "/" + EDGESHED_HOST_PIN_DIR;
}

Result<Fd> lock_pin_root(const std::string& pin_root) {
  Fd fd(open(pin_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return make_error("cannot open " + pin_root + ": " + errno_text(errno));
  // Held for the milliseconds of a load or a removal: wait.
  if (flock(fd.get(), LOCK_EX) != 0) {
    return make_error("cannot lock " + pin_root + ": " + errno_text(errno));
  }
  return fd;
}

std::string remove_host_pins_if_last(const std::string& pin_root) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(pin_root, ec)) {
    if (entry.path().filename() != EDGESHED_HOST_PIN_DIR) return "";  // an interface is left
  }
  const std::string dir = host_pin_dir(pin_root);
  std::string problems;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (unlink(entry.path().c_str()) != 0) {
      problems += " " + entry.path().string() + ": " + errno_text(errno) + ";";
    }
  }
  if (rmdir(dir.c_str()) != 0 && errno != ENOENT) {
    problems += " " + dir + ": " + errno_text(errno) + ";";
  }
  return problems;
}

}  // namespace edgeshed

// A file under /tmp for a test to write, removed when the test ends.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace edgeshed::testing {

class TempFile {
 public:
  TempFile() {
    char name[] = "/tmp/edgeshed-test-XXXXXX";
    int fd = mkstemp(name);
    close(fd);
    path_ = name;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { (void)std::remove(path_.c_str()); }

  // Replaces the file's content.
  void write(const std::string& text) const { std::ofstream(path_) << text; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace edgeshed::testing

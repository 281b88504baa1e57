#include "ipc/json_fields.h"

namespace edgeshed::ipc::fields {

Error field_error(const std::string& path, const std::string& what) {
  return {"\"" + path + "\" " + what};
}

std::string path_of(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

}  // namespace edgeshed::ipc::fields

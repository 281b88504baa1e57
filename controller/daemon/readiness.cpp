#include "daemon/readiness.h"

namespace edgeshed::daemon {

ReadyAnswer ready_answer(const MetricsSnapshot* snapshot, law::Level not_ready_from) {
  if (snapshot == nullptr) return {503, "not ready: no tick yet\n"};
  if (snapshot->level >= not_ready_from) {
    return {503, "not ready: " + std::string(names::name_of(snapshot->level)) + "\n"};
  }
  return {200, "ready\n"};
}

}  // namespace edgeshed::daemon

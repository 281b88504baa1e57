#include "law/limit_algorithm.h"

#include "law/aimd_limit.h"
#include "law/capacity_limit.h"
#include "law/gradient_limit.h"
#include "law/static_limit.h"

namespace edgeshed::law {

std::unique_ptr<LimitAlgorithm> make_limit_algorithm(const LimitConfig& config) {
  switch (config.algorithm) {
    case LimitAlgorithmKind::kStatic:
      return std::make_unique<StaticLimit>(config.static_limit);
    case LimitAlgorithmKind::kAimd:
      return std::make_unique<AimdLimit>(config.aimd);
    case LimitAlgorithmKind::kCapacity:
      return std::make_unique<CapacityLimit>(config.capacity);
    case LimitAlgorithmKind::kGradient:
      break;
  }
  return std::make_unique<GradientLimit>(config.gradient);
}

}  // namespace edgeshed::law

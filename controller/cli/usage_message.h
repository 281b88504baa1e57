// CLI11's own wording of a refused value ("--cap: Value x not in range 1 to
// 1000000000", "Could not convert: ...") told as edgeshed's other argument
// errors are: the option, the value quoted, and what it takes.
#pragma once

#include <string>

namespace edgeshed {

// The message, rewritten where CLI11 said it; unchanged otherwise.
std::string usage_message(const std::string& cli11_message);

}  // namespace edgeshed

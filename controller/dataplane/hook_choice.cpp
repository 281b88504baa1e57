#include "dataplane/hook_choice.h"

#include "dataplane/link_type.h"
#include "edgeshed/abi.h"

namespace edgeshed {

HookChoice choose_hook(const std::string& iface, std::optional<uint32_t> named) {
  auto driver = driver_name(iface);
  const bool veth = driver && *driver == "veth";
  if (named) {
    if (veth && *named == EDGESHED_HOOK_XDP) {
      return {*named,
              iface +
                  " is a veth: native XDP's RSTs reach its peer only while the peer runs "
                  "an XDP program or has GRO on, and are dropped otherwise (clients then "
                  "time out): use --hook xdp-generic (hook = \"xdp-generic\"), or turn "
                  "GRO on in the peer (`ethtool -K PEER gro on`)",
              true};
    }
    return {*named, ""};
  }
  if (veth) {
    return {EDGESHED_HOOK_XDP_GENERIC,
            iface +
                " is a veth: hook xdp-generic, whose RSTs reach the peer as they are (native "
                "XDP's reach it only while the peer runs an XDP program or has GRO on; name "
                "the hook to choose another)"};
  }
  return {EDGESHED_HOOK_XDP, ""};
}

}  // namespace edgeshed

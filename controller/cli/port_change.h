// What a re-attach did to the protected ports, said rather than done
// silently: "ports 80, 443, 8443:critical -> 80".
#pragma once

#include <string>
#include <vector>

#include "dataplane/maps.h"

namespace edgeshed {

// "80, 443/tcp+quic, 8443:critical": a port's class when not normal, its
// protocols when not TCP alone.
std::string describe_ports(const std::vector<PortClass>& ports);

// "ports 80, 8443:critical -> 80"; empty when nothing changed.
std::string describe_port_change(const std::vector<PortClass>& before,
                                 const std::vector<PortClass>& after);

}  // namespace edgeshed

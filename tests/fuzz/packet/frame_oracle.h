// An oracle for the packet fuzzer: what the data plane must make of a frame,
// written from the README's rules in plain C++ and sharing no code with
// bpf/parse.bpf.h, so that a disagreement between the two means one of them
// is wrong.
//
// The rules, in the order they apply:
//  - Ethernet, then at most four VLAN tags (802.1Q or 802.1ad, any order);
//    a fifth is more than the data plane walks: too deep.
//  - IPv4: version 4, IHL >= 5, total length >= IHL x 4 and within the
//    frame, or unparsed. Bytes after the total length are link-layer
//    padding and belong to no header. A fragment offset: fragment. MF with
//    offset 0 is a first fragment: parsed on, see TCP.
//  - IPv6: version 6, 40 + payload length within the frame, or unparsed.
//    Hop-by-hop, routing, destination options and fragment headers are
//    walked, at most six; each must lie within the payload length, or
//    unparsed. A fragment header with an offset is a fragment; one with M
//    and no offset makes a first fragment; one with neither (an atomic
//    fragment, RFC 6946) is skipped like any other extension header. A
//    seventh extension header is too deep: the data plane's stated limit.
//  - Any other L3 or L4 protocol: other (passes, not counted), or in a
//    first fragment, fragment.
//  - TCP: a header shorter than 20 bytes within the IP length is unparsed,
//    or in a first fragment too deep (the rest may come in the next one).
//    Only SYN without ACK, RST or FIN is looked at further; any other
//    segment is other (fragment in a first fragment), whatever its data
//    offset. A RST is never a connection attempt (RFC 9293 3.10.7.2: a
//    listener ignores it, and 3.10.7.1: a RST is never answered by a RST);
//    Linux's listener discards a SYN with FIN. A data offset below 5 is
//    unparsed; beyond the segment, unparsed or in a first fragment too deep.
//  - A SYN over IPv4 whose header checksum is wrong: bad checksum (passes,
//    counted; the kernel drops it).
//  - Too deep: dropped while the class of its source (its prefix's, else
//    normal) sheds by cap or fraction in enforce mode, else passes; counted.
//  - A first fragment's SYN is decided as any SYN, but shed it is dropped
//    and never answered with a RST.
//  - UDP (RFC 768), and in it QUIC's invariant long header (RFC 8999): a
//    UDP header past the frame's first 4,096 bytes is too deep (the data
//    plane's bound; its ports unread). A UDP header cut short within the IP
//    length is unparsed, or in a first fragment too deep. Over IPv6 a UDP
//    length of 0 is the packet's own (Linux's udpv6_rcv, as a jumbogram's),
//    or in a first fragment too deep. A UDP length below 8, or (outside a first fragment,
//    where it is the whole datagram's) past the IP length: unparsed. A
//    datagram of under 6 bytes holds no long header: other (each "other"
//    here is a fragment in a first fragment). Otherwise its
//    first 6 bytes must lie in the frame (else too deep in a first
//    fragment). No long-header bit: other (a short header: an open
//    connection). A version other than v1 (1) or v2 (0x6b3343cf), or a
//    type that is not the version's Initial (v1: 0, v2: 1): other. A DCID
//    length over 20, or the DCID and the SCID's length byte past the
//    datagram: unparsed (past the fragment: too deep). An SCID length over
//    20, or the SCID past the datagram: unparsed. Else a QUIC Initial, a new
//    connection, its size the datagram's payload.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace edgeshed::testing {

enum class FrameKind {
  kUnparsed,       // truncated or malformed: passes, counted as unparsed
  kFragment,       // IP fragment: passes, counted as fragment
  kOther,          // anything else that is not a new connection: passes
  kNewConnection,  // SYN without ACK or RST: classified by its port
  kTooDeep,        // headers deeper than walked: dropped while its class sheds
  kBadChecksum,    // a SYN whose IPv4 header checksum is wrong: decided as one,
                   // but where it would be shed it passes, counted
  kQuicInitial,    // a QUIC Initial: classified by its UDP port
};

const char* to_string(FrameKind kind);

struct FrameVerdict {
  FrameKind kind = FrameKind::kUnparsed;
  std::string why;  // for failure messages: which rule decided

  // Filled in for kNewConnection and kBadChecksum; family and src for kTooDeep too, when
  // the IP header was reached.
  int family = 0;  // AF_INET or AF_INET6
  size_t l3_offset = 0;
  size_t l4_offset = 0;  // the transport header's, from the frame's start
  size_t vlan_tags = 0;
  std::array<uint8_t, 16> src{};  // IPv4 uses the first 4 bytes
  std::array<uint8_t, 16> dst{};
  uint16_t sport = 0;
  uint16_t dport = 0;
  uint32_t seq = 0;
  uint8_t tcp_flags = 0;
  uint32_t payload_len = 0;          // TCP payload within the IP length; QUIC: the datagram's
  bool src_mac_group = false;        // the sender's MAC has the I/G bit set
  std::array<uint8_t, 6> dst_mac{};  // a RST answers only a frame to our own
  bool first_fragment = false;       // MF set, offset 0: never answered with a RST
  bool bad_ipv4_checksum = false;    // kQuicInitial: passes where it would be shed
  // kTooDeep: IPPROTO_TCP or IPPROTO_UDP when the cut header still gave the
  // ports (sport, dport), which decide the class; else 0.
  uint8_t cut_proto = 0;
  std::array<uint8_t, 6> src_mac{};  // kTooDeep before an IP header: what draws
};

// Whether a RST may answer this new connection: sender MAC unicast, and both
// IP addresses unicast and specified (rst_may_answer in bpf/rst_policy.bpf.h).
bool rst_may_answer(const FrameVerdict& v);

FrameVerdict classify_frame(std::span<const uint8_t> frame);

}  // namespace edgeshed::testing

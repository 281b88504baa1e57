#include "fuzz/packet/frame_oracle.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>

namespace edgeshed::testing {
namespace {

constexpr size_t kEthernetLen = 14;
constexpr size_t kMacLen = 6;  // the source MAC follows the destination
constexpr size_t kVlanLen = 4;
constexpr size_t kMaxVlanTags = 4;
constexpr size_t kIpv4MinLen = 20;
constexpr size_t kIpv6Len = 40;
constexpr size_t kMaxIpv6Ext = 6;
constexpr size_t kTcpMinLen = 20;
constexpr size_t kUdpLen = 8;
constexpr size_t kMaxUdpOffset = 4096;  // the data plane reads no UDP header past it
constexpr size_t kQuicLongFixed = 6;    // first byte, version, DCID length
constexpr size_t kQuicMaxCid = 20;
constexpr uint32_t kQuicV1 = 1;
constexpr uint32_t kQuicV2 = 0x6b3343cf;

constexpr uint8_t kFin = 0x01;
constexpr uint8_t kSyn = 0x02;
constexpr uint8_t kRst = 0x04;
constexpr uint8_t kAck = 0x10;

// A bounded view that never reads past its end: every accessor checks, so
// the oracle itself cannot be the thing that misreads a truncated frame.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  size_t size() const { return bytes_.size(); }
  bool has(size_t off, size_t len) const {
    return off <= bytes_.size() && len <= bytes_.size() - off;
  }
  uint8_t u8(size_t off) const { return bytes_[off]; }
  uint16_t u16(size_t off) const {
    return static_cast<uint16_t>(bytes_[off] << 8 | bytes_[off + 1]);
  }
  uint32_t u32(size_t off) const { return static_cast<uint32_t>(u16(off)) << 16 | u16(off + 2); }
  Cursor sub(size_t off, size_t len) const { return Cursor(bytes_.subspan(off, len)); }
  void copy(size_t off, size_t len, uint8_t* out) const {
    std::copy_n(bytes_.begin() + static_cast<long>(off), len, out);
  }

 private:
  std::span<const uint8_t> bytes_;
};

FrameVerdict verdict(FrameKind kind, std::string why) {
  FrameVerdict v;
  v.kind = kind;
  v.why = std::move(why);
  return v;
}

// v with the kind and the reason; the rest (family, source) stays.
FrameVerdict with_kind(FrameVerdict v, FrameKind kind, std::string why) {
  v.kind = kind;
  v.why = std::move(why);
  return v;
}

// A transport header cut short in a first fragment (kind kTooDeep): its
// ports when the cut leaves them.
FrameVerdict cut_with_ports(Cursor seg, FrameVerdict v, uint8_t proto, FrameKind kind,
                            std::string why) {
  constexpr size_t kPortsLen = 4;
  if (kind == FrameKind::kTooDeep && seg.has(0, kPortsLen)) {
    v.sport = seg.u16(0);
    v.dport = seg.u16(2);
    v.cut_proto = proto;
  }
  return with_kind(std::move(v), kind, std::move(why));
}

// The TCP segment as the IP layer delimits it. In a first fragment, a header
// cut short may go on in the next fragment: too deep, not malformed, and a
// segment that is no SYN is a fragment like any other.
FrameVerdict classify_tcp(Cursor seg, FrameVerdict v) {
  const FrameKind cut = v.first_fragment ? FrameKind::kTooDeep : FrameKind::kUnparsed;
  const FrameKind not_syn = v.first_fragment ? FrameKind::kFragment : FrameKind::kOther;
  if (!seg.has(0, kTcpMinLen))
    return cut_with_ports(seg, v, IPPROTO_TCP, cut, "TCP header cut short");
  const uint8_t flags = seg.u8(13);
  if (!(flags & kSyn)) return verdict(not_syn, "TCP without SYN");
  if (flags & kAck) return verdict(not_syn, "SYN with ACK");
  if (flags & kRst) return verdict(not_syn, "SYN with RST");
  if (flags & kFin) return verdict(not_syn, "SYN with FIN: a listener discards it");
  const size_t header_len = static_cast<size_t>(seg.u8(12) >> 4) * 4;
  if (header_len < kTcpMinLen) return verdict(FrameKind::kUnparsed, "TCP data offset below 5");
  if (header_len > seg.size())
    return cut_with_ports(seg, v, IPPROTO_TCP, cut, "TCP data offset past the segment");
  v.kind = FrameKind::kNewConnection;
  v.why = "SYN";
  v.sport = seg.u16(0);
  v.dport = seg.u16(2);
  v.seq = seg.u32(4);
  v.tcp_flags = flags;
  v.payload_len = static_cast<uint32_t>(seg.size() - header_len);
  return v;
}

FrameVerdict classify_udp(Cursor seg, FrameVerdict v) {
  const FrameKind cut = v.first_fragment ? FrameKind::kTooDeep : FrameKind::kUnparsed;
  const FrameKind other = v.first_fragment ? FrameKind::kFragment : FrameKind::kOther;
  if (v.l4_offset > kMaxUdpOffset)
    return with_kind(v, FrameKind::kTooDeep, "UDP header past 4,096 bytes");
  if (!seg.has(0, kUdpLen)) return cut_with_ports(seg, v, IPPROTO_UDP, cut, "UDP header cut short");
  size_t udp_len = seg.u16(4);
  // Linux (udpv6_rcv): over IPv6 a zero length is the packet's own, as a
  // jumbogram's; in a first fragment, the whole datagram's is not known.
  if (udp_len == 0 && v.family == AF_INET6) {
    if (v.first_fragment)
      return cut_with_ports(seg, v, IPPROTO_UDP, cut, "IPv6 UDP length 0 in a first fragment");
    udp_len = seg.size();
  }
  if (udp_len < kUdpLen) return verdict(FrameKind::kUnparsed, "UDP length below 8");
  if (!v.first_fragment && udp_len > seg.size())
    return verdict(FrameKind::kUnparsed, "UDP length past the IP length");
  const size_t datagram = udp_len - kUdpLen;
  const Cursor in_frame = seg.sub(kUdpLen, seg.size() - kUdpLen);
  if (datagram < kQuicLongFixed) return verdict(other, "UDP, too short for QUIC");
  if (!in_frame.has(0, kQuicLongFixed))
    return cut_with_ports(seg, v, IPPROTO_UDP, cut, "QUIC header past the fragment");
  const uint8_t first = in_frame.u8(0);
  if (!(first & 0x80)) return verdict(other, "QUIC short header");
  const uint32_t version = in_frame.u32(1);
  const unsigned type = (first >> 4) & 3;
  if (!(version == kQuicV1 && type == 0) && !(version == kQuicV2 && type == 1))
    return verdict(other, "not a QUIC v1 or v2 Initial");
  const size_t dcid_len = in_frame.u8(5);
  if (dcid_len > kQuicMaxCid) return verdict(FrameKind::kUnparsed, "DCID over 20 bytes");
  const size_t scid_at = kQuicLongFixed + dcid_len;
  if (scid_at + 1 > datagram) return verdict(FrameKind::kUnparsed, "DCID past the datagram");
  if (!in_frame.has(scid_at, 1))
    return cut_with_ports(seg, v, IPPROTO_UDP, cut, "SCID length past the fragment");
  const size_t scid_len = in_frame.u8(scid_at);
  if (scid_len > kQuicMaxCid) return verdict(FrameKind::kUnparsed, "SCID over 20 bytes");
  if (scid_at + 1 + scid_len > datagram)
    return verdict(FrameKind::kUnparsed, "SCID past the datagram");
  v.kind = FrameKind::kQuicInitial;
  v.why = "QUIC Initial";
  v.sport = seg.u16(0);
  v.dport = seg.u16(2);
  v.payload_len = static_cast<uint32_t>(datagram);
  return v;
}

// The transport of an IP packet: TCP, UDP (QUIC) or another.
FrameVerdict classify_transport(uint8_t protocol, Cursor seg, FrameVerdict v) {
  if (protocol == IPPROTO_TCP) return classify_tcp(seg, std::move(v));
  if (protocol == IPPROTO_UDP) return classify_udp(seg, std::move(v));
  return v.first_fragment ? verdict(FrameKind::kFragment, "first fragment, not TCP or UDP")
                          : verdict(FrameKind::kOther, "not TCP or UDP");
}

// RFC 1071: the one's complement sum of an intact header is all ones.
bool ipv4_header_sum_ok(Cursor header) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < header.size(); i += 2) sum += header.u16(i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

FrameVerdict classify_ipv4(Cursor l3, FrameVerdict v) {
  if (!l3.has(0, kIpv4MinLen)) return verdict(FrameKind::kUnparsed, "IPv4 header cut short");
  if (l3.u8(0) >> 4 != 4) return verdict(FrameKind::kUnparsed, "IPv4 ethertype, version not 4");
  const size_t header_len = static_cast<size_t>(l3.u8(0) & 0x0f) * 4;
  const size_t total = l3.u16(2);
  if (header_len < kIpv4MinLen) return verdict(FrameKind::kUnparsed, "IHL below 5");
  if (total < header_len) return verdict(FrameKind::kUnparsed, "total length below the IHL");
  if (total > l3.size()) return verdict(FrameKind::kUnparsed, "total length past the frame");
  const Cursor packet = l3.sub(0, total);  // the rest is padding
  const uint16_t frag = packet.u16(6);
  if (frag & 0x1fff) return verdict(FrameKind::kFragment, "IPv4 fragment offset");
  v.first_fragment = (frag & 0x2000) != 0;
  v.family = AF_INET;
  packet.copy(12, 4, v.src.data());
  packet.copy(16, 4, v.dst.data());
  v.l4_offset = v.l3_offset + header_len;
  v = classify_transport(packet.u8(9), packet.sub(header_len, total - header_len), std::move(v));
  const bool sum_ok = ipv4_header_sum_ok(packet.sub(0, header_len));
  if (v.kind == FrameKind::kNewConnection && !sum_ok) {
    return with_kind(v, FrameKind::kBadChecksum, "IPv4 header checksum");
  }
  v.bad_ipv4_checksum = v.kind == FrameKind::kQuicInitial && !sum_ok;
  return v;
}

FrameVerdict classify_ipv6(Cursor l3, FrameVerdict v) {
  if (!l3.has(0, kIpv6Len)) return verdict(FrameKind::kUnparsed, "IPv6 header cut short");
  if (l3.u8(0) >> 4 != 6) return verdict(FrameKind::kUnparsed, "IPv6 ethertype, version not 6");
  // Linux (ip6_rcv_core): a zero payload length before Hop-by-Hop is a
  // jumbogram's, the packet's own length, Jumbo option or not.
  const bool jumbo = l3.u16(4) == 0 && l3.u8(6) == IPPROTO_HOPOPTS;
  const size_t payload_len = jumbo ? l3.size() - kIpv6Len : l3.u16(4);
  if (kIpv6Len + payload_len > l3.size())
    return verdict(FrameKind::kUnparsed, "payload length past the frame");
  const Cursor payload = l3.sub(kIpv6Len, payload_len);  // the rest is padding
  uint8_t next = l3.u8(6);
  size_t pos = 0;
  v.family = AF_INET6;
  l3.copy(8, 16, v.src.data());
  for (size_t walked = 0;; ++walked) {
    const bool is_ext = next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING ||
                        next == IPPROTO_DSTOPTS || next == IPPROTO_FRAGMENT;
    if (!is_ext) break;
    if (walked == kMaxIpv6Ext)
      return with_kind(v, FrameKind::kTooDeep, "more than six extension headers");
    size_t len = 8;
    if (next != IPPROTO_FRAGMENT) {
      if (!payload.has(pos, 2)) return verdict(FrameKind::kUnparsed, "extension header cut short");
      len = (static_cast<size_t>(payload.u8(pos + 1)) + 1) * 8;
    }
    if (!payload.has(pos, len))
      return verdict(FrameKind::kUnparsed, "extension header past the payload");
    if (next == IPPROTO_FRAGMENT) {
      const uint16_t off_flags = payload.u16(pos + 2);
      if (off_flags & 0xfff8) return verdict(FrameKind::kFragment, "IPv6 fragment offset");
      v.first_fragment = (off_flags & 0x0001) != 0;
    }
    next = payload.u8(pos);
    pos += len;
  }
  l3.copy(24, 16, v.dst.data());
  v.l4_offset = v.l3_offset + kIpv6Len + pos;
  return classify_transport(next, payload.sub(pos, payload_len - pos), std::move(v));
}

}  // namespace

const char* to_string(FrameKind kind) {
  switch (kind) {
    case FrameKind::kUnparsed:
      return "unparsed";
    case FrameKind::kFragment:
      return "fragment";
    case FrameKind::kOther:
      return "other";
    case FrameKind::kNewConnection:
      return "new connection";
    case FrameKind::kTooDeep:
      return "too deep";
    case FrameKind::kBadChecksum:
      return "bad checksum";
    case FrameKind::kQuicInitial:
      return "quic initial";
  }
  return "?";
}

bool rst_may_answer(const FrameVerdict& v) {
  if (v.src_mac_group) return false;
  auto unicast = [&v](const std::array<uint8_t, 16>& a) {
    if (v.family == AF_INET) return a[0] != 0 && a[0] < 224;  // 0/8, 224/4 and above
    const bool unspecified = std::all_of(a.begin(), a.end(), [](uint8_t b) { return b == 0; });
    return !unspecified && a[0] != 0xff;
  };
  return unicast(v.src) && unicast(v.dst);
}

FrameVerdict classify_frame(std::span<const uint8_t> frame) {
  const Cursor f(frame);
  if (!f.has(0, kEthernetLen)) return verdict(FrameKind::kUnparsed, "Ethernet header cut short");
  size_t off = 12;  // the ethertype (or TPID) field
  size_t tags = 0;
  uint16_t type = f.u16(off);
  while (type == 0x8100 || type == 0x88a8) {
    if (tags == kMaxVlanTags) {
      FrameVerdict deep = verdict(FrameKind::kTooDeep, "a fifth VLAN tag");
      f.copy(kMacLen, kMacLen, deep.src_mac.data());  // the sender's MAC draws
      return deep;
    }
    if (!f.has(off + 2, kVlanLen)) return verdict(FrameKind::kUnparsed, "VLAN tag cut short");
    off += kVlanLen;
    type = f.u16(off);
    ++tags;
  }
  FrameVerdict v;
  v.l3_offset = off + 2;
  v.vlan_tags = tags;
  v.src_mac_group = (frame[kMacLen] & 0x01) != 0;
  f.copy(0, kMacLen, v.dst_mac.data());
  const Cursor l3 = f.sub(v.l3_offset, f.size() - v.l3_offset);
  if (type == 0x0800) return classify_ipv4(l3, std::move(v));
  if (type == 0x86dd) return classify_ipv6(l3, std::move(v));
  return verdict(FrameKind::kOther, "not IP");
}

}  // namespace edgeshed::testing

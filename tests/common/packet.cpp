#include "common/packet.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace edgeshed::testing {
namespace {

constexpr uint16_t kEthIpv4 = 0x0800;
constexpr uint16_t kEthIpv6 = 0x86dd;
constexpr uint16_t kEthArp = 0x0806;
constexpr size_t kNoSkip = static_cast<size_t>(-1);

// A malformed builder call is a bug in the test itself, like a failed CHECK.
void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "edgeshed::testing::PacketBuilder: %s\n", what);
    std::abort();
  }
}

void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}

void put32(Bytes& b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v >> 16));
  put16(b, static_cast<uint16_t>(v));
}

void set16(Bytes& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v >> 8);
  b[off + 1] = static_cast<uint8_t>(v);
}

uint16_t get16(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint16_t>(b[off] << 8 | b[off + 1]);
}

uint32_t get32(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint32_t>(get16(b, off)) << 16 | get16(b, off + 2);
}

void append(Bytes& b, std::span<const uint8_t> data) {
  b.insert(b.end(), data.begin(), data.end());
}

void pad_to_4(Bytes& b) {
  while (b.size() % 4 != 0) b.push_back(0);  // EOL, valid padding for IP and TCP options
}

// RFC 1071: sum of big-endian 16-bit words, an odd last byte padded with zero.
// skip_at marks a checksum field, counted as zero so callers need not blank it.
uint64_t add_words(uint64_t sum, std::span<const uint8_t> data, size_t skip_at = kNoSkip) {
  for (size_t i = 0; i < data.size(); i += 2) {
    if (i == skip_at) continue;
    sum += static_cast<uint64_t>(data[i]) << 8;
    if (i + 1 < data.size()) sum += data[i + 1];
  }
  return sum;
}

uint16_t fold(uint64_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// The v4 pseudo-header has a 16-bit length and the v6 one a 32-bit length;
// split into words both contribute the same, so one routine serves both.
uint16_t l4_checksum(std::span<const uint8_t> src, std::span<const uint8_t> dst, uint8_t proto,
                     std::span<const uint8_t> segment, size_t check_at) {
  uint64_t sum = add_words(add_words(0, src), dst);
  const uint64_t len = segment.size();
  sum += (len >> 16) + (len & 0xffff) + proto;
  return fold(add_words(sum, segment, check_at));
}

std::array<uint8_t, 16> parse_ip(int family, const std::string& text) {
  std::array<uint8_t, 16> addr{};
  require(inet_pton(family, text.c_str(), addr.data()) == 1, "bad IP address literal");
  return addr;
}

std::string ip_to_string(int family, const uint8_t* addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family, addr, buf, sizeof(buf));
  return buf;
}

}  // namespace

Bytes syn_options() {
  return {0x02, 0x04, 0x05, 0xb4,                          // MSS 1460
          0x04, 0x02,                                      // SACK permitted
          0x08, 0x0a, 0x00, 0x01, 0xe2, 0x40, 0, 0, 0, 0,  // timestamps, TSecr 0
          0x01,                                            // NOP
          0x03, 0x03, 0x07};                               // window scale 7
}

uint16_t ipv4_header_checksum(std::span<const uint8_t> header) {
  return fold(add_words(0, header, 10));
}

uint16_t tcp_checksum_v4(std::span<const uint8_t, 4> src, std::span<const uint8_t, 4> dst,
                         std::span<const uint8_t> segment) {
  return l4_checksum(src, dst, IPPROTO_TCP, segment, 16);
}

uint16_t tcp_checksum_v6(std::span<const uint8_t, 16> src, std::span<const uint8_t, 16> dst,
                         std::span<const uint8_t> segment) {
  return l4_checksum(src, dst, IPPROTO_TCP, segment, 16);
}

// 0 on the wire means "no checksum" (v4), so a computed 0 is sent as 0xffff.
uint16_t udp_checksum_v4(std::span<const uint8_t, 4> src, std::span<const uint8_t, 4> dst,
                         std::span<const uint8_t> datagram) {
  const uint16_t sum = l4_checksum(src, dst, IPPROTO_UDP, datagram, 6);
  return sum == 0 ? 0xffff : sum;
}

uint16_t udp_checksum_v6(std::span<const uint8_t, 16> src, std::span<const uint8_t, 16> dst,
                         std::span<const uint8_t> datagram) {
  const uint16_t sum = l4_checksum(src, dst, IPPROTO_UDP, datagram, 6);
  return sum == 0 ? 0xffff : sum;
}

// ---- PacketBuilder ----

PacketBuilder& PacketBuilder::eth(const Mac& src, const Mac& dst) {
  src_mac_ = src;
  dst_mac_ = dst;
  return *this;
}

PacketBuilder& PacketBuilder::vlan(uint16_t tpid, uint16_t vid) {
  require(vid < 4096, "VLAN id above 4095");
  vlans_.push_back({tpid, vid});
  return *this;
}

PacketBuilder& PacketBuilder::ipv4(const std::string& src, const std::string& dst) {
  l3_ = L3::kIpv4;
  src_ip_ = parse_ip(AF_INET, src);
  dst_ip_ = parse_ip(AF_INET, dst);
  return *this;
}

PacketBuilder& PacketBuilder::ipv6(const std::string& src, const std::string& dst) {
  l3_ = L3::kIpv6;
  src_ip_ = parse_ip(AF_INET6, src);
  dst_ip_ = parse_ip(AF_INET6, dst);
  return *this;
}

PacketBuilder& PacketBuilder::ttl(uint8_t ttl) {
  ttl_ = ttl;
  return *this;
}

PacketBuilder& PacketBuilder::ipv4_id(uint16_t id) {
  ipv4_id_ = id;
  return *this;
}

PacketBuilder& PacketBuilder::ipv4_options(Bytes options) {
  ipv4_options_ = std::move(options);
  pad_to_4(ipv4_options_);
  require(ipv4_options_.size() <= 40, "IPv4 options longer than 40 bytes");
  return *this;
}

PacketBuilder& PacketBuilder::ipv4_fragment(bool more_fragments, uint16_t offset_8byte_units) {
  require(offset_8byte_units < 0x2000, "fragment offset above 13 bits");
  ipv4_fragmented_ = true;
  ipv4_more_fragments_ = more_fragments;
  ipv4_frag_offset_ = offset_8byte_units;
  return *this;
}

PacketBuilder& PacketBuilder::ipv6_ext(uint8_t type, size_t len_bytes) {
  require(type != IPPROTO_FRAGMENT, "use ipv6_fragment() for a fragment header");
  require(len_bytes >= 8 && len_bytes % 8 == 0 && len_bytes <= 2048,
          "extension length must be 8..2048 in steps of 8");
  exts_.push_back({type, len_bytes, 0, false});
  return *this;
}

PacketBuilder& PacketBuilder::ipv6_fragment(uint16_t offset_8byte_units, bool more_fragments) {
  require(offset_8byte_units < 0x2000, "fragment offset above 13 bits");
  exts_.push_back({IPPROTO_FRAGMENT, 8, offset_8byte_units, more_fragments});
  return *this;
}

PacketBuilder& PacketBuilder::tcp(TcpSpec spec) {
  payload_kind_ = Payload::kTcp;
  tcp_ = std::move(spec);
  pad_to_4(tcp_.options);
  require(tcp_.options.size() <= 40, "TCP options longer than 40 bytes");
  return *this;
}

PacketBuilder& PacketBuilder::udp(uint16_t sport, uint16_t dport, Bytes payload) {
  payload_kind_ = Payload::kUdp;
  udp_sport_ = sport;
  udp_dport_ = dport;
  payload_ = std::move(payload);
  return *this;
}

PacketBuilder& PacketBuilder::arp() {
  payload_kind_ = Payload::kArp;
  return *this;
}

PacketBuilder& PacketBuilder::raw_ethertype(uint16_t ethertype, Bytes payload) {
  payload_kind_ = Payload::kRaw;
  raw_ethertype_ = ethertype;
  payload_ = std::move(payload);
  return *this;
}

PacketBuilder& PacketBuilder::udp_length_override(uint16_t length) {
  udp_length_override_ = length;
  return *this;
}

uint8_t quic_type_bits(uint32_t version, QuicType type) {
  const auto v1 = static_cast<unsigned>(type);
  return static_cast<uint8_t>(version == kQuicV2 ? (v1 + 1) % 4 : v1);
}

Bytes quic_long_packet(const QuicLongSpec& spec) {
  constexpr uint8_t kLongForm = 0x80, kFixedBit = 0x40;
  Bytes b;
  b.push_back(static_cast<uint8_t>(kLongForm | kFixedBit |
                                   quic_type_bits(spec.version, spec.type) << 4));
  put32(b, spec.version);
  b.push_back(static_cast<uint8_t>(spec.dcid.size()));
  append(b, spec.dcid);
  b.push_back(static_cast<uint8_t>(spec.scid.size()));
  append(b, spec.scid);
  if (b.size() < spec.size) b.resize(spec.size, 0);  // PADDING frames are zeros
  return b;
}

Bytes quic_short_packet(size_t size) {
  constexpr uint8_t kFixedBit = 0x40;
  Bytes b{kFixedBit};
  b.resize(std::max<size_t>(size, 1 + 8), 0xd1);
  return b;
}

PacketBuilder& PacketBuilder::ip_total_length_override(uint16_t length) {
  ip_length_override_ = length;
  return *this;
}

PacketBuilder& PacketBuilder::ipv4_ihl_override(uint8_t ihl_words) {
  ihl_override_ = ihl_words;
  return *this;
}

PacketBuilder& PacketBuilder::tcp_doff_override(uint8_t doff_words) {
  doff_override_ = doff_words;
  return *this;
}

PacketBuilder PacketBuilder::syn_v4(uint16_t sport, uint16_t dport, const std::string& src,
                                    const std::string& dst) {
  PacketBuilder b;
  b.ipv4(src, dst).tcp(
      {.sport = sport, .dport = dport, .seq = 0x11223344, .options = syn_options()});
  return b;
}

PacketBuilder PacketBuilder::syn_v6(uint16_t sport, uint16_t dport, const std::string& src,
                                    const std::string& dst) {
  PacketBuilder b;
  b.ipv6(src, dst).tcp(
      {.sport = sport, .dport = dport, .seq = 0x11223344, .options = syn_options()});
  return b;
}

uint8_t PacketBuilder::l4_proto() const {
  switch (payload_kind_) {
    case Payload::kTcp:
      return IPPROTO_TCP;
    case Payload::kUdp:
      return IPPROTO_UDP;
    default:
      return IPPROTO_NONE;
  }
}

Bytes PacketBuilder::build_l4() const {
  Bytes l4;
  size_t check_at = 0;
  if (payload_kind_ == Payload::kTcp) {
    const size_t header_len = 20 + tcp_.options.size();
    put16(l4, tcp_.sport);
    put16(l4, tcp_.dport);
    put32(l4, tcp_.seq);
    put32(l4, tcp_.ack);
    l4.push_back(static_cast<uint8_t>(doff_override_.value_or(header_len / 4) << 4));
    l4.push_back(tcp_.flags);
    put16(l4, tcp_.window);
    put16(l4, 0);
    put16(l4, tcp_.urgent);
    append(l4, tcp_.options);
    append(l4, tcp_.payload);
    check_at = 16;
  } else if (payload_kind_ == Payload::kUdp) {
    put16(l4, udp_sport_);
    put16(l4, udp_dport_);
    put16(l4, udp_length_override_.value_or(static_cast<uint16_t>(8 + payload_.size())));
    put16(l4, 0);
    append(l4, payload_);
    check_at = 6;
  } else {
    return l4;
  }
  uint16_t sum;
  const bool tcp = payload_kind_ == Payload::kTcp;
  if (l3_ == L3::kIpv4) {
    std::span<const uint8_t, 4> src(src_ip_.data(), 4), dst(dst_ip_.data(), 4);
    sum = tcp ? tcp_checksum_v4(src, dst, l4) : udp_checksum_v4(src, dst, l4);
  } else {
    sum = tcp ? tcp_checksum_v6(src_ip_, dst_ip_, l4) : udp_checksum_v6(src_ip_, dst_ip_, l4);
  }
  set16(l4, check_at, sum);
  return l4;
}

Bytes PacketBuilder::build_ipv4(const Bytes& l4) const {
  const size_t header_len = 20 + ipv4_options_.size();
  const uint16_t frag =
      ipv4_fragmented_
          ? static_cast<uint16_t>((ipv4_more_fragments_ ? 0x2000 : 0) | ipv4_frag_offset_)
          : 0x4000;  // DF
  Bytes ip;
  ip.push_back(static_cast<uint8_t>(0x40 | (ihl_override_.value_or(header_len / 4) & 0xf)));
  ip.push_back(0);  // DSCP/ECN
  put16(ip, ip_length_override_.value_or(static_cast<uint16_t>(header_len + l4.size())));
  put16(ip, ipv4_id_);
  put16(ip, frag);
  ip.push_back(ttl_);
  ip.push_back(l4_proto());
  put16(ip, 0);
  ip.insert(ip.end(), src_ip_.begin(), src_ip_.begin() + 4);
  ip.insert(ip.end(), dst_ip_.begin(), dst_ip_.begin() + 4);
  append(ip, ipv4_options_);
  set16(ip, 10, ipv4_header_checksum(ip));
  append(ip, l4);
  return ip;
}

Bytes PacketBuilder::build_ipv6(const Bytes& l4) const {
  Bytes body;
  for (size_t i = 0; i < exts_.size(); ++i) {
    const Ext& e = exts_[i];
    const uint8_t next = i + 1 < exts_.size() ? exts_[i + 1].type : l4_proto();
    body.push_back(next);
    if (e.type == IPPROTO_FRAGMENT) {
      body.push_back(0);
      put16(body, static_cast<uint16_t>(e.frag_offset << 3 | (e.more_fragments ? 1 : 0)));
      put32(body, 0x00c0ffee);  // identification
      continue;
    }
    body.push_back(static_cast<uint8_t>(e.len / 8 - 1));
    const size_t start = body.size();
    body.resize(start + e.len - 2, 0);
    if (e.type == IPPROTO_HOPOPTS || e.type == IPPROTO_DSTOPTS) {
      body[start] = 1;  // one PadN covering the rest keeps the TLV walk valid
      body[start + 1] = static_cast<uint8_t>(e.len - 4);
    }
  }
  append(body, l4);

  Bytes ip;
  put32(ip, 0x60000000);  // version 6, traffic class 0, flow label 0
  put16(ip, ip_length_override_.value_or(static_cast<uint16_t>(body.size())));
  ip.push_back(exts_.empty() ? l4_proto() : exts_[0].type);
  ip.push_back(ttl_);
  append(ip, src_ip_);
  append(ip, dst_ip_);
  append(ip, body);
  return ip;
}

Bytes PacketBuilder::build() const {
  Bytes f;
  append(f, dst_mac_);
  append(f, src_mac_);
  for (const Vlan& v : vlans_) {
    put16(f, v.tpid);
    put16(f, v.vid);  // PCP 0, DEI 0
  }
  if (payload_kind_ == Payload::kArp) {
    put16(f, kEthArp);
    put16(f, 1);  // Ethernet
    put16(f, kEthIpv4);
    f.push_back(6);
    f.push_back(4);
    put16(f, 1);  // request
    append(f, src_mac_);
    f.insert(f.end(), src_ip_.begin(), src_ip_.begin() + 4);
    f.insert(f.end(), 6, 0);
    f.insert(f.end(), dst_ip_.begin(), dst_ip_.begin() + 4);
  } else if (payload_kind_ == Payload::kRaw) {
    put16(f, raw_ethertype_);
    append(f, payload_);
  } else {
    require(l3_ != L3::kNone, "call ipv4() or ipv6(), arp() or raw_ethertype()");
    put16(f, l3_ == L3::kIpv4 ? kEthIpv4 : kEthIpv6);
    const Bytes l4 = build_l4();
    append(f, l3_ == L3::kIpv4 ? build_ipv4(l4) : build_ipv6(l4));
  }
  return f;
}

// ---- Parser ----

namespace {

// False only when the header itself is cut short or inconsistent.
bool parse_l4(std::span<const uint8_t> seg, std::span<const uint8_t> src,
              std::span<const uint8_t> dst, ParsedFrame& p) {
  const bool v4 = p.family == AF_INET;
  if (p.l4_proto == IPPROTO_TCP) {
    if (seg.size() < 20) return false;
    const uint8_t doff = seg[12] >> 4;
    if (doff < 5 || doff * size_t{4} > seg.size()) return false;
    p.has_tcp = true;
    p.sport = get16(seg, 0);
    p.dport = get16(seg, 2);
    p.seq = get32(seg, 4);
    p.ack = get32(seg, 8);
    p.doff = doff;
    p.tcp_flags = seg[13];
    p.window = get16(seg, 14);
    p.l4_checksum = get16(seg, 16);
    p.urgent = get16(seg, 18);
    const ptrdiff_t header_len = ptrdiff_t{doff} * 4;
    p.tcp_options.assign(seg.begin() + 20, seg.begin() + header_len);
    p.payload.assign(seg.begin() + header_len, seg.end());
    p.tcp_checksum_ok =
        p.l4_checksum == (v4 ? tcp_checksum_v4(src.first<4>(), dst.first<4>(), seg)
                             : tcp_checksum_v6(src.first<16>(), dst.first<16>(), seg));
  } else if (p.l4_proto == IPPROTO_UDP) {
    if (seg.size() < 8) return false;
    p.has_udp = true;
    p.sport = get16(seg, 0);
    p.dport = get16(seg, 2);
    p.l4_checksum = get16(seg, 6);
    p.payload.assign(seg.begin() + 8, seg.end());
    p.udp_checksum_ok =
        (v4 && p.l4_checksum == 0) ||
        p.l4_checksum == (v4 ? udp_checksum_v4(src.first<4>(), dst.first<4>(), seg)
                             : udp_checksum_v6(src.first<16>(), dst.first<16>(), seg));
  }
  return true;
}

bool parse_ipv4(std::span<const uint8_t> ip, ParsedFrame& p) {
  if (ip.size() < 20 || ip[0] >> 4 != 4) return false;
  p.ihl = ip[0] & 0xf;
  const size_t header_len = size_t{p.ihl} * 4;
  p.ip_total_length = get16(ip, 2);
  if (p.ihl < 5 || p.ip_total_length < header_len || p.ip_total_length > ip.size()) return false;
  p.family = AF_INET;
  p.exact_length = p.ip_total_length == ip.size();
  p.ip_id = get16(ip, 4);
  const uint16_t frag = get16(ip, 6);
  p.dont_fragment = frag & 0x4000;
  p.more_fragments = frag & 0x2000;
  p.frag_offset = frag & 0x1fff;
  p.is_fragment = p.more_fragments || p.frag_offset != 0;
  p.ttl = ip[8];
  p.l4_proto = ip[9];
  p.ipv4_checksum_ok = get16(ip, 10) == ipv4_header_checksum(ip.first(header_len));
  p.src_ip = ip_to_string(AF_INET, &ip[12]);
  p.dst_ip = ip_to_string(AF_INET, &ip[16]);
  p.ipv4_options.assign(ip.begin() + 20, ip.begin() + header_len);
  const auto seg = ip.subspan(header_len, p.ip_total_length - header_len);
  // A first fragment may end inside the L4 header; that is not a parse error.
  if (p.frag_offset == 0 && !parse_l4(seg, ip.subspan(12, 4), ip.subspan(16, 4), p)) {
    return p.is_fragment;
  }
  return true;
}

bool parse_ipv6(std::span<const uint8_t> ip, ParsedFrame& p) {
  if (ip.size() < 40 || ip[0] >> 4 != 6) return false;
  p.ipv6_payload_length = get16(ip, 4);
  if (40u + p.ipv6_payload_length > ip.size()) return false;
  p.family = AF_INET6;
  p.exact_length = 40u + p.ipv6_payload_length == ip.size();
  p.ipv6_next_header = ip[6];
  p.ttl = ip[7];
  p.src_ip = ip_to_string(AF_INET6, &ip[8]);
  p.dst_ip = ip_to_string(AF_INET6, &ip[24]);
  auto rest = ip.subspan(40, p.ipv6_payload_length);
  uint8_t next = p.ipv6_next_header;
  while (next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING || next == IPPROTO_DSTOPTS ||
         next == IPPROTO_FRAGMENT) {
    if (rest.size() < 8) return false;
    size_t len = 8;
    if (next == IPPROTO_FRAGMENT) {
      p.is_fragment = true;
      p.frag_offset = get16(rest, 2) >> 3;
      p.more_fragments = rest[3] & 1;
    } else {
      len = (size_t{rest[1]} + 1) * 8;
      if (rest.size() < len) return false;
    }
    p.ipv6_ext_types.push_back(next);
    next = rest[0];
    rest = rest.subspan(len);
  }
  p.l4_proto = next;
  if (p.frag_offset == 0 && !parse_l4(rest, ip.subspan(8, 16), ip.subspan(24, 16), p)) {
    return p.is_fragment;
  }
  return true;
}

}  // namespace

std::optional<ParsedFrame> parse_frame(std::span<const uint8_t> frame) {
  if (frame.size() < 14) return std::nullopt;
  ParsedFrame p;
  std::copy_n(frame.begin(), 6, p.dst_mac.begin());
  std::copy_n(frame.begin() + 6, 6, p.src_mac.begin());
  uint16_t type = get16(frame, 12);
  size_t off = 14;
  while (type == 0x8100 || type == 0x88a8) {
    if (frame.size() < off + 4) return std::nullopt;
    p.vlans.push_back({type, static_cast<uint16_t>(get16(frame, off) & 0xfff)});
    type = get16(frame, off + 2);
    off += 4;
  }
  p.ethertype = type;
  const auto l3 = frame.subspan(off);
  if (type == kEthIpv4 && !parse_ipv4(l3, p)) return std::nullopt;
  if (type == kEthIpv6 && !parse_ipv6(l3, p)) return std::nullopt;
  return p;
}

}  // namespace edgeshed::testing

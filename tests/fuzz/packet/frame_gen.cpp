#include "fuzz/packet/frame_gen.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>

namespace edgeshed::testing {
namespace {

constexpr uint16_t kQ = 0x8100;
constexpr uint16_t kAd = 0x88a8;

// Values that sit on the boundaries the parser checks: lengths, versions,
// flags, next headers, ethertype halves.
constexpr std::array<uint8_t, 28> kInterestingBytes = {
    0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x0f, 0x10, 0x11, 0x12, 0x14, 0x2b, 0x2c, 0x3c,
    0x40, 0x45, 0x46, 0x4f, 0x50, 0x60, 0x7f, 0x80, 0x81, 0x86, 0x88, 0xa8, 0xdd, 0xff};

// A few bytes of the frame where a header could be, weighted to the start:
// edits deep in a payload change nothing the parser reads.
size_t header_position(FrameGenerator& g, size_t size) {
  const size_t limit = g.chance(0.9) ? std::min<size_t>(size, 140) : size;
  return static_cast<size_t>(g.draw(limit));
}

}  // namespace

std::string FrameGenerator::random_v4_source() {
  std::array<uint8_t, 4> a{};
  switch (draw(4)) {
    case 0:
      a = {203, 0, 113, static_cast<uint8_t>(draw(256))};  // the critical override
      break;
    case 1:
      a = {192, 0, 2, static_cast<uint8_t>(draw(256))};
      break;
    default:
      for (auto& b : a) b = static_cast<uint8_t>(draw(256));
  }
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, a.data(), buf, sizeof(buf));
  return buf;
}

std::string FrameGenerator::random_v6_source() {
  std::array<uint8_t, 16> a{};
  for (auto& b : a) b = static_cast<uint8_t>(draw(256));
  if (draw(3) != 0) {  // 2001:db8::/32, a third of those in the background override
    a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8;
    if (chance(0.33)) a[4] = 0xff, a[5] = 0xff;
  }
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, a.data(), buf, sizeof(buf));
  return buf;
}

uint16_t FrameGenerator::random_port() {
  static constexpr std::array<uint16_t, 4> kPorts = {80, 443, 8080, 22};
  return draw(5) < 4 ? kPorts[draw(kPorts.size())] : static_cast<uint16_t>(draw(65536));
}

// A QUIC long header, mostly an Initial of v1 or v2, with connection IDs
// around the 20-byte limit and sizes around the 1,200-byte minimum.
Bytes FrameGenerator::random_quic() {
  QuicLongSpec q;
  q.version = std::array{kQuicV1, kQuicV2, static_cast<uint32_t>(draw(1ull << 32))}[draw(3)];
  q.type = chance(0.7) ? QuicType::kInitial : static_cast<QuicType>(draw(4));
  q.dcid = random_bytes_of(draw(4) ? draw(21) : draw(256));
  q.scid = random_bytes_of(draw(4) ? draw(21) : draw(256));
  q.size = draw(3) ? 1190 + draw(20) : draw(1300);
  Bytes b = quic_long_packet(q);
  if (chance(0.1)) b[0] = static_cast<uint8_t>(draw(256));
  return b;
}

Bytes FrameGenerator::random_bytes_of(size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(draw(256));
  return b;
}

Bytes FrameGenerator::valid_syn() {
  PacketBuilder b;
  const size_t tags = draw(4) == 0 ? 1 + draw(2) : 0;
  for (size_t i = 0; i < tags; ++i)
    b.vlan(chance(0.5) ? kQ : kAd, static_cast<uint16_t>(draw(4096)));
  const bool v6 = chance(0.5);
  if (v6) {
    b.ipv6(random_v6_source(), "2001:db8::2");
    if (chance(0.4)) {
      const size_t n = 1 + draw(6);
      for (size_t i = 0; i < n; ++i) {
        static constexpr std::array<uint8_t, 3> kExt = {IPPROTO_HOPOPTS, IPPROTO_ROUTING,
                                                        IPPROTO_DSTOPTS};
        if (chance(0.2)) {
          b.ipv6_fragment(0, false);  // atomic: still a whole packet
        } else {
          b.ipv6_ext(kExt[draw(kExt.size())], 8 * (1 + draw(4)));
        }
      }
    }
  } else {
    b.ipv4(random_v4_source(), "198.51.100.2");
    if (chance(0.3)) b.ipv4_options(random_bytes_of(draw(41)));
    if (chance(0.1)) b.ipv4_fragment(false, 0);  // DF clear, not a fragment
    b.ipv4_id(static_cast<uint16_t>(draw(65536)));
  }
  TcpSpec t;
  t.sport = static_cast<uint16_t>(draw(65536));
  t.dport = random_port();
  t.seq = static_cast<uint32_t>(draw(1ull << 32));
  t.flags = kSyn;
  if (chance(0.2)) t.flags |= static_cast<uint8_t>(draw(256)) & ~(kAck | kRst);  // FIN, PSH, ECE...
  t.options = chance(0.7) ? syn_options() : random_bytes_of(draw(41) & ~3u);
  if (chance(0.2)) t.payload = random_bytes_of(draw(200));
  b.ttl(static_cast<uint8_t>(draw(256)));
  b.tcp(std::move(t));
  Bytes frame = b.build();
  if (chance(0.15)) {  // Ethernet padding, or whatever a NIC left after the IP packet
    Bytes pad = random_bytes_of(1 + draw(24));
    frame.insert(frame.end(), pad.begin(), pad.end());
  }
  return frame;
}

Bytes FrameGenerator::random_headers() {
  PacketBuilder b;
  const size_t tags = draw(5) == 0 ? 1 + draw(6) : 0;  // past the four walked sometimes
  for (size_t i = 0; i < tags; ++i) {
    b.vlan(draw(4) == 0 ? static_cast<uint16_t>(draw(65536)) : (chance(0.5) ? kQ : kAd),
           static_cast<uint16_t>(draw(4096)));
  }
  const uint64_t l3 = draw(10);
  if (l3 == 0)
    return b.raw_ethertype(static_cast<uint16_t>(draw(65536)), random_bytes_of(draw(100))).build();
  if (l3 == 1) return b.ipv4("192.0.2.1", "198.51.100.2").arp().build();
  const bool v6 = l3 >= 6;
  if (v6) {
    b.ipv6(random_v6_source(), "2001:db8::2");
    const size_t n = draw(9);  // beyond the six the data plane walks
    for (size_t i = 0; i < n; ++i) {
      switch (draw(6)) {
        case 0:
          b.ipv6_fragment(static_cast<uint16_t>(draw(3) ? 0 : draw(0x2000)), chance(0.3));
          break;
        case 1: {  // one the parser does not walk: AH, ESP, no next header, mobility...
          const auto type = static_cast<uint8_t>(draw(256));
          b.ipv6_ext(type == IPPROTO_FRAGMENT ? uint8_t{IPPROTO_NONE} : type, 8 * (1 + draw(3)));
          break;
        }
        default:
          b.ipv6_ext(static_cast<uint8_t>(std::array{0, 43, 60}[draw(3)]), 8 * (1 + draw(3)));
      }
    }
  } else {
    b.ipv4(random_v4_source(), "198.51.100.2");
    if (chance(0.3)) b.ipv4_options(random_bytes_of(draw(41)));
    if (chance(0.3))
      b.ipv4_fragment(chance(0.5), static_cast<uint16_t>(draw(3) ? 0 : draw(0x2000)));
    if (chance(0.2)) b.ipv4_ihl_override(static_cast<uint8_t>(draw(16)));
  }
  if (chance(0.2))
    b.ip_total_length_override(static_cast<uint16_t>(draw(4) ? draw(200) : draw(65536)));
  if (chance(0.1)) {
    b.udp(static_cast<uint16_t>(draw(65536)), random_port(), random_bytes_of(draw(64)));
  } else if (chance(0.1)) {
    b.udp(static_cast<uint16_t>(draw(65536)), random_port(), random_quic());
    if (chance(0.1)) b.udp_length_override(static_cast<uint16_t>(draw(1400)));
  } else {
    TcpSpec t;
    t.sport = static_cast<uint16_t>(draw(65536));
    t.dport = random_port();
    t.seq = static_cast<uint32_t>(draw(1ull << 32));
    t.ack = static_cast<uint32_t>(draw(1ull << 32));
    t.flags = chance(0.5) ? kSyn : static_cast<uint8_t>(draw(256));
    t.options = random_bytes_of(draw(41) & ~3u);
    t.payload = random_bytes_of(draw(4) ? 0 : draw(300));
    b.tcp(std::move(t));
    if (chance(0.2)) b.tcp_doff_override(static_cast<uint8_t>(draw(16)));
  }
  Bytes frame = b.build();
  if (chance(0.2)) {
    Bytes pad = random_bytes_of(1 + draw(30));
    frame.insert(frame.end(), pad.begin(), pad.end());
  }
  if (frame.size() > kMaxFuzzFrame) frame.resize(kMaxFuzzFrame);
  return frame;
}

Bytes FrameGenerator::random_bytes() {
  Bytes frame = random_bytes_of(14 + draw(draw(8) ? 160 : kMaxFuzzFrame - 14));
  static constexpr std::array<uint16_t, 5> kTypes = {0x0800, 0x86dd, kQ, kAd, 0x0806};
  if (draw(5) != 0) {
    const uint16_t type = kTypes[draw(kTypes.size())];
    frame[12] = static_cast<uint8_t>(type >> 8);
    frame[13] = static_cast<uint8_t>(type);
  }
  // A version nibble that matches the ethertype gets the bytes past the
  // first check most of the time.
  if (frame.size() > 14 && chance(0.7)) {
    const bool v6 = frame[12] == 0x86 && frame[13] == 0xdd;
    frame[14] = static_cast<uint8_t>((v6 ? 0x60 : 0x40) | (frame[14] & 0x0f));
  }
  return frame;
}

void FrameGenerator::mutate_once(Bytes& f) {
  switch (draw(9)) {
    case 0:
      f[header_position(*this, f.size())] = static_cast<uint8_t>(draw(256));
      break;
    case 1:
      f[header_position(*this, f.size())] ^= static_cast<uint8_t>(1u << draw(8));
      break;
    case 2:
    case 3:
      f[header_position(*this, f.size())] = kInterestingBytes[draw(kInterestingBytes.size())];
      break;
    case 4: {  // a 16-bit field (a length) off by a little, or at an extreme
      const size_t at = header_position(*this, f.size() - 1);
      uint16_t v = static_cast<uint16_t>(f[at] << 8 | f[at + 1]);
      static constexpr std::array<int, 6> kDelta = {-8, -4, -1, 1, 4, 8};
      v = draw(4) ? static_cast<uint16_t>(v + kDelta[draw(kDelta.size())])
                  : static_cast<uint16_t>(std::array{0, 0xffff, 0x8000, 0x7fff}[draw(4)]);
      f[at] = static_cast<uint8_t>(v >> 8);
      f[at + 1] = static_cast<uint8_t>(v);
      break;
    }
    case 5:  // cut short
      f.resize(14 + draw(f.size() - 13));
      break;
    case 6: {  // grown: trailing bytes
      Bytes tail = random_bytes_of(1 + draw(40));
      f.insert(f.end(), tail.begin(), tail.end());
      break;
    }
    case 7:  // a byte inserted: every later field shifts
      f.insert(f.begin() + static_cast<long>(header_position(*this, f.size())),
               static_cast<uint8_t>(draw(256)));
      break;
    default:  // a byte deleted
      if (f.size() > 14) f.erase(f.begin() + static_cast<long>(header_position(*this, f.size())));
  }
  if (f.size() > kMaxFuzzFrame) f.resize(kMaxFuzzFrame);
}

Bytes FrameGenerator::mutate(Bytes frame) {
  const size_t edits = 1 + draw(draw(3) ? 2 : 4);
  for (size_t i = 0; i < edits; ++i) mutate_once(frame);
  return frame;
}

// The mix, in percent: 40 mutated SYNs (the frames closest to a decision),
// 10 SYNs as built, 30 random headers (a third of them mutated), 20 random
// bytes (mutated 8 in 20).
Bytes FrameGenerator::next() {
  const uint64_t pick = draw(100);
  if (pick < 10) return valid_syn();
  if (pick < 50) return mutate(valid_syn());
  if (pick < 70) return random_headers();
  if (pick < 80) return mutate(random_headers());
  if (pick < 92) return random_bytes();
  return mutate(random_bytes());
}

}  // namespace edgeshed::testing

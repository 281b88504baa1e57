// Test frames for BPF_PROG_TEST_RUN: a builder that crafts Ethernet frames, and a
// checker that parses them back byte by byte. The checker shares no code with
// the data plane, so it can judge the frames (RST replies) the data plane emits.
#ifndef EDGESHED_TESTS_COMMON_PACKET_H_
#define EDGESHED_TESTS_COMMON_PACKET_H_

#include <netinet/in.h>  // IPPROTO_* for callers
#include <sys/socket.h>  // AF_* for callers

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace edgeshed::testing {

using Bytes = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;

inline constexpr uint8_t kFin = 0x01;
inline constexpr uint8_t kSyn = 0x02;
inline constexpr uint8_t kRst = 0x04;
inline constexpr uint8_t kPsh = 0x08;
inline constexpr uint8_t kAck = 0x10;
inline constexpr uint8_t kUrg = 0x20;

// The source is locally administered, so it never collides with a real NIC.
// The destination is the address of loopback, the device of the kernel's
// test runs: TC's run marks a frame to it PACKET_HOST, to any other
// unicast MAC PACKET_OTHERHOST, so only this one may be answered with a
// RST (the data plane's fixture gives XDP the same address as its own).
inline constexpr Mac kDefaultSrcMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
inline constexpr Mac kDefaultDstMac = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

struct TcpSpec {
  uint16_t sport = 40000;
  uint16_t dport = 80;
  uint32_t seq = 0;
  uint32_t ack = 0;
  uint8_t flags = kSyn;
  uint16_t window = 64240;
  uint16_t urgent = 0;
  Bytes options{};  // padded with EOL to a multiple of 4 by the builder
  Bytes payload{};
};

// QUIC versions, and the type bits of a long header (the first byte's bits
// 5-4): v1 (RFC 9000) numbers Initial 0, 0-RTT 1, Handshake 2, Retry 3; v2
// (RFC 9369) numbers them 1, 2, 3, 0.
inline constexpr uint32_t kQuicV1 = 0x00000001;
inline constexpr uint32_t kQuicV2 = 0x6b3343cf;
enum class QuicType { kInitial, kZeroRtt, kHandshake, kRetry };
uint8_t quic_type_bits(uint32_t version, QuicType type);

// A QUIC long-header packet: the invariant header (first byte with the form
// and fixed bits and the type bits, version, DCID, SCID), then filler up to
// `size` bytes of UDP payload (not less than the header). No packet
// protection: the data plane reads only the invariant header.
struct QuicLongSpec {
  uint32_t version = kQuicV1;
  QuicType type = QuicType::kInitial;
  Bytes dcid = Bytes(8, 0xd1);
  Bytes scid = Bytes(8, 0x5c);
  size_t size = 1200;  // RFC 9000 14.1: a client pads its Initial to 1,200
};
Bytes quic_long_packet(const QuicLongSpec& spec);
// A short-header (1-RTT) packet with an 8-byte DCID, `size` bytes long.
Bytes quic_short_packet(size_t size = 100);

// The 20-byte option block of a Linux SYN: MSS 1460, SACK-permitted,
// timestamps, NOP, window scale 7.
Bytes syn_options();

// Fluent frame builder. Calls may come in any order, except that vlan() and
// ipv6_ext()/ipv6_fragment() append in call order. Lengths and checksums are
// filled in by build(); the *_override calls write a wrong field on purpose
// (checksums are still computed over the header as emitted). Invalid arguments
// (bad address literal, ext length not a multiple of 8) abort: they are bugs in
// the test, not conditions to test.
class PacketBuilder {
 public:
  PacketBuilder& eth(const Mac& src, const Mac& dst);
  PacketBuilder& vlan(uint16_t tpid, uint16_t vid);  // outer first
  PacketBuilder& ipv4(const std::string& src, const std::string& dst);
  PacketBuilder& ipv6(const std::string& src, const std::string& dst);
  PacketBuilder& ttl(uint8_t ttl);  // IPv6 hop limit too; default 64
  PacketBuilder& ipv4_id(uint16_t id);
  PacketBuilder& ipv4_options(Bytes options);  // padded with EOL to 4
  // Clears DF, which is otherwise set (as Linux does for TCP).
  PacketBuilder& ipv4_fragment(bool more_fragments, uint16_t offset_8byte_units);
  // HOPOPTS/DSTOPTS are filled with PadN, ROUTING with zeros (type 0,
  // segments left 0). len_bytes: multiple of 8, at least 8.
  PacketBuilder& ipv6_ext(uint8_t type, size_t len_bytes);
  // Note the argument order differs from ipv4_fragment().
  PacketBuilder& ipv6_fragment(uint16_t offset_8byte_units, bool more_fragments);
  PacketBuilder& tcp(TcpSpec spec);
  PacketBuilder& udp(uint16_t sport, uint16_t dport, Bytes payload = {});
  // ARP request (who-has the ipv4() destination), ignoring any IP layer.
  PacketBuilder& arp();
  PacketBuilder& raw_ethertype(uint16_t ethertype, Bytes payload);

  // IPv4 total length, or IPv6 payload length.
  PacketBuilder& ip_total_length_override(uint16_t length);
  PacketBuilder& ipv4_ihl_override(uint8_t ihl_words);
  PacketBuilder& tcp_doff_override(uint8_t doff_words);
  PacketBuilder& udp_length_override(uint16_t length);

  Bytes build() const;

  // A valid SYN with syn_options(); chain more calls before build().
  static PacketBuilder syn_v4(uint16_t sport = 40000, uint16_t dport = 80,
                              const std::string& src = "192.0.2.1",
                              const std::string& dst = "198.51.100.2");
  static PacketBuilder syn_v6(uint16_t sport = 40000, uint16_t dport = 80,
                              const std::string& src = "2001:db8::1",
                              const std::string& dst = "2001:db8::2");

 private:
  enum class L3 { kNone, kIpv4, kIpv6 };
  enum class Payload { kNone, kTcp, kUdp, kArp, kRaw };
  struct Vlan {
    uint16_t tpid;
    uint16_t vid;
  };
  struct Ext {
    uint8_t type;
    size_t len;
    uint16_t frag_offset;  // for IPPROTO_FRAGMENT only
    bool more_fragments;
  };

  Bytes build_l4() const;
  Bytes build_ipv4(const Bytes& l4) const;
  Bytes build_ipv6(const Bytes& l4) const;
  uint8_t l4_proto() const;

  Mac src_mac_ = kDefaultSrcMac;
  Mac dst_mac_ = kDefaultDstMac;
  std::vector<Vlan> vlans_;
  L3 l3_ = L3::kNone;
  std::array<uint8_t, 16> src_ip_{};
  std::array<uint8_t, 16> dst_ip_{};
  uint8_t ttl_ = 64;
  uint16_t ipv4_id_ = 0;
  Bytes ipv4_options_;
  bool ipv4_fragmented_ = false;
  bool ipv4_more_fragments_ = false;
  uint16_t ipv4_frag_offset_ = 0;
  std::vector<Ext> exts_;
  Payload payload_kind_ = Payload::kNone;
  TcpSpec tcp_;
  uint16_t udp_sport_ = 0;
  uint16_t udp_dport_ = 0;
  uint16_t raw_ethertype_ = 0;
  Bytes payload_;  // UDP or raw payload
  std::optional<uint16_t> ip_length_override_;
  std::optional<uint8_t> ihl_override_;
  std::optional<uint8_t> doff_override_;
  std::optional<uint16_t> udp_length_override_;
};

struct VlanTag {
  uint16_t tpid = 0;
  uint16_t vid = 0;
};

// What parse_frame() found. Fields of layers that are absent stay zero/empty.
struct ParsedFrame {
  Mac dst_mac{};
  Mac src_mac{};
  std::vector<VlanTag> vlans;  // outer first
  uint16_t ethertype = 0;      // after the VLAN tags

  int family = AF_UNSPEC;  // AF_INET, AF_INET6 or AF_UNSPEC (not IP)
  std::string src_ip;
  std::string dst_ip;
  uint8_t ttl = 0;  // hop limit for IPv6
  // IPv4.
  uint8_t ihl = 0;  // 32-bit words
  uint16_t ip_total_length = 0;
  uint16_t ip_id = 0;
  bool dont_fragment = false;
  Bytes ipv4_options;
  bool ipv4_checksum_ok = false;
  // IPv6.
  uint16_t ipv6_payload_length = 0;
  uint8_t ipv6_next_header = 0;  // of the fixed header
  std::vector<uint8_t> ipv6_ext_types;
  // Both families: a v6 fragment header sets these too.
  bool is_fragment = false;
  bool more_fragments = false;
  uint16_t frag_offset = 0;  // 8-byte units
  uint8_t l4_proto = 0;      // after extension headers
  // True when the frame ends exactly where the IP length says (no trailer).
  bool exact_length = false;

  // TCP or UDP; not parsed in a non-first fragment.
  bool has_tcp = false;
  bool has_udp = false;
  uint16_t sport = 0;
  uint16_t dport = 0;
  uint32_t seq = 0;
  uint32_t ack = 0;
  uint8_t tcp_flags = 0;
  uint8_t doff = 0;  // 32-bit words
  uint16_t window = 0;
  uint16_t urgent = 0;
  uint16_t l4_checksum = 0;  // as found in the frame
  bool tcp_checksum_ok = false;
  bool udp_checksum_ok = false;
  Bytes tcp_options;
  Bytes payload;  // after the TCP or UDP header, within the IP length
};

// nullopt when a header is truncated or self-inconsistent (IHL < 5, an IP
// length beyond the frame, doff < 5 or beyond the segment).
std::optional<ParsedFrame> parse_frame(std::span<const uint8_t> frame);

// RFC 1071 checksums, each returning the value that belongs in the checksum
// field. The field's current contents are ignored, so verifying is comparing
// the result with the stored value. A UDP result of 0 is returned as 0xffff.
uint16_t ipv4_header_checksum(std::span<const uint8_t> header);
uint16_t tcp_checksum_v4(std::span<const uint8_t, 4> src, std::span<const uint8_t, 4> dst,
                         std::span<const uint8_t> segment);
uint16_t tcp_checksum_v6(std::span<const uint8_t, 16> src, std::span<const uint8_t, 16> dst,
                         std::span<const uint8_t> segment);
uint16_t udp_checksum_v4(std::span<const uint8_t, 4> src, std::span<const uint8_t, 4> dst,
                         std::span<const uint8_t> datagram);
uint16_t udp_checksum_v6(std::span<const uint8_t, 16> src, std::span<const uint8_t, 16> dst,
                         std::span<const uint8_t> datagram);

}  // namespace edgeshed::testing

#endif  // EDGESHED_TESTS_COMMON_PACKET_H_

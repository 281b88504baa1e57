"""Frame builders shared by the raw-frame tools (raw_frames.py,
kernel_oracle.py): Ethernet with VLAN tags, IPv4 with options, IPv6 with
extension headers, TCP, UDP and QUIC's long header, each length and checksum
right unless the caller overrides it. Written by hand with struct: the tests
run where scapy is not installed. And the command line those tools share.
"""
import argparse
import socket
import struct

IPPROTO_TCP = 6
IPPROTO_UDP = 17
IPPROTO_AH = 51
NEXTHDR_HOP = 0
NEXTHDR_ROUTING = 43
NEXTHDR_FRAGMENT = 44
NEXTHDR_NONE = 59
NEXTHDR_DEST = 60
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
ETH_P_8021Q = 0x8100
ETH_P_8021AD = 0x88A8
TCP_FIN = 0x01
TCP_SYN = 0x02
TCP_RST = 0x04
TCP_PSH = 0x08
TCP_ACK = 0x10
TCP_URG = 0x20
TCP_ECE = 0x40
TCP_CWR = 0x80
IPV4_MF = 0x2000
# MSS 1460, SACK permitted, timestamps, NOP, window scale 7: 20 bytes.
SYN_OPTIONS = (bytes([2, 4, 0x05, 0xB4, 4, 2, 8, 10]) + bytes(8) + bytes([1, 3, 3, 7]))
QUIC_V1 = 1
QUIC_V2 = 0x6B3343CF
QUIC_MIN_DATAGRAM = 1200  # RFC 9000 14.1: a client's Initial datagram


def tool_parser(doc: str) -> argparse.ArgumentParser:
    """A tool's command line: its module's doc as the help, --wait-ms (for a
    reply, 1000 ms unless given)."""
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wait-ms", type=int, default=1000)
    return parser


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def ethernet(dst_mac: bytes, src_mac: bytes, ethertype: int, tags=()) -> bytes:
    """tags: (TPID, TCI) pairs, outermost first; the TCI's low 12 bits are
    the VID, its top 4 the priority and drop eligibility."""
    header = dst_mac + src_mac
    for tpid, tci in tags:
        header += struct.pack("!HH", tpid, tci & 0xFFFF)
    return header + struct.pack("!H", ethertype)


def pseudo_header(src: str, dst: str, proto: int, length: int) -> bytes:
    if ":" in src:
        return socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(
            socket.AF_INET6, dst) + struct.pack("!I3xB", length, proto)
    return socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, proto, length)


def tcp(src: str, dst: str, sport: int, dport: int, flags: int = TCP_SYN, *, seq: int = 1,
        ack: int = 0, options: bytes = SYN_OPTIONS, payload: bytes = b"", doff=None,
        csum_over=None, bad_csum: bool = False) -> bytes:
    """A TCP segment. doff overrides the data offset field (in words);
    csum_over, the number of bytes of the segment the checksum covers (a
    segment the IP length trims)."""
    if len(options) % 4:
        options += bytes(4 - len(options) % 4)
    words = (20 + len(options)) // 4 if doff is None else doff
    header = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (words & 0x0F) << 4, flags,
                         64240, 0, 0) + options
    segment = header + payload
    covered = segment if csum_over is None else segment[:csum_over]
    csum = checksum(pseudo_header(src, dst, IPPROTO_TCP, len(covered)) + covered)
    if bad_csum:
        csum ^= 0x5A5A
    return segment[:16] + struct.pack("!H", csum) + segment[18:]


def udp(src: str, dst: str, sport: int, dport: int, payload: bytes, *, length=None,
        csum_over=None, zero_csum: bool = False) -> bytes:
    length_field = 8 + len(payload) if length is None else length
    header = struct.pack("!HHHH", sport, dport, length_field & 0xFFFF, 0)
    datagram = header + payload
    if zero_csum:
        return datagram
    covered = datagram if csum_over is None else datagram[:csum_over]
    csum = checksum(pseudo_header(src, dst, IPPROTO_UDP, len(covered)) + covered) or 0xFFFF
    return datagram[:6] + struct.pack("!H", csum) + datagram[8:]


def quic_initial(tag: int, *, version: int = QUIC_V1, first=None, size: int = QUIC_MIN_DATAGRAM,
                 dcid_len: int = 8, scid_len: int = 8) -> bytes:
    """A QUIC long-header packet (by default a v1 Initial) of SIZE bytes:
    the invariant header, a zero token, then padding that carries TAG."""
    if first is None:
        initial_type = 1 if version == QUIC_V2 else 0
        first = 0xC0 | initial_type << 4 | 0x03  # 4-byte packet number
    header = struct.pack("!BI", first, version) + bytes([dcid_len]) + bytes(
        (tag + i) & 0xFF for i in range(dcid_len)) + bytes([scid_len]) + bytes(scid_len)
    header += b"\x00"  # token length 0
    rest = max(size - len(header) - 2, 0)
    body = struct.pack("!H", 0x4000 | min(rest, 0x3FFF)) + struct.pack("!I", tag) * (rest // 4)
    return (header + body + bytes(size))[:size]


def ipv4_options_pad(options: bytes) -> bytes:
    return options + bytes(-len(options) % 4)


def ipv4(src: str, dst: str, proto: int, payload: bytes, *, ident: int = 1, frag: int = 0,
         ttl: int = 64, tos: int = 0, options: bytes = b"", ihl=None, total=None,
         bad_csum: bool = False, version: int = 4) -> bytes:
    """frag: the flags and fragment offset field (offset in 8-byte units)."""
    options = ipv4_options_pad(options)
    header_len = 20 + len(options)
    ihl_field = header_len // 4 if ihl is None else ihl
    total_field = header_len + len(payload) if total is None else total
    header = struct.pack("!BBHHHBBH4s4s", version << 4 | (ihl_field & 0x0F), tos,
                         total_field & 0xFFFF, ident & 0xFFFF, frag, ttl, proto, 0,
                         socket.inet_aton(src), socket.inet_aton(dst)) + options
    csum = checksum(header)
    if bad_csum:
        csum ^= 0x5A5A
    return header[:10] + struct.pack("!H", csum) + header[12:] + payload


def ipv6(src: str, dst: str, next_header: int, payload: bytes, *, payload_len=None,
         hop_limit: int = 64, version: int = 6) -> bytes:
    length = len(payload) if payload_len is None else payload_len
    return struct.pack("!IHBB", version << 28, length & 0xFFFF, next_header, hop_limit) + \
        socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) + payload


def ipv6_options_header(next_header: int, units: int = 0) -> bytes:
    """Hop-by-Hop or Destination Options of (units + 1) x 8 bytes: PadN
    over the 6 bytes of one unit, else one option of the experimental type
    0x1E (RFC 4727; its top bits: skip it if unknown). Linux drops more than
    7 bytes of padding in a row (ip6_parse_tlv)."""
    size = (units + 1) * 8 - 2
    if units == 0:
        return struct.pack("!BB", next_header, units) + bytes([1, size - 2]) + bytes(size - 2)
    options = b""
    while size - len(options) > 1:
        length = min(size - len(options) - 2, 255)
        options += bytes([0x1E, length]) + bytes(length)
    options += bytes(size - len(options))  # Pad1, when one byte is left
    return struct.pack("!BB", next_header, units) + options


def ipv6_routing_header(next_header: int, units: int = 0, segments_left: int = 0,
                        kind: int = 0) -> bytes:
    return struct.pack("!BBBB4x", next_header, units, kind, segments_left) + bytes(units * 8)


def ipv6_fragment_header(next_header: int, ident: int, offset: int = 0, more: bool = False) -> bytes:
    return struct.pack("!BBHI", next_header, 0, offset << 3 | int(more), ident)


def ipv6_chain(kinds, upper: int) -> tuple:
    """Extension headers of KINDS ("hop", "dst", "rt", "frag" for an atomic
    fragment, optionally "dst:N" for N extra 8-byte units) in order, ending
    in UPPER. Returns the first next-header value and the bytes."""
    blobs = []
    codes = []
    for kind in kinds:
        name, _, units = kind.partition(":")
        codes.append({"hop": NEXTHDR_HOP, "dst": NEXTHDR_DEST, "rt": NEXTHDR_ROUTING,
                      "frag": NEXTHDR_FRAGMENT}[name])
        blobs.append((name, int(units or 0)))
    out = b""
    for i, (name, units) in enumerate(blobs):
        nxt = codes[i + 1] if i + 1 < len(codes) else upper
        if name in ("hop", "dst"):
            out += ipv6_options_header(nxt, units)
        elif name == "rt":
            out += ipv6_routing_header(nxt, units)
        else:
            out += ipv6_fragment_header(nxt, 0x5EED + i)
    return (codes[0] if codes else upper), out


def ah_header(next_header: int, spi: int = 0x1000, seq: int = 1) -> bytes:
    """IP Authentication Header (RFC 4302) with a 12-byte ICV: 24 bytes."""
    return struct.pack("!BBHII", next_header, 4, 0, spi, seq) + bytes(12)

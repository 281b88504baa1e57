#!/usr/bin/env python3
"""The kernel as the oracle of what a frame is (issue #38, point 1): a
deterministic list of crafted frames, each sent from a packet socket on the
client's veth, and the answer the running Linux gives to each. Used by
tests/netns/test_kernel_oracle.sh; root only.

  kernel_oracle.py list
      The cases, one a line: name, label, protocol, number of frames.
  kernel_oracle.py run --iface IF --src-mac M --dst-mac M --server-netns PATH
                       --out CORPUS [--salt N] [--counters-cmd CMD]
      Sends every case from IF (in the client namespace, where it runs) and
      writes CORPUS. The UDP receiver runs in the server namespace (PATH, by
      nsenter). With --counters-cmd, a shell command that prints edgeshed's
      status as JSON, run before the first case and after each: the change
      of its counters across a case is edgeshed's verdict on it. --salt
      changes the source ports and IP fragment ids of a run, so that a run
      never meets a previous one's half-open connections or fragment queues
      in the server's kernel; salt 0 makes the committed corpus's frames.
  kernel_oracle.py judge --control CORPUS [--hook NAME=CORPUS]... [--report MD]
      Compares the runs under edgeshed with the control, case by case, and
      prints the table (to MD too, as markdown). Exits 1 on a bypass (a
      "new" case Linux accepts in the control and again under shed-all), on
      a "not-new" case edgeshed shed, or one whose answer changed; a shed
      case that Linux drops anyway is only noted.
  kernel_oracle.py receive --ports P,...
      The server's side (run by `run`): UDP sockets on P over IPv4 and IPv6,
      printing "ready", then each datagram's source port, one a line.

A case is one or more Ethernet frames (IP fragments, sent in order) and a
label: "new", a new connection attempt to a protected port (a TCP segment
with SYN and without ACK to TCP_PORT, or a QUIC v1/v2 Initial in a datagram
to QUIC_PORT), or "not-new" (any other segment, datagram or port). Linux's
answer: for TCP, "synack" or "rst" (to the case's source port, seen on the
client's veth), else "none"; for UDP, "delivered" (a socket in the server
namespace read a datagram from the case's source port) or "none".

The corpus, one line per frame, tab-separated, "#" lines are comments:
  case  label  answer  frame-index/frames  verdict  hex-bytes
where verdict is edgeshed's (the counters that moved across the case, "+"
joined, "pass" when none did, "-" without --counters-cmd). Its header gives
the protected ports: "# tcp_port 8080" and "# quic_port 4433".
"""
import argparse
import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frames import (ETH_P_8021AD, ETH_P_8021Q, ETH_P_IP, ETH_P_IPV6, IPPROTO_AH,  # noqa: E402
                    IPPROTO_TCP, IPPROTO_UDP, IPV4_MF, NEXTHDR_FRAGMENT, NEXTHDR_HOP, NEXTHDR_ROUTING,
                    NEXTHDR_NONE, QUIC_V2, TCP_ACK, TCP_CWR, TCP_ECE, TCP_FIN, TCP_PSH,
                    TCP_RST, TCP_SYN, TCP_URG, ah_header, ethernet, ipv4, ipv6, ipv6_chain,
                    ipv6_fragment_header, ipv6_options_header, ipv6_routing_header, mac,
                    quic_initial, tcp, udp)

TCP_PORT = 8080        # protected, a listener
TCP_OPEN_PORT = 9090   # not protected, a listener
TCP_CLOSED_PORT = 8081  # not protected, no listener
QUIC_PORT = 4433       # protected as QUIC, a UDP socket
UDP_OPEN_PORT = 4434   # not protected, a UDP socket
SPORT_BASE = 20000
SPORTS_PER_SALT = 1000
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4

# The lab's addresses (tests/netns/lib.sh).
CLI_V4, SRV_V4 = "198.51.100.2", "198.51.100.1"
CLI_V6, SRV_V6 = "2001:db8::2", "2001:db8::1"
OTHER_HOST_MAC = bytes.fromhex("020000000099")
Q0 = (ETH_P_8021Q, 0)    # 802.1p priority tag
AD0 = (ETH_P_8021AD, 0)
Q100 = (ETH_P_8021Q, 100)
AD10 = (ETH_P_8021AD, 10)
Q20 = (ETH_P_8021Q, 20)


@dataclass
class Case:
    name: str
    label: str   # "new" or "not-new"
    proto: str   # "tcp" or "udp"
    sport: int
    frames: list = field(default_factory=list)


class Builder:
    """Makes the cases of one run: its source ports and fragment ids come
    from the salt and the case's index."""

    def __init__(self, src_mac: bytes, dst_mac: bytes, salt: int):
        self.src_mac, self.dst_mac, self.salt = src_mac, dst_mac, salt
        self.cases = []
        self.names = set()

    def add(self, name: str, label: str, proto: str, make) -> None:
        """make(sport, ident) returns the case's frames."""
        assert name not in self.names, name
        self.names.add(name)
        index = len(self.cases)
        assert index < SPORTS_PER_SALT
        sport = SPORT_BASE + self.salt * SPORTS_PER_SALT + index
        ident = (self.salt << 10 | index) & 0xFFFF or 1
        self.cases.append(Case(name, label, proto, sport, make(sport, ident)))

    def eth(self, ethertype: int, packet: bytes, tags=(), dst_mac=None) -> bytes:
        return ethernet(dst_mac or self.dst_mac, self.src_mac, ethertype, tags) + packet

    def v4(self, packet: bytes, **kw) -> bytes:
        return self.eth(ETH_P_IP, packet, **kw)

    def v6(self, packet: bytes, **kw) -> bytes:
        return self.eth(ETH_P_IPV6, packet, **kw)


def syn_label(flags: int, dport: int) -> str:
    return "new" if flags & TCP_SYN and not flags & TCP_ACK and dport == TCP_PORT else "not-new"


def split_v4(b: Builder, src: str, dst: str, proto: int, segment: bytes, ident: int, cuts,
             order=None, tags=()) -> list:
    """The IPv4 packet of SEGMENT in fragments cut at the byte offsets CUTS
    (multiples of 8), sent in ORDER (indexes; default in turn)."""
    edges = [0] + list(cuts) + [len(segment)]
    pieces = []
    for i in range(len(edges) - 1):
        lo, hi = edges[i], edges[i + 1]
        more = IPV4_MF if i < len(edges) - 2 else 0
        pieces.append(b.v4(ipv4(src, dst, proto, segment[lo:hi], ident=ident,
                                frag=more | lo // 8), tags=tags))
    return [pieces[i] for i in (order or range(len(pieces)))]


def split_v6(b: Builder, src: str, dst: str, proto: int, segment: bytes, ident: int, cuts,
             order=None, before=()) -> list:
    """The same over IPv6: a fragment header after the extension headers
    BEFORE (kinds, as frames.ipv6_chain), which every fragment repeats."""
    edges = [0] + list(cuts) + [len(segment)]
    pieces = []
    for i in range(len(edges) - 1):
        lo, hi = edges[i], edges[i + 1]
        first, chain = ipv6_chain(list(before) + ["frag"], proto)
        # ipv6_chain's fragment header is atomic: replace it by this one's.
        chain = chain[:-8] + ipv6_fragment_header(proto, ident << 8 | b.salt, lo // 8,
                                                  i < len(edges) - 2)
        pieces.append(b.v6(ipv6(src, dst, first, chain + segment[lo:hi])))
    return [pieces[i] for i in (order or range(len(pieces)))]


def generate(src_mac: bytes, dst_mac: bytes, salt: int = 0) -> list:
    b = Builder(src_mac, dst_mac, salt)
    C4, S4, C6, S6 = CLI_V4, SRV_V4, CLI_V6, SRV_V6

    def seg4(sport, flags=TCP_SYN, dport=TCP_PORT, src=C4, dst=S4, **kw):
        return tcp(src, dst, sport, dport, flags, **kw)

    def seg6(sport, flags=TCP_SYN, dport=TCP_PORT, src=C6, dst=S6, **kw):
        return tcp(src, dst, sport, dport, flags, **kw)

    def syn4(sport, ident, flags=TCP_SYN, dport=TCP_PORT, ip=None, tcp_kw=None, **eth_kw):
        packet = ipv4(C4, S4, IPPROTO_TCP, seg4(sport, flags, dport, **(tcp_kw or {})),
                      ident=ident, **(ip or {}))
        return [b.v4(packet, **eth_kw)]

    def syn6(sport, ident, flags=TCP_SYN, dport=TCP_PORT, ip=None, tcp_kw=None, **eth_kw):
        packet = ipv6(C6, S6, IPPROTO_TCP, seg6(sport, flags, dport, **(tcp_kw or {})),
                      **(ip or {}))
        return [b.v6(packet, **eth_kw)]

    def quic4(sport, ident, dport=QUIC_PORT, src=C4, dst=S4, ip=None, udp_kw=None, q=None,
              **eth_kw):
        payload = quic_initial(sport, **(q or {}))
        packet = ipv4(src, dst, IPPROTO_UDP, udp(src, dst, sport, dport, payload,
                                                 **(udp_kw or {})), ident=ident, **(ip or {}))
        return [b.v4(packet, **eth_kw)]

    def quic6(sport, ident, dport=QUIC_PORT, src=C6, dst=S6, ip=None, udp_kw=None, q=None,
              **eth_kw):
        payload = quic_initial(sport, **(q or {}))
        packet = ipv6(src, dst, IPPROTO_UDP, udp(src, dst, sport, dport, payload,
                                                 **(udp_kw or {})), **(ip or {}))
        return [b.v6(packet, **eth_kw)]

    # The plain ones: the control that the lab answers at all.
    b.add("v4-syn", "new", "tcp", syn4)
    b.add("v6-syn", "new", "tcp", syn6)
    b.add("v4-quic-initial", "new", "udp", quic4)
    b.add("v6-quic-initial", "new", "udp", quic6)
    b.add("v4-quic-v2-initial", "new", "udp",
          lambda s, i: quic4(s, i, q={"version": QUIC_V2}))
    b.add("v4-syn-unprotected-port", "not-new", "tcp",
          lambda s, i: syn4(s, i, dport=TCP_OPEN_PORT))
    b.add("v4-syn-closed-port", "not-new", "tcp", lambda s, i: syn4(s, i, dport=TCP_CLOSED_PORT))
    b.add("v6-syn-unprotected-port", "not-new", "tcp",
          lambda s, i: syn6(s, i, dport=TCP_OPEN_PORT))
    b.add("v4-quic-unprotected-port", "not-new", "udp",
          lambda s, i: quic4(s, i, dport=UDP_OPEN_PORT))

    # TCP flags: only SYN without ACK is a connection attempt.
    flag_sets = [
        ("syn-ece-cwr", TCP_SYN | TCP_ECE | TCP_CWR), ("syn-ece", TCP_SYN | TCP_ECE),
        ("syn-cwr", TCP_SYN | TCP_CWR), ("syn-psh-urg", TCP_SYN | TCP_PSH | TCP_URG),
        ("syn-fin", TCP_SYN | TCP_FIN), ("syn-rst", TCP_SYN | TCP_RST),
        ("syn-fin-rst", TCP_SYN | TCP_FIN | TCP_RST), ("syn-ack", TCP_SYN | TCP_ACK),
        ("ack", TCP_ACK), ("rst", TCP_RST), ("rst-ack", TCP_RST | TCP_ACK), ("fin", TCP_FIN),
        ("fin-ack", TCP_FIN | TCP_ACK), ("psh-ack", TCP_PSH | TCP_ACK), ("no-flags", 0),
        ("xmas", TCP_FIN | TCP_PSH | TCP_URG), ("all-flags", 0xFF),
    ]
    for name, flags in flag_sets:
        b.add(f"v4-{name}", syn_label(flags, TCP_PORT), "tcp",
              lambda s, i, f=flags: syn4(s, i, f, tcp_kw={"ack": 7 if f & TCP_ACK else 0}))
    for name, flags in flag_sets[:10]:
        b.add(f"v6-{name}", syn_label(flags, TCP_PORT), "tcp",
              lambda s, i, f=flags: syn6(s, i, f, tcp_kw={"ack": 7 if f & TCP_ACK else 0}))
    b.add("v4-ack-data", "not-new", "tcp",
          lambda s, i: syn4(s, i, TCP_ACK | TCP_PSH, tcp_kw={"ack": 9, "payload": b"GET /"}))
    b.add("v6-ack-data", "not-new", "tcp",
          lambda s, i: syn6(s, i, TCP_ACK | TCP_PSH, tcp_kw={"ack": 9, "payload": b"GET /"}))
    b.add("v4-ack-data1000", "not-new", "tcp",
          lambda s, i: syn4(s, i, TCP_ACK, tcp_kw={"ack": 9, "payload": bytes(1000)}))
    b.add("v4-ack-ip-options", "not-new", "tcp", lambda s, i: syn4(
        s, i, TCP_ACK, tcp_kw={"ack": 9}, ip={"options": bytes([7, 39, 4]) + bytes(36)}))
    b.add("v4-udp-tiny-to-quic-port", "not-new", "udp", lambda s, i: [b.v4(ipv4(
        C4, S4, IPPROTO_UDP, udp(C4, S4, s, QUIC_PORT, b"ping"), ident=i))])
    b.add("v4-ack-unprotected-port", "not-new", "tcp",
          lambda s, i: syn4(s, i, TCP_ACK, dport=TCP_OPEN_PORT, tcp_kw={"ack": 9}))

    # TCP options and data offsets.
    for doff in range(5, 16):
        opts = bytes([1]) * ((doff - 5) * 4)
        b.add(f"v4-syn-doff{doff}-nops", "new", "tcp",
              lambda s, i, o=opts: syn4(s, i, tcp_kw={"options": o}))
    named_options = {
        "mss": bytes([2, 4, 5, 0xB4]),
        "mss-ws": bytes([2, 4, 5, 0xB4, 1, 3, 3, 7]),
        "ts": bytes([1, 1, 8, 10]) + bytes(8),
        "sackperm": bytes([4, 2]),
        "tfo-cookie-request": bytes([34, 2]),
        "exp-254": bytes([254, 6, 0xF9, 0x89, 0, 0]),
        "eol-then-junk": bytes([0, 0xAA, 0xBB, 0xCC]),
        "optlen0": bytes([2, 0, 5, 0xB4]),
        "optlen1": bytes([2, 1, 5, 0xB4]),
        "optlen-past-header": bytes([2, 4, 5, 0xB4, 8, 40]),
        "40-bytes": bytes([2, 4, 5, 0xB4, 4, 2, 8, 10]) + bytes(8) + bytes([1, 3, 3, 7]) +
        bytes([254, 20]) + bytes(18),
    }
    for name, opts in named_options.items():
        b.add(f"v4-syn-opt-{name}", "new", "tcp",
              lambda s, i, o=opts: syn4(s, i, tcp_kw={"options": o}))
    for doff in (0, 1, 4):
        b.add(f"v4-syn-doff{doff}", "new", "tcp", lambda s, i, d=doff: syn4(
            s, i, tcp_kw={"options": b"", "doff": d}))
    b.add("v4-syn-doff6-past-segment", "new", "tcp",
          lambda s, i: syn4(s, i, tcp_kw={"options": b"", "doff": 6}))
    b.add("v4-syn-doff15-past-segment", "new", "tcp",
          lambda s, i: syn4(s, i, tcp_kw={"doff": 15}))
    b.add("v4-syn-doff15-data-as-options", "new", "tcp",
          lambda s, i: syn4(s, i, tcp_kw={"options": b"", "payload": bytes(40), "doff": 15}))
    b.add("v4-ack-doff4", "not-new", "tcp",
          lambda s, i: syn4(s, i, TCP_ACK, tcp_kw={"ack": 3, "options": b"", "doff": 4}))
    for size in (1, 100, 1000):
        b.add(f"v4-syn-tfo-data{size}", "new", "tcp",
              lambda s, i, n=size: syn4(s, i, tcp_kw={"payload": b"d" * n}))
    b.add("v4-syn-tfo-cookie-data", "new", "tcp", lambda s, i: syn4(s, i, tcp_kw={
        "options": bytes([2, 4, 5, 0xB4, 34, 10]) + bytes(8), "payload": b"GET / HTTP/1.1\r\n"}))
    b.add("v6-syn-doff15-nops", "new", "tcp",
          lambda s, i: syn6(s, i, tcp_kw={"options": bytes([1]) * 40}))
    b.add("v6-syn-doff4", "new", "tcp", lambda s, i: syn6(s, i, tcp_kw={"options": b"", "doff": 4}))
    b.add("v6-syn-doff15-past-segment", "new", "tcp", lambda s, i: syn6(s, i, tcp_kw={"doff": 15}))
    b.add("v6-syn-tfo-data100", "new", "tcp", lambda s, i: syn6(s, i, tcp_kw={"payload": bytes(100)}))

    # Checksums.
    b.add("v4-syn-bad-ip-checksum", "new", "tcp", lambda s, i: syn4(s, i, ip={"bad_csum": True}))
    b.add("v4-syn-bad-tcp-checksum", "new", "tcp",
          lambda s, i: syn4(s, i, tcp_kw={"bad_csum": True}))
    b.add("v6-syn-bad-tcp-checksum", "new", "tcp",
          lambda s, i: syn6(s, i, tcp_kw={"bad_csum": True}))
    b.add("v4-ack-bad-tcp-checksum", "not-new", "tcp",
          lambda s, i: syn4(s, i, TCP_ACK, tcp_kw={"ack": 5, "bad_csum": True}))
    b.add("v4-quic-bad-ip-checksum", "new", "udp", lambda s, i: quic4(s, i, ip={"bad_csum": True}))
    b.add("v4-quic-udp-checksum0", "new", "udp", lambda s, i: quic4(s, i, udp_kw={"zero_csum": True}))
    b.add("v6-quic-udp-checksum0", "new", "udp", lambda s, i: quic6(s, i, udp_kw={"zero_csum": True}))

    def bad_udp_csum4(s, i):
        frame = quic4(s, i)[0]
        at = 14 + 20 + 6
        return [frame[:at] + bytes([frame[at] ^ 0x5A]) + frame[at + 1:]]
    b.add("v4-quic-bad-udp-checksum", "new", "udp", bad_udp_csum4)

    # The IPv4 header: IHL, options, lengths, flags, addresses.
    for ihl in range(6, 16):
        b.add(f"v4-syn-ihl{ihl}-nops", "new", "tcp",
              lambda s, i, n=ihl: syn4(s, i, ip={"options": bytes([1]) * ((n - 5) * 4)}))
    b.add("v4-syn-ihl6-eol", "new", "tcp", lambda s, i: syn4(s, i, ip={"options": bytes(4)}))
    ip_options = {
        "rr7": bytes([7, 7, 4]) + bytes(4),
        "rr11": bytes([7, 11, 4]) + bytes(8),
        "rr39": bytes([7, 39, 4]) + bytes(36),
        "rr-bad-pointer": bytes([7, 7, 3]) + bytes(4),
        "timestamp12": bytes([68, 12, 5, 0]) + bytes(8),
        "timestamp40": bytes([68, 40, 5, 0]) + bytes(36),
        "router-alert": bytes([148, 4, 0, 0]),
        "unknown-kind": bytes([0x9E, 4, 0, 0]),
        "security": bytes([130, 11]) + bytes(9),
        "lsrr": bytes([131, 7, 8]) + socket.inet_aton(SRV_V4),
        "ssrr": bytes([137, 7, 8]) + socket.inet_aton(SRV_V4),
        "optlen0": bytes([7, 0, 0, 0]),
        "optlen1": bytes([0x9E, 1, 0, 0]),
        "optlen-past-ihl": bytes([0x9E, 12, 0, 0]),
    }
    for name, opts in ip_options.items():
        b.add(f"v4-syn-ipopt-{name}", "new", "tcp", lambda s, i, o=opts: syn4(s, i, ip={"options": o}))
    b.add("v4-syn-ihl4", "new", "tcp", lambda s, i: syn4(s, i, ip={"ihl": 4}))
    b.add("v4-syn-ihl15-no-options", "new", "tcp", lambda s, i: syn4(s, i, ip={"ihl": 15}))

    def syn4_total(s, i, delta=None, total=None, payload=b"", cover=None):
        segment = seg4(s, payload=payload, csum_over=cover)
        true_total = 20 + len(segment)
        field_value = total if total is not None else true_total + delta
        return [b.v4(ipv4(C4, S4, IPPROTO_TCP, segment, ident=i, total=field_value))]
    b.add("v4-syn-total0", "new", "tcp", lambda s, i: syn4_total(s, i, total=0))
    b.add("v4-syn-total19", "new", "tcp", lambda s, i: syn4_total(s, i, total=19))
    b.add("v4-syn-total20", "new", "tcp", lambda s, i: syn4_total(s, i, total=20))
    b.add("v4-syn-total-minus1", "new", "tcp", lambda s, i: syn4_total(s, i, delta=-1))
    # One byte of data past the IP length, left out of the checksum: the
    # kernel trims it as link-layer padding and sees a whole SYN.
    b.add("v4-syn-total-minus1-trimmed", "new", "tcp",
          lambda s, i: syn4_total(s, i, delta=-1, payload=b"x", cover=40))
    b.add("v4-syn-total-plus1", "new", "tcp", lambda s, i: syn4_total(s, i, delta=1))
    b.add("v4-syn-total65535", "new", "tcp", lambda s, i: syn4_total(s, i, total=65535))
    b.add("v4-syn-ethernet-padding", "new", "tcp",
          lambda s, i: [syn4(s, i)[0] + bytes(range(1, 33))])
    b.add("v4-syn-version6", "new", "tcp", lambda s, i: syn4(s, i, ip={"version": 6}))
    b.add("v6-syn-version4", "new", "tcp", lambda s, i: syn6(s, i, ip={"version": 4}))
    b.add("v4-syn-ttl0", "new", "tcp", lambda s, i: syn4(s, i, ip={"ttl": 0}))
    b.add("v4-syn-evil-bit", "new", "tcp", lambda s, i: syn4(s, i, ip={"frag": 0x8000}))
    b.add("v4-syn-df", "new", "tcp", lambda s, i: syn4(s, i, ip={"frag": 0x4000}))
    b.add("v4-syn-ecn-ce", "new", "tcp", lambda s, i: syn4(s, i, ip={"tos": 3}))
    for name, src in (("multicast", "224.0.0.5"), ("broadcast", "255.255.255.255"),
                      ("zero", "0.0.0.0"), ("loopback", "127.0.0.1")):
        b.add(f"v4-syn-src-{name}", "new", "tcp", lambda s, i, a=src: [b.v4(ipv4(
            a, S4, IPPROTO_TCP, seg4(s, src=a), ident=i))])
    # The server's other addresses: its link-local one (EUI-64, from its
    # MAC), which its listener on :: answers too, and the subnet's broadcast.
    b.add("v6-syn-to-link-local", "new", "tcp", lambda s, i: [b.v6(ipv6(
        link_local(src_mac), link_local(dst_mac), IPPROTO_TCP,
        seg6(s, src=link_local(src_mac), dst=link_local(dst_mac))))])
    b.add("v6-quic-to-link-local", "new", "udp",
          lambda s, i: quic6(s, i, src=link_local(src_mac), dst=link_local(dst_mac)))
    b.add("v4-syn-to-subnet-broadcast", "new", "tcp", lambda s, i: [b.v4(ipv4(
        C4, "198.51.100.255", IPPROTO_TCP, seg4(s, dst="198.51.100.255"), ident=i))])
    b.add("v4-syn-to-other-mac", "new", "tcp", lambda s, i: syn4(s, i, dst_mac=OTHER_HOST_MAC))
    b.add("v4-syn-to-broadcast-mac", "new", "tcp", lambda s, i: syn4(s, i, dst_mac=b"\xff" * 6))

    # IPv4 fragments of a SYN with 16 bytes of data (56 bytes of TCP).
    def frag4(s, i, cuts, order=None, dport=TCP_PORT, flags=TCP_SYN, data=b"edgeshed-oracle!"):
        segment = seg4(s, flags, dport, payload=data, ack=5 if flags & TCP_ACK else 0)
        return split_v4(b, C4, S4, IPPROTO_TCP, segment, i, cuts, order)
    b.add("v4-frag-syn-split40", "new", "tcp", lambda s, i: frag4(s, i, [40]))
    b.add("v4-frag-syn-split24", "new", "tcp", lambda s, i: frag4(s, i, [24]))
    b.add("v4-frag-syn-split16", "new", "tcp", lambda s, i: frag4(s, i, [16]))
    b.add("v4-frag-syn-split8", "new", "tcp", lambda s, i: frag4(s, i, [8]))
    b.add("v4-frag-syn-split8-16", "new", "tcp", lambda s, i: frag4(s, i, [8, 16]))
    b.add("v4-frag-syn-split40-reversed", "new", "tcp", lambda s, i: frag4(s, i, [40], [1, 0]))
    b.add("v4-frag-syn-split8-reversed", "new", "tcp", lambda s, i: frag4(s, i, [8], [1, 0]))
    b.add("v4-frag-syn-first-only", "new", "tcp", lambda s, i: frag4(s, i, [40], [0]))
    b.add("v4-frag-syn-second-only", "new", "tcp", lambda s, i: frag4(s, i, [40], [1]))
    b.add("v4-frag-syn-duplicate-first", "new", "tcp", lambda s, i: frag4(s, i, [40], [0, 0, 1]))

    def overlap4(s, i, first_flags, second_flags):
        """RFC 1858's overlap: a first fragment of 24 bytes with FIRST_FLAGS,
        a second from byte 8 on with SECOND_FLAGS in its copy of the header."""
        a = seg4(s, first_flags, payload=b"edgeshed-oracle!", ack=5 if first_flags & TCP_ACK else 0)
        z = seg4(s, second_flags, payload=b"edgeshed-oracle!")
        return [b.v4(ipv4(C4, S4, IPPROTO_TCP, a[:24], ident=i, frag=IPV4_MF)),
                b.v4(ipv4(C4, S4, IPPROTO_TCP, z[8:], ident=i, frag=1))]
    b.add("v4-frag-overlap-ack-then-syn", "new", "tcp",
          lambda s, i: overlap4(s, i, TCP_ACK, TCP_SYN))
    b.add("v4-frag-overlap-syn-then-syn", "new", "tcp",
          lambda s, i: overlap4(s, i, TCP_SYN, TCP_SYN))
    b.add("v4-frag-syn-split40-unprotected-port", "not-new", "tcp",
          lambda s, i: frag4(s, i, [40], dport=TCP_OPEN_PORT))
    b.add("v4-frag-syn-split8-unprotected-port", "not-new", "tcp",
          lambda s, i: frag4(s, i, [8], dport=TCP_OPEN_PORT))
    b.add("v4-frag-ack-split40", "not-new", "tcp", lambda s, i: frag4(s, i, [40], flags=TCP_ACK))
    b.add("v4-frag-ack-split8", "not-new", "tcp", lambda s, i: frag4(s, i, [8], flags=TCP_ACK))

    def frag_quic4(s, i, cuts, order=None):
        datagram = udp(C4, S4, s, QUIC_PORT, quic_initial(s))
        return split_v4(b, C4, S4, IPPROTO_UDP, datagram, i, cuts, order)
    b.add("v4-frag-quic-split8", "new", "udp", lambda s, i: frag_quic4(s, i, [8]))
    b.add("v4-frag-quic-split16", "new", "udp", lambda s, i: frag_quic4(s, i, [16]))
    b.add("v4-frag-quic-split600", "new", "udp", lambda s, i: frag_quic4(s, i, [600]))
    b.add("v4-frag-quic-split600-reversed", "new", "udp",
          lambda s, i: frag_quic4(s, i, [600], [1, 0]))

    def frag_quic_short4(s, i, cuts):
        datagram = udp(C4, S4, s, QUIC_PORT, quic_initial(s, first=0x43))
        return split_v4(b, C4, S4, IPPROTO_UDP, datagram, i, cuts)
    b.add("v4-frag-quic-short-split8", "not-new", "udp", lambda s, i: frag_quic_short4(s, i, [8]))
    b.add("v4-frag-quic-short-split600", "not-new", "udp",
          lambda s, i: frag_quic_short4(s, i, [600]))

    # IPv6 extension header chains, 0 to 8 headers.
    chain_kinds = ["hop", "dst", "rt", "dst", "dst", "dst", "dst", "dst"]
    for n in range(0, 9):
        def ext6(s, i, kinds=tuple(chain_kinds[:n]), upper="tcp"):
            if upper == "tcp":
                first, chain = ipv6_chain(kinds, IPPROTO_TCP)
                return [b.v6(ipv6(C6, S6, first, chain + seg6(s)))]
            first, chain = ipv6_chain(kinds, IPPROTO_UDP)
            return [b.v6(ipv6(C6, S6, first, chain + udp(C6, S6, s, QUIC_PORT, quic_initial(s))))]
        b.add(f"v6-syn-ext{n}", "new", "tcp", ext6)
        if n >= 5:
            b.add(f"v6-quic-ext{n}", "new", "udp", lambda s, i, f=ext6: f(s, i, upper="udp"))
    b.add("v6-ack-ext8", "not-new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(chain_kinds, seg6(s, TCP_ACK, ack=3))))])
    b.add("v6-syn-ext-large", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["hop:3", "dst:10", "rt:2"], seg6(s))))])
    b.add("v6-syn-ext-dst2048", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["dst:255"], seg6(s))))])
    b.add("v6-syn-ext-hop2048-dst2048", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["hop:255", "dst:255"], seg6(s))))])
    b.add("v6-syn-ext6x256", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["hop:31"] + ["dst:31"] * 5, seg6(s))))])
    b.add("v6-quic-ext-hop2048-dst2048", "new", "udp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["hop:255", "dst:255"], udp(C6, S6, s, QUIC_PORT, quic_initial(s)),
                              IPPROTO_UDP)))])
    # A frame of a page or more leaves a packet socket with only its
    # Ethernet header in the skb's linear part (packet_alloc_skb()): at TC,
    # the rest of the headers must be pulled to be read.
    b.add("v4-syn-data5000", "new", "tcp", lambda s, i: syn4(s, i, tcp_kw={"payload": bytes(5000)}))
    b.add("v4-syn-ihl15-doff15-data5000", "new", "tcp", lambda s, i: syn4(
        s, i, ip={"options": bytes([1]) * 40},
        tcp_kw={"options": bytes([1]) * 40, "payload": bytes(5000)}))
    b.add("v6-syn-ext-dst256-data5000", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["dst:31"], seg6(s, payload=bytes(5000)))))])
    b.add("v6-syn-ext-hop128-data5000", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["hop:15"], seg6(s, payload=bytes(5000)))))])
    b.add("v6-quic-ext-dst256-size5000", "new", "udp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["dst:31"], udp(C6, S6, s, QUIC_PORT, quic_initial(s, size=5000)),
                              IPPROTO_UDP)))])
    b.add("v4-quic-size5000", "new", "udp", lambda s, i: quic4(s, i, q={"size": 5000}))
    b.add("v6-syn-two-atomic-fragments", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["frag", "frag"], seg6(s))))])

    def jumbo_option(s, i):
        segment = seg6(s)
        hop = struct.pack("!BBBBI", IPPROTO_TCP, 0, 0xC2, 4, 8 + len(segment))
        return [b.v6(ipv6(C6, S6, NEXTHDR_HOP, hop + segment, payload_len=0))]
    b.add("v6-syn-hop-jumbo-option", "new", "tcp", jumbo_option)
    b.add("v6-syn-hop-not-first", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["dst", "hop"], seg6(s))))])
    b.add("v6-syn-two-hops", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["hop", "hop"], seg6(s))))])
    b.add("v6-syn-routing-segments-left1", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, NEXTHDR_ROUTING, ipv6_routing_header(IPPROTO_TCP, 2, 1) + seg6(s)))])
    b.add("v6-syn-ext-no-next", "not-new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, NEXTHDR_HOP, ipv6_options_header(NEXTHDR_NONE) + seg6(s)))])
    b.add("v6-syn-ah", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, IPPROTO_AH, ah_header(IPPROTO_TCP) + seg6(s)))])
    b.add("v6-syn-hop-ah", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, NEXTHDR_HOP, ipv6_options_header(IPPROTO_AH) + ah_header(IPPROTO_TCP) + seg6(s)))])
    b.add("v4-syn-ah", "new", "tcp", lambda s, i: [b.v4(ipv4(
        C4, S4, IPPROTO_AH, ah_header(IPPROTO_TCP) + seg4(s), ident=i))])
    b.add("v4-quic-ah", "new", "udp", lambda s, i: [b.v4(ipv4(
        C4, S4, IPPROTO_AH, ah_header(IPPROTO_UDP) + udp(C4, S4, s, QUIC_PORT, quic_initial(s)),
        ident=i))])

    # IPv6 fragment headers.
    b.add("v6-syn-atomic-fragment", "new", "tcp",
          lambda s, i: [b.v6(ipv6(C6, S6, *_chain_bytes(["frag"], seg6(s))))])
    b.add("v6-syn-hop-atomic-fragment", "new", "tcp",
          lambda s, i: [b.v6(ipv6(C6, S6, *_chain_bytes(["hop", "frag"], seg6(s))))])
    b.add("v6-syn-atomic-fragment-ext7", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(["hop", "dst", "rt", "frag", "dst", "dst", "dst"], seg6(s))))])

    def frag6(s, i, cuts, order=None, before=(), flags=TCP_SYN, dport=TCP_PORT):
        segment = seg6(s, flags, dport, payload=b"edgeshed-oracle!", ack=5 if flags & TCP_ACK else 0)
        return split_v6(b, C6, S6, IPPROTO_TCP, segment, i, cuts, order, before)
    b.add("v6-frag-syn-split40", "new", "tcp", lambda s, i: frag6(s, i, [40]))
    b.add("v6-frag-syn-split8", "new", "tcp", lambda s, i: frag6(s, i, [8]))
    b.add("v6-frag-syn-split16", "new", "tcp", lambda s, i: frag6(s, i, [16]))
    b.add("v6-frag-syn-split24", "new", "tcp", lambda s, i: frag6(s, i, [24]))
    b.add("v6-frag-syn-split40-reversed", "new", "tcp", lambda s, i: frag6(s, i, [40], [1, 0]))
    b.add("v6-frag-syn-first-only", "new", "tcp", lambda s, i: frag6(s, i, [40], [0]))
    b.add("v6-frag-syn-second-only", "new", "tcp", lambda s, i: frag6(s, i, [40], [1]))
    b.add("v6-frag-syn-split40-after-hop-dst", "new", "tcp",
          lambda s, i: frag6(s, i, [40], before=("hop", "dst")))
    b.add("v6-frag-syn-split40-after-5-ext", "new", "tcp",
          lambda s, i: frag6(s, i, [40], before=("hop", "dst", "rt", "dst", "dst")))
    b.add("v6-frag-syn-split40-after-6-ext", "new", "tcp",
          lambda s, i: frag6(s, i, [40], before=("hop", "dst", "rt", "dst", "dst", "dst")))
    b.add("v6-frag-ack-split40", "not-new", "tcp", lambda s, i: frag6(s, i, [40], flags=TCP_ACK))
    b.add("v6-frag-syn-split40-unprotected-port", "not-new", "tcp",
          lambda s, i: frag6(s, i, [40], dport=TCP_OPEN_PORT))

    def overlap6(s, i):
        a = seg6(s, TCP_ACK, payload=b"edgeshed-oracle!", ack=5)
        z = seg6(s, TCP_SYN, payload=b"edgeshed-oracle!")
        fid = i << 8 | b.salt
        return [b.v6(ipv6(C6, S6, NEXTHDR_FRAGMENT, ipv6_fragment_header(IPPROTO_TCP, fid, 0, True) + a[:24])),
                b.v6(ipv6(C6, S6, NEXTHDR_FRAGMENT, ipv6_fragment_header(IPPROTO_TCP, fid, 1) + z[8:]))]
    b.add("v6-frag-overlap-ack-then-syn", "new", "tcp", overlap6)

    def frag_quic6(s, i, cuts, order=None):
        datagram = udp(C6, S6, s, QUIC_PORT, quic_initial(s))
        return split_v6(b, C6, S6, IPPROTO_UDP, datagram, i, cuts, order)
    b.add("v6-frag-quic-split8", "new", "udp", lambda s, i: frag_quic6(s, i, [8]))
    b.add("v6-frag-quic-split600", "new", "udp", lambda s, i: frag_quic6(s, i, [600]))

    # IPv6 payload length.
    def syn6_len(s, i, delta=None, length=None, payload=b"", cover=None, hop=False):
        segment = seg6(s, payload=payload, csum_over=cover)
        body = (ipv6_options_header(IPPROTO_TCP) if hop else b"") + segment
        value = length if length is not None else len(body) + delta
        return [b.v6(ipv6(C6, S6, NEXTHDR_HOP if hop else IPPROTO_TCP, body, payload_len=value))]
    b.add("v6-syn-plen0", "new", "tcp", lambda s, i: syn6_len(s, i, length=0))
    b.add("v6-syn-plen-minus1", "new", "tcp", lambda s, i: syn6_len(s, i, delta=-1))
    b.add("v6-syn-plen-minus1-trimmed", "new", "tcp",
          lambda s, i: syn6_len(s, i, delta=-1, payload=b"x", cover=40))
    b.add("v6-syn-plen-plus1", "new", "tcp", lambda s, i: syn6_len(s, i, delta=1))
    b.add("v6-syn-plen65535", "new", "tcp", lambda s, i: syn6_len(s, i, length=65535))
    b.add("v6-syn-hop-plen0", "new", "tcp", lambda s, i: syn6_len(s, i, length=0, hop=True))
    b.add("v6-syn-hop-plen-true", "new", "tcp", lambda s, i: syn6_len(s, i, delta=0, hop=True))
    b.add("v6-syn-hop-plen0-padding", "new", "tcp",
          lambda s, i: [syn6_len(s, i, length=0, hop=True)[0] + bytes(8)])
    b.add("v6-ack-hop-plen0", "not-new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, NEXTHDR_HOP, ipv6_options_header(IPPROTO_TCP) + seg6(s, TCP_ACK, ack=3),
        payload_len=0))])
    b.add("v6-quic-short-ext5", "not-new", "udp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(chain_kinds[:5], udp(C6, S6, s, QUIC_PORT, quic_initial(
            s, first=0x43)), IPPROTO_UDP)))])
    b.add("v6-syn-ethernet-padding", "new", "tcp", lambda s, i: [syn6(s, i)[0] + bytes(24)])

    def quic6_hop_plen0(s, i):
        body = ipv6_options_header(IPPROTO_UDP) + udp(C6, S6, s, QUIC_PORT, quic_initial(s))
        return [b.v6(ipv6(C6, S6, NEXTHDR_HOP, body, payload_len=0))]
    b.add("v6-quic-hop-plen0", "new", "udp", quic6_hop_plen0)

    def quic6_hop_plen0_udplen0(s, i):
        body = ipv6_options_header(IPPROTO_UDP) + udp(C6, S6, s, QUIC_PORT, quic_initial(s),
                                                      length=0)
        return [b.v6(ipv6(C6, S6, NEXTHDR_HOP, body, payload_len=0))]
    b.add("v6-quic-hop-plen0-udplen0", "new", "udp", quic6_hop_plen0_udplen0)

    # QUIC: the long header's types and versions, and UDP's length.
    b.add("v4-quic-short-header", "not-new", "udp",
          lambda s, i: quic4(s, i, q={"first": 0x43}))
    b.add("v6-quic-short-header", "not-new", "udp",
          lambda s, i: quic6(s, i, q={"first": 0x43}))
    b.add("v4-quic-v1-0rtt", "not-new", "udp", lambda s, i: quic4(s, i, q={"first": 0xD3}))
    b.add("v4-quic-v1-handshake", "not-new", "udp", lambda s, i: quic4(s, i, q={"first": 0xE3}))
    b.add("v4-quic-v1-retry", "not-new", "udp", lambda s, i: quic4(s, i, q={"first": 0xF3}))
    b.add("v4-quic-version-negotiation", "not-new", "udp",
          lambda s, i: quic4(s, i, q={"version": 0, "first": 0xC0}))
    b.add("v4-quic-unknown-version", "not-new", "udp",
          lambda s, i: quic4(s, i, q={"version": 0xFACEB00C, "first": 0xC0}))
    b.add("v4-quic-v2-with-v1-initial-bits", "not-new", "udp",
          lambda s, i: quic4(s, i, q={"version": QUIC_V2, "first": 0xC3}))
    b.add("v4-quic-dcid21", "not-new", "udp", lambda s, i: quic4(s, i, q={"dcid_len": 21}))
    b.add("v4-quic-dcid20-scid20", "new", "udp",
          lambda s, i: quic4(s, i, q={"dcid_len": 20, "scid_len": 20}))
    b.add("v4-quic-initial-undersized", "new", "udp", lambda s, i: quic4(s, i, q={"size": 200}))
    b.add("v6-quic-initial-undersized", "new", "udp", lambda s, i: quic6(s, i, q={"size": 200}))

    def quic_len4(s, i, length=None, delta=None, cover=None):
        payload = quic_initial(s)
        value = length if length is not None else 8 + len(payload) + delta
        return quic4(s, i, udp_kw={"length": value, "csum_over": cover})
    def quic_len6(s, i, length=None, delta=None, cover=None):
        payload = quic_initial(s)
        value = length if length is not None else 8 + len(payload) + delta
        return quic6(s, i, udp_kw={"length": value, "csum_over": cover})
    for name, kw in (("0", {"length": 0}), ("7", {"length": 7}), ("8", {"length": 8, "cover": 8}),
                     ("minus1", {"delta": -1, "cover": 8 + 1199}), ("plus1", {"delta": 1}),
                     ("65535", {"length": 65535})):
        label = "not-new" if name == "8" else "new"
        b.add(f"v4-quic-udplen{name}", label, "udp", lambda s, i, k=kw: quic_len4(s, i, **k))
        b.add(f"v6-quic-udplen{name}", label, "udp", lambda s, i, k=kw: quic_len6(s, i, **k))

    def quic4_total(s, i, delta):
        datagram = udp(C4, S4, s, QUIC_PORT, quic_initial(s), length=8 + 1199, csum_over=8 + 1199)
        return [b.v4(ipv4(C4, S4, IPPROTO_UDP, datagram, ident=i, total=20 + len(datagram) + delta))]
    b.add("v4-quic-total-minus1-trimmed", "new", "udp", lambda s, i: quic4_total(s, i, -1))

    # VLAN tags, 0 to 6: 802.1p priority tags (VID 0), which Linux peels
    # however many are stacked, and tags of VIDs the server has no device
    # for (802.1Q VID 100, 802.1ad VID 10 with 802.1Q VID 20 inside), which
    # it drops as another host's (and on a kernel without 802.1Q, all).
    stacks = {
        "q0": [Q0], "ad0": [AD0], "q0-q0": [Q0, Q0], "ad0-q0": [AD0, Q0], "q0x3": [Q0] * 3,
        "q0x4": [Q0] * 4, "q0x5": [Q0] * 5, "q0x6": [Q0] * 6,
        "ad0-q0-ad0-q0-ad0": [AD0, Q0] * 2 + [AD0], "ad0x6": [AD0] * 6,
        "q100": [Q100], "q0-q100": [Q0, Q100], "q0x4-q100": [Q0] * 4 + [Q100],
        "ad10-q20": [AD10, Q20], "q0-ad10-q20": [Q0, AD10, Q20], "ad10-q20-q0x4": [AD10, Q20] + [Q0] * 4,
        "q20-ad10": [Q20, AD10],
    }
    stacks.update({
        "q0-pcp7-dei": [(ETH_P_8021Q, 0xF000)], "q0-pcp5x5": [(ETH_P_8021Q, 0xA000)] * 5,
        "tpid9100-vid0": [(0x9100, 0)],
    })
    for name, tags in stacks.items():
        b.add(f"vlan-{name}-v4-syn", "new", "tcp", lambda s, i, t=tags: syn4(s, i, tags=t))
    for name in ("q0", "q0x4", "q0x5", "q0x6"):
        b.add(f"vlan-{name}-v6-syn", "new", "tcp", lambda s, i, t=stacks[name]: syn6(s, i, tags=t))
        b.add(f"vlan-{name}-v4-quic", "new", "udp", lambda s, i, t=stacks[name]: quic4(s, i, tags=t))
        b.add(f"vlan-{name}-v4-ack", "not-new", "tcp",
              lambda s, i, t=stacks[name]: syn4(s, i, TCP_ACK, tcp_kw={"ack": 4}, tags=t))
    b.add("vlan-q0x5-v4-syn-unprotected-port", "not-new", "tcp",
          lambda s, i: syn4(s, i, dport=TCP_OPEN_PORT, tags=[Q0] * 5))
    b.add("vlan-q0x3-frag-syn-split40", "new", "tcp", lambda s, i: split_v4(
        b, C4, S4, IPPROTO_TCP, seg4(s, payload=b"edgeshed-oracle!"), i, [40], tags=[Q0] * 3))
    b.add("vlan-q0x2-v6-syn-ext5", "new", "tcp", lambda s, i: [b.v6(ipv6(
        C6, S6, *_chain_bytes(chain_kinds[:5], seg6(s))), tags=[Q0] * 2)])
    return b.cases


def link_local(mac_bytes: bytes) -> str:
    """The EUI-64 link-local address Linux gives an interface of this MAC."""
    eui = bytes([mac_bytes[0] ^ 0x02]) + mac_bytes[1:3] + b"\xff\xfe" + mac_bytes[3:6]
    return socket.inet_ntop(socket.AF_INET6, b"\xfe\x80" + bytes(6) + eui)


def _chain_bytes(kinds, segment: bytes, upper: int = IPPROTO_TCP) -> tuple:
    """(first next header, chain + segment) for ipv6()."""
    first, chain = ipv6_chain(kinds, upper)
    return first, chain + segment


# --- sending and listening -------------------------------------------------


class TcpAnswers:
    """Every TCP segment that arrives on the client's veth, by destination
    port: the answers to the cases, matched by their source ports."""

    def __init__(self, iface: str):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.bind((iface, ETH_P_ALL))
        self.flags = {}
        self.lock = threading.Lock()
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop:
            ready, _, _ = select.select([self.sock], [], [], 0.05)
            if not ready:
                continue
            frame, addr = self.sock.recvfrom(65535)
            if addr[2] == PACKET_OUTGOING:
                continue
            port, flags = parse_tcp_reply(frame)
            if port is not None:
                with self.lock:
                    self.flags.setdefault(port, set()).add(flags)

    def answer(self, sport: int) -> str:
        with self.lock:
            seen = self.flags.get(sport, set())
        if any(f & (TCP_SYN | TCP_ACK) == TCP_SYN | TCP_ACK for f in seen):
            return "synack"
        if any(f & TCP_RST for f in seen):
            return "rst"
        return "none"

    def close(self) -> None:
        self.stop = True
        self.thread.join()
        self.sock.close()


def parse_tcp_reply(frame: bytes):
    """(destination port, flags) of a TCP segment in FRAME, or (None, 0).
    Tags may be in the frame or, taken out by the device, in metadata."""
    off = 12
    while off + 2 <= len(frame) and struct.unpack_from("!H", frame, off)[0] in (
            ETH_P_8021Q, ETH_P_8021AD):
        off += 4
    if off + 2 > len(frame):
        return None, 0
    ethertype = struct.unpack_from("!H", frame, off)[0]
    l3 = off + 2
    if ethertype == ETH_P_IP and len(frame) >= l3 + 20:
        if frame[l3 + 9] != IPPROTO_TCP:
            return None, 0
        l4 = l3 + (frame[l3] & 0x0F) * 4
    elif ethertype == ETH_P_IPV6 and len(frame) >= l3 + 40:
        if frame[l3 + 6] != IPPROTO_TCP:  # the server's answers carry no extension header
            return None, 0
        l4 = l3 + 40
    else:
        return None, 0
    if len(frame) < l4 + 14:
        return None, 0
    return struct.unpack_from("!H", frame, l4 + 2)[0], frame[l4 + 13]


class UdpReceiver:
    """The server's UDP sockets, in a process of their own in the server's
    namespace."""

    def __init__(self, netns: str, ports):
        self.proc = subprocess.Popen(
            ["nsenter", f"--net={netns}", sys.executable, os.path.abspath(__file__), "receive",
             "--ports", ",".join(map(str, ports))],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.proc.kill()
            sys.exit(f"the UDP receiver did not start: {line!r}")
        self.seen = set()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for line in self.proc.stdout:
            if line.strip().isdigit():
                self.seen.add(int(line))

    def answer(self, sport: int) -> str:
        return "delivered" if sport in self.seen else "none"

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=5)
        self.thread.join(timeout=5)


def receive(args: argparse.Namespace) -> None:
    socks = []
    for port in map(int, args.ports.split(",")):
        for family, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
            s = socket.socket(family, socket.SOCK_DGRAM)
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((addr, port))
            socks.append(s)
    print("ready", flush=True)
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select(socks, [], [], 0.5)
        for s in ready:
            _, source = s.recvfrom(65535)
            print(source[1], flush=True)


def flatten(tree, prefix="") -> dict:
    out = {}
    if isinstance(tree, dict):
        for key, value in tree.items():
            out.update(flatten(value, f"{prefix}{key}."))
    elif isinstance(tree, (int, float)) and not isinstance(tree, bool):
        out[prefix[:-1]] = tree
    return out


def counters(cmd: str) -> dict:
    """The counters of edgeshed's status: those of the interface, and of
    each class of TCP ("normal.shed_fraction") and QUIC ("quic.normal....")."""
    status = json.loads(subprocess.run(cmd, shell=True, check=True, capture_output=True,
                                       text=True).stdout)
    if isinstance(status, list):
        status = status[0]
    flat = flatten(status)
    out = {}
    for key, value in flat.items():
        parts = key.split(".")
        if parts[0] == "counters" and len(parts) == 2:
            out[parts[1]] = value
        elif parts[0] == "classes" and parts[2] == "counters":
            out[f"{parts[1]}.{parts[3]}"] = value
        elif parts[:2] == ["quic", "classes"] and parts[3] == "counters":
            out[f"quic.{parts[2]}.{parts[4]}"] = value
    return out


def verdict(before: dict, after: dict) -> str:
    moved = sorted(k for k in after if after[k] != before.get(k, 0))
    return "+".join(f"{k}:{after[k] - before.get(k, 0)}" if after[k] - before.get(k, 0) != 1 else k
                    for k in moved) or "pass"


def run(args: argparse.Namespace) -> None:
    cases = generate(mac(args.src_mac), mac(args.dst_mac), args.salt)
    if args.only:
        cases = [c for c in cases if c.name in args.only.split(",")]
    tcp_answers = TcpAnswers(args.iface)
    udp_answers = UdpReceiver(args.server_netns, (QUIC_PORT, UDP_OPEN_PORT))
    out = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    out.bind((args.iface, 0))
    verdicts = {}
    last = counters(args.counters_cmd) if args.counters_cmd else None
    t0 = time.monotonic()
    try:
        for case in cases:
            for frame in case.frames:
                out.send(frame)
            answers = tcp_answers if case.proto == "tcp" else udp_answers
            deadline = time.monotonic() + args.case_wait_ms / 1000
            while time.monotonic() < deadline and answers.answer(case.sport) == "none":
                time.sleep(0.002)
            if last is not None:
                now = counters(args.counters_cmd)
                verdicts[case.name] = verdict(last, now)
                last = now
        time.sleep(args.drain_ms / 1000)  # late answers are still the case's
    finally:
        tcp_answers.close()
        udp_answers.close()
        out.close()
    with open(args.out, "w") as f:
        f.write("# kernel_oracle.py corpus: case, label, Linux's answer, frame i/n, edgeshed's "
                "verdict, frame hex\n")
        f.write(f"# kernel {os.uname().release}\n# tcp_port {TCP_PORT}\n# quic_port {QUIC_PORT}\n")
        f.write(f"# salt {args.salt}\n")
        for case in cases:
            answers = tcp_answers if case.proto == "tcp" else udp_answers
            answer = answers.answer(case.sport)
            for n, frame in enumerate(case.frames):
                f.write(f"{case.name}\t{case.label}\t{answer}\t{n + 1}/{len(case.frames)}\t"
                        f"{verdicts.get(case.name, '-')}\t{frame.hex()}\n")
    print(f"kernel_oracle: {len(cases)} cases in {time.monotonic() - t0:.1f} s -> {args.out}",
          file=sys.stderr)


# --- judging ---------------------------------------------------------------

ACCEPTED = ("synack", "delivered")


def read_corpus(path: str) -> dict:
    """Case name -> (label, answer, verdict, frames), in the file's order."""
    cases = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, label, answer, _, verdict_text, frame = line.rstrip("\n").split("\t")
            cases.setdefault(name, (label, answer, verdict_text, []))[3].append(frame)
    return cases


def is_shed(verdict_text: str) -> bool:
    """Whether edgeshed's counters say it shed (dropped or refused) the
    case: a shed_* counter of any class, or an undersized QUIC Initial."""
    names = [part.split(":")[0].split(".")[-1] for part in verdict_text.split("+")]
    return any(n.startswith("shed_") or n == "quic_undersized" for n in names)


def shed_only_too_deep(verdict_text: str) -> bool:
    """Whether every shed counter that moved is the too-deep rule's: a frame
    whose headers go deeper than the parser reads, decided as the new
    connection it may hide (issue #38, point 2), which sheds an ACK that
    deep too while its class sheds."""
    names = [part.split(":")[0].split(".")[-1] for part in verdict_text.split("+")]
    sheds = [n for n in names if n.startswith("shed_") or n == "quic_undersized"]
    return bool(sheds) and all(n == "shed_too_deep" for n in sheds)


def judge(args: argparse.Namespace) -> None:
    control = read_corpus(args.control)
    hooks = []
    for spec in args.hook:
        name, _, path = spec.partition("=")
        hooks.append((name, read_corpus(path)))
    failures, notes, too_deep = [], [], []
    rows = []
    for case, (label, answer, _, _) in control.items():
        row = [case, label, answer]
        for hook, results in hooks:
            if case not in results:
                failures.append(f"{hook}: {case}: not run")
                row.append("(not run)")
                continue
            _, got, verdict_text, _ = results[case]
            shed = is_shed(verdict_text)
            row.append(f"{got} ({verdict_text})")
            if label == "new" and answer in ACCEPTED and got in ACCEPTED:
                failures.append(f"BYPASS {hook}: {case}: Linux answers {answer} without edgeshed, "
                                f"and {got} under shed-all (edgeshed: {verdict_text})")
            elif label == "not-new" and shed and shed_only_too_deep(verdict_text):
                too_deep.append(f"{hook}: {case} (not new, Linux answers {answer}): too deep "
                                f"to read, decided as a new connection ({verdict_text}), "
                                f"answer now {got}")
            elif label == "not-new" and shed:
                failures.append(f"OVER-SHED {hook}: {case} (not new, Linux answers {answer}): "
                                f"shed by edgeshed ({verdict_text}), answer now {got}")
            elif label == "not-new" and got != answer:
                failures.append(f"CHANGED {hook}: {case} (not new): Linux answers {answer} "
                                f"without edgeshed, {got} with it ({verdict_text})")
            elif shed and answer == "none":
                notes.append(f"{hook}: {case}: shed ({verdict_text}), which Linux drops anyway")
        rows.append(row)
    header = ["case", "label", "Linux"] + [f"{h} (answer, counters)" for h, _ in hooks]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(r) + " |" for r in rows]
    print("\n".join(table))
    for note in too_deep:
        print(f"too deep: {note}")
    for note in notes:
        print(f"note: {note}")
    summary = (f"{len(control)} cases; {sum(1 for r in rows if r[2] in ACCEPTED)} accepted by "
               f"Linux without edgeshed; {len(failures)} failures, {len(notes)} sheds of "
               f"frames Linux drops anyway, {len(too_deep)} of other traffic too deep to read")
    if args.report:
        with open(args.report, "w") as f:
            f.write(f"# Kernel oracle (kernel {os.uname().release})\n\n{summary}\n\n")
            f.write("\n".join(table) + "\n\n")
            if failures:
                f.write("## Failures\n\n" + "".join(f"- {x}\n" for x in failures) + "\n")
            if too_deep:
                f.write("## Not new, too deep to read: decided as a new connection\n\n" +
                        "".join(f"- {x}\n" for x in too_deep) + "\n")
            if notes:
                f.write("## Shed, and dropped by Linux anyway\n\n" +
                        "".join(f"- {x}\n" for x in notes))
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    print(summary)
    sys.exit(1 if failures else 0)


def list_cases(args: argparse.Namespace) -> None:
    for case in generate(bytes(6), bytes(6), args.salt):
        print(f"{case.name}\t{case.label}\t{case.proto}\t{len(case.frames)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    ls = sub.add_parser("list")
    ls.add_argument("--salt", type=int, default=0)
    r = sub.add_parser("run")
    r.add_argument("--iface", required=True)
    r.add_argument("--src-mac", required=True)
    r.add_argument("--dst-mac", required=True)
    r.add_argument("--server-netns", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--salt", type=int, default=0)
    r.add_argument("--counters-cmd")
    r.add_argument("--only", help="comma-separated case names")
    r.add_argument("--case-wait-ms", type=int, default=40)
    r.add_argument("--drain-ms", type=int, default=500)
    j = sub.add_parser("judge")
    j.add_argument("--control", required=True, help="the corpus of the run without edgeshed")
    j.add_argument("--hook", action="append", default=[], metavar="NAME=CORPUS")
    j.add_argument("--report", help="the table and the findings, as markdown")
    rc = sub.add_parser("receive")
    rc.add_argument("--ports", required=True)
    rc.add_argument("--seconds", type=int, default=300)
    args = parser.parse_args()
    {"list": list_cases, "run": run, "judge": judge, "receive": receive}[args.cmd](args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Sends SYNs the way an evasive client would, and tells whether the server
answered with a SYN-ACK. Used by tests/netns/test_evasions.sh; root only.

  raw_frames.py frag-syn SRC DST PORT --split N
      An IPv4 SYN with 16 bytes of data, sent in two fragments: the first
      carries N bytes of the TCP segment (a multiple of 8; 40 holds the whole
      header with its options, 8 hides the flags in the second fragment).
  raw_frames.py ethernet-syn IFACE SRC_MAC DST_MAC SRC DST PORT --payload N
      An IPv4 SYN with N bytes of data in an Ethernet frame of its own, from
      a packet socket with a virtio-net header, which keeps only the headers
      in the skb's linear part once the frame is a page or more
      (packet_alloc_skb()): N >= 4,096, on a link whose MTU allows it.
  raw_frames.py ipv6-hbh-syn IFACE SRC_MAC DST_MAC SRC6 DST6 PORT --payload-length N
      An IPv6 SYN behind an 8-byte Hop-by-Hop header (PadN only, no Jumbo
      option), in an Ethernet frame of its own, with the IPv6 payload length
      set to N (default 0: Linux then takes the packet's own length, as for
      a jumbogram; -1: the true length).

Each prints one line, the server's answer: "synack", "rst", or "none"
after waiting --wait-ms; and exits 0: the test judges the line.
"""
import argparse
import random
import select
import socket
import struct
import sys
import time

from frames import (ETH_P_IP, ETH_P_IPV6, IPPROTO_TCP, IPV4_MF, NEXTHDR_HOP, SYN_OPTIONS,
                    TCP_ACK, TCP_RST, TCP_SYN, ethernet, ipv4, ipv6, ipv6_options_header, mac,
                    tcp, tool_parser)

SOL_PACKET = 263
PACKET_VNET_HDR = 15
SYN_DATA = b"edgeshed-evasion"  # 16 bytes: the second fragment is not empty


def tcp_syn(src: str, dst: str, sport: int, dport: int, payload: bytes) -> bytes:
    return tcp(src, dst, sport, dport, TCP_SYN, seq=random.getrandbits(32), payload=payload)


def ipv4_header(src: str, dst: str, ident: int, frag: int, payload_len: int) -> bytes:
    return ipv4(src, dst, IPPROTO_TCP, bytes(payload_len), ident=ident, frag=frag)[:20]


def reply_listener(family: int = socket.AF_INET) -> socket.socket:
    # A raw TCP socket sees a copy of every TCP segment that arrives.
    return socket.socket(family, socket.SOCK_RAW, IPPROTO_TCP)


def wait_reply(sock: socket.socket, server: str, port: int, sport: int, wait_ms: int) -> str:
    deadline = time.monotonic() + wait_ms / 1000
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([sock], [], [], left)
        if not ready:
            break
        packet, source = sock.recvfrom(65535)
        addr = source[0]
        # IPv4 raw sockets hand over the IP header; IPv6 ones do not.
        ihl = 0 if sock.family == socket.AF_INET6 else (packet[0] & 0x0F) * 4
        if addr != server or len(packet) < ihl + 14:
            continue
        src_port, dst_port = struct.unpack("!HH", packet[ihl:ihl + 4])
        flags = packet[ihl + 13]
        if (src_port, dst_port) != (port, sport):
            continue
        if flags & TCP_RST:
            return "rst"
        if flags & (TCP_SYN | TCP_ACK) == TCP_SYN | TCP_ACK:
            return "synack"
    return "none"


def frag_syn(args: argparse.Namespace) -> str:
    if args.split <= 0 or args.split % 8:
        sys.exit("--split must be a positive multiple of 8")
    sport = random.randint(20000, 60000)
    segment = tcp_syn(args.src, args.dst, sport, args.port, SYN_DATA)
    if args.split >= len(segment):
        sys.exit(f"--split must be below the segment's {len(segment)} bytes")
    ident = random.getrandbits(16) or 1
    first = segment[:args.split]
    second = segment[args.split:]
    frames = [
        ipv4_header(args.src, args.dst, ident, IPV4_MF, len(first)) + first,
        ipv4_header(args.src, args.dst, ident, args.split // 8, len(second)) + second,
    ]
    listener = reply_listener()
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW) as out:
        for frame in frames:
            out.sendto(frame, (args.dst, 0))
    return wait_reply(listener, args.dst, args.port, sport, args.wait_ms)


def ethernet_syn(args: argparse.Namespace) -> str:
    sport = random.randint(20000, 60000)
    segment = tcp_syn(args.src, args.dst, sport, args.port, bytes(args.payload))
    packet = ipv4_header(args.src, args.dst, random.getrandbits(16), 0, len(segment)) + segment
    frame = ethernet(mac(args.dst_mac), mac(args.src_mac), ETH_P_IP) + packet
    headers_len = 14 + 20 + 20 + len(SYN_OPTIONS)
    # struct virtio_net_hdr, little-endian: no checksum offload, no GSO, and
    # hdr_len: the bytes packet_snd() puts in the linear part.
    vnet = struct.pack("<BBHHHH", 0, 0, headers_len, 0, 0, 0)
    listener = reply_listener()
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as out:
        out.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
        out.bind((args.iface, 0))
        out.send(vnet + frame)
    return wait_reply(listener, args.dst, args.port, sport, args.wait_ms)


def ipv6_hbh_syn(args: argparse.Namespace) -> str:
    sport = random.randint(20000, 60000)
    segment = tcp_syn(args.src, args.dst, sport, args.port, b"")
    # Next header TCP, length 0 (8 bytes), then PadN over the other 6.
    payload = ipv6_options_header(IPPROTO_TCP) + segment
    length = len(payload) if args.payload_length < 0 else args.payload_length
    frame = ethernet(mac(args.dst_mac), mac(args.src_mac), ETH_P_IPV6) + ipv6(
        args.src, args.dst, NEXTHDR_HOP, payload, payload_len=length)
    listener = reply_listener(socket.AF_INET6)
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as out:
        out.bind((args.iface, 0))
        out.send(frame)
    return wait_reply(listener, args.dst, args.port, sport, args.wait_ms)


def main() -> None:
    parser = tool_parser(__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    frag = sub.add_parser("frag-syn")
    frag.add_argument("src")
    frag.add_argument("dst")
    frag.add_argument("port", type=int)
    frag.add_argument("--split", type=int, required=True)
    big = sub.add_parser("ethernet-syn")
    big.add_argument("iface")
    big.add_argument("src_mac")
    big.add_argument("dst_mac")
    big.add_argument("src")
    big.add_argument("dst")
    big.add_argument("port", type=int)
    big.add_argument("--payload", type=int, default=0)
    hbh = sub.add_parser("ipv6-hbh-syn")
    for name in ("iface", "src_mac", "dst_mac", "src", "dst"):
        hbh.add_argument(name)
    hbh.add_argument("port", type=int)
    hbh.add_argument("--payload-length", type=int, default=0)
    args = parser.parse_args()
    commands = {"frag-syn": frag_syn, "ethernet-syn": ethernet_syn, "ipv6-hbh-syn": ipv6_hbh_syn}
    print(commands[args.cmd](args))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A userspace IPIP tunnel (RFC 2003) over a tun device, and a client that
sends a SYN through it: the setting of a host that decapsulates, where the
inner SYN reaches the stack on the tunnel's device and never crosses the
underlay's as TCP. This kernel has no IPIP module; a tun device given an
IPIP device's link type stands in for one. Used by tests/netns/test_tunnel.sh;
root only.

  ipip_tunnel.py set-link-type TUN TYPE
      Gives the (down) tun device TUN the link type TYPE (768: ARPHRD_TUNNEL,
      an IPIP device's).
  ipip_tunnel.py endpoint TUN REMOTE --seconds N
      The tunnel's end: IPIP packets from REMOTE are decapsulated into TUN,
      and what the stack sends out of TUN goes back to REMOTE in IPIP. Stops
      after N seconds.
  ipip_tunnel.py syn REMOTE INNER_SRC INNER_DST PORT
      Sends an IPv4 SYN from INNER_SRC to INNER_DST:PORT inside an IPIP
      packet to REMOTE, and prints the answer that comes back inside the
      tunnel: "synack", "rst" or "none" after --wait-ms.
"""
import argparse
import fcntl
import os
import random
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frames import IPPROTO_TCP, TCP_ACK, TCP_RST, TCP_SYN, ipv4, tcp, tool_parser  # noqa: E402

IPPROTO_IPIP = 4
TUNSETIFF = 0x400454CA
TUNSETLINK = 0x400454CD
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
MAX_PACKET = 65535
TUN_PI_IPV4 = struct.pack("!HH", 0, 0x0800)  # struct tun_pi: flags, ETH_P_IP


def open_tun(name: str, packet_info: bool = False) -> int:
    """packet_info: each packet carries its skb's protocol (struct tun_pi)."""
    fd = os.open("/dev/net/tun", os.O_RDWR)
    flags = IFF_TUN if packet_info else IFF_TUN | IFF_NO_PI
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), flags))
    return fd


def set_link_type(args: argparse.Namespace) -> None:
    fd = open_tun(args.tun)
    try:
        fcntl.ioctl(fd, TUNSETLINK, args.type)
    finally:
        os.close(fd)


def endpoint(args: argparse.Namespace) -> None:
    # With the packet info, as IPIP's transmit does: a packet whose skb
    # says it is not IPv4 is dropped, whatever its bytes are.
    tun = open_tun(args.tun, packet_info=True)
    # A raw socket of protocol 4 receives every IPIP packet, outer header
    # first, and sends what it is given inside one; with it open, the
    # kernel answers none of them with "protocol unreachable".
    underlay = socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_IPIP)
    print("ready", flush=True)
    deadline = time.monotonic() + args.seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([tun, underlay], [], [], left)
        if underlay in ready:
            packet, source = underlay.recvfrom(MAX_PACKET)
            if source[0] == args.remote:
                os.write(tun, TUN_PI_IPV4 + packet[(packet[0] & 0x0F) * 4:])
        if tun in ready:
            read = os.read(tun, MAX_PACKET)
            inner = read[len(TUN_PI_IPV4):]
            if read[:len(TUN_PI_IPV4)] == TUN_PI_IPV4 and inner and inner[0] >> 4 == 4:
                underlay.sendto(inner, (args.remote, 0))


def syn(args: argparse.Namespace) -> str:
    sport = random.randint(20000, 60000)
    segment = tcp(args.inner_src, args.inner_dst, sport, args.port, TCP_SYN,
                  seq=random.getrandbits(32))
    inner = ipv4(args.inner_src, args.inner_dst, IPPROTO_TCP, segment,
                 ident=random.getrandbits(16))
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_IPIP) as tunnel:
        tunnel.sendto(inner, (args.remote, 0))
        deadline = time.monotonic() + args.wait_ms / 1000
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([tunnel], [], [], left)
            if not ready:
                break
            packet, source = tunnel.recvfrom(MAX_PACKET)
            if source[0] != args.remote:
                continue
            reply = packet[(packet[0] & 0x0F) * 4:]
            ihl = (reply[0] & 0x0F) * 4
            if len(reply) < ihl + 14 or reply[9] != IPPROTO_TCP:
                continue
            if socket.inet_ntoa(reply[12:16]) != args.inner_dst:
                continue
            if struct.unpack("!HH", reply[ihl:ihl + 4]) != (args.port, sport):
                continue
            flags = reply[ihl + 13]
            if flags & TCP_RST:
                return "rst"
            if flags & (TCP_SYN | TCP_ACK) == TCP_SYN | TCP_ACK:
                return "synack"
    return "none"


def main() -> None:
    parser = tool_parser(__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    link = sub.add_parser("set-link-type")
    link.add_argument("tun")
    link.add_argument("type", type=int)
    end = sub.add_parser("endpoint")
    end.add_argument("tun")
    end.add_argument("remote")
    end.add_argument("--seconds", type=float, required=True)
    client = sub.add_parser("syn")
    for name in ("remote", "inner_src", "inner_dst"):
        client.add_argument(name)
    client.add_argument("port", type=int)
    args = parser.parse_args()
    if args.cmd == "set-link-type":
        set_link_type(args)
    elif args.cmd == "endpoint":
        endpoint(args)
    else:
        print(syn(args))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Connects to ADDR:PORT and tells the VLAN tag of the RST that answers, as
the client's NIC received it: "rst vlan N", "rst untagged", or "none" after
--wait-ms. A packet socket with PACKET_AUXDATA reads the tag whether it is
in the frame's bytes or in the skb's metadata, and sees the RST even when
the stack drops it (a VLAN this host has no device for). Used by
tests/netns/test_vlan_offload.sh; root only.

  rst_vlan.py IFACE ADDR PORT
"""
import argparse
import os
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frames import ETH_P_IP, IPPROTO_TCP, TCP_RST  # noqa: E402

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 1 << 4
VLAN_VID_MASK = 0x0FFF
# struct tpacket_auxdata: status, len, snaplen, mac, net, vlan_tci, vlan_tpid
AUXDATA = struct.Struct("=IIIHHHH")


def rst_vlan(args: argparse.Namespace) -> str:
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL)) as sniff:
        sniff.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        sniff.bind((args.iface, 0))
        client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        client.setblocking(False)
        client.connect_ex((args.addr, args.port))
        sport = client.getsockname()[1]
        deadline = time.monotonic() + args.wait_ms / 1000
        try:
            while (left := deadline - time.monotonic()) > 0:
                if not select.select([sniff], [], [], left)[0]:
                    break
                frame, ancillary, _, _ = sniff.recvmsg(65535, socket.CMSG_SPACE(AUXDATA.size))
                vlan = None
                for level, kind, data in ancillary:
                    if level == SOL_PACKET and kind == PACKET_AUXDATA:
                        status, _, _, _, _, tci, _ = AUXDATA.unpack(data[:AUXDATA.size])
                        if status & TP_STATUS_VLAN_VALID:
                            vlan = tci & VLAN_VID_MASK
                if len(frame) < 14 + 20 + 14 or struct.unpack("!H", frame[12:14])[0] != ETH_P_IP:
                    continue
                ip = frame[14:]
                ihl = (ip[0] & 0x0F) * 4
                if ip[9] != IPPROTO_TCP or len(ip) < ihl + 14:
                    continue
                src_port, dst_port = struct.unpack("!HH", ip[ihl:ihl + 4])
                if (src_port, dst_port) != (args.port, sport) or not ip[ihl + 13] & TCP_RST:
                    continue
                return f"rst vlan {vlan}" if vlan is not None else "rst untagged"
        finally:
            client.close()
    return "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("iface")
    parser.add_argument("addr")
    parser.add_argument("port", type=int)
    parser.add_argument("--wait-ms", type=int, default=1000)
    print(rst_vlan(parser.parse_args()))


if __name__ == "__main__":
    main()

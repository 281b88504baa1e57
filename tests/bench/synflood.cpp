// synflood: the SYN flood generator of the benchmarks, an AF_PACKET sender.
//
//   synflood --iface IF --dst-mac MAC --dst ADDR --port PORT --count N
//            [--src-net A.B.C.0] [--batch 64] [--rate PPS] [--timeout-s 60]
//
// Sends N TCP SYNs (IPv4, Linux's SYN options) out of IF, as fast as the
// receiver takes them, from random sources in the /24 --src-net (spoofed),
// random source ports and sequence numbers, checksums recomputed for each.
// PACKET_QDISC_BYPASS, batches of sendmmsg. When the receiving side is full
// (a veth whose peer runs NAPI pushes back with EAGAIN/ENOBUFS), it waits a
// little and sends the same packets again: nothing is lost on the way, so the
// time it takes is the receiver's rate, not the sender's. --rate paces the
// batches to PPS SYNs a second (0: as fast as the receiver takes them).
//
// --frames sends the flood as XDP frames instead, without an skb: the kernel
// runs synflood_xdp.bpf.c in BPF_PROG_TEST_RUN's live-frames mode, and each
// SYN it writes is redirected out of IF. A veth hands XDP frames to its peer's
// NAPI ring as they are, the way a NIC's driver sees a packet before any skb
// exists: the receiver's XDP program then runs on the frame, and only a frame
// it passes becomes an skb. Nothing waits in this mode: a frame that finds the
// ring full is dropped by the veth, so the receiver counts what it got.
//
// Prints one line: "sent N seconds S pps P waits W". Exits 1 on an error,
// 2 on a usage error, 3 if the timeout cut the run short.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "common/packet.h"
#include "synflood_xdp.skel.h"

namespace {

using edgeshed::testing::Bytes;
using edgeshed::testing::Mac;
using edgeshed::testing::PacketBuilder;
using Clock = std::chrono::steady_clock;

// Offsets in an untagged IPv4 frame without IP options.
constexpr size_t kIp = 14, kTcp = 34;

// Six hex octets between colons; sscanf's %x took "1ff" (as ff) and "-1".
bool parse_mac(const std::string& text, Mac* mac) {
  const char* p = text.data();
  const char* const end = p + text.size();
  for (size_t i = 0; i < mac->size(); ++i) {
    if (i > 0 && (p == end || *p++ != ':')) return false;
    uint8_t octet = 0;
    const auto [next, ec] = std::from_chars(p, end, octet, 16);
    if (ec != std::errc() || next - p > 2) return false;
    (*mac)[i] = octet;
    p = next;
  }
  return p == end;
}

void set16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// xorshift64*: cheap, and good enough to spread sources, ports and sequences.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
};

// Rewrites the template into a new SYN: source host, port, sequence, IP id.
void randomize(Bytes& f, Rng& rng) {
  uint64_t r = rng.next();
  f[kIp + 15] = static_cast<uint8_t>(1 + (r & 0xff) % 254);  // host 1..254 of the /24
  set16(&f[kIp + 4], static_cast<uint16_t>(r >> 8));         // IP id
  set16(&f[kTcp], static_cast<uint16_t>(1024 + (r >> 24) % 64000));
  uint32_t seq = static_cast<uint32_t>(r >> 32);
  for (int i = 0; i < 4; ++i) f[kTcp + 4 + i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
  std::span<const uint8_t> ip(&f[kIp], 20);
  set16(&f[kIp + 10], edgeshed::testing::ipv4_header_checksum(ip));
  std::span<const uint8_t, 4> src(&f[kIp + 12], 4), dst(&f[kIp + 16], 4);
  std::span<const uint8_t> seg(&f[kTcp], f.size() - kTcp);
  set16(&f[kTcp + 16], edgeshed::testing::tcp_checksum_v4(src, dst, seg));
}

// Sleeps until `sent` SYNs are due at `rate` a second from t0; rate 0: no pacing.
void pace(Clock::time_point t0, uint64_t sent, double rate) {
  if (rate <= 0) return;
  std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(sent / rate)));
}

struct SkelDeleter {
  void operator()(synflood_xdp_bpf* s) const { synflood_xdp_bpf__destroy(s); }
};

// The flood as XDP frames; returns the exit code.
int send_frames(const Bytes& tmpl, int ifindex, uint64_t count, unsigned batch, double rate,
                double timeout_s) {
  std::unique_ptr<synflood_xdp_bpf, SkelDeleter> skel(synflood_xdp_bpf__open());
  if (!skel) {
    std::perror("synflood: open the XDP program");
    return 1;
  }
  skel->rodata->target_ifindex = static_cast<uint32_t>(ifindex);
  if (tmpl.size() != sizeof(skel->rodata->frame_template)) {
    std::fprintf(stderr, "synflood: the template is %zu bytes, the XDP program wants %zu\n",
                 tmpl.size(), sizeof(skel->rodata->frame_template));
    return 1;
  }
  std::memcpy(const_cast<uint8_t*>(skel->rodata->frame_template), tmpl.data(), tmpl.size());
  if (int err = synflood_xdp_bpf__load(skel.get()); err != 0) {
    std::fprintf(stderr, "synflood: load the XDP program: %s\n", std::strerror(-err));
    return 1;
  }
  const int prog = bpf_program__fd(skel->progs.synflood_xdp);
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration<double>(timeout_s);
  // Chunks, so that the deadline is looked at now and then; one batch each
  // when paced.
  const uint64_t chunk = rate > 0 ? batch : 65536;
  uint64_t sent = 0;
  bool timed_out = false;
  while (sent < count) {
    if (Clock::now() > deadline) {
      timed_out = true;
      break;
    }
    pace(t0, sent, rate);
    const uint64_t n = std::min(chunk, count - sent);
    bpf_test_run_opts o{};
    o.sz = sizeof(o);
    o.data_in = tmpl.data();
    o.data_size_in = static_cast<uint32_t>(tmpl.size());
    o.repeat = static_cast<uint32_t>(n);
    o.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
    o.batch_size = batch;
    if (bpf_prog_test_run_opts(prog, &o) != 0) {
      std::perror("synflood: BPF_PROG_TEST_RUN (live frames)");
      return 1;
    }
    sent += n;
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("sent %llu seconds %.4f pps %.0f waits 0\n", static_cast<unsigned long long>(sent), s,
              static_cast<double>(sent) / s);
  return timed_out ? 3 : 0;
}

int run_main(int argc, char** argv) {
  CLI::App app{"synflood: a bounded SYN flood from spoofed sources, for the benchmarks"};
  std::string iface, dst_mac_text, dst, src_net = "203.0.113.0";
  uint16_t port = 8080;
  uint64_t count = 0;
  unsigned batch = 64;
  double timeout_s = 60;
  double rate = 0;
  bool frames_mode = false;
  app.add_option("--iface", iface, "Interface to send from")->required();
  app.add_option("--dst-mac", dst_mac_text, "Destination MAC (the peer's)")->required();
  app.add_option("--dst", dst, "Destination IPv4 address")->required();
  app.add_option("--port", port, "Destination port")->capture_default_str();
  app.add_option("--count", count, "SYNs to send")->required()->check(CLI::Range(1ull, 1000000000ull));
  app.add_option("--src-net", src_net, "Source /24 (x.y.z.0)")->capture_default_str();
  app.add_option("--batch", batch, "Frames per sendmmsg, or per flush with --frames (at most 256)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  app.add_option("--rate", rate, "SYNs a second (0: as fast as the receiver takes them)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  app.add_option("--timeout-s", timeout_s, "Give up after this long")->capture_default_str();
  app.add_flag("--frames", frames_mode, "Send XDP frames (live-frames test run), not skbs");
  CLI11_PARSE(app, argc, argv);

  Mac dst_mac{};
  if (!parse_mac(dst_mac_text, &dst_mac)) {
    std::fprintf(stderr, "synflood: --dst-mac '%s' is not a MAC address\n", dst_mac_text.c_str());
    return 2;
  }
  edgeshed::Fd fd(socket(AF_PACKET, SOCK_RAW, 0));  // protocol 0: send only
  if (fd.get() < 0) {
    std::perror("synflood: socket");
    return 1;
  }
  ifreq ifr{};
  if (iface.size() >= sizeof(ifr.ifr_name)) {
    std::fprintf(stderr, "synflood: --iface '%s' is longer than an interface name\n",
                 iface.c_str());
    return 2;
  }
  std::memcpy(ifr.ifr_name, iface.c_str(), iface.size() + 1);
  if (ioctl(fd.get(), SIOCGIFINDEX, &ifr) != 0) {
    std::fprintf(stderr, "synflood: %s: %s\n", iface.c_str(), std::strerror(errno));
    return 1;
  }
  const int ifindex = ifr.ifr_ifindex;
  if (ioctl(fd.get(), SIOCGIFHWADDR, &ifr) != 0) {
    std::perror("synflood: SIOCGIFHWADDR");
    return 1;
  }
  Mac src_mac{};
  std::memcpy(src_mac.data(), ifr.ifr_hwaddr.sa_data, 6);
  int one = 1;
  setsockopt(fd.get(), SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = ifindex;
  to.sll_halen = 6;
  std::memcpy(to.sll_addr, dst_mac.data(), 6);

  edgeshed::testing::TcpSpec spec;
  spec.dport = port;
  spec.window = 64240;
  spec.options = edgeshed::testing::syn_options();
  const Bytes tmpl = PacketBuilder()
                         .eth(src_mac, dst_mac)
                         .ipv4(src_net.substr(0, src_net.rfind('.')) + ".1", dst)
                         .tcp(spec)
                         .build();

  // The kernel's live-frames batch is at most 256 (a veth's ring is 256 too).
  if (frames_mode) return send_frames(tmpl, ifindex, count, std::min(batch, 256u), rate, timeout_s);

  std::vector<Bytes> frames(batch, tmpl);
  std::vector<iovec> iov(batch);
  std::vector<mmsghdr> msgs(batch);
  Rng rng{0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(getpid())};
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration<double>(timeout_s);
  uint64_t sent = 0, waits = 0;
  bool timed_out = false;
  while (sent < count && !timed_out) {
    pace(t0, sent, rate);
    const unsigned n = static_cast<unsigned>(std::min<uint64_t>(batch, count - sent));
    for (unsigned i = 0; i < n; ++i) {
      randomize(frames[i], rng);
      iov[i] = {frames[i].data(), frames[i].size()};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_name = &to;
      msgs[i].msg_hdr.msg_namelen = sizeof(to);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    unsigned done = 0;
    while (done < n) {
      int r = sendmmsg(fd.get(), &msgs[done], n - done, 0);
      if (r > 0) {
        done += static_cast<unsigned>(r);
        continue;
      }
      if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
        std::perror("synflood: sendmmsg");
        return 1;
      }
      // The receiver is full: give it the CPU for a moment.
      ++waits;
      if (Clock::now() > deadline) {
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    sent += done;
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("sent %llu seconds %.4f pps %.0f waits %llu\n", static_cast<unsigned long long>(sent), s,
              static_cast<double>(sent) / s, static_cast<unsigned long long>(waits));
  return timed_out ? 3 : 0;
}

}  // namespace

// An exception that escapes is a bug, but it should still say what it was,
// not only abort.
int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synflood: %s\n", e.what());
    return 1;
  }
}

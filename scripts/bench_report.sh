#!/usr/bin/env bash
# Writes BENCHMARKS.md, and copies the plots to docs/bench/, from the results
# of the last `make bench` (BENCH_OUT, build/bench by default). Run by `make
# bench` at its end; `make bench-report` runs it alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${BENCH_OUT:-$root/build/bench}
doc=$root/BENCHMARKS.md
names=(dataplane synflood refusal saturation overload controller)

for n in "${names[@]}"; do
	[ -s "$out/$n/table.txt" ] || { echo "bench_report: no $out/$n/table.txt: run make bench first" >&2; exit 1; }
done
mkdir -p "$root/docs/bench"
for n in "${names[@]}"; do
	[ -f "$out/$n/$n.png" ] && cp "$out/$n/$n.png" "$root/docs/bench/$n.png"
done

pkg() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"; }
table() { echo '```'; cat "$out/$1/table.txt"; echo '```'; }
plot() { [ -f "$root/docs/bench/$1.png" ] && printf '\n![%s](docs/bench/%s.png)\n' "$2" "$1"; true; }
started=$(sed -n 's/^make bench: started \(.*UTC\).*/\1/p' "$out/run.log" 2>/dev/null | head -1)
load=$(sed -n 's/^make bench: started .*UTC, load average \(.*\)/\1/p' "$out/run.log" 2>/dev/null | head -1)
finished=$(sed -n 's/^make bench: finished //p' "$out/run.log" 2>/dev/null | tail -1)
built=$(sed -n 's/^make bench: built //p' "$out/run.log" 2>/dev/null | head -1)
mins() { awk -v a="$(date -d "${1:-now}" +%s)" -v b="$(date -d "${2:-now}" +%s)" 'BEGIN { printf "%.1f", (b - a) / 60 }'; }
minutes="$(mins "$started" "$finished") min: build and dependencies $(mins "$started" "$built") min, benchmarks $(mins "$built" "$finished") min"
# The commit the run measured, as make bench noted it (BENCH_COMMIT overrides).
commit=${BENCH_COMMIT:-$(sed -n 's/^make bench: commit //p' "$out/run.log" 2>/dev/null | head -1)}
commit=${commit:-unknown}

{
	cat <<EOF
# edgeshed benchmarks

Every figure below comes from one run of \`make bench\`, written into this file
by \`scripts/bench_report.sh\`. Each benchmark measures its setups side by side
in that run and prints absolute figures next to ratios. No figure is asserted
in a test: the machine below is small and shared, so read the ratios, which
hold better than the absolute numbers, and re-run on your own machine.

## Reproduce

\`\`\`sh
sudo make bench            # all six, then this file and docs/bench/*.png
sudo make bench-synflood   # or one of them: bench-dataplane, bench-synflood,
                           # bench-refusal, bench-saturation, bench-overload,
                           # bench-controller
sudo make bench-report     # this file again, from build/bench/ of the last run
\`\`\`

Each target installs its dependencies (\`scripts/deps.sh\`), builds only the
tools it needs, and writes its table and plot to \`build/bench/NAME/\`.
Variables: \`REPEAT\` (runs per setup, default 3); SYN flood
\`FRAME_COUNT\` (3000000) and \`SYN_COUNT\` (400000); refusal \`OVER_RATE\`
(2500), \`LOAD_S\` (2) and \`FULL_S\` (3); saturation \`SATURATION_RATES\`
(5000 20000), \`LG_MAX_RATE\` (60000), \`SAT_COUNT\` (1500000); overload \`ONSET_S\` (1) and \`OVER_S\` (3);
controller \`SECONDS_TO_RUN\` (15). \`SYNFLOOD_SETUPS\`, \`REFUSAL_SETUPS\`, \`SATURATION_SETUPS\`,
\`OVERLOAD_SETUPS\` and \`OVERLOAD_FACTORS\` pick a subset.

## This run

| | |
|---|---|
| command | \`sudo make bench\` |
| date | ${started:-unknown} to ${finished:-unknown} (${minutes}) |
| commit | ${commit} |
| kernel | $(uname -r) |
| CPU | $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores |
| memory | $(free -g | awk '/^Mem:/ { print $2 }') GiB |
| OS | Debian $(cat /etc/debian_version 2>/dev/null || echo "?") |
| load average at the start | ${load:-unknown} (1, 5, 15 min) |
| tools | nginx $(pkg nginx), HAProxy $(pkg haproxy), nftables $(pkg nftables), iptables $(pkg iptables) (nf_tables backend), the lab's own generators (tests/bench/synflood.cpp, tests/tools/loadgen.cpp) |

The machine is a 2-core VM shared with other builds and tests, which is why
every lab benchmark interleaves its setups' runs and reports medians.

## Targets

\`\`\`
$(for n in "${names[@]}"; do grep -E '^target' "$out/$n/table.txt"; done)
\`\`\`
EOF
	cat <<'EOF'

## How the lab measures

All of 2 to 5 run in the netns lab of `tests/netns/lib.sh`: a server and a
client namespace joined by a veth pair, static neighbours, everything torn
down on every exit path. Each run of each setup gets a fresh lab, so that no
conntrack entry, SYN queue or counter of one run leaks into the next, and the
runs of the setups are interleaved (setup 1, 2, 3, then 1, 2, 3 again) so
that a noisy minute on the shared host hits every setup alike. Tables show
medians of `REPEAT` runs; `build/bench/NAME/runs/` keeps every run's raw data.

**Server-side CPU.** A veth delivers a packet in the sender's context: left
alone, the server's whole receive path (XDP, TC, netfilter, TCP) would run in
softirq on the sending CPU, inside the client's system call, and
`/proc/stat`'s softirq column would mix both sides. So the lab turns NAPI on
at both ends of the veth (GRO on, TSO off, so that every skb goes through the
NAPI ring) and makes it threaded: each veth's receive path runs in a kernel
thread of its own, `napi/IFACE-N`. The server side of the cost is then the
utime+stime of the server veth's NAPI thread (from the ring through XDP, TC,
netfilter and TCP, and the replies up to the client's ring) plus that of every
process in the server namespace (refserver, nginx, HAProxy, the daemon). The
client's NAPI thread and the load generators are not counted. Task time is
the scheduler's own clock, summed over every thread
(`/proc/PID/task/TID/schedstat`, in nanoseconds), rather than the
tick-sampled utime+stime. Each measurement subtracts the same threads' rate
in a quiet window just before the load. The host's softirq column stays near
zero during the floods, which shows that no receive work escapes these
threads.

**Ports.** The benchmarks that cap in-flight connections (3 to 5) serve on
port 18080 (`SVC_PORT`), away from the port 80 of the tests. The in-flight
tracker counts only the connections of the attached interface's network
namespace, so another lab on the same host cannot count against the cap.

**What the veth cannot show.** On a NIC with native XDP, the driver runs the
program on the raw frame, before any skb exists; every other hook (TC,
netfilter, the TCP stack) comes after the skb is built. A veth receiving skbs
has them already, and before an XDP program (native or generic) may run, the
kernel copies each one into a page with 256 bytes of XDP headroom. Hence two
floods in benchmark 2: `frames`, where the generator (`tests/bench/synflood.cpp
--frames`, a live-frames `BPF_PROG_TEST_RUN` of `synflood_xdp.bpf.c` that
redirects each SYN into the veth) puts XDP frames on the server's NAPI ring
without an skb, as a NIC's ring holds them (and drops what does not fit, as a
NIC's ring does), and `skb`, an AF_PACKET flood, where XDP pays that copy.
The first is the model of production; the second is what a veth or a
container interface really costs.

### 1. Data plane cost

`tests/bench/bench_dataplane.cpp`: `BPF_PROG_TEST_RUN` of each path, XDP and
TC entry points, next to a program that returns at once (`bpf/baseline.bpf.c`),
repeat 2,000,000, median of 5 rounds; the RST path, which rewrites its packet,
with repeat 1 (20,000 runs) next to the baseline with repeat 1.

### 2. SYN flood absorption

The flood goes to port 8080 of the server namespace, where refserver
listens, from sources spoofed in 203.0.113.0/24 (random host and port, random
sequence number, Linux's SYN options, checksums per packet). The server
routes its answers back through the client namespace, where a netdev ingress
rule drops them (the Internet). Setups: no filter (the kernel's SYN queue and
SYN cookies), nftables `limit rate over 100/second` on SYNs to 8080 at
priority raw (before conntrack, its cheapest place), nftables `ct count over
100` (input hook, conntrack), iptables `-m connlimit --connlimit-above 100
--connlimit-mask 0` (the nf_tables backend with the xt match), edgeshed XDP
drop, XDP rst (RST budget raised to 10,000,000/s per CPU and the reflection
limit off, so that every SYN takes the RST path), XDP rst with the
reflection limit at its defaults (its RSTs toward the flood's one /24 are
checked against its burst and rate) and TC drop (XDP generic drop too, with
`SYNFLOOD_SETUPS`), all edgeshed setups with a
token bucket of 100/s (`edgeshed policy --rate 100 --burst 100`). Each filter
thus admits about 100 SYNs a second and drops the rest. A real client
(loadgen, 100 requests/s, a new connection each) asks port 80 of the same
refserver during the floods: it measures what the flood costs the host, not
the lottery that a rate limit on the flooded port would be for it. Its p99
is about 1 s wherever the flood fills the server's NAPI ring: its own SYN is
then dropped at the ring and retransmitted after 1 s, as on a NIC whose ring
overflows.

### 3. Cost of refusing a connection

refserver (10 workers x 20 ms, 500 requests/s) behind: edgeshed (native XDP,
static in-flight cap 10, RST), nginx (Debian's, `limit_conn` 10 per server,
`limit_conn_status 503`, `proxy_pass` to refserver, 2 workers, access log
off) and HAProxy (Debian's, `server ... maxconn 10`, and a 503 at once when
10 requests already wait in the backend's queue). nginx and HAProxy run in
the server namespace from configurations in a temporary folder, never as
services. Each run offers 2,500 requests/s (5x) on new connections twice: as
it is for 2 s (time to refusal at the client, admitted p99), then for 3 s
while 10 long `/stream` requests hold every slot, so that every request is
refused: the server side's CPU during that load, less its quiet rate (the held
streams included; the mean of the second before and the second after), over
the refusals, is the CPU per refused connection.

Read the CPU per refusal with the lab's cost structure in mind. At 2,500
connections a second the server veth's NAPI thread is woken for nearly every
packet, and in this VM a wake-up costs microseconds: a RST refusal is one
packet in and one out, so that overhead is likely most of edgeshed's figure (it falls
as the rate rises and packets batch, and the same RST path costs under 1.5 us
per SYN in the floods of benchmark 2), while nginx and HAProxy pay it on
every packet of a whole connection and their own work on top. Benchmark 4
measures the same refusals up to saturation, where the NAPI thread no longer
sleeps between packets: that, not this one, settles how many refusals a
server core can make.

### 4. Refusals per server core at saturation

How many new connections a second one server core turns away, each setup
refusing every one (10 long \`/stream\` requests hold its 10 slots, or its
rate is 1/s): edgeshed's RST at native XDP (the client's veth runs an XDP
program, so that XDP_TX reaches it) and at TC (in-flight cap 10); nftables
\`reject with tcp reset\` over \`ct count over 10\` (input hook) and over
\`limit rate over 1/second\` (prerouting, priority raw); nginx \`limit_conn\`
and HAProxy \`maxconn\` as in 3. The server side (its veth's NAPI thread and
the server namespace's processes) is pinned to CPU 1, the client side to
CPU 0. Two drivers: loadgen's real connections at 5,000/s, 20,000/s and
60,000/s offered (the client's core gives out first, near 20,000/s against
nginx and HAProxy, past it against the kernel's refusals), and, for the
kernel setups, SYNs from spoofed sources (\`tests/bench/synflood.cpp\`,
AF_PACKET) at 5,000/s, 20,000/s and as fast as the server takes them, the
RSTs counted and dropped by an XDP program on the client's veth
(\`tests/bench/rst_sink.bpf.c\`). Refusals per core are the refusals per
second of server-side CPU, taken at each setup's load that kept the server
core busiest; where that is under 100%, the client was the limit. A perf
profile of the server's NAPI thread during the flood splits each kernel
setup's CPU per refusal into its own code and the path all of them pay on a
veth (AF_PACKET's skb and its copy into an XDP page, IP input, the RST's way
out), which a NIC's driver would replace.

### 5. End-to-end overload

The classic case: refserver with 10 workers x 20 ms (capacity 500/s), loadgen
at 0.4x for 1 s, then 1.6x or 5x for 3 s, a new connection per request,
5 s timeout. Setups: no shedding; a static in-flight threshold (edgeshed's
data plane alone, XDP generic, cap 10, RST, no daemon); edgeshed adaptive
(the daemon with the demo's configuration, `scripts/demo.toml`: only the
port named, so the capacity limit on the response time the data plane
measures, RST). Reaction time is measured at the client, from
the per-request CSV: from the overload's onset to the first RST, and to the
first 100 ms mark after which the admitted requests' p99 stays under 40 ms
(2x the service time) for the rest of the overload.

### 6. Controller overhead

`tests/bench/bench_controller.sh`: the daemon with all eight signal kinds on
one interface, utime+stime from `/proc/PID/stat` over 15 s of steady state,
at the default tick (100 ms) and at 10 ms.
EOF
	echo
	echo "## 1. Data plane cost (\`make bench-dataplane\`)"
	echo
	table dataplane
	plot dataplane "ns per packet by path, XDP and TC"
	echo
	echo "## 2. SYN flood absorption (\`make bench-synflood\`)"
	echo
	table synflood
	plot synflood "CPU per million SYNs and SYNs per second by setup"
	echo
	echo "## 3. Cost of refusing a connection (\`make bench-refusal\`)"
	echo
	table refusal
	plot refusal "CPU per refused connection and time to refusal by setup"
	echo
	echo "## 4. Refusals per server core at saturation (\`make bench-saturation\`)"
	echo
	table saturation
	plot saturation "refusals per server core at saturation by setup"
	echo
	echo "## 5. End-to-end overload (\`make bench-overload\`)"
	echo
	table overload
	plot overload "admitted latency and shed rate over time by setup"
	echo
	echo "## 6. Controller overhead (\`make bench-controller\`)"
	echo
	table controller
	cat <<'EOF'

## 7. Real servers (`make bench-servers`)

Not part of `make bench`: the matrix of real servers (nginx, an asyncio
server and a thread-per-connection server that accept at once, refserver),
protected by a config that names only the port, against an in-process
semaphore and a static cap, runs for over an hour. Its last run, with issue
#15's targets met or missed and why, is in
[docs/bench/servers.md](docs/bench/servers.md).
EOF
} >"$doc"
echo "bench_report: wrote $doc and docs/bench/*.png"

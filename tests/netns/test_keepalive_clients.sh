#!/usr/bin/env bash
# keepalive = "refuse" with the clients users have, each a closed loop that
# rises from 7 connections in service (0.7x of 10 slots) for 3 s to 50 (5x)
# for 6 s, from configs and command lines written here:
#   - Go's net/http (tests/tools/go_http_client.go), the default transport
#     (2 idle connections kept per host) and a pool (50 kept);
#   - curl, one process per connection, each reusing its connection;
#   - wrk;
#   - h2load over HTTP/2 and TLS, through nginx (streams multiplexed on 5
#     connections).
# HTTP/1.1 goes to the eager server of the matrix (10 slots x 20 ms) on port
# 80; HTTP/2 to nginx on 443, in front of another eager server on
# 127.0.0.1:8080. Both ports are protected with keepalive = "refuse", the
# daemon started cold from the port-only config.
#
# Claims, each a hard invariant (the figures are printed for docs/bench):
#   - no request is read and then lost: the eager servers count the requests
#     they read and could not answer, nginx logs each request it did not
#     complete ($request_completion), and each must be 0: a refusal reaches
#     only a request the server has not read;
#   - no HTTP/2 stream is cut: h2load's failed and errored streams are 0;
#   - Go retried transparently every refused request it had sent on a
#     reused connection: what its application saw as errors is printed.
# SV_POD=1 or cgroup: the servers in a pod, the ports naming its namespace
# or its cgroup (servers_lib.sh; `make bench-never-harm-pods`).
source "$(dirname "$0")/servers_lib.sh"

: "${GO_HTTP_CLIENT:?path of the go_http_client binary (build: make all)}"
for tool in wrk h2load curl openssl "$GO_HTTP_CLIENT"; do
	command -v "$tool" >/dev/null || fail "$tool not found: scripts/deps.sh installs it"
done

PORT=80
TLS_PORT=443
UPSTREAM=8080
SLOTS=10
SERVICE_MS=20
CALM=7
OVER=43 # added to CALM: 50 in service
CALM_S=3
OVER_S=6

scenario_up
client_xdp_pass
sv_in_pod_if_asked
start_server eager "$PORT" "$SLOTS" "$SERVICE_MS"
EAGER_LOG=$SERVER_LOG
EAGER_PIDS=("${SERVER_PIDS[@]}")

# nginx: TLS and HTTP/2 on 443, a proxy to an eager server of its own.
sv_bg "$SC_WORK/upstream.log" "$PYTHON" "$SV_TOOLS/eager_server.py" --address 127.0.0.1 \
	--port "$UPSTREAM" --workers "$SLOTS" --service-ms "$SERVICE_MS" --duration-s "$SERVER_LIFE_S"
UPSTREAM_PIDS=("$SV_BG")
wait_listening 127.0.0.1 "$UPSTREAM" "$SV_BG" "$SC_WORK/upstream.log"
NGX=$SC_WORK/nginx.tls
mkdir -p "$NGX"/{client_body,proxy,fastcgi,uwsgi,scgi}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=edgeshed-lab \
	-keyout "$NGX/key.pem" -out "$NGX/cert.pem" 2>"$NGX/openssl.log" ||
	fail "openssl could not make a certificate: $(cat "$NGX/openssl.log")"
cat >"$NGX/nginx.conf" <<EOF
worker_processes 1;
pid $NGX/nginx.pid;
error_log $NGX/error.log warn;
events { worker_connections 4096; }
http {
    log_format lab '\$status completion=\$request_completion \$request_time';
    access_log $NGX/access.log lab;
    client_body_temp_path $NGX/client_body;
    proxy_temp_path $NGX/proxy;
    fastcgi_temp_path $NGX/fastcgi;
    uwsgi_temp_path $NGX/uwsgi;
    scgi_temp_path $NGX/scgi;
    keepalive_timeout 30s;
    keepalive_requests 100000;
    http2_max_requests 100000;
    upstream eager { server 127.0.0.1:$UPSTREAM; keepalive 64; }
    server {
        listen $TLS_PORT ssl http2 backlog=4096;
        ssl_certificate $NGX/cert.pem;
        ssl_certificate_key $NGX/key.pem;
        location / {
            proxy_pass http://eager;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 30s;
        }
    }
}
EOF
"$NGINX" -t -c "$NGX/nginx.conf" -p "$NGX" -g 'daemon off;' >"$NGX/test.log" 2>&1 || fail "nginx -t: $(cat "$NGX/test.log")"
sv_bg "$NGX/nginx.log" timeout --kill-after=5 "$SERVER_LIFE_S" "$NGINX" -c "$NGX/nginx.conf" -p "$NGX" -g 'daemon off;'
wait_listening "$SRV_V4" "$TLS_PORT" "$SV_BG" "$NGX/nginx.log"
in_cli curl -sk --http2 --max-time 5 "https://$SRV_V4:$TLS_PORT/" | grep -qx ok || fail "nginx over TLS does not answer"

cfg=$(matrix_config port_only "$PORT")
echo 'keepalive = "refuse"' >>"$cfg"
printf '\n[[port]]\nport = %s\nkeepalive = "refuse"\n%s\n' "$TLS_PORT" "$(sv_port_where)" >>"$cfg"
start_daemon_config "$cfg"

# in_cli_lab CMD...: CMD in the client namespace at the lab's priority,
# 40 s at most.
in_cli_lab() { timeout --kill-after=5 40 "${SC_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$@"; }
# The data plane's requests refused and connections shed so far.
counters() {
	es_status | jq -r '[([.classes[].counters.requests_refused] | add),
		([.classes[].counters | .shed_cap + .shed_fraction + .shed_rate] | add)] | @tsv'
}
# run_client NAME CMD...: CMD (bounded by in_cli_lab) with the
# data plane's counts around it: REFUSED (requests on open connections),
# SHED (new connections), SERVER_P99 (the kernel's p99 of the protected
# ports, median of its samples from 2 s into the overload).
run_client() {
	local name=$1 r0 s0 r1 s1
	shift
	read -r r0 s0 < <(counters)
	start_state_sampler "$SC_WORK/$name.states"
	"$@" || echo "$name: exit $?" >&2
	stop_state_sampler
	read -r r1 s1 < <(counters)
	REFUSED=$((r1 - r0)) SHED=$((s1 - s0))
	SERVER_P99=$(awk -v from=$(((CALM_S + 2) * 1000)) 'NR == 1 { t0 = $1 }
		$1 >= t0 + from && $5 != "-" && $5 != "" { print $5 }' "$SC_WORK/$name.states" |
		sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)]; else print "-" }')
	sleep 2 # the pool's connections gone, the level settled
}

echo "== Go net/http, default transport (2 idle connections kept), then a pool of 50"
for idle in 2 50; do
	run_client "go$idle" in_cli_lab "$GO_HTTP_CLIENT" -url "http://$SRV_V4:$PORT/" -idle-per-host "$idle" \
		-phases "$CALM:$CALM_S,$OVER:$OVER_S" -timeout 5s >"$SC_WORK/go$idle.json"
	g=$SC_WORK/go$idle.json
	jq -e .requests "$g" >/dev/null || fail "go_http_client wrote no summary: $(cat "$g")"
	echo "go (idle $idle): $(jq -c '{requests, outcomes, retried, retried_ok, new_conns, ok_p50_ms, ok_p99_ms, fail_p99_ms}' "$g");" \
		"the data plane: $REFUSED requests refused, $SHED connections shed; the server's own p99 $SERVER_P99 ms"
	jq -r '.errors_sample[]?' "$g" | sed 's/^/  go error: /'
	seen_reset=$(jq '.outcomes.reset // 0' "$g")
	echo "go (idle $idle): of $REFUSED refusals, $(jq .retries "$g") retries of $(jq .retried "$g") requests," \
		"$(jq .retried_ok "$g") of them then answered; $seen_reset seen as a reset"
	# Every refusal reaches a request on a reused connection (a connection's
	# first request is never refused), which Go sends again.
	claim "go (idle $idle): its application saw no reset" "$(is "$seen_reset" 0)"
done

echo "== curl, $((CALM + OVER)) processes, each reusing its connection"
curl_worker() { # NAME TRANSFERS
	local cfg=$SC_WORK/curl.$1.cfg i
	for i in $(seq "$2"); do printf 'url = "http://%s:%s/"\noutput = "/dev/null"\n' "$SRV_V4" "$PORT"; done >"$cfg"
	in_cli_lab curl -sS -v --max-time 5 -K "$cfg" -w '%{http_code} %{exitcode} %{num_connects} %{time_total}\n' \
		>"$SC_WORK/curl.$1.out" 2>"$SC_WORK/curl.$1.err"
}
curl_run() {
	local pids=() i
	for i in $(seq "$CALM"); do curl_worker "c$i" 150 & pids+=($!); done
	sleep "$CALM_S"
	for i in $(seq "$OVER"); do curl_worker "o$i" 70 & pids+=($!); done
	wait "${pids[@]}"
}
run_client curl curl_run
# Transfers (sorted by time): total, ok, failed, p99 (ms) of the ok ones and
# of the time to the failure curl reported.
read -r c_total c_ok c_fail c_p99 c_fail_p99 < <(cat "$SC_WORK"/curl.*.out | sort -k4 -n |
	awk '{ n++; if ($1 == 200) t[++ok] = $4; else f[++fail] = $4 }
		function p99(a, k) { return k ? a[int(0.99 * k + 0.999999)] * 1000 : -1 }
		END { printf "%d %d %d %.1f %.1f\n", n, ok, fail, p99(t, ok), p99(f, fail) }')
c_retried=$(cat "$SC_WORK"/curl.*.err | grep -c "retrying a fresh connect" || true)
echo "curl: $c_total transfers, $c_ok ok (p99 $c_p99 ms), $c_fail failed (p99 $c_fail_p99 ms to the failure);" \
	"$c_retried retried on a fresh connection;" \
	"the data plane: $REFUSED requests refused, $SHED connections shed; the server's own p99 $SERVER_P99 ms"
claim "curl: every failed transfer is a data-plane refusal or shed" "$(le "$c_fail" $((REFUSED + SHED)))"

echo "== wrk: $CALM connections for $((CALM_S + OVER_S)) s, $OVER more from $CALM_S s"
wrk_run() {
	in_cli_lab wrk -t1 -c"$CALM" -d$((CALM_S + OVER_S))s --timeout 5s --latency "http://$SRV_V4:$PORT/" >"$SC_WORK/wrk.calm" &
	local calm=$!
	sleep "$CALM_S"
	in_cli_lab wrk -t2 -c"$OVER" -d"$OVER_S"s --timeout 5s --latency "http://$SRV_V4:$PORT/" >"$SC_WORK/wrk.over"
	wait "$calm"
}
run_client wrk wrk_run
for f in calm over; do
	echo "wrk ($f): $(grep -E '^ +99%|Requests/sec|Socket errors|requests in' "$SC_WORK/wrk.$f" | tr -s ' ' | paste -sd';')"
done
echo "wrk: the data plane: $REFUSED requests refused, $SHED connections shed; the server's own p99 $SERVER_P99 ms"

echo "== h2load over TLS through nginx: 1 connection x $CALM streams, then 4 more x 11"
h2_run() {
	in_cli_lab h2load -c1 -m"$CALM" -D$((CALM_S + OVER_S)) "https://$SRV_V4:$TLS_PORT/" >"$SC_WORK/h2.calm" 2>&1 &
	local calm=$!
	sleep "$CALM_S"
	in_cli_lab h2load -c4 -m11 -D"$OVER_S" "https://$SRV_V4:$TLS_PORT/" >"$SC_WORK/h2.over" 2>&1
	wait "$calm"
}
run_client h2 h2_run
# h2_count LINE WORD: the number before WORD in h2load's "requests:" line.
h2_count() { awk -v w="$2" '{ for (i = 1; i < NF; i++) if ($(i + 1) ~ "^" w ",?$") print $i + 0 }' <<<"$1"; }
cut_streams=0 abandoned=0
for f in calm over; do
	line=$(grep -E '^requests:' "$SC_WORK/h2.$f") || fail "h2load ($f) printed no summary: $(tail -n 5 "$SC_WORK/h2.$f")"
	echo "h2load ($f): $line; $(grep -E '^ +time for request:' "$SC_WORK/h2.$f" | tr -s ' ')"
	cut_streams=$((cut_streams + $(h2_count "$line" failed) + $(h2_count "$line" errored)))
	# Streams still open when h2load's duration ended: it closes them itself.
	abandoned=$((abandoned + $(h2_count "$line" started) - $(h2_count "$line" done)))
done
echo "h2load: the data plane: $REFUSED requests refused, $SHED connections shed; the server's own p99 $SERVER_P99 ms"
claim "h2load: no stream failed or errored" "$(is "$cut_streams" 0)"

echo "== the servers' own counts"
sv_stop_pids "${EAGER_PIDS[@]}" "${UPSTREAM_PIDS[@]}"
for log in "$EAGER_LOG" "$SC_WORK/upstream.log"; do
	claim "$(basename "$log"): no request read and then lost" "$(is "$(read_and_lost "$log")" 0)"
done
incomplete=$(grep -vc "completion=OK" "$NGX/access.log" || true)
echo "nginx: $(wc -l <"$NGX/access.log") requests logged, $incomplete not completed; h2load closed $abandoned" \
	"streams itself at the end of its duration"
claim "nginx: every request it read was completed, but those h2load closed itself" "$(le "$incomplete" "$abandoned")"

if [ ${#CLAIMS_FAILED[@]} -gt 0 ]; then
	printf '  %s\n' "${CLAIMS_FAILED[@]}" >&2
	fail "keep-alive clients: ${#CLAIMS_FAILED[@]} claims not met"
fi
pass "keep-alive clients: nothing read and lost, no stream cut"

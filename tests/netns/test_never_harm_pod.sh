#!/usr/bin/env bash
# Never refuse a healthy service in a container: test_never_harm.sh's busy
# but healthy case (refserver 100 workers x 200 ms at 0.9x, ~90 requests in
# service, a cold start and then a restart under load, whose seed walk runs
# inside the pod's namespace) with the service in a pod behind the node's
# interface, the port naming the pod's cgroup, so that its requests are
# timed by the cgroup's programs (NEVER_HARM_IN_POD=1: by the tracepoints,
# the port naming the namespace). The whole matrix in a pod, both ways, is
# `make bench-never-harm-pods`.
export NEVER_HARM_IN_POD=${NEVER_HARM_IN_POD:-cgroup}
export NEVER_HARM_CASES=${NEVER_HARM_CASES:-busy.100x200ms}
exec bash "$(dirname "$0")/test_never_harm.sh"

# Shared by the deployment tests: the paths CMake passes, one work folder
# removed on every exit path, and one way to fail.
#   source lib.sh; ... "$WORK" ...
set -euo pipefail

: "${EDGESHED:?path of the edgeshed binary}"
: "${SOURCE_DIR:?the source tree}"
: "${BUILD_DIR:?the build tree}"

# Debian's python3, which has python3-yaml and python3-kubernetes from
# scripts/deps.sh, whatever python3 comes first in PATH.
PYTHON=/usr/bin/python3

WORK=$(mktemp -d)
trap 'rc=$?; rm -rf "$WORK"; exit $rc' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# True when the build generates a bash completion: the binary has the hidden
# `completion` subcommand and EDGESHED_BASH_COMPLETION is not OFF. The install
# tree has a completion exactly then.
has_completion() {
	[ "${EDGESHED_BASH_COMPLETION:-AUTO}" != OFF ] && "$EDGESHED" completion bash >/dev/null 2>&1
}

#!/bin/bash
# The Debian packages, built, installed, run on a harness cluster and
# purged: tests/deb/test-deb.sh (run here by contrib/bin/agora-test's
# integration phase, which runs the scripts of this directory).
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../deb/test-deb.sh" "$@"

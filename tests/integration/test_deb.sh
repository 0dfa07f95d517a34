#!/bin/bash
# The Debian packages, built, installed, run on a harness cluster and
# purged: tests/deb/test-deb.sh (run here by contrib/bin/agora-test's
# integration phase, which runs the scripts of this directory).  The unit
# tests already ran in agora-test's earlier phases, so the package build
# skips its own "make check" (DEB_BUILD_OPTIONS=nocheck) and builds with
# make -j on every CPU (parallel=N: debhelper builds with -j1 otherwise,
# half the machine left idle) unless the caller set DEB_BUILD_OPTIONS.
export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS-nocheck parallel=$(nproc)}
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../deb/test-deb.sh" "$@"

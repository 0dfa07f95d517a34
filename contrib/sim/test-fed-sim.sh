#!/bin/sh
# End-to-end checks of agora-sim federation (run by make check, TAP).
set -u
SIM=${SIM:-./agora-sim}
n=0
echo "1..$n"
exit 0

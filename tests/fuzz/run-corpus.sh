#!/bin/sh
# run-corpus.sh CORPUS_ROOT ./fuzz_NAME: run a fuzz target on its corpus.
root=$1
prog=$2
name=$(basename "$prog")
exec "$prog" "$root/${name#fuzz_}"

/*
 * fuzz.h - one fuzz target per parser of untrusted input (every
 * parser is fuzzed).  Each fuzz_<parser>.c defines LLVMFuzzerTestOneInput();
 * built with clang -fsanitize=fuzzer,address ("make fuzz") it is a
 * libFuzzer target, built with standalone.c it replays its corpus plus
 * seeded mutations of it in "make check" (under ASan/UBSan in the
 * sanitizer build, under valgrind in check-valgrind).
 */
#ifndef AGORA_FUZZ_H
#define AGORA_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (caller frees), or NULL. */
char *fuzz_cstring(const uint8_t *data, size_t size);

#endif

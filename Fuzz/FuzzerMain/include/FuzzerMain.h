#ifndef OGK_FUZZER_MAIN_H
#define OGK_FUZZER_MAIN_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer (linked in by `-sanitize=fuzzer`) with the process's command line on `test_one_input`, then exits
/// with its status. A fuzz target's main.swift calls it: SwiftPM gives every executable a main of its own, so libFuzzer's
/// main, which would call `LLVMFuzzerTestOneInput`, is never linked.
_Noreturn void ogk_fuzzer_main(int argc, char **argv, int (*test_one_input)(const uint8_t *data, size_t size));

#endif

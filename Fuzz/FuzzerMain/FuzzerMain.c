#include "FuzzerMain.h"

#include <stdlib.h>

// libFuzzer's driver, in the toolchain's libclang_rt.fuzzer.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*user_callback)(const uint8_t *data, size_t size));

void ogk_fuzzer_main(int argc, char **argv, int (*test_one_input)(const uint8_t *data, size_t size)) {
    exit(LLVMFuzzerRunDriver(&argc, &argv, test_one_input));
}

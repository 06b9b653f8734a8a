// libFuzzer entry point: see iwarp_fuzz_driver.h for the input format.
#include <cstddef>
#include <cstdint>

#include "iwarp_fuzz_driver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    iwarp_fuzz::RunOne(data, size);
    return 0;
}

// libFuzzer's entry point for programs that have their own main (compiler-rt FuzzerInterface.h).
// SwiftPM links every executable with `main` set to the module's entry point, so the fuzz target
// starts libFuzzer itself instead of using libFuzzer's main.
#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif

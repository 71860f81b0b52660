// Only the header matters: LLVMFuzzerRunDriver comes from the libFuzzer runtime.
#include "CFuzzerDriver.h"

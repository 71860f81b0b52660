#include "CTestSupport.h"

// Runs when the test runner is loaded, before main and so before any test creates a Logger. A
// constructor without a priority runs after the Swift runtime has registered the image's metadata.
__attribute__((constructor)) static void nativeauth_tests_start(void) {
    nativeauth_tests_bootstrap_logging();
}

#ifndef NATIVEAUTH_CTESTSUPPORT_H
#define NATIVEAUTH_CTESTSUPPORT_H

// Set-up that must happen before any test runs, in every test process. Swift Testing has no hook
// for it, so a load-time constructor (bootstrap.c) calls into TestSupport.

/// Defined in Swift (TestSupport, Logging.swift): bootstraps swift-log at NATIVEAUTH_LOG_LEVEL.
void nativeauth_tests_bootstrap_logging(void);

#endif

// File status for FileTokenStore without touching `struct stat` from Swift: which Clang module owns
// that struct (Glibc, CoreFoundation, CDispatch…) depends on the import order of a build, and with
// MemberImportVisibility its members are then unreachable from one build configuration or another.
#ifndef CNATIVEAUTHPOSIX_H
#define CNATIVEAUTHPOSIX_H

#include <stdint.h>

/// What NativeAuth reads of a file's status. `error` is 0 on success, else the `errno` of the call.
typedef struct {
    int32_t error;
    uint32_t mode;
    uint32_t uid;
    int64_t modified_seconds;
} nativeauth_file_status;

/// `fstat` of an open descriptor.
nativeauth_file_status nativeauth_fstat(int descriptor);

/// `stat` of a path (following symbolic links).
nativeauth_file_status nativeauth_stat(const char *path);

#endif

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
    int64_t modified_nanoseconds;
    uint64_t device;
    uint64_t inode;
    int64_t size;
} nativeauth_file_status;

/// `fstat` of an open descriptor.
nativeauth_file_status nativeauth_fstat(int descriptor);

/// `stat` of a path (following symbolic links).
nativeauth_file_status nativeauth_stat(const char *path);

/// `lstat` of a path (not following a symbolic link).
nativeauth_file_status nativeauth_lstat(const char *path);

/// The uid owning the TCP socket whose local end is `local_address`:`local_port` and remote end
/// `remote_address`:`remote_port` (addresses as text, of `family` AF_INET or AF_INET6), asked of
/// the kernel with one sock_diag request (Linux); -1 when it cannot tell.
int64_t nativeauth_tcp_socket_owner(int family, const char *local_address, uint16_t local_port,
                                    const char *remote_address, uint16_t remote_port);

/// A TCP port on 127.0.0.1 that was free when asked (bound to port 0, read, closed); -1 with
/// `errno` set when none could be had.
int32_t nativeauth_free_loopback_port(void);

#endif

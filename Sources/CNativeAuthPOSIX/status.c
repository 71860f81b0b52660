#include "CNativeAuthPOSIX.h"

#include <errno.h>
#include <sys/stat.h>

static nativeauth_file_status from(int result, const struct stat *info) {
    nativeauth_file_status status = {0, 0, 0, 0, 0, 0, 0, 0};
    if (result != 0) {
        status.error = errno;
        return status;
    }
    status.mode = (uint32_t)info->st_mode;
    status.uid = (uint32_t)info->st_uid;
#if defined(__APPLE__)
    status.modified_seconds = (int64_t)info->st_mtimespec.tv_sec;
    status.modified_nanoseconds = (int64_t)info->st_mtimespec.tv_nsec;
#else
    status.modified_seconds = (int64_t)info->st_mtim.tv_sec;
    status.modified_nanoseconds = (int64_t)info->st_mtim.tv_nsec;
#endif
    status.device = (uint64_t)info->st_dev;
    status.inode = (uint64_t)info->st_ino;
    status.size = (int64_t)info->st_size;
    return status;
}

nativeauth_file_status nativeauth_fstat(int descriptor) {
    struct stat info;
    int result = fstat(descriptor, &info);
    return from(result, &info);
}

nativeauth_file_status nativeauth_stat(const char *path) {
    struct stat info;
    int result = stat(path, &info);
    return from(result, &info);
}

nativeauth_file_status nativeauth_lstat(const char *path) {
    struct stat info;
    int result = lstat(path, &info);
    return from(result, &info);
}

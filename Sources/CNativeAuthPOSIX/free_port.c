#include "CNativeAuthPOSIX.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int32_t nativeauth_free_loopback_port(void) {
    int descriptor = socket(AF_INET, SOCK_STREAM, 0);
    if (descriptor < 0) {
        return -1;
    }
    struct sockaddr_in address;
    memset(&address, 0, sizeof(address));
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof(address);
    if (bind(descriptor, (struct sockaddr *)&address, sizeof(address)) != 0 ||
        getsockname(descriptor, (struct sockaddr *)&address, &length) != 0) {
        int saved = errno;
        close(descriptor);
        errno = saved;
        return -1;
    }
    close(descriptor);
    return (int32_t)ntohs(address.sin_port);
}

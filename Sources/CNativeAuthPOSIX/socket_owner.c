#include "CNativeAuthPOSIX.h"

#if defined(__linux__)
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int64_t nativeauth_tcp_socket_owner(int family, const char *local_address, uint16_t local_port,
                                    const char *remote_address, uint16_t remote_port) {
    struct {
        struct nlmsghdr header;
        struct inet_diag_req_v2 request;
    } message;
    memset(&message, 0, sizeof message);
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.request.sdiag_family = (uint8_t)family;
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~0U;
    message.request.id.idiag_sport = htons(local_port);
    message.request.id.idiag_dport = htons(remote_port);
    message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    if (inet_pton(family, local_address, message.request.id.idiag_src) != 1) return -1;
    if (inet_pton(family, remote_address, message.request.id.idiag_dst) != 1) return -1;

    int descriptor = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (descriptor < 0) return -1;
    struct timeval timeout = {1, 0};
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.nl_family = AF_NETLINK;
    int64_t owner = -1;
    if (sendto(descriptor, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel) ==
        (ssize_t)sizeof message) {
        long buffer[2048];
        ssize_t length = recv(descriptor, buffer, sizeof buffer, 0);
        struct nlmsghdr *reply = (struct nlmsghdr *)buffer;
        if (length > 0 && NLMSG_OK(reply, (unsigned int)length) && reply->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
            struct inet_diag_msg *diagnosis = (struct inet_diag_msg *)NLMSG_DATA(reply);
            owner = (int64_t)diagnosis->idiag_uid;
        }
    }
    close(descriptor);
    return owner;
}
#else
int64_t nativeauth_tcp_socket_owner(int family, const char *local_address, uint16_t local_port,
                                    const char *remote_address, uint16_t remote_port) {
    (void)family; (void)local_address; (void)local_port; (void)remote_address; (void)remote_port;
    return -1;
}
#endif

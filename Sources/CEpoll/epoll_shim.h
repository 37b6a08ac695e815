// Linux's epoll and accept4 for the HTTP layer's event loops (Swift's Glibc module leaves out
// <sys/epoll.h> and the GNU accept4). Header only: nothing is compiled or linked besides the C
// library itself.
//
// No feature-test macro (_GNU_SOURCE above all) is defined here: it would give the glibc types
// this header shares with Swift's Glibc module other definitions (fd_set's fds_bits instead of
// __fds_bits), and a clean build then fails wherever both modules meet. accept4 is declared by
// hand instead; SOCK_NONBLOCK and SOCK_CLOEXEC need no macro.
#ifndef GROUP_POLICY_EPOLL_SHIM_H
#define GROUP_POLICY_EPOLL_SHIM_H

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/socket.h>

extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// A connection accepted non-blocking and close-on-exec in one call, or -1 with errno.
static inline int group_policy_accept_nonblocking(int listener) {
    return accept4(listener, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
#endif

#endif

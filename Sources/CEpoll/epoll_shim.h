// Linux's epoll and accept4 for the HTTP layer's event loops (Swift's Glibc module leaves out
// <sys/epoll.h> and the GNU accept4). Header only: nothing is compiled or linked besides the C
// library itself.
#ifndef GROUP_POLICY_EPOLL_SHIM_H
#define GROUP_POLICY_EPOLL_SHIM_H

#if defined(__linux__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/epoll.h>
#include <sys/socket.h>

/// A connection accepted non-blocking and close-on-exec in one call, or -1 with errno.
static inline int group_policy_accept_nonblocking(int listener) {
    return accept4(listener, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
#endif

#endif

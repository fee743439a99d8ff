// Many datagrams per system call on one UDP socket: `recvmmsg` and `sendmmsg` on Linux (one `recvfrom` or
// `sendto` per datagram elsewhere). Swift's Glibc module does not see `mmsghdr` (it needs _GNU_SOURCE), so the
// message headers are built here.
#ifndef C_UDP_BATCH_H
#define C_UDP_BATCH_H

#include <stddef.h>
#include <sys/socket.h>

/// With `wait`: blocks until one datagram arrives (or the socket's receive timeout passes, or it is shut down) and
/// takes it alone, with a plain `recvfrom` — the cheapest call when traffic is light. Without: takes as many as are
/// waiting, up to `count`, without blocking. Datagram i goes to `slots + i * slot_bytes`, its length to `lengths[i]`
/// (more than `slot_bytes` when it was cut short) and its sender to `senders[i]`. Returns how many; 0 or -1 for none.
int ogk_udp_receive(int fd, unsigned char *slots, size_t slot_bytes, unsigned count,
                    struct sockaddr_storage *senders, size_t *lengths, int wait);

/// Sends `count` datagrams without blocking (one `sendto` for a single datagram): datagram i is `lengths[i]` bytes at `bytes + offsets[i]`, to
/// `addresses[i]` (`address_lengths[i]` bytes long). Returns how many the kernel took before it refused one
/// (`errno` then says why), which may be `count`.
int ogk_udp_send(int fd, const unsigned char *bytes, const size_t *offsets, const size_t *lengths,
                 const struct sockaddr_storage *addresses, const socklen_t *address_lengths, unsigned count);

#endif

#define _GNU_SOURCE
#include "CUDPBatch.h"
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

/// One datagram, blocking.
static int receive_one(int fd, unsigned char *slot, size_t slot_bytes, struct sockaddr_storage *sender, size_t *length) {
    socklen_t sender_length = sizeof(struct sockaddr_storage);
#if defined(__linux__)
    // With MSG_TRUNC, Linux returns the datagram's real length even when it was cut short.
    int flags = MSG_TRUNC;
#else
    int flags = 0;
#endif
    ssize_t received = recvfrom(fd, slot, slot_bytes, flags, (struct sockaddr *)sender, &sender_length);
    if (received < 0) return -1;
    *length = (size_t)received;
    return 1;
}

#if defined(__linux__)
int ogk_udp_receive(int fd, unsigned char *slots, size_t slot_bytes, unsigned count,
                    struct sockaddr_storage *senders, size_t *lengths, int wait) {
    if (wait) return receive_one(fd, slots, slot_bytes, senders, lengths);
    struct mmsghdr headers[count];
    struct iovec vectors[count];
    memset(headers, 0, sizeof(headers));
    for (unsigned i = 0; i < count; i++) {
        vectors[i].iov_base = slots + i * slot_bytes;
        vectors[i].iov_len = slot_bytes;
        headers[i].msg_hdr.msg_name = &senders[i];
        headers[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
    }
    int received = recvmmsg(fd, headers, count, MSG_DONTWAIT, NULL);
    for (int i = 0; i < received; i++) {
        lengths[i] = (headers[i].msg_hdr.msg_flags & MSG_TRUNC) ? slot_bytes + 1 : headers[i].msg_len;
    }
    return received;
}

int ogk_udp_send(int fd, const unsigned char *bytes, const size_t *offsets, const size_t *lengths,
                 const struct sockaddr_storage *addresses, const socklen_t *address_lengths, unsigned count) {
    if (count == 1) {
        ssize_t sent = sendto(fd, bytes + offsets[0], lengths[0], MSG_DONTWAIT, (const struct sockaddr *)&addresses[0], address_lengths[0]);
        return sent < 0 ? 0 : 1;
    }
    unsigned sent = 0;
    while (sent < count) {
        unsigned chunk = count - sent < 256 ? count - sent : 256;
        struct mmsghdr headers[chunk];
        struct iovec vectors[chunk];
        memset(headers, 0, sizeof(headers));
        for (unsigned i = 0; i < chunk; i++) {
            vectors[i].iov_base = (void *)(bytes + offsets[sent + i]);
            vectors[i].iov_len = lengths[sent + i];
            headers[i].msg_hdr.msg_name = (void *)&addresses[sent + i];
            headers[i].msg_hdr.msg_namelen = address_lengths[sent + i];
            headers[i].msg_hdr.msg_iov = &vectors[i];
            headers[i].msg_hdr.msg_iovlen = 1;
        }
        int result = sendmmsg(fd, headers, chunk, MSG_DONTWAIT);
        if (result < 0 && errno == EINTR) continue;
        if (result <= 0) break;
        sent += (unsigned)result;
        if ((unsigned)result < chunk) break;
    }
    return (int)sent;
}
#else
int ogk_udp_receive(int fd, unsigned char *slots, size_t slot_bytes, unsigned count,
                    struct sockaddr_storage *senders, size_t *lengths, int wait) {
    (void)count;
    if (wait) return receive_one(fd, slots, slot_bytes, senders, lengths);
    socklen_t length = sizeof(struct sockaddr_storage);
    ssize_t received = recvfrom(fd, slots, slot_bytes, MSG_DONTWAIT, (struct sockaddr *)senders, &length);
    if (received < 0) return -1;
    lengths[0] = (size_t)received;
    return 1;
}

int ogk_udp_send(int fd, const unsigned char *bytes, const size_t *offsets, const size_t *lengths,
                 const struct sockaddr_storage *addresses, const socklen_t *address_lengths, unsigned count) {
    unsigned sent = 0;
    while (sent < count) {
        if (sendto(fd, bytes + offsets[sent], lengths[sent], MSG_DONTWAIT, (const struct sockaddr *)&addresses[sent], address_lengths[sent]) >= 0) {
            sent++;
        } else if (errno != EINTR) {
            break;
        }
    }
    return (int)sent;
}
#endif

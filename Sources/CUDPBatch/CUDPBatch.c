#define _GNU_SOURCE
#include "CUDPBatch.h"
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#if defined(__linux__)
int ogk_udp_receive(int fd, unsigned char *slots, size_t slot_bytes, unsigned count,
                    struct sockaddr_storage *senders, size_t *lengths) {
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
    int received = recvmmsg(fd, headers, count, MSG_WAITFORONE, NULL);
    for (int i = 0; i < received; i++) {
        lengths[i] = (headers[i].msg_hdr.msg_flags & MSG_TRUNC) ? slot_bytes + 1 : headers[i].msg_len;
    }
    return received;
}

int ogk_udp_send(int fd, const unsigned char *bytes, const size_t *offsets, const size_t *lengths,
                 const struct sockaddr_storage *addresses, const socklen_t *address_lengths, unsigned count) {
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
                    struct sockaddr_storage *senders, size_t *lengths) {
    (void)count;
    socklen_t length = sizeof(struct sockaddr_storage);
    ssize_t received = recvfrom(fd, slots, slot_bytes, 0, (struct sockaddr *)senders, &length);
    if (received < 0) return -1;
    lengths[0] = (size_t)received;
    return 1;
}

int ogk_udp_send(int fd, const unsigned char *bytes, const size_t *offsets, const size_t *lengths,
                 const struct sockaddr_storage *addresses, const socklen_t *address_lengths, unsigned count) {
    for (unsigned i = 0; i < count; i++) {
        if (sendto(fd, bytes + offsets[i], lengths[i], MSG_DONTWAIT, (const struct sockaddr *)&addresses[i], address_lengths[i]) < 0) {
            if (errno == EINTR) { i--; continue; }
            return (int)i;
        }
    }
    return (int)count;
}
#endif

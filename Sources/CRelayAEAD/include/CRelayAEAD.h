// ChaCha20-Poly1305 (RFC 8439) with a key schedule kept per relay connection, from the BoringSSL that swift-crypto
// bundles and links on Linux. swift-crypto's `ChaChaPoly` sets up a context and copies the data through `Data` on
// every call (about 2 µs for a 100-byte datagram); one context per key and sealing in place costs a tenth of that.
#ifndef C_RELAY_AEAD_H
#define C_RELAY_AEAD_H

#include <stddef.h>
#include <stdint.h>

/// A ChaCha20-Poly1305 context for one 32-byte key and 16-byte tags.
typedef struct ogk_relay_aead ogk_relay_aead;

/// A context for `key` (32 bytes); NULL where swift-crypto does not bundle BoringSSL (Apple platforms, which use
/// CryptoKit) or if BoringSSL refuses it. Callers then use swift-crypto's `ChaChaPoly`.
ogk_relay_aead *ogk_relay_aead_new(const uint8_t *key);

/// Frees a context from `ogk_relay_aead_new` (NULL is allowed).
void ogk_relay_aead_free(ogk_relay_aead *aead);

/// Encrypts `in_len` bytes of `in` and authenticates them with `ad_len` bytes of `ad`; writes ciphertext then the
/// 16-byte tag to `out` (which may equal `in`). `max_out_len` must be at least `in_len + 16`. Returns 1 on success.
int ogk_relay_aead_seal(const ogk_relay_aead *aead, uint8_t *out, size_t *out_len, size_t max_out_len,
                        const uint8_t *nonce12, const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len);

/// Checks the tag at the end of `in` (ciphertext then tag, `in_len` bytes) over the ciphertext and `ad`, and if it
/// matches decrypts into `out` (which may equal `in`). Returns 1 on success, 0 on any tampering.
int ogk_relay_aead_open(const ogk_relay_aead *aead, uint8_t *out, size_t *out_len, size_t max_out_len,
                        const uint8_t *nonce12, const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len);

#endif

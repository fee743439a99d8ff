#include "CRelayAEAD.h"

#if defined(__linux__)
// swift-crypto links BoringSSL on Linux with every symbol prefixed `CCryptoBoringSSL_` (see its
// CCryptoBoringSSL_aead.h). Should a future swift-crypto rename them, linking fails here, loudly.
struct evp_aead_st;
struct evp_aead_ctx_st;
extern const struct evp_aead_st *CCryptoBoringSSL_EVP_aead_chacha20_poly1305(void);
extern struct evp_aead_ctx_st *CCryptoBoringSSL_EVP_AEAD_CTX_new(const struct evp_aead_st *aead, const uint8_t *key,
                                                                 size_t key_len, size_t tag_len);
extern void CCryptoBoringSSL_EVP_AEAD_CTX_free(struct evp_aead_ctx_st *ctx);
extern int CCryptoBoringSSL_EVP_AEAD_CTX_seal(const struct evp_aead_ctx_st *ctx, uint8_t *out, size_t *out_len,
                                              size_t max_out_len, const uint8_t *nonce, size_t nonce_len,
                                              const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len);
extern int CCryptoBoringSSL_EVP_AEAD_CTX_open(const struct evp_aead_ctx_st *ctx, uint8_t *out, size_t *out_len,
                                              size_t max_out_len, const uint8_t *nonce, size_t nonce_len,
                                              const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len);

ogk_relay_aead *ogk_relay_aead_new(const uint8_t *key) {
    return (ogk_relay_aead *)CCryptoBoringSSL_EVP_AEAD_CTX_new(CCryptoBoringSSL_EVP_aead_chacha20_poly1305(), key, 32, 16);
}

void ogk_relay_aead_free(ogk_relay_aead *aead) {
    if (aead != NULL) CCryptoBoringSSL_EVP_AEAD_CTX_free((struct evp_aead_ctx_st *)aead);
}

int ogk_relay_aead_seal(const ogk_relay_aead *aead, uint8_t *out, size_t *out_len, size_t max_out_len,
                        const uint8_t *nonce12, const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len) {
    return CCryptoBoringSSL_EVP_AEAD_CTX_seal((const struct evp_aead_ctx_st *)aead, out, out_len, max_out_len,
                                              nonce12, 12, in, in_len, ad, ad_len);
}

int ogk_relay_aead_open(const ogk_relay_aead *aead, uint8_t *out, size_t *out_len, size_t max_out_len,
                        const uint8_t *nonce12, const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len) {
    return CCryptoBoringSSL_EVP_AEAD_CTX_open((const struct evp_aead_ctx_st *)aead, out, out_len, max_out_len,
                                              nonce12, 12, in, in_len, ad, ad_len);
}
#else
ogk_relay_aead *ogk_relay_aead_new(const uint8_t *key) { (void)key; return NULL; }
void ogk_relay_aead_free(ogk_relay_aead *aead) { (void)aead; }
int ogk_relay_aead_seal(const ogk_relay_aead *aead, uint8_t *out, size_t *out_len, size_t max_out_len,
                        const uint8_t *nonce12, const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len) {
    (void)aead; (void)out; (void)max_out_len; (void)nonce12; (void)in; (void)in_len; (void)ad; (void)ad_len;
    *out_len = 0;
    return 0;
}
int ogk_relay_aead_open(const ogk_relay_aead *aead, uint8_t *out, size_t *out_len, size_t max_out_len,
                        const uint8_t *nonce12, const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len) {
    (void)aead; (void)out; (void)max_out_len; (void)nonce12; (void)in; (void)in_len; (void)ad; (void)ad_len;
    *out_len = 0;
    return 0;
}
#endif

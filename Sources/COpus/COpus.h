// The Opus codec (libopus, Debian package libopus-dev).
#if !__has_include(<opus/opus.h>)
#error "OpenGameKitVoice needs libopus-dev: apt-get install libopus-dev"
#else
#include <opus/opus.h>

// opus_encoder_ctl is a C variadic function, which Swift cannot call: these take one fixed argument each.
static inline int ogk_opus_encoder_set(OpusEncoder *st, int request, opus_int32 value) {
    return opus_encoder_ctl(st, request, value);
}
static inline int ogk_opus_encoder_get(OpusEncoder *st, int request, opus_int32 *value) {
    return opus_encoder_ctl(st, request, value);
}
#endif

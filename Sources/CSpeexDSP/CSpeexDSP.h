// The Speex DSP library (libspeexdsp, Debian package libspeexdsp-dev): preprocessor, echo canceller, resampler.
#if !__has_include(<speex/speex_preprocess.h>)
#error "OpenGameKitVoice needs libspeexdsp-dev: apt-get install libspeexdsp-dev"
#else
#include <speex/speex_preprocess.h>
#include <speex/speex_echo.h>
#include <speex/speex_resampler.h>
#endif
